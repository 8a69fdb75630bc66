"""Sphinx extension: the PDF edition leaves the exercise solutions out.

The site keeps every solution in a collapsed dropdown; a printed page cannot collapse, so
the LaTeX builder drops them (sphinx-exercise's own ``hide_solutions`` option cannot be
used: it fails on gated solutions that hold code cells). Runs after sphinx-exercise has
merged each gated solution into one node, for the LaTeX builder only.
"""

from __future__ import annotations

from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import solution_node


class DropSolutions(SphinxPostTransform):
    builders = ("latex",)
    default_priority = 4  # before sphinx-exercise's own post-transforms (5 and later)

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(solution_node)):
            node.parent.remove(node)


def setup(app):
    app.add_post_transform(DropSolutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
