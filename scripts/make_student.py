"""Write the student edition of the book: the same sources with every solution cleared by nbgrader.

Usage: python scripts/make_student.py [--out _build/student]

The clearing is nbgrader's own ``ClearSolutions`` preprocessor, configured (see
``clear_solutions()``), not reimplemented. It reads each cell's lines; a line containing
``BEGIN SOLUTION`` opens a region, the next line containing ``END SOLUTION`` closes it, and
the whole region, marker lines included, is replaced by the stub, indented like the
``BEGIN`` line:

* in a Markdown cell, lines ``% BEGIN SOLUTION`` / ``% END SOLUTION`` (MyST comments,
  invisible on the site) around a ``{solution}`` directive, a ``{solution-start}`` opening
  or a ``{solution-end}`` closing become ``TEXT_STUB`` (nothing); ``enforce_metadata`` is
  off, so these Markdown cells need no nbgrader metadata;
* in a code cell, ``### BEGIN SOLUTION`` / ``### END SOLUTION`` (code exercises tagged
  ``exercise``, gated solution cells tagged ``solution``) become ``CODE_STUB``, which raises
  ``NotImplementedError`` where the student's code belongs;
* an nbgrader solution cell without markers is replaced whole by the stub.

Around that, this script copies the book sources (``_config.yml``, ``_toc.yml``, the
Markdown pages, ``chapters/``, ``references.bib``, ``_ext/``, ``_static/``, and
``posenc/reference.py``, which chapters show with ``literalinclude``) into ``--out`` (wiped
first), and with nbformat:

* leaves out the cells tagged ``solution-check`` (hidden cells that certify claims made in
  solutions) and the Markdown cells the clearing emptied;
* strips every output and execution count (nbgrader's ``ClearOutput``; the build
  re-executes the chapters);
* tags ``raises-exception`` the cells that must raise in the student copy, so the student
  book still executes and builds: every code cell the clearing changed and every checker
  cell (``exercise-check``: its checker raises ``posenc.exercises.ExerciseError``, or the
  stub's ``NotImplementedError`` passes through it);
* writes a student ``_config.yml`` (title marked, launch buttons, Thebe and the repository
  link off: they would open the instructor chapters) and a table of contents without the
  instructor page (``instructors.md``);
* replaces the preface's paragraph that offers ``book.pdf`` by a sentence saying the student
  edition has none (the PDF is typeset from the instructor's sources).

Chapters still in the first format (solutions as ```` ```python ```` fences inside
``{solution}`` directives, no markers) are handled by ``mark_legacy_solutions()``, which
only adds the ``% BEGIN SOLUTION`` / ``% END SOLUTION`` lines around each unmarked
``{solution}`` directive before nbgrader clears it.

Only the files are written; ``make student`` then builds ``<out>/html`` with jupyter-book.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearOutput, ClearSolutions
from traitlets.config import Config

ROOT = Path(__file__).resolve().parent.parent
INSTRUCTOR_ONLY = {"instructors.md", "README.md", "CONTRIBUTING.md"}
COPY_DIRS = ("_ext", "_static", "_templates")
COPY_FILES = ("references.bib", "posenc/reference.py", "CITATION.cff")
PAGE_SUFFIXES = (".ipynb", ".md", ".rst")

TEXT_STUB = ""
CODE_STUB = '# YOUR CODE HERE\nraise NotImplementedError("not yet implemented: write your code here")'
MD_BEGIN, MD_END = "% BEGIN SOLUTION", "% END SOLUTION"
LAUNCH_OFF = {"binderhub_url": '""', "colab_url": '""', "thebe": "false", "use_repository_button": "false"}
_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\{(?P<name>solution(?:-start|-end)?)\}")


class StudentEditionError(RuntimeError):
    """The instructor sources do not follow the conventions this script relies on."""


def clear_solutions() -> ClearSolutions:
    """nbgrader's ClearSolutions, configured for the book."""
    config = Config()
    # Markdown solution cells carry no nbgrader metadata (they are not graded).
    config.ClearSolutions.enforce_metadata = False
    config.ClearSolutions.text_stub = TEXT_STUB
    config.ClearSolutions.code_stub = {"python": CODE_STUB}
    return ClearSolutions(config=config)


