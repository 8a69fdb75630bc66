"""Sphinx extension: what the PDF edition leaves out, since a printed page cannot collapse.

On the site, exercise solutions sit in collapsed dropdowns and the code of certifying,
figure and set-up cells is collapsed (``hide-input``, ``hide-cell``) with its output in
view. For the LaTeX builder only, this drops the solutions and the collapsed code,
keeping every output (the printed results, the figures). sphinx-exercise's own
``hide_solutions`` option cannot be used: it fails on gated solutions that hold code cells.
It runs after sphinx-exercise has merged each gated solution into one node.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import solution_node

HIDDEN_INPUT = {"input", "input+output", "all"}  # myst-nb's hide_mode of a collapsed cell


class PrintedEdition(SphinxPostTransform):
    builders = ("latex",)
    default_priority = 4  # before sphinx-exercise's own post-transforms (5 and later)

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(solution_node)):
            node.parent.remove(node)
        for cell in list(self.document.findall(nodes.container)):
            if cell.get("nb_element") == "cell_code" and cell.get("hide_mode") in HIDDEN_INPUT:
                for child in list(cell.children):
                    if isinstance(child, nodes.container) and child.get("nb_element") == "cell_code_source":
                        cell.remove(child)


def setup(app):
    app.add_post_transform(PrintedEdition)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
