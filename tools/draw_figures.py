"""Write the paper's Figures 1 and 2, as `annotated_transformer.visualization` draws them, to `nbs/images/`.

The notebooks of the paper's half (00, 01) and the README show these files, so that no page imports the charts
module, which notebook 13 builds later in the book. `make sync` runs this; notebook 13 checks that the files are
current.
"""

from pathlib import Path

from annotated_transformer.visualization import figure_1, figure_2

IMAGES = Path(__file__).resolve().parent.parent / "nbs" / "images"

if __name__ == "__main__":
    IMAGES.mkdir(exist_ok=True)
    for name, draw in (("figure_1", figure_1), ("figure_2", figure_2)):
        (IMAGES / f"{name}.svg").write_text(draw() + "\n")