def _block_end(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing the directive opened at ``lines[start]`` with ``fence``."""
    char = fence[0]
    for k in range(start + 1, len(lines)):
        stripped = lines[k].strip()
        if stripped and set(stripped) == {char} and len(stripped) >= len(fence):
            return k
    raise StudentEditionError(f"unclosed {{solution}} directive: {lines[start].strip()!r}")


def mark_legacy_solutions(text: str, where: str = "") -> str:
    """First-format Markdown: put marker lines around each unmarked ``{solution}`` directive.

    Text that already has markers is returned unchanged. An unmarked gated solution
    (``{solution-start}``) cannot be handled this way: its code cells would stay.
    """
    if "BEGIN SOLUTION" in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    k = 0
    while k < len(lines):
        m = _OPEN.match(lines[k])
        if m is None:
            out.append(lines[k])
            k += 1
            continue
        if m.group("name") != "solution":
            raise StudentEditionError(
                f"{where}: a gated {{{m.group('name')}}} without {MD_BEGIN!r} / {MD_END!r} marker lines"
            )
        end = _block_end(lines, k, m.group("fence"))
        out += [MD_BEGIN, *lines[k : end + 1], MD_END]
        k = end + 1
    return "\n".join(out)


def _add_tag(cell: nbformat.NotebookNode, tag: str) -> None:
    tags = list(cell.metadata.get("tags", []))
    if tag not in tags:
        tags.append(tag)
    cell.metadata["tags"] = tags


def student_version(nb: nbformat.NotebookNode, where: str = "") -> nbformat.NotebookNode:
    """The student version of an instructor notebook (a copy; ``nb`` is left alone)."""
    nb = nbformat.from_dict(nb)
    nb.cells = [c for c in nb.cells if "solution-check" not in c.metadata.get("tags", [])]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = mark_legacy_solutions(cell.source, where)
    before = [c.source for c in nb.cells]
    try:
        nb, _ = clear_solutions().preprocess(nb, {})
    except RuntimeError as err:  # nbgrader: nested or unclosed BEGIN SOLUTION
        raise StudentEditionError(f"{where}: {err}") from err
    nb, _ = ClearOutput().preprocess(nb, {})
    cells = []
    for cell, source in zip(nb.cells, before, strict=True):
        if cell.cell_type == "markdown" and not cell.source.strip():
            continue  # the whole cell was a solution
        if cell.cell_type == "code":
            cell.metadata.pop("execution", None)
            tags = cell.metadata.get("tags", [])
            if cell.source != source or "exercise-check" in tags:
                _add_tag(cell, "raises-exception")
        cells.append(cell)
    nb.cells = cells
    return nb


def student_notebook(path: Path) -> nbformat.NotebookNode:
    """The student version of one chapter notebook."""
    return student_version(nbformat.read(path, as_version=4), path.name)


def student_markdown(text: str, name: str) -> str:
    """A Markdown page with its solutions cleared the same way (as a one-cell notebook)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    cells = student_version(nb, name).cells
    return (cells[0].source.rstrip("\n") + "\n") if cells else ""


# The PDF edition is typeset from the instructor's sources (instructors.md included), so the
# student site carries none; its preface says so instead of linking book.pdf.
NO_PDF = "This student edition has no PDF: the PDF edition is built with the instructor's pages."


def student_preface(text: str) -> str:
    """The preface with its paragraph offering book.pdf replaced by ``NO_PDF``."""
    paragraphs = text.split("\n\n")
    offering = [i for i, para in enumerate(paragraphs) if 'href="book.pdf"' in para]
    if len(offering) != 1:
        raise StudentEditionError(f"intro.md: {len(offering)} paragraphs link book.pdf, expected 1")
    paragraphs[offering[0]] = NO_PDF
    return "\n\n".join(paragraphs)


def toc_files(toc_text: str) -> list[str]:
    return re.findall(r"^\s*-?\s*(?:file|root):\s*(\S+)\s*$", toc_text, flags=re.M)


def student_config(text: str) -> str:
    text = re.sub(r'^title:\s*"?(.*?)"?\s*$', r'title: "\1 (student edition)"', text, count=1, flags=re.M)
    # the built site lives in <out>/html, inside the source folder: never read it back in
    text = re.sub(r"^exclude_patterns:\s*\[", "exclude_patterns: [html, ", text, count=1, flags=re.M)
    # No launch buttons or repository link: they open the instructor chapters, solutions included.
    for key, value in LAUNCH_OFF.items():
        text, n = re.subn(rf"^(\s*{key}:)\s*\S.*$", rf"\1 {value}", text, count=1, flags=re.M)
        if n != 1:
            raise StudentEditionError(f"_config.yml has no {key!r} to switch off")
    return text


def student_toc(text: str) -> str:
    return "".join(
        line
        for line in text.splitlines(keepends=True)
        if not re.match(r"^\s*-\s*file:\s*instructors\s*$", line)
    )


def _resolve(stem: str) -> Path | None:
    for ext in ("", ".md", ".ipynb", ".rst"):
        path = ROOT / f"{stem}{ext}"
        if path.is_file():
            return path
    return None


def write_page(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.suffix == ".ipynb":
        nbformat.write(student_notebook(src), dst)
    elif src.name == "intro.md":
        dst.write_text(student_markdown(student_preface(src.read_text()), src.name))
    elif src.suffix == ".md":
        dst.write_text(student_markdown(src.read_text(), src.name))
    else:
        shutil.copy2(src, dst)


def make_student(out: Path) -> list[Path]:
    """Write the student sources into ``out`` (wiped first); return the pages written."""
    out = out.resolve()
    if out == ROOT or ROOT.is_relative_to(out):
        raise StudentEditionError(f"refusing to overwrite {out}")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / "_config.yml").write_text(student_config((ROOT / "_config.yml").read_text()))
    toc = student_toc((ROOT / "_toc.yml").read_text())
    (out / "_toc.yml").write_text(toc)
    for name in COPY_FILES:
        if (ROOT / name).is_file():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, out / name)
    for name in COPY_DIRS:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, out / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints")
            )
    pages: list[Path] = []
    # every page of the toc, plus the other files below chapters/ (images, data files)
    # (pages outside the toc are not built, `only_build_toc_files`, and may be half written)
    sources = {_resolve(stem) for stem in toc_files(toc)}
    sources |= {
        p
        for p in (ROOT / "chapters").rglob("*")
        if p.is_file() and p.suffix not in PAGE_SUFFIXES and "__pycache__" not in p.parts
    }
    for src in sorted(p for p in sources if p is not None):
        rel = src.relative_to(ROOT)
        if rel.name in INSTRUCTOR_ONLY or ".ipynb_checkpoints" in rel.parts:
            continue
        write_page(src, out / rel)
        pages.append(out / rel)
    return pages


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "_build" / "student"), help="output folder (wiped first)")
    args = parser.parse_args(argv)
    pages = make_student(Path(args.out))
    print(f"student edition: {len(pages)} pages written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
