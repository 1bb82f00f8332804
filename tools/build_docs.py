"""Build the website from the notebooks, offline and without Quarto: `make docs` writes `_docs/`.

In a temporary folder (no lock: nothing outside it is written until the site is copied to `--out`), each notebook
becomes a page for MyST-NB: the title cell its title, a heading and the docstring of each public function and class
above the exported cell that defines it, `#|` options as tags, and each chart drawn by vega-embed from the Vega-Lite
spec its output carries (`visualization.chart_renderer`), with an SVG for readers without JavaScript. The API page is autodoc's;
"Try it" runs a translator in the browser (`tools/site_model.py`). Sphinx renders it all, warnings as errors.
"""

import argparse
import ast
import html
import importlib
import inspect
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import site_model
import tomllib
import vl_convert

from annotated_transformer.errors import report_errors
from annotated_transformer.model_directory import read_description

ROOT = Path(__file__).resolve().parent.parent
NBS, OUT, PACKAGE = ROOT / "nbs", ROOT / "_docs", "annotated_transformer"
# a notebook's first cell: `# Title`, `> description`
TITLE = re.compile(r"^# ([^\n]+?)[ \t]*(?:\n+> ([^\n]+?))?\s*$")
OPTION = re.compile(r"^#\| *([\w-]+):? *(.*)$")  # a cell option: `#| export`, `#| echo: false`
TAGS = {
    ("echo", "false"): "remove-input",
    ("output", "false"): "remove-output",
    ("include", "false"): "remove-cell",
}
TAGS[("hide", "")] = "remove-cell"  # the options that change what the page shows, as MyST-NB's cell tags
# a link to another page of the site, by its file name
PAGE_LINK = re.compile(r"\]\(([\w-]+)\.html(#[^)\s]*)?\)")
LOCAL_IMAGE = re.compile(r'(\]\(|src=")images/')  # a picture in nbs/images/: served with the notebooks
# a line of a cell that proves something (fastcore's test_*)
CHECK = re.compile(r"^\s*(assert\b|test_\w+\()", re.M)
# a chart's spec, kept by `visualization.chart_renderer`
VEGA_LITE = re.compile(r"application/vnd\.vegalite\.v\d+\+json")
API_PAGE, TRY_PAGE = "api", "try"  # the pages this script writes; every other page is a notebook
TRY_IT = '<div class="try-it"></div>'  # where a notebook shows the widget on the site (in Jupyter, nothing)
TRY = "_static/try"  # the widget's scripts (from docs/), its model and onnxruntime-web
# the browser test finds charts by the first; the second folds code
CHART_TAG, FOLDED_TAG = "chart", "hide-input"
TAGS[("code-fold", "true")] = FOLDED_TAG  # a cell its notebook folds: long plumbing the text above describes
# the notebooks for download; each chart's static SVG
NOTEBOOKS, CHARTS = "_static/notebooks", "_static/charts"
# Vega, Vega-Lite and vega-embed; what draws each chart
VEGA, DRAW_CHARTS = "_static/vega.js", "_static/charts.js"
# pages named anew (0.27: as their modules), and the page each old address now leads to
MOVED_PAGES = {
    "export": "ctranslate2_format",
    "browser": "onnx_format",
    "transformers": "transformers_format",
    "cpu": "speedups",
}
REDIRECT = (
    '<!doctype html>\n<meta charset="utf-8">\n<title>Moved to {new}.html</title>\n'
    '<meta http-equiv="refresh" content="0; url={new}.html">\n<link rel="canonical" href="{new}.html">\n'
    '<p>This page is now <a href="{new}.html">{new}.html</a>.</p>\n'
)


def symbol_summaries(source: str) -> str:
    "A heading and the docstring (in italics, as nbdev's `show_doc`) of each public function and class a cell defines."
    nodes = [
        n
        for n in ast.parse(source).body
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name[0] != "_"
    ]
    docs = {n.name: ast.get_docstring(n) or "" for n in nodes}
    return "\n\n".join(
        f"### {name}\n\n" + (doc if "\n\n" in doc or not doc else f"*{doc}*") for name, doc in docs.items()
    )


