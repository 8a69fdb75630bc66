"""The student edition (scripts/make_student.py): no solution text or code survives in it.

The solutions are found here independently of the script: ``{solution}`` blocks with
markdown-it (the parser MyST builds on, with the colon-fence plugin), the regions between
``BEGIN SOLUTION`` / ``END SOLUTION`` marker lines (Markdown ``%`` comments, code ``###``
comments), and the cells that check solution claims by their ``solution-check`` tag.
Every distinctive line of them (long enough, and not also part of the public text of the
book) must be absent from every file of the student sources, and, when ``make student``
has been run, from every file of the built student site (``_build/student/html``, ``_sources/`` included).
"""

from __future__ import annotations

import html
import importlib.util
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin

ROOT = Path(__file__).resolve().parent.parent
BUILT = ROOT / "_build" / "student"
MIN_LEN = 20

_spec = importlib.util.spec_from_file_location("make_student", ROOT / "scripts" / "make_student.py")
make_student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_student)

_MD = MarkdownIt("commonmark").use(colon_fence_plugin)


def book_pages() -> list[Path]:
    toc = (ROOT / "_toc.yml").read_text()
    stems = re.findall(r"^\s*-?\s*(?:file|root):\s*(\S+)\s*$", toc, flags=re.M)
    pages = []
    for stem in stems:
        for ext in (".ipynb", ".md"):
            if (ROOT / f"{stem}{ext}").is_file():
                pages.append(ROOT / f"{stem}{ext}")
    return pages


def markdown_blocks(text: str, name: str) -> tuple[list[str], list[str]]:
    """(bodies of the ``{name}`` directives, the text outside them) of a Markdown string."""
    lines = text.split("\n")
    inside = [False] * len(lines)
    bodies = []
    for tok in _MD.parse(text):
        if tok.type in ("fence", "colon_fence") and tok.info.strip().startswith("{" + name):
            bodies.append(tok.content)
            for k in range(tok.map[0], tok.map[1]):
                inside[k] = True
    return bodies, [line for line, hidden in zip(lines, inside, strict=True) if not hidden]


def marked_regions(source: str) -> tuple[list[str], str]:
    """(the regions between marker lines, the text outside them) of a cell's source."""
    regions = re.findall(
        r"^[^\n]*BEGIN SOLUTION[^\n]*\n(.*?)\n[^\n]*END SOLUTION[^\n]*$", source, flags=re.S | re.M
    )
    rest = re.sub(r"^[^\n]*BEGIN SOLUTION.*?END SOLUTION[^\n]*$", "", source, flags=re.S | re.M)
    return regions, rest


class Secrets:
    """Solution lines of the instructor book, split into prose and code."""

    def __init__(self) -> None:
        self.prose: set[str] = set()
        self.code: set[str] = set()
        self.exercise_text: list[str] = []
        public: list[str] = []
        self.n_solutions = self.n_exercise_cells = self.n_check_cells = 0
        for page in book_pages():
            if page.suffix == ".md":
                cells = [nbformat.v4.new_markdown_cell(page.read_text())]
            else:
                cells = nbformat.read(page, as_version=4).cells
            for cell in cells:
                tags = cell.metadata.get("tags", [])
                if "solution-check" in tags:
                    self.n_check_cells += 1
                    self._add(cell.source, code=cell.cell_type == "code")
                elif cell.cell_type == "markdown":
                    regions, outside = marked_regions(cell.source)
                    for region in regions:
                        self._add_markdown(region)
                    bodies, rest = markdown_blocks(outside, "solution")
                    self.n_solutions += len(bodies) + sum("{solution" in r for r in regions)
                    for body in bodies:
                        self._add_markdown(body)
                    public.extend(rest)
                    self.exercise_text.extend(markdown_blocks(cell.source, "exercise")[0])
                else:
                    regions, outside = marked_regions(cell.source)
                    self.n_exercise_cells += "exercise" in tags
                    for region in regions:
                        self._add(region, code=True)
                    public.append(outside)
        # the package is public too: the chapters print its source, the API page its docstrings
        public.extend(path.read_text() for path in sorted((ROOT / "posenc").glob("*.py")))
        public_text = "\n".join(public)
        # a line the reader sees anyway (e.g. an import, a call shown in the chapter) is not a secret
        self.prose = {s for s in self.prose if s not in public_text}
        self.code = {s for s in self.code if s not in public_text}
        self.public_words = " ".join(public_text.split())

    def fragments(self) -> set[str]:
        """HTML-searchable pieces of the secret lines that are not also public text."""
        found = {f for s in self.code for f in html_fragments(s, code=True)}
        found |= {f for s in self.prose for f in html_fragments(s, code=False)}
        return {f for f in found if f not in self.public_words}

    def _add(self, text: str, *, code: bool) -> None:
        for line in text.split("\n"):
            s = line.strip()
            if len(s) >= MIN_LEN and not s.startswith(":class:") and not re.fullmatch(r"[`:~\s]+", s):
                (self.code if code else self.prose).add(s)

    def _add_markdown(self, body: str) -> None:
        in_code = False
        for line in body.split("\n"):
            if re.match(r"^\s*(```|~~~)", line):
                in_code = not in_code
                continue
            self._add(line, code=in_code)

    @property
    def lines(self) -> set[str]:
        return self.prose | self.code


