"""Tests of posenc.analysis: dot_product_distance, encoding_statistics, mean_dot_by_offset.

Small hand-made tables give exact expected values; for the sinusoidal table the expected
Gram matrix is Σ_i cos((m-n)ω_i) evaluated in mpmath.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import (
    EPS,
    MP_PREC,
    mp_cos_sum,
    mp_omegas,
    rounded_omegas,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc

# ---------------------------------------------------------------------------------------
# dot_product_distance
# ---------------------------------------------------------------------------------------


def test_dot_product_distance_hand():
    pe = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    expected = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 2.0]])
    np.testing.assert_array_equal(posenc.dot_product_distance(pe), expected)


@pytest.mark.parametrize("d_model,L", [(4, 6), (16, 20), (64, 12)])
def test_sinusoidal_gram_is_toeplitz_sum_of_cosines(d_model, L):
    gram = posenc.dot_product_distance(posenc.sinusoidal_encoding(L, d_model))
    assert gram.shape == (L, L)
    # Entry (m, n) = Σ_i cos((m-n)ω_i): symmetric Toeplitz with d/2 on the diagonal.
    # Error: each term has angle error ≤ 2·L·ω·2^-52 plus a few ulp; d/2 terms.
    tol = d_model * (2 * L + 8) * EPS
    for m in range(L):
        for n in range(L):
            assert abs(gram[m, n] - mp_cos_sum(m - n, d_model)) <= tol
    np.testing.assert_allclose(np.diag(gram), d_model / 2, rtol=1e-14)


@given(
    rows=st.integers(1, 5),
    cols=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
)
def test_dot_product_distance_is_pairwise_dot(rows, cols, seed):
    pe = np.random.default_rng(seed).normal(size=(rows, cols))
    gram = posenc.dot_product_distance(pe)
    for m in range(rows):
        for n in range(rows):
            expected = math.fsum(pe[m, j] * pe[n, j] for j in range(cols))
            assert abs(gram[m, n] - expected) <= 1e-14 * (1 + abs(expected)) * cols
    np.testing.assert_array_equal(gram, gram.T)


def test_dot_product_distance_bad_input():
    with pytest.raises(ValueError, match="pe"):
        posenc.dot_product_distance(np.ones(3))
    with pytest.raises(ValueError, match="pe"):
        posenc.dot_product_distance(np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="pe"):
        posenc.dot_product_distance(np.array([["x"]]))


# ---------------------------------------------------------------------------------------
# encoding_statistics
# ---------------------------------------------------------------------------------------


def test_encoding_statistics_hand():
    pe = np.array([[3.0, 4.0], [0.0, -1.0]])
    stats = posenc.encoding_statistics(pe)
    assert isinstance(stats, posenc.EncodingStatistics)
    np.testing.assert_array_equal(stats.norms, [5.0, 1.0])
    np.testing.assert_array_equal(stats.dim_mean, [1.5, 1.5])
    # Population variances: ((3-1.5)^2 + (0-1.5)^2)/2 = 2.25, ((4-1.5)^2 + (-1-1.5)^2)/2 = 6.25.
    np.testing.assert_array_equal(stats.dim_var, [2.25, 6.25])
    assert stats.min == -1.0 and stats.max == 4.0
    assert type(stats.min) is float and type(stats.max) is float
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.min = 0.0


@given(positions=st.lists(st.floats(-1e5, 1e5), min_size=1, max_size=8), h=st.integers(1, 32))
def test_encoding_statistics_of_sinusoidal_table(positions, h):
    d_model = 2 * h
    stats = posenc.encoding_statistics(posenc.sinusoidal_encoding(np.array(positions), d_model))
    np.testing.assert_allclose(stats.norms, math.sqrt(d_model / 2), rtol=1e-14)
    assert -1.0 <= stats.min <= stats.max <= 1.0
    assert stats.dim_mean.shape == (d_model,) and stats.dim_var.shape == (d_model,)
    assert np.all(stats.dim_var >= 0) and np.all(stats.dim_var <= 1)


def test_encoding_statistics_sinusoidal_column_closed_form():
    # Over one full period of ω_0 = 1 sampled at N equally spaced points, the sin column
    # averages to 0 with variance 1/2 (discrete orthogonality). Positions 2πj/N.
    N = 16
    positions = 2 * np.pi * np.arange(N) / N
    stats = posenc.encoding_statistics(posenc.sinusoidal_encoding(positions, 2))
    np.testing.assert_allclose(stats.dim_mean, [0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(stats.dim_var, [0.5, 0.5], rtol=1e-14)
    assert stats.min == -1.0 and stats.max == 1.0  # cos(0) = 1 and cos(π) = -1 exactly


def test_encoding_statistics_bad_input():
    with pytest.raises(ValueError, match="pe"):
        posenc.encoding_statistics(np.zeros((0, 4)))
    with pytest.raises(ValueError, match="pe"):
        posenc.encoding_statistics(np.zeros(4))


# ---------------------------------------------------------------------------------------
# mean_dot_by_offset
# ---------------------------------------------------------------------------------------


def test_mean_dot_by_offset_hand():
    pe = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    # Gram [[1,0,1],[0,1,1],[1,1,2]]: offset 0 -> (1+1+2)/3, offset 1 -> (0+1)/2, offset 2 -> 1.
    np.testing.assert_allclose(posenc.analysis.mean_dot_by_offset(pe), [4 / 3, 0.5, 1.0], rtol=1e-15)


@pytest.mark.parametrize("d_model,L", [(4, 10), (32, 16)])
def test_mean_dot_by_offset_sinusoidal(d_model, L):
    got = posenc.analysis.mean_dot_by_offset(posenc.sinusoidal_encoding(L, d_model))
    assert got.shape == (L,)
    tol = d_model * (2 * L + 8) * EPS
    for k in range(L):
        assert abs(got[k] - mp_cos_sum(k, d_model)) <= tol


def test_mean_dot_by_offset_bad_input():
    with pytest.raises(ValueError, match="pe"):
        posenc.analysis.mean_dot_by_offset(np.ones(5))


# ---------------------------------------------------------------------------------------
# dot_product_profile, toeplitz_deviation
# ---------------------------------------------------------------------------------------


@given(
    offsets=st.lists(st.integers(-(10**5), 10**5), min_size=1, max_size=5),
    d_model=st.sampled_from([2, 4, 8, 32]),
)
def test_dot_product_profile_closed_form(offsets, d_model):
    got = posenc.analysis.dot_product_profile(np.array(offsets, dtype=np.int64), d_model)
    assert got.shape == (len(offsets),)
    for k, g in zip(offsets, got, strict=True):
        tol = d_model * (abs(k) + 4) * EPS
        assert abs(g - mp_cos_sum(k, d_model)) <= tol
        assert abs(g) <= d_model / 2 + tol


def test_dot_product_profile_int_even_and_base():
    got = posenc.analysis.dot_product_profile(5, 8, base=100.0)
    assert got.shape == (5,)
    assert got[0] == 4.0  # D(0) = d/2 exactly
    for k in range(5):
        assert abs(got[k] - mp_cos_sum(k, 8, 100.0)) <= 64 * EPS
    neg = posenc.analysis.dot_product_profile(np.array([-1.5, 1.5]), 8)
    assert neg[0] == neg[1]  # even: cos is even, the angles are negated exactly


def test_dot_product_profile_errors():
    with pytest.raises(ValueError, match="offsets"):
        posenc.analysis.dot_product_profile([np.nan], 4)
    with pytest.raises(ValueError, match="offsets"):
        posenc.analysis.dot_product_profile(np.zeros((2, 2)), 4)
    with pytest.raises(TypeError, match="offsets"):
        posenc.analysis.dot_product_profile(2.5, 4)
    with pytest.raises(ValueError, match="d_model"):
        posenc.analysis.dot_product_profile(3, 5)
    with pytest.raises(ValueError, match="base"):
        posenc.analysis.dot_product_profile(3, 4, base=1.0)


def test_toeplitz_deviation_hand():
    toeplitz = np.array([[1.0, 2.0, 3.0], [4.0, 1.0, 2.0], [5.0, 4.0, 1.0]])
    assert posenc.analysis.toeplitz_deviation(toeplitz) == 0.0
    # Entry (1,1) = 5 vs its diagonal's first entry 1: deviation 4.
    assert posenc.analysis.toeplitz_deviation(np.array([[1.0, 2.0], [3.0, 5.0]])) == 4.0
    assert posenc.analysis.toeplitz_deviation(np.array([[7]])) == 0.0
    with pytest.raises(ValueError, match="matrix"):
        posenc.analysis.toeplitz_deviation(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="matrix"):
        posenc.analysis.toeplitz_deviation(np.zeros(3))


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6))
def test_toeplitz_deviation_property(seed, n):
    rng = np.random.default_rng(seed)
    c = rng.normal(size=2 * n - 1)  # c[n-1 + i - j] is constant along diagonals
    a = np.array([[c[n - 1 + i - j] for j in range(n)] for i in range(n)])
    assert posenc.analysis.toeplitz_deviation(a) == 0.0
    if n >= 2:
        b = a.copy()
        b[n - 1, n - 1] += 0.75  # breaks the main diagonal (its first entry is (0, 0))
        assert posenc.analysis.toeplitz_deviation(b) == abs(b[n - 1, n - 1] - b[0, 0]) > 0.7


LIMIT = 2**53

even_d = st.sampled_from([2, 4, 6, 8, 12, 16])


@settings(max_examples=30)
@given(
    rows=st.integers(1, 5),
    cols=st.integers(1, 5),
    dtype=st.sampled_from([np.int8, np.int16, np.uint8, np.int64, np.float32]),
    data=st.data(),
)
def test_gram_statistics_and_offsets_with_integer_tables(rows, cols, dtype, data):
    top = 120 if dtype in (np.int8, np.uint8) else 300  # products overflow int8/int16
    lo = 0 if dtype == np.uint8 else -top
    vals = data.draw(st.lists(st.integers(lo, top), min_size=rows * cols, max_size=rows * cols))
    pe = np.array(vals, dtype=dtype).reshape(rows, cols)
    py = [[int(v) for v in row] for row in pe.tolist()]
    gram = [[sum(a * b for a, b in zip(r1, r2, strict=True)) for r2 in py] for r1 in py]
    assert posenc.dot_product_distance(pe).tolist() == gram
    means = [Fraction(sum(gram[p][p + k] for p in range(rows - k)), rows - k) for k in range(rows)]
    np.testing.assert_allclose(posenc.analysis.mean_dot_by_offset(pe), [float(v) for v in means], rtol=EPS)
    stats = posenc.encoding_statistics(pe)
    np.testing.assert_allclose(stats.norms, [math.sqrt(sum(v * v for v in r)) for r in py], rtol=2 * EPS)
    col = [[r[c] for r in py] for c in range(cols)]
    np.testing.assert_allclose(stats.dim_mean, [float(Fraction(sum(c), rows)) for c in col], rtol=4 * EPS)
    var = [float(sum((Fraction(v) - Fraction(sum(c), rows)) ** 2 for v in c) / rows) for c in col]
    np.testing.assert_allclose(stats.dim_var, var, rtol=1e-12, atol=1e-9)
    assert stats.min == min(vals) and stats.max == max(vals)
    if rows == cols:
        first = [[py[i - min(i, j)][j - min(i, j)] for j in range(rows)] for i in range(rows)]
        deviation = max(abs(py[i][j] - first[i][j]) for i in range(rows) for j in range(rows))
        assert posenc.analysis.toeplitz_deviation(pe) == deviation


@settings(max_examples=25)
@given(
    offsets=st.lists(
        st.floats(-1e6, 1e6, allow_nan=False) | st.integers(-LIMIT, LIMIT), min_size=1, max_size=4
    ),
    d=even_d,
)
def test_dot_product_profile_matches_mpmath(offsets, d):
    got = posenc.analysis.dot_product_profile(offsets, d)
    omegas = mp_omegas(d)
    w = rounded_omegas(d)
    with mpmath.workprec(MP_PREC):
        for g, k in zip(got, offsets, strict=True):
            exact = mpmath.fsum(mpmath.cos(mpmath.mpf(k) * om) for om in omegas)
            tol = sum(abs(float(k)) * wi * EPS * (1 + 2.0**-40) + 4 * EPS for wi in w)
            assert abs(mpmath.mpf(float(g)) - exact) <= tol


@pytest.mark.parametrize(
    ("fields", "error", "name"),
    [
        ({"norms": [np.nan]}, ValueError, "norms"),
        ({"dim_mean": [1j]}, TypeError, "dim_mean"),
        ({"dim_var": "a"}, TypeError, "dim_var"),
        ({"dim_var": [-1.0]}, ValueError, "dim_var"),
        ({"min": None}, TypeError, "min"),
        ({"min": 2.0}, ValueError, "min must be at most max"),
    ],
)
def test_encoding_statistics_checks_its_fields(fields, error, name):
    from posenc import EncodingStatistics

    good = {"norms": [1.0], "dim_mean": [0.0], "dim_var": [1.0], "min": -1.0, "max": 1.0}
    with pytest.raises(error, match=name):
        EncodingStatistics(**{**good, **fields})
    made = EncodingStatistics(**good)
    assert made.norms.dtype == np.float64 and made.min == -1.0


def test_mean_dot_by_offset_averages_without_overflowing():
    from posenc.analysis.statistics import mean_dot_by_offset

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = mean_dot_by_offset([[1e154], [1e154]])
    assert np.allclose(got, [1e308, 1e308], rtol=1e-15, atol=0)
    # direct averages of the products at each offset: (1+4+9)/3, (2+6)/2, 3
    assert np.allclose(mean_dot_by_offset([[1.0], [2.0], [3.0]]), [14 / 3, 4.0, 3.0], rtol=1e-15)
