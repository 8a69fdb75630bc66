"""Sphinx extension: the grading markers of a solution cell are not shown to readers.

A code solution sits between the lines ``### BEGIN SOLUTION`` and ``### END SOLUTION``,
which nbgrader (``scripts/make_student.py``, ``instructors.md``) needs in the notebook to
clear the solution in the student copy. On a page they are noise in the middle of the
code. This removes those two marker lines from the displayed source of every code cell, in
every builder; the notebook files, the student edition and the executed code keep them.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*$")


def without_markers(code: str) -> str:
    """``code`` without its ``### BEGIN SOLUTION`` / ``### END SOLUTION`` lines."""
    return "\n".join(line for line in code.split("\n") if not MARKER.match(line))


class HideSolutionMarkers(SphinxPostTransform):
    default_priority = 3  # before the PDF edition's transform, which may drop the whole cell

    def run(self, **kwargs) -> None:
        for source in list(self.document.findall(nodes.container)):
            if source.get("nb_element") != "cell_code_source":
                continue
            for block in list(source.findall(nodes.literal_block)):
                code = block.astext()
                shown = without_markers(code)
                if shown != code:
                    block.clear()
                    block += nodes.Text(shown)
                    block.rawsource = shown


def setup(app):
    app.add_post_transform(HideSolutionMarkers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
