"""Execute chapter notebooks, storing their outputs in place (or, with --check, only running them).

Usage: python scripts/execute_notebooks.py [--check] [chapters/NN_name.ipynb ...]
(no notebook: every notebook in chapters/). Run it after changing a chapter or posenc;
nbval then checks that the stored outputs are what a fresh execution produces.

Each notebook runs in a fresh ``python3`` kernel of the interpreter running this script,
with the notebook's folder as working directory (as Jupyter and Colab do). It needs only
``nbclient``, ``nbformat`` and ``ipykernel``.

``--check`` (used by ``check_binder.py`` and ``check_colab.py`` with the Python of the
environment under test) writes nothing: a cell that raises stops the run with the chapter,
the cell and the error (exit 1), and after the last cell the kernel reports where it
imported ``posenc`` from, printed as ``posenc from <path>``, so the caller can check that
the environment under test, not some other checkout, provided it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
PROBE = "import posenc as _p\nprint('posenc from', _p.__file__)"


def execute(path: Path, store: bool = True) -> tuple[float, str]:
    """Execute ``path``; return the seconds taken and, when not storing, where posenc came from."""
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    if not store:
        nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    elapsed = time.perf_counter() - start
    # A warning or error printed to stderr is a defect the book build rejects too
    # (`stderr_output: error`): name the cell instead of storing it. (With --check, the
    # Colab set-up cell's git clone reports its progress on stderr.)
    for index, cell in enumerate(nb.cells if store else []):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                where = f"{path.name}, cell {index} (id {cell.get('id')})"
                raise RuntimeError(f"{where} wrote to stderr:\n{out['text']}")
    if not store:
        text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
        return elapsed, text.strip().removeprefix("posenc from ").strip()
    # nbclient records wall-clock timestamps in cell metadata; drop them so that the
    # stored notebook only changes when its content does.
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return elapsed, ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only run; report where posenc came from")
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.notebooks] or sorted((ROOT / "chapters").glob("*.ipynb"))
    for i, path in enumerate(paths, 1):
        print(f"[{i}/{len(paths)}] {path.name}: executing in {sys.prefix} ...", flush=True)
        try:
            seconds, origin = execute(path, store=not args.check)
        except CellExecutionError as err:
            if not args.check:
                raise
            print(f"FAILED {path.name}:\n{err}", flush=True)
            return 1
        print(f"[{i}/{len(paths)}] {path.name}: done in {seconds:.1f} s", flush=True)
        if args.check:
            print(f"posenc from {origin}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
