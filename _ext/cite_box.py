"""The ``cite-this-book`` directive: a "Cite this book" box made from ``CITATION.cff``.

The box gives one line of text (authors, year, title, version, URL) and the same as a
BibTeX ``@software`` entry, both read from the citation file at build time, so the front
page cannot disagree with it. Used once, in ``intro.md``::

    ```{cite-this-book}
    ```
"""

from __future__ import annotations

from pathlib import Path

import yaml
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def _author(entry: dict) -> str:
    if "name" in entry:
        return entry["name"]
    return " ".join(part for part in (entry.get("given-names"), entry.get("family-names")) if part)


def citation_text(cff: dict) -> str:
    """One line: authors (year). Title (version x). URL."""
    authors = ", ".join(_author(a) for a in cff["authors"])
    year = cff["date-released"][:4]
    return f"{authors} ({year}). {cff['title']} (version {cff['version']}). {cff['repository-code']}"


def bibtex(cff: dict) -> str:
    """The same as a BibTeX @software entry."""
    authors = " and ".join(f"{{{_author(a)}}}" for a in cff["authors"])
    fields = {
        "author": authors,
        "title": f"{{{cff['title']}}}",
        "year": cff["date-released"][:4],
        "version": cff["version"],
        "url": cff["repository-code"],
    }
    body = ",\n".join(f"  {key} = {{{value}}}" for key, value in fields.items())
    return f"@software{{posenc_book,\n{body}\n}}"


class CiteThisBook(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        path = Path(self.env.srcdir) / "CITATION.cff"
        self.env.note_dependency(str(path))
        # BaseLoader keeps the date a string, as the Citation File Format has it
        cff = yaml.load(path.read_text(), Loader=yaml.BaseLoader)
        box = nodes.admonition(classes=["cite-this-book"])
        box += nodes.title(text="Cite this book")
        box += nodes.paragraph(text=citation_text(cff))
        box += nodes.literal_block(bibtex(cff), bibtex(cff), language="bibtex")
        return [box]


def setup(app: Sphinx) -> dict:
    app.add_directive("cite-this-book", CiteThisBook)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
