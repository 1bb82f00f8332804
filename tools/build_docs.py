"""Build the website from the notebooks, offline and without Quarto: `make docs` writes `_docs/`.

1. nbdev processes the notebooks for rendering into `_proc/`: `show_doc` cells rendered, exported and
   hidden cells removed, the title moved into front matter.
2. This script turns those Quarto-flavoured notebooks into MyST-NB's, in `_docs_src/`: front matter
   becomes the page's title, Quarto callouts become admonitions, Quarto cell options become cell tags (cells
   of imports alone and checks that show nothing are folded; pandas' row numbers are dropped from tables),
   altair charts (HTML that loads Vega from the network) become charts that vega-embed draws from Vega,
   Vega-Lite and vega-embed served by the site itself (vl-convert's bundle), with a static SVG (also from
   vl-convert) for readers without JavaScript. It adds the navigation and writes the API reference page,
   and the "Try it" page, whose widget runs a translator in the reader's browser (`tools/site_model.py`).
3. Sphinx (MyST-NB, the Furo theme, MathJax served from the site) renders `_docs_src/` into `_docs/`,
   with warnings treated as errors.
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
from pathlib import Path

import nbformat
import site_model
import tomllib
import vl_convert
import yaml
from filelock import FileLock
from nbdev.serve import proc_nbs

from annotated_transformer.native_format import read_description

ROOT = Path(__file__).resolve().parent.parent
NBS, PROC, SRC, OUT = ROOT / "nbs", ROOT / "_proc", ROOT / "_docs_src", ROOT / "_docs"
PACKAGE = "annotated_transformer"

CALLOUT = re.compile(r"^::: *\{\.callout-(\w+)\} *\n(?:#+ ([^\n]*)\n)?(.*?)^::: *$", re.M | re.S)
PAGE_LINK = re.compile(r"\]\(([\w-]+)\.html(#[^)\s]*)?\)")  # a link to another page of the site, by its file name
SHOW_DOC = re.compile(r"(#\|.*\n)*show_doc\(")  # a cell nbdev added after an exported one
EXPORTED = re.compile(r"#\| *export")
LOCAL_IMAGE = re.compile(r'(\]\(|src=")images/')  # a picture in nbs/images/: served with the notebooks
FENCED_CODE = re.compile(r"^```.*?^```\n?", re.M | re.S)
DIRECTIVE = re.compile(r"^#\| *([\w-]+): *(.*)$")
TAGS = {("echo", "false"): "remove-input", ("output", "false"): "remove-output", ("include", "false"): "remove-cell"}
API_PAGE = "api"  # a page this script writes, as TRY_PAGE; every other page is a notebook
TRY_PAGE = "try"  # the "Try it" page: the translator in the reader's browser
TRY_IT = '<div class="try-it"></div>'  # where a notebook shows the widget on the site (in Jupyter, nothing)
TRY = "_static/try"  # the widget's script (from docs/), its model and onnxruntime-web
CHART_TAG = "chart"  # the cell of every chart gets this tag; the browser test finds the charts by it
FOLDED_TAG = "hide-input"  # MyST-NB folds such a cell's code under a "Show code" toggle: imports, silent checks
CHECK = re.compile(r"^\s*(assert\b|test_\w+\()", re.M)  # a line of a cell that proves something (fastcore's test_*)
NOTEBOOKS = "_static/notebooks"  # where the site serves the notebooks for download
CHARTS = "_static/charts"  # each chart's static SVG, for readers without JavaScript
VEGA = "_static/vega.js"  # Vega, Vega-Lite and vega-embed in one file, written from vl-convert's bundle
INVISIBLE_POINT = {"filled": True, "opacity": 0, "size": 60}  # a line's hover targets: see `hover_targets`
MOVED_NAMES = "moved_names.md"  # the API page's table of names that moved (docs/moved_names.md)
DRAW_CHARTS = "_static/charts.js"  # draws each chart of a page from its spec (docs/_static/charts.js)


def process_notebooks():
    "nbdev's processing of every notebook (not the training runs stored beside them) into `_proc/`."
    proc_nbs(str(NBS), skip_folder_re=r"^([_.]|runs$)", n_workers=2)


def front_matter(nb) -> dict:
    "The YAML front matter nbdev puts in the first (raw) cell, removed from the notebook."
    cell = nb.cells[0]
    if cell.cell_type != "raw" or not cell.source.startswith("---"):
        raise ValueError(
            "nbdev's processed notebook has no front matter; does the notebook start with a '# Title' cell?"
        )
    del nb.cells[0]
    return yaml.safe_load(cell.source.strip().strip("-"))


def callouts_to_admonitions(markdown: str) -> str:
    "Quarto's `::: {.callout-note}` with a `## Title` line, as MyST's titled admonition."

    def admonition(m):
        kind, title, body = m.groups()
        return f":::{{admonition}} {title or kind.title()}\n:class: {kind}\n{body}:::"

    return CALLOUT.sub(admonition, markdown)


def page_links_to_documents(markdown: str) -> str:
    "`[text](model.html#x)` as `[text](model.ipynb#x)`: a link Sphinx resolves, and fails the build if it is broken."
    return PAGE_LINK.sub(
        lambda m: f"]({m[1]}.{'md' if m[1] in (API_PAGE, TRY_PAGE) else 'ipynb'}{m[2] or ''})", markdown
    )


def vega_lite_spec(html: str) -> dict | None:
    'The Vega-Lite spec inside altair\'s HTML output (`...})(SPEC, {"mode": "vega-lite"});`), or None.'
    if "vegaEmbed" not in html:
        return None
    start = html.rindex("})(") + 3
    spec, _ = json.JSONDecoder().raw_decode(html, start)
    return spec


def only_imports(source: str) -> bool:
    "Whether a cell's code does nothing but import (the `try: import ... except ImportError` of optional ones too)."
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    imports = (ast.Import, ast.ImportFrom)
    return bool(body) and all(
        isinstance(node, imports) or (isinstance(node, ast.Try) and all(isinstance(n, imports) for n in node.body))
        for node in body
    )


def chart_html(spec: dict, fallback: str, first: bool) -> str:
    """A chart for vega-embed to draw from its spec, which follows it in the page, with its static SVG in `noscript`;
    the page's first chart also loads the scripts."""
    scripts = f'<script src="{VEGA}"></script><script src="{DRAW_CHARTS}"></script>' if first else ""
    title = spec.get("title", "")
    label = (title if isinstance(title, str) else title.get("text", "")) or "chart"
    spec_json = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")  # never ends the script element
    return (
        f'{scripts}<div class="vega-chart"><noscript><img src="{fallback}" alt="{html.escape(str(label))}"></noscript></div>'
        f'<script type="application/json" class="vega-spec">{spec_json}</script>'
    )


