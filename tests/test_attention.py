"""Tests of posenc.attention: softmax, causal_mask, attention.

The reference is a hand-written softmax (math.exp row by row, conftest.hand_softmax) and
explicit loops, never posenc's own output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import hand_softmax
from hypothesis import given
from hypothesis import strategies as st

import posenc


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
