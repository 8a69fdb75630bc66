"""Tests of posenc.alibi: alibi_slopes, alibi_bias, alibi_bias_key_form.

Expected slopes are exact powers of two whose exponents are computed as Fractions from
three independent statements of the rule (Press et al.'s recursion, Hugging Face BLOOM's
base/extra-base powers, MosaicML MPT's strided concatenation), from the lists published
in the paper, and from hand derivations; the real numbers 2**(-e) come from mpmath at 256
bits. Bias entries are written out by hand or with explicit loops; softmax comparisons use
conftest.hand_softmax (math.exp, no numpy).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import (
    EPS,
    MP_PREC,
    hand_softmax,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc

# ---------------------------------------------------------------------------------------
# independent references for the slope exponents e_h (slope = 2**-e_h)
# ---------------------------------------------------------------------------------------


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def exponents_press(n: int) -> list[Fraction]:
    """Press et al.: geometric for 2^a heads; else the lower power's list + every other of 2N."""
    if _is_power_of_two(n):
        return [Fraction(8 * h, n) for h in range(1, n + 1)]
    big = 1
    while 2 * big <= n:
        big *= 2
    return exponents_press(big) + exponents_press(2 * big)[0::2][: n - big]


def exponents_bloom(n: int) -> list[Fraction]:
    """BLOOM: base 2^(-8/N) to the powers 1..N, then extra base 2^(-8/2N) to 1, 3, 5, ..."""
    big = 2 ** math.floor(math.log2(n))
    out = [Fraction(8, big) * p for p in range(1, big + 1)]
    if big != n:
        remaining = min(big, n - big)
        out += [Fraction(8, 2 * big) * p for p in range(1, 2 * remaining, 2)]
    return out


def exponents_mpt(n: int) -> list[Fraction]:
    """MPT: the ceil power of two C, exponents 8h/C, then [1::2] + [::2], truncated to n."""
    ceil = 2 ** math.ceil(math.log2(n))
    full = [Fraction(8 * h, ceil) for h in range(1, ceil + 1)]
    if ceil != n:
        full = (full[1::2] + full[0::2])[:n]
    return full


def mp_slopes(exponents: list[Fraction]) -> np.ndarray:
    """2**-e for each exponent, computed at 256 bits and rounded once to float64."""
    with mpmath.workprec(MP_PREC):
        return np.array([float(mpmath.power(2, -mpmath.mpf(e.numerator) / e.denominator)) for e in exponents])


HEAD_COUNTS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 40, 64, 96, 112, 128]


# ---------------------------------------------------------------------------------------
# alibi_slopes
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", HEAD_COUNTS)
def test_three_published_conventions_agree(n):
    assert exponents_press(n) == exponents_bloom(n) == exponents_mpt(n)


@pytest.mark.parametrize("n", HEAD_COUNTS)
def test_slopes_match_exact_powers_of_two(n):
    got = posenc.alibi_slopes(n)
    want = mp_slopes(exponents_press(n))
    assert got.dtype == np.float64 and got.shape == (n,)
    # correctly rounded 2**-e: at most one ulp away (exactly equal for integer exponents)
    assert np.all(np.abs(got - want) <= np.spacing(want))
    for g, w, e in zip(got, want, exponents_press(n), strict=True):
        if e.denominator == 1:
            assert g == w == 2.0 ** -int(e)


def test_eight_heads_published_list():
    # the paper: 1/2^1, 1/2^2, ..., 1/2^8 for 8 heads
    assert posenc.alibi_slopes(8).tolist() == [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]


def test_sixteen_heads_published_list():
    # the paper: 1/2^0.5, 1/2^1, 1/2^1.5, ..., 1/2^8 for 16 heads
    want = [2.0 ** -(k / 2) for k in range(1, 17)]
    np.testing.assert_allclose(posenc.alibi_slopes(16), want, rtol=2**-52, atol=0)


@pytest.mark.parametrize(
    ("n", "exponents"),
    [
        (1, [8]),
        (2, [4, 8]),
        (3, [4, 8, 2]),
        (5, [2, 4, 6, 8, 1]),
        (6, [2, 4, 6, 8, 1, 3]),
        (7, [2, 4, 6, 8, 1, 3, 5]),
        (12, [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5]),
    ],
)
def test_small_head_counts_by_hand(n, exponents):
    np.testing.assert_allclose(-np.log2(posenc.alibi_slopes(n)), exponents, rtol=0, atol=1e-14)


