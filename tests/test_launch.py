"""Running the chapters elsewhere: launch-button settings and the Colab set-up cell.

The repository's address is one setting (``repository.url`` and ``.branch`` in
``_config.yml``); the launch buttons, Thebe and the first cell of every chapter must all
follow it. The cell itself is run here both ways: where posenc is installed (it must do
nothing) and as on a fresh Colab runtime (it must clone the configured repository and
branch, install it, and move into the clone's ``chapters/``). ``scripts/check_colab.py``
runs the real thing, with git and pip, in a fresh virtual environment.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
URL = CONFIG["repository"]["url"]
BRANCH = CONFIG["repository"]["branch"]

_spec = importlib.util.spec_from_file_location("colab_cell", ROOT / "scripts" / "colab_cell.py")
colab_cell = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(colab_cell)

# Import name -> distribution name, where they differ.
DISTRIBUTION = {"myst_nb": "myst-nb"}


def test_repository_is_one_github_setting_with_an_explicit_branch():
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", URL), URL
    # jupyter-book's own defaults would point the buttons at its repository and 'master'.
    assert "executablebooks" not in URL
    assert BRANCH and BRANCH != "master"
    assert CONFIG["repository"].get("path_to_book", "") == ""  # the book sits at the repository root


def test_launch_buttons_binder_colab_and_thebe_are_on():
    launch = CONFIG["launch_buttons"]
    assert launch["binderhub_url"] == "https://mybinder.org"
    assert launch["colab_url"] == "https://colab.research.google.com"
    assert launch["thebe"] is True
    assert launch["notebook_interface"] in {"classic", "jupyterlab"}


def test_readme_documents_the_setting():
    readme = (ROOT / "README.md").read_text()
    assert "repository.url" in readme and URL in readme and "make colab-cell" in readme


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_first_cell_is_the_current_setup_cell(path: Path):
    nb = nbformat.read(path, as_version=4)
    cell = nb.cells[0]
    assert cell.cell_type == "code" and cell.id == "colab-setup"
    assert cell.metadata.get("tags") == ["remove-cell"], "hidden on the site"
    assert cell.metadata.get("cellView") == "form", "collapsed in Colab"
    assert cell.source.startswith("# @title "), "Colab shows a form's title"
    assert f'REPOSITORY_URL = "{URL}"' in cell.source and f'BRANCH = "{BRANCH}"' in cell.source
    assert cell.outputs == [], "the cell prints nothing where posenc is installed"
    assert not colab_cell.sync(path, colab_cell.cell_source(URL, BRANCH), check=True)
    assert sum(c.get("id") == "colab-setup" for c in nb.cells) == 1


def test_repository_setting_must_be_a_github_project_address(tmp_path):
    for bad in ("https://gitlab.com/a/b", "https://github.com/a", "https://github.com/a/b.git"):
        config = tmp_path / "_config.yml"
        config.write_text(f"repository:\n  url: {bad}\n  branch: main\n")
        with pytest.raises(SystemExit, match="must be https://github.com/<owner>/<name>"):
            colab_cell.repository_settings(config)
    config.write_text("repository:\n  url: https://github.com/a/b/\n")
    with pytest.raises(SystemExit, match="branch is not set"):
        colab_cell.repository_settings(config)


def test_cell_source_rejects_settings_that_would_break_the_code():
    with pytest.raises(ValueError, match="unsafe"):
        colab_cell.cell_source('https://github.com/a/b"; import os', "main")


class _Recorder:
    """Stands in for subprocess.run; a `git clone` creates the checkout with chapters/."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def __call__(self, cmd, check=False, **kwargs):
        assert check is True, "a failed install must stop the notebook"
        self.calls.append(list(cmd))
        if cmd[:2] == ["git", "clone"]:
            (Path(cmd[-1]) / "chapters").mkdir(parents=True)
        return subprocess.CompletedProcess(cmd, 0)


