"""Sphinx extension: a code exercise shows its stub; its model answer waits in the solution.

A code exercise is a notebook cell tagged ``exercise`` whose answer sits between the lines
``### BEGIN SOLUTION`` and ``### END SOLUTION``; nbgrader (``scripts/make_student.py``,
``instructors.md``) needs those regions in the notebook. The book executes the whole cell,
but a reader must be asked before they are answered, so on every builder:

* the exercise cell's displayed source is what the student edition shows: each region
  replaced by ``STUB`` (``raise NotImplementedError``), indented like its ``BEGIN`` line;
* the full answer (without the marker lines) is appended to the first sphinx-exercise
  solution that follows the cell, which the site shows closed and the PDF edition leaves
  out (``_ext/pdf_edition.py``); a code exercise with no solution after it is an error;
* the printed output of its checker cell (tagged ``exercise-check``, after the exercise: what
  the checker says of the model answer, "correct on N inputs") moves into that solution
  too, so that no "correct" stands under a stub the reader has not filled in yet;
* in every other code cell (gated solution cells, tagged ``solution``) only the two marker
  lines leave the displayed source.

Separately, a solution's title ("Solution to Exercise 14.2 (...)") is plain text, not
sphinx-exercise's link back to the exercise: on the site the title is the button that opens
the closed solution, and readers who clicked its text were sent back to the exercise instead.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import solution_node

MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*$")
REGION = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[ \t]*$.*?^[ \t]*### END SOLUTION[ \t]*$", re.M | re.S
)
# The stub of the student edition (scripts/make_student.py's CODE_STUB; a test checks they agree).
STUB = '# YOUR CODE HERE\nraise NotImplementedError("not yet implemented: write your code here")'


def without_markers(code: str) -> str:
    """``code`` without its ``### BEGIN SOLUTION`` / ``### END SOLUTION`` lines."""
    return "\n".join(line for line in code.split("\n") if not MARKER.match(line))


def as_stub(code: str) -> str:
    """``code`` with each solution region (markers included) replaced by the indented ``STUB``."""
    return REGION.sub(lambda m: "\n".join(m["indent"] + line for line in STUB.split("\n")), code)


def _set_code(block: nodes.literal_block, code: str) -> None:
    block.clear()
    block += nodes.Text(code)
    block.rawsource = code


class ExerciseStubs(SphinxPostTransform):
    default_priority = 3  # before the PDF edition's transform, which drops solutions

    def run(self, **kwargs) -> None:
        pending: list[str] = []  # answers waiting for the next solution in document order
        checked: list[nodes.Node] = []  # checker outputs waiting for the same solution
        for node in list(self.document.findall()):
            if isinstance(node, solution_node) and pending:
                for answer in pending:
                    node += nodes.paragraph(text="The model answer to the code exercise:")
                    node += nodes.literal_block(answer, answer, language="ipython3")
                if checked:
                    node += nodes.paragraph(text="The exercise's check, run on this answer, prints:")
                    node.extend(checked)
                pending, checked = [], []
            if (
                pending
                and isinstance(node, nodes.container)
                and node.get("nb_element") == "cell_code_output"
                and "exercise-check" in node.parent.get("cell_metadata", {}).get("tags", [])
            ):
                node.parent.remove(node)
                checked.append(node)
                continue
            if not (isinstance(node, nodes.container) and node.get("nb_element") == "cell_code_source"):
                continue
            tags = node.parent.get("cell_metadata", {}).get("tags", [])
            for block in list(node.findall(nodes.literal_block)):
                code = block.astext()
                if "exercise" in tags and REGION.search(code):
                    pending.append(without_markers(code))
                    _set_code(block, as_stub(code))
                elif without_markers(code) != code:
                    _set_code(block, without_markers(code))
        if pending:
            raise ExtensionError(
                f"{self.document['source']}: a code exercise has no solution after it "
                f"to hold its model answer: {pending[0][:60]!r}"
            )


class PlainSolutionTitles(SphinxPostTransform):
    default_priority = 22  # after sphinx-exercise builds the titles (ResolveTitlesInSolutions, 21)

    def run(self, **kwargs) -> None:
        for solution in self.document.findall(solution_node):
            title = solution.children[0] if solution.children else None
            if not isinstance(title, nodes.title):
                continue
            for link in list(title.findall(nodes.reference)):
                link.replace_self(link.children)


def setup(app):
    app.add_post_transform(ExerciseStubs)
    app.add_post_transform(PlainSolutionTitles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
