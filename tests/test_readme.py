"""The README: its first screen and its length within the limits it is held to, its figures and its picture true to
the notebooks, CONTRIBUTING.md's size table up to date, and every command the README shows, run as written.

The commands: each block in a shell of its own, in a fresh directory.

The shell blocks are read from README.md itself, so a command added or changed there is tested as it reads. Only
the sizes change (`TINY`): a model of width 32 that trains for a few epochs or updates on the tests' own corpus
(`corpora.py`), laid out as Multi30k's files (found through $MULTI30K_DIR, as the README says) and as WMT 2014's. The blocks run in
README order in one directory, so that a later block uses what an earlier one made, as a reader's would. A block
that starts another training run where one is already (the 8-GPU `torchrun` command, an alternative to the plain
`train wmt14`) gets a directory of its own, with the same data. Blocks that cannot run here are listed in `NOT_RUN`, with the reason."""

import gzip
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from corpora import first_lines, write_corpus, write_wmt14_stand_in

# its module-scoped fixtures are built once, on one worker
pytestmark = pytest.mark.xdist_group("test_readme")

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(sys.prefix)
TINY_MODEL = "--N 1 --d-model 32 --d-ff 64 --h 2 --bpe-size 800 --warmup 20 --factor 1.0 --no-progress"
TINY = [  # (pattern, replacement): the README's sizes, made tiny; nothing else in a command changes
    (
        r"^make install && source \.venv/bin/activate$",
        "true  # the environment running these tests is that install",
    ),
    (
        r"^make demo(?= |$)",
        f"make -C {ROOT} -o {VENV}/.package VENV={VENV} demo",
    ),  # the same target, in this environment
    (
        r"(train multi30k --out runs/\w+( --minutes \d+)?)(?=\s*(#|$))",
        rf"\1 {TINY_MODEL} --max-tokens 1500 --epochs 5",
    ),
    (r"(train corpus .*?--out runs/en-de)(?=\s*(#|$))", rf"\1 {TINY_MODEL} --max-tokens 1500 --epochs 5"),
    (
        r"(train wmt14 .*?)(?=\s*(#|$))",
        rf"\1 {TINY_MODEL} --max-tokens 1000 --steps 12 --snapshot-minutes 0.0001",
    ),
    # as the train command's, so that it finds this corpus
    (r"(prepare wmt14 .*?)(?=\s*(#|$))", r"\1 --bpe-size 800"),
    (r"--nproc_per_node=8", "--nproc_per_node=2"),
]
NOT_RUN = {  # a phrase of the block: why it is not run here
    "make test": "the test command itself: it runs this test",
    "make demo TORCH_INDEX=": "TORCH_INDEX only chooses the install, which is this environment: the rest is `make demo`",
    "--nnodes=2": "needs several machines and a rendezvous point they all reach",
}


def shell_blocks() -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S | re.M)


def tiny(block: str) -> str:
    "The block with its sizes made tiny, line by line (a line ending in a backslash continues a command)."
    lines = block.replace("\\\n", " ").splitlines()
    for pattern, replacement in TINY:
        lines = [re.sub(pattern, replacement, line) for line in lines]
    return "\n".join(lines)


def test_what_is_not_run_is_still_in_the_readme():
    "Each block left out is still there, once: the list of what is not run cannot outlive the README's text."
    blocks = shell_blocks()
    for phrase in NOT_RUN:
        assert sum(phrase in b for b in blocks) == 1, phrase