def test_96_heads():
    s = posenc.alibi_slopes(96)
    np.testing.assert_array_equal(s[:64], 2.0 ** (-np.arange(1, 65) / 8))  # 8h/64 = h/8
    odd = np.arange(1, 64, 2)  # 8h/128 = h/16 for h = 1, 3, ..., 63
    np.testing.assert_allclose(s[64:], 2.0 ** (-odd / 16), rtol=2**-52, atol=0)


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32, 64, 256])
def test_power_of_two_is_geometric(n):
    s = posenc.alibi_slopes(n)
    ratio = 2.0 ** (-8 / n)
    np.testing.assert_allclose(s[0], ratio, rtol=2**-52)
    np.testing.assert_allclose(s[1:] / s[:-1], ratio, rtol=4 * 2**-52)
    assert s[-1] == 2.0**-8


@given(n=st.integers(1, 300))
def test_slope_set_structure(n):
    exps = exponents_press(n)
    got = posenc.alibi_slopes(n)
    np.testing.assert_allclose(-np.log2(got), [float(e) for e in exps], rtol=0, atol=1e-12)
    assert len(set(exps)) == n  # distinct slopes
    assert all(0 < e <= 8 for e in exps)  # 2^-8 <= m < 1
    big = 2 ** (n.bit_length() - 1)
    # contains the whole lower power's list, and is a subset of the 2N list
    assert exps[:big] == exponents_press(big)
    assert set(exps) <= set(exponents_press(2 * big))


@pytest.mark.parametrize("bad", [0, -1, -8])
def test_slopes_value_errors(bad):
    with pytest.raises(ValueError, match="n_heads"):
        posenc.alibi_slopes(bad)


@pytest.mark.parametrize("bad", [8.0, "8", None, True, np.float64(4)])
def test_slopes_type_errors(bad):
    with pytest.raises(TypeError, match="n_heads"):
        posenc.alibi_slopes(bad)


def test_slopes_accept_numpy_int():
    np.testing.assert_array_equal(posenc.alibi_slopes(np.int64(8)), posenc.alibi_slopes(8))


# ---------------------------------------------------------------------------------------
# alibi_bias
# ---------------------------------------------------------------------------------------


def test_bias_by_hand_two_heads_causal():
    # 2 heads: slopes 1/16, 1/256; L = 3
    inf = math.inf
    want = np.array(
        [
            [[0, -inf, -inf], [-1 / 16, 0, -inf], [-2 / 16, -1 / 16, 0]],
            [[0, -inf, -inf], [-1 / 256, 0, -inf], [-2 / 256, -1 / 256, 0]],
        ]
    )
    got = posenc.alibi_bias(2, 3)
    assert got.shape == (2, 3, 3) and got.dtype == np.float64
    np.testing.assert_array_equal(got, want)
    assert not np.any(np.signbit(np.diagonal(got, axis1=1, axis2=2)))  # +0.0, not -0.0


def test_bias_by_hand_symmetric():
    want = -np.array([[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]]) / 256
    np.testing.assert_array_equal(posenc.alibi_bias(1, 4, causal=False)[0], want)


def test_bias_decoding_by_hand():
    # one query at absolute position 4 of 5 keys, 1 head (m = 1/256)
    np.testing.assert_array_equal(
        posenc.alibi_bias(1, 1, 5)[0, 0], [-4 / 256, -3 / 256, -2 / 256, -1 / 256, 0]
    )
    # two queries at positions 3, 4 of 5
    got = posenc.alibi_bias(1, 2, 5)[0]
    np.testing.assert_array_equal(got[0], [-3 / 256, -2 / 256, -1 / 256, 0, -math.inf])


@given(n=st.integers(1, 20), k_len=st.integers(1, 40), data=st.data())
def test_bias_entries_by_loops(n, k_len, data):
    q_len = data.draw(st.integers(1, k_len))
    causal = data.draw(st.booleans())
    slopes = mp_slopes(exponents_press(n))
    got = posenc.alibi_bias(n, q_len, k_len, causal=causal)
    assert got.shape == (n, q_len, k_len)
    for h in range(n):
        for i in range(q_len):
            i_abs = i + k_len - q_len
            for j in range(k_len):
                if causal and j > i_abs:
                    assert got[h, i, j] == -math.inf
                else:
                    want = -slopes[h] * abs(i_abs - j)
                    assert abs(got[h, i, j] - want) <= 2 * np.spacing(abs(want) + 1e-300)


@given(n=st.integers(1, 12), k_len=st.integers(1, 30), data=st.data())
def test_decoding_rows_are_last_rows_of_full(n, k_len, data):
    q_len = data.draw(st.integers(1, k_len))
    for causal in (True, False):
        full = posenc.alibi_bias(n, k_len, causal=causal)
        np.testing.assert_array_equal(posenc.alibi_bias(n, q_len, k_len, causal=causal), full[:, -q_len:, :])


