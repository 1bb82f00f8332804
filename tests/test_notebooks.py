"""Run every notebook top to bottom in a real Jupyter kernel, as a reader runs it: the notebooks' demonstrations are
the tests, and this is the one place the default test run executes them (each once).

A Jupyter kernel is a separate process with its own event loop, display machinery and working directory, as a
reader's is (`nbdev-test`'s in-process shell is not). Cells flagged with one of the
project's `tst_flags` (`slow`, `cuda`) are left out unless `--nb-flags` names the flag, and
cells marked `#| eval: false` (code shown, not run) are always left out.
"""

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbdev.config import get_config

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "nbs").glob("[!_.]*.ipynb"))
DIRECTIVE = re.compile(r"^#\|\s*(.*)$")


def directives(source: str) -> list[str]:
    "The `#| ...` directive lines at the top of a cell, without their `#|`."
    found = []
    for line in source.splitlines():
        m = DIRECTIVE.match(line.strip())
        if not m:
            break
        found.append(m[1].strip())
    return found


def cell_flags(source: str) -> set[str]:
    "The words of a cell's directives that are flags (not `option: value`)."
    return {word for d in directives(source) if ":" not in d for word in d.split()}


def runs(source: str, skip: set[str]) -> bool:
    "Whether a reader's run executes the cell: not `#| eval: false`, and no flag in `skip`."
    return not cell_flags(source) & skip and not any(
        re.fullmatch(r"eval:\s*false", d) for d in directives(source)
    )


def test_directives():
    assert cell_flags("#| slow\n#| export\nx = 1\n#| cuda") == {"slow", "export"}
    assert cell_flags("x = 1") == set()
    assert not runs("#| eval: false\nimport datasets", set()) and not runs("#| slow\nx = 1", {"slow"})
    assert runs("#| export\nx = 1", {"slow"}) and runs("x = 1  #| eval: false", set())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_in_jupyter(path: Path, nb_flags: set[str]):
    skip = set(get_config(ROOT).tst_flags.split()) - nb_flags
    nb = nbformat.read(path, as_version=4)
    nb.cells = [c for c in nb.cells if c.cell_type != "code" or runs(c.source, skip)]
    NotebookClient(
        nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
