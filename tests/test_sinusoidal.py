"""Tests of posenc.sinusoidal: frequencies, the table, layouts, the shift matrix, the module.

Expected values come from mpmath at 256 bits (tests/conftest.py), from closed forms, or
from the hand-derived d_model=4 case where ω = (1, 10000^(-1/2)) = (1, 0.01).
"""

from __future__ import annotations

import math
import tracemalloc

import mpmath
import numpy as np
import pytest
from conftest import (
    EPS,
    MP_PREC,
    angle_tolerance,
    column_omegas,
    mp_omegas,
    mp_table,
    reference_shift_matrix,
    reference_table,
    refuses,
    rounded_omegas,
    ulp32,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc

# Positions that are exact in float64 and whose sums stay exact: multiples of 1/4 up to
# 2^22 in magnitude (negative and non-integer included).
quarter_positions = st.integers(-(2**24), 2**24).map(lambda n: n / 4)
even_d = st.integers(1, 48).map(lambda h: 2 * h)


# ---------------------------------------------------------------------------------------
# frequencies
# ---------------------------------------------------------------------------------------


def test_frequencies_d4_hand_derived():
    # ω_i = 10000^(-2i/4): ω_0 = 1, ω_1 = 10000^(-1/2) = 1/100; 0.01 is the nearest double.
    np.testing.assert_array_equal(posenc.frequencies(4), np.array([1.0, 0.01]))


def test_frequencies_d2_is_one():
    np.testing.assert_array_equal(posenc.frequencies(2), np.array([1.0]))


def test_frequencies_base_1e8_d8_closed_form():
    # (10^8)^(-2i/8) = 10^(-2i): 1, 1e-2, 1e-4, 1e-6 (each the double nearest to 10^(-2i)).
    np.testing.assert_array_equal(posenc.frequencies(8, base=1e8), np.array([1.0, 1e-2, 1e-4, 1e-6]))


@pytest.mark.parametrize("d_model", [2, 4, 6, 8, 10, 64, 128, 512, 768, 1000])
@pytest.mark.parametrize("base", [10000.0, 10.0, 2.0, 500000.0, 1.5, math.pi, 1e6 + 0.5])
def test_frequencies_correctly_rounded_mpmath(d_model, base):
    got = posenc.frequencies(d_model, base=base)
    assert got.dtype == np.float64
    assert got.shape == (d_model // 2,)
    # The recipe: float(mpmath.power(base, -2i/d)) at mp.prec = 113.
    with mpmath.workprec(113):
        expected113 = [
            float(mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / d_model)) for i in range(d_model // 2)
        ]
    np.testing.assert_array_equal(got, np.array(expected113))
    # Stronger: each entry is within half an ulp of the real number (256-bit reference),
    # i.e. it is the correctly rounded float64, whatever precision produced it.
    with mpmath.workprec(512):
        for g, exact in zip(got, mp_omegas(d_model, base), strict=True):
            half_ulp = mpmath.mpf(float(np.spacing(g))) / 2
            assert abs(mpmath.mpf(float(g)) - exact) <= half_ulp


@given(d_model=st.integers(1, 300).map(lambda h: 2 * h), base=st.floats(1.0001, 1e7))
def test_frequencies_correctly_rounded_property(d_model, base):
    got = posenc.frequencies(d_model, base=base)
    with mpmath.workprec(200):
        exact = [
            float(mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / d_model)) for i in range(d_model // 2)
        ]
    np.testing.assert_array_equal(got, np.array(exact))
    assert got[0] == 1.0
    assert np.all(np.diff(got) < 0)


def test_frequencies_last_is_not_one_over_base():
    w = posenc.frequencies(512)
    # ω_{d/2-1} = 10000^(-510/512), not 1/10000.
    assert w[-1] == float(mpmath.power(10000, mpmath.mpf(-510) / 512))
    assert w[-1] > 1e-4


def test_frequencies_returns_a_fresh_array():
    w = posenc.frequencies(8)
    w[:] = 123.0  # must not corrupt any cached table
    assert posenc.frequencies(8)[0] == 1.0
    np.testing.assert_array_equal(posenc.frequencies(8), column_omegas(8)[0::2])
    # The table uses the same frequencies: still the exact sin/cos after the mutation.
    np.testing.assert_allclose(
        posenc.sinusoidal_encoding([3.0], 8), reference_table([3.0], 8), rtol=0, atol=1e-15
    )


# ---------------------------------------------------------------------------------------
# sinusoidal_encoding: values
# ---------------------------------------------------------------------------------------


def test_d4_table_hand_derived():
    # Row p of the d=4 interleaved table is [sin p, cos p, sin(p/100), cos(p/100)].
    pe = posenc.sinusoidal_encoding(4, 4)
    assert pe.shape == (4, 4) and pe.dtype == np.float64
    for p in range(4):
        expected = [math.sin(p), math.cos(p), math.sin(p / 100), math.cos(p / 100)]
        np.testing.assert_allclose(pe[p], expected, rtol=0, atol=4 * EPS)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("d_model", [2, 8, 512])
def test_position_zero_is_sin0_cos0(d_model, layout):
    row = posenc.sinusoidal_encoding(1, d_model, layout=layout)[0]
    if layout == "interleaved":
        expected = np.tile([0.0, 1.0], d_model // 2)  # [0, 1, 0, 1, ...]
    else:
        expected = np.concatenate([np.zeros(d_model // 2), np.ones(d_model // 2)])
    np.testing.assert_array_equal(row, expected)


def test_int_length_means_arange():
    a = posenc.sinusoidal_encoding(7, 16)
    b = posenc.sinusoidal_encoding(np.arange(7), 16)
    c = posenc.sinusoidal_encoding([0, 1, 2, 3, 4, 5, 6], 16)
    d = posenc.sinusoidal_encoding(np.int64(7), 16)
    for other in (b, c, d):
        np.testing.assert_array_equal(a, other)
    assert a.shape == (7, 16)


POSITIONS = [0, 1, -1, 0.5, -3.25, 7, 100.5, 12345.678, -98765.4321, 2**31 + 5, -(2**33) + 0.5, 2**40]


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("d_model,base", [(4, 10000.0), (16, 10000.0), (128, 10000.0), (10, 100.0), (6, 2.5)])
def test_table_matches_mpmath(d_model, base, layout):
    """Each entry within |p|·ω·2^-52 + 4·2^-52 of the exact value (see angle_tolerance)."""
    got = posenc.sinusoidal_encoding(np.array(POSITIONS, dtype=np.float64), d_model, base=base, layout=layout)
    expected = reference_table(POSITIONS, d_model, base, layout)
    tol = angle_tolerance(POSITIONS, d_model, base, layout)
    assert np.all(np.abs(got - expected) <= tol), np.max(np.abs(got - expected) / tol)


def test_positions_above_2_31_int64():
    p = np.array([2**31 + 7], dtype=np.int64)
    got = posenc.sinusoidal_encoding(p, 32)
    tol = angle_tolerance([2**31 + 7], 32)  # ≈ 2^-21 on the fastest column
    assert np.all(np.abs(got - reference_table([2**31 + 7], 32)) <= tol)
    # An int32 cast would wrap to -2^31 + 7: that row is far from the right one.
    wrapped = reference_table([-(2**31) + 7], 32)
    assert np.max(np.abs(got - wrapped)) > 100 * tol.max()


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32, np.int16, np.uint8])
def test_integer_dtypes_give_the_float_result(dtype):
    values = [0, 3, 17, 100]
    got = posenc.sinusoidal_encoding(np.array(values, dtype=dtype), 8)
    tol = angle_tolerance(values, 8)
    assert np.all(np.abs(got - reference_table(values, 8)) <= tol)


def test_uint64_and_int64_near_2_53():
    values = [2**53, 2**53 - 1, 2**52 + 3]
    for dtype in (np.int64, np.uint64):
        got = posenc.sinusoidal_encoding(np.array(values, dtype=dtype), 4)
        tol = angle_tolerance(values, 4)
        assert np.all(np.abs(got - reference_table(values, 4)) <= tol)
    got = posenc.sinusoidal_encoding(np.array([-(2**53)], dtype=np.int64), 4)
    assert np.all(np.abs(got - reference_table([-(2**53)], 4)) <= angle_tolerance([-(2**53)], 4))


@given(positions=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=6), d_model=even_d)
def test_row_norms_are_sqrt_half_d(positions, d_model):
    pe = posenc.sinusoidal_encoding(np.array(positions), d_model)
    # Each pair contributes sin² + cos² = 1 up to rounding, so ||row||² = d/2.
    np.testing.assert_allclose(np.linalg.norm(pe, axis=1), math.sqrt(d_model / 2), rtol=1e-14)


@given(
    positions=st.lists(st.floats(-(2.0**40), 2.0**40), min_size=1, max_size=6),
    d_model=even_d,
    layout=st.sampled_from(["interleaved", "half"]),
    dtype=st.sampled_from([np.float64, np.float32, np.float16]),
)
def test_values_bounded_by_one(positions, d_model, layout, dtype):
    pe = posenc.sinusoidal_encoding(np.array(positions), d_model, layout=layout, dtype=dtype)
    assert pe.dtype == np.dtype(dtype)
    assert pe.shape == (len(positions), d_model)
    assert np.all(np.isfinite(pe))
    assert np.all(pe <= 1) and np.all(pe >= -1)


@given(positions=st.lists(st.integers(-(2**53), 2**53), min_size=1, max_size=5), d_model=even_d)
def test_int64_positions_equal_float64_positions(positions, d_model):
    # Integers up to 2^53 are exact in float64, so both inputs denote the same positions.
    as_int = posenc.sinusoidal_encoding(np.array(positions, dtype=np.int64), d_model)
    as_float = posenc.sinusoidal_encoding(np.array([float(p) for p in positions]), d_model)
    np.testing.assert_array_equal(as_int, as_float)


# ---------------------------------------------------------------------------------------
# dtype: float32 / float16 output at large positions
# ---------------------------------------------------------------------------------------

LARGE = [2**20, 2**20 + 1, 2**22 + 3, 3_000_000.5, -(2**21) - 0.75, 2**24 - 1, 2**24]


def test_float32_within_one_ulp_of_exact_at_large_positions():
    d = 64
    got = posenc.sinusoidal_encoding(np.array(LARGE, dtype=np.float64), d, dtype=np.float32)
    assert got.dtype == np.float32
    exact = mp_table(LARGE, d)
    # float64 angle error here is ≤ 2^24·2^-52 = 2^-28 (+ a few 2^-52). Rounding to
    # float32 adds ≤ half a float32 ulp, so the total is ≤ 1 ulp wherever half an ulp
    # exceeds 2^-28 + 2^-50, i.e. for |value| ≥ 2^-4; nearer 0 (where float32 ulps are
    # tiny) the float64 angle error itself is the bound.
    angle_bound = angle_tolerance(LARGE, d)
    naive_worst = 0.0
    for r, p in enumerate(LARGE):
        naive = np.float32(p) * np.float32(column_omegas(d)[::2])  # the classic float32 mistake
        for c in range(d):
            v = float(exact[r][c])
            err = abs(float(got[r, c]) - v)
            if abs(v) >= 2**-4:
                assert err <= ulp32(v), (p, c, err / ulp32(v))
            else:
                assert err <= ulp32(v) / 2 + angle_bound[r, c]
            nv = np.sin(naive[c // 2]) if c % 2 == 0 else np.cos(naive[c // 2])
            naive_worst = max(naive_worst, abs(float(nv) - v) / ulp32(v))
    # The check discriminates: angles formed in float32 are off by far more than an ulp.
    assert naive_worst > 100


@pytest.mark.parametrize("p", [2**31 + 7, 2**32 + 1, 10**10 + 3])
def test_float32_beyond_2_31(p):
    d = 16
    got = posenc.sinusoidal_encoding(np.array([p], dtype=np.int64), d, dtype=np.float32)
    exact = mp_table([p], d)[0]
    bound = angle_tolerance([p], d)[0]
    for c in range(d):
        v = float(exact[c])
        assert abs(float(got[0, c]) - v) <= ulp32(v) / 2 + bound[c]


@given(
    positions=st.lists(st.floats(-(2.0**30), 2.0**30), min_size=1, max_size=5),
    d_model=even_d,
    dtype=st.sampled_from([np.float32, np.float16]),
)
def test_low_precision_is_the_rounded_float64_table(positions, d_model, dtype):
    # Angles and sin/cos are formed in float64; only the result is rounded to dtype.
    lo = posenc.sinusoidal_encoding(np.array(positions), d_model, dtype=dtype)
    hi = posenc.sinusoidal_encoding(np.array(positions), d_model)
    np.testing.assert_array_equal(lo, hi.astype(dtype))


# ---------------------------------------------------------------------------------------
# layouts
# ---------------------------------------------------------------------------------------


def test_half_uses_paper_frequencies_not_fairseq_spacing():
    d, p = 8, 1000.0
    half = posenc.sinusoidal_encoding([p], d, layout="half")[0]
    # Last sine column: sin(p · 10000^(-6/8)).
    paper = math.sin(p * 10000 ** (-6 / 8))
    fairseq = math.sin(p * math.exp(-math.log(10000) * 3 / (d // 2 - 1)))  # = sin(p / 10000)
    assert abs(half[d // 2 - 1] - paper) < 1e-12
    assert abs(half[d // 2 - 1] - fairseq) > 0.1


# ---------------------------------------------------------------------------------------
# relative_position_matrix
# ---------------------------------------------------------------------------------------


def test_relative_matrix_d4_hand_derived():
    k = 3.0
    m = posenc.relative_position_matrix(4, k)
    c0, s0, c1, s1 = math.cos(k), math.sin(k), math.cos(k / 100), math.sin(k / 100)
    expected = np.array([[c0, s0, 0, 0], [-s0, c0, 0, 0], [0, 0, c1, s1], [0, 0, -s1, c1]])
    np.testing.assert_allclose(m, expected, rtol=0, atol=4 * EPS)


def _shift_tolerance(p, k, d_model, base=10000.0):
    # M_k·PE_p mixes two entries computed with angle errors |k|ω·2^-52 and |p|ω·2^-52
    # (plus a few ulp each); PE_{p+k} has angle error |p+k|ω·2^-52. Sum of those, x2 margin.
    w = column_omegas(d_model, base)
    return 2 * ((2 * abs(p) + 2 * abs(k) + abs(p + k)) * w * EPS + 16 * EPS)


@given(p=quarter_positions, k=quarter_positions, d_model=even_d)
def test_shift_matrix_moves_positions(p, k, d_model):
    m = posenc.relative_position_matrix(d_model, k)
    pe = posenc.sinusoidal_encoding(np.array([p, p + k]), d_model)  # p + k is exact here
    assert np.all(np.abs(m @ pe[0] - pe[1]) <= _shift_tolerance(p, k, d_model))


@given(p=quarter_positions, k=st.floats(-1e4, 1e4), d_model=st.sampled_from([2, 4, 6, 16]))
def test_shift_matrix_against_mpmath(p, k, d_model):
    # Independent of posenc's table: M_k PE_p vs the exact PE_{p+k} (p + k formed in mpmath).
    m = posenc.relative_position_matrix(d_model, k)
    pe_p = np.array([float(v) for v in mp_table([p], d_model)[0]])
    omegas = mp_omegas(d_model)
    with mpmath.workprec(256):
        q = mpmath.mpf(p) + mpmath.mpf(k)
        exact = []
        for w in omegas:
            exact += [float(mpmath.sin(q * w)), float(mpmath.cos(q * w))]
    assert np.all(np.abs(m @ pe_p - np.array(exact)) <= _shift_tolerance(p, k, d_model))


@given(p=quarter_positions, k=quarter_positions, d_model=even_d)
def test_shift_matrix_half_layout(p, k, d_model):
    m = posenc.relative_position_matrix(d_model, k, layout="half")
    pe = posenc.sinusoidal_encoding(np.array([p, p + k]), d_model, layout="half")
    perm = posenc.layout_permutation(d_model)
    tol = _shift_tolerance(p, k, d_model)[perm]
    assert np.all(np.abs(m @ pe[0] - pe[1]) <= tol)
    # Same operator, permuted basis: M_half = P M P^T with P the column permutation.
    m_int = posenc.relative_position_matrix(d_model, k)
    np.testing.assert_array_equal(m, m_int[np.ix_(perm, perm)])


@given(k=st.floats(-1e5, 1e5), d_model=even_d, layout=st.sampled_from(["interleaved", "half"]))
def test_shift_matrix_orthogonal_rotation(k, d_model, layout):
    m = posenc.relative_position_matrix(d_model, k, layout=layout)
    np.testing.assert_allclose(m @ m.T, np.eye(d_model), rtol=0, atol=8 * EPS)
    np.testing.assert_allclose(m.T @ m, np.eye(d_model), rtol=0, atol=8 * EPS)
    assert abs(np.linalg.det(m) - 1.0) < 1e-12  # a rotation, not a reflection
    # M_{-k} is the inverse, i.e. the transpose.
    inv = posenc.relative_position_matrix(d_model, -k, layout=layout)
    np.testing.assert_array_equal(inv, m.T)


@given(j=quarter_positions, k=quarter_positions, d_model=even_d)
def test_shift_matrices_compose(j, k, d_model):
    mj = posenc.relative_position_matrix(d_model, j)
    mk = posenc.relative_position_matrix(d_model, k)
    mjk = posenc.relative_position_matrix(d_model, j + k)  # j + k exact
    w = column_omegas(d_model)[None, :]
    tol = 2 * ((2 * abs(j) + 2 * abs(k) + abs(j + k)) * w * EPS + 16 * EPS)
    assert np.all(np.abs(mj @ mk - mjk) <= tol)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("d_model", [2, 4, 64])
def test_shift_matrix_zero_is_identity(d_model, layout):
    for zero in (0, 0.0, -0.0):
        np.testing.assert_array_equal(
            posenc.relative_position_matrix(d_model, zero, layout=layout), np.eye(d_model)
        )


def test_shift_matrix_base_and_block_structure():
    d, k, base = 6, 2.5, 7.0
    m = posenc.relative_position_matrix(d, k, base=base)
    for i in range(d // 2):
        w = float(mpmath.power(7, mpmath.mpf(-2 * i) / d))
        block = m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2]
        expected = [[math.cos(k * w), math.sin(k * w)], [-math.sin(k * w), math.cos(k * w)]]
        np.testing.assert_allclose(block, expected, rtol=0, atol=4 * EPS)
        off = np.delete(m[2 * i : 2 * i + 2], [2 * i, 2 * i + 1], axis=1)
        assert np.all(off == 0)


# ---------------------------------------------------------------------------------------
# dot products depend on m - n only
# ---------------------------------------------------------------------------------------


def _dot_tolerance(m, n, d_model):
    w = column_omegas(d_model)
    return float(np.sum(2 * (abs(m) + abs(n)) * w * EPS + 8 * EPS)) + d_model * EPS


ints = st.integers(-(10**6), 10**6)


@given(m=ints, n=ints, s=ints, d_model=even_d)
def test_dot_product_is_shift_invariant(m, n, s, d_model):
    pe = posenc.sinusoidal_encoding(np.array([m, n, m + s, n + s], dtype=np.int64), d_model)
    tol = _dot_tolerance(m, n, d_model) + _dot_tolerance(m + s, n + s, d_model)
    assert abs(pe[0] @ pe[1] - pe[2] @ pe[3]) <= tol


@given(m=ints, n=ints, d_model=st.sampled_from([2, 4, 8, 16, 32]))
def test_dot_product_equals_sum_of_cosines(m, n, d_model):
    pe = posenc.sinusoidal_encoding(np.array([m, n], dtype=np.int64), d_model)
    with mpmath.workprec(256):
        expected = float(mpmath.fsum(mpmath.cos((m - n) * w) for w in mp_omegas(d_model)))
    assert abs(pe[0] @ pe[1] - expected) <= _dot_tolerance(m, n, d_model)


# ---------------------------------------------------------------------------------------
# SinusoidalPositionalEncoding
# ---------------------------------------------------------------------------------------


def test_module_forward_adds_table_broadcast_over_batch():
    rng = np.random.default_rng(0)
    B, L, d, max_len = 3, 5, 8, 10
    X = rng.normal(size=(B, L, d))
    X_copy = X.copy()
    module = posenc.SinusoidalPositionalEncoding(max_len, d)
    out = module.forward(X)
    assert out.shape == (B, L, d)
    expected_pe = reference_table(range(L), d)
    for b in range(B):
        np.testing.assert_allclose(out[b] - X[b], expected_pe, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(X, X_copy)  # input untouched
    np.testing.assert_array_equal(module(X), out)  # __call__ is forward


def test_module_table_and_length_limits():
    module = posenc.SinusoidalPositionalEncoding(6, 4)
    np.testing.assert_allclose(module.table, reference_table(range(6), 4), rtol=0, atol=1e-15)
    assert module.table.shape == (6, 4)
    full = module.forward(np.zeros((2, 6, 4)))  # L == max_len allowed
    np.testing.assert_allclose(full[1], reference_table(range(6), 4), rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="max_len"):
        module.forward(np.zeros((2, 7, 4)))
    with pytest.raises(ValueError, match="d_model"):
        module.forward(np.zeros((2, 3, 6)))
    with pytest.raises(ValueError, match="X"):
        module.forward(np.zeros(4))


def test_module_leading_axes_and_options():
    module = posenc.SinusoidalPositionalEncoding(4, 6, base=50.0, layout="half", dtype=np.float32)
    assert module.table.dtype == np.float32
    X = np.zeros((2, 3, 4, 6))
    out = module.forward(X)
    assert out.shape == (2, 3, 4, 6)
    ref = reference_table(range(4), 6, base=50.0, layout="half")
    for idx in np.ndindex(2, 3):
        np.testing.assert_allclose(out[idx], ref, rtol=0, atol=1e-7)
    # 2-D input (a single sequence) is one leading axis fewer.
    np.testing.assert_allclose(module.forward(np.zeros((2, 6))), ref[:2], rtol=0, atol=1e-7)


def test_module_table_read_only():
    module = posenc.SinusoidalPositionalEncoding(4, 4)
    with pytest.raises(ValueError):
        module.table[0, 0] = 5.0


# ---------------------------------------------------------------------------------------
# wavelengths
# ---------------------------------------------------------------------------------------


def test_wavelengths_d4_hand():
    # λ_i = 2π / ω_i: d = 4 gives 2π and 2π·100.
    got = posenc.wavelengths(4)
    np.testing.assert_allclose(got, [2 * math.pi, 200 * math.pi], rtol=2 * EPS)


@pytest.mark.parametrize("d_model", [2, 8, 64, 512])
@pytest.mark.parametrize("base", [10000.0, 10.0, 500000.0])
def test_wavelengths_correctly_rounded(d_model, base):
    got = posenc.wavelengths(d_model, base=base)
    assert got.dtype == np.float64 and got.shape == (d_model // 2,)
    with mpmath.workprec(512):
        for g, w in zip(got, mp_omegas(d_model, base), strict=True):
            exact = 2 * mpmath.pi / w
            assert abs(mpmath.mpf(float(g)) - exact) <= mpmath.mpf(float(np.spacing(g))) / 2
    assert got[0] == float(2 * mpmath.pi)
    assert np.all(np.diff(got) > 0)
    assert got[-1] < 2 * math.pi * base  # the longest wavelength is below 2π·base


LIMIT = 2**53

small_even_d = st.sampled_from([2, 4, 6, 8, 12, 16])

bases = st.sampled_from([10000.0, 100.0, 2.5, 500000.0, 10000])

# The documented accuracy of the tables: within a few float64 roundings (<= 2^-51) of the
# exact value at every position up to 2**53.
TABLE_TOL = 2.0**-51


def int_positions(max_size: int = 5):
    return st.lists(st.integers(-LIMIT, LIMIT), min_size=1, max_size=max_size)


def float_positions(max_size: int = 5):
    return st.lists(
        st.floats(-float(LIMIT), float(LIMIT), allow_nan=False, allow_infinity=False),
        min_size=1,
        max_size=max_size,
    )


def as_container(values, kind: str):
    """The same positions as a list, a tuple, or a numpy array of several dtypes."""
    if kind == "list":
        return list(values)
    if kind == "tuple":
        return tuple(values)
    if kind == "int64":
        return np.array(values, dtype=np.int64)
    return np.array(values, dtype=np.float64)


@settings(max_examples=20)
@given(d=st.sampled_from([2, 4, 8, 16, 64, 130]), base=bases, as_numpy=st.booleans())
def test_frequencies_and_wavelengths_are_the_rounded_exact_values(d, base, as_numpy):
    dd = np.int64(d) if as_numpy else d
    np.testing.assert_array_equal(posenc.frequencies(dd, base), rounded_omegas(d, base))
    with mpmath.workprec(MP_PREC):
        lam = [float(2 * mpmath.pi / w) for w in mp_omegas(d, base)]
    np.testing.assert_allclose(posenc.wavelengths(dd, base), lam, rtol=EPS, atol=0)


@settings(max_examples=30)
@given(
    positions=st.one_of(int_positions(), float_positions()),
    kind=st.sampled_from(["list", "tuple", "int64", "float64"]),
    d=small_even_d,
    layout=st.sampled_from(["interleaved", "half"]),
)
def test_sinusoidal_encoding_matches_mpmath_up_to_2_53(positions, kind, d, layout):
    if kind == "int64":
        positions = [int(p) for p in positions]
    got = posenc.sinusoidal_encoding(as_container(positions, kind), d, layout=layout)
    expected = reference_table([float(p) for p in positions], d, layout=layout)
    assert got.dtype == np.float64 and got.shape == (len(positions), d)
    assert np.max(np.abs(got - expected)) <= TABLE_TOL


@pytest.mark.parametrize(
    "positions",
    [
        [LIMIT],  # a run of length one ending at 2**53
        [LIMIT - 1, LIMIT],
        [LIMIT - 2, LIMIT - 1],
        [-LIMIT, -LIMIT + 1],
        [float(LIMIT)],
    ],
)
def test_sinusoidal_encoding_at_the_limit(positions):
    got = posenc.sinusoidal_encoding(np.array(positions), 4)
    assert np.max(np.abs(got - reference_table([float(p) for p in positions], 4))) <= TABLE_TOL


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint16, np.int32, np.uint64])
def test_small_integer_positions_are_not_computed_in_their_dtype(dtype):
    values = [0, 1, 100, 127]
    got = posenc.sinusoidal_encoding(np.array(values, dtype=dtype), 6)
    assert np.max(np.abs(got - reference_table(values, 6))) <= TABLE_TOL


@settings(max_examples=15)
@given(length=st.integers(1, 40), block=st.integers(1, 50), d=small_even_d)
def test_iter_sinusoidal_blocks_tile_the_reference_table(length, block, d):
    blocks = list(posenc.iter_sinusoidal_blocks(length, d, block=block))
    assert [a for a, _ in blocks] == list(range(0, length, block))
    table = np.concatenate([rows for _, rows in blocks])
    assert np.max(np.abs(table - reference_table(range(length), d))) <= TABLE_TOL


@settings(max_examples=30)
@given(
    d=small_even_d,
    offset=st.one_of(st.integers(-LIMIT, LIMIT), st.floats(-float(LIMIT), float(LIMIT), allow_nan=False)),
    layout=st.sampled_from(["interleaved", "half"]),
)
def test_relative_position_matrix_matches_mpmath(d, offset, layout):
    got = posenc.relative_position_matrix(d, offset, layout=layout)
    ref = reference_shift_matrix(d, offset)
    w = np.repeat(rounded_omegas(d), 2)
    # documented accuracy: |k| w 2^-52 + a few ulp, per row/column of pair i
    tol = abs(float(offset)) * np.maximum.outer(w, w) * EPS * (1 + 2.0**-40) + 4 * EPS
    if layout == "half":
        perm = [2 * j for j in range(d // 2)] + [2 * j + 1 for j in range(d // 2)]
        ref, tol = ref[np.ix_(perm, perm)], tol[np.ix_(perm, perm)]
    assert np.all(np.abs(got - ref) <= tol)


@settings(max_examples=15)
@given(
    max_len=st.integers(1, 12),
    d=small_even_d,
    batch=st.integers(1, 3),
    integer=st.booleans(),
    data=st.data(),
)
def test_sinusoidal_module_forward_adds_the_reference_table(max_len, d, batch, integer, data):
    length = data.draw(st.integers(1, max_len))
    values = data.draw(
        st.lists(st.integers(-1000, 1000), min_size=batch * length * d, max_size=batch * length * d)
    )
    x = np.array(values, dtype=np.int16 if integer else np.float64).reshape(batch, length, d)
    out = posenc.SinusoidalPositionalEncoding(max_len, d).forward(x.tolist() if not integer else x)
    expected = np.array(values, dtype=np.float64).reshape(batch, length, d) + reference_table(
        range(length), d
    )
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, expected, rtol=0, atol=1000 * EPS + 2.0**-51)


def test_iter_sinusoidal_blocks_checks_before_the_first_block():
    refuses(ValueError, "d_model", posenc.iter_sinusoidal_blocks, 4, 3)  # no next() needed


def test_blocks_of_an_int_length_form_only_their_own_positions():
    tracemalloc.start()
    try:
        start, rows = next(posenc.iter_sinusoidal_blocks(2**28, 2, block=256))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert start == 0 and rows.shape == (256, 2) and peak < 2**20, peak
    # the rows are the table's, here against a direct formula (position p: sin p, cos p)
    p = np.arange(256.0)
    assert np.allclose(rows, np.stack([np.sin(p), np.cos(p)], axis=1), rtol=0, atol=1e-15)
    blocks = list(posenc.iter_sinusoidal_blocks(1000, 6, block=300))
    assert [s for s, _ in blocks] == [0, 300, 600, 900] and blocks[-1][1].shape == (100, 6)
    assert np.array_equal(np.concatenate([b for _, b in blocks]), posenc.sinusoidal_encoding(1000, 6))