@pytest.mark.parametrize("length", [1, 2, 7, 16])
def test_causal_pattern_matches_causal_mask(length):
    b = posenc.alibi_bias(3, length)
    tri = np.tril(np.ones((length, length), dtype=bool))  # j <= i visible
    for h in range(3):
        assert np.array_equal(np.isneginf(b[h]), ~tri)
        assert np.all(np.isfinite(b[h][tri]))


def test_symmetric_and_toeplitz():
    b = posenc.alibi_bias(5, 9, causal=False)
    np.testing.assert_array_equal(b, np.swapaxes(b, 1, 2))
    for h in range(5):
        for i in range(8):
            np.testing.assert_array_equal(np.diagonal(b[h], offset=i + 1), b[h, 0, i + 1])
    # causal visible part equals the symmetric bias there
    c = posenc.alibi_bias(5, 9)
    vis = np.isfinite(c)
    np.testing.assert_array_equal(c[vis], b[vis])


@pytest.mark.parametrize(
    ("args", "kwargs", "exc"),
    [
        ((8, 0), {}, ValueError),
        ((8, -3), {}, ValueError),
        ((8, 5, 4), {}, ValueError),
        ((8, 3, 0), {}, ValueError),
        ((0, 3), {}, ValueError),
        ((8, 3.0), {}, TypeError),
        ((8, 3, 4.5), {}, TypeError),
        ((8.0, 3), {}, TypeError),
        ((8, 3), {"causal": 1}, TypeError),
    ],
)
def test_bias_errors(args, kwargs, exc):
    with pytest.raises(exc):
        posenc.alibi_bias(*args, **kwargs)


def test_bias_error_messages_name_arguments():
    with pytest.raises(ValueError, match="q_len"):
        posenc.alibi_bias(4, 6, 5)
    with pytest.raises(ValueError, match="k_len"):
        posenc.alibi_bias(4, 2, -1)


# ---------------------------------------------------------------------------------------
# alibi_bias_key_form and the softmax equivalence
# ---------------------------------------------------------------------------------------


def test_key_form_by_hand():
    inf = math.inf
    bloom = posenc.alibi_bias_key_form(1, 3)[0] * 256
    np.testing.assert_array_equal(bloom, [[0, -inf, -inf], [0, 1, -inf], [0, 1, 2]])
    mpt = posenc.alibi_bias_key_form(1, 3, convention="mpt")[0] * 256
    np.testing.assert_array_equal(mpt, [[-2, -inf, -inf], [-2, -1, -inf], [-2, -1, 0]])
    unmasked = posenc.alibi_bias_key_form(1, 2, 4, convention="mpt", causal=False)[0] * 256
    np.testing.assert_array_equal(unmasked, [[-3, -2, -1, 0], [-3, -2, -1, 0]])


@given(n=st.integers(1, 16), k_len=st.integers(1, 24), data=st.data())
def test_key_forms_differ_by_row_constant(n, k_len, data):
    q_len = data.draw(st.integers(1, k_len))
    convention = data.draw(st.sampled_from(["bloom", "mpt"]))
    slopes = mp_slopes(exponents_press(n))
    contract = posenc.alibi_bias(n, q_len, k_len)
    key = posenc.alibi_bias_key_form(n, q_len, k_len, convention=convention)
    assert np.array_equal(np.isneginf(contract), np.isneginf(key))
    for h in range(n):
        for i in range(q_len):
            i_abs = i + k_len - q_len
            const = slopes[h] * (i_abs if convention == "bloom" else i_abs - (k_len - 1))
            vis = slice(0, i_abs + 1)
            np.testing.assert_allclose(key[h, i, vis] - contract[h, i, vis], const, rtol=0, atol=1e-12)


@given(n=st.integers(1, 12), k_len=st.integers(1, 20), seed=st.integers(0, 2**16), data=st.data())
def test_key_forms_give_same_softmax(n, k_len, seed, data):
    q_len = data.draw(st.integers(1, k_len))
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(n, q_len, k_len)) * 2
    rows = {
        name: scores + b
        for name, b in [
            ("contract", posenc.alibi_bias(n, q_len, k_len)),
            ("bloom", posenc.alibi_bias_key_form(n, q_len, k_len)),
            ("mpt", posenc.alibi_bias_key_form(n, q_len, k_len, convention="mpt")),
        ]
    }
    for h in range(n):
        for i in range(q_len):
            want = hand_softmax(rows["contract"][h, i].tolist())
            for name in ("bloom", "mpt"):
                np.testing.assert_allclose(
                    hand_softmax(rows[name][h, i].tolist()), want, rtol=1e-12, atol=1e-300
                )


