"""_ext/numref_cache.py: the same references, each target document read once for them."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

ROOT = Path(__file__).resolve().parent.parent

FIGURE_DOC = """Figures
=======

.. _fig-one:

.. figure:: one.png

   The first figure.

.. _fig-two:

.. figure:: one.png

   The second figure.
"""
CITING_DOC = """Citing
======

See :numref:`fig-one`, :numref:`fig-two`, :numref:`fig-one` again and
:numref:`Figure {number} <fig-two>`.
"""


def build(tmp_path: Path, extensions: list[str], monkeypatch) -> tuple[str, list[str]]:
    """Build a two-document project; the HTML of the citing page and every document read back."""
    src = tmp_path / "src"
    src.mkdir(parents=True)
    (src / "conf.py").write_text(f"extensions = {extensions!r}\nnumfig = True\n")
    (src / "index.rst").write_text("Index\n=====\n\n.. toctree::\n\n   figures\n   citing\n")
    (src / "figures.rst").write_text(FIGURE_DOC)
    (src / "citing.rst").write_text(CITING_DOC)
    (src / "one.png").write_bytes(b"")
    read: list[str] = []
    original = BuildEnvironment.get_doctree

    def counting(self, docname):
        read.append(docname)
        return original(self, docname)

    with monkeypatch.context() as patch:
        patch.setattr(BuildEnvironment, "get_doctree", counting)
        patch.syspath_prepend(str(ROOT / "_ext"))
        app = Sphinx(
            src,
            src,
            tmp_path / "html",
            tmp_path / "doctrees",
            "html",
            status=io.StringIO(),
            warning=io.StringIO(),
            freshenv=True,
        )
        app.build()
    return (tmp_path / "html" / "citing.html").read_text(), read


def test_numref_reads_each_document_once_and_renders_the_same(tmp_path, monkeypatch):
    plain, plain_reads = build(tmp_path / "plain", [], monkeypatch)
    cached, cached_reads = build(tmp_path / "cached", ["numref_cache"], monkeypatch)
    assert "Fig. 1" in plain and "Fig. 2" in plain and "Figure 2" in plain  # the references resolved
    assert cached == plain
    # four references into figures.rst: Sphinx reads it back four times, the extension once
    assert plain_reads.count("figures") - cached_reads.count("figures") == 3


def test_copies_are_dropped_before_sources_are_read_again():
    spec = importlib.util.spec_from_file_location("numref_cache", ROOT / "_ext" / "numref_cache.py")
    numref_cache = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(numref_cache)

    class Env:
        domains = {"std": type("Domain", (), {})()}

    env = Env()
    env.domains["std"]._numref_copies = {"figures": object()}
    numref_cache.forget_copies(None, env, [])
    assert not hasattr(env.domains["std"], "_numref_copies")
