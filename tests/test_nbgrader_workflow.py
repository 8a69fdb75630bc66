"""The nbgrader round trip of instructors.md, run for real in a temporary course directory.

A chapter with a code exercise (chapter 10, one of the quickest to run: its ``exercise`` /
``exercise-check`` cells carry nbgrader metadata) and the marker-format fixture
(``tests/data/student_marker_format.ipynb``: Markdown solutions between ``% BEGIN SOLUTION``
lines, a gated code solution, a code exercise) form one assignment. ``nbgrader
generate_assignment`` releases it, with the same ClearSolutions settings as the student
edition (``scripts/make_student.py``); then ``nbgrader autograde`` grades two submissions,
the instructor's notebooks (full marks) and the released student notebooks as they are
(they must run through the autograder, errors and all, and get zero), and ``nbgrader
generate_feedback`` writes the students' feedback. The gradebook database lives in the
temporary folder. It executes each notebook twice (about half a minute); ``make test`` runs
it as its own stage.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "chapters" / "10_relative_bias.ipynb"
FIXTURE = ROOT / "tests" / "data" / "student_marker_format.ipynb"
ASSIGNMENT = "week10"

_spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_student)

CONFIG = f"""\
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "posenc"
c.CourseDirectory.root = {{root!r}}
c.CourseDirectory.db_url = "sqlite:///" + {{db!r}}
# Markdown solutions (between "% BEGIN SOLUTION" lines) carry no nbgrader metadata.
c.ClearSolutions.enforce_metadata = False
c.ClearSolutions.text_stub = {make_student.TEXT_STUB!r}
c.ClearSolutions.code_stub = {{{{"python": {make_student.CODE_STUB!r}}}}}
c.Execute.timeout = 300
"""


def nbgrader(course: Path, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course, capture_output=True, text=True
    )
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Iterator[Path]:
    # nbgrader runs the `alembic` command (its database migrations) found on PATH
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
        yield make_course(tmp_path_factory.mktemp("course"))


def make_course(course: Path) -> Path:
    (course / "nbgrader_config.py").write_text(
        CONFIG.format(root=str(course), db=str(course / "gradebook.db"))
    )
    source = course / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    for nb in (CHAPTER, FIXTURE):
        nbformat.write(nbformat.read(nb, as_version=4), source / nb.name)

    (course / "students.csv").write_text("id\ninstructor\nstudent\n")
    nbgrader(course, "db", "student", "import", "students.csv")  # one start-up of nbgrader for both
    nbgrader(course, "generate_assignment", ASSIGNMENT)
    release = course / "release" / ASSIGNMENT
    # collect: the instructor hands in the source notebooks, the student the released ones untouched
    for student, folder in (("instructor", source), ("student", release)):
        dest = course / "submitted" / student / ASSIGNMENT
        shutil.copytree(folder, dest)
        (dest / "timestamp.txt").write_text("2026-01-01 00:00:00 UTC\n")
    nbgrader(course, "autograde", ASSIGNMENT)
    nbgrader(course, "generate_feedback", ASSIGNMENT)
    return course


def test_released_notebooks_hold_no_solution(course):
    released = course / "release" / ASSIGNMENT
    chapter = nbformat.read(released / CHAPTER.name, as_version=4)
    exercise = next(c for c in chapter.cells if "exercise" in c.metadata.get("tags", []))
    assert "BEGIN SOLUTION" not in exercise.source and "NotImplementedError" in exercise.source
    assert exercise.source.startswith("def my_bucket(relative_position, ")  # the signature stays
    fixture = nbformat.read(released / FIXTURE.name, as_version=4)
    text = "\n".join(c.source for c in fixture.cells)
    assert "SECRET" not in text and "BEGIN SOLUTION" not in text and "{solution" not in text
    for nb in (chapter, fixture):
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
        check = next(c for c in nb.cells if "exercise-check" in c.metadata.get("tags", []))
        assert check.metadata["nbgrader"]["locked"] and check.metadata["nbgrader"]["grade"]


def _scores(course: Path) -> dict[str, tuple[float, float]]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {
            student: (
                gradebook.find_submission(ASSIGNMENT, student).score,
                gradebook.find_submission(ASSIGNMENT, student).max_score,
            )
            for student in ("instructor", "student")
        }


def test_autograde_gives_the_instructor_full_marks_and_the_untouched_student_copy_zero(course):
    scores = _scores(course)
    assert scores["instructor"] == (2.0, 2.0)  # one checker cell per notebook, one point each
    assert scores["student"] == (0.0, 2.0)


def test_the_student_copy_ran_to_the_end_in_the_autograder(course):
    graded = course / "autograded" / "student" / ASSIGNMENT
    chapter = nbformat.read(graded / CHAPTER.name, as_version=4)
    code = [c for c in chapter.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "every cell executed"
    errors = [
        (c.metadata.get("tags", []), o.ename) for c in code for o in c.outputs if o.output_type == "error"
    ]
    # the stub raises inside my_slopes, so only when the checker calls it; the gated
    # solution cells (kept by nbgrader, their code replaced by the stub) raise too
    assert (["exercise-check"], "NotImplementedError") in errors
    unexpected = [
        (tags, name)
        for tags, name in errors
        if not (name == "NotImplementedError" and {"exercise-check", "solution"} & set(tags))
    ]
    assert unexpected == [], unexpected
    fixture = nbformat.read(graded / FIXTURE.name, as_version=4)
    errors = [
        (c.metadata["tags"][0], o.ename)
        for c in fixture.cells
        for o in c.get("outputs", [])
        if o.output_type == "error"
    ]
    # nbgrader keeps every cell: the gated solution and the solution-check cell (which the
    # student edition leaves out) are stubs that raise, and the autograder goes on past them
    assert errors == [
        ("solution", "NotImplementedError"),
        ("exercise-check", "NotImplementedError"),
        ("hide-input", "NotImplementedError"),
    ]
    instructor = nbformat.read(course / "autograded" / "instructor" / ASSIGNMENT / CHAPTER.name, as_version=4)
    assert not [o for c in instructor.cells for o in c.get("outputs", []) if o.output_type == "error"]


def test_feedback_shows_the_student_what_is_missing(course):
    feedback = course / "feedback" / "student" / ASSIGNMENT / f"{CHAPTER.stem}.html"
    html = feedback.read_text()
    assert "not yet implemented" in html and "0.0 / 1.0" in html.replace("( ", "(")
