"""Write the student edition of the book: the same sources with every solution removed.

Usage: python scripts/make_student.py [--out _build/student]

Copies the book sources (``_config.yml``, ``_toc.yml``, the Markdown pages, ``chapters/``,
``references.bib``, ``_ext/``, ``_static/`` and any other page the table of contents lists)
into ``--out`` (wiped first) and, on the way:

* removes every ``{solution}`` directive (backtick or colon fences, any fence length) and
  every gated ``{solution-start}`` ... ``{solution-end}`` region, with the cells between;
* drops the cells tagged ``solution-check`` (the hidden cells that certify claims made in
  the solutions, and the sentence announcing them);
* in each code cell tagged ``exercise`` (nbgrader solution cells) replaces the region
  between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` with
  ``raise NotImplementedError("Exercise N.M is not yet implemented: ...")`` (a cell without
  the markers is replaced whole), and tags it and the ``exercise-check`` cells
  ``raises-exception`` so that the student book still executes and builds;
* strips every output and execution count (the build re-executes the chapters);
* leaves the instructor page (``instructors.md``) out of the student table of contents.

Only the files are written; ``make student`` then builds ``<out>/html`` with jupyter-book.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
INSTRUCTOR_ONLY = {"instructors.md", "README.md", "CONTRIBUTING.md"}
COPY_DIRS = ("_ext", "_static")
COPY_FILES = ("references.bib",)
PAGE_SUFFIXES = (".ipynb", ".md", ".rst")
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\{(?P<name>solution(?:-start|-end)?)\}")
_EXERCISE = re.compile(r"^\s*(?:`{3,}|:{3,})\{exercise(?:-start)?\}[ \t]*(.*)$", flags=re.M)


LAUNCH_OFF = {"binderhub_url": '""', "colab_url": '""', "thebe": "false", "use_repository_button": "false"}


class StudentEditionError(RuntimeError):
    """The instructor sources do not follow the conventions this script relies on."""


def _block_end(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing the directive opened at ``lines[start]`` with ``fence``."""
    char = fence[0]
    for k in range(start + 1, len(lines)):
        stripped = lines[k].strip()
        if stripped and set(stripped) == {char} and len(stripped) >= len(fence):
            return k
    raise StudentEditionError(f"unclosed {{solution}} directive: {lines[start].strip()!r}")


def strip_solutions(text: str, in_gate: bool = False) -> tuple[str, bool]:
    """Remove solution directives from Markdown ``text``.

    Returns the text and whether a gated ``solution-start`` region is still open at its
    end (the following cells then belong to the solution too).
    """
    lines = text.split("\n")
    out: list[str] = []
    k = 0
    while k < len(lines):
        m = _OPEN.match(lines[k])
        if in_gate:
            if m and m.group("name") == "solution-end":
                in_gate = False
                k = _block_end(lines, k, m.group("fence")) + 1
            else:
                k += 1
            continue
        if m is None:
            out.append(lines[k])
            k += 1
            continue
        end = _block_end(lines, k, m.group("fence"))
        if m.group("name") == "solution-start":
            in_gate = True
        k = end + 1
        # drop the blank line that separated the removed block from the next one
        if out and not out[-1].strip() and k < len(lines) and not lines[k].strip():
            k += 1
    cleaned = "\n".join(out)
    cleaned = re.sub(r"\n{3,}", "\n\n", cleaned).strip("\n")
    return cleaned, in_gate


def _stub(source: str, label: str, title: str = "") -> str:
    """Replace the marked solution region (or the whole cell) by a NotImplementedError."""
    names = re.findall(r"^\s*def\s+(\w+)", source, flags=re.M)
    what = f"write the body of {names[0]}()" if names else "write this cell"
    title = re.sub(r"^\((?:easy|medium|hard)\)\s*", "", title).strip()
    named = f" ({title})" if title else ""
    message = f"Exercise {label}{named} is not yet implemented: {what}, then run the checker cell below."
    lines = source.split("\n")
    begins = [k for k, line in enumerate(lines) if line.strip() == BEGIN]
    ends = [k for k, line in enumerate(lines) if line.strip() == END]
    if not begins:
        return f"# YOUR CODE HERE\nraise NotImplementedError({message!r})"
    if len(begins) != len(ends):
        raise StudentEditionError(f"unbalanced {BEGIN!r}/{END!r} markers in an exercise cell")
    out: list[str] = []
    k = 0
    for b, e in zip(begins, ends, strict=True):
        if e < b:
            raise StudentEditionError(f"{END!r} before {BEGIN!r} in an exercise cell")
        indent = lines[b][: len(lines[b]) - len(lines[b].lstrip())]
        out.extend(lines[k:b])
        out.append(f"{indent}# YOUR CODE HERE")
        out.append(f"{indent}raise NotImplementedError({message!r})")
        k = e + 1
    out.extend(lines[k:])
    return "\n".join(out)


def _add_tag(cell: nbformat.NotebookNode, tag: str) -> None:
    tags = list(cell.metadata.get("tags", []))
    if tag not in tags:
        tags.append(tag)
    cell.metadata["tags"] = tags


def chapter_number(path: Path) -> str:
    m = re.match(r"(\d+)_", path.name)
    return str(int(m.group(1))) if m else path.stem


def student_notebook(path: Path) -> nbformat.NotebookNode:
    """The student version of one chapter notebook."""
    nb = nbformat.read(path, as_version=4)
    number = chapter_number(path)
    cells = []
    in_gate = False
    exercises_seen = 0
    title = ""
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "markdown":
            titles = _EXERCISE.findall(cell.source)
            exercises_seen += len(titles)
            title = titles[-1] if titles else title
        if "solution-check" in tags:
            continue
        if in_gate:
            if cell.cell_type != "markdown":
                continue
            cell.source, in_gate = strip_solutions(cell.source, in_gate=True)
        elif cell.cell_type == "markdown":
            cell.source, in_gate = strip_solutions(cell.source)
        if cell.cell_type == "markdown":
            if cell.source.strip():
                cells.append(cell)
            continue
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
            if "exercise" in tags:
                cell.source = _stub(cell.source, f"{number}.{max(exercises_seen, 1)}", title)
                _add_tag(cell, "raises-exception")
            elif "exercise-check" in tags:
                _add_tag(cell, "raises-exception")
        cells.append(cell)
    if in_gate:
        raise StudentEditionError(f"{path.name}: a {{solution-start}} has no {{solution-end}}")
    nb.cells = cells
    return nb


def student_markdown(text: str, name: str) -> str:
    cleaned, in_gate = strip_solutions(text)
    if in_gate:
        raise StudentEditionError(f"{name}: a {{solution-start}} has no {{solution-end}}")
    return cleaned + "\n"


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
