"""A German–English corpus the tests make themselves, so that the command-line tests run on any clone, with or without
the Multi30k files. Its sentences come from a small grammar, who does what, how and where ("Zwei Hunde spielen
fröhlich im Schnee." / "Two dogs play happily in the snow."): 14,112 different pairs, short and regular, which a
tiny model learns to translate within its first epoch. Every tenth is about someone with a made-up name that no
other sentence has, so that, as in a real corpus, some words are too rare for the vocabulary and read as <unk>.
The tests write it in Multi30k's layout (or WMT 2014's, or as a user's own files) and train on it in seconds."""

import itertools
import random
from pathlib import Path

from annotated_transformer.data import MULTI30K_SPLITS

WHO = [  # German, English, one or more
    ("Ein Mann", "A man", True),
    ("Eine Frau", "A woman", True),
    ("Ein Junge", "A boy", True),
    ("Ein Mädchen", "A girl", True),
    ("Ein Kind", "A child", True),
    ("Ein Hund", "A dog", True),
    ("Eine Katze", "A cat", True),
    ("Ein alter Mann", "An old man", True),
    ("Eine junge Frau", "A young woman", True),
    ("Zwei Männer", "Two men", False),
    ("Zwei Frauen", "Two women", False),
    ("Drei Kinder", "Three children", False),
    ("Zwei Hunde", "Two dogs", False),
    ("Viele Menschen", "Many people", False),
]
DOES = [  # German for one, for more; English for one, for more
    ("spielt", "spielen", "plays", "play"),
    ("läuft", "laufen", "runs", "run"),
    ("sitzt", "sitzen", "sits", "sit"),
    ("steht", "stehen", "stands", "stand"),
    ("springt", "springen", "jumps", "jump"),
    ("wartet", "warten", "waits", "wait"),
    ("schläft", "schlafen", "sleeps", "sleep"),
    ("isst", "essen", "eats", "eat"),
    ("liest", "lesen", "reads", "read"),
    ("tanzt", "tanzen", "dances", "dance"),
    ("singt", "singen", "sings", "sing"),
    ("lacht", "lachen", "laughs", "laugh"),
]
HOW = [
    ("", ""),
    ("fröhlich", "happily"),
    ("allein", "alone"),
    ("ruhig", "quietly"),
    ("zusammen", "together"),
    ("schnell", "quickly"),
]
WHERE = [
    ("im Park", "in the park"),
    ("auf der Straße", "on the street"),
    ("am Strand", "on the beach"),
    ("im Schnee", "in the snow"),
    ("im Wasser", "in the water"),
    ("vor einem Haus", "in front of a house"),
    ("auf einer Bank", "on a bench"),
    ("in der Küche", "in the kitchen"),
    ("neben einem Auto", "next to a car"),
    ("auf dem Rasen", "on the grass"),
    ("an einem Tisch", "at a table"),
    ("im Garten", "in the garden"),
    ("auf einer Brücke", "on a bridge"),
    ("in einem Zimmer", "in a room"),
]
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "bi", "da")
HELD_OUT = 500  # pairs in each of the validation and the test split; the rest, 13,112, train


def _pair(who: tuple, does: tuple, how: tuple, where: tuple) -> tuple[str, str]:
    (de_who, en_who, one), (de_one, de_more, en_one, en_more) = who, does
    de = [de_who, de_one if one else de_more, how[0], where[0]]
    en = [en_who, en_one if one else en_more, how[1], where[1]]
    return " ".join(filter(None, de)) + ".", " ".join(filter(None, en)) + "."


def _name(i: int) -> str:
    "A made-up name, another for each `i`: a word that occurs once, as rare words do in real corpora."
    return "".join(SYLLABLES[int(digit)] for digit in str(i)).capitalize()


def made_up_pairs(split: str) -> list[tuple[str, str]]:
    "All (German, English) pairs of `split` ('train', 'val' or 'test'): each pair in one split only, in a fixed order."
    parts = list(itertools.product(WHO, DOES, HOW, WHERE))
    random.Random(0).shuffle(parts)
    # every tenth sentence, someone named
    named = lambda i, who: (_name(i), _name(i), True) if i % 10 == 9 else who
    pairs = [_pair(named(i, who), *rest) for i, (who, *rest) in enumerate(parts)]
    return {"val": pairs[:HELD_OUT], "test": pairs[HELD_OUT : 2 * HELD_OUT], "train": pairs[2 * HELD_OUT :]}[
        split
    ]


def first_lines(split: str, lang: str, n: int) -> list[str]:
    "The first `n` sentences of one side ('de' or 'en') of a split of the made-up corpus."
    return [pair[("de", "en").index(lang)] for pair in made_up_pairs(split)[:n]]


def write_corpus(
    directory: Path,
    train: int = 3000,  # pairs in the training split
    test: int = 200,  # pairs in each of the other two
    # the file names' stems for training, validation and test data
    names: tuple[str, str, str] = MULTI30K_SPLITS,
) -> Path:
    "The made-up corpus as plain text files, `STEM.de` and `STEM.en`, by default under Multi30k's names."
    directory.mkdir(parents=True, exist_ok=True)
    for split, stem, n in zip(("train", "val", "test"), names, (train, test, test)):
        for lang in ("de", "en"):
            (directory / f"{stem}.{lang}").write_text(
                "".join(s + "\n" for s in first_lines(split, lang, n)), "utf-8"
            )
    return directory


def write_wmt14_stand_in(directory: Path, train: int = 2000, test: int = 100) -> Path:
    "The made-up corpus under WMT 2014's file names."
    return write_corpus(directory, train, test, ("train", "newstest2013", "newstest2014"))