def chart_html(spec: dict, svg: str, first: bool) -> str:
    """A chart for vega-embed to draw from its spec, which follows it in the page, with its static SVG in `noscript`;
    the page's first chart also loads the scripts."""
    scripts = f'<script src="{VEGA}"></script><script src="{DRAW_CHARTS}"></script>' if first else ""
    title = spec.get("title") or "chart"
    label = html.escape(str(title.get("text", "chart") if isinstance(title, dict) else title))
    spec_json = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")  # never ends the script element
    return (
        f'{scripts}<div class="vega-chart"><noscript><img src="{svg}" alt="{label}"></noscript></div>'
        f'<script type="application/json" class="vega-spec">{spec_json}</script>'
    )


def prepare_code_cell(cell, src: Path, page: str, charts: int) -> int:
    """Cell options as MyST-NB tags; charts drawn from their specs, `charts` of them being earlier on the page; cells of
    imports folded, and checks that show nothing (the reader opens them to see the proof). Returns its charts."""
    lines = cell.source.splitlines()
    options = [OPTION.match(line) for line in lines]
    tags = [TAGS[key] for m in options if m and (key := (m[1], m[2].strip().lower())) in TAGS]
    cell.source = "\n".join(line for line, m in zip(lines, options) if not m).strip()
    try:
        body = ast.parse(cell.source).body
    except SyntaxError:  # IPython's syntax: %magic, !command
        body = None
    imports_only = body and all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in body)
    if imports_only or (CHECK.search(cell.source) and not cell.outputs):
        tags.append(FOLDED_TAG)
    for output in cell.outputs:
        spec = next((v for k, v in output.get("data", {}).items() if VEGA_LITE.fullmatch(k)), None)
        if spec is None and "vegaEmbed" in "".join(output.get("data", {}).get("text/html", "")):
            sys.exit(
                f"{page}: a chart without its spec: enable visualization.chart_renderer and run the notebook again."
            )
        if spec is not None:
            charts += 1
            svg = f"{CHARTS}/{page}-{charts}.svg"
            (src / svg).write_text(vl_convert.vegalite_to_svg(spec))
            output["data"] = {"text/html": chart_html(spec, svg, first=charts == 1), "text/plain": "<chart>"}
            tags.append(CHART_TAG)
    cell.metadata = {"tags": sorted(set(tags))} if tags else {}
    return charts


def notebook_links(notebook: str) -> str:
    "A line of links for a notebook's page: download it from the site, open it in Colab, read it on GitHub."
    repo = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"].rstrip("/")
    github = f"{repo}/blob/main/nbs/{notebook}"
    colab = github.replace("https://github.com/", "https://colab.research.google.com/github/")
    return (
        f'<p class="notebook-links"><a href="{NOTEBOOKS}/{notebook}" download>Download the notebook</a> · '
        f'<a href="{colab}">Open in Colab</a> · <a href="{github}">View on GitHub</a></p>'
    )


def prepare_notebook(notebook: Path, src: Path, widget: str) -> tuple[str, str, str | None]:
    "Write `notebook` as a page for MyST-NB; return the page's name, its title and the module it exports (or None)."
    nb, module = nbformat.read(notebook, as_version=4), None
    page = re.sub(r"^\d+[a-z]?_", "", notebook.stem)  # as nbdev names it: 05d_trainer.ipynb is trainer
    if not (nb.cells and nb.cells[0].cell_type == "markdown" and (m := TITLE.match(nb.cells[0].source))):
        sys.exit(f"{notebook.name} does not start with a '# Title' cell (and, under it, '> a description').")
    title, description = m.groups()
    head = [f"# {title}"] + ([f"{{.lead}}\n{description}"] if description else [])
    cells = [
        nbformat.v4.new_markdown_cell(
            "\n\n".join(head + ([notebook_links(notebook.name)] * (page != "index")))
        )
    ]
    charts = 0
    for cell in nb.cells[1:]:
        if cell.cell_type == "markdown":
            cell.source = PAGE_LINK.sub(
                lambda m: f"]({m[1]}.{'md' if m[1] in (API_PAGE, TRY_PAGE) else 'ipynb'}{m[2] or ''})",
                cell.source,
            )  # a link Sphinx resolves, and fails the build if it is broken
            cell.source = LOCAL_IMAGE.sub(rf"\1{NOTEBOOKS}/images/", cell.source).replace(TRY_IT, widget)
            cell.metadata = {}
        elif cell.cell_type == "code":
            if m := re.match(r"#\| *default_exp:? +(\S+)", cell.source):
                module = m[1]
                continue
            if re.match(r"#\| *export\b", cell.source) and (summaries := symbol_summaries(cell.source)):
                cells.append(nbformat.v4.new_markdown_cell(summaries))
            charts = prepare_code_cell(cell, src, page, charts)
        cells.append(cell)
    nb.cells = cells
    nb.metadata = {"kernelspec": nb.metadata.get("kernelspec", {}), "language_info": {"name": "python"}}
    nbformat.write(nb, src / f"{page}.ipynb")
    return page, title, module