WEBSITE = "https://annotated-transformer.github.io/annotated-transformer/"
FIRST_SCREEN = 25  # lines of README.md, about what a reader sees before scrolling
# whitespace-split, markup included, as the issue counted
MAX_WORDS_BEFORE_FIRST_COMMAND, MAX_WORDS = 250, 1800
FIGURE_1 = re.compile(r'<img src="([^"]*figure_1\.svg)"')
# the machine, and a date a row
RESULTS_HEADER = re.compile(r"^\| on an? [^|]*CPU \| result \| date \|$", re.M)
# (notebook, what its saved outputs or its dated appendix say, how the README's results table gives it)
FIGURES = [
    ("04_copy_task", "exact copies: 100.0%", "100% exact copies"),
    ("15_performance", "copy task: 22.6 s, the median of 3 runs", "in 22.6 s, the median of 3 runs"),
    # sacreBLEU's line, bootstrap
    ("09_multi30k", "BLEU = 41.97 (μ = 41.93 ± 1.62)", "41.97 sacreBLEU** ±1.6"),
    ("15_performance", "1.24 (1.23–1.65)", "1.24× as fast, the median of 5 rounds (1.23–1.65×"),
]


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def notebook_text(notebook: str) -> str:
    "The text of a notebook's saved outputs (streams and plain-text results) and of its prose."
    cells = json.loads((ROOT / "nbs" / f"{notebook}.ipynb").read_text(encoding="utf-8"))["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c["outputs"]]
    prose = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    return "\n".join(
        ["".join(o.get("text") or o.get("data", {}).get("text/plain", "")) for o in outputs] + prose
    )


def test_the_first_screen_is_the_project():
    "Figure 1, the website's link and the results table come first, with at most 250 words before the first command."
    text = readme()
    before_command = text[: text.index("```")]
    assert len(before_command.split()) <= MAX_WORDS_BEFORE_FIRST_COMMAND, len(before_command.split())
    first_screen = "\n".join(text.splitlines()[:FIRST_SCREEN])
    assert FIGURE_1.search(first_screen) and WEBSITE in first_screen
    assert RESULTS_HEADER.search(first_screen) and "41.97 sacreBLEU" in first_screen
    for part in (FIGURE_1.search(text)[0], WEBSITE, RESULTS_HEADER.search(text)[0]):
        assert text.index(part) < len(before_command), f"{part} comes after the first command"


def test_the_readme_is_at_most_1800_words():
    assert len(readme().split()) <= MAX_WORDS, len(readme().split())


def test_figure_1_is_the_notebooks_picture():
    "The README's image, read from the repository's root, is the file the home page's notebook shows from nbs/."
    in_readme = FIGURE_1.search(readme())[1]
    index = json.loads((ROOT / "nbs" / "index.ipynb").read_text(encoding="utf-8"))
    in_notebook = FIGURE_1.search("".join(c for cell in index["cells"] for c in cell["source"]))[1]
    assert (ROOT / in_readme).is_file(), f"README.md shows {in_readme}, which is not a file of the repository"
    assert (ROOT / in_readme).resolve() == (ROOT / "nbs" / in_notebook).resolve(), (in_readme, in_notebook)


def test_the_results_are_the_notebooks_figures():
    "Each figure of the results table is in the notebook its row links to: a saved output, or its dated appendix."
    rows = {line for line in readme().splitlines() if line.startswith("| [")}
    for notebook, printed, shown in FIGURES:
        assert printed in notebook_text(notebook), f"{notebook} no longer gives {printed!r}"
        # the notebook, or its page
        links = (f"nbs/{notebook}.ipynb", f"{WEBSITE}{notebook.split('_', 1)[1]}.html")
        assert any(shown in row and any(link in row for link in links) for row in rows), (
            f"the results table lacks {shown!r}"
        )


def book_stats():
    "tools/book_stats.py, imported."
    spec = importlib.util.spec_from_file_location("book_stats", ROOT / "tools" / "book_stats.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_contributing_shows_the_size_table_of_now():
    "CONTRIBUTING.md's tables are what `tools/book_stats.py` prints for the notebooks and modules as they are."
    stats = book_stats()
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert stats.with_table(contributing, stats.tables()) == contributing, "stale: run `make stats`"
    assert stats.table() in contributing and stats.module_table() in contributing
    printed = subprocess.run(
        [sys.executable, ROOT / "tools" / "book_stats.py"], capture_output=True, text=True
    )
    assert printed.stdout == stats.tables() + "\n"


def test_the_papers_half_keeps_its_budget():
    "Notebooks 00–04 hold the paper: at most 3,000 words of our own prose (quotes not counted) and 900 lines of code."
    stats = book_stats()
    counted = stats.paper_half()
    for what, most in stats.PAPER_HALF_BUDGET.items():
        assert counted[what] <= most, (
            f"00–04 hold {counted[what]:,} {what}, past the {most:,} the README promises"
        )


def test_quotes_and_own_prose_are_counted_apart():
    "A quote from the paper, continuation lines included, is counted as quoted; our words around it as our own."
    cell = "Our words here.\n\n> **§3.2.1** We call our particular attention\n>\n> more of it.\n\n> A summary of ours."
    counted = book_stats().prose_and_quotes(cell)
    assert counted == (3 + 4, 6 + 3), counted  # the summary line is ours


@pytest.fixture(scope="module")
def reader_dir(tmp_path_factory) -> tuple[Path, dict]:
    """A directory with what the README's reader has, made of the tests' corpus: Multi30k's files (and the same as files
    of their own, under Multi30k's names), WMT 2014's."""
    home = tmp_path_factory.mktemp("reader")
    write_wmt14_stand_in(home / "wmt14")
    for split, name, n in (("train", "train", 3000), ("val", "val", 150), ("test", "test_2016_flickr", 150)):
        for lang in ("de", "en"):  # Multi30k's files, as your own corpus
            with gzip.open(home / f"{name}.{lang}.gz", "wt", encoding="utf-8") as f:
                f.write("\n".join(first_lines(split, lang, n)) + "\n")
    env = {
        **os.environ,
        "MULTI30K_DIR": str(write_corpus(tmp_path_factory.mktemp("multi30k"))),
        "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "OMP_NUM_THREADS": "1",
    }
    return home, env


def run_block(block: str, cwd: Path, env: dict) -> str:
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", tiny(block)], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, (
        f"{tiny(block)}\nexit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


def test_every_readme_command_works_as_written(reader_dir: tuple[Path, dict], tmp_path: Path):
    home, env = reader_dir
    outputs = {}
    for block in shell_blocks():
        if any(phrase in block for phrase in NOT_RUN):
            continue
        own_dir = "torchrun" in block and (home / "runs" / "wmt14").exists()
        if own_dir:
            (tmp_path / "wmt14").symlink_to(home / "wmt14")  # the same data; a run directory of its own
        outputs[block] = run_block(block, tmp_path if own_dir else home, env)
    assert len(outputs) == len(shell_blocks()) - len(NOT_RUN)
    text = "\n".join(outputs.values())
    assert "exact copies:" in text  # make demo
    assert "done: runs/multi30k/last.pt" in text and "sacreBLEU" in text and "2 process(es)" in text
    # 2 budgets
    assert "done: runs/half/last.pt" in text and (home / "runs" / "multi30k" / "best.pt").is_file()
    assert "test_2016_flickr.en.gz: sacreBLEU" in text  # English→German, trained on the reader's own corpus
    assert (home / "runs" / "wmt14" / "average_5.pt").is_file() and "newstest2014: sacreBLEU" in text
