"""Check that the book runs the way Binder runs it: requirements.txt alone, every chapter.

Usage: python scripts/check_binder.py [--fresh] [--python python3] [--workdir DIR] [chapters ...]

Binder (repo2docker) starts from the repository's committed files, creates an environment
with the Python version of ``runtime.txt``, runs ``pip install -r requirements.txt`` from the
repository root and opens the notebooks.

By default (``make test``) the environment under test is ``--venv`` (``.venv-reader``), which
``make env-reader`` builds exactly that way and registers as the Jupyter kernel ``--kernel``
(``posenc-reader``). `make test`'s nbval stage runs every chapter in that kernel, so the
chapters are not executed a second time here; the script checks that the environment holds
exactly the pins of ``requirements.txt`` and nothing else (``pip freeze``), that ``posenc``
is imported in it from this checkout, that the kernel runs its Python, that its Python
matches ``runtime.txt`` (a warning otherwise), and that no file under ``chapters/`` or
``posenc/`` is untracked (Binder would not have it). The build, test and grading tools
(``requirements-dev.txt``) live in ``.venv``, which runs nbval but not the chapters.

``--fresh`` repeats everything from scratch instead, as before a release:

1. copies the files git tracks (their working-tree contents; untracked files, such as a
   data file never added, are left behind as Binder would leave them) to a temporary
   folder;
2. creates a fresh virtual environment there with ``--python`` (it warns when its version
   differs from ``runtime.txt``) and installs ``requirements.txt`` with that environment's
   own pip, nothing else;
3. executes every chapter top to bottom in that environment, in the chapter's folder
   (``scripts/execute_notebooks.py --check``), and checks that ``posenc`` was imported from
   the copy.

It fails, naming the step, when an install or a cell fails. The temporary folder is removed
afterwards; ``--workdir`` names a folder to use instead (emptied first, kept afterwards).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Not shown: pip's notice for each package about a missing local index folder listed in
# this machine's pip configuration, and ipykernel's notice that it uses local TCP.
NOISE = re.compile(
    r"^(?:\x1b\[[0-9;]*m)*"  # a colour code or two, where the output comes from a notebook cell
    r"(WARNING: Location 'file://\S+' is ignored|\[IPKernelApp\] WARNING \| Kernel is running over TCP)"
)


def step(message: str) -> None:
    print(f"== {message}", flush=True)


def run(cmd: list[str], cwd: Path, what: str) -> str:
    """Run ``cmd``, streaming its output; raise SystemExit naming ``what`` when it fails."""
    start = time.perf_counter()
    lines = []
    with subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            lines.append(line)
            if NOISE.match(line):
                continue
            sys.stdout.write("   " + line)
            sys.stdout.flush()
    if proc.returncode != 0:
        raise SystemExit(f"FAILED: {what} (exit {proc.returncode})")
    print(f"   {what}: {time.perf_counter() - start:.0f} s", flush=True)
    return "".join(lines)


def tracked_files(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True)
    return [name for name in out.stdout.split("\0") if name]


def copy_tracked(root: Path, dest: Path) -> int:
    files = tracked_files(root)
    for name in files:
        src = root / name
        if src.is_file():  # a tracked file deleted in the working tree is skipped
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return len(files)


def runtime_version(root: Path) -> str:
    m = re.fullmatch(r"python-(\d+\.\d+)\S*", (root / "runtime.txt").read_text().strip())
    if not m:
        raise SystemExit("runtime.txt must read python-X.Y")
    return m.group(1)


def make_venv(python: str, venv: Path, cwd: Path, with_pip: bool = True) -> Path:
    """A new virtual environment at ``venv`` (``with_pip=False``: without ensurepip's pip); its Python."""
    flags = [] if with_pip else ["--without-pip"]
    run([python, "-m", "venv", *flags, str(venv)], cwd, "create the virtual environment")
    return venv / "bin" / "python"


def venv_version(py: Path) -> str:
    code = "import sys; print('%d.%d' % sys.version_info[:2])"
    return subprocess.run([str(py), "-c", code], capture_output=True, text=True).stdout.strip()


def chapter_names(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "chapters").glob("*.ipynb"))


