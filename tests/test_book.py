"""Consistency of the book's structure: toc, chapters, errata page and notebooks."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
ERRATUM_LABEL = re.compile(r"^\((erratum-[\w-]+)\)=\s*$", flags=re.M)


def markdown_of(path: Path) -> str:
    cells = nbformat.read(path, as_version=4).cells
    return "\n".join(c.source for c in cells if c.cell_type == "markdown")


def test_toc_lists_exactly_the_chapters():
    toc = (ROOT / "_toc.yml").read_text()
    listed = set(re.findall(r"file:\s*(chapters/\S+)", toc))
    on_disk = {f"chapters/{p.stem}" for p in CHAPTERS}
    assert listed == on_disk


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_erratum_box_is_labelled_and_listed(path: Path):
    md = markdown_of(path)
    # An Erratum box is an admonition, or a deep-dive block (_ext/deep_dive.py) when its
    # evidence cells go inside it; either way it opens closed (the class dropdown).
    boxes = re.findall(r"\{(admonition|deep-dive-start)\} Erratum.*\n(.*)", md)
    labels = ERRATUM_LABEL.findall(md)
    assert len(boxes) == len(labels), "each Erratum box needs a (erratum-...)= label right before it"
    open_boxes = [line for kind, line in boxes if kind == "admonition" and "dropdown" not in line.split()]
    assert not open_boxes, "every Erratum admonition opens closed (:class: warning dropdown)"
    errata_page = (ROOT / "errata.md").read_text()
    missing = [label for label in labels if f"<{label}>`" not in errata_page]
    assert not missing, f"errata.md does not link {missing}"


def test_errata_page_links_only_existing_labels():
    labels = set()
    for path in CHAPTERS:
        labels.update(ERRATUM_LABEL.findall(markdown_of(path)))
    linked = set(re.findall(r"\{ref\}`[^`<]+<(erratum-[\w-]+)>`", (ROOT / "errata.md").read_text()))
    assert linked == labels


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_notebook_stored_executed_and_clean(path: Path):
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.kernelspec.name == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "a chapter without code cannot certify anything"
    assert all(c.execution_count is not None for c in code), "store the notebook executed"
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), "execute top to bottom in one fresh kernel"
    for c in code:
        for out in c.get("outputs", []):
            assert out["output_type"] != "error"
            assert not (out["output_type"] == "stream" and out["name"] == "stderr"), "no stderr output"
            text = str(out.get("data", {}).get("text/plain", "")) + str(out.get("text", ""))
            assert not re.search(r" at 0x[0-9a-f]{6,}", text), "memory address in an output"


def test_reading_map_matches_the_chapters():
    """The preface's reading map draws the arrows the chapters' "You need" paragraphs name."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reading_map", ROOT / "scripts" / "reading_map.py")
    reading_map = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reading_map)
    drawn = reading_map.stored_edges()
    assert drawn, "the map has no arrows"
    expected = reading_map.reduced(reading_map.edges())
    assert drawn == expected, "run scripts/reading_map.py: the chapters' prerequisites changed"
    assert "_static/reading_map.png" in (ROOT / "intro.md").read_text()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_title_has_no_quote_marks(path: Path):
    """sphinx-proof labels a theorem in LaTeX by finding the section whose name is the page
    title; Sphinx turns a ' in the title into a typographic quote, the two no longer match,
    and every theorem of the chapter prints as "??" in the PDF's proof index."""
    title = re.search(r"^# (.+)$", markdown_of(path), flags=re.M).group(1)
    assert not re.search("['\"\u2018\u2019\u201c\u201d]", title), title
