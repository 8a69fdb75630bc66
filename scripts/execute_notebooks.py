"""Execute chapter notebooks, storing their outputs in place (or, with --check, only running them).

Usage: python scripts/execute_notebooks.py [--check | --origin] [chapters/NN_name.ipynb ...]
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

``--origin`` (used by ``check_colab.py --store`` on the student edition) does both: it
stores the outputs and reports where ``posenc`` came from (the probe cell is not stored).
The Colab set-up cell's outputs (a clone's progress on stderr, where it ran) are not stored
either; the cell is hidden on the site.
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
SETUP_CELL_ID = "colab-setup"  # colab_cell.CELL_ID (not imported: this script runs with nbclient alone)


def merge_streams(outputs: list) -> list:
    """``outputs`` with each run of consecutive stream outputs of one name joined into one.

    The kernel sends printed text in chunks whose boundaries depend on timing; joined, the
    stored text is the same on every run (nbval and the book build join them too).
    """
    merged: list = []
    for out in outputs:
        last = merged[-1] if merged else None
        if (
            out.get("output_type") == "stream"
            and last is not None
            and last.get("output_type") == "stream"
            and last.get("name") == out.get("name")
        ):
            last["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def execute(path: Path, store: bool = True, origin: bool | None = None) -> tuple[float, str]:
    """Execute ``path``; return the seconds taken and, with ``origin``, where posenc came from.

    ``origin`` defaults to ``not store`` (the ``--check`` run).
    """
    origin = (not store) if origin is None else origin
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    if origin:
        nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    elapsed = time.perf_counter() - start
    found = ""
    if origin:
        probe = nb.cells.pop()
        text = "".join(o.get("text", "") for o in probe.outputs if o.output_type == "stream")
        found = text.strip().removeprefix("posenc from ").strip()
    if not store:
        return elapsed, found
    for cell in nb.cells:
        if cell.get("id") == SETUP_CELL_ID:  # the Colab set-up cell: its clone progress, where it ran
            cell.outputs = []  # (its execution count stays: nbval compares counted cells only)
    # A warning or error printed to stderr is a defect the book build rejects too
    # (`stderr_output: error`): name the cell instead of storing it.
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                where = f"{path.name}, cell {index} (id {cell.get('id')})"
                raise RuntimeError(f"{where} wrote to stderr:\n{out['text']}")
    # nbclient records wall-clock timestamps in cell metadata; drop them so that the
    # stored notebook only changes when its content does. For the same reason a cell's
    # printed text is stored as one output, however the kernel happened to flush it.
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return elapsed, found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="only run; report where posenc came from")
    mode.add_argument(
        "--origin", action="store_true", help="store the outputs and report where posenc came from"
    )
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.notebooks] or sorted((ROOT / "chapters").glob("*.ipynb"))
    for i, path in enumerate(paths, 1):
        print(f"[{i}/{len(paths)}] {path.name}: executing in {sys.prefix} ...", flush=True)
        try:
            seconds, origin = execute(path, store=not args.check, origin=args.check or args.origin)
        except CellExecutionError as err:
            if not (args.check or args.origin):
                raise
            print(f"FAILED {path.name}:\n{err}", flush=True)
            return 1
        print(f"[{i}/{len(paths)}] {path.name}: done in {seconds:.1f} s", flush=True)
        if args.check or args.origin:
            print(f"posenc from {origin}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