def hover_targets(spec):
    """Every line of a chart gets its points as invisible marks (in place, through nested charts): a tooltip needs a mark
    under the pointer, and a line is one mark for all its points."""
    if isinstance(spec, dict):
        mark = spec.get("mark")
        if mark == "line" or (isinstance(mark, dict) and mark.get("type") == "line" and not mark.get("point")):
            spec["mark"] = {**(mark if isinstance(mark, dict) else {"type": "line"}), "point": INVISIBLE_POINT}
        for value in spec.values():
            hover_targets(value)
    elif isinstance(spec, list):
        for value in spec:
            hover_targets(value)


def without_range_index(html: str) -> str:
    """A pandas table's HTML without its index column when that index only numbers the rows 0, 1, 2, ...: a reader
    needs the figures, not pandas' row numbers. Other tables, and other HTML, are returned as they are."""
    row = r"<tr[^>]*>\s*<th[^>]*>([^<]*)</th>"  # a row that opens with a header cell: an index or a corner

    def table(m: re.Match) -> str:
        head, body = (re.search(rf"<{part}>(.*?)</{part}>", m[0], re.S) for part in ("thead", "tbody"))
        corners, index = (re.findall(row, part[1]) if part else [] for part in (head, body))
        numbered = index == [str(i) for i in range(len(index))] and index
        if not numbered or not corners or any(corners) or len(corners) != head[1].count("<tr"):
            return m[0]
        return re.sub(r"(<tr[^>]*>\s*)<th[^>]*>[^<]*</th>", r"\1", m[0])

    return re.sub(r'<table[^>]*class="dataframe".*?</table>', table, html, flags=re.S)


def prepare_code_cell(cell, page: str, charts: int) -> int:
    """Quarto cell options as MyST-NB tags; altair charts as interactive charts (`chart_html`), `charts` of them being
    earlier on the page; cells of imports folded, and checks that show nothing (the reader opens them to see the proof).
    Returns the number of charts in the cell."""
    lines = cell.source.splitlines()
    options = [DIRECTIVE.match(line) for line in lines]
    tags = [TAGS[key] for m in options if m and (key := (m[1], m[2].strip().lower())) in TAGS]
    cell.source = "\n".join(line for line, m in zip(lines, options) if not m).strip()
    if only_imports(cell.source) or (CHECK.search(cell.source) and not cell.get("outputs")):
        tags.append(FOLDED_TAG)
    found = 0
    for output in cell.get("outputs", []):
        if "text/html" in output.get("data", {}):
            output["data"]["text/html"] = without_range_index("".join(output["data"]["text/html"]))
        spec = vega_lite_spec(output.get("data", {}).get("text/html", ""))
        if spec:
            spec.setdefault("config", {}).setdefault("mark", {}).setdefault("tooltip", True)  # fields on hover
            hover_targets(spec)
            fallback = f"{CHARTS}/{page}-{charts + found + 1}.svg"
            (SRC / fallback).write_text(vl_convert.vegalite_to_svg(spec))
            output["data"] = {
                "text/html": chart_html(spec, fallback, first=charts + found == 0),
                "text/plain": "<chart>",
            }
            found += 1
            tags.append(CHART_TAG)
    cell.metadata = {"tags": sorted(set(tags))} if tags else {}
    return found