def html_fragments(line: str, *, code: bool) -> list[str]:
    """Pieces of a source line that survive rendering to HTML text verbatim."""
    if code:
        return [" ".join(line.split())] if len(line) >= MIN_LEN else []
    # drop math, inline code, roles and markup; keep runs of plain words
    plain = re.split(r"\$[^$]*\$|`[^`]*`|\{[^}]*\}|[*_]", line)
    return [" ".join(p.split()) for p in plain if len(p.split()) >= 4 and len(p.strip()) >= MIN_LEN]


def file_texts(folder: Path) -> dict[Path, str]:
    """Every file below ``folder`` as searchable text (notebooks: their decoded cell sources too)."""
    texts = {}
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        raw = path.read_bytes().decode("utf-8", errors="ignore")
        if path.suffix == ".ipynb":
            cells = nbformat.reads(raw, as_version=4).cells
            raw += "\n".join(c.source + str(c.get("outputs", [])) for c in cells)
        elif path.suffix == ".html":
            text = re.sub(r"<script.*?</script>|<style.*?</style>", " ", raw, flags=re.S)
            raw = raw + "\n" + " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())
        texts[path] = raw
    return texts


def leaks(secrets: set[str], texts: dict[Path, str]) -> list[tuple[str, str]]:
    return [(str(path), s) for path, text in texts.items() for s in secrets if s in text]


@pytest.fixture(scope="module")
def secrets() -> Secrets:
    return Secrets()


