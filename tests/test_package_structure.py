"""The shape of the package: module sizes, private names, a test file for every module.

These are the maintainers' rules of CONTRIBUTING.md ("Adding a posenc function"): small
modules, simple kernels, public names across module boundaries, tests mirroring posenc.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "posenc"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
# The private modules that hold the fast paths of the tables and rotations.
KERNELS = ["_exact.py", "_rope_inputs.py", "_rotate.py", "_table.py"]


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_is_at_most_400_lines(path: Path):
    assert _lines(path) <= 400, f"{path.relative_to(ROOT)} has {_lines(path)} lines"


def test_the_kernels_are_at_most_700_lines_together():
    sizes = {name: _lines(PACKAGE / name) for name in KERNELS}
    assert sum(sizes.values()) <= 700, sizes


def _imported_names(path: Path) -> list[tuple[str, str]]:
    """``(module, name)`` for every ``from module import name`` of ``path``."""
    tree = ast.parse(path.read_text())
    return [
        ("." * node.level + (node.module or ""), alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_another_modules_underscore_name(path: Path):
    private = [f"{module}.{name}" for module, name in _imported_names(path) if name.startswith("_")]
    assert not private, f"{path.relative_to(ROOT)} imports {private}"


def test_the_underscore_check_sees_an_underscore_import(tmp_path: Path):
    module = tmp_path / "m.py"
    module.write_text("import numpy as np\n\nfrom .rope import _frequencies, apply_rope\n")
    assert _imported_names(module) == [(".rope", "_frequencies"), (".rope", "apply_rope")]


def test_no_chapter_reaches_into_posenc_private_names():
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        sources = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])
        assert "posenc._" not in sources, path.name


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if not p.name.startswith("_")],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_every_public_module_has_its_test_file(path: Path):
    folder = path.parent.relative_to(PACKAGE)
    assert (ROOT / "tests" / folder / f"test_{path.stem}.py").is_file()
