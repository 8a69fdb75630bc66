"""Write (or check) the hidden Colab set-up cell at the top of every chapter.

Usage: python scripts/colab_cell.py [--check]

The cell is generated from ``repository.url`` and ``repository.branch`` in ``_config.yml``,
the one place the repository's address is set. Run without arguments after changing
them; ``--check`` only reports chapters whose cell is missing or out of date (exit 1).

What the cell does, in a kernel where ``posenc`` cannot be imported (a fresh Colab
runtime): clone the repository (shallow, the configured branch) into the working
directory, ``pip install`` it with the ``notebook`` extra (myst-nb for ``glue``; the rest
of a chapter's imports come with Colab), and change into the clone's ``chapters/`` so
that data files load by the same relative paths as in the repository. Where ``posenc``
is installed (a local checkout, Binder, the book build, nbval) it runs no command,
prints nothing and leaves the working directory alone. The cell is tagged
``remove-cell`` (absent from the site) and shown collapsed as a form in Colab.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
CELL_ID = "colab-setup"
CELL_METADATA = {"cellView": "form", "tags": ["remove-cell"]}

TEMPLATE = """\
# @title Colab set-up: installs posenc if it is missing (does nothing elsewhere)
import importlib.util
import os
import subprocess
import sys

REPOSITORY_URL = "{url}"  # repository.url in _config.yml
BRANCH = "{branch}"
_checkout = os.path.abspath("{name}")  # where the clone goes: the repository's name
if importlib.util.find_spec("posenc") is None:
    if not os.path.isdir(_checkout):
        _clone = ["git", "clone", "--quiet", "--depth=1", f"--branch={{BRANCH}}", REPOSITORY_URL, _checkout]
        subprocess.run(_clone, check=True)
    _install = [sys.executable, "-m", "pip", "install", "--quiet", f"{{_checkout}}[notebook]"]
    subprocess.run(_install, check=True)
    importlib.invalidate_caches()
if os.path.isdir(os.path.join(_checkout, "chapters")):
    os.chdir(os.path.join(_checkout, "chapters"))  # chapters read data/ relative to their folder"""


def repository_settings(config: Path = ROOT / "_config.yml") -> tuple[str, str]:
    """``(url, branch)`` from the ``repository`` section of the book's ``_config.yml``."""
    repo = (yaml.safe_load(config.read_text()) or {}).get("repository") or {}
    url, branch = str(repo.get("url") or ""), str(repo.get("branch") or "")
    url = url.rstrip("/")
    if not url.startswith("https://github.com/") or len(url.split("/")) != 5 or url.endswith(".git"):
        raise SystemExit(f"{config}: repository.url must be https://github.com/<owner>/<name>, got {url!r}")
    if not branch:
        raise SystemExit(f"{config}: repository.branch is not set (the launch buttons would use 'master')")
    return url, branch


def checkout_name(url: str) -> str:
    """The folder ``git clone`` makes for ``url``: the repository's name."""
    return url.rsplit("/", 1)[-1]


def cell_source(url: str, branch: str) -> str:
    """The set-up cell's code for repository ``url`` at ``branch``."""
    for value in (url, branch):
        if any(ch in value for ch in '"\\\n{}'):
            raise ValueError(f"unsafe character in repository setting {value!r}")
    return TEMPLATE.format(url=url, branch=branch, name=checkout_name(url))


def is_setup_cell(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and cell.get("id") == CELL_ID


def sync(path: Path, source: str, check: bool) -> bool:
    """Put the set-up cell first in ``path``; return whether the file was (or would be) changed."""
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0] if nb.cells else None
    if first is not None and is_setup_cell(first):
        if first.source == source and dict(first.metadata) == CELL_METADATA:
            return False
        if check:
            return True
        first.source = source
        first.metadata = nbformat.from_dict(CELL_METADATA)
    else:
        if check:
            return True
        cell = nbformat.v4.new_code_cell(source=source, metadata=CELL_METADATA)
        cell.id = CELL_ID
        nb.cells.insert(0, cell)
    nbformat.write(nb, path)
    return True


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only report out-of-date chapters")
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    source = cell_source(*repository_settings())
    paths = args.notebooks or sorted((ROOT / "chapters").glob("*.ipynb"))
    changed = [p for p in paths if sync(p, source, args.check)]
    for p in changed:
        print(f"{p.name}: set-up cell {'out of date' if args.check else 'written'}")
    if args.check and changed:
        print("run `make colab-cell` (then `make notebooks`) after changing repository.url or .branch")
        return 1
    if not args.check and changed:
        print("re-execute the changed chapters: make notebooks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
