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
    """The chapter's title without a typed number ("3. Sinusoidal construction" -> "Sinusoidal ...")."""
    nb = nbformat.read(ROOT / "chapters" / f"{stem}.ipynb", as_version=4)
    for cell in nb.cells:
        heading = re.search(r"^# (.+)$", cell.source, flags=re.M) if cell.cell_type == "markdown" else None
        if heading:
            return re.sub(r"^\w{1,2}\.\s+", "", heading.group(1).strip())
    return stem


def wrapped(text: str, width: int = 24) -> str:
    """``text`` broken into lines of at most ``width`` characters, at spaces."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def draw(path: Path = OUT, per_row: int = 3) -> list[tuple[str, str]]:
    """Draw the map: one band per part, top to bottom; in it the part's chapters as boxes,
    ``per_row`` to a row (narrow enough to read on a phone), each box saying which earlier
    chapters it needs (the arrows of ``reduced(edges())``, written as chapter numbers)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    import posenc.plotting

    posenc.plotting.use_book_style()
    layout = parts()
    graph = reduced(edges())
    needed: dict[str, list[str]] = {}
    for a, b in graph:
        needed.setdefault(b, []).append(a)
    width, height, gap = 1.95, 0.66, 0.1  # a box, in inches
    y = 0.0
    boxes, captions = [], []
    for caption, stems in layout:
        y -= 0.36
        captions.append((y, caption))
        y -= 0.12
        for start in range(0, len(stems), per_row):
            for col, stem in enumerate(stems[start : start + per_row]):
                boxes.append((col * (width + gap), y - height, stem))
            y -= height + gap
    total_w, total_h = per_row * (width + gap) - gap, -y + 0.05
    fig = plt.figure(figsize=(total_w, total_h))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.02, total_w + 0.02)
    ax.set_ylim(-total_h, 0)
    ax.axis("off")
    for yc, caption in captions:
        ax.text(0, yc + 0.04, caption, ha="left", va="bottom", fontsize=11, weight="bold")
    for x0, y0, stem in boxes:
        number = chapter_number(stem)
        ax.add_patch(
            FancyBboxPatch(
                (x0, y0),
                width,
                height,
                fc="#f2f2f2",
                ec="#555555",
                lw=0.8,
                boxstyle="round,pad=0,rounding_size=0.06",
            )
        )
        ax.text(
            x0 + 0.08,
            y0 + height - 0.07,
            wrapped(f"{number}. " + title(stem), 23),
            ha="left",
            va="top",
            fontsize=9.5,
            linespacing=1.1,
        )
        needs_text = (
            "needs " + ", ".join(sorted(needed.get(number, []), key=int))
            if number in needed
            else "start here"
        )
        ax.text(x0 + 0.08, y0 + 0.06, needs_text, ha="left", va="bottom", fontsize=9, color="#0072B2")
    fig.savefig(path, dpi=150, metadata={"edges": json.dumps(graph), "Software": None})
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
