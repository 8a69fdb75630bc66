"""Draw the preface's reading map: the parts, their chapters, and which chapter needs which.

The arrows are not typed by hand: they are read from each chapter's Overview, from the
paragraph that starts "You need" (every chapter named or linked there, "chapter N",
"chapters N and M" or a {ref} to the label ``ch-NN``, is an arrow N -> this chapter); an
arrow that a longer path already implies is left out.
The figure goes to ``_static/reading_map.png`` with the list of arrows in its PNG metadata
(key ``edges``), so that a test can check that the picture in the preface still matches
what the chapters say (``tests/test_book.py``).

Usage: .venv/bin/python scripts/reading_map.py   (after a chapter's "You need" changes)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_static" / "reading_map.png"
NEED = re.compile(r"^\W*You need\W*(.*?)(?:\n\s*\n|\Z)", flags=re.S | re.M | re.I)
CHAPTER_LIST = re.compile(r"[Cc]hapters?\s+(\d+(?:\s*(?:,|and|or)\s*\d+)*)")


def parts() -> list[tuple[str, list[str]]]:
    """(caption, [chapter stems]) for each part of _toc.yml that holds chapters/ notebooks."""
    out: list[tuple[str, list[str]]] = []
    for line in (ROOT / "_toc.yml").read_text().splitlines():
        caption = re.match(r'\s*-\s*caption:\s*"?([^"]+)"?\s*$', line)
        chapter = re.match(r"\s*-\s*file:\s*chapters/(\S+)", line)
        if caption:
            out.append((caption.group(1), []))
        elif chapter and out:
            out[-1][1].append(chapter.group(1))
    return [(c, stems) for c, stems in out if stems]


def chapter_number(stem: str) -> str:
    return stem.split("_", 1)[0].lstrip("0")


def needs(stem: str) -> set[str]:
    """The chapters named in the "You need" paragraph of the chapter's Overview."""
    nb = nbformat.read(ROOT / "chapters" / f"{stem}.ipynb", as_version=4)
    overview = next(c.source for c in nb.cells if c.cell_type == "markdown" and "You need" in c.source)
    paragraph = NEED.search(overview).group(1)
    named = {n for group in CHAPTER_LIST.findall(paragraph) for n in re.findall(r"\d+", group)}
    linked = {n.lstrip("0") for n in re.findall(r"<ch-(\w+)>`", paragraph)}  # {ref}`... <ch-NN>`
    return (named | linked) - {chapter_number(stem)}


def edges() -> list[tuple[str, str]]:
    """(needed, needing) chapter numbers, sorted."""
    known = {chapter_number(s) for _, stems in parts() for s in stems}
    found = {(n, chapter_number(s)) for _, stems in parts() for s in stems for n in needs(s)}
    unknown = sorted(n for n, _ in found if n not in known)
    if unknown:
        raise ValueError(f"a 'You need' paragraph names chapters that do not exist: {unknown}")
    return sorted(found, key=lambda e: (int(e[1]) if e[1].isdigit() else 99, e[0]))


def reduced(graph: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The arrows not implied by a longer path (the transitive reduction): what the map draws.

    If chapter c needs b and b needs a, an arrow a -> c says nothing the path a -> b -> c
    does not already say; leaving it out keeps the map readable.
    """
    succ: dict[str, set[str]] = {}
    for a, b in graph:
        succ.setdefault(a, set()).add(b)

    def reachable(start: str, skip: tuple[str, str]) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            for nxt in succ.get(node, ()):
                if (node, nxt) != skip and nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    return [(a, b) for a, b in graph if b not in reachable(a, skip=(a, b))]


def title(stem: str) -> str:
    nb = nbformat.read(ROOT / "chapters" / f"{stem}.ipynb", as_version=4)
    for cell in nb.cells:
        heading = re.search(r"^# (.+)$", cell.source, flags=re.M) if cell.cell_type == "markdown" else None
        if heading:
            return heading.group(1).strip()
    return stem


def draw(path: Path = OUT) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    import posenc.plotting

    posenc.plotting.use_book_style()
    layout = parts()
    rows = max(len(stems) for _, stems in layout)
    width, height = 0.84, 0.52  # of a chapter's box; columns 1 apart, rows 1 apart
    fig, ax = plt.subplots(figsize=(2.5 * len(layout), 0.62 * rows + 1.0))
    where: dict[str, tuple[float, float]] = {}
    for col, (caption, stems) in enumerate(layout):
        ax.text(col, 0.5, caption, ha="center", va="bottom", fontsize=9, weight="bold")
        for row, stem in enumerate(stems):
            x, y = col, -row
            where[chapter_number(stem)] = (x, y)
            box = FancyBboxPatch(
                (x - width / 2, y - height / 2),
                width,
                height,
                fc="#f2f2f2",
                ec="#555555",
                lw=0.8,
                boxstyle="round,pad=0,rounding_size=0.08",
                zorder=2,
            )
            ax.add_patch(box)
            label = title(stem)
            label = label if len(label) <= 30 else label[:28] + "…"
            ax.text(x, y, label, ha="center", va="center", fontsize=7.5, zorder=3)
    graph = reduced(edges())
    for a, b in graph:
        (x0, y0), (x1, y1) = where[a], where[b]
        if x0 != x1:  # to the next part: right edge to left edge
            start, end, bend = (x0 + width / 2, y0), (x1 - width / 2, y1), 0.12 * (1 if y1 < y0 else -1)
        elif abs(y1 - y0) == 1:  # the next chapter of the part: straight down
            start, end, bend = (x0, y0 - height / 2), (x1, y1 + height / 2), 0.0
        else:  # further down the same part: round the left of the column
            start, end, bend = (x0 - width / 2, y0), (x1 - width / 2, y1), 0.35
        ax.add_patch(
            FancyArrowPatch(
                start,
                end,
                arrowstyle="-|>",
                mutation_scale=8,
                lw=0.7,
                alpha=0.8,
                connectionstyle=f"arc3,rad={bend}",
                color="#0072B2",
                zorder=1,
            )
        )
    ax.set_xlim(-0.75, len(layout) - 0.3)
    ax.set_ylim(-rows + 0.4, 1.0)
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=130, metadata={"edges": json.dumps(graph), "Software": None})
    plt.close(fig)
    return graph


def stored_edges(path: Path = OUT) -> list[tuple[str, str]]:
    """The arrows recorded in the PNG's metadata when it was drawn."""
    from PIL import Image

    with Image.open(path) as image:
        return [tuple(e) for e in json.loads(image.text["edges"])]


if __name__ == "__main__":
    graph = draw()
    print(f"{OUT.relative_to(ROOT)}: {len(graph)} arrows")
