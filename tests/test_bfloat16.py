"""Tests of posenc.round_to_bfloat16 against an independent rounding in exact arithmetic.

The reference rounds each float32 value with Python's fractions: it finds the two
neighbouring multiples of the bfloat16 spacing (2**(e - 7) for a value in [2**e, 2**(e+1)),
2**-133 below 2**-126) and picks the nearer one, the even one on a tie. No bit patterns.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from conftest import refuses
from hypothesis import given
from hypothesis import strategies as st

import posenc

BF16_MAX = Fraction(2) ** 127 * (2 - Fraction(1, 2**7))


def exact_bfloat16(value: float) -> float:
    """The bfloat16 value nearest to ``value`` (ties to even), by exact rational arithmetic."""
    if math.isnan(value) or math.isinf(value) or value == 0.0:
        return value
    x = Fraction(value)
    sign = -1 if x < 0 else 1
    a = abs(x)
    e = math.floor(math.log2(a))
    while Fraction(2) ** e > a:  # make 2**e <= a < 2**(e+1) exact
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    spacing = Fraction(2) ** (max(e, -126) - 7)
    low = (a // spacing) * spacing
    high = low + spacing
    if a - low < high - a:
        r = low
    elif a - low > high - a:
        r = high
    else:
        r = low if (low / spacing) % 2 == 0 else high
    if r > BF16_MAX:
        return sign * math.inf
    # A negative value that rounds to zero gives -0.0 (IEEE keeps the sign; a Fraction has none).
    return math.copysign(float(r), sign)


def check(values: np.ndarray) -> None:
    got = posenc.round_to_bfloat16(values.astype(np.float32))
    assert got.dtype == np.float32 and got.shape == values.shape
    for v, g in zip(values.astype(np.float32).ravel().tolist(), got.ravel().tolist(), strict=True):
        want = exact_bfloat16(v)
        if math.isnan(want):
            assert math.isnan(g)
        else:
            assert g == want and math.copysign(1.0, g) == math.copysign(1.0, want), (v, g, want)


def test_hand_values():
    # 1 + 2**-8 is a tie between 1 and 1 + 2**-7: to even, 1; 1 + 3*2**-8 ties up to 1 + 2**-6
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -(1 + 2**-8), 0.1, 3.0], np.float32)
    want = [1.0, 1.0, 1 + 2**-6, 1 + 2**-7, -1.0, 0.10009765625, 3.0]
    assert posenc.round_to_bfloat16(x).tolist() == want


def test_specials():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, -3.4e38, 1e-45], np.float32)
    got = posenc.round_to_bfloat16(x)
    assert got[0] == 0 and math.copysign(1, got[1]) == -1
    assert got[2] == np.inf and got[3] == -np.inf and np.isnan(got[4])
    assert got[5] == np.inf and got[6] == -np.inf  # above the largest bfloat16 value
    assert got[7] == 0.0  # the smallest float32 subnormal is below half a bfloat16 spacing


def test_every_value_is_a_bfloat16_value():
    x = np.random.default_rng(0).standard_normal(10_000).astype(np.float32) * 1e3
    got = posenc.round_to_bfloat16(x)
    assert np.all(got.view(np.uint32) & np.uint32(0xFFFF) == 0)
    rel = np.abs(got.astype(np.float64) / x - 1)
    assert rel.max() <= 2.0**-8  # unit roundoff of 8 significant bits


@given(st.floats(width=32, allow_nan=True, allow_infinity=True))
def test_matches_exact_rounding(value):
    check(np.array([value]))


@given(st.integers(0, 2**32 - 1))
def test_matches_exact_rounding_on_bit_patterns(bits):
    check(np.array([bits], dtype=np.uint32).view(np.float32))


def test_shapes_and_float16():
    x = np.arange(12, dtype=np.float16).reshape(3, 4) / 7
    check(x.astype(np.float32))
    assert posenc.round_to_bfloat16(x).shape == (3, 4)
    assert posenc.round_to_bfloat16(np.float32(1.5)).shape == ()


@pytest.mark.parametrize("bad", [np.zeros(3), [1.0, 2.0], np.arange(3), np.array([True]), np.array([1j])])
def test_refuses_other_dtypes(bad):
    refuses(TypeError, "x", posenc.round_to_bfloat16, bad)
