"""Sphinx settings for the website. `tools/build_docs.py` copies this folder into a temporary one, beside the
notebooks it prepares, and runs Sphinx there (`make docs`)."""

import inspect
import re
import sys

from fastcore.docments import docments

import annotated_transformer

project = "The Annotated Transformer"
author = "The Annotated Transformer team"
copyright = "2026, " + author
release = annotated_transformer.__version__

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.viewcode", "sphinx-mathjax-offline"]
# _static holds the notebooks for download: files, not pages; the API page includes moved_names.md
exclude_patterns = ["_build", "_static", "moved_names.md"]
suppress_warnings = ["mystnb.unknown_mime_type"]

# The notebooks keep the outputs of their real runs; the website shows those and executes nothing.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "attrs_block"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = "The Annotated Transformer"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_show_sourcelink = False  # each notebook page links to its notebook instead (download, Colab, GitHub)
pygments_style = "a11y-light"  # accessible-pygments: colours with enough contrast to read (WCAG AA)
pygments_dark_style = "a11y-dark"
html_js_files = ["a11y.js"]

add_module_names = False
html_domain_indices = False  # no module index: the API page lists the modules in reading order
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_inherit_docstrings = False  # not nn.Module's generic text for every forward


CODE_SPAN = re.compile(r"`([^`]+)`")


def markdown_to_rest(text: str) -> str:
    "The package's docstrings are Markdown, as in the notebooks; autodoc parses reST. Code spans stay code, the rest is literal."
    parts = CODE_SPAN.split(text)  # prose at even positions, code at odd ones
    return "".join(
        f"\\ ``{part}``\\ " if i % 2 else re.sub(r"([\\*|_`])", r"\\\1", part) for i, part in enumerate(parts)
    )


def constant_comment(module: str, name: str) -> str | None:
    "The comment beside a module-level constant's assignment: its docment."
    source = inspect.getsource(sys.modules[module])
    m = re.search(rf"^{name}\b[^=\n]*=[^\n]*?# *(.+)$", source, re.M)
    return m[1] if m else None


def document(app, what, name, obj, options, lines):
    "Docstrings as Markdown; each parameter's docment as a field; a constant's comment as its description."
    if what == "module":
        lines[:] = []  # the notebook's description: the heading above links to the notebook instead
    if what == "data":
        comment = constant_comment(*name.rsplit(".", 1))
        lines[:] = [comment] if comment else []
    lines[:] = [markdown_to_rest(line) for line in lines]
    if what not in ("function", "method", "class"):
        return
    try:
        params = docments(obj, full=True)
    except (TypeError, ValueError, OSError):
        return  # a builtin or an object without Python source
    for param, info in params.items():
        if not info["docment"] or param == "self":
            continue
        field = ":returns:" if param == "return" else f":param {param}:"
        lines.append(f"{field} {markdown_to_rest(info['docment'])}")


def methods_only(app, what, name, obj, skip, options) -> bool:
    "A class's methods and properties, not its other attributes: its signature lists its fields, with their comments."
    return skip or (what == "class" and not (inspect.isroutine(obj) or isinstance(obj, property)))


def setup(app):
    app.connect("autodoc-process-docstring", document)
    app.connect("autodoc-skip-member", methods_only)