@pytest.fixture(scope="module")
def student(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student")
    make_student.make_student(out)
    return out


def test_the_book_has_solutions_to_hide(secrets):
    assert secrets.n_solutions >= 30
    assert secrets.n_exercise_cells >= 6
    assert secrets.n_check_cells >= 2
    assert len(secrets.lines) >= 200


def test_no_solution_line_in_the_student_sources(secrets, student):
    found = leaks(secrets.lines, file_texts(student))
    assert not found, f"{len(found)} solution lines leaked, e.g. {found[:5]}"


def test_the_leak_check_can_fail(secrets, student):
    texts = file_texts(student)
    path = next(p for p in texts if p.suffix == ".ipynb")
    some = sorted(secrets.code)[0]
    texts[path] += "\n" + some
    assert leaks(secrets.lines, texts) == [(str(path), some)]


def test_no_solution_markup_or_tag_survives(student):
    for path in student.rglob("*"):
        if path.suffix in (".md", ".ipynb"):
            text = path.read_text()
            assert "{solution" not in text, path
            assert "solution-check" not in text, path
            assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text, path


def test_exercises_are_kept_and_stubbed(student):
    for page in book_pages():
        if page.suffix != ".ipynb":
            continue
        teacher = nbformat.read(page, as_version=4)
        pupil = nbformat.read(student / page.relative_to(ROOT), as_version=4)

        def count(nb, pattern):
            return sum(len(re.findall(pattern, c.source)) for c in nb.cells if c.cell_type == "markdown")

        assert count(pupil, r"\{exercise\}") == count(teacher, r"\{exercise\}") >= 3, page.name
        assert count(pupil, r"\{solution\}") == 0
        stubs = [c for c in pupil.cells if "exercise" in c.metadata.get("tags", [])]
        checks = [c for c in pupil.cells if "exercise-check" in c.metadata.get("tags", [])]
        assert len(stubs) == len([c for c in teacher.cells if "exercise" in c.metadata.get("tags", [])])
        for cell in stubs + checks:
            assert "raises-exception" in cell.metadata["tags"]
            assert cell.outputs == [] and cell.execution_count is None
        for cell in stubs:
            lines = [line.strip() for line in cell.source.splitlines()]
            assert make_student.CODE_STUB.splitlines()[-1] in lines, cell.source
            assert cell.metadata["nbgrader"]["solution"] is True
        for cell in pupil.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [], f"{page.name}: outputs must be stripped"


def test_instructor_cells_carry_nbgrader_metadata():
    ids = []
    for page in book_pages():
        if page.suffix != ".ipynb":
            continue
        for cell in nbformat.read(page, as_version=4).cells:
            tags = cell.metadata.get("tags", [])
            if "exercise" in tags:
                meta = cell.metadata["nbgrader"]
                assert meta["solution"] and not meta["grade"] and not meta["locked"]
                assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
                ids.append(meta["grade_id"])
            if "exercise-check" in tags:
                meta = cell.metadata["nbgrader"]
                assert meta["grade"] and meta["locked"] and not meta["solution"] and meta["points"] > 0
                assert "posenc.exercises.check_" in cell.source
                ids.append(meta["grade_id"])
    assert len(ids) == len(set(ids)) >= 12


def test_a_stub_raises_not_implemented(student):
    nb = nbformat.read(student / "chapters" / "03_sinusoidal_construction.ipynb", as_version=4)
    stub = next(c for c in nb.cells if "exercise" in c.metadata.get("tags", []))
    check = next(c for c in nb.cells if "exercise-check" in c.metadata.get("tags", []))
    namespace = {"np": np}
    exec(stub.source, namespace)  # defining the function works
    with pytest.raises(NotImplementedError, match="not yet implemented: write your code here"):
        exec(check.source, namespace)


def test_student_config_and_toc(student):
    assert "(student edition)" in (student / "_config.yml").read_text()
    config = yaml.safe_load((student / "_config.yml").read_text())
    launch = config["launch_buttons"]
    assert not launch["binderhub_url"] and not launch["colab_url"] and launch["thebe"] is False
    assert config["html"]["use_repository_button"] is False
    instructor = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert instructor["launch_buttons"]["thebe"] is True, "the instructor edition keeps them"
    assert "instructors" not in (student / "_toc.yml").read_text()
    assert not (student / "instructors.md").exists()


def test_the_student_preface_offers_no_pdf(student):
    # The PDF is typeset from the instructor's sources; the student site carries none.
    preface = (student / "intro.md").read_text()
    assert 'href="book.pdf"' not in preface and make_student.NO_PDF in preface
    assert 'href="book.pdf"' in (ROOT / "intro.md").read_text(), "the instructor's preface keeps it"
    with pytest.raises(make_student.StudentEditionError):
        make_student.student_preface("no link here")


@pytest.mark.skipif(
    not (BUILT / "html").is_dir(), reason="run `make student` first to build the student site"
)
def test_built_student_site_has_no_launch_buttons():
    # They would open the instructor chapters (solutions included) on Binder or Colab.
    pages = sorted((BUILT / "html" / "chapters").glob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text()
        for marker in ("mybinder.org", "colab.research.google.com", "launch-thebe", "initThebeSBT"):
            assert marker not in text, f"{page.name}: {marker}"
    # no PDF: the only one is the instructor's (make test never copies it here)
    assert not list((BUILT / "html").rglob("*.pdf"))
    assert 'href="book.pdf"' not in (BUILT / "html" / "intro.html").read_text()


@pytest.mark.skipif(
    not (BUILT / "html").is_dir(), reason="run `make student` first to build the student site"
)
def test_no_solution_in_the_built_student_site(secrets):
    texts = file_texts(BUILT / "html")
    assert any("_sources" in p.parts for p in texts), "the check must cover _sources/ too"
    found = leaks(secrets.lines, texts)
    fragments = secrets.fragments()
    assert len(fragments) >= 150
    found += leaks(fragments, {p: t for p, t in texts.items() if p.suffix == ".html"})
    assert not found, f"{len(found)} solution fragments in the built student site, e.g. {found[:5]}"
    # the same normalisation finds the exercise statements, so it would find solutions too
    statement = {
        f
        for body in secrets.exercise_text
        for line in body.split("\n")
        for f in html_fragments(line, code=False)
    }
    html_text = "\n".join(t for p, t in texts.items() if p.suffix == ".html")
    seen = sum(f in html_text for f in statement)
    assert seen >= 0.8 * len(statement), (
        f"only {seen} of {len(statement)} exercise fragments found in the HTML"
    )


# The marker format the chapters are converted to (tests/data/student_marker_format.ipynb)
# and the first format (tests/data/student_first_format.ipynb), on small fixtures.
DATA = ROOT / "tests" / "data"


def _run_cells(nb) -> dict[str, list[str]]:
    """Run the code cells in one namespace; the tags of the cells that raised, by exception name."""
    namespace: dict = {}
    raised: dict[str, list[str]] = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            exec(cell.source, namespace)
        except Exception as err:  # noqa: BLE001 (the test looks at which cells raise)
            raised.setdefault(type(err).__name__, []).append(",".join(cell.metadata.get("tags", [])))
    return raised


def test_marker_format_fixture_is_cleared_by_nbgrader():
    teacher = nbformat.read(DATA / "student_marker_format.ipynb", as_version=4)
    assert _run_cells(teacher) == {}, "the instructor fixture runs clean"
    pupil = make_student.student_version(teacher, "fixture")
    text = "\n".join(c.source for c in pupil.cells)
    assert "SECRET" not in text and "secret" not in text
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert "{solution" not in text, "the gate's start and end are cleared together"
    assert all(c.source.strip() for c in pupil.cells), "emptied Markdown cells are left out"
    assert not [c for c in pupil.cells if "solution-check" in c.metadata.get("tags", [])]
    statements = [c.source for c in pupil.cells if "{exercise}" in c.source]
    assert statements == [c.source for c in teacher.cells if "{exercise}" in c.source]
    solution_cell = next(c for c in pupil.cells if "solution" in c.metadata.get("tags", []))
    assert solution_cell.source == make_student.CODE_STUB
    exercise = next(c for c in pupil.cells if "exercise" in c.metadata.get("tags", []))
    assert exercise.source.startswith(
        'def my_double(x):\n    """Twice x."""\n    # YOUR CODE HERE\n    raise'
    )
    for cell in pupil.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    # the student copy executes: exactly the tagged cells raise, with the stub's error
    raised = _run_cells(pupil)
    assert raised == {"NotImplementedError": ["solution,raises-exception", "exercise-check,raises-exception"]}
    tagged = [c for c in pupil.cells if "raises-exception" in c.metadata.get("tags", [])]
    assert len(tagged) == 3  # the gated solution, the exercise (stub inside its function), its checker
    assert teacher == nbformat.read(DATA / "student_marker_format.ipynb", as_version=4), "input untouched"


def test_first_format_fixture_gets_markers_then_is_cleared():
    teacher = nbformat.read(DATA / "student_first_format.ipynb", as_version=4)
    marked = make_student.mark_legacy_solutions(teacher.cells[1].source)
    assert marked.count(make_student.MD_BEGIN) == 1 and marked.count(make_student.MD_END) == 1
    assert make_student.mark_legacy_solutions(marked) == marked, "marked text is left alone"
    pupil = make_student.student_version(teacher, "fixture")
    text = "\n".join(c.source for c in pupil.cells)
    assert "SECRET" not in text and "secret_old_code" not in text and "{solution" not in text
    assert "Do it." in text and "Text after the solution stays." in text
    assert len(pupil.cells) == 2  # title, exercise; the colon-fence solution and the checks are gone


def test_unbalanced_markers_and_unmarked_gates_are_refused():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("% BEGIN SOLUTION\nSECRET")])
    with pytest.raises(make_student.StudentEditionError, match="no end solution"):
        make_student.student_version(nb, "fixture")
    nb.cells[0].source = "% BEGIN SOLUTION\n% BEGIN SOLUTION\nx\n% END SOLUTION"
    with pytest.raises(make_student.StudentEditionError, match="nested"):
        make_student.student_version(nb, "fixture")
    with pytest.raises(make_student.StudentEditionError, match="gated"):
        make_student.mark_legacy_solutions("```{solution-start} e\n```\nSECRET", "fixture")


def test_the_clearing_is_nbgraders_configured_preprocessor():
    preprocessor = make_student.clear_solutions()
    assert type(preprocessor).__module__.startswith("nbgrader.preprocessors")
    assert preprocessor.enforce_metadata is False and preprocessor.text_stub == ""
    assert preprocessor.code_stub == {"python": make_student.CODE_STUB}
    assert "NotImplementedError" in make_student.CODE_STUB


def test_literalinclude_target_is_copied(student):
    assert (student / "posenc" / "reference.py").read_text() == (ROOT / "posenc" / "reference.py").read_text()
