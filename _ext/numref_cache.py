"""Resolve every ``{numref}`` to a document from one copy of it, not a fresh one each time.

Sphinx 7.4 resolves a ``numref`` by reading the whole target document back from its pickle
(``env.get_doctree``) to find the numbered node, once per reference (Sphinx issues 12611 and
12883, open). This book's site build makes 127 such lookups into chapters whose pickles
hold up to 0.4 MB; it took 24 s without this extension and 21 s with it. Here the standard
domain keeps, for ``numref`` lookups only, the first copy it reads of each document: the
lookup only reads the node's type, ids and number, and the documents do not change once
every source has been read. Every other caller of ``get_doctree`` (the writers, which
change the tree they get) still gets a fresh copy.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.domains.std import StandardDomain
from sphinx.environment import BuildEnvironment


class StandardDomainReadingOnce(StandardDomain):
    """Sphinx's standard domain; ``numref`` reads each target document once per build."""

    def _resolve_numref_xref(self, env: BuildEnvironment, *args: Any, **kwargs: Any) -> nodes.Element | None:
        copies: dict[str, nodes.document] = self.__dict__.setdefault("_numref_copies", {})
        read = env.get_doctree

        def read_once(docname: str) -> nodes.document:
            if docname not in copies:
                copies[docname] = read(docname)
            return copies[docname]

        env.get_doctree = read_once  # for this lookup only
        try:
            return super()._resolve_numref_xref(env, *args, **kwargs)
        finally:
            del env.get_doctree


def forget_copies(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Sources are about to be read again: drop the copies of the last build."""
    env.domains["std"].__dict__.pop("_numref_copies", None)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_domain(StandardDomainReadingOnce, override=True)
    app.connect("env-before-read-docs", forget_copies)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
