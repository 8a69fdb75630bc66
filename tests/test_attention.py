"""Tests of posenc.attention: softmax, causal_mask, attention.

The reference is a hand-written softmax (math.exp row by row, conftest.hand_softmax) and
explicit loops, never posenc's own output.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from conftest import EPS, draw_array, hand_softmax, refuses_call
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
import posenc.exercises

Q, K, V = np.zeros((2, 3)), np.ones((4, 3)), np.ones((4, 2))
X3, W3 = np.ones((4, 3)), np.eye(3)


def _hand_attention(q, k, v, bias=None, causal=False, scale=None):
    """Single-head attention written with loops (2-D q, k, v)."""
    lq, d = q.shape
    lk = k.shape[0]
    scale = 1 / math.sqrt(d) if scale is None else scale
    weights = np.zeros((lq, lk))
    for i in range(lq):
        row = []
        for j in range(lk):
            s = math.fsum(q[i, t] * k[j, t] for t in range(d)) * scale
            if bias is not None:
                s += bias[i, j]
            if causal and j > i + (lk - lq):
                s = -math.inf
            row.append(s)
        weights[i] = hand_softmax(row)
    out = np.array(
        [
            [math.fsum(weights[i, j] * v[j, c] for j in range(lk)) for c in range(v.shape[1])]
            for i in range(lq)
        ]
    )
    return out, weights


# ---------------------------------------------------------------------------------------
# softmax
# ---------------------------------------------------------------------------------------


def test_softmax_hand_values():
    s = np.array([[0.0, math.log(3.0)], [1.0, 1.0]])
    np.testing.assert_allclose(posenc.softmax(s), [[0.25, 0.75], [0.5, 0.5]], rtol=1e-15)


def test_softmax_stable_for_large_scores_and_neg_inf():
    s = np.array([1000.0, 1001.0, -np.inf])
    got = posenc.softmax(s)
    np.testing.assert_allclose(got, hand_softmax([1000.0, 1001.0, -math.inf]), rtol=1e-15)
    assert got[2] == 0.0
    assert np.all(np.isfinite(got))


def test_softmax_axis():
    rng = np.random.default_rng(0)
    s = rng.normal(size=(3, 4))
    got = posenc.softmax(s, axis=0)
    for c in range(4):
        np.testing.assert_allclose(got[:, c], hand_softmax(s[:, c].tolist()), rtol=1e-14)


@given(
    st.lists(
        st.lists(st.floats(-50, 50), min_size=4, max_size=4),
        min_size=1,
        max_size=5,
    )
)
def test_softmax_rows_sum_to_one(rows):
    got = posenc.softmax(np.array(rows))
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=1e-14)
    assert np.all(got >= 0)
    for g, r in zip(got, rows, strict=True):
        np.testing.assert_allclose(g, hand_softmax(r), rtol=1e-13, atol=1e-300)


def test_softmax_errors():
    with pytest.raises(ValueError, match="masked"):
        posenc.softmax(np.array([[0.0, 1.0], [-np.inf, -np.inf]]))
    with pytest.raises(ValueError, match="NaN"):
        posenc.softmax(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="inf"):
        posenc.softmax(np.array([0.0, np.inf]))
    with pytest.raises(TypeError, match="scores"):
        posenc.softmax(np.array(["a", "b"]))


# ---------------------------------------------------------------------------------------
# causal_mask
# ---------------------------------------------------------------------------------------


def test_causal_mask_square_is_lower_triangular():
    expected = np.array([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(posenc.causal_mask(3), expected)
    np.testing.assert_array_equal(posenc.causal_mask(3, 3), expected)


def test_causal_mask_queries_are_last_positions():
    # 2 queries at absolute positions 2 and 3 of 4 keys.
    expected = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(posenc.causal_mask(2, 4), expected)
    np.testing.assert_array_equal(posenc.causal_mask(1, 5), np.ones((1, 5), dtype=bool))


@pytest.mark.parametrize(
    ("args", "name"),
    [((0,), "q_len"), ((-1,), "q_len"), ((3, 2), "q_len"), ((2, 0), "k_len"), ((0, 0), "q_len")],
)
def test_causal_mask_bad_sizes(args, name):
    with pytest.raises(ValueError, match=name):
        posenc.causal_mask(*args)


@pytest.mark.parametrize("args", [(2.5,), (2.0, 3), (2, 3.0), (True,)])
def test_causal_mask_non_int_sizes(args):
    with pytest.raises(TypeError, match="_len"):
        posenc.causal_mask(*args)


# ---------------------------------------------------------------------------------------
# attention
# ---------------------------------------------------------------------------------------


def test_attention_matches_hand_computation():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    out, w = posenc.attention(q, k, v)
    ref_out, ref_w = _hand_attention(q, k, v)
    assert out.shape == (3, 2) and w.shape == (3, 5)
    np.testing.assert_allclose(w, ref_w, rtol=1e-13)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)


def test_attention_bias_is_added():
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    bias = rng.normal(size=(4, 4)) * 3
    out, w = posenc.attention(q, k, v, bias=bias)
    ref_out, ref_w = _hand_attention(q, k, v, bias=bias)
    np.testing.assert_allclose(w, ref_w, rtol=1e-13)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)
    # And it changes the answer (the bias is not ignored).
    assert not np.allclose(w, posenc.attention(q, k, v)[1])


def test_attention_scale():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(2, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    out, w = posenc.attention(q, k, v, scale=0.3)
    ref_out, ref_w = _hand_attention(q, k, v, scale=0.3)
    np.testing.assert_allclose(w, ref_w, rtol=1e-13)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)


def test_attention_batched_heads_and_broadcast_bias():
    rng = np.random.default_rng(4)
    q, k, v = rng.normal(size=(2, 3, 5, 4)), rng.normal(size=(2, 3, 6, 4)), rng.normal(size=(2, 3, 6, 2))
    bias = rng.normal(size=(3, 5, 6))  # per head, broadcast over the batch
    out, w = posenc.attention(q, k, v, bias=bias, causal=True)
    assert out.shape == (2, 3, 5, 2) and w.shape == (2, 3, 5, 6)
    for b in range(2):
        for h in range(3):
            ref_out, ref_w = _hand_attention(q[b, h], k[b, h], v[b, h], bias=bias[h], causal=True)
            np.testing.assert_allclose(w[b, h], ref_w, rtol=1e-13, atol=1e-300)
            np.testing.assert_allclose(out[b, h], ref_out, rtol=1e-12, atol=1e-14)


matrices = st.integers(0, 2**32 - 1)


@given(seed=matrices, n=st.integers(1, 7), d=st.integers(1, 5), data=st.data())
def test_attention_rows_sum_to_one(seed, n, d, data):
    rng = np.random.default_rng(seed)
    lq = data.draw(st.integers(1, n))
    causal = data.draw(st.booleans())
    q, k, v = rng.normal(size=(lq, d)), rng.normal(size=(n, d)), rng.normal(size=(n, 3))
    _, w = posenc.attention(q, k, v, causal=causal)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-14)
    assert np.all(w >= 0)


@given(
    seed=matrices, perm=st.integers(1, 7).flatmap(lambda n: st.permutations(range(n))), d=st.integers(1, 5)
)
def test_attention_permutation_equivariance(seed, perm, d):
    n = len(perm)
    perm = np.array(perm)
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(n, d)), rng.normal(size=(n, d)), rng.normal(size=(n, 3))
    out, w = posenc.attention(q, k, v)
    out_p, w_p = posenc.attention(q[perm], k[perm], v[perm])
    # Permuting the tokens permutes the outputs the same way (P·out) and W -> P W P^T.
    np.testing.assert_allclose(out_p, out[perm], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w_p, w[np.ix_(perm, perm)], rtol=1e-12, atol=1e-300)
    # Permuting only keys and values (the set attended over) leaves the output unchanged.
    out_kv, _ = posenc.attention(q, k[perm], v[perm])
    np.testing.assert_allclose(out_kv, out, rtol=1e-12, atol=1e-14)


def test_causal_mask_breaks_permutation_equivariance():
    rng = np.random.default_rng(5)
    q = k = v = rng.normal(size=(4, 3))
    perm = np.array([3, 2, 1, 0])
    out, _ = posenc.attention(q, k, v, causal=True)
    out_p, _ = posenc.attention(q[perm], k[perm], v[perm], causal=True)
    assert not np.allclose(out_p, out[perm])


def test_causal_zeroes_future_keys():
    rng = np.random.default_rng(6)
    q, k, v = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    out, w = posenc.attention(q, k, v, causal=True)
    assert np.all(w[np.triu_indices(5, 1)] == 0.0)
    ref_out, ref_w = _hand_attention(q, k, v, causal=True)
    np.testing.assert_allclose(w, ref_w, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)
    # The first query sees only the first key.
    np.testing.assert_array_equal(w[0], [1.0, 0, 0, 0, 0])
    np.testing.assert_allclose(out[0], v[0], rtol=1e-15)


@given(seed=matrices, n=st.integers(2, 7), d=st.integers(1, 4), data=st.data())
def test_causal_short_queries_are_the_last_positions(seed, n, d, data):
    lq = data.draw(st.integers(1, n - 1))
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(n, d)), rng.normal(size=(n, d)), rng.normal(size=(n, 2))
    out_full, w_full = posenc.attention(q, k, v, causal=True)
    out, w = posenc.attention(q[-lq:], k, v, causal=True)
    # Decoding with a cache: the last lq queries see exactly what they saw in the full pass.
    np.testing.assert_allclose(w, w_full[-lq:], rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(out, out_full[-lq:], rtol=1e-12, atol=1e-14)
    for i in range(lq):
        i_abs = i + n - lq
        assert np.all(w[i, i_abs + 1 :] == 0)
        assert np.all(w[i, : i_abs + 1] > 0)


def test_fully_masked_row_raises():
    q = k = v = np.eye(3)
    bias = np.zeros((3, 3))
    bias[1] = -np.inf
    with pytest.raises(ValueError, match="masked"):
        posenc.attention(q, k, v, bias=bias)
    # The causal mask plus a bias that hides the only visible key of query 0.
    bias = np.zeros((3, 3))
    bias[0, 0] = -np.inf
    with pytest.raises(ValueError, match="masked"):
        posenc.attention(q, k, v, bias=bias, causal=True)


def test_attention_shape_errors():
    z = np.zeros
    with pytest.raises(ValueError, match="q and k"):
        posenc.attention(z((2, 3)), z((2, 4)), z((2, 4)))
    with pytest.raises(ValueError, match="k and v"):
        posenc.attention(z((2, 3)), z((4, 3)), z((3, 3)))
    with pytest.raises(ValueError, match="bias"):
        posenc.attention(z((2, 3)), z((4, 3)), z((4, 3)), bias=z((2, 3)))
    with pytest.raises(ValueError, match="q"):
        posenc.attention(z(3), z((4, 3)), z((4, 3)))
    with pytest.raises(ValueError, match="k"):
        posenc.attention(z((2, 3)), z(3), z((4, 3)))
    with pytest.raises(ValueError, match="v"):
        posenc.attention(z((2, 3)), z((4, 3)), z(4))
    with pytest.raises(ValueError, match="q must not have more positions than k"):  # under a causal mask
        posenc.attention(z((5, 3)), z((4, 3)), z((4, 3)), causal=True)
    with pytest.raises(ValueError, match="scale"):
        posenc.attention(z((2, 3)), z((4, 3)), z((4, 3)), scale=float("nan"))
    with pytest.raises(TypeError, match="q"):
        posenc.attention(np.array([["a"]]), z((1, 1)), z((1, 1)))


# ---------------------------------------------------------------------------------------
# permutation_matrix, self_attention, taylor_terms
# ---------------------------------------------------------------------------------------


def test_permutation_matrix_hand():
    p = posenc.permutation_matrix([2, 0, 1])
    np.testing.assert_array_equal(p, [[0, 0, 1], [1, 0, 0], [0, 1, 0]])
    x = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(p @ x, x[[2, 0, 1]])


@given(perm=st.integers(1, 8).flatmap(lambda n: st.permutations(range(n))))
def test_permutation_matrix_orthogonal(perm):
    p = posenc.permutation_matrix(np.array(perm))
    n = len(perm)
    np.testing.assert_array_equal(p @ p.T, np.eye(n))
    np.testing.assert_array_equal(p @ np.arange(n), perm)


@pytest.mark.parametrize(
    "bad,exc",
    [
        ([0, 0], ValueError),
        ([1, 2], ValueError),
        (np.array([], dtype=np.int64), ValueError),
        ([[0]], ValueError),
        ([0.0, 1.0], TypeError),
        ([True, False], TypeError),
    ],
)
def test_permutation_matrix_errors(bad, exc):
    with pytest.raises(exc, match="perm"):
        posenc.permutation_matrix(bad)


def test_self_attention_is_attention_of_projections():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(5, 6))
    wq, wk, wv = rng.normal(size=(6, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    for causal in (False, True):
        out, w = posenc.self_attention(x, wq, wk, wv, causal=causal)
        ref_out, ref_w = _hand_attention(x @ wq, x @ wk, x @ wv, causal=causal)
        np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(out, ref_out, rtol=1e-11, atol=1e-13)


def test_self_attention_errors():
    z = np.zeros
    with pytest.raises(ValueError, match="w_q"):
        posenc.self_attention(z((3, 4)), z((5, 2)), z((4, 2)), z((4, 2)))
    with pytest.raises(ValueError, match="w_v"):
        posenc.self_attention(z((3, 4)), z((4, 2)), z((4, 2)), z((3, 2)))
    with pytest.raises(ValueError, match="w_q and w_k"):
        posenc.self_attention(z((3, 4)), z((4, 2)), z((4, 3)), z((4, 2)))
    with pytest.raises(ValueError, match="x"):
        posenc.self_attention(z(4), z((4, 2)), z((4, 2)), z((4, 2)))


def test_taylor_terms_exact_for_a_quadratic():
    # f(X) = c·x + ½ xᵀHx with x = vec(X): central differences are exact for quadratics,
    # so the terms equal their closed forms up to rounding (step 1e-3: error ~ eps/step²).
    rng = np.random.default_rng(8)
    L, d = 3, 2
    c = rng.normal(size=L * d)
    a = rng.normal(size=(L * d, L * d))
    h = a + a.T

    def f(x):
        v = x.reshape(-1)
        return float(c @ v + 0.5 * v @ h @ v)

    x, p = rng.normal(size=(L, d)), rng.normal(size=(L, d))
    got = posenc.taylor_terms(f, x, p)
    xv, pv = x.reshape(-1), p.reshape(-1)
    first = c @ pv + xv @ h @ pv
    diagonal = 0.5 * sum(p[m] @ h[m * d : (m + 1) * d, m * d : (m + 1) * d] @ p[m] for m in range(L))
    cross = sum(
        p[m] @ h[m * d : (m + 1) * d, n * d : (n + 1) * d] @ p[n] for m in range(L) for n in range(m + 1, L)
    )
    assert got["f0"] == f(x)
    np.testing.assert_allclose(
        [got["first"], got["diagonal"], got["cross"]], [first, diagonal, cross], atol=1e-7
    )
    # The expansion is exact for a quadratic: f(X+P) = f0 + first + diagonal + cross.
    assert abs(f(x + p) - (got["f0"] + got["first"] + got["diagonal"] + got["cross"])) < 1e-6


def test_taylor_terms_zero_direction_and_errors():
    def f(x):
        return float(np.sum(np.sin(x)))

    x = np.ones((2, 2))
    got = posenc.taylor_terms(f, x, np.zeros((2, 2)))
    assert got["first"] == got["diagonal"] == got["cross"] == 0.0
    with pytest.raises(TypeError, match="f"):
        posenc.taylor_terms(3.0, x, x)
    with pytest.raises(ValueError, match="p"):
        posenc.taylor_terms(f, x, np.ones((2, 3)))
    for step in (0.0, -1e-3, float("nan")):
        with pytest.raises(ValueError, match="step"):
            posenc.taylor_terms(f, x, x, step=step)


def _fsum_attention(q, k, v, bias=None, causal=False, scale=None):
    """Attention of 2-D float64 q, k, v with fsum dot products and hand_softmax rows."""
    lq, d = q.shape
    lk = k.shape[0]
    scale = 1 / math.sqrt(d) if scale is None else scale
    out = np.zeros((lq, v.shape[1]))
    weights = np.zeros((lq, lk))
    for i in range(lq):
        row = []
        for j in range(lk):
            s = math.fsum(float(q[i, t]) * float(k[j, t]) for t in range(d)) * scale
            if bias is not None:
                s += float(bias[i, j])
            if causal and j > i + lk - lq:
                s = -math.inf
            row.append(s)
        weights[i] = hand_softmax(row)
        for c in range(v.shape[1]):
            out[i, c] = math.fsum(weights[i, j] * float(v[j, c]) for j in range(lk))
    return out, weights


@given(
    data=st.data(),
    dtype=st.sampled_from([np.int8, np.int64, np.float16, np.float32, np.float64]),
    rows=st.integers(1, 4),
    cols=st.integers(1, 5),
)
def test_softmax_matches_hand_softmax_for_every_dtype(data, dtype, rows, cols):
    scores = draw_array(data.draw, (rows, cols), dtype)
    got = posenc.softmax(scores)
    assert got.dtype == np.float64  # documented: computed and returned in float64
    for r in range(rows):
        want = hand_softmax([float(x) for x in scores[r]])
        np.testing.assert_allclose(got[r], want, rtol=8 * EPS, atol=1e-300)


def test_softmax_of_int8_does_not_overflow():
    # int8 max is 127: e^(127-(-128)) overflows float16, and int8 arithmetic would wrap
    scores = np.array([[127, -128, 0]], dtype=np.int8)
    np.testing.assert_allclose(posenc.softmax(scores)[0], hand_softmax([127.0, -128.0, 0.0]), rtol=4 * EPS)
    # a list along axis 0, extreme float64 values: weight exactly 0 for the far one
    got = posenc.softmax([[1.5e308], [-1.5e308]], axis=0)
    np.testing.assert_array_equal(got, [[1.0], [0.0]])


@given(q_len=st.integers(1, 6), extra=st.integers(0, 5))
def test_causal_mask_by_definition(q_len, extra):
    k_len = q_len + extra
    got = posenc.causal_mask(q_len, np.int64(k_len))
    for i in range(q_len):
        for j in range(k_len):
            assert got[i, j] == (j <= i + k_len - q_len)


@given(
    data=st.data(),
    lq=st.integers(1, 4),
    lk=st.integers(1, 4),
    d=st.integers(1, 3),
    dv=st.integers(1, 3),
    dtype=st.sampled_from([np.int8, np.float16, np.float64]),
    causal=st.sampled_from([False, True, np.True_]),
    with_bias=st.booleans(),
    as_list=st.booleans(),
)
def test_attention_matches_hand_loops(data, lq, lk, d, dv, dtype, causal, with_bias, as_list):
    if causal and lq > lk:
        lq = lk
    q = draw_array(data.draw, (lq, d), dtype)
    k = draw_array(data.draw, (lk, d), dtype)
    v = draw_array(data.draw, (lk, dv), dtype)
    bias = draw_array(data.draw, (lq, lk), np.float64) if with_bias else None
    args = (q.tolist(), k.tolist(), v.tolist()) if as_list else (q, k, v)
    out, w = posenc.attention(*args, bias=bias, causal=causal)
    want_out, want_w = _fsum_attention(q.astype(float), k.astype(float), v.astype(float), bias, bool(causal))
    assert out.dtype == w.dtype == np.float64
    np.testing.assert_allclose(w, want_w, rtol=1e-12, atol=1e-300)
    scale = float(np.max(np.abs(v.astype(float)), initial=1.0))
    np.testing.assert_allclose(out, want_out, rtol=1e-12, atol=1e-12 * scale)


def test_attention_int8_products_do_not_wrap():
    # 100 * 100 = 10000 wraps in int8; the scores must be the true products
    q = np.full((1, 1), 100, dtype=np.int8)
    k = np.array([[100], [-100]], dtype=np.int8)
    v = np.array([[1], [0]], dtype=np.int8)
    _, w = posenc.attention(q, k, v, scale=1e-4)
    np.testing.assert_allclose(w[0], hand_softmax([1.0, -1.0]), rtol=4 * EPS)


@given(perm=st.integers(1, 8).flatmap(lambda n: st.permutations(range(n))))
def test_permutation_matrix_by_definition(perm):
    got = posenc.permutation_matrix(list(perm))
    n = len(perm)
    for i in range(n):
        for j in range(n):
            assert got[i, j] == (1.0 if perm[i] == j else 0.0)


@given(
    data=st.data(),
    L=st.integers(1, 4),
    dm=st.integers(1, 3),
    dk=st.integers(1, 3),
    dtype=st.sampled_from([np.int8, np.float64]),
)
def test_self_attention_with_lists_matches_hand_projection(data, L, dm, dk, dtype):
    x = draw_array(data.draw, (L, dm), dtype)
    wq, wk, wv = (draw_array(data.draw, (dm, dk), np.float64) for _ in range(3))
    out, w = posenc.self_attention(x.tolist(), wq.tolist(), tuple(map(tuple, wk)), wv, causal=np.False_)

    def proj(m):
        return np.array(
            [[math.fsum(float(x[i, t]) * m[t, c] for t in range(dm)) for c in range(dk)] for i in range(L)]
        )

    want_out, want_w = _fsum_attention(proj(wq), proj(wk), proj(wv))
    np.testing.assert_allclose(w, want_w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out, want_out, rtol=1e-9, atol=1e-9 * max(1.0, float(np.abs(want_out).max())))


@settings(max_examples=20)
@given(seed=st.integers(0, 2**32 - 1), L=st.integers(1, 3), d=st.integers(1, 2))
def test_taylor_terms_of_a_quadratic_are_its_exact_terms(seed, L, d):
    rng = np.random.default_rng(seed)
    n = L * d
    H = rng.normal(size=(n, n))
    H = (H + H.T) / 2
    g = rng.normal(size=n)
    x = rng.integers(-3, 4, size=(L, d)).astype(np.int8)  # integer input is promoted
    p = rng.normal(size=(L, d))

    def f(X):
        z = np.asarray(X, dtype=float).ravel()
        return 0.5 * z @ H @ z + g @ z

    got = posenc.taylor_terms(f, x, p, step=1e-2)
    xs = [float(t) for t in x.ravel()]
    ps = [float(t) for t in p.ravel()]

    def quad(a, b):
        return math.fsum(a[i] * H[i, j] * b[j] for i in range(n) for j in range(n))

    first = math.fsum(g[i] * ps[i] for i in range(n)) + quad(xs, ps)
    rows = [[ps[i] if i // d == m else 0.0 for i in range(n)] for m in range(L)]
    diagonal = 0.5 * math.fsum(quad(r, r) for r in rows)
    cross = math.fsum(quad(rows[a], rows[b]) for a in range(L) for b in range(a + 1, L))
    size = 1.0 + float(np.abs(H).sum()) * (1.0 + float(np.abs(p).sum())) ** 2 * (1 + float(np.abs(x).sum()))
    # a quadratic has no truncation error: only rounding, about eps * |f| / step**2
    assert got["f0"] == pytest.approx(
        0.5 * quad(xs, xs) + math.fsum(g[i] * xs[i] for i in range(n)), abs=1e-9 * size
    )
    assert got["first"] == pytest.approx(first, abs=1e-8 * size)
    assert got["diagonal"] == pytest.approx(diagonal, abs=1e-8 * size)
    assert got["cross"] == pytest.approx(cross, abs=1e-8 * size)


def test_taylor_terms_refuses_bad_callables():
    refuses_call(lambda: posenc.taylor_terms("f", Q, Q), TypeError, "f")
    refuses_call(lambda: posenc.taylor_terms(lambda X: np.ones(2), Q, Q), TypeError, "f")
    refuses_call(lambda: posenc.taylor_terms(lambda X: 1j, Q, Q), TypeError, "f")
    refuses_call(lambda: posenc.taylor_terms(lambda X: math.nan, Q, Q), ValueError, "f")


def test_softmax_of_an_all_masked_slice_names_scores():
    with pytest.raises(ValueError, match="scores"):
        posenc.softmax([-np.inf, -np.inf])


def test_taylor_terms_refuses_a_quadratic_amount_of_work():
    x = np.zeros((10**5, 1))
    t0 = time.process_time()
    with pytest.raises(ValueError, match="x of shape"):
        posenc.taylor_terms(lambda a: 0.0, x, x)
    assert time.process_time() - t0 < 1.0


def test_an_empty_permutation_is_called_empty():
    with pytest.raises(ValueError, match="non-empty"):
        posenc.permutation_matrix([])


def test_attention_names_q_and_k_for_a_causal_mismatch():
    with pytest.raises(ValueError, match="q must not have more positions than k"):
        posenc.attention(np.zeros((3, 2)), np.zeros((2, 2)), np.zeros((2, 1)), causal=True)
