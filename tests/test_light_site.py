"""_ext/light_site.py and the theme overrides in _templates/: what the built site leaves out.

The built site itself is measured by tests/test_site_weight.py (after the PDF is copied in)
and tests/browser (what a chapter loads).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pydata_sphinx_theme

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("light_site", ROOT / "_ext" / "light_site.py")
light_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(light_site)
THEME = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"


def _touch(path: Path, text: str = "x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_lighten_keeps_what_pages_load_and_deletes_the_rest(tmp_path):
    site = tmp_path / "html"
    kept = [
        "_static/mathjax/tex-chtml.js",
        "_static/mathjax/input/tex/extensions/boldsymbol.js",
        "_static/mathjax/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff",
        "_static/vendor/fontawesome/webfonts/fa-solid-900.woff2",
        "_static/styles/pydata-sphinx-theme.css",
        "chapters/09_rope.html",
    ]
    gone = [
        "_static/mathjax/tex-svg.js",
        "_static/mathjax/tex-chtml-full.js",
        "_static/mathjax/sre/mathmaps/en.json",
        "_static/mathjax/output/svg/fonts/tex.js",
        "_static/mathjax/input/tex-full.js",
        "_static/scripts/fontawesome.js",
        "_static/scripts/bootstrap.js.map",
        "_static/styles/pydata-sphinx-theme.css.map",
        "_static/vendor/fontawesome/webfonts/fa-solid-900.ttf",
        "_static/locales/fr/LC_MESSAGES/sphinx.mo",
    ]
    for name in kept + gone:
        _touch(site / name)
    notebook = {
        "cells": [{"cell_type": "code", "source": "1+1", "outputs": [{"data": "2"}], "execution_count": 3}]
    }
    _touch(site / "_sources" / "chapters" / "c.ipynb", json.dumps(notebook))
    light_site.lighten(site)
    assert all((site / name).is_file() for name in kept)
    assert not any((site / name).exists() for name in gone)
    assert not (site / "_static" / "mathjax" / "sre").exists(), "emptied folders go too"
    cell = json.loads((site / "_sources" / "chapters" / "c.ipynb").read_text())["cells"][0]
    assert cell["outputs"] == [] and cell["execution_count"] is None and cell["source"] == "1+1"


def test_the_macros_copy_is_the_themes_without_fontawesome_js():
    ours = (ROOT / "_templates" / "static" / "webpack-macros.html").read_text()
    theirs = (THEME / "static" / "webpack-macros.html").read_text()
    assert "fontawesome.js" in theirs and "fontawesome.js" not in ours.split("-#}", 1)[1]
    # after each file's header comment, the same lines but the script and its comment
    expected = "".join(
        line
        for line in theirs.split("-->", 1)[1].splitlines(keepends=True)
        if "fontawesome.js" not in line and "custom icons" not in line
    )
    assert ours.split("-#}", 1)[1] == expected


def test_the_layout_override_drops_only_the_search_scripts():
    ours = (ROOT / "_templates" / "layout.html").read_text()
    theirs = (THEME / "layout.html").read_text()
    block = theirs.split("{%- block extrahead %}", 1)[1].split("{%- endblock extrahead %}", 1)[0]
    kept = ours.split("{%- block extrahead %}", 1)[1].split("{%- endblock extrahead %}", 1)[0]
    assert "searchindex.js" in block and "searchindex.js" not in kept
    assert all(line in block.splitlines() for line in kept.splitlines() if line.strip())
    # the search box stays the classic search page, which loads the index itself
    assert "searchindex.js" in (THEME / "search.html").read_text()