def _run_cell(monkeypatch, posenc_installed: bool) -> tuple[_Recorder, str]:
    recorder = _Recorder()
    monkeypatch.setattr(subprocess, "run", recorder)
    real_find_spec = importlib.util.find_spec
    if not posenc_installed:

        def find_spec(name, *args):
            return None if name == "posenc" else real_find_spec(name, *args)

        monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        exec(compile(colab_cell.cell_source(URL, BRANCH), "<colab-setup>", "exec"), {})
    return recorder, out.getvalue()


def test_cell_is_a_no_op_where_posenc_is_installed(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    recorder, printed = _run_cell(monkeypatch, posenc_installed=True)
    assert recorder.calls == [] and printed == ""
    assert Path.cwd() == tmp_path
    assert list(tmp_path.iterdir()) == []


def test_cell_on_a_fresh_colab_runtime_clones_installs_and_moves_into_chapters(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    recorder, printed = _run_cell(monkeypatch, posenc_installed=False)
    checkout = tmp_path / URL.rsplit("/", 1)[-1]
    assert recorder.calls == [
        ["git", "clone", "--quiet", "--depth=1", f"--branch={BRANCH}", URL, str(checkout)],
        [sys.executable, "-m", "pip", "install", "--quiet", f"{checkout}[notebook]"],
    ]
    assert Path.cwd() == checkout / "chapters"
    assert printed == ""


def test_cell_after_a_runtime_restart_reuses_the_clone(monkeypatch, tmp_path):
    # Colab keeps installed packages and files across a restart but resets the directory.
    checkout = tmp_path / URL.rsplit("/", 1)[-1]
    (checkout / "chapters").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    recorder, _ = _run_cell(monkeypatch, posenc_installed=True)
    assert recorder.calls == []
    assert Path.cwd() == checkout / "chapters"


def _third_party_imports(path: Path) -> set[str]:
    nb = nbformat.read(path, as_version=4)
    names: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        lines = cell.source.splitlines()
        source = "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "posenc"}


def test_notebook_extra_covers_every_chapter_import():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    installed = {re.split(r"[<>=!~ \[]", d)[0].lower() for d in project["dependencies"]}
    installed |= {re.split(r"[<>=!~ \[]", d)[0].lower() for d in project["optional-dependencies"]["notebook"]}
    imported = set().union(*(_third_party_imports(p) for p in CHAPTERS))
    assert {"numpy", "matplotlib", "sympy", "myst_nb"} <= imported  # the parser sees the imports
    missing = {DISTRIBUTION.get(n, n).lower() for n in imported} - installed
    assert not missing, f"chapters import {sorted(missing)}, which the Colab install would not provide"


def test_every_chapter_data_file_is_tracked_by_git():
    # Binder and the Colab clone only see committed files.
    tracked = subprocess.run(
        ["git", "ls-files", "chapters"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    data = [p.relative_to(ROOT).as_posix() for p in (ROOT / "chapters" / "data").rglob("*") if p.is_file()]
    assert data and not sorted(set(data) - set(tracked))


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_binder_check_rejects_posenc_from_elsewhere(tmp_path):
    check_binder = _load_script("check_binder")
    inside = tmp_path / "repo" / "posenc" / "__init__.py"
    check_binder.check_origin(f"[1/1] x: ok\nposenc from {inside}\n", tmp_path / "repo")
    with pytest.raises(SystemExit, match="not imported from"):
        check_binder.check_origin(
            f"posenc from {inside}\nposenc from /elsewhere/posenc/__init__.py\n", tmp_path / "repo"
        )
    with pytest.raises(SystemExit, match="no report"):
        check_binder.check_origin("[1/1] x: ok\n", tmp_path / "repo")


def test_binder_check_reads_the_runtime_pin(tmp_path):
    check_binder = _load_script("check_binder")
    assert re.fullmatch(r"3\.\d+", check_binder.runtime_version(ROOT))
    (tmp_path / "runtime.txt").write_text("3.11\n")
    with pytest.raises(SystemExit, match="python-X.Y"):
        check_binder.runtime_version(tmp_path)


def test_colab_check_environment_uses_the_pinned_versions():
    check_colab = _load_script("check_colab")
    pins = check_colab.pinned(("numpy", "sympy"), ROOT / "requirements.txt")
    text = (ROOT / "requirements.txt").read_text().lower()
    assert all(p in text.splitlines() for p in pins) and len(pins) == 2
    assert not {"posenc", "myst-nb", "myst_nb"} & set(check_colab.PREINSTALLED)


def test_colab_check_only_swaps_the_repository_address(tmp_path):
    check_colab = _load_script("check_colab")
    src = CHAPTERS[0]
    dest = tmp_path / src.name
    check_colab.colab_copy(src, dest, URL, "file:///tmp/remote/positional-encodings.git")
    original, copy = nbformat.read(src, as_version=4), nbformat.read(dest, as_version=4)
    assert [c.source for c in copy.cells[1:]] == [c.source for c in original.cells[1:]]
    assert copy.cells[0].source == original.cells[0].source.replace(
        URL, "file:///tmp/remote/positional-encodings.git"
    )
    other = nbformat.read(src, as_version=4)
    other.cells[0].source = other.cells[0].source.replace(URL, "https://github.com/x/y")
    nbformat.write(other, tmp_path / "other.ipynb")
    with pytest.raises(SystemExit, match="no set-up cell"):
        check_colab.colab_copy(tmp_path / "other.ipynb", tmp_path / "out.ipynb", URL, "file:///r")


def test_binder_environment_check_names_every_difference():
    check_binder = _load_script("check_binder")
    required = check_binder.pins("# comment\nnumpy==2.4.6\nPyYAML==6.0.3\nmyst_nb==1.4.0\n-e .\n")
    assert required == {"numpy": "2.4.6", "pyyaml": "6.0.3", "myst-nb": "1.4.0"}
    assert check_binder.environment_differences(required, dict(required)) == []
    installed = {"numpy": "2.4.5", "pyyaml": "6.0.3", "torch": "2.13.0"}
    problems = check_binder.environment_differences(required, installed)
    assert problems == [
        "myst-nb==1.4.0 is in requirements.txt but not installed",
        "numpy: requirements.txt pins 2.4.6, installed 2.4.5",
        "torch==2.13.0 is installed but not in requirements.txt",
    ]


def test_the_test_build_renders_stored_outputs_with_the_same_extensions():
    config_stored = _load_script("config_stored_outputs")
    original = yaml.safe_load((ROOT / "_config.yml").read_text())
    stored = config_stored.stored_outputs_config(original)
    assert original["execute"]["execute_notebooks"] == "force", "make book still executes"
    assert stored["execute"]["execute_notebooks"] == "off"
    assert {k: v for k, v in stored["execute"].items() if k != "execute_notebooks"} == {
        k: v for k, v in original["execute"].items() if k != "execute_notebooks"
    }
    for name, path in stored["sphinx"]["local_extensions"].items():
        assert Path(path).is_absolute() and (Path(path) / f"{name}.py").is_file()
    rest = ("execute", "sphinx")
    assert {k: v for k, v in stored.items() if k not in rest} == {
        k: v for k, v in original.items() if k not in rest
    }


def test_test_runner_reports_skips_summaries_and_failures():
    run_tests = _load_script("run_tests")
    skipped_log = (
        "SKIPPED [1] tests/browser/test_site.py:97: browser test SKIPPED: Debian's chromium and "
        "chromium-driver are not installed (.ci/run installs them with apt-get)\n"
        "======================== 24 skipped in 0.91s ========================\n"
    )
    assert run_tests.status_of(0, skipped_log) == "skipped"
    assert run_tests.report_line(skipped_log).startswith("browser test SKIPPED: Debian's chromium")
    passed_log = "....\n========= 267 passed in 28.13s =========\nmake: leaving\n"
    assert run_tests.status_of(0, passed_log) == "passed"
    assert run_tests.report_line(passed_log) == "267 passed in 28.13s"
    assert run_tests.status_of(2, passed_log) == "FAILED"
    assert run_tests.report_line("== Binder check passed: chapters\n") == "== Binder check passed: chapters"
    build_log = (
        "\x1b[01mbuild succeeded.\x1b[39;49;00m\n\nThe HTML pages are in _build/html.\n"
        "\x1b[92m" + "=" * 79 + "\x1b[0m\n\nFinished generating HTML for book.\n"
        "\x1b[92m" + "=" * 79 + "\x1b[0m\n"
    )
    assert run_tests.report_line(build_log) == "build succeeded."
    assert run_tests.report_line("\x1b[1mwritten\x1b[0m\n\x1b[92m=====\x1b[0m\n") == "written"
    names = [s.name for s in run_tests.STAGES]
    assert len(names) == len(set(names)) and names[0] == "env"
    for stage in run_tests.STAGES:
        assert all(n in names[: names.index(stage.name)] for n in stage.needs), stage
    makefile = (ROOT / "Makefile").read_text()
    for stage in run_tests.STAGES:
        assert re.search(rf"^{re.escape(stage.target)}:", makefile, flags=re.M), stage.target
        for setting in stage.settings:  # a make variable the target reads, with a default
            assert re.search(rf"^{setting.split('=')[0]} \?= ", makefile, flags=re.M), setting


def test_test_runner_runs_the_stages_that_can_wait_under_nice():
    run_tests = _load_script("run_tests")
    stages = {s.name: s for s in run_tests.STAGES}
    # the chains and the single-threaded stages at normal priority, the fill-in work niced
    assert {n for n, s in stages.items() if s.nice} == {"notebooks", "unit", "lint", "binder"}
    assert run_tests.command_of(stages["build"]) == ["make", "--no-print-directory", "test-build"]
    assert run_tests.command_of(stages["unit"]) == [
        "nice", "-n", str(run_tests.UNIT_NICE), "make", "--no-print-directory", "test-unit", "UNIT_WORKERS=0"
    ]  # fmt: skip
    assert 0 < run_tests.UNIT_NICE < run_tests.BACKGROUND
    assert stages["notebooks"].nice == stages["lint"].nice == stages["binder"].nice == run_tests.BACKGROUND


# The reader's environment (requirements.txt: Binder, and the kernel nbval runs the chapters
# in) and the developer's (requirements-dev.txt: build, test, browser, grading tools).
READER_TOP = {"numpy", "matplotlib", "sympy", "mpmath", "myst-nb", "ipykernel"}
DEV_ONLY = {
    "jupyter-book", "sphinx-proof", "sphinx-exercise", "sphinx-book-theme", "sphinx-mathjax-offline",
    "sphinxcontrib-bibtex", "pytest-xdist", "hypothesis", "nbval", "ruff", "selenium", "nbgrader",
}  # fmt: skip


def _requirement_pins(name: str) -> dict[str, str]:
    return _load_script("check_binder").pins((ROOT / name).read_text())


def test_reader_requirements_are_lean_and_pinned():
    text = (ROOT / "requirements.txt").read_text()
    reader = _requirement_pins("requirements.txt")
    assert READER_TOP <= reader.keys()
    assert not DEV_ONLY & reader.keys(), (
        f"tools in the reader environment: {sorted(DEV_ONLY & reader.keys())}"
    )
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert lines[-1] == "-e ." and all("==" in line for line in lines[:-1]), "every package pinned"
    # pytest only while a chapter imports it (chapter 8's pytest.raises)
    imported = set().union(*(_third_party_imports(p) for p in CHAPTERS))
    assert ("pytest" in reader) == ("pytest" in imported)


def test_dev_requirements_add_the_tools_on_top_of_the_reader_pins():
    text = (ROOT / "requirements-dev.txt").read_text()
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert lines[0] == "-r requirements.txt"
    assert all("==" in line for line in lines[1:]), "every package pinned"
    dev, reader = _requirement_pins("requirements-dev.txt"), _requirement_pins("requirements.txt")
    assert DEV_ONLY <= dev.keys()
    assert not dev.keys() & reader.keys(), "a package is pinned once, in one of the two files"
    assert dev["jupyter-book"].startswith("1."), "jupyter-book 2 has no _config.yml"


def test_no_pin_brings_the_iri_grammar_that_nbformat_would_build_at_import():
    # jsonschema 4.24+ with the format-nongpl extra (asked for by jupyter-events) installs
    # rfc3987-syntax, and jsonschema imports it, building its Lark parser: about a second in
    # every process that imports nbformat (measured: 1.1 s against 0.14 s for import nbformat).
    pins = _requirement_pins("requirements.txt") | _requirement_pins("requirements-dev.txt")
    assert "rfc3987-syntax" not in pins and "lark" not in pins
    assert tuple(int(n) for n in pins["jsonschema"].split(".")[:2]) < (4, 24)
    probe = "import sys, nbformat; print(sorted(m for m in ('rfc3987_syntax', 'lark') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]", f"import nbformat still imports {loaded.stdout.strip()}"


def test_make_installs_dev_tools_and_nbval_runs_the_reader_kernel():
    makefile = (ROOT / "Makefile").read_text()
    env_rule = re.search(r"^\$\(STAMP\):(.*?)\n\n", makefile, flags=re.M | re.S).group(1)
    assert "pip install --quiet --no-compile -r requirements-dev.txt" in env_rule
    # installed without bytecode, which Python writes on first import unless told not to
    assert re.search(r"^unexport PYTHONDONTWRITEBYTECODE$", makefile, flags=re.M)
    reader_rule = re.search(r"^\$\(READER_STAMP\):(.*?)\n\n", makefile, flags=re.M | re.S).group(1)
    assert "-r requirements.txt" in reader_rule and "requirements-dev" not in reader_rule
    assert "ipykernel install --prefix $(CURDIR)/$(READER) --name $(READER_KERNEL)" in reader_rule
    nbval = re.search(r"^test-notebooks:.*?\n\n", makefile, flags=re.M | re.S).group(0)
    assert "--nbval-kernel-name $(READER_KERNEL)" in nbval and "--nbval-current-env" not in nbval
    assert "JUPYTER_PATH=$(READER_JUPYTER_PATH)" in nbval
    for target in ("book", "student", "test-unit", "test-build", "lint"):
        assert re.search(rf"^{target}: .*\$\(STAMP\)", makefile, flags=re.M), target
    assert "$(READER_STAMP)" in re.search(r"^test-binder:.*$", makefile, flags=re.M).group(0)


def test_readme_has_two_setup_commands_and_docs_stay_inside_the_repository():
    readme = (ROOT / "README.md").read_text()
    setup = re.search(r"## Set-up.*?```bash\n(.*?)```", readme, flags=re.S).group(1)
    commands = [line.split("#")[0].strip() for line in setup.splitlines() if line.split("#")[0].strip()]
    assert commands == ["make book", "make test"]
    for name in ("README.md", "CONTRIBUTING.md"):
        text = (ROOT / name).read_text()
        assert not re.search(r"\.\./(?!posenc/)|/work/|shared/(sources|tools|templates)|notes/", text), name


def test_binder_check_compares_the_reader_kernel_with_its_environment(tmp_path):
    check_binder = _load_script("check_binder")
    venv = tmp_path / "venv"
    kernel_dir = venv / "share" / "jupyter" / "kernels" / "reader"
    kernel_dir.mkdir(parents=True)
    argv = [str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec = {"argv": argv, "display_name": "reader", "language": "python"}
    (kernel_dir / "kernel.json").write_text(json.dumps(spec))
    assert check_binder.kernel_python(venv, "reader") == venv / "bin" / "python"
    with pytest.raises(SystemExit, match="no kernel 'other'"):
        check_binder.kernel_python(venv, "other")


def test_the_book_build_never_reads_the_reader_environment():
    # .venv-reader sits in the book's folder; Sphinx would parse the packages' .md and .rst files
    assert {".venv", ".venv-reader"} <= set(CONFIG["exclude_patterns"])


def test_colab_check_stores_back_with_the_real_address(tmp_path):
    check_colab = _load_script("check_colab")
    local = "file:///tmp/remote/positional-encodings.git"
    src = CHAPTERS[0]
    check_colab.colab_copy(src, tmp_path / "run.ipynb", URL, local)
    check_colab.store_back(tmp_path / "run.ipynb", tmp_path / "stored.ipynb", URL, local)
    stored, original = (
        nbformat.read(tmp_path / "stored.ipynb", as_version=4),
        nbformat.read(src, as_version=4),
    )
    assert (
        stored.cells[0].source
        == original.cells[0].source
        != nbformat.read(tmp_path / "run.ipynb", 4).cells[0].source
    )
    assert [c.source for c in stored.cells] == [c.source for c in original.cells]


def test_stored_run_drops_the_setup_cells_output_and_refuses_other_stderr(tmp_path):
    """execute_notebooks.py: the set-up cell's clone progress is not stored; any other stderr fails."""
    runner = _load_script("execute_notebooks")
    assert runner.SETUP_CELL_ID == colab_cell.CELL_ID
    setup = nbformat.v4.new_code_cell("import sys\nprint('Cloning into ...', file=sys.stderr)")
    setup.id = colab_cell.CELL_ID
    nb = nbformat.v4.new_notebook(cells=[setup, nbformat.v4.new_code_cell("print(6 * 7)")])
    nbformat.write(nb, tmp_path / "ok.ipynb")
    runner.execute(tmp_path / "ok.ipynb")
    stored = nbformat.read(tmp_path / "ok.ipynb", as_version=4)
    assert stored.cells[0].outputs == [] and stored.cells[0].execution_count == 1
    assert stored.cells[1].outputs[0]["text"] == "42\n"
    nb.cells[1].source = "import sys\nprint('a warning', file=sys.stderr)"
    nbformat.write(nb, tmp_path / "bad.ipynb")
    with pytest.raises(RuntimeError, match="wrote to stderr"):
        runner.execute(tmp_path / "bad.ipynb")


def test_check_scripts_hide_pip_index_notices_only():
    """The notices this machine's pip prints about missing local index folders are hidden,
    plain or coloured (as a notebook cell's output carries them); nothing else is."""
    noise = _load_script("check_binder").NOISE
    notice = (
        "WARNING: Location 'file:///opt/pypi/simple/numpy/' is ignored: it is neither a file nor a directory."
    )
    assert noise.match(notice)
    assert noise.match("\x1b[33m" + notice)
    assert noise.match("\x1b[0m\x1b[33m" + notice)
    assert not noise.match("WARNING: Retrying after connection broken")
    assert not noise.match("ERROR: " + notice)


def test_merge_streams_joins_runs_of_one_stream_only():
    runner = _load_script("execute_notebooks")
    out, err = "stdout", "stderr"
    outputs = [
        nbformat.v4.new_output("stream", name=out, text="a\n"),
        nbformat.v4.new_output("stream", name=out, text="b\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=1),
        nbformat.v4.new_output("stream", name=out, text="c\n"),
        nbformat.v4.new_output("stream", name=err, text="d\n"),
        nbformat.v4.new_output("stream", name=out, text="e\n"),
    ]
    merged = runner.merge_streams(outputs)
    assert [(o.output_type, o.get("name"), o.get("text")) for o in merged] == [
        ("stream", out, "a\nb\n"),
        ("execute_result", None, None),
        ("stream", out, "c\n"),
        ("stream", err, "d\n"),
        ("stream", out, "e\n"),
    ]


def test_stored_run_keeps_a_cells_printed_text_as_one_output(tmp_path):
    """However the kernel flushes printed text, it is stored as one output (same file every run)."""
    runner = _load_script("execute_notebooks")
    source = "import sys, time\nprint('first')\nsys.stdout.flush()\ntime.sleep(0.3)\nprint('second')"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)]), tmp_path / "two.ipynb"
    )
    runner.execute(tmp_path / "two.ipynb")
    stored = nbformat.read(tmp_path / "two.ipynb", as_version=4)
    assert [(o.output_type, o.text) for o in stored.cells[0].outputs] == [("stream", "first\nsecond\n")]
