"""One plotting style for every figure of the book.

:func:`use_book_style` sets Matplotlib's defaults once, in each chapter's set-up cell:
lines take their colours from the Okabe–Ito palette (distinguishable by readers with any
of the common colour-vision deficiencies) and, in the same order, their dash patterns, so
two curves also differ in greyscale print; images and heat maps use ``viridis``, which is
perceptually uniform and reads in greyscale. Matplotlib is imported only when the
function is called (it is not a dependency of the package).
"""

from __future__ import annotations

# Okabe & Ito (2008), "Color Universal Design", ordered so that the first colours are the
# most distinct on white (yellow, the weakest against white, comes last).
OKABE_ITO: tuple[str, ...] = (
    "#000000",  # black
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#009E73",  # bluish green
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#F0E442",  # yellow
)
# One dash pattern per colour, in the same order: the k-th curve differs from the others
# by colour and by line style.
LINE_STYLES: tuple[object, ...] = (
    "-",
    "--",
    ":",
    "-.",
    (0, (5, 1, 1, 1, 1, 1)),
    (0, (1, 3)),
    (0, (8, 2, 2, 2)),
    (0, (3, 1)),
)
COLORMAP = "viridis"


def use_book_style() -> None:
    """Set Matplotlib's defaults to the book's style (palette, line styles, colormap, sizes)."""
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams.update(
        {
            "axes.prop_cycle": cycler(color=list(OKABE_ITO)) + cycler(linestyle=list(LINE_STYLES)),
            "image.cmap": COLORMAP,
            "figure.figsize": (6.4, 4.0),
            "figure.dpi": 100,
            "savefig.dpi": 100,
            "font.size": 10,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 9,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "lines.linewidth": 1.6,
        }
    )
