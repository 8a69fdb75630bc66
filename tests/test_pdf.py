"""The PDF edition (``make pdf``), read back with poppler's pdftotext, pdffonts and pdfimages.

Where XeLaTeX or poppler-utils are missing, every test here is skipped, and says so; where
XeLaTeX is installed, ``make test`` builds the PDF first and a missing PDF is a failure.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
import yaml
from test_student_edition import Secrets  # tests/ is on the path (no __init__.py)

ROOT = Path(__file__).resolve().parent.parent
PDF = ROOT / "_build" / "latex" / "book.pdf"
HAVE_TEX = shutil.which("xelatex") is not None and shutil.which("latexmk") is not None
HAVE_POPPLER = all(shutil.which(tool) for tool in ("pdftotext", "pdffonts", "pdfimages", "pdfinfo"))

pytestmark = pytest.mark.skipif(
    not (HAVE_TEX and HAVE_POPPLER),
    reason="PDF test SKIPPED: XeLaTeX/latexmk (Debian's texlive-xetex, latexmk) or poppler-utils "
    "are not installed; .ci/run installs them",
)


def _run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def text() -> str:
    assert PDF.is_file(), "no _build/latex/book.pdf: run `make pdf`"
    return _run("pdftotext", "-enc", "UTF-8", str(PDF), "-")


def _chapter_titles() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [ch["file"] for part in toc["parts"] for ch in part["chapters"]]
    titles = []
    for name in files:
        path = ROOT / f"{name}.ipynb"
        if path.is_file():
            nb = nbformat.read(path, as_version=4)
            source = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        else:
            source = (ROOT / f"{name}.md").read_text()
        titles.append(re.search(r"^# (.+)$", source, flags=re.M).group(1).strip())
    return titles


def _squash(s: str) -> str:
    """Whitespace runs made one space, typographic quotes made straight (LaTeX curls them)."""
    s = s.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"\s+", " ", s)


def test_every_chapter_and_back_matter_title_is_in_the_pdf(text):
    titles = _chapter_titles()
    assert len(titles) >= 17
    flat = _squash(text)
    missing = [t for t in titles if _squash(t) not in flat]
    assert not missing, missing


def test_no_unresolved_reference_and_no_raw_tex(text):
    assert "??" not in text
    for raw in ("\\(", "\\)", "$$", "\\begin{", "\\frac", "{glue:"):
        assert raw not in text, raw


def printed_answers(secret: set[str], text: str) -> list[str]:
    """The solution lines found in the text, whitespace removed on both sides (pdftotext may
    break or join a line)."""
    flat = re.sub(r"\s+", "", text)
    return sorted(line for line in secret if re.sub(r"\s+", "", line) in flat)


def test_no_line_of_a_code_exercise_answer_is_printed(text):
    # The student edition's leak check's list of secret code lines: every solution region,
    # solution fence and solution-check cell, less what the book shows anyway (taught
    # listings, the package's source).
    secret = Secrets().code
    assert len(secret) >= 200
    found = printed_answers(secret, text)
    assert not found, f"{len(found)} answer lines in the PDF, e.g. {found[:3]}"
    # what the page shows instead: the student's stub, once per code exercise at least
    assert text.count("not yet implemented") >= 25


def test_the_answer_check_can_fail(text):
    line = max(Secrets().code, key=len)
    leaked = text + "\n" + line[:40] + "\n" + line[40:]  # broken over two lines
    assert printed_answers({line}, leaked) == [line]
    assert printed_answers({line}, text) == []


def test_a_book_structure(text):
    head = text[: text.index("Permutation equivariance")]
    assert "contents" in head.lower() and "the problem" not in head.lower().split("contents")[0]
    flat = _squash(text)
    for caption in re.findall(r'caption: "([^"]+)"', (ROOT / "_toc.yml").read_text()):
        assert flat.count(_squash(caption)) >= 2, f"part {caption!r}: contents and heading"
    assert "Proof Index" not in text and "All entries" not in text
    assert len(re.findall(r"^Preface\s*$", text, flags=re.M)) >= 1


def test_figures_are_numbered_as_on_the_site(text):
    # Fig. 3.1 in chapter 3, as the site numbers it; only the few figures of the unnumbered
    # preface and appendix have plain numbers (LaTeX alone would count through the book)
    assert len(set(re.findall(r"Fig\. (\d+\.\d+)", text))) >= 40
    assert "Fig. 3.1" in text and "Fig. 16.1" in text
    plain = {int(n) for n in re.findall(r"Fig\. (\d+)(?![.\d])", text)}
    assert plain and max(plain) <= 10, sorted(plain)


def overfull_boxes(log: str, limit_pt: float = 20.0) -> list[str]:
    """LaTeX's overfull-box warnings over ``limit_pt`` in a log."""
    found = re.findall(r"^(Overfull \\[hv]box \((\d+(?:\.\d+)?)pt too (?:wide|high)\).*)$", log, flags=re.M)
    return [line for line, size in found if float(size) > limit_pt]


def test_no_overfull_box_over_20pt():
    log = (PDF.parent / "book.log").read_text(errors="replace")
    assert overfull_boxes(
        "Overfull \\hbox (21.3pt too wide) in paragraph\nOverfull \\vbox (3.1pt too high)\n"
    ) == ["Overfull \\hbox (21.3pt too wide) in paragraph"]
    assert not overfull_boxes(log), overfull_boxes(log)


def test_theorems_and_exercises_are_numbered_and_solutions_left_out(text):
    assert re.search(r"Theorem \d+", text)
    assert len(re.findall(r"Exercise [\d.]+ \((?:Easy|Medium|Hard): ", text)) >= 40
    assert not re.search(r"Solution to Exercise", text)


def test_every_font_is_embedded():
    rows = _run("pdffonts", str(PDF)).splitlines()[2:]
    assert rows
    not_embedded = [row for row in rows if row.split()[-5] != "yes"]
    assert not not_embedded, not_embedded


def test_figures_are_embedded_and_the_page_count_is_sane():
    images = _run("pdfimages", "-list", str(PDF)).splitlines()[2:]
    assert len(images) >= 40
    pages = int(re.search(r"^Pages:\s+(\d+)", _run("pdfinfo", str(PDF)), flags=re.M).group(1))
    assert 150 <= pages <= 1000, pages


def test_the_site_offers_the_pdf_for_download():
    """The preface links book.pdf, and `make pdf` puts the very file beside the built site."""
    intro = (ROOT / "intro.md").read_text()
    assert re.search(r'<a href="book\.pdf"[^>]*>[^<]*PDF', intro), "the preface does not link book.pdf"
    site = ROOT / "_build" / "html"
    if not (site / "intro.html").is_file():
        pytest.skip("no built site in _build/html: the copy beside it is checked after a site build")
    page = (site / "intro.html").read_text()
    hrefs = re.findall(r'<a href="([^"]+\.pdf)"', page)
    assert hrefs == ["book.pdf"], hrefs
    offered = site / hrefs[0]
    assert offered.is_file(), "the built site links book.pdf but make pdf did not copy it there"
    assert offered.read_bytes() == PDF.read_bytes()
