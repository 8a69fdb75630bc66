"""posenc.exercises.ch10_relative: check_t5_bucket (chapter 10)
accepts a correct implementation and names each known mistake.

The student functions are written by hand here in plain numpy (no posenc); the shared
robustness suite of tests/exercises/test_checkers.py runs on them too.
"""

from __future__ import annotations

import math

import numpy as np
from conftest import expect_mistake

import posenc.exercises as ex


def t5_exact(relative_position, bidirectional=True, num_buckets=32, max_distance=128, *, sign=1):
    rel = sign * np.asarray(relative_position, dtype=np.int64)
    h = num_buckets // 2 if bidirectional else num_buckets
    m, s = h // 2, h - h // 2
    out = np.empty(rel.shape, dtype=np.int64)
    for idx, r in np.ndenumerate(rel):
        r = int(r)
        offset = h if (bidirectional and r > 0) else 0
        n = abs(r) if bidirectional else max(-r, 0)
        if n < m:
            out[idx] = offset + n
            continue
        t = 0
        while t + 1 < s and max_distance ** (t + 1) * m ** (s - t - 1) <= n**s:
            t += 1
        out[idx] = offset + m + t
    return out


def t5_float(
    relative_position,
    bidirectional=True,
    num_buckets=32,
    max_distance=128,
    *,
    dtype=np.float64,
    rnd=np.floor,
    shift=0,
    clip=True,
    causal_abs=False,
    sign=1,
):
    rel = sign * np.asarray(relative_position, dtype=np.int64)
    h = num_buckets // 2 if bidirectional else num_buckets
    m = h // 2
    offset = np.where(rel > 0, h, 0) if bidirectional else 0
    n = np.abs(rel) if (bidirectional or causal_abs) else np.maximum(-rel, 0)
    nf = np.maximum(n, 1).astype(dtype)
    large = (
        m
        + shift
        + rnd(np.log(nf / dtype(m)) / dtype(math.log(max_distance / m)) * dtype(h - m)).astype(np.int64)
    )
    if clip:
        large = np.minimum(large, h - 1)
    return offset + np.where(n < m, n, large)


def test_t5_correct():
    assert ex.check_t5_bucket(t5_exact).startswith("correct on ")


def test_t5_correct_int32():
    assert ex.check_t5_bucket(lambda r, **kw: t5_exact(r, **kw).astype(np.int32)).startswith("correct on ")


def test_t5_naive_float64_log_at_ties():
    # num_buckets=20, max_distance=160: |r| = 10, 20, 80 are exact ties where float64 lands low
    assert not np.array_equal(t5_float([10, 20, 80], True, 20, 160), t5_exact([10, 20, 80], True, 20, 160))
    expect_mistake(ex.check_t5_bucket, t5_float, "floating-point", "exact tie")


def test_t5_sign_and_float_log():
    err = expect_mistake(ex.check_t5_bucket, lambda r, **kw: t5_float(r, **kw, sign=-1), "query minus key")
    assert (
        err.mistake == "query minus key (sign flipped) + floating-point log at an exact tie (one bucket low)"
    )
