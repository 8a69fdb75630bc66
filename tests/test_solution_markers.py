"""_ext/solution_markers.py: only nbgrader's two marker lines leave the displayed code."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("solution_markers", ROOT / "_ext" / "solution_markers.py")
solution_markers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(solution_markers)


def test_marker_lines_go_and_everything_else_stays():
    code = (
        "x = 1\n### BEGIN SOLUTION\ny = x + 1\n    ### END SOLUTION  \n"
        "print(y)  # ### BEGIN SOLUTION in a comment"
    )
    assert (
        solution_markers.without_markers(code)
        == "x = 1\ny = x + 1\nprint(y)  # ### BEGIN SOLUTION in a comment"
    )


def test_code_without_markers_is_unchanged():
    code = "# BEGIN SOLUTION without the three hashes\n\nz = 2\n"
    assert solution_markers.without_markers(code) == code


def test_an_exercise_shows_the_student_editions_stub():
    spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
    make_student = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_student)
    assert solution_markers.STUB == make_student.CODE_STUB  # the page shows what the student edition holds
    code = 'def f(x):\n    """Doc."""\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION\n'
    stub = solution_markers.as_stub(code)
    assert "return x + 1" not in stub and "BEGIN SOLUTION" not in stub
    assert stub.startswith('def f(x):\n    """Doc."""\n    # YOUR CODE HERE\n    raise NotImplementedError(')
    compile(stub, "<stub>", "exec")  # still valid Python, indented like the region


def test_two_regions_each_become_a_stub_and_code_without_regions_is_unchanged():
    region = "### BEGIN SOLUTION\n{}\n### END SOLUTION\n"
    code = "a = 1\n" + region.format("b = 2") + "c = 3\n" + region.format("d = 4")
    stub = solution_markers.as_stub(code)
    assert stub.count("raise NotImplementedError") == 2 and "c = 3" in stub and "b = 2" not in stub
    assert solution_markers.as_stub("x = 1\n") == "x = 1\n"


def build_page(tmp_path, conf: str, page: str):
    """Build a one-page Sphinx project (``_ext`` on the path, ``conf`` appended to conf.py)
    and return its HTML parsed with BeautifulSoup."""
    from bs4 import BeautifulSoup
    from sphinx.application import Sphinx

    (tmp_path / "conf.py").write_text(f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n{conf}")
    (tmp_path / "index.md").write_text(page)
    app = Sphinx(tmp_path, tmp_path, tmp_path / "_out", tmp_path / "_dt", "html", status=None, warning=None)
    app.build()
    return BeautifulSoup((tmp_path / "_out" / "index.html").read_text(), "html.parser")


def test_a_deep_dive_gathers_prose_and_code_into_one_closed_block(tmp_path):
    soup = build_page(
        tmp_path,
        "extensions = ['myst_parser', 'deep_dive']\n",
        "# Page\n\nBefore.\n\n(dd-label)=\n```{deep-dive-start} Deep dive: inside\n:class: warning\n```\n\n"
        "Inside prose.\n\n```python\nx = 1\n```\n\n```{deep-dive-end}\n```\n\nAfter.\n",
    )
    (block,) = soup.select("div.deep-dive")
    assert block["class"] == ["dropdown", "deep-dive", "warning", "admonition"] and block["id"] == "dd-label"
    assert block.select_one(".admonition-title").get_text() == "Deep dive: inside"
    inside = block.get_text()
    assert "Inside prose." in inside and "x = 1" in inside  # the prose and the code block
    assert "Before." not in inside and "After." not in inside and "After." in soup.get_text()


def test_a_solution_title_names_its_exercise_without_linking_back(tmp_path):
    """The title is the button that opens the solution; a link in it would jump to the exercise."""
    soup = build_page(
        tmp_path,
        "extensions = ['myst_parser', 'sphinx_exercise', 'solution_markers']\n"
        "myst_enable_extensions = ['colon_fence']\nnumfig = True\n",
        "# Page\n\n```{exercise} Easy: add one\n:label: ex-add\n\nAdd one.\n```\n\n"
        "```{solution} ex-add\n:class: dropdown\n\nTwo.\n```\n",
    )
    (title,) = soup.select("div.solution .admonition-title")
    assert " ".join(title.get_text().split()) == "Solution to Exercise 1 (Easy: add one)"
    assert title.find("a") is None
