"""Run a notebook's `#| cuda` cells on a GPU machine and save their outputs into the notebook.

`make test` skips the cells flagged `cuda`, and a GPU machine may lack Jupyter. This runs a notebook's code
cells in order in one namespace, as a kernel would (cells flagged `slow`, `notest` or `eval: false` left
out), and records what each `cuda` cell prints and shows, as Jupyter records it. The other cells' saved
outputs are kept as they are. A failing cell that is not flagged `cuda` is reported and the run goes on,
so that one missing optional package does not cost a GPU session its figures.

    python tools/cuda_cells.py nbs/15_performance.ipynb --out OUT.ipynb
"""

import argparse
import ast
import contextlib
import io
import json
import sys
import traceback
from pathlib import Path

SKIPPED = {"slow", "notest"}  # the flags `make test` leaves out besides `cuda` (pyproject.toml's tst_flags)


def directives(source: str) -> list[str]:
    "The cell's leading `#|` lines, without the marker."
    lines = []
    for line in source.splitlines():
        if not line.startswith("#|"):
            break
        lines.append(line[2:].strip())
    return lines


def runs(source: str) -> bool:
    "Whether a kernel running the notebook with the `cuda` flag runs this cell."
    options = directives(source)
    return not (SKIPPED & set(options) or any(o.replace(" ", "") == "eval:false" for o in options))


def lines(text: str) -> list[str]:
    "Text as a notebook stores it: a list of lines, each with its line end."
    return text.splitlines(keepends=True)


def display_data(value) -> dict:
    "The data Jupyter shows for a cell's last value: HTML where the value has it, and its text."
    data = {"text/plain": lines(repr(value))}
    if hasattr(value, "_repr_html_") and (html := value._repr_html_()) is not None:
        data = {"text/html": lines(html), **data}
    return data


def run_cell(source: str, namespace: dict) -> list[dict]:
    "Run a cell's code in `namespace`; its outputs as Jupyter's: the streams, then the last expression's value."
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out, err, value = io.StringIO(), io.StringIO(), None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        exec(compile(tree, "<cell>", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
    outputs = [
        {"name": name, "output_type": "stream", "text": lines(text)}
        for name, text in (("stdout", out.getvalue()), ("stderr", err.getvalue()))
        if text
    ]
    if value is not None:
        outputs.append(
            {
                "data": display_data(value),
                "execution_count": None,
                "metadata": {},
                "output_type": "execute_result",
            }
        )
    sys.stdout.write(out.getvalue())
    sys.stderr.write(err.getvalue())
    return outputs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument(
        "--out", type=Path, required=True, help="where the notebook with the new outputs goes"
    )
    args = parser.parse_args(argv)
    notebook = json.loads(args.notebook.read_text())
    namespace = {"__name__": "__main__"}
    failed = 0
    for i, cell in enumerate(notebook["cells"]):
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or not runs(source):
            continue
        cuda = "cuda" in directives(source)
        try:
            outputs = run_cell(source, namespace)
        except Exception:
            failed += cuda
            print(
                f"cell {i} ({'cuda' if cuda else 'not cuda'}) failed:\n{traceback.format_exc()}",
                file=sys.stderr,
            )
            continue
        if cuda:
            cell["outputs"] = outputs
            print(f"cell {i}: cuda outputs recorded", file=sys.stderr)
    args.out.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
