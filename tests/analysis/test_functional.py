"""Tests of posenc.analysis.functional: the phase equation residual and angle wrapping.

Expected values are closed forms derived by hand (e.g. for phi_m = m^2 theta the residual
is m^2 - n^2 - (m-n)^2 = 2n(m-n) times theta) or exact integer arithmetic in Python.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from conftest import (
    EPS,
    MP_PREC,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc

ints = st.integers(-10_000, 10_000)


@given(m=ints, n=ints, theta=st.floats(-5, 5))
def test_linear_phase_has_zero_residual(m, n, theta):
    r = posenc.analysis.functional_equation_residual(lambda p: p * theta, m, n)
    # m*theta - n*theta - (m-n)*theta in float64: three roundings of size <= |x| 2^-53 each
    assert abs(float(r)) <= 4 * 20_000 * abs(theta) * 2.0**-52


@given(m=ints, n=ints)
def test_square_phase_residual_is_2n_m_minus_n(m, n):
    r = posenc.analysis.functional_equation_residual(lambda p: p.astype(float) ** 2, m, n)
    assert float(r) == 2 * n * (m - n)  # exact: all values are integers below 2^53


def test_affine_phase_residual_is_minus_c_everywhere():
    m, n = np.meshgrid(np.arange(-7, 8), np.arange(-7, 8), indexing="ij")
    r = posenc.analysis.functional_equation_residual(lambda p: 0.5 * p + 3.0, m, n)
    assert r.shape == (15, 15)
    np.testing.assert_array_equal(r, -3.0)


def test_floor_phase_residual_matches_integer_arithmetic():
    m, n = np.meshgrid(np.arange(-9, 10), np.arange(-9, 10), indexing="ij")
    r = posenc.analysis.functional_equation_residual(lambda p: np.floor_divide(p, 2), m, n)
    expected = [[a // 2 - b // 2 - (a - b) // 2 for b in range(-9, 10)] for a in range(-9, 10)]
    np.testing.assert_array_equal(r, np.array(expected, dtype=float))
    assert set(np.unique(r)) == {0.0, 1.0}


def test_period_reduces_multiples_of_the_period_to_zero():
    # phi_m = m*theta + 2*pi*m^2: residual 2*pi*2n(m-n), a multiple of 2*pi
    m, n = np.meshgrid(np.arange(-5, 6), np.arange(-5, 6), indexing="ij")
    phi = lambda p: 0.3 * p + 2 * math.pi * p.astype(float) ** 2  # noqa: E731
    raw = posenc.analysis.functional_equation_residual(phi, m, n)
    np.testing.assert_allclose(raw, 2 * math.pi * 2 * n * (m - n), atol=1e-9)
    wrapped = posenc.analysis.functional_equation_residual(phi, m, n, period=2 * math.pi)
    np.testing.assert_allclose(wrapped, 0, atol=1e-9)


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (0.0, 0.0),
        (0.5, 0.5),
        (math.pi, -math.pi),
        (-math.pi, -math.pi),
        (3 * math.pi, -math.pi),
        (7.0, 7.0 - 2 * math.pi),
        (-7.0, -7.0 + 2 * math.pi),
        (2.5 * math.pi, 0.5 * math.pi),
    ],
)
def test_wrap_angle_known_values(x, expected):
    assert float(posenc.analysis.wrap_angle(x)) == pytest.approx(expected, abs=1e-12)


def test_wrap_angle_with_period():
    np.testing.assert_array_equal(
        posenc.analysis.wrap_angle([0, 1, 2, 3, 4, 5], period=4), [0, 1, -2, -1, 0, 1]
    )


@given(x=st.floats(-1e6, 1e6))
def test_wrap_angle_is_in_range_and_congruent(x):
    w = float(posenc.analysis.wrap_angle(x))
    assert -math.pi <= w < math.pi
    k = (x - w) / (2 * math.pi)
    assert abs(k - round(k)) < 1e-9 * max(1.0, abs(x))


def test_bad_input():
    with pytest.raises(TypeError, match="phi"):
        posenc.analysis.functional_equation_residual(3.0, 1, 2)
    with pytest.raises(TypeError, match="m must hold integers"):
        posenc.analysis.functional_equation_residual(lambda p: p, 1.5, 2)
    with pytest.raises(TypeError, match="n must hold integers"):
        posenc.analysis.functional_equation_residual(lambda p: p, 1, np.array([True]))
    with pytest.raises(ValueError, match="broadcast"):
        posenc.analysis.functional_equation_residual(lambda p: p, np.arange(3), np.arange(4))
    with pytest.raises(ValueError, match="shape"):
        posenc.analysis.functional_equation_residual(lambda p: np.zeros(2), np.arange(3), 0)
    with pytest.raises(ValueError, match="period"):
        posenc.analysis.functional_equation_residual(lambda p: p, 1, 2, period=0.0)
    with pytest.raises(ValueError, match="period"):
        posenc.analysis.wrap_angle(1.0, period=-1.0)
    with pytest.raises(ValueError, match="finite"):
        posenc.analysis.wrap_angle([np.nan])
    with pytest.raises(TypeError, match="x must be"):
        posenc.analysis.wrap_angle(["a"])


@settings(max_examples=40)
@given(
    x=st.lists(
        st.floats(-1e12, 1e12, allow_nan=False) | st.integers(-(10**9), 10**9), min_size=1, max_size=6
    ),
    period=st.sampled_from([2 * math.pi, 1.0, 7, 0.001, 360.0]),
)
def test_wrap_angle_matches_the_exact_residue(x, period):
    got = posenc.analysis.wrap_angle(x, period)
    p = float(period)
    assert np.all(got >= -p / 2) and np.all(got < p / 2)
    with mpmath.workprec(MP_PREC):
        P = mpmath.mpf(p)
        for g, v in zip(got, x, strict=True):
            exact = mpmath.mpf(v) - P * mpmath.floor((mpmath.mpf(v) + P / 2) / P)
            diff = abs(mpmath.mpf(float(g)) - exact)
            diff = min(diff, abs(P - diff))  # equal modulo the period
            assert diff <= abs(float(v)) * 2.0**-51 + p * EPS


@settings(max_examples=30)
@given(
    m=st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=5),
    n=st.integers(-(10**6), 10**6),
    period=st.one_of(st.none(), st.just(7)),
)
def test_functional_equation_residual_of_a_square(m, n, period):
    # phi(p) = p^2: phi(m) - phi(n) - phi(m - n) = 2 n (m - n), exact in float64 here.
    got = posenc.analysis.functional_equation_residual(
        lambda p: p.astype(np.float64) ** 2, m, np.int32(n), period=period
    )
    exact = [2 * n * (mm - n) for mm in m]
    if period is not None:
        exact = [((e + 3.5) % 7) - 3.5 for e in exact]
    assert got.tolist() == [float(e) for e in exact]