def check_origin(output: str, expected_root: Path) -> None:
    """Every 'posenc from <path>' line of ``execute_notebooks.py --check`` must lie in ``expected_root``."""
    origins = re.findall(r"^posenc from (.+)$", output, flags=re.M)
    outside = [o for o in origins if not Path(o).resolve().is_relative_to(expected_root.resolve())]
    if not origins or outside:
        raise SystemExit(f"FAILED: posenc was not imported from {expected_root}: {outside or 'no report'}")


def parse_args(argv: list[str], doc: str, fresh: bool = False) -> argparse.Namespace:
    """The command line shared by the Binder and Colab checks (``--fresh``: Binder's only)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    if fresh:
        parser.add_argument(
            "--fresh", action="store_true", help="copy, create a new environment and execute every chapter"
        )
        parser.add_argument(
            "--venv",
            type=Path,
            default=Path(".venv-reader"),
            help="the reader environment (default .venv-reader)",
        )
        parser.add_argument(
            "--kernel", default="posenc-reader", help="its kernel, the one nbval ran (default posenc-reader)"
        )
    parser.add_argument("--python", default="python3", help="interpreter to create the environment with")
    parser.add_argument("--workdir", type=Path, help="work here (emptied first, kept afterwards)")
    parser.add_argument("chapters", nargs="*", help="chapter notebooks (default: all)")
    return parser.parse_args(argv)


@contextlib.contextmanager
def work_folder(workdir: Path | None, prefix: str) -> Iterator[Path]:
    """An empty folder: ``workdir`` (emptied first, kept), or a temporary one removed afterwards."""
    if workdir is not None:
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        yield workdir
        return
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def execute_chapters(
    py: Path, notebooks: list[Path], cwd: Path, expected_root: Path, store: bool = False, jobs: int = 1
) -> None:
    """Run ``notebooks`` with ``py``; posenc must be imported from inside ``expected_root``.

    ``store`` keeps the outputs in the notebooks (``execute_notebooks.py --origin``) instead
    of only running them (``--check``). With ``jobs`` > 1 the first notebook runs alone (its
    set-up cell may install posenc) and the others are shared among ``jobs`` processes.
    """
    runner = ROOT / "scripts" / "execute_notebooks.py"
    command = [str(py), str(runner), "--origin" if store else "--check"]
    if jobs <= 1 or len(notebooks) <= 2:
        check_origin(run([*command, *map(str, notebooks)], cwd, "execute chapters"), expected_root)
        return
    first, rest = notebooks[0], notebooks[1:]
    check_origin(run([*command, str(first)], cwd, f"execute {first.name}"), expected_root)
    shares = [rest[i::jobs] for i in range(jobs)]
    procs = [
        subprocess.Popen(
            [*command, *map(str, share)], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for share in shares
    ]
    outputs = [proc.communicate()[0] for proc in procs]
    for proc, output in zip(procs, outputs, strict=True):
        sys.stdout.write(
            "".join("   " + line for line in output.splitlines(keepends=True) if not NOISE.match(line))
        )
        if proc.returncode != 0:
            raise SystemExit(f"FAILED: execute chapters (exit {proc.returncode})")
        check_origin(output, expected_root)
    sys.stdout.flush()


def pins(text: str) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` line (names lower-cased, ``_`` as ``-``)."""
    found = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)\s*$", text, flags=re.M)
    return {name.lower().replace("_", "-"): version for name, version in found}


def environment_differences(required: dict[str, str], installed: dict[str, str]) -> list[str]:
    """What ``installed`` lacks, has in another version, or has beyond ``required``."""
    problems = []
    for name in sorted(required.keys() | installed.keys()):
        want, have = required.get(name), installed.get(name)
        if want is None:
            problems.append(f"{name}=={have} is installed but not in requirements.txt")
        elif have is None:
            problems.append(f"{name}=={want} is in requirements.txt but not installed")
        elif want != have:
            problems.append(f"{name}: requirements.txt pins {want}, installed {have}")
    return problems