def symbol_headings(cells: list) -> list:
    """Each exported cell's code, preceded by a heading and the summary of every symbol it defines.

    nbdev follows an exported cell with `show_doc` cells (the signature with its docments, then the docstring),
    made for sites that hide the code. Ours shows the code, which carries the same signature, so each
    `show_doc` cell becomes a markdown cell of its heading and docstring, moved above the code."""
    ordered, exported = [], None
    for cell in cells:
        if SHOW_DOC.match(cell.source) and exported is not None:
            markdown = "".join(cell.outputs[0]["data"]["text/markdown"]).removeprefix("---").strip()
            ordered.insert(exported, nbformat.v4.new_markdown_cell(FENCED_CODE.sub("", markdown)))
            exported += 1
            continue
        exported = len(ordered) if cell.cell_type == "code" and EXPORTED.match(cell.source) else None
        ordered.append(cell)
    return ordered


def repository() -> str:
    "The project's repository on GitHub, as `pyproject.toml` names it: https://github.com/OWNER/NAME."
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    return urls["Repository"].rstrip("/")


def notebook_links(notebook: str) -> str:
    "A line of links for a notebook's page: download it from the site, open it in Colab, read it on GitHub."
    repo = repository()
    path = f"blob/main/nbs/{notebook}"
    colab = f"https://colab.research.google.com/github/{repo.removeprefix('https://github.com/')}/{path}"
    links = [
        f'<a href="{NOTEBOOKS}/{notebook}" download>Download the notebook</a>',
        f'<a href="{colab}">Open in Colab</a>',
        f'<a href="{repo}/{path}">View on GitHub</a>',
    ]
    return '<p class="notebook-links">' + " · ".join(links) + "</p>"


def prepare_notebook(path: Path, widget: str) -> tuple[str, str]:
    """Write `path` as MyST-NB input named after nbdev's output file, with the `widget` where it has TRY_IT; return
    that page's name and title."""
    nb = nbformat.read(path, as_version=4)
    meta = front_matter(nb)
    page = Path(meta["output-file"]).stem
    title = [f"# {meta['title']}"] + ([f"{{.lead}}\n{meta['description']}"] if meta.get("description") else [])
    if page != "index":
        title.append(notebook_links(path.name))
    nb.cells = [nbformat.v4.new_markdown_cell("\n\n".join(title))] + symbol_headings(nb.cells)
    charts = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = page_links_to_documents(callouts_to_admonitions(cell.source))
            cell.source = LOCAL_IMAGE.sub(rf"\1{NOTEBOOKS}/images/", cell.source).replace(TRY_IT, widget)
        elif cell.cell_type == "code":
            charts += prepare_code_cell(cell, page, charts)
        if cell.cell_type != "code":
            cell.metadata = {}
    nb.metadata = {"kernelspec": nb.metadata.get("kernelspec", {}), "language_info": {"name": "python"}}
    nbformat.write(nb, SRC / f"{page}.ipynb")
    return page, meta["title"]


def exported_module(notebook: Path) -> str | None:
    "The module a source notebook exports to (its `#| default_exp`)."
    for cell in nbformat.read(notebook, as_version=4).cells:
        if m := re.search(r"^#\| *default_exp +(\S+)", cell.source, re.M):
            return m[1]
    return None


def class_members(module: str, name: str) -> list[str]:
    "The public methods nbdev's index lists for class `name` of `module`, in source order."
    from annotated_transformer._modidx import d

    prefix = f"{PACKAGE}.{module}.{name}."
    return [
        key[len(prefix) :]
        for key in d["syms"][f"{PACKAGE}.{module}"]
        if key.startswith(prefix) and not key[len(prefix) :].startswith("_")
    ]