def api_sections(modules: list[tuple[str, str, str]]) -> str:
    """The API reference after its introduction (docs/api.md): each module's `__all__` by autodoc, in reading order; its
    constants named one by one, since autodoc's `automodule` finds only those with a `#:` comment above them."""
    parts = []
    for module, page, title in modules:
        mod = importlib.import_module(f"{PACKAGE}.{module}")
        constants = [
            n for n in mod.__all__ if not (inspect.isclass(v := getattr(mod, n)) or inspect.isroutine(v))
        ]
        parts += [f"## `{PACKAGE}.{module}`\n\nBuilt in [{title}]({page}.ipynb).", "```{eval-rst}"]
        parts += [f".. autodata:: {PACKAGE}.{module}.{name}\n" for name in constants]
        parts += [
            f".. automodule:: {PACKAGE}.{module}\n   :members:\n   :undoc-members:\n   :show-inheritance:\n```"
        ]
    return "\n\n" + "\n\n".join(parts)


def write_sources(src: Path, model: Path | None):
    "The pages, Sphinx's settings and the site's files, in `src`; the Try it page runs `model` (None: the fallback)."
    shutil.copytree(ROOT / "docs", src)
    shutil.copytree(NBS, src / NOTEBOOKS, ignore=shutil.ignore_patterns("_*", ".*", "index.ipynb", "runs"))
    (src / CHARTS).mkdir()
    # The bundle declares its names at the top level, where they would clash with Sphinx's own (`_`): a function keeps them
    (src / VEGA).write_text(f"(() => {{\n{vl_convert.javascript_bundle()}\n}})();\n")
    translator, about = site_model.site_translator(model)
    widget, sizes = site_model.widget(src / TRY, translator, about)
    (src / f"{TRY_PAGE}.md").write_text(
        site_model.page(widget, sizes, translator, about, fallback=model is None)
    )
    pages = [prepare_notebook(notebook, src, widget) for notebook in sorted(NBS.glob("[!_.]*.ipynb"))]
    # the site's navigation, hidden at the end of its home page
    toc = {
        "Try it": [TRY_PAGE],
        "Notebooks": [p for p, _, _ in pages if p != "index"],
        "Reference": [API_PAGE],
    }
    navigation = [
        f":::{{toctree}}\n:hidden:\n:caption: {c}\n\n" + "\n".join(p) + "\n:::" for c, p in toc.items()
    ]
    index = nbformat.read(src / "index.ipynb", as_version=4)
    index.cells.append(nbformat.v4.new_markdown_cell("\n\n".join(navigation)))
    nbformat.write(index, src / "index.ipynb")
    modules = [(module, page, title) for page, title, module in pages if module not in (None, "__init__")]
    with open(src / f"{API_PAGE}.md", "a") as api:  # the package's own page documents its top level
        api.write(api_sections(modules))


def build(out: Path, model: Path | None):
    "The website into `out`, its Try it page running `model` (a model directory; None: the fallback model)."
    if model:
        read_description(model)  # a model directory, or a clear error before minutes of work
    with tempfile.TemporaryDirectory(prefix="annotated-transformer-docs-") as tmp:
        src, built = Path(tmp, "src"), Path(tmp, "html")
        write_sources(src, model)
        sphinx = [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "html",
            "-W",
            "--keep-going",
            "-q",
            str(src),
            str(built),
        ]
        if subprocess.call(sphinx):
            sys.exit("The website did not build: Sphinx's warnings and errors are above.")
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(built, out)
    for old, new in MOVED_PAGES.items():  # an old link still finds its page
        (out / f"{old}.html").write_text(REDIRECT.format(new=new), encoding="utf-8")
    print(f"The website is in {out}: open {out / 'index.html'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the website goes (default: _docs/)")
    parser.add_argument(
        "--model", type=Path, help='the model directory "Try it" runs (default: a small one, cached)'
    )
    args = parser.parse_args()
    sys.exit(report_errors("make docs", lambda: build(args.out, args.model), exiting=True))


if __name__ == "__main__":
    main()
