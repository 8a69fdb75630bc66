"""scripts/nbval_retry.py starts a chapter's kernel a second time if the first dies at start-up."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import nbval.kernel
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def plugin(monkeypatch):
    """The plugin, loaded here; nbval's own start_new_kernel is put back afterwards."""
    monkeypatch.setattr(nbval.kernel, "start_new_kernel", nbval.kernel.start_new_kernel)
    spec = importlib.util.spec_from_file_location(
        "nbval_retry_under_test", ROOT / "scripts" / "nbval_retry.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_loading_the_plugin_routes_nbval_through_the_retry(plugin):
    assert nbval.kernel.start_new_kernel is plugin.start_new_kernel_with_one_retry


@pytest.mark.parametrize("failures, started", [(0, 1), (1, 2), (2, 2)])
def test_a_kernel_that_dies_at_start_up_is_started_once_more(plugin, monkeypatch, failures, started):
    calls = []

    def fake_start(*args, **kwargs):
        calls.append(kwargs)
        if len(calls) <= failures:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "km", "kc"

    monkeypatch.setattr(plugin, "_start_new_kernel", fake_start)
    if failures >= 2:
        with pytest.raises(RuntimeError, match="Kernel died"):
            plugin.start_new_kernel_with_one_retry(kernel_name="posenc-reader")
    else:
        assert plugin.start_new_kernel_with_one_retry(kernel_name="posenc-reader") == ("km", "kc")
    assert calls == [{"kernel_name": "posenc-reader"}] * started


def test_make_test_notebooks_loads_the_plugin():
    dry = subprocess.run(
        ["make", "-n", "--no-print-directory", "test-notebooks"], cwd=ROOT, capture_output=True, text=True
    )
    command = dry.stdout.replace("\\\n", " ")  # the recipe's continued lines as one
    nbval = next(line for line in command.splitlines() if "--nbval" in line)
    assert "PYTHONPATH=scripts" in nbval and "-p nbval_retry" in nbval
