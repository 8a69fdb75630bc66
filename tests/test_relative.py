"""Tests of posenc.relative: T5 buckets and bias, Shaw et al.'s clipped relative positions.

Expected values come from computations that do not call posenc: a bucket function
written with Python integers and ``fractions.Fraction`` (the defining inequality
(D/m)^t <= (n/m)^s checked exactly), mpmath at 200 bits, boundaries derived by hand for
the standard (32, 128) configuration, explicit loops for the bias and the logits, and a
numpy emulation of the float32 formula used by Mesh TensorFlow / Hugging Face.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from conftest import (
    EPS,
    exact_t5_bucket,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc

# ---------------------------------------------------------------------------------------
# independent references
# ---------------------------------------------------------------------------------------


def mp_bucket(rel: int, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> int:
    """The same from the log formula at 200 bits; exact ties are detected and floored exactly."""
    half = num_buckets // 2 if bidirectional else num_buckets
    offset = half if (bidirectional and rel > 0) else 0
    n = abs(rel) if bidirectional else max(-rel, 0)
    m = half // 2
    if n < m:
        return offset + n
    with mpmath.workprec(200):
        v = mpmath.log(mpmath.mpf(n) / m) / mpmath.log(mpmath.mpf(max_distance) / m) * (half - m)
        t = int(mpmath.nint(v)) if abs(v - mpmath.nint(v)) < mpmath.mpf(2) ** -150 else int(mpmath.floor(v))
    return offset + m + min(t, half - m - 1)


def float_formula(
    n: np.ndarray, half: int, max_distance: int, dtype=np.float32, reciprocal=False
) -> np.ndarray:
    """The public implementations' formula evaluated in ``dtype`` (one direction, n >= 0)."""
    m = half // 2
    with np.errstate(divide="ignore"):
        logq = np.log(n.astype(dtype) / dtype(m))
        c = dtype(math.log(max_distance / m))
        x = (logq * (dtype(1) / c) if reciprocal else logq / c) * dtype(half - m)
    large = m + np.where(np.isfinite(x), x, 0).astype(np.int64)
    return np.where(n < m, n, np.minimum(large, half - 1))


CONFIGS = [(32, 128), (20, 160), (16, 64), (64, 256), (8, 16), (12, 48), (40, 640), (128, 1024), (4, 3)]


# ---------------------------------------------------------------------------------------
# T5 buckets: values
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), CONFIGS)
def test_bucket_matches_exact_reference(bidirectional, num_buckets, max_distance):
    rel = np.arange(-3 * max_distance - 40, 3 * max_distance + 41)
    got = posenc.t5_relative_position_bucket(
        rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    expected = [exact_t5_bucket(int(r), bidirectional, num_buckets, max_distance) for r in rel]
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (20, 160), (40, 640)])
def test_fraction_and_mpmath_references_agree(bidirectional, num_buckets, max_distance):
    # the two references are themselves independent; check them against each other
    for r in range(-2 * max_distance, 2 * max_distance + 1):
        assert exact_t5_bucket(r, bidirectional, num_buckets, max_distance) == mp_bucket(
            r, bidirectional, num_buckets, max_distance
        )


def test_standard_table_by_hand():
    # (32, 128), bidirectional: 16 buckets per sign, m = 8 exact, s = 8 log buckets,
    # boundaries 8 * 16^(t/8) = 8 * 2^(t/2): 11.31, 16, 22.63, 32, 45.25, 64, 90.51,
    # so the smallest distances of buckets 9..15 are 12, 16, 23, 32, 46, 64, 91.
    firsts = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 23, 32, 46, 64, 91]
    expected = {}
    for b, lo in enumerate(firsts):
        hi = firsts[b + 1] if b + 1 < len(firsts) else 300
        for n in range(lo, hi):
            expected[n] = b
    n = np.arange(300)
    neg = posenc.t5_relative_position_bucket(-n)
    pos = posenc.t5_relative_position_bucket(n)
    np.testing.assert_array_equal(neg, [expected[int(v)] for v in n])
    np.testing.assert_array_equal(pos[1:], [16 + expected[int(v)] for v in n[1:]])
    assert pos[0] == 0  # r = 0 is the query itself: no offset
    np.testing.assert_array_equal(posenc.t5_bucket_thresholds(), firsts)


