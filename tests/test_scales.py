"""Tests of posenc.scales: attention_temperature (Llama 4) and xpos_scale (xPos).

Oracles: for the temperature, the exact floor of the rational (p + 1)/F (Python integers
and Fractions) and math.log1p, plus a transcription of transformers' Llama 4 line with
math in place of torch; for xPos, zeta_j**(p/scale_base) in mpmath at 256 bits from the
exact rational zeta_j, torchscale's form of zeta written with Python floats, and hand
values (2/7 and 7/2 for d_head = 2). Never posenc's own output.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import EPS, MP_PREC, refuses
from hypothesis import given
from hypothesis import strategies as st

import posenc

LIMIT = 2**53
NAN, INF = float("nan"), float("inf")

# ---------------------------------------------------------------------------------------
# attention_temperature
# ---------------------------------------------------------------------------------------


def temperature_oracle(p, floor_scale=8192, attn_scale=0.1) -> float:
    """1 + a * ln(floor((p + 1)/F) + 1), the floor taken exactly on rationals."""
    if float(p).is_integer():
        top = Fraction(int(p)) + 1
    else:
        top = Fraction(float(p) + 1.0)  # documented: p + 1 rounded once for non-integer p
    steps = math.floor(top / Fraction(floor_scale))
    return 1.0 + attn_scale * math.log1p(steps)


def test_temperature_by_hand():
    got = posenc.attention_temperature([0, 1, 8190, 8191, 8192, 16382, 16383, 3 * 8192 - 1])
    want = [1, 1, 1, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(2)]
    want += [1 + 0.1 * math.log(3), 1 + 0.1 * math.log(4)]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=2 * EPS, atol=0)
    assert got[:3].tolist() == [1.0, 1.0, 1.0]  # exactly 1 before the first step


def test_temperature_transcribes_transformers_llama4():
    # Llama4TextAttention.forward (transformers 5.24, models/llama4/modeling_llama4.py):
    #   torch.log1p(torch.floor((positions.float() + 1.0) / self.floor_scale)) * self.attn_scale + 1.0
    # written with math on Python floats (float64 instead of float32)
    positions = [0, 100, 8191, 8192, 65535, 100_000, 10**6, 2**24 - 1]
    want = [math.log1p(math.floor((p + 1.0) / 8192)) * 0.1 + 1.0 for p in positions]
    np.testing.assert_allclose(posenc.attention_temperature(positions), want, rtol=2 * EPS, atol=0)


def test_temperature_int_length_and_shape():
    got = posenc.attention_temperature(5)
    assert got.shape == (5,) and got.tolist() == [1.0] * 5
    ids = np.array([[0, 8191, 16383], [3, 4, 5]])
    got = posenc.attention_temperature(ids, floor_scale=4)
    assert got.shape == (2, 3)
    for b in range(2):
        for t in range(3):
            assert got[b, t] == pytest.approx(temperature_oracle(ids[b, t], 4), rel=2 * EPS)


@given(
    positions=st.lists(st.integers(0, LIMIT), min_size=1, max_size=6),
    floor_scale=st.one_of(st.sampled_from([8192, 1, 3, 1000, 2**40]), st.integers(1, 10**6)),
    attn_scale=st.floats(-10, 10, allow_nan=False),
)
def test_temperature_integer_positions_against_exact_floor(positions, floor_scale, attn_scale):
    got = posenc.attention_temperature(
        np.array(positions, dtype=np.int64), floor_scale=floor_scale, attn_scale=attn_scale
    )
    for g, p in zip(got, positions, strict=True):
        want = temperature_oracle(p, floor_scale, attn_scale)
        assert abs(g - want) <= 4 * EPS * (abs(want) + abs(attn_scale) * 40)


@given(
    positions=st.lists(st.floats(0, 1e12, allow_nan=False), min_size=1, max_size=6),
    floor_scale=st.floats(0.5, 1e5, allow_nan=False),
)
def test_temperature_float_positions_and_scale(positions, floor_scale):
    got = posenc.attention_temperature(positions, floor_scale=floor_scale)
    for g, p in zip(got, positions, strict=True):
        assert g == pytest.approx(temperature_oracle(p, floor_scale), rel=4 * EPS)


def test_temperature_at_the_position_limit():
    # (2**53 + 1) // 8192 = 2**40 exactly (2**53 + 1 is not a float64, the floor is still exact)
    got = posenc.attention_temperature(np.array([LIMIT], dtype=np.int64))
    assert got[0] == pytest.approx(1 + 0.1 * math.log1p(2**40), rel=2 * EPS)
    # floor_scale = 3: (2**53 + 1) / 3 is an integer, a float64 quotient would round
    got = posenc.attention_temperature(np.array([LIMIT], dtype=np.int64), floor_scale=3)
    assert (LIMIT + 1) % 3 == 0
    assert got[0] == pytest.approx(1 + 0.1 * math.log1p((LIMIT + 1) // 3), rel=2 * EPS)


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "name"),
    [
        (([-1],), {}, ValueError, "positions"),
        (([0.5, -0.25],), {}, ValueError, "positions"),
        (([NAN],), {}, ValueError, "positions"),
        (([INF],), {}, ValueError, "positions"),
        (([LIMIT + 1],), {}, ValueError, "positions"),
        (([2.0**60],), {}, ValueError, "positions"),
        (([True],), {}, TypeError, "positions"),
        ((True,), {}, TypeError, "positions"),
        ((3.0,), {}, TypeError, "positions"),
        ((0,), {}, ValueError, "positions"),
        (([],), {}, ValueError, "positions"),
        ((["3"],), {}, TypeError, "positions"),
        (([1j],), {}, TypeError, "positions"),
        ((2**40,), {}, ValueError, "positions"),  # a length over 2**28, refused before arange
        (([3],), {"floor_scale": 0}, ValueError, "floor_scale"),
        (([3],), {"floor_scale": -8192}, ValueError, "floor_scale"),
        (([3],), {"floor_scale": NAN}, ValueError, "floor_scale"),
        (([3],), {"floor_scale": True}, TypeError, "floor_scale"),
        (([3],), {"floor_scale": "8192"}, TypeError, "floor_scale"),
        (([LIMIT],), {"floor_scale": 1e-300}, ValueError, "floor_scale"),
        (([3],), {"attn_scale": INF}, ValueError, "attn_scale"),
        (([3],), {"attn_scale": None}, TypeError, "attn_scale"),
        (([3],), {"attn_scale": False}, TypeError, "attn_scale"),
        (([10**6],), {"attn_scale": 1e308}, ValueError, "attn_scale"),
    ],
)
def test_temperature_refusals(args, kwargs, exc, name):
    refuses(exc, name, posenc.attention_temperature, *args, **kwargs)


# ---------------------------------------------------------------------------------------
# xpos_scale
# ---------------------------------------------------------------------------------------


def xpos_oracle(positions, d_head, gamma=0.4, scale_base=512) -> list[list]:
    """zeta_j ** (p / scale_base) in mpmath, zeta_j = (2j/d + gamma)/(1 + gamma) exactly."""
    rows = []
    with mpmath.workprec(MP_PREC):
        g = mpmath.mpf(float(gamma))
        zetas = [(mpmath.mpf(2 * j) / d_head + g) / (1 + g) for j in range(d_head // 2)]
        for p in positions:
            t = mpmath.mpf(float(p)) / mpmath.mpf(float(scale_base))
            rows.append([mpmath.power(z, t) for z in zetas])
    return rows


def assert_matches_oracle(got, positions, d_head, gamma=0.4, scale_base=512):
    want = xpos_oracle(positions, d_head, gamma, scale_base)
    with mpmath.workprec(MP_PREC):
        for row_got, row_want in zip(got, want, strict=True):
            for g, w in zip(row_got, row_want, strict=True):
                exponent = abs(float(mpmath.log(w)))
                tol = 16 * EPS * (1 + exponent)
                assert abs(mpmath.mpf(float(g)) / w - 1) <= tol, (g, float(w))


def test_xpos_by_hand_d2():
    # d_head = 2: one pair, zeta_0 = gamma / (1 + gamma) = 0.4 / 1.4 = 2/7
    got = posenc.xpos_scale([0, 512, -512, 1024], 2)
    assert got.shape == (4, 1) and got.dtype == np.float64
    np.testing.assert_allclose(got[:, 0], [1.0, 2 / 7, 7 / 2, 4 / 49], rtol=8 * EPS, atol=0)
    assert got[0, 0] == 1.0  # position 0: exactly 1


def test_xpos_by_hand_d4():
    # d_head = 4: zeta = (0 + 0.4)/1.4 = 2/7 and (0.5 + 0.4)/1.4 = 9/14; p = scale_base gives zeta itself
    got = posenc.xpos_scale([512], 4)
    np.testing.assert_allclose(got[0], [2 / 7, 9 / 14], rtol=8 * EPS, atol=0)
    got = posenc.xpos_scale([256], 4, gamma=1.0, scale_base=256)  # zeta = 1/2, 3/4
    np.testing.assert_allclose(got[0], [0.5, 0.75], rtol=8 * EPS, atol=0)


def test_xpos_transcribes_torchscale_zeta():
    # torchscale XPOS: scale = (arange(0, d, 2) + 0.4 * d) / (1.4 * d); factor = scale ** (pos / 512)
    d = 16
    positions = [-37, 0, 5, 300, 4096]
    zeta = [(k + 0.4 * d) / (1.4 * d) for k in range(0, d, 2)]
    want = [[math.pow(z, p / 512) for z in zeta] for p in positions]
    np.testing.assert_allclose(posenc.xpos_scale(positions, d), want, rtol=1e-13, atol=0)


@given(
    positions=st.lists(st.integers(-200_000, 200_000), min_size=1, max_size=4),
    d=st.sampled_from([2, 4, 8, 16, 64]),
    gamma=st.sampled_from([0.4, 0.1, 1.0, 3.0, 1e-3]),
    scale_base=st.sampled_from([512, 2048, 100.5, 10**5]),
    kind=st.sampled_from(["list", "int64", "float64"]),
)
def test_xpos_against_mpmath(positions, d, gamma, scale_base, kind):
    limit = 709.78 * scale_base / math.log1p(1 / gamma)
    positions = [p for p in positions if abs(p) <= limit] or [0]
    arg = positions if kind == "list" else np.array(positions, dtype=np.dtype(kind))
    got = posenc.xpos_scale(arg, d, gamma=gamma, scale_base=scale_base)
    assert got.shape == (len(positions), d // 2)
    assert_matches_oracle(got, positions, d, gamma, scale_base)


def test_xpos_tiny_gamma_is_accurate():
    # 1 + gamma rounds to 1, yet zeta_0 = gamma / (1 + gamma) is about gamma, not 0
    assert_matches_oracle(posenc.xpos_scale([1, 512], 4, gamma=1e-20), [1, 512], 4, gamma=1e-20)


def test_xpos_int_length_and_broadcast_shape():
    got = posenc.xpos_scale(3, 6)
    assert got.shape == (3, 3)
    assert_matches_oracle(got, [0, 1, 2], 6)
    ids = np.array([[0, 1, 2], [5, 6, 7]])
    got = posenc.xpos_scale(ids, 4)
    assert got.shape == (2, 3, 2)
    assert_matches_oracle(got.reshape(6, 2), ids.ravel().tolist(), 4)


@given(m=st.integers(-5000, 5000), n=st.integers(-5000, 5000))
def test_query_times_key_depends_on_the_offset_only(m, n):
    # queries multiply by s(m), keys divide by s(n): the score carries s(m)/s(n) = zeta**((m-n)/512)
    s = posenc.xpos_scale([m, n], 8)
    ratio = s[0] / s[1]
    assert_matches_oracle(ratio[None, :], [m - n], 8)


def test_xpos_range_limit():
    # defaults: |ln zeta_0| = ln(3.5); largest |p| = 709.78... * 512 / ln(3.5) ~ 290 086
    limit = math.log(np.finfo(np.float64).max) * 512 / math.log(3.5)
    ok = posenc.xpos_scale([math.floor(limit), -math.floor(limit)], 8)
    assert np.all(np.isfinite(ok)) and np.all(ok > 0) and np.all(np.isfinite(1 / ok))
    for p in (math.ceil(limit), -math.ceil(limit), 10**9, LIMIT):
        refuses(ValueError, "positions", posenc.xpos_scale, [p], 8)


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "name"),
    [
        (([1], 3), {}, ValueError, "d_head"),
        (([1], 0), {}, ValueError, "d_head"),
        (([1], 2**17), {}, ValueError, "d_head"),
        (([1], True), {}, TypeError, "d_head"),
        (([1], 8.0), {}, TypeError, "d_head"),
        (([NAN], 8), {}, ValueError, "positions"),
        (([-INF], 8), {}, ValueError, "positions"),
        (([LIMIT + 1], 8), {}, ValueError, "positions"),
        (([True, False], 8), {}, TypeError, "positions"),
        ((5.0, 8), {}, TypeError, "positions"),
        (([], 8), {}, ValueError, "positions"),
        ((2**27, 8), {}, ValueError, "positions"),  # 2**29 entries: refused before arange
        ((np.zeros(2**20), 2**10), {}, ValueError, "positions"),
        (([1], 8), {"gamma": 0}, ValueError, "gamma"),
        (([1], 8), {"gamma": -0.4}, ValueError, "gamma"),
        (([1], 8), {"gamma": NAN}, ValueError, "gamma"),
        (([1], 8), {"gamma": True}, TypeError, "gamma"),
        (([1], 8), {"scale_base": 0}, ValueError, "scale_base"),
        (([1], 8), {"scale_base": INF}, ValueError, "scale_base"),
        (([1], 8), {"scale_base": "512"}, TypeError, "scale_base"),
        (([1], 8), {"scale_base": 1e-300}, ValueError, "positions"),
    ],
)
def test_xpos_refusals(args, kwargs, exc, name):
    refuses(exc, name, posenc.xpos_scale, *args, **kwargs)
