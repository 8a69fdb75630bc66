"""The built site (`_build/html`, with the PDF `make pdf` copies into it): its weight and its
link previews. Run by `make test-pdf`, after the PDF is in place; skipped without a built site.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
LIMIT = 25_000_000  # bytes

pytestmark = pytest.mark.skipif(not (SITE / "intro.html").is_file(), reason="no built site in _build/html")


def site_files() -> list[Path]:
    return [p for p in SITE.rglob("*") if p.is_file()]


def test_the_site_weighs_at_most_25_mb_and_has_no_source_maps():
    files = site_files()
    total = sum(p.stat().st_size for p in files)
    assert total <= LIMIT, f"{total / 1e6:.1f} MB"
    assert not [p for p in files if p.suffix == ".map"]


def test_only_the_mathjax_that_pages_load_is_shipped():
    mathjax = SITE / "_static" / "mathjax"
    names = {p.relative_to(mathjax).as_posix() for p in mathjax.rglob("*") if p.is_file()}
    assert "tex-chtml.js" in names
    assert all(
        n == "tex-chtml.js" or n.startswith(("input/tex/extensions/", "output/chtml/fonts/woff-v2/"))
        for n in names
    ), sorted(names)[:5]
    pages = [p.read_text() for p in SITE.rglob("*.html")]
    loads = {m for page in pages for m in re.findall(r'src="[^"]*_static/mathjax/([^"?]+)', page)}
    assert loads == {"tex-chtml.js"}, loads


def test_every_page_has_opengraph_tags_and_a_description():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    owner, name = config["repository"]["url"].removeprefix("https://github.com/").split("/")
    site_url = config["sphinx"]["config"]["ogp_site_url"]
    assert site_url == f"https://{owner}.github.io/{name}/", "the Pages address of repository.url"
    # Sphinx's generated pages (the index, the search page) have no document to describe, and
    # index.html only redirects to intro.html.
    generated = {"genindex.html", "search.html", "index.html"}
    assert not (SITE / "prf-prf.html").exists() and not (SITE / "py-modindex.html").exists(), (
        "no domain index"
    )
    for page in SITE.rglob("*.html"):
        rel = page.relative_to(SITE).as_posix()
        if rel in generated or rel.startswith(("_static/", "_sources/")):
            continue
        text = page.read_text()
        for prop in ("og:title", "og:type", "og:url", "og:site_name"):
            assert f'<meta property="{prop}"' in text, f"{rel}: {prop}"
        assert f'<meta property="og:url" content="{site_url}{rel}"' in text, rel
        description = re.search(r'<meta name="description" content="([^"]*)"', text)
        assert description and len(description.group(1)) > 40, rel


def test_the_front_page_has_a_cite_box_from_citation_cff():
    citation = yaml.load((ROOT / "CITATION.cff").read_text(), Loader=yaml.BaseLoader)
    page = (SITE / "intro.html").read_text()
    start = page.index('class="cite-this-book admonition"')
    box = html.unescape(re.sub(r"<[^>]+>", "", page[start : page.index("</section>", start)]))
    assert f"version = {{{citation['version']}}}" in box
    assert f"({citation['date-released'][:4]}). {citation['title']} (version {citation['version']})" in box
    assert citation["repository-code"] in box
