"""Sphinx extension: a closed block that holds prose *and* code cells (a deep dive, an erratum).

A notebook's code cells cannot sit inside a Markdown directive, so a dropdown admonition can
hold prose only. These two directives mark a run of cells instead, in the way sphinx-exercise's
``solution-start``/``solution-end`` do::

    ```{deep-dive-start} Deep dive: why float32 angles drift
    :class: warning        (optional: extra classes, e.g. for an Erratum box)
    ```
    ... Markdown and code cells: prose, checks, their outputs, figures ...
    ```{deep-dive-end}
    ```

Everything between the two markers is moved into one admonition with the class ``dropdown``,
which sphinx-togglebutton shows closed, with the title as its button. A ``(label)=`` right
before the start marker names the block. Both markers must be in the same section (no
heading between them). The LaTeX builder prints the block as an ordinary admonition.
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.errors import ExtensionError
from sphinx.transforms import SphinxTransform
from sphinx.util.docutils import SphinxDirective


class deep_dive_start(nodes.Element):
    """Marker: a closed block starts here (replaced by the admonition)."""


class deep_dive_end(nodes.Element):
    """Marker: the closed block opened by the last start marker ends here."""


class DeepDiveStart(SphinxDirective):
    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"class": directives.class_option}

    def run(self) -> list[nodes.Node]:
        title_nodes, messages = self.state.inline_text(self.arguments[0], self.lineno)
        node = deep_dive_start(title=self.arguments[0], classes=self.options.get("class", []))
        node += nodes.title(self.arguments[0], "", *title_nodes)
        self.set_source_info(node)
        return [node, *messages]


class DeepDiveEnd(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        node = deep_dive_end()
        self.set_source_info(node)
        return [node]


class GatherDeepDives(SphinxTransform):
    """Move the nodes between each start and end marker into a dropdown admonition."""

    default_priority = 300  # after docutils has moved (label)= targets onto the start marker

    def apply(self, **kwargs) -> None:
        for start in list(self.document.findall(deep_dive_start)):
            parent = start.parent
            index = parent.index(start)
            end_index = next(
                (j for j in range(index + 1, len(parent)) if isinstance(parent[j], deep_dive_end)), None
            )
            nested = end_index is not None and any(
                isinstance(parent[j], deep_dive_start) for j in range(index + 1, end_index)
            )
            if end_index is None or nested:
                raise ExtensionError(
                    f"{start.source}:{start.line}: deep-dive-start '{start['title']}' has no "
                    "deep-dive-end after it in the same section"
                )
            block = nodes.admonition(classes=["dropdown", "deep-dive", *start["classes"]])
            block.source, block.line = start.source, start.line
            block += start.children[0]  # the title
            block.extend(parent[index + 1 : end_index])
            block["ids"], block["names"] = list(start["ids"]), list(start["names"])
            for node_id in block["ids"]:
                self.document.ids[node_id] = block
            parent[index : end_index + 1] = [block]
        for end in list(self.document.findall(deep_dive_end)):
            raise ExtensionError(f"{end.source}:{end.line}: deep-dive-end without a deep-dive-start")


def setup(app):
    app.add_node(deep_dive_start)
    app.add_node(deep_dive_end)
    app.add_directive("deep-dive-start", DeepDiveStart)
    app.add_directive("deep-dive-end", DeepDiveEnd)
    app.add_transform(GatherDeepDives)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