def test_causal_small_values_by_hand():
    # causal (32, 128): 32 buckets, 16 exact, boundaries 16 * 8^(t/16); bucket 16 starts at 16,
    # 8^(1/16) = 1.1388 -> 16 * 1.1388 = 18.22 -> bucket 17 starts at 19.
    b = posenc.t5_relative_position_bucket(
        np.array([5, 1, 0, -1, -15, -16, -18, -19, -127, -128, -(10**6)]), bidirectional=False
    )
    np.testing.assert_array_equal(b, [0, 0, 0, 1, 15, 16, 16, 17, 31, 31, 31])


def test_ties_are_exact():
    # num_buckets=20, max_distance=160, bidirectional: m = 5, s = 5, D/m = 32 = 2^5, so the
    # boundaries are 5 * 2^t = 10, 20, 40, 80 exactly: |r| = 10 is the first of bucket 6, etc.
    rel = np.array([9, 10, 19, 20, 39, 40, 79, 80, 159, 160])
    for sign, off in ((-1, 0), (1, 10)):
        got = posenc.t5_relative_position_bucket(sign * rel, num_buckets=20, max_distance=160)
        np.testing.assert_array_equal(got, off + np.array([5, 6, 6, 7, 7, 8, 8, 9, 9, 9]))
    # a naive float64 evaluation is one bucket low at 10, 20, 80 (the reason for exact arithmetic)
    naive = float_formula(rel, 10, 160, dtype=np.float64)
    assert naive.tolist() == [5, 5, 6, 6, 7, 8, 8, 8, 9, 9]


def test_scalar_and_shapes():
    assert posenc.t5_relative_position_bucket(-20).shape == ()
    assert int(posenc.t5_relative_position_bucket(-20)) == exact_t5_bucket(-20)
    rel = np.arange(-60, 60).reshape(2, 3, 4, 5)
    got = posenc.t5_relative_position_bucket(rel)
    assert got.shape == rel.shape
    np.testing.assert_array_equal(got.ravel(), [exact_t5_bucket(int(r)) for r in rel.ravel()])
    for dtype in (np.int8, np.int16, np.int32, np.uint8, np.uint64):
        r = np.array([0, 3, 100, 120], dtype=dtype)
        np.testing.assert_array_equal(
            posenc.t5_relative_position_bucket(r), [exact_t5_bucket(int(v)) for v in r]
        )


def test_extreme_integers_do_not_overflow():
    big = np.array([np.iinfo(np.int64).min, -(2**40), 2**40, np.iinfo(np.int64).max])
    np.testing.assert_array_equal(posenc.t5_relative_position_bucket(big), [15, 15, 31, 31])
    np.testing.assert_array_equal(
        posenc.t5_relative_position_bucket(big, bidirectional=False), [31, 31, 0, 0]
    )


# ---------------------------------------------------------------------------------------
# the float32 formula of the public implementations (numpy emulation)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("bidirectional", [True, False])
def test_standard_config_float32_agrees_everywhere(bidirectional):
    half = 16 if bidirectional else 32
    n = np.arange(0, 4097)
    exact = [exact_t5_bucket(-int(v), bidirectional) for v in n]
    np.testing.assert_array_equal(float_formula(n, half, 128), exact)
    np.testing.assert_array_equal(float_formula(n, half, 128, reciprocal=True), exact)


def test_float32_disagreements_documented():
    # one bucket too high just below a boundary (float32 rounds the quotient up to 39)
    n = np.arange(0, 2001)
    exact = np.array([exact_t5_bucket(-int(v), False, 83, 1000) for v in n])
    diff = n[float_formula(n, 83, 1000) != exact]
    assert diff.tolist() == [796]
    assert float_formula(np.array([796]), 83, 1000)[0] == exact[796] + 1
    # one bucket too low at an exact tie when dividing by a reciprocal (GPU style)
    exact20 = np.array([exact_t5_bucket(-int(v), False, 20, 1000) for v in n])
    diff20 = n[float_formula(n, 20, 1000, reciprocal=True) != exact20]
    assert diff20.tolist() == [100]
    assert float_formula(np.array([100]), 20, 1000, reciprocal=True)[0] == exact20[100] - 1


# ---------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------

configs = st.sampled_from(CONFIGS)


@given(configs, st.booleans(), st.integers(0, 5000), st.integers(0, 5000))
def test_monotone_in_distance_within_a_sign(cfg, bidirectional, a, b):
    nb, md = cfg
    lo, hi = min(a, b), max(a, b)

    def f(r):
        return int(
            posenc.t5_relative_position_bucket(
                r, bidirectional=bidirectional, num_buckets=nb, max_distance=md
            )
        )

    assert f(-lo) <= f(-hi)
    if bidirectional and lo > 0:
        assert f(lo) <= f(hi)


