"""Execute notebooks top to bottom in the running interpreter's environment, without saving.

Usage: python scripts/run_notebooks.py NOTEBOOK.ipynb [...]

Used by ``check_binder.py`` and ``check_colab.py``, which call it with the Python of the
environment under test; it needs only ``nbclient``, ``nbformat`` and ``ipykernel`` there.
Each notebook runs in a fresh ``python3`` kernel of this interpreter, with the notebook's
folder as working directory (as Jupyter and Colab do). A cell that raises stops the run
with the chapter, the cell and the error. After the last cell, the kernel reports where it
imported ``posenc`` from, printed as ``posenc from <path>`` so the caller can check that
the environment under test, not some other checkout, provided it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

PROBE = "import posenc as _p\nprint('posenc from', _p.__file__)"


def run(path: Path) -> tuple[float, str]:
    """Execute ``path``; return the seconds taken and the path posenc was imported from."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    start = time.perf_counter()
    client = NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    elapsed = time.perf_counter() - start
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    return elapsed, text.strip().removeprefix("posenc from ").strip()


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for i, name in enumerate(argv, 1):
        path = Path(name).resolve()
        print(f"[{i}/{len(argv)}] {path.name}: executing in {sys.prefix} ...", flush=True)
        try:
            seconds, origin = run(path)
        except CellExecutionError as err:
            print(f"FAILED {path.name}:\n{err}", flush=True)
            return 1
        print(f"[{i}/{len(argv)}] {path.name}: ok in {seconds:.1f} s", flush=True)
        print(f"posenc from {origin}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
