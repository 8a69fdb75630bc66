"""The thread knob: ``posenc.set_num_threads`` / ``get_num_threads`` and ``POSENC_NUM_THREADS``.

No thread is started unless the caller asks; with threads the results are the same bits.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import posenc


def _run(code: str, env_value: str | None = None) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter, with ``POSENC_NUM_THREADS`` unset or set to ``env_value``."""
    env = {k: v for k, v in os.environ.items() if k != "POSENC_NUM_THREADS"}
    if env_value is not None:
        env["POSENC_NUM_THREADS"] = env_value
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


BIG_CALLS = """
import threading
import numpy as np
import posenc
assert threading.active_count() == 1
started = []
start = threading.Thread.start
threading.Thread.start = lambda self: (started.append(self.name), start(self))[1]
table = posenc.sinusoidal_encoding(65536, 1024)
x = np.ones((2, 32, 4096, 128), dtype=np.float32)  # 2**25 pairs, 128 times THREAD_MIN_PAIRS
out = posenc.apply_rope(x, np.arange(4096) + 7)
out = posenc.apply_rope(x, layout="half")
print(posenc.get_num_threads(), threading.active_count(), len(started))
"""


def test_the_default_starts_no_thread():
    # A 65536 x 1024 table and two rotations of a 128 MiB array, in a fresh process.
    done = _run(BIG_CALLS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "1", "0"]  # no thread was ever started


def test_threads_asked_for_end_with_the_call():
    done = _run(BIG_CALLS, "2")
    assert done.returncode == 0, done.stderr
    setting, alive, started = done.stdout.split()
    assert (setting, alive) == ("2", "1") and int(started) > 0  # started for the calls, then ended


@pytest.mark.parametrize("value", ["abc", "0", "-2", "1.5", "2000"])
def test_a_bad_environment_value_is_refused_at_import(value):
    done = _run("import posenc", value)
    assert done.returncode != 0
    assert "POSENC_NUM_THREADS" in done.stderr and "ValueError" in done.stderr


def test_the_knob_sets_and_returns_the_previous_value(num_threads):
    assert posenc.get_num_threads() == 1
    assert posenc.set_num_threads(3) == 1
    assert posenc.get_num_threads() == 3
    assert posenc.set_num_threads(np.int64(2)) == 3
    assert posenc.get_num_threads() == 2 and type(posenc.get_num_threads()) is int


@pytest.mark.parametrize(
    ("n", "exc"),
    [(0, ValueError), (-1, ValueError), (1025, ValueError), (2.0, TypeError), ("2", TypeError),
     (True, TypeError), (None, TypeError)],
)  # fmt: skip
def test_a_bad_count_is_refused_and_changes_nothing(num_threads, n, exc):
    with pytest.raises(exc, match="n must"):
        posenc.set_num_threads(n)
    assert posenc.get_num_threads() == 1


@pytest.mark.parametrize("n", [2, 3, 5])
def test_results_are_the_same_bits_whatever_the_count(monkeypatch, num_threads, started_threads, n):
    import posenc._rotate as rotate
    import posenc._table as table

    monkeypatch.setattr(rotate, "THREAD_MIN_PAIRS", 1000)
    monkeypatch.setattr(rotate, "TILE_PAIRS", 1000)  # many tiles and row ranges to share
    monkeypatch.setattr(table, "CHUNK_PAIRS", 1000)
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, 3, 200, 32))
    ids = rng.integers(0, 10**6, size=(2, 1, 200))
    calls = {
        "table": lambda: posenc.sinusoidal_encoding(np.arange(-300, 2700), 48, dtype=np.float32),
        "split table": lambda: posenc.sinusoidal_encoding(3000, 48, layout="split"),
        "rope": lambda: posenc.apply_rope(x.astype(np.float32), np.arange(200) + 11),
        "rope half, per-sequence ids": lambda: posenc.apply_rope(x, ids, layout="half"),
        "rotate_by_angles": lambda: posenc.rotate_by_angles(x, rng.standard_normal((200, 16))),
    }
    one = {}
    for name, call in calls.items():
        rng = np.random.default_rng(0)
        one[name] = call()
    assert started_threads == []
    num_threads(n)
    for name, call in calls.items():
        rng = np.random.default_rng(0)
        np.testing.assert_array_equal(call(), one[name], err_msg=name)
    assert len(started_threads) >= len(calls) * (n - 1)
