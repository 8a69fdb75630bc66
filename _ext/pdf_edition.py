"""Sphinx extension: what the PDF edition leaves out, since a printed page cannot collapse.

On the site, exercise solutions (and closed blocks of class ``answer``) sit in collapsed
dropdowns and the code of certifying,
figure and set-up cells is collapsed (``hide-input``, ``hide-cell``) with its output in
view. For the LaTeX builder only, this drops the solutions and the collapsed code,
keeping every output (the printed results, the figures). sphinx-exercise's own
``hide_solutions`` option cannot be used: it fails on gated solutions that hold code cells.
It runs after sphinx-exercise has merged each gated solution into one node.

It also gives the PDF a book's structure: each part of ``_toc.yml`` opens with a part
heading listed in the contents (``part_headings``: LaTeX drops the toctree captions that head
the parts on the site), and the preface's sections form one chapter, "Preface", instead of
six (``OnePreface``). Long tables are typeset as ``longtable``, which breaks across pages
(``tabulary``, Sphinx's choice for short tables, cannot). The API reference, generated from
the docstrings, stays on the site: the PDF keeps its introduction and links the page
(``ApiAsLink``). A closed block of the site (a deep dive, an Erratum) is printed as a
headed run of text (``FlatDeepDives``): a framed box cannot break a table or a long listing
across pages. Figures carry the site's numbers (``SiteFigureNumbers``), and the bibliography
is printed once, at the end (``OneBibliography``).
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import solution_node

HIDDEN_INPUT = {"input", "input+output", "all"}  # myst-nb's hide_mode of a collapsed cell


class NumberedTitles(SphinxPostTransform):
    """Chapter titles carry their number in print too ("3. Sinusoidal construction").

    On the site Sphinx numbers the chapters of the numbered parts of ``_toc.yml`` and puts the
    number before each title (figures and theorems follow: Fig. 3.1). The LaTeX writer does not
    print those numbers (and LaTeX's own would count the preface's sections too), so for the
    LaTeX builder this prefixes the number Sphinx assigned to each chapter's title.
    """

    builders = ("latex",)
    default_priority = 4

    def run(self, **kwargs) -> None:
        for start in self.document.findall(addnodes.start_of_file):
            number = self.env.toc_secnumbers.get(start["docname"], {}).get("")
            section = next(iter(start.findall(nodes.section)), None)
            if number and section is not None and isinstance(section[0], nodes.title):
                section[0].insert(0, nodes.Text(".".join(map(str, number)) + ". "))


def part_headings(app, doctree) -> None:
    """Before each captioned toctree of the root document, a LaTeX part heading.

    On the site the captions head the parts in the navigation; the LaTeX builder replaces each
    toctree by its documents and prints no caption. The heading is unnumbered (the captions
    carry their own "I.", "II.") and listed in the contents. HTML ignores ``raw`` LaTeX.
    """
    if app.env.docname != app.config.root_doc:
        return
    for toctree in list(doctree.findall(addnodes.toctree)):
        caption = toctree.get("caption")
        wrapper = toctree.parent if isinstance(toctree.parent, nodes.compound) else toctree
        if caption and wrapper.parent is not None:
            text = caption.replace("\\", "").replace("{", "").replace("}", "")
            # listed on the part's own page (written after \\part*, it would name the next page)
            heading = (
                f"\\clearpage\\phantomsection\\addcontentsline{{toc}}{{part}}{{{text}}}\\part*{{{text}}}"
            )
            wrapper.parent.insert(wrapper.parent.index(wrapper), nodes.raw("", heading, format="latex"))


class SiteFigureNumbers(SphinxPostTransform):
    """Each figure in print carries the number the site gives it (Fig. 16.3).

    LaTeX would count figures itself, and with unnumbered chapters (their numbers are part of
    the titles) it counts through the whole book. Before each figure this sets the printed
    number to the one Sphinx assigned, which captions and references then use.
    """

    builders = ("latex",)
    default_priority = 900  # after MyST-NB has turned cell outputs into figures

    def run(self, **kwargs) -> None:
        # The assembled book no longer tells which document a figure came from; the labels
        # are unique in the book (fig-ch16-...), so a label names its number.
        found: dict[str, list[tuple[int, ...]]] = {}
        for numbers in self.env.toc_fignumbers.values():
            for label, number in numbers.get("figure", {}).items():
                found.setdefault(label, []).append(number)
        for figure in list(self.document.findall(nodes.figure)):
            number = next((found[i][0] for i in figure["ids"] if len(found.get(i, [])) == 1), None)
            if number and figure.parent is not None:
                text = ".".join(map(str, number))
                mark = nodes.raw("", f"\\def\\thefigure{{{text}}}", format="latex")
                figure.parent.insert(figure.parent.index(figure), mark)


class OnePreface(SphinxPostTransform):
    """The root document's text and sections, before the first part, become one chapter "Preface".

    Sphinx prints the root document's title as the book's title and each of its sections as a
    chapter; the preface's six short sections would open six chapters.
    """

    builders = ("latex",)
    default_priority = 4

    def run(self, **kwargs) -> None:
        top = next(iter(self.document.findall(nodes.section)), None)
        if top is None or not isinstance(top[0], nodes.title):
            return
        body = []
        for child in top.children[1:]:
            if isinstance(child, (nodes.raw, addnodes.start_of_file, nodes.compound)):
                break
            body.append(child)
        if not body:
            return
        preface = nodes.section("", nodes.title("", "Preface"), ids=["pdf-preface"])
        for child in body:
            top.remove(child)
            preface += child
        top.insert(1, preface)


def _ancestors(node: nodes.Node):
    while node.parent is not None:
        node = node.parent
        yield node


class LongTables(SphinxPostTransform):
    """A table of more than 12 rows, or of more than 1,200 characters, is typeset as a longtable,
    which breaks across pages.

    Without a ``tabularcolumns`` spec Sphinx would give a longtable's columns their natural
    width (``l``), and a column of sentences runs off the page; each column gets instead a
    share of the line proportional to its text (at least 15%).
    """

    builders = ("latex",)
    default_priority = 4

    def run(self, **kwargs) -> None:
        for table in self.document.findall(nodes.table):
            rows = sum(1 for _ in table.findall(nodes.row))
            if (rows <= 12 and len(table.astext()) <= 1200) or "longtable" in table["classes"]:
                continue
            if any(
                isinstance(a, nodes.admonition) and "deep-dive" not in a["classes"] for a in _ancestors(table)
            ):
                continue  # a longtable cannot sit in a frame
            table["classes"].append("longtable")
            group = next(iter(table.findall(nodes.tgroup)))
            colspecs = [c for c in group.children if isinstance(c, nodes.colspec)]
            lengths = [0] * len(colspecs)
            for row in group.findall(nodes.row):
                for i, entry in enumerate(row.children[: len(lengths)]):
                    lengths[i] += len(entry.astext())
            total = sum(lengths) or 1
            shares = [max(15, round(100 * n / total)) for n in lengths]
            for colspec, share in zip(colspecs, shares, strict=True):
                colspec["colwidth"] = share
            table["classes"].append("colwidths-given")


class OneBibliography(SphinxPostTransform):
    """The bibliography once, at the end of the book.

    The LaTeX builder gathers every entry into its own "Bibliography" chapter at the end, which
    leaves the page ``bibliography`` with an empty list section and a second "Bibliography"
    title. In print the page keeps its text, titled "Sources and literature", without that
    section.
    """

    builders = ("latex",)
    default_priority = 800  # after Sphinx has moved the entries to the end (BibliographyTransform)

    def run(self, **kwargs) -> None:
        for start in self.document.findall(addnodes.start_of_file):
            if start["docname"] != "bibliography":
                continue
            chapter = next(iter(start.findall(nodes.section)))
            chapter[0].children = [nodes.Text("Sources and literature")]
            for section in [c for c in chapter.children if isinstance(c, nodes.section)]:
                if not section.astext().replace(section[0].astext(), "").strip():
                    chapter.remove(section)


class ApiAsLink(SphinxPostTransform):
    """The API reference in print: its title and introduction, then a link to the full page.

    The reference lists every public function with its signature and docstring; on paper
    that is some thirty pages of long code names, and the site's page is searchable.
    """

    builders = ("latex",)
    default_priority = 4

    def run(self, **kwargs) -> None:
        site = self.config.ogp_site_url
        for start in self.document.findall(addnodes.start_of_file):
            if start["docname"] != "api":
                continue
            section = next(iter(start.findall(nodes.section)))
            for child in list(section.children):
                if isinstance(child, nodes.section) or (
                    not isinstance(child, (nodes.title, nodes.paragraph, nodes.bullet_list, nodes.target))
                ):
                    section.remove(child)
            url = f"{site}api.html"
            section += nodes.paragraph(
                "",
                "",
                nodes.Text("The reference itself, generated from the docstrings, is on the book's site: "),
                nodes.reference(url, url, refuri=url),
                nodes.Text(". In Python, help(posenc.sinusoidal_encoding) shows the same text."),
            )


class FlatDeepDives(SphinxPostTransform):
    """Each closed block of the site (``deep-dive``) printed as a heading and its content.

    In a frame, a table (``tabulary``) or a listing taller than the rest of the page cannot
    break, and a ``longtable`` is not allowed at all. The heading is kept with what follows,
    and so is the heading of every box left in the text (theorems, proofs, exercises).
    """

    builders = ("latex",)
    default_priority = 10  # after PrintedEdition has dropped the blocks that hold answers

    def run(self, **kwargs) -> None:
        for block in list(self.document.findall(nodes.admonition)):
            if "deep-dive" not in block["classes"] or block.parent is None:
                continue
            title = block[0] if isinstance(block[0], nodes.title) else None
            keep = nodes.raw("", "\\Needspace*{6\\baselineskip}", format="latex")
            heading = nodes.rubric("", "", *(title.children if title is not None else []))
            body = block.children[1:] if title is not None else block.children
            block.replace_self([keep, heading, *body])
        # A box's heading (a theorem, its proof, an exercise) never alone at the foot of a page.
        # Only for boxes that sit in the text: in a nested box LaTeX cannot look ahead.
        # \Needspace* (needspace's exact form) breaks the page outright when space is short;
        # the plain \needspace left pages overfull by 200 pt and more here.
        for box in list(self.document.findall(nodes.Admonition)):
            if isinstance(box.parent, nodes.section):
                keep = nodes.raw("", "\\Needspace*{6\\baselineskip}", format="latex")
                box.parent.insert(box.parent.index(box), keep)


class PrintedEdition(SphinxPostTransform):
    builders = ("latex",)
    default_priority = 4  # before sphinx-exercise's own post-transforms (5 and later)

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(solution_node)):
            node.parent.remove(node)
        # A closed block that holds an exercise's answer (deep-dive-start with :class: answer,
        # e.g. a reference listing that is the model answer) stays out of print, like solutions.
        for node in list(self.document.findall(nodes.admonition)):
            if "answer" in node["classes"] and node.parent is not None:
                node.parent.remove(node)
        for cell in list(self.document.findall(nodes.container)):
            if cell.get("nb_element") == "cell_code" and cell.get("hide_mode") in HIDDEN_INPUT:
                for child in list(cell.children):
                    if isinstance(child, nodes.container) and child.get("nb_element") == "cell_code_source":
                        cell.remove(child)


def setup(app):
    app.connect("doctree-read", part_headings)
    app.add_post_transform(OnePreface)
    app.add_post_transform(SiteFigureNumbers)
    app.add_post_transform(LongTables)
    app.add_post_transform(ApiAsLink)
    app.add_post_transform(OneBibliography)
    app.add_post_transform(FlatDeepDives)
    app.add_post_transform(NumberedTitles)
    app.add_post_transform(PrintedEdition)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
