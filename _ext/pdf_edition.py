"""Sphinx extension: what the PDF edition leaves out, since a printed page cannot collapse.

On the site, exercise solutions (and closed blocks of class ``answer``) sit in collapsed
dropdowns and the code of certifying,
figure and set-up cells is collapsed (``hide-input``, ``hide-cell``) with its output in
view. For the LaTeX builder only, this drops the solutions and the collapsed code,
keeping every output (the printed results, the figures). sphinx-exercise's own
``hide_solutions`` option cannot be used: it fails on gated solutions that hold code cells.
It runs after sphinx-exercise has merged each gated solution into one node.
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
    app.add_post_transform(NumberedTitles)
    app.add_post_transform(PrintedEdition)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
