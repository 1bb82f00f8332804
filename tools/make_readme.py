"""Write README.md from nbs/index.ipynb, without Quarto (which nbdev's own `nbdev-readme` renders through).

The notebook as GitHub-flavoured markdown: its title and description, markdown cells as they are, code
cells as fenced Python with their plain-text outputs, and links to website pages pointed at the notebooks
they come from.
"""

import re
import sys
from pathlib import Path

import nbformat
import tomllib

ROOT = Path(__file__).resolve().parent.parent
HEADER = "<!-- Generated from nbs/index.ipynb by `make readme`: edit the notebook, not this file. -->\n\n"


TITLE = re.compile(r"^# ([^\n]+?)[ \t]*\n+> ")  # the first cell: `# Title`, then `> description`
LOCAL_IMAGE = re.compile(r'(\]\(|src=")(images/)')  # a picture the notebook shows from nbs/images/


def images_from_root(text: str) -> str:
    "Point pictures the notebook shows from `nbs/` (`images/figure_1.svg`) at their path from the README's folder."
    return LOCAL_IMAGE.sub(r"\1nbs/\2", text)


def page_links_to_notebooks(text: str) -> str:
    """Point links such as `(attention.html)` at the notebook that page is made from, `(nbs/00_attention.ipynb)`,
    and links to a section (`(attention.html#masks)`) or to the website's other pages (`(api.html)`) at the
    published website, which has the anchors (a notebook on GitHub may not)."""
    pages = {re.sub(r"^\d+[a-z]?_", "", nb.stem): nb for nb in (ROOT / "nbs").glob("*.ipynb")}
    website = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Documentation"]

    def relink(m):
        page, section = m[1], m[2] or ""
        if page in pages and not section:
            return f"(nbs/{pages[page].name})"
        return f"({website.rstrip('/')}/{page}.html{section})"

    return re.sub(r"\(([\w-]+)\.html(#[\w.-]+)?\)", relink, text)


def cell_markdown(cell) -> str:
    "One cell as markdown, code fenced with its text outputs."
    if cell.cell_type == "markdown":
        return cell.source
    outputs = [o.get("text") or o.get("data", {}).get("text/plain", "") for o in cell.outputs]
    fenced_outputs = "".join(f"\n\n```text\n{text.rstrip()}\n```" for text in outputs if text)
    return f"```python\n{cell.source}\n```{fenced_outputs}"


def main(out: Path = ROOT / "README.md"):
    nb = nbformat.read(ROOT / "nbs" / "index.ipynb", as_version=4)
    # the description under the title, unquoted
    nb.cells[0].source = TITLE.sub(r"# \1\n\n", nb.cells[0].source)
    blocks = [cell_markdown(cell) for cell in nb.cells]
    out.write_text(
        HEADER + images_from_root(page_links_to_notebooks("\n\n".join(b for b in blocks if b))) + "\n"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "README.md")
