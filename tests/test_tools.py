"""The maintainers' tools that no notebook runs."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).parent.parent / "tools"


def test_cuda_cells_records_only_the_cuda_cells_outputs(tmp_path: Path):
    "tools/cuda_cells.py runs the cells a kernel would run, records the `cuda` cells' outputs, keeps the others'."
    cells = [
        "x = 40",
        "#| slow\nraise RuntimeError('a slow cell is not run')",
        "#| cuda\nprint('on the GPU')\nx + 2",
        "#| eval: false\nraise RuntimeError('nor is this one')",
        "x = 1\nx",
    ]
    kept = [{"name": "stdout", "output_type": "stream", "text": ["an output saved earlier\n"]}]
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": str(i),
                "metadata": {},
                "outputs": kept,
                "source": s,
            }
            for i, s in enumerate(cells)
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "in.ipynb").write_text(json.dumps(notebook))
    subprocess.run(
        [sys.executable, TOOLS / "cuda_cells.py", tmp_path / "in.ipynb", "--out", tmp_path / "out.ipynb"],
        check=True,
    )
    outputs = [cell["outputs"] for cell in json.loads((tmp_path / "out.ipynb").read_text())["cells"]]
    assert outputs[2] == [
        {"name": "stdout", "output_type": "stream", "text": ["on the GPU\n"]},
        {
            "data": {"text/plain": ["42"]},
            "execution_count": None,
            "metadata": {},
            "output_type": "execute_result",
        },
    ]
    assert outputs[:2] + outputs[3:] == [kept] * 4


def test_cuda_cells_fails_when_a_cuda_cell_fails(tmp_path: Path):
    "A failing `cuda` cell makes the tool fail, naming it; a failing cell of another kind is reported and passed over."
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": "import a_package_not_there"},
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": "#| cuda\n1 / 0"},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "in.ipynb").write_text(json.dumps(notebook))
    run = subprocess.run(
        [sys.executable, TOOLS / "cuda_cells.py", tmp_path / "in.ipynb", "--out", tmp_path / "out.ipynb"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert "cell 0 (not cuda) failed" in run.stderr and "cell 1 (cuda) failed" in run.stderr
    assert "ZeroDivisionError" in run.stderr


@pytest.mark.xdist_group("test_tools")
def test_make_test_keeps_a_modules_tests_on_one_worker(request):
    """`make test` runs with `--dist loadgroup`, so that the tests of a module marked `xdist_group` (the website's,
    the command line's) share one worker and build their fixtures once. pytest-xdist marks each such test's id with
    its group; pytest 9.2 drops that mark, and the groups were silently spread over both workers."""
    if not getattr(request.config.option, "loadgroup", False):  # pytest-xdist sets it on its workers
        pytest.skip("runs under `make test` (pytest-xdist's --dist loadgroup) only")
    assert request.node.nodeid.endswith("@test_tools"), (
        f"pytest-xdist's group is not in this test's id ({request.node.nodeid}): install a pytest that keeps it "
        "(pyproject.toml's dev extra pins one)"
    )


def test_make_readme_sends_pages_to_notebooks_and_sections_to_the_website():
    "A page link becomes its notebook; a link to a section (an nbdev anchor has dots) or to a page no notebook makes, the website."
    sys.path.insert(0, str(TOOLS))
    try:
        from make_readme import page_links_to_notebooks
    finally:
        sys.path.remove(str(TOOLS))
    site = "https://annotated-transformer.github.io/annotated-transformer"
    text = (
        "[a](attention.html) [b](corpus.html#corpus.scoring_options) [c](api.html) [d](attention.html#masks)"
    )
    assert page_links_to_notebooks(text) == (
        f"[a](nbs/00_attention.ipynb) [b]({site}/corpus.html#corpus.scoring_options) [c]({site}/api.html) "
        f"[d]({site}/attention.html#masks)"
    )