def api_entry(module: str, name: str) -> str:
    "The autodoc directive for one exported symbol (reStructuredText: autodoc writes reST)."
    obj = getattr(importlib.import_module(f"{PACKAGE}.{module}"), name)
    target = f"{PACKAGE}.{module}.{name}"
    if inspect.isclass(obj):
        members = class_members(module, name)
        options = "   :show-inheritance:\n" + (
            f"   :members: {', '.join(members)}\n   :undoc-members:\n" if members else ""
        )
        return f"```{{eval-rst}}\n.. autoclass:: {target}\n{options}```"
    kind = "autofunction" if inspect.isroutine(obj) else "autodata"
    return f"```{{eval-rst}}\n.. {kind}:: {target}\n```"


def api_page(modules: list[tuple[str, str, str]]) -> str:
    "The API reference: every name in each module's `__all__`, module by module in reading order."
    parts = [
        "# API reference",
        "",
        "Every symbol the `annotated_transformer` package exports, with its signature, the comment "
        "that documents each argument, and a link to its source. Each module is written, explained "
        "and tested in a notebook; the link under its heading leads there.",
        "",
        f"```{{include}} {MOVED_NAMES}\n```",
    ]
    for module, page, title in modules:
        names = importlib.import_module(f"{PACKAGE}.{module}").__all__
        parts += ["", f"## `{PACKAGE}.{module}`", "", f"Built in [{title}]({page}.ipynb).", ""]
        parts += [api_entry(module, name) + "\n" for name in names]
    return "\n".join(parts)


def navigation(pages: list[str]) -> str:
    "The site's table of contents, as a hidden toctree at the end of the home page."
    notebooks = "\n".join(p for p in pages if p != "index")
    return (
        f":::{{toctree}}\n:hidden:\n:caption: Try it\n\n{TRY_PAGE}\n:::\n\n"
        f":::{{toctree}}\n:hidden:\n:caption: Notebooks\n\n{notebooks}\n:::\n\n"
        f":::{{toctree}}\n:hidden:\n:caption: Reference\n\n{API_PAGE}\n:::"
    )


def write_sources(model: Path | None):
    """`_docs_src/`: Sphinx's settings and assets, the "Try it" widget with the translator of `model` (a model
    directory; None: the site's fallback model), the prepared notebooks, the navigation and the API page."""
    shutil.rmtree(SRC, ignore_errors=True)
    shutil.copytree(ROOT / "docs", SRC)
    shutil.copytree(NBS, SRC / NOTEBOOKS, ignore=shutil.ignore_patterns("_*", ".*", "index.ipynb", "runs"))
    (SRC / CHARTS).mkdir()
    # The bundle declares its names at the top level, where they would clash with Sphinx's own (`_`): a function keeps them
    (SRC / VEGA).write_text(f"(() => {{\n{vl_convert.javascript_bundle()}\n}})();\n")
    translator, about = site_model.site_translator(model)
    widget, sizes = site_model.widget(SRC / TRY, translator, about)
    (SRC / f"{TRY_PAGE}.md").write_text(site_model.page(widget, sizes, translator, about, fallback=model is None))
    pages, modules = [], []
    for notebook in sorted(NBS.glob("[!_.]*.ipynb")):
        page, title = prepare_notebook(PROC / notebook.name, widget)
        pages.append(page)
        if (module := exported_module(notebook)) not in (
            None,
            "__init__",
        ):  # the package's page documents its top level
            modules.append((module, page, title))
    index = nbformat.read(SRC / "index.ipynb", as_version=4)
    index.cells.append(nbformat.v4.new_markdown_cell(navigation(pages)))
    nbformat.write(index, SRC / "index.ipynb")
    (SRC / f"{API_PAGE}.md").write_text(api_page(modules))


def one_build_at_a_time() -> FileLock:
    "Builds share `_proc/` and `_docs_src/`: a second one waits for the first (released when a build ends, however it ends)."
    return FileLock(ROOT / "_docs_src.lock")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the website goes (default: _docs/)")
    parser.add_argument(
        "--model",
        type=Path,
        help='the model directory the "Try it" widget runs (default: a small model, trained once and cached)',
    )
    args = parser.parse_args()
    if args.model:
        try:
            read_description(args.model)
        except (OSError, ValueError) as e:
            sys.exit(
                f"--model {args.model}: {e} Give the one `annotated-transformer export RUN --out DIR` writes (--format native)."
            )
    with one_build_at_a_time():
        process_notebooks()
        write_sources(args.model)
        html = SRC / "_build" / "html"  # MyST-NB writes outputs beside the output folder: keep both inside _docs_src/
        sphinx = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q", str(SRC), str(html)]
        if subprocess.call(sphinx):
            sys.exit("The website did not build: Sphinx's warnings and errors are above.")
        shutil.rmtree(args.out, ignore_errors=True)
        shutil.copytree(html, args.out)
    print(f"The website is in {args.out}: open {args.out / 'index.html'}")


if __name__ == "__main__":
    main()
