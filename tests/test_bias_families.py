"""Tests of posenc.bias_families: kerple_bias (KERPLE) and fire_bias (FIRE).

Oracles: explicit loops over heads, query rows and keys with the absolute query position
i = row + k_len - q_len, the kernels evaluated in mpmath at 256 bits (or with math for the
FIRE normaliser), hand-worked small tensors, and for KERPLE's power kernel with r2 = 1 the
ALiBi relation -r1 |i - j| (compared with posenc.alibi_bias given ALiBi's slopes, whose
own tests check it against hand and published values).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from conftest import EPS, MP_PREC, refuses
from hypothesis import given
from hypothesis import strategies as st

import posenc

NAN, INF = float("nan"), float("inf")
positive = st.floats(1e-3, 50.0, allow_nan=False)


def kerple_oracle(r1, r2, q_len, k_len, kind, causal):
    """Nested lists of the KERPLE bias, each entry from mpmath, -inf where masked."""
    out = []
    with mpmath.workprec(MP_PREC):
        for a, b in zip(r1, r2, strict=True):
            head = []
            for row in range(q_len):
                i = row + k_len - q_len
                line = []
                for j in range(k_len):
                    if causal and j > i:
                        line.append(-math.inf)
                        continue
                    delta = mpmath.mpf(abs(i - j))
                    a_, b_ = mpmath.mpf(float(a)), mpmath.mpf(float(b))
                    value = -a_ * mpmath.log(1 + b_ * delta) if kind == "log" else -a_ * delta**b_
                    line.append(float(value))
                head.append(line)
            out.append(head)
    return np.array(out)


def fire_inputs_oracle(q_len, k_len, c, threshold):
    """u[row][j] = ln(c|i-j| + 1) / ln(c max(L, i) + 1) with math.log1p, every entry."""
    u = []
    for row in range(q_len):
        i = row + k_len - q_len
        u.append([math.log1p(c * abs(i - j)) / math.log1p(c * max(threshold, i)) for j in range(k_len)])
    return u


# ---------------------------------------------------------------------------------------
# kerple_bias
# ---------------------------------------------------------------------------------------


def test_kerple_log_by_hand():
    # r1 = 1, r2 = 1: -ln(1 + |i - j|); L = 3
    got = posenc.kerple_bias([1.0], [1.0], 3)
    want = [[[0, -INF, -INF], [-math.log(2), 0, -INF], [-math.log(3), -math.log(2), 0]]]
    assert got.shape == (1, 3, 3) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=EPS, atol=0)
    assert not np.any(np.signbit(np.diagonal(got, axis1=1, axis2=2)))  # +0.0


def test_kerple_power_by_hand():
    # head 0: r1 = 2, r2 = 2 -> -2 d^2; head 1: r1 = 1, r2 = 0.5 -> -sqrt(d); decoding 2 of 4, both ways
    got = posenc.kerple_bias([2, 1], [2, 0.5], 2, 4, kind="power", causal=False)
    want = [
        [[-8, -2, 0, -2], [-18, -8, -2, 0]],
        [[-math.sqrt(2), -1, 0, -1], [-math.sqrt(3), -math.sqrt(2), -1, 0]],
    ]
    np.testing.assert_allclose(got, want, rtol=EPS, atol=0)
    causal = posenc.kerple_bias([2, 1], [2, 0.5], 2, 4, kind="power")
    assert causal[0, 0].tolist() == [-8, -2, 0, -INF]
    assert causal[:, 1].tolist() == got[:, 1].tolist()


@given(
    k_len=st.integers(1, 12),
    heads=st.integers(1, 4),
    kind=st.sampled_from(["log", "power"]),
    causal=st.booleans(),
    data=st.data(),
)
def test_kerple_against_loops(k_len, heads, kind, causal, data):
    q_len = data.draw(st.integers(1, k_len))
    r1 = data.draw(st.lists(positive, min_size=heads, max_size=heads))
    r2_values = st.floats(1e-3, 2.0) if kind == "power" else positive
    r2 = data.draw(st.lists(r2_values, min_size=heads, max_size=heads))
    container = data.draw(st.sampled_from([list, tuple, np.array]))
    got = posenc.kerple_bias(container(r1), container(r2), q_len, k_len, kind=kind, causal=causal)
    want = kerple_oracle(r1, r2, q_len, k_len, kind, causal)
    assert got.shape == (heads, q_len, k_len)
    assert np.array_equal(np.isneginf(got), np.isneginf(want))
    vis = np.isfinite(want)
    np.testing.assert_allclose(got[vis], want[vis], rtol=8 * EPS, atol=0)


@given(n=st.integers(1, 16), k_len=st.integers(1, 20), causal=st.booleans(), data=st.data())
def test_kerple_power_one_is_alibi(n, k_len, causal, data):
    q_len = data.draw(st.integers(1, k_len))
    slopes = posenc.alibi_slopes(n)
    got = posenc.kerple_bias(slopes, np.ones(n), q_len, k_len, kind="power", causal=causal)
    np.testing.assert_array_equal(got, posenc.alibi_bias(n, q_len, k_len, causal=causal))
    # and -r1 |i - j| by loops, with integer r1
    got = posenc.kerple_bias(list(range(1, n + 1)), [1] * n, q_len, k_len, kind="power", causal=causal)
    for h in range(n):
        for row in range(q_len):
            i = row + k_len - q_len
            for j in range(k_len):
                want = -math.inf if causal and j > i else -(h + 1) * abs(i - j)
                assert got[h, row, j] == want


@given(k_len=st.integers(1, 15), data=st.data())
def test_kerple_decoding_rows_are_last_rows(k_len, data):
    q_len = data.draw(st.integers(1, k_len))
    for kind in ("log", "power"):
        full = posenc.kerple_bias([0.5, 2.0], [1.5, 0.25], k_len, kind=kind)
        part = posenc.kerple_bias([0.5, 2.0], [1.5, 0.25], q_len, k_len, kind=kind)
        np.testing.assert_array_equal(part, full[:, -q_len:, :])


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "name"),
    [
        ((1.0, [1.0], 3), {}, ValueError, "r1"),  # a scalar: one value per head, 1-D
        (([[1.0]], [1.0], 3), {}, ValueError, "r1"),
        (([], [], 3), {}, ValueError, "r1"),
        (([0.0], [1.0], 3), {}, ValueError, "r1"),
        (([-1.0], [1.0], 3), {}, ValueError, "r1"),
        (([NAN], [1.0], 3), {}, ValueError, "r1"),
        (([INF], [1.0], 3), {}, ValueError, "r1"),
        (([True], [1.0], 3), {}, TypeError, "r1"),
        ((["1"], [1.0], 3), {}, TypeError, "r1"),
        (([1.0], [0.0], 3), {}, ValueError, "r2"),
        (([1.0], [NAN], 3), {}, ValueError, "r2"),
        (([1.0], [1j], 3), {}, TypeError, "r2"),
        (([1.0, 2.0], [1.0], 3), {}, ValueError, "r2"),
        (([1.0], [2.5], 3), {"kind": "power"}, ValueError, "r2"),
        (([1.0], [1.0], 3), {"kind": "linear"}, ValueError, "kind"),
        (([1.0], [1.0], 3), {"kind": None}, TypeError, "kind"),
        (([1.0], [1.0], 0), {}, ValueError, "q_len"),
        (([1.0], [1.0], 3.0), {}, TypeError, "q_len"),
        (([1.0], [1.0], True), {}, TypeError, "q_len"),
        (([1.0], [1.0], 4, 3), {}, ValueError, "q_len"),
        (([1.0], [1.0], 3, -1), {}, ValueError, "k_len"),
        (([1.0], [1.0], 3), {"causal": "False"}, TypeError, "causal"),
        (([1.0], [1.0], 3), {"causal": 1}, TypeError, "causal"),
        (([1.0], [1.0], 2**15), {}, ValueError, "q_len"),  # 2**30 entries, refused before allocating
        (([1.0] * 64, [1.0] * 64, 2**12), {}, ValueError, "r1"),
        (([1e308], [1.0], 20), {}, ValueError, "r1"),  # 1e308 * ln 20 overflows
        (([1.0], [1e308], 5), {}, ValueError, "r2"),  # 1e308 * 4 overflows
    ],
)
def test_kerple_refusals(args, kwargs, exc, name):
    refuses(exc, name, posenc.kerple_bias, *args, **kwargs)


# ---------------------------------------------------------------------------------------
# fire_bias
# ---------------------------------------------------------------------------------------


def test_fire_identity_by_hand():
    # c = 1, L = 2, queries at absolute positions 1, 2, 3 of 4 keys:
    # row i = 1: denominators ln(1 + max(2, 1)) = ln 3; row 2: ln 3; row 3: ln 4
    got = posenc.fire_bias(lambda u: u, 3, 4, threshold=2.0)
    ln = math.log
    want = [
        [ln(2) / ln(3), 0.0, -INF, -INF],
        [ln(3) / ln(3), ln(2) / ln(3), 0.0, -INF],
        [ln(4) / ln(4), ln(3) / ln(4), ln(2) / ln(4), 0.0],
    ]
    assert got.shape == (3, 4) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=2 * EPS, atol=0)


@given(
    k_len=st.integers(1, 16),
    c=st.floats(1e-3, 100.0),
    threshold=st.floats(1e-2, 1e4),
    causal=st.booleans(),
    data=st.data(),
)
def test_fire_identity_against_loops(k_len, c, threshold, causal, data):
    q_len = data.draw(st.integers(1, k_len))
    got = posenc.fire_bias(lambda u: u, q_len, k_len, c=c, threshold=threshold, causal=causal)
    u = fire_inputs_oracle(q_len, k_len, c, threshold)
    for row in range(q_len):
        i = row + k_len - q_len
        for j in range(k_len):
            if causal and j > i:
                assert got[row, j] == -INF
            else:
                assert got[row, j] == pytest.approx(u[row][j], rel=8 * EPS, abs=1e-300)
                assert 0.0 <= got[row, j] <= 1.0 + 8 * EPS or not causal  # bounded where visible


@given(k_len=st.integers(1, 12), causal=st.booleans(), data=st.data())
def test_fire_two_heads_and_what_f_receives(k_len, causal, data):
    q_len = data.draw(st.integers(1, k_len))
    seen = []

    def two_heads(u):
        seen.append(np.array(u, copy=True))
        return np.stack([2.0 * u - 1.0, np.exp(-u)])  # an (H, q, k) return, H = 2

    got = posenc.fire_bias(two_heads, q_len, k_len, c=0.5, threshold=3.0, causal=causal)
    assert got.shape == (2, q_len, k_len) and len(seen) == 1
    u = fire_inputs_oracle(q_len, k_len, 0.5, 3.0)
    # f receives psi(|i - j|)/psi(max(L, i)) at every entry, masked ones included
    np.testing.assert_allclose(seen[0], u, rtol=8 * EPS, atol=0)
    for row in range(q_len):
        i = row + k_len - q_len
        for j in range(k_len):
            if causal and j > i:
                assert got[0, row, j] == got[1, row, j] == -INF
            else:
                assert got[0, row, j] == pytest.approx(2.0 * u[row][j] - 1.0, rel=1e-14, abs=1e-14)
                assert got[1, row, j] == pytest.approx(math.exp(-u[row][j]), rel=1e-14)


def test_fire_mask_does_not_depend_on_f():
    # whatever f puts above the diagonal, the causal result has -inf there
    got = posenc.fire_bias(lambda u: np.full(u.shape, 7.0), 3)
    assert got.tolist() == [[7.0, -INF, -INF], [7.0, 7.0, -INF], [7.0, 7.0, 7.0]]
    assert posenc.fire_bias(lambda u: np.full(u.shape, 7.0), 3, causal=False).tolist() == [[7.0] * 3] * 3


def test_fire_integer_and_float32_returns_become_float64():
    got = posenc.fire_bias(lambda u: np.ones(u.shape, dtype=np.int32), 2, causal=False)
    assert got.dtype == np.float64 and got.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    got = posenc.fire_bias(lambda u: u.astype(np.float32), 2, 3)
    assert got.dtype == np.float64


def test_fire_exceptions_inside_f_propagate():
    def broken(u):
        raise ZeroDivisionError("inside f")

    with pytest.raises(ZeroDivisionError, match="inside f"):
        posenc.fire_bias(broken, 2)


@pytest.mark.parametrize(
    ("f", "args", "kwargs", "exc"),
    [
        (None, (3,), {}, TypeError),  # not callable
        ("u", (3,), {}, TypeError),
        (lambda u: u.T, (2, 3), {}, ValueError),  # (k, q)
        (lambda u: u[0], (2, 3), {}, ValueError),  # 1-D
        (lambda u: u[None, None], (2, 3), {}, ValueError),  # 4-D
        (lambda u: 1.0, (2, 3), {}, ValueError),  # a scalar
        (lambda u: u + 1j, (2, 3), {}, TypeError),
        (lambda u: u > 0, (2, 3), {}, TypeError),  # bools
        (lambda u: None, (2, 3), {}, TypeError),
        (lambda u: np.full(u.shape, NAN), (2, 3), {}, ValueError),
        (lambda u: np.where(u > 0.5, INF, u), (2, 3), {}, ValueError),
        (lambda u: np.zeros((0, 2, 3)), (2, 3), {}, ValueError),
    ],
)
def test_fire_refuses_bad_f(f, args, kwargs, exc):
    refuses(exc, "f", posenc.fire_bias, f, *args, **kwargs)


def identity(u):
    return u


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "name"),
    [
        ((0,), {}, ValueError, "q_len"),
        ((3, 2), {}, ValueError, "q_len"),
        ((3.0,), {}, TypeError, "q_len"),
        ((2, 0), {}, ValueError, "k_len"),
        ((2, True), {}, TypeError, "k_len"),
        ((3,), {"c": 0}, ValueError, "c must"),
        ((3,), {"c": -1.0}, ValueError, "c must"),
        ((3,), {"c": NAN}, ValueError, "c must"),
        ((3,), {"c": True}, TypeError, "c must"),
        ((3,), {"threshold": 0.0}, ValueError, "threshold"),
        ((3,), {"threshold": -2}, ValueError, "threshold"),
        ((3,), {"threshold": INF}, ValueError, "threshold"),
        ((3,), {"threshold": "1"}, TypeError, "threshold"),
        ((3,), {"causal": "False"}, TypeError, "causal"),
        ((3,), {"causal": None}, TypeError, "causal"),
        ((2**15,), {}, ValueError, "q_len"),  # 2**30 distances, refused before allocating
        ((5,), {"c": 1e308}, ValueError, "c="),  # c * distance overflows
        ((5,), {"threshold": 1e-320, "c": 1e-5}, ValueError, "threshold"),  # psi(c L) underflows
    ],
)
def test_fire_refusals(args, kwargs, exc, name):
    refuses(exc, name, posenc.fire_bias, identity, *args, **kwargs)


def test_fire_bias_refuses_a_huge_result_of_f_before_copying_it():
    huge = np.broadcast_to(np.float64(0.0), (2**30, 3, 3))
    with pytest.raises(ValueError, match="returned by f"):
        posenc.fire_bias(lambda u: huge, 3)
