"""The book's rules for its code, checked: the reading order is the dependency order, and functions stay short.

The notebooks' numbers give the reading order. Exported code imports only from modules built by the same
notebook or earlier ones, and a notebook imports only what the notebooks before it (or itself) export, so a
reader never meets a name the book has not built yet. The generated modules say which notebook each of their
cells comes from (`# %% ../nbs/NN_name.ipynb`), which is what these tests read.
"""

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "annotated_transformer"
NOTEBOOKS = sorted(p.name for p in (ROOT / "nbs").glob("[0-9]*.ipynb"))  # the reading order
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if not p.name.startswith("_"))
CELL = re.compile(r"^# %% \.\./nbs/(\S+\.ipynb)", re.M)
MAX_FUNCTION_LINES = 60


def cells_of(module: str) -> list[tuple[str, str]]:
    "The generated module's cells, as (notebook, code)."
    parts = CELL.split((PACKAGE / f"{module}.py").read_text())
    return list(zip(parts[1::2], parts[2::2]))


def built_in(module: str) -> int:
    "The position in the reading order of the last notebook that adds to `module`."
    return max(NOTEBOOKS.index(notebook) for notebook, _ in cells_of(module))


def imported_modules(code: str, relative_to_package: bool) -> set[str]:
    "The package's modules that `code` imports (`from .x`, `from annotated_transformer.x`, `import ...x`)."
    found = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and relative_to_package:
                names = [node.module] if node.module else [a.name for a in node.names]
            elif node.level == 0 and node.module == "annotated_transformer":
                names = [a.name for a in node.names]
            elif node.level == 0 and (node.module or "").startswith("annotated_transformer."):
                names = [node.module.split(".")[1]]
            else:
                names = []
        elif isinstance(node, ast.Import):
            names = [a.name.split(".")[1] for a in node.names if a.name.startswith("annotated_transformer.")]
        else:
            names = []
        found |= {name for name in names if name in MODULES}
    return found


def test_cell_markers_are_read():
    assert cells_of("attention") and {nb for nb, _ in cells_of("attention")} == {"00_attention.ipynb"}
    assert imported_modules("from .model import X\nimport annotated_transformer.data as d", True) == {
        "model",
        "data",
    }
    assert imported_modules("from annotated_transformer import training", False) == {"training"}
    # relative imports only count in the package
    assert imported_modules("from .model import X", False) == set()


@pytest.mark.parametrize("module", MODULES)
def test_exported_code_imports_only_from_earlier_notebooks(module: str):
    late = [
        f"{notebook} exports code into {module}.py that imports {other}, built later in {NOTEBOOKS[built_in(other)]}"
        for notebook, code in cells_of(module)
        for other in imported_modules(code, relative_to_package=True)
        if built_in(other) > NOTEBOOKS.index(notebook)
    ]
    assert not late, "\n".join(late)


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_notebook_imports_only_what_earlier_notebooks_export(notebook: str):
    nb = nbformat.read(ROOT / "nbs" / notebook, as_version=4)
    code = "\n".join(
        "\n".join(line for line in c.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for c in nb.cells
        if c.cell_type == "code"
    )
    late = [
        f"{notebook} imports {m}, built later in {NOTEBOOKS[built_in(m)]}"
        for m in imported_modules(code, relative_to_package=False)
        if built_in(m) > NOTEBOOKS.index(notebook)
    ]
    assert not late, "\n".join(late)


@pytest.mark.parametrize("module", MODULES)
def test_rooms_a_maintainer_can_hold(module: str):
    # a module is as long as its one job needs; a function is not
    source = (PACKAGE / f"{module}.py").read_text()
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"{module}.py: functions over {MAX_FUNCTION_LINES} lines: {', '.join(long)}"


# what the machine's half may raise besides the errors module's kinds: a bug's or Python's protocols
BUILT_IN = {
    "AttributeError",  # a module's __getattr__
    "KeyboardInterrupt",  # Ctrl-C, passed on
    "NotImplementedError",  # a method a subclass provides, or a case our code does not handle
    "RuntimeError",  # a bug of ours, caught by its own check
    "TypeError",  # a caller's code, not a user's input, gave the wrong type
    "ArgumentTypeError",  # argparse's, which it turns into its own one-line error
}


@pytest.mark.parametrize("module", [m for m in MODULES if built_in(m) >= NOTEBOOKS.index("05a_errors.ipynb")])
def test_every_error_for_the_user_has_the_packages_kind(module: str):
    """The machine's half raises its user's errors as kinds of `AnnotatedTransformerError`, never a bare ValueError or
    OSError, so that a program catches them all with one `except`. (The paper's half, 00–04, comes before the errors
    notebook and raises Python's own.)"""
    errors = importlib.import_module("annotated_transformer.errors")
    ours = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, Exception)
    }
    # the package's functions that make one of its errors, e.g. `write_error(path, e) -> WriteError`
    makers = {
        node.name
        for other in MODULES
        for node in ast.walk(ast.parse((PACKAGE / f"{other}.py").read_text()))
        if isinstance(node, ast.FunctionDef)
        and isinstance(node.returns, ast.Name)
        and node.returns.id in ours
    }
    bare = []
    for node in ast.walk(ast.parse((PACKAGE / f"{module}.py").read_text())):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            called = node.exc.func
            name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", "")
            if name not in ours | BUILT_IN | makers:
                bare.append(f"line {node.lineno}: raise {name}")
    assert not bare, f"{module}.py raises errors that are not the package's kinds: {bare}"


@pytest.mark.parametrize("module", MODULES)
def test_no_module_imports_another_modules_private_names(module: str):
    private = [
        f"{node.module or ''}.{alias.name}"
        for node in ast.walk(ast.parse((PACKAGE / f"{module}.py").read_text()))
        if isinstance(node, ast.ImportFrom)
        and (node.level == 1 or (node.module or "").startswith("annotated_transformer"))
        # a module's own (bench's child process imports its own)
        and (node.module or "").rpartition(".")[2] != module
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert not private, (
        f"{module}.py imports private names of other modules: {private}; make them public or move them"
    )


def test_each_notebook_has_a_number_of_its_own():
    numbers = [re.match(r"\d+[a-z]?", notebook)[0] for notebook in NOTEBOOKS]
    twice = sorted({number for number in numbers if numbers.count(number) > 1})
    assert not twice, f"notebooks that share a number, so their reading order is their names': {twice}"


def test_reading_a_tokenizer_imports_no_trainer():
    code = "import sys, annotated_transformer.tokenization; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    machinery = {
        "annotated_transformer.trainer",
        "annotated_transformer.checkpoints",
        "annotated_transformer.resuming",
        "annotated_transformer.recipe",
        "annotated_transformer.building",
    }
    assert not machinery & set(loaded), (
        f"importing the tokenization module loads {sorted(machinery & set(loaded))}"
    )
