"""A lighter site: after an HTML build, delete the files no page loads.

sphinx-mathjax-offline copies all of MathJax 3 (about 24 MB, fourteen bundles) into
``_static/mathjax``; every page loads only ``tex-chtml.js``, which fetches its CHTML fonts
(``output/chtml/fonts/woff-v2``) and, for a macro outside its core packages, an extension
from ``input/tex/extensions``. Everything else there goes. So do the themes' source maps
(``*.map``, for debugging their minified files), ``scripts/fontawesome.js`` (1.5 MB; the
theme's stylesheet draws the same icons from Font Awesome's web fonts, and
``_templates/static/webpack-macros.html`` no longer loads the script), the web fonts' TrueType
copies (every browser the theme supports takes the WOFF2 file the stylesheet lists first),
and ``_static/locales`` (the theme's translations, read when the pages are written, never by
a browser).

The chapter notebooks offered for download (``_sources/chapters/*.ipynb``) lose their
outputs: a reader who downloads a chapter runs it, and the outputs are on the page
(8.7 MB of notebooks become about 1.5 MB).

Only HTML builds are touched; ``tests/browser`` checks that every page still renders its
math and loads no missing file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sphinx.application import Sphinx

# Paths under _static/mathjax that tex-chtml.js may load.
MATHJAX_KEEP = ("tex-chtml.js", "input/tex/extensions", "output/chtml/fonts/woff-v2")


def _keep(relative: Path) -> bool:
    text = relative.as_posix()
    return any(text == kept or text.startswith(kept + "/") for kept in MATHJAX_KEEP)


def prune_mathjax(static: Path) -> None:
    """Delete every file of ``static/mathjax`` that tex-chtml.js does not load, then empty folders."""
    root = static / "mathjax"
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*")):
        if path.is_file() and not _keep(path.relative_to(root)):
            path.unlink()
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        if not any(folder.iterdir()):
            folder.rmdir()


def strip_outputs(notebook: Path) -> None:
    """Remove the outputs and execution counts of a notebook, in place."""
    nb = json.loads(notebook.read_text())
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    notebook.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def lighten(outdir: Path) -> None:
    """Delete from a built site what no page loads, and strip the downloadable notebooks."""
    static = outdir / "_static"
    prune_mathjax(static)
    for path in outdir.rglob("*.map"):
        path.unlink()
    for path in (static / "scripts" / "fontawesome.js", *static.glob("vendor/fontawesome/webfonts/*.ttf")):
        path.unlink(missing_ok=True)
    shutil.rmtree(static / "locales", ignore_errors=True)
    for notebook in (outdir / "_sources").rglob("*.ipynb"):
        strip_outputs(notebook)


def _build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        lighten(Path(app.outdir))


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