@given(configs, st.booleans(), st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=30))
def test_range_and_sign_halves(cfg, bidirectional, rels):
    nb, md = cfg
    b = posenc.t5_relative_position_bucket(
        np.array(rels), bidirectional=bidirectional, num_buckets=nb, max_distance=md
    )
    assert b.min() >= 0 and b.max() <= nb - 1
    r = np.array(rels)
    far = np.abs(r) >= md  # beyond max_distance: one shared last bucket per sign
    if bidirectional:
        assert np.all((b >= nb // 2) == (r > 0))
        assert np.all(b[far & (r < 0)] == nb // 2 - 1) and np.all(b[far & (r > 0)] == nb - 1)
    else:
        assert np.all(b[r >= 0] == 0)
        assert np.all(b[far & (r < 0)] == nb - 1)


def test_every_bucket_is_used():
    for nb, md in CONFIGS:
        for bidirectional in (True, False):
            b = posenc.t5_relative_position_bucket(
                np.arange(-md - 1, md + 2), bidirectional=bidirectional, num_buckets=nb, max_distance=md
            )
            used = set(b.tolist())
            # causal: positive offsets reuse bucket 0, all nb buckets appear through r <= 0;
            # bidirectional: r = 0 takes bucket 0, so bucket nb/2 (offset + distance 0) is never used
            dead = {nb // 2} if bidirectional else set()
            assert used == set(range(nb)) - dead, (nb, md, bidirectional)


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------


def test_bucket_errors():
    with pytest.raises(TypeError, match="relative_position"):
        posenc.t5_relative_position_bucket(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="relative_position"):
        posenc.t5_relative_position_bucket(np.array([True]))
    with pytest.raises(TypeError, match="relative_position"):
        posenc.t5_relative_position_bucket(2.5)
    with pytest.raises(TypeError, match="relative_position"):
        posenc.t5_relative_position_bucket([10**30])
    with pytest.raises(ValueError, match="even"):
        posenc.t5_relative_position_bucket(0, num_buckets=31)
    with pytest.raises(ValueError, match="num_buckets"):
        posenc.t5_relative_position_bucket(0, num_buckets=2)
    with pytest.raises(ValueError, match="num_buckets"):
        posenc.t5_relative_position_bucket(0, num_buckets=0)
    with pytest.raises(TypeError, match="num_buckets"):
        posenc.t5_relative_position_bucket(0, num_buckets=32.0)
    with pytest.raises(ValueError, match="max_distance"):
        posenc.t5_relative_position_bucket(0, num_buckets=32, max_distance=8)
    with pytest.raises(TypeError, match="max_distance"):
        posenc.t5_relative_position_bucket(0, max_distance=128.0)
    with pytest.raises(TypeError, match="bidirectional"):
        posenc.t5_relative_position_bucket(0, bidirectional=1)
    # causal allows odd counts (no halving)
    assert int(posenc.t5_relative_position_bucket(-1000, bidirectional=False, num_buckets=33)) == 32


# ---------------------------------------------------------------------------------------
# T5 bias
# ---------------------------------------------------------------------------------------


def test_t5_bias_against_loop():
    rng = np.random.default_rng(0)
    H, q_len, k_len = 3, 7, 11
    table = rng.normal(size=(32, H))
    for bidirectional in (True, False):
        for offset in (0, 4, -2):
            got = posenc.t5_bias(table, q_len, k_len, bidirectional=bidirectional, query_offset=offset)
            assert got.shape == (H, q_len, k_len)
            for h in range(H):
                for a in range(q_len):
                    for j in range(k_len):
                        assert got[h, a, j] == table[exact_t5_bucket(j - (offset + a), bidirectional), h]


def test_t5_bias_decoding_offset_is_last_rows():
    rng = np.random.default_rng(1)
    table = rng.normal(size=(32, 2))
    full = posenc.t5_bias(table, 9, 9, bidirectional=False)
    last = posenc.t5_bias(table, 3, 9, bidirectional=False, query_offset=None)
    np.testing.assert_array_equal(last, full[:, -3:, :])


def test_t5_bias_errors():
    with pytest.raises(ValueError, match="bucket_table"):
        posenc.t5_bias(np.zeros((16, 2)), 3, 3)
    with pytest.raises(ValueError, match="bucket_table"):
        posenc.t5_bias(np.zeros(32), 3, 3)
    with pytest.raises(ValueError, match="q_len"):
        posenc.t5_bias(np.zeros((32, 2)), 0, 3)
    with pytest.raises(TypeError, match="k_len"):
        posenc.t5_bias(np.zeros((32, 2)), 3, 2.0)


# ---------------------------------------------------------------------------------------
# Shaw et al.
# ---------------------------------------------------------------------------------------


def test_shaw_index_matrix_by_hand():
    got = posenc.shaw_relative_positions(4, 6, 2)
    expected = [[2, 3, 4, 4, 4, 4], [1, 2, 3, 4, 4, 4], [0, 1, 2, 3, 4, 4], [0, 0, 1, 2, 3, 4]]
    np.testing.assert_array_equal(got, expected)
    # query offset: a single query at the last position (incremental decoding)
    np.testing.assert_array_equal(
        posenc.shaw_relative_positions(1, 6, 2, query_offset=5), [[0, 0, 0, 0, 1, 2]]
    )
    assert np.all(posenc.shaw_relative_positions(5, 5, 0) == 0)


@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 10), st.integers(-20, 20))
def test_shaw_index_properties(q_len, k_len, K, offset):
    idx = posenc.shaw_relative_positions(q_len, k_len, K, query_offset=offset)
    assert idx.shape == (q_len, k_len)
    for a in range(q_len):
        for j in range(k_len):
            assert idx[a, j] == max(-K, min(K, j - (offset + a))) + K


def test_shaw_logits_against_loop():
    rng = np.random.default_rng(2)
    B, H, q_len, k_len, d, K = 2, 3, 5, 7, 4, 2
    q = rng.normal(size=(B, H, q_len, d))
    k = rng.normal(size=(B, H, k_len, d))
    w = rng.normal(size=(2 * K + 1, d))
    got = posenc.shaw_relative_logits(q, k, w, K)
    assert got.shape == (B, H, q_len, k_len)
    for b in range(B):
        for h in range(H):
            for i in range(q_len):
                for j in range(k_len):
                    a_ij = w[max(-K, min(K, j - i)) + K]
                    e = sum(q[b, h, i, c] * (k[b, h, j, c] + a_ij[c]) for c in range(d)) / math.sqrt(d)
                    assert got[b, h, i, j] == pytest.approx(e, rel=1e-12, abs=1e-12)


def test_shaw_logits_errors():
    q = np.zeros((3, 4))
    with pytest.raises(ValueError, match="2\\*K\\+1"):
        posenc.shaw_relative_logits(q, q, np.zeros((4, 4)), 2)
    with pytest.raises(ValueError, match="last dimension"):
        posenc.shaw_relative_logits(q, np.zeros((3, 5)), np.zeros((5, 4)), 2)
    with pytest.raises(ValueError, match="max_relative_position"):
        posenc.shaw_relative_positions(3, 3, -1)


LIMIT = 2**53

T5_CONFIGS = [(32, 128), (20, 160), (8, 16), (12, 48), (4, 3), (83, 1000), (6, 100)]


def valid_t5(draw_bidirectional: bool, nb: int) -> bool:
    return not (draw_bidirectional and nb % 2)


@settings(max_examples=30)
@given(
    cfg=st.sampled_from(T5_CONFIGS),
    bidirectional=st.booleans(),
    rels=st.lists(st.integers(-(2**62), 2**62) | st.integers(-3000, 3000), min_size=1, max_size=20),
)
def test_t5_buckets_match_the_exact_formula(cfg, bidirectional, rels):
    nb, md = cfg
    if not valid_t5(bidirectional, nb):
        nb += 1
    got = posenc.t5_relative_position_bucket(
        rels, bidirectional=np.bool_(bidirectional), num_buckets=np.int32(nb), max_distance=md
    )
    # beyond max_distance every distance shares the last bucket: evaluate the reference there
    clipped = [max(min(r, md + 1), -md - 1) for r in rels]
    assert got.tolist() == [exact_t5_bucket(r, bidirectional, nb, md) for r in clipped]


@pytest.mark.parametrize("nb,md", T5_CONFIGS)
@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_thresholds_are_the_smallest_distances_of_each_bucket(nb, md, bidirectional):
    if not valid_t5(bidirectional, nb):
        nb += 1
    half = nb // 2 if bidirectional else nb
    m, s = half // 2, half - half // 2
    expected = list(range(m + 1))
    for t in range(1, s):
        n = m
        while n**s < md**t * m ** (s - t):  # direct scan over the distances
            n += 1
        expected.append(n)
    got = posenc.t5_bucket_thresholds(bidirectional=bidirectional, num_buckets=nb, max_distance=md)
    assert got.tolist() == expected


def test_t5_thresholds_at_the_size_limits_are_exact():
    # (its speed is measured by scripts/bench.py, not here: a timed test fails on a busy machine)
    got = posenc.t5_bucket_thresholds(bidirectional=False, num_buckets=2**11, max_distance=LIMIT)
    m, s = 2**10, 2**10
    for t in (1, 7, 500, s - 1):  # spot checks of the defining inequality with Python integers
        n = int(got[m + t])
        assert n**s >= LIMIT**t * m ** (s - t) > (n - 1) ** s


@settings(max_examples=25)
@given(
    cfg=st.sampled_from(T5_CONFIGS[:5]),
    bidirectional=st.booleans(),
    q=st.integers(1, 6),
    k=st.integers(1, 6),
    heads=st.integers(1, 3),
    offset=st.one_of(st.none(), st.integers(-LIMIT, LIMIT)),
)
def test_t5_bias_and_shaw_match_loops(cfg, bidirectional, q, k, heads, offset):
    nb, md = cfg
    if not valid_t5(bidirectional, nb):
        nb += 1
    table = np.arange(nb * heads, dtype=np.int16).reshape(nb, heads)
    if offset is None and q > k:  # "the last q_len of the k_len positions" does not exist
        with pytest.raises(ValueError, match="q_len must be at most k_len"):
            posenc.t5_bias(
                table, q, k, bidirectional=bidirectional, num_buckets=nb, max_distance=md, query_offset=None
            )
        return
    bias = posenc.t5_bias(
        table.tolist(),
        q,
        k,
        bidirectional=bidirectional,
        num_buckets=nb,
        max_distance=md,
        query_offset=offset,
    )
    start = k - q if offset is None else offset
    K = 3
    shaw = posenc.shaw_relative_positions(q, k, K, query_offset=start)
    for a in range(q):
        for j in range(k):
            rel = j - (start + a)
            b = exact_t5_bucket(max(min(rel, md + 1), -md - 1), bidirectional, nb, md)
            assert [bias[h, a, j] for h in range(heads)] == [float(table[b, h]) for h in range(heads)]
            assert shaw[a, j] == min(max(rel, -K), K) + K


@settings(max_examples=25)
@given(
    q_len=st.integers(1, 4), k_len=st.integers(1, 4), d=st.integers(1, 4), K=st.integers(0, 3), data=st.data()
)
def test_shaw_relative_logits_match_loops(q_len, k_len, d, K, data):
    ints = st.integers(-20, 20)
    q = np.array(data.draw(st.lists(ints, min_size=q_len * d, max_size=q_len * d))).reshape(q_len, d)
    k = np.array(data.draw(st.lists(ints, min_size=k_len * d, max_size=k_len * d))).reshape(k_len, d)
    w = np.array(data.draw(st.lists(ints, min_size=(2 * K + 1) * d, max_size=(2 * K + 1) * d)))
    w = w.reshape(2 * K + 1, d).astype(np.int8)
    got = posenc.shaw_relative_logits(q, k.tolist(), w, K, query_offset=1)
    for i in range(q_len):
        for j in range(k_len):
            idx = min(max(j - (i + 1), -K), K) + K
            exact = sum(int(q[i, c]) * (int(k[j, c]) + int(w[idx, c])) for c in range(d))
            assert got[i, j] == pytest.approx(exact / math.sqrt(d), rel=4 * EPS, abs=1e-300)


@pytest.mark.parametrize(("dtype", "max_distance"), [(np.uint8, 300), (np.uint16, 70000), (np.uint32, 2**33)])
def test_t5_buckets_of_unsigned_distances_beyond_their_dtype(dtype, max_distance):
    r = np.array([1, 5, 200], dtype=dtype)
    got = posenc.t5_relative_position_bucket(r, max_distance=max_distance)
    want = [exact_t5_bucket(int(v), max_distance=max_distance) for v in r]  # exact rational definition
    assert got.dtype == np.int64 and got.tolist() == want


def test_t5_bucket_shapes_of_a_scalar_and_an_empty_list():
    scalar = posenc.t5_relative_position_bucket(5)
    assert isinstance(scalar, np.ndarray) and scalar.shape == () and scalar.dtype == np.int64
    empty = posenc.t5_relative_position_bucket([])
    assert empty.shape == (0,) and empty.dtype == np.int64


def test_t5_bias_refuses_more_queries_than_keys_at_the_end():
    with pytest.raises(ValueError, match="q_len must be at most k_len"):
        posenc.t5_bias(np.zeros((32, 1)), 3, 2, query_offset=None)
