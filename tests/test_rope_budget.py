"""posenc.rope_budget against independent computations (mpmath, the log formula, a naive scan)."""

from __future__ import annotations

import math
import time
import warnings

import mpmath
import numpy as np
import pytest

import posenc
import posenc.exercises
from posenc.rope_budget import (
    critical_dimension,
    long_term_similarity,
    min_base_for_context,
    p_rope_frequencies,
)


def _b_mpmath(m: float, d: int, base: float) -> float:
    with mpmath.workdps(40):
        return float(
            mpmath.fsum(mpmath.cos(m * mpmath.power(base, -mpmath.mpf(2 * i) / d)) for i in range(d // 2))
        )


@pytest.mark.parametrize(("d", "base"), [(2, 10.0), (8, 10000.0), (64, 500000.0), (128, 10000.0)])
def test_long_term_similarity_matches_mpmath(d, base):
    m = np.array([0.0, 1.0, 7.0, 123.0, 4095.0, -31.5, 1e6])
    got = long_term_similarity(m, d, base=base)
    want = [_b_mpmath(float(v), d, base) for v in m]
    np.testing.assert_allclose(got, want, atol=1e-9 * d)
    assert got[0] == d // 2


def test_long_term_similarity_int_distances_and_exports():
    assert posenc.long_term_similarity is long_term_similarity
    np.testing.assert_allclose(long_term_similarity(5, 16), long_term_similarity([0, 1, 2, 3, 4], 16))


def _naive_min_base(length: int, d: int, steps: int, start: float) -> float:
    j = math.ceil(steps * math.log10(start) - 1e-9)
    while True:
        b = 10.0 ** (j / steps)
        ok = all(sum(math.cos(m * b ** (-2 * i / d)) for i in range(d // 2)) >= 0.0 for m in range(length))
        if ok:
            return b
        j += 1


@pytest.mark.parametrize(("length", "d"), [(20, 8), (64, 16), (200, 32)])
def test_min_base_matches_a_naive_scan(length, d):
    got = min_base_for_context(length, d, steps_per_decade=50)
    assert got == pytest.approx(_naive_min_base(length, d, 50, 2.0), rel=1e-12)


def test_min_base_array_form_and_the_defining_property():
    lengths = [64, 256, 1024]
    got = min_base_for_context(lengths, 32)
    assert got.shape == (3,) and np.all(np.diff(got) > 0)
    for length, b in zip(lengths, got, strict=True):
        assert min_base_for_context(length, 32) == b
        assert long_term_similarity(length, 32, base=b).min() >= 0.0
        below = b / 10 ** (1 / 200)  # the grid point before: it fails
        assert long_term_similarity(length, 32, base=below).min() < 0.0


@pytest.mark.parametrize(
    ("d", "base", "t"), [(128, 10000.0, 4096), (128, 500000.0, 8192), (128, 1e6, 16384), (64, 10.0, 3.0)]
)
def test_critical_dimension_matches_the_log_formula(d, base, t):
    x = (d / 2) * math.log(t / (2 * math.pi)) / math.log(base)
    want = min(d, max(0, 2 * math.ceil(x)))
    assert critical_dimension(d, base, t) == want


def test_critical_dimension_llama2():
    assert critical_dimension(128, 10000.0, 4096) == 92  # Liu et al. 2023, Llama 2


def test_p_rope_frequencies():
    theta = posenc.rope_frequencies(64)
    np.testing.assert_array_equal(p_rope_frequencies(64, 1.0), theta)
    np.testing.assert_array_equal(p_rope_frequencies(64, 0.0), np.zeros(32))
    got = p_rope_frequencies(64, 0.25)
    np.testing.assert_array_equal(got[:8], theta[:8])
    assert np.all(got[8:] == 0.0)


@pytest.mark.parametrize(
    ("fn", "args", "exc", "name"),
    [
        (long_term_similarity, ([1.0], 7), ValueError, "d_head"),
        (long_term_similarity, ([np.nan], 8), ValueError, "distances"),
        (long_term_similarity, ([1.0], 8), ValueError, "base"),
        (min_base_for_context, (0,), ValueError, "context_length"),
        (min_base_for_context, (2.5,), TypeError, "context_length"),
        (min_base_for_context, ([],), ValueError, "context_length"),
        (critical_dimension, (128, 1e4, -1.0), ValueError, "train_length"),
        (critical_dimension, (128, 0.5, 10.0), ValueError, "base"),
        (p_rope_frequencies, (64, 1.5), ValueError, "p"),
        (p_rope_frequencies, (64, "a"), TypeError, "p"),
    ],
)
def test_bad_input_is_refused(fn, args, exc, name):
    kwargs = {"base": 1.0} if fn is long_term_similarity and name == "base" else {}
    with pytest.raises(exc, match=name):
        fn(*args, **kwargs)


def test_min_base_for_context_refuses_a_table_of_lengths():
    with pytest.raises(ValueError, match="context_length"):
        posenc.min_base_for_context([[10, 20], [30, 40]], 8)
    with pytest.raises(ValueError, match="start"):
        posenc.min_base_for_context(100, 8, start=1e308)
    assert posenc.min_base_for_context([100, 100], 8).shape == (2,)


def test_a_wavelength_beyond_float64_is_refused_and_the_critical_dimension_still_counts():
    with pytest.raises(ValueError, match="base"):
        posenc.wavelengths(1024, 1.7e308)
    assert np.all(np.isfinite(posenc.wavelengths(1024, 1e300)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = posenc.critical_dimension(1024, 1.7e308, 10.0)
    # pairs with period 2 pi b^(2i/d) < 10, counted with 50-digit arithmetic
    with mpmath.workdps(50):
        b = mpmath.mpf(1.7e308)
        count = sum(1 for i in range(512) if 2 * mpmath.pi * b ** (mpmath.mpf(2 * i) / 1024) < 10)
    assert got == 2 * count and count > 0


def test_min_base_for_context_refuses_scans_it_cannot_finish():
    t0 = time.process_time()
    with pytest.raises(ValueError, match="d_head = 2"):
        posenc.min_base_for_context(3, 2, steps_per_decade=10000)
    with pytest.raises(ValueError, match="context_length"):
        posenc.min_base_for_context(2**22, 128)
    with pytest.raises(ValueError, match="steps_per_decade"):
        posenc.min_base_for_context(1000, 128, steps_per_decade=10000)
    assert time.process_time() - t0 < 1.0
    # with d_head = 2, B(m) = cos(m) >= 0 for m in {0, 1}: the first grid base above start
    assert posenc.min_base_for_context(2, 2) == 10 ** (math.ceil(200 * math.log10(2)) / 200)


def test_p_rope_keeps_the_pairs_a_decimal_p_means():
    kept = posenc.p_rope_frequencies(200, 0.29)
    assert np.count_nonzero(kept) == 29  # 0.29 * 100 pairs, though the double 0.29 is below it
    assert np.count_nonzero(posenc.p_rope_frequencies(8, 0.5)) == 2
