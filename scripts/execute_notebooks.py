"""Execute chapter notebooks in place, storing their outputs and execution counts.

Usage: python scripts/execute_notebooks.py [chapters/NN_name.ipynb ...]
(no argument: every notebook in chapters/). Run it after changing a chapter or posenc;
nbval then checks that the stored outputs are what a fresh execution produces.
Each notebook runs in a fresh python3 kernel with chapters/ as working directory.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def execute(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    elapsed = time.perf_counter() - start
    # nbclient records wall-clock timestamps in cell metadata; drop them so that the
    # stored notebook only changes when its content does.
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return elapsed


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "chapters").glob("*.ipynb"))
    for p in paths:
        print(f"{p.name}: executing ...", flush=True)
        print(f"{p.name}: done in {execute(p):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