def freeze(python: Path) -> dict[str, str]:
    """``name -> version`` of what ``pip freeze`` lists in the environment of ``python`` (editables aside)."""
    out = subprocess.run(
        [str(python), "-m", "pip", "freeze", "--exclude-editable"], capture_output=True, text=True, check=True
    )
    return pins(out.stdout)


def posenc_origin(python: Path) -> Path:
    """Where ``python`` imports posenc from (run from ``/``, so not found through the working directory)."""
    code = "import posenc; print(posenc.__file__)"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True, cwd="/")
    return Path(out.stdout.strip()).resolve()


def kernel_python(venv: Path, kernel: str) -> Path:
    """The interpreter of kernel ``kernel`` whose spec ``make env-reader`` wrote inside ``venv``."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    manager = KernelSpecManager(kernel_dirs=[str(venv / "share" / "jupyter" / "kernels")])
    try:
        spec = manager.get_kernel_spec(kernel)
    except NoSuchKernel:
        raise SystemExit(
            f"FAILED: no kernel {kernel!r} registered in {venv} (run `make env-reader`)"
        ) from None
    return Path(spec.argv[0])


def check_reader_environment(venv: Path, kernel: str) -> None:
    """``venv`` is Binder's environment (requirements.txt, nothing else) and kernel ``kernel`` runs it."""
    venv = venv if venv.is_absolute() else ROOT / venv
    python = venv / "bin" / "python"
    step(f"the reader environment ({venv}) against requirements.txt")
    if not python.is_file():
        raise SystemExit(f"FAILED: {python} does not exist (run `make env-reader`)")
    installed = freeze(python)
    problems = environment_differences(pins((ROOT / "requirements.txt").read_text()), installed)
    if problems:
        raise SystemExit("FAILED: the environment is not requirements.txt's:\n   " + "\n   ".join(problems))
    print(f"   {len(installed)} packages, exactly the pins of requirements.txt")
    origin = posenc_origin(python)
    if not origin.is_relative_to(ROOT):
        raise SystemExit(f"FAILED: posenc is imported from {origin}, not from {ROOT}")
    print(f"   posenc from {origin.relative_to(ROOT)} (editable install)")
    runs = kernel_python(venv, kernel)
    # compare the venv's bin/ folders, not resolved files (every venv's python links to the same one)
    if Path(os.path.abspath(runs)).parent != Path(os.path.abspath(python)).parent:
        raise SystemExit(f"FAILED: kernel {kernel!r} runs {runs}, not {python}")
    print(f"   kernel {kernel!r} runs {python.relative_to(ROOT) if python.is_relative_to(ROOT) else python}")
    wanted, have = runtime_version(ROOT), venv_version(python)
    if wanted != have:
        print(f"   WARNING: runtime.txt asks for Python {wanted}; this environment has {have}")
    untracked = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "chapters", "posenc"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if untracked:
        raise SystemExit(f"FAILED: untracked files Binder would not have: {untracked}")
    step(
        f"Binder check passed: nbval ran every chapter in kernel {kernel!r}, an environment from "
        "requirements.txt alone"
    )


def main(argv: list[str]) -> int:
    args = parse_args(argv, __doc__, fresh=True)
    if not args.fresh:
        check_reader_environment(args.venv, args.kernel)
        return 0
    with work_folder(args.workdir, "binder-check-") as work:
        repo = work / "repo"
        step(f"copy the tracked files to {repo}")
        print(f"   {copy_tracked(ROOT, repo)} files")

        step("fresh virtual environment, then pip install -r requirements.txt (nothing else)")
        py = make_venv(args.python, work / "venv", repo)
        wanted, have = runtime_version(repo), venv_version(py)
        if wanted != have:
            print(f"   WARNING: runtime.txt asks for Python {wanted}; this environment has {have}")
        run([str(py), "-m", "pip", "install", "--quiet", "-r", "requirements.txt"], repo, "pip install")

        names = [Path(c).name for c in args.chapters] or chapter_names(repo)
        step(f"execute {len(names)} chapters top to bottom")
        execute_chapters(py, [repo / "chapters" / n for n in names], repo, expected_root=repo)
        step(f"Binder check passed: {len(names)} chapters ran in an environment from requirements.txt alone")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
