"""`.ci/run` asks apt-get only for what the machine lacks.

A machine whose Node.js comes from NodeSource has `npm` already, and that `nodejs` package
conflicts with Debian's `npm`: asking apt-get for `npm` there makes it refuse the whole
install, chromium included, and CI stops before `make test`. Here `.ci/run` runs with a
`PATH` of stubs (apt-get records what it is asked for; make, id and the TeX tools answer as
on a root machine with TeX installed), so nothing is installed and no test is run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def run_ci(tmp_path: Path, present: set[str]) -> list[list[str]]:
    """Run .ci/run with stubs for the commands in ``present``; return the apt-get install calls."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "apt.log"
    for tool in ("bash", "dirname", "cat", "sh"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    stub(bin_dir, "python3", "echo Python 3")
    stub(bin_dir, "id", "echo 0")
    stub(bin_dir, "make", 'echo "make $*" >> ' + str(tmp_path / "make.log"))
    stub(bin_dir, "apt-get", 'echo "$*" >> ' + str(log))
    for tool in present:
        stub(bin_dir, tool, "exit 0")
    env = {k: v for k, v in os.environ.items() if k != "PATH"}
    env["PATH"] = str(bin_dir)
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "make.log").read_text().split() == ["make", "test"]
    calls = log.read_text().splitlines() if log.exists() else []
    return [c.split() for c in calls if " install " in f" {c} "]


TEX = {"xelatex", "latexmk", "pdftotext"}


@pytest.mark.parametrize(
    ("present", "asked"),
    [
        ({"npm"}, {"chromium", "chromium-driver"}),  # NodeSource's nodejs ships npm
        ({"chromium", "chromedriver"}, {"npm"}),
        (set(), {"chromium", "chromium-driver", "npm"}),
        ({"chromium", "chromedriver", "npm"}, None),  # nothing to install
    ],
    ids=["npm-present", "browser-present", "nothing-present", "all-present"],
)
def test_browser_packages_asked_for_are_only_the_missing_ones(tmp_path, present, asked):
    installs = run_ci(tmp_path, present | TEX)
    if asked is None:
        assert installs == []
        return
    assert len(installs) == 1, installs
    packages = {word for word in installs[0] if not word.startswith("-") and word != "install"}
    assert packages == asked
