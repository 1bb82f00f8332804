"""Small corpora made from Multi30k for the tests that run the command line: they train a tiny model in seconds."""

from pathlib import Path

from annotated_transformer.data import MULTI30K_SPLITS, find_corpus_file, read_lines


def first_lines(multi30k: Path, split: str, lang: str, n: int) -> list[str]:
    "The first `n` sentences of one side of a Multi30k split."
    return read_lines(find_corpus_file(multi30k, f"{split}.{lang}"))[:n]


def write_multi30k_slice(directory: Path, multi30k: Path, train: int = 3000, test: int = 200) -> Path:
    "The first pairs of each Multi30k split, as plain text under the split's names (plain files carry no checksum)."
    directory.mkdir(parents=True, exist_ok=True)
    for split in MULTI30K_SPLITS:
        for lang in ("de", "en"):
            lines = first_lines(multi30k, split, lang, train if split == "train" else test)
            (directory / f"{split}.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


def write_wmt14_stand_in(directory: Path, multi30k: Path, train: int = 2000, test: int = 100) -> Path:
    "Multi30k pairs under WMT 2014's file names, as plain text."
    directory.mkdir(parents=True, exist_ok=True)
    for split, stem, n in [
        ("train", "train", train),
        ("val", "newstest2013", test),
        ("test_2016_flickr", "newstest2014", test),
    ]:
        for lang in ("en", "de"):
            (directory / f"{stem}.{lang}").write_text(
                "\n".join(first_lines(multi30k, split, lang, n)) + "\n", encoding="utf-8"
            )
    return directory
