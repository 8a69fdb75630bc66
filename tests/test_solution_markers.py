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
