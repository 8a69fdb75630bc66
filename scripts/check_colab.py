"""Check the chapters the way a fresh Colab runtime runs them, through their set-up cell.

Usage: python scripts/check_colab.py [--python python3] [--workdir DIR] [--edition DIR [--store]]
       [--jobs N] [chapters ...]

Colab opens one notebook from GitHub in ``/content`` with its own preinstalled packages
(numpy, matplotlib, sympy, mpmath, pytest, ipykernel, ...) and no posenc. This script
rebuilds that situation on this machine:

1. a "remote" git repository holding this checkout's committed ``HEAD`` as the branch
   ``repository.branch`` of ``_config.yml`` (the cell clones over ``file://`` instead of
   GitHub, the only change made to it);
2. a fresh virtual environment with only the packages Colab ships that the chapters use,
   at the versions of ``requirements.txt``; posenc and myst-nb are absent (checked);
3. the chapters, copied alone into an empty ``content/`` folder, executed top to bottom in
   that environment: the first run's set-up cell must clone, install posenc with its
   ``notebook`` extra and change into the clone's ``chapters/``; later chapters find posenc
   installed (as after a runtime restart) and only change directory.

It fails, naming the step, when an install or a cell fails, or when posenc did not come from
the environment's site-packages. Commit first: the clone sees committed files only.

``--edition DIR`` takes the chapters from ``DIR`` instead of ``chapters/``: `make test` runs
the student edition (``_build/student/chapters``, what a class uploads to Colab) this way,
and ``--store`` writes the executed notebooks back there (set-up cell as it was, without
outputs), so that the student site is built from this run instead of executing every
chapter once more. ``--jobs N`` runs the chapters after the first in N processes.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from types import ModuleType

import nbformat


def _sibling(name: str) -> ModuleType:
    """Another script of this folder, loaded by path (scripts/ is not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


check_binder = _sibling("check_binder")  # its command line, folders and steps
colab_cell = _sibling("colab_cell")

ROOT = check_binder.ROOT
# What Colab preinstalls among the chapters' needs (plus the kernel and the runner's nbclient).
PREINSTALLED = ("numpy", "matplotlib", "sympy", "mpmath", "pytest", "ipykernel", "nbclient", "nbformat")


def pinned(names: tuple[str, ...], requirements: Path) -> list[str]:
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", requirements.read_text(), flags=re.M))
    pins = {k.lower(): v for k, v in pins.items()}
    missing = [n for n in names if n not in pins]
    if missing:
        raise SystemExit(f"requirements.txt pins none of {missing}")
    return [f"{n}=={pins[n]}" for n in names]


def make_remote(dest: Path, branch: str) -> str:
    """A bare repository with this checkout's HEAD as ``branch``; returns its file:// URL."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    status = ["git", "status", "--porcelain", "--untracked-files=no"]
    dirty = subprocess.run(status, cwd=ROOT, capture_output=True)
    if dirty.stdout.strip():
        print("   note: uncommitted changes are not in the clone (it holds HEAD only)")
    check_binder.run(["git", "clone", "--quiet", "--bare", str(ROOT), str(dest)], ROOT, "bare copy of HEAD")
    ref = ["git", "update-ref", f"refs/heads/{branch}", head.stdout.strip()]
    check_binder.run(ref, dest, f"set {branch}")
    return dest.resolve().as_uri()


def colab_copy(src: Path, dest: Path, url: str, local_url: str) -> None:
    """Copy notebook ``src`` to ``dest`` with the set-up cell cloning ``local_url`` instead of ``url``."""
    nb = nbformat.read(src, as_version=4)
    needle = f'REPOSITORY_URL = "{url}"'
    cells = [c for c in nb.cells if colab_cell.is_setup_cell(c) and c.source.count(needle) == 1]
    if len(cells) != 1:
        raise SystemExit(f"FAILED: {src.name} has no set-up cell for {url} (run `make colab-cell`)")
    cells[0].source = cells[0].source.replace(needle, f'REPOSITORY_URL = "{local_url}"')
    nbformat.write(nb, dest)


def store_back(executed: Path, dest: Path, url: str, local_url: str) -> None:
    """Write ``executed`` to ``dest`` with its set-up cell cloning ``url`` again.

    (``execute_notebooks.py`` has already left the set-up cell without outputs.)
    """
    nb = nbformat.read(executed, as_version=4)
    for cell in nb.cells:
        if colab_cell.is_setup_cell(cell):
            cell.source = cell.source.replace(f'REPOSITORY_URL = "{local_url}"', f'REPOSITORY_URL = "{url}"')
    nbformat.write(nb, dest)


def parse_args(argv: list[str]):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default="python3", help="interpreter to create the environment with")
    parser.add_argument("--workdir", type=Path, help="work here (emptied first, kept afterwards)")
    parser.add_argument(
        "--edition", type=Path, default=ROOT / "chapters", help="folder of the chapters to run"
    )
    parser.add_argument("--store", action="store_true", help="write the executed chapters back to --edition")
    parser.add_argument("--jobs", type=int, default=1, help="processes for the chapters after the first")
    parser.add_argument("chapters", nargs="*", help="chapter notebooks (default: all)")
    args = parser.parse_args(argv)
    if args.store and args.edition.resolve() == (ROOT / "chapters").resolve():
        parser.error("--store writes into --edition: name a copy (the student edition), not chapters/")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    url, branch = colab_cell.repository_settings()
    step = check_binder.step
    with check_binder.work_folder(args.workdir, "colab-check-") as work:
        step(f"a remote holding HEAD as branch {branch!r} (stands in for {url})")
        name = colab_cell.checkout_name(url)
        local_url = make_remote(work / "remote" / f"{name}.git", branch)

        step("fresh environment with what Colab preinstalls: " + ", ".join(PREINSTALLED))
        py = check_binder.make_venv(args.python, work / "venv", work, with_pip=False)
        # The pip running this script installs into the new environment (``--python``), its own
        # version of pip included (the set-up cell calls ``python -m pip``): twice as fast as
        # ensurepip's bundled, older pip installing pip and then the packages.
        packages = [f"pip=={version('pip')}", *pinned(PREINSTALLED, ROOT / "requirements.txt")]
        install = [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "--quiet",
            "--no-compile",
            *packages,
        ]
        check_binder.run(install, work, "pip install")
        probe = "import importlib.util as u; print([m for m in ('posenc', 'myst_nb') if u.find_spec(m)])"
        found = subprocess.run([str(py), "-c", probe], cwd=work, capture_output=True, text=True, check=True)
        if found.stdout.strip() != "[]":
            raise SystemExit(f"FAILED: the Colab-like environment already has {found.stdout.strip()}")

        content = work / "content"
        content.mkdir()
        edition = args.edition.resolve()
        names = [Path(c).name for c in args.chapters] or sorted(p.name for p in edition.glob("*.ipynb"))
        if not names:
            raise SystemExit(f"FAILED: no chapter notebooks in {edition}")
        for n in names:
            colab_copy(edition / n, content / n, url, local_url)
        step(f"execute {len(names)} chapters of {edition.name}/ from an empty content/, set-up cell first")
        check_binder.execute_chapters(
            py,
            [content / n for n in names],
            content,
            expected_root=work / "venv",
            store=args.store,
            jobs=args.jobs,
        )
        if not (content / name / "chapters").is_dir():
            raise SystemExit(f"FAILED: the set-up cell did not clone into {content / name}")
        if args.store:
            for n in names:
                store_back(content / n, edition / n, url, local_url)
            step(f"executed chapters written back to {edition}")
        step(f"Colab check passed: {len(names)} chapters ran after the set-up cell installed posenc from git")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