def test_key_form_through_attention():
    rng = np.random.default_rng(3)
    h, q_len, k_len, d = 12, 5, 9, 4
    q, k, v = rng.normal(size=(h, q_len, d)), rng.normal(size=(h, k_len, d)), rng.normal(size=(h, k_len, 3))
    out_a, w_a = posenc.attention(q, k, v, bias=posenc.alibi_bias(h, q_len, k_len))
    for convention in ("bloom", "mpt"):
        out_b, w_b = posenc.attention(
            q, k, v, bias=posenc.alibi_bias_key_form(h, q_len, k_len, convention=convention)
        )
        np.testing.assert_allclose(w_b, w_a, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(out_b, out_a, rtol=1e-12, atol=1e-12)
        # and the same with the unmasked key form plus attention's own causal mask
        unmasked = posenc.alibi_bias_key_form(h, q_len, k_len, convention=convention, causal=False)
        _, w_c = posenc.attention(q, k, v, bias=unmasked, causal=True)
        np.testing.assert_allclose(w_c, w_a, rtol=1e-12, atol=1e-15)


def test_key_form_is_not_the_bidirectional_bias():
    # without the causal mask, the key form rewards later keys: not a row constant away
    sym = posenc.alibi_bias(1, 5, causal=False)[0]
    key = posenc.alibi_bias_key_form(1, 5, causal=False)[0]
    diff = key - sym
    assert np.ptp(diff[2]) > 0
    w_sym = hand_softmax(sym[2].tolist())
    w_key = hand_softmax(key[2].tolist())
    assert w_sym[2] == max(w_sym) and w_key[4] == max(w_key)


def test_key_form_errors():
    with pytest.raises(ValueError, match="convention"):
        posenc.alibi_bias_key_form(4, 3, convention="falcon")
    with pytest.raises(ValueError, match="q_len"):
        posenc.alibi_bias_key_form(4, 3, 2)
    with pytest.raises(TypeError, match="causal"):
        posenc.alibi_bias_key_form(4, 3, causal="yes")


def slopes_reference(n: int) -> list[float]:
    """Press et al.'s rule with exponents as Fractions and 2**-e from mpmath."""
    big = 1
    while 2 * big <= n:
        big *= 2
    exps = [Fraction(8 * h, big) for h in range(1, big + 1)]
    exps += [Fraction(8 * h, 2 * big) for h in range(1, 2 * big + 1, 2)][: n - big]
    with mpmath.workprec(MP_PREC):
        return [float(mpmath.power(2, -mpmath.mpf(e.numerator) / e.denominator)) for e in exps]


@settings(max_examples=25)
@given(
    n=st.integers(1, 24),
    q=st.integers(1, 5),
    extra=st.integers(0, 4),
    causal=st.sampled_from([True, False, np.bool_(True), np.bool_(False)]),
)
def test_alibi_matches_the_written_out_bias(n, q, extra, causal):
    k = q + extra
    slopes = slopes_reference(n)
    np.testing.assert_allclose(posenc.alibi_slopes(np.int64(n)), slopes, rtol=EPS, atol=0)
    bias = posenc.alibi_bias(n, q, k, causal=causal)
    bloom = posenc.alibi_bias_key_form(n, q, k, causal=causal, convention="bloom")
    mpt = posenc.alibi_bias_key_form(n, q, k, causal=causal, convention="mpt")
    for h in range(n):
        for i in range(q):
            i_abs = i + k - q
            for j in range(k):
                if causal and j > i_abs:
                    assert bias[h, i, j] == bloom[h, i, j] == mpt[h, i, j] == -math.inf
                    continue
                assert bias[h, i, j] == pytest.approx(-slopes[h] * abs(i_abs - j), rel=2 * EPS, abs=0)
                assert bloom[h, i, j] == pytest.approx(slopes[h] * j, rel=2 * EPS, abs=0)
                assert mpt[h, i, j] == pytest.approx(slopes[h] * (j - (k - 1)), rel=2 * EPS, abs=0)


def test_alibi_refuses_a_huge_head_count_before_forming_slopes():
    t0 = time.process_time()
    for call in (
        lambda: posenc.alibi_bias(2**28, 2),
        lambda: posenc.alibi_bias_key_form(2**26 + 1, 2),
        lambda: posenc.alibi_slopes(2**20 + 1),
    ):
        with pytest.raises(ValueError, match="n_heads"):
            call()
    assert time.process_time() - t0 < 1.0
    # Press et al.'s rule at the new limit: a power of two, 2**(-8h/n)
    slopes = posenc.alibi_slopes(2**20)
    assert slopes.size == 2**20 and abs(slopes[0] / 2.0 ** (-8 / 2**20) - 1) < 1e-15 and slopes[-1] == 2.0**-8
