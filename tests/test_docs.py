"""The maintainer's documents: README as a short front door, `make help` as the list of targets.

README is read by someone who has just found the repository: it must stay short, show how
to get and build the book, and show a page of it. Everything a maintainer needs lives in
CONTRIBUTING.md, and every make target says what it does in `make help`.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text()
MAKEFILE = (ROOT / "Makefile").read_text()
URL = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _code_lines(markdown: str, language: str) -> list[str]:
    """The lines of every fenced block of ``language``, comments after ``#`` removed."""
    blocks = re.findall(rf"^```{language}\n(.*?)^```", markdown, flags=re.M | re.S)
    lines = (line.split("#")[0].strip() for block in blocks for line in block.splitlines())
    return [line for line in lines if line]


def _phony_targets() -> set[str]:
    declared = re.findall(r"^\.PHONY:(.*)$", MAKEFILE, flags=re.M)
    return {name for line in declared for name in line.split()}


# The one image from outside the repository: the test workflow's status badge.
BADGE = f"{URL}/actions/workflows/test.yml/badge.svg"


def test_readme_shows_the_test_badge_and_the_publishing_steps():
    assert f"[![test]({BADGE})]({URL}/actions/workflows/test.yml)" in README
    assert (ROOT / ".github" / "workflows" / "test.yml").is_file()
    assert (ROOT / ".github" / "workflows" / "publish.yml").is_file()
    assert "GitHub Actions" in README and "push to `main`" in README


def test_readme_is_at_most_90_lines():
    assert len(README.splitlines()) <= 90


def test_readme_shows_the_clone_and_the_two_commands():
    commands = _code_lines(README, "bash")
    clones = [line for line in commands if line.startswith("git clone ")]
    assert len(clones) == 1, commands
    # the clone line fetches the configured repository (the one launch buttons use)
    assert clones[0].split()[2].removesuffix(".git") == URL
    assert "make book" in commands and "make test" in commands


def test_readme_image_is_a_committed_png_under_300_kb():
    images = re.findall(r"!\[([^\]]*)\]\(([^)\s]+)\)", README)
    images = [(alt, target) for alt, target in images if target != BADGE]
    assert images, "README shows a page of the book"
    for alt, target in images:
        assert alt.strip(), f"{target}: alt text"
        path = (ROOT / target).resolve()
        assert path.is_relative_to(ROOT) and path.is_file(), target
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE), f"{target} is not a PNG"
        assert len(data) <= 300 * 1024, f"{target}: {len(data)} bytes"
        # the PNG header's width: a page as a reader sees it at 1280 px
        assert int.from_bytes(data[16:20], "big") == 1280, target


def test_readme_points_only_inside_the_repository():
    for url in re.findall(r"[a-z][a-z+.-]*://[^\s)`>\]]+", README):
        assert url.removesuffix(".git") in {URL, BADGE, BADGE.removesuffix("/badge.svg")}, url
    for target in re.findall(r"\]\(([^)\s]+)\)", README):
        if target.startswith(URL):
            continue
        assert (ROOT / target).resolve().is_relative_to(ROOT), target
        assert (ROOT / target).exists(), target
    for name in re.findall(r"`([\w./-]+\.(?:md|yml|cff|txt|png))`", README):
        assert (ROOT / name).exists(), name


def test_readme_routes_read_run_teach_and_links():
    for route in ("**Read**", "**Run**", "**Teach**"):
        assert route in README, route
    for name in ("CONTRIBUTING.md", "instructors.md", "LICENSE", "CITATION.cff"):
        assert name in README, name
    assert "repository.branch" in README and "make notebooks" in README


def test_every_phony_target_has_a_rule_and_a_help_line():
    phony = _phony_targets()
    assert "help" in phony
    for target in phony:
        assert re.search(rf"^{re.escape(target)}:", MAKEFILE, flags=re.M), f"no rule for {target}"
    documented = re.findall(r"^## ([a-z-]+): \S", MAKEFILE, flags=re.M)
    assert len(documented) == len(set(documented)), "one help line per target"
    assert set(documented) == phony


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_help_lists_every_phony_target():
    result = subprocess.run(
        ["make", "--no-print-directory", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    lines = result.stdout.splitlines()
    listed = [line.split()[0] for line in lines]
    assert sorted(listed) == sorted(_phony_targets())
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines), "each target with its line"


def _sections(markdown: str) -> list[str]:
    return re.findall(r"^## (.+)$", markdown, flags=re.M)


def test_contributing_has_the_four_sections_in_order():
    wanted = ["Build and test", "Adding a chapter", "Adding a posenc function", "Performance"]
    assert [title for title in _sections(CONTRIBUTING) if title in wanted] == wanted


def _section(title: str) -> str:
    return re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", CONTRIBUTING, flags=re.M | re.S).group(1)


def test_contributing_build_and_test_holds_what_left_the_readme():
    text = _section("Build and test")
    for fact in (
        "requirements.txt", "requirements-dev.txt", ".venv/", ".venv-reader/", "posenc-reader",
        "3.10", "venv", "chromium-driver", "npm", "axe-core", "texlive-xetex", "latexmk", "xindy",
        "_build/test-logs/", "wall time", "make colab-cell", "repository.branch", "make test-binder-fresh",
    ):  # fmt: skip
        assert fact in text, fact


def test_contributing_lists_every_stage_of_make_test():
    spec = importlib.util.spec_from_file_location("run_tests", ROOT / "scripts" / "run_tests.py")
    run_tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_tests)
    table = _section("Build and test")
    for stage in run_tests.STAGES:
        assert f"`{stage.target}`" in table, stage.target


def test_contributing_says_how_to_add_a_posenc_function():
    text = _section("Adding a posenc function")
    for fact in (
        "posenc/__init__.py", "posenc/reference.py", "literalinclude", "posenc/_validation.py",
        "ValueError", "TypeError", "tests/test_<module>.py", "tests/test_input_contract.py",
        "tests/test_reference.py", "api.md", "docstring",
    ):  # fmt: skip
        assert fact in text, fact


def test_contributing_performance_names_the_benchmark_the_threads_and_the_rule():
    text = _section("Performance")
    for fact in (
        "make bench",
        "within one run",
        "set_num_threads",
        "POSENC_NUM_THREADS",
        "one-CPU benchmark",
    ):
        assert fact in text, fact


def test_api_page_names_the_thread_knob_and_no_kept_state():
    api = (ROOT / "api.md").read_text()
    assert "posenc.set_num_threads(n)" in api and "POSENC_NUM_THREADS" in api
    for internal in ("worker threads", "keeps the phases", "last eight", "sched_setaffinity"):
        assert internal not in api, internal


def _resolves(dotted: str) -> bool:
    """Whether ``posenc.a.b`` is a module or attribute of the installed package."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], start=1):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module(".".join(parts[: i + 1]))
        except ImportError:
            return False
    return True


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md", "api.md"])
def test_every_posenc_name_the_documents_give_exists(name):
    text = (ROOT / name).read_text()
    # `posenc.exercises.check_...` stands for a family of names
    dotted = set(re.findall(r"\bposenc(?:\.[A-Za-z_]\w*)+(?!\w|\.\.\.)", text))
    missing = sorted(d for d in dotted if not d.endswith("_") and not _resolves(d))
    assert not missing, missing
