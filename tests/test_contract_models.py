"""The input contract of posenc.attention, learned, naive, probe and decay, both halves.

(a) Valid input, including the edges the contract allows (integer and float16 arrays,
lists, huge and tiny offsets, ``L == max_len``), agrees with an independent reference:
mpmath at 300 bits, ``math.fsum``/``math.exp`` loops (conftest.hand_softmax), Python
integers and fractions, never posenc's own output.

(b) Every class of bad input (wrong type, bool where a count or flag is meant, complex
numbers, empty, wrong shape, NaN/infinity, invalid seed, beyond a documented limit, sizes
that would not fit in memory) raises ``TypeError``/``ValueError`` whose message names the
argument, within one second (a hang guard, measured with ``time.perf_counter``).
"""

from __future__ import annotations

import math
import re
import time
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import hand_softmax, reference_table
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import posenc
from posenc.analysis.probe import AttentionProbe

EPS = 2.0**-52
MP_PREC = 300
FLOAT_MAX = float(np.finfo(np.float64).max)

small_ints = st.integers(-100, 100)
finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


def _mp(x) -> mpmath.mpf:
    return mpmath.mpf(int(x)) if isinstance(x, (int, np.integer)) else mpmath.mpf(float(x))


def _arrays(draw, shape, dtype):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        vals = draw(
            st.lists(
                st.integers(int(info.min), int(info.max)),
                min_size=math.prod(shape),
                max_size=math.prod(shape),
            )
        )
        return np.array(vals, dtype=dtype).reshape(shape)
    vals = draw(
        st.lists(
            st.floats(-8, 8, width=16 if dtype == np.float16 else 64),
            min_size=math.prod(shape),
            max_size=math.prod(shape),
        )
    )
    return np.array(vals, dtype=dtype).reshape(shape)


def _hand_attention(q, k, v, bias=None, causal=False, scale=None):
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


# ---------------------------------------------------------------------------------------
# (a) attention.py
# ---------------------------------------------------------------------------------------


@given(
    data=st.data(),
    dtype=st.sampled_from([np.int8, np.int64, np.float16, np.float32, np.float64]),
    rows=st.integers(1, 4),
    cols=st.integers(1, 5),
)
def test_softmax_matches_hand_softmax_for_every_dtype(data, dtype, rows, cols):
    scores = _arrays(data.draw, (rows, cols), dtype)
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
    q = _arrays(data.draw, (lq, d), dtype)
    k = _arrays(data.draw, (lk, d), dtype)
    v = _arrays(data.draw, (lk, dv), dtype)
    bias = _arrays(data.draw, (lq, lk), np.float64) if with_bias else None
    args = (q.tolist(), k.tolist(), v.tolist()) if as_list else (q, k, v)
    out, w = posenc.attention(*args, bias=bias, causal=causal)
    want_out, want_w = _hand_attention(q.astype(float), k.astype(float), v.astype(float), bias, bool(causal))
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
    x = _arrays(data.draw, (L, dm), dtype)
    wq, wk, wv = (_arrays(data.draw, (dm, dk), np.float64) for _ in range(3))
    out, w = posenc.self_attention(x.tolist(), wq.tolist(), tuple(map(tuple, wk)), wv, causal=np.False_)

    def proj(m):
        return np.array(
            [[math.fsum(float(x[i, t]) * m[t, c] for t in range(dm)) for c in range(dk)] for i in range(L)]
        )

    want_out, want_w = _hand_attention(proj(wq), proj(wk), proj(wv))
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


# ---------------------------------------------------------------------------------------
# (a) learned.py
# ---------------------------------------------------------------------------------------


@given(
    max_len=st.integers(1, 6),
    d=st.integers(1, 4),
    B=st.integers(1, 3),
    data=st.data(),
    seed=st.integers(0, 2**64),
    std=st.floats(1e-3, 1e3),
)
def test_learned_forward_backward_by_hand(max_len, d, B, data, seed, std):
    pe = posenc.LearnedPositionalEncoding(max_len, d, seed=seed, std=std)
    # the documented initialisation: numpy.random.default_rng(seed).normal(0, std)
    np.testing.assert_array_equal(pe.embedding, np.random.default_rng(seed).normal(0.0, std, (max_len, d)))
    L = data.draw(st.integers(1, max_len))  # L == max_len is allowed
    X = _arrays(data.draw, (B, L, d), np.int8)
    out = pe.forward(X.tolist())
    assert out.dtype == np.float64
    for b in range(B):
        for p in range(L):
            for c in range(d):
                assert out[b, p, c] == float(X[b, p, c]) + pe.embedding[p, c]
    for _ in range(2):  # recomputed, not accumulated
        G = _arrays(data.draw, (B, L, d), np.float64)
        gx = pe.backward(G)
        np.testing.assert_array_equal(gx, G)
        for p in range(max_len):
            for c in range(d):
                want = math.fsum(G[b, p, c] for b in range(B)) if p < L else 0.0
                # a sum of B terms in floating point errs by at most (B - 1) u sum|G| (u = EPS / 2),
                # which cancellation can make large relative to the sum itself
                bound = B * EPS * math.fsum(abs(G[b, p, c]) for b in range(B)) if p < L else 0.0
                assert abs(pe.grad_embedding[p, c] - want) <= bound
    with pytest.raises(ValueError, match="max_len"):
        pe.forward(np.zeros((1, max_len + 1, d)))


@given(max_len=st.integers(1, 8), half=st.integers(1, 4))
def test_learned_sinusoidal_init_is_the_exact_table(max_len, half):
    pe = posenc.LearnedPositionalEncoding(max_len, 2 * half, init="sinusoidal")
    np.testing.assert_allclose(
        pe.embedding, reference_table(range(max_len), 2 * half), rtol=0, atol=8 * EPS * max_len
    )


@given(data=st.data(), d=st.integers(1, 4), n=st.integers(1, 4), bias=finite)
def test_position_readout_predict_by_hand(data, d, n, bias):
    w = data.draw(st.lists(finite, min_size=d, max_size=d))
    Y = _arrays(data.draw, (n, d), np.int8)
    readout = posenc.analysis.PositionReadout(w, bias, [])
    got = readout.predict(Y.tolist())
    for i in range(n):
        want = math.fsum([*(float(Y[i, t]) * w[t] for t in range(d)), bias])
        assert got[i] == pytest.approx(want, rel=1e-12, abs=1e-9)


@settings(max_examples=15)
@given(
    seed=st.integers(0, 10**6),
    L=st.integers(1, 3),
    d=st.integers(1, 3),
    B=st.integers(1, 2),
    train_embedding=st.sampled_from([True, False, np.True_]),
)
def test_fit_position_readout_two_steps_by_hand(seed, L, d, B, train_embedding):
    lr, std = 0.1, 0.3
    target = np.arange(L + 1, dtype=np.int64)  # integer target, promoted
    pe = posenc.LearnedPositionalEncoding(L + 1, d, seed=1)
    E = pe.embedding.copy()
    got = posenc.analysis.fit_position_readout(
        pe,
        target,
        train_len=L,
        steps=2,
        lr=lr,
        batch_size=B,
        content_std=std,
        train_embedding=train_embedding,
        seed=seed,
    )
    # the documented algorithm, written out with explicit loops
    rng = np.random.default_rng(seed)
    w = list(rng.normal(0.0, 1.0 / math.sqrt(d), size=d))
    c = 0.0
    n = B * L
    losses = []
    for _ in range(2):
        X = rng.normal(0.0, std, size=(B, L, d))
        Y = X + E[:L]
        r = [
            [math.fsum(Y[b, p, t] * w[t] for t in range(d)) + c - float(target[p]) for p in range(L)]
            for b in range(B)
        ]
        losses.append(0.5 * math.fsum(r[b][p] ** 2 for b in range(B) for p in range(L)) / n)
        gw = [math.fsum(r[b][p] * Y[b, p, t] for b in range(B) for p in range(L)) / n for t in range(d)]
        gc = math.fsum(r[b][p] for b in range(B) for p in range(L)) / n
        if train_embedding:
            for p in range(L):
                for t in range(d):
                    E[p, t] -= lr * math.fsum(r[b][p] * w[t] / n for b in range(B))
        w = [w[t] - lr * gw[t] for t in range(d)]
        c -= lr * gc
    np.testing.assert_allclose(got.losses, losses, rtol=1e-12)
    np.testing.assert_allclose(got.weight, w, rtol=1e-12, atol=1e-14)
    assert got.bias == pytest.approx(c, rel=1e-12, abs=1e-14)
    np.testing.assert_allclose(pe.embedding, E, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------------------
# (a) naive.py
# ---------------------------------------------------------------------------------------


@given(length=st.integers(1, 300))
def test_integer_and_normalized_encodings_are_exact_quotients(length):
    assert posenc.analysis.integer_encoding(length)[:, 0].tolist() == [float(p) for p in range(length)]
    ends = posenc.analysis.normalized_encoding(np.int32(length))[:, 0].tolist()
    frac = posenc.analysis.normalized_encoding(length, mode="fraction")[:, 0].tolist()
    assert ends == [float(Fraction(p, max(length - 1, 1))) for p in range(length)]
    assert frac == [float(Fraction(p, length)) for p in range(length)]


@given(n_bits=st.integers(1, 80), data=st.data())
def test_binary_encoding_is_the_bits(n_bits, data):
    length = data.draw(st.integers(1, min(2**n_bits, 300)))
    got = posenc.analysis.binary_encoding(length, n_bits)
    assert got.shape == (length, n_bits)
    for p in range(length):
        assert got[p].tolist() == [float(ch) for ch in format(p, f"0{n_bits}b")]


@given(
    length=st.integers(1, 40),
    frequency=st.one_of(
        finite.filter(lambda f: f != 0),
        st.floats(1e-300, 1e300).map(lambda f: f * 1.0),
        st.sampled_from([1.0, -1.0, 0.1, math.pi, 2.0**52 + 1, 1e300, -1e300, 5e-324]),
    ),
)
def test_sine_encoding_is_the_sine_of_the_exact_product(length, frequency):
    if not math.isfinite(abs(frequency) * (length - 1)):
        length = 2
    got = posenc.analysis.sine_encoding(length, frequency=frequency)[:, 0]
    with mpmath.workprec(MP_PREC):
        want = [float(mpmath.sin(mpmath.mpf(frequency) * p)) for p in range(length)]
    np.testing.assert_allclose(got, want, rtol=0, atol=8 * EPS)
    if abs(frequency) < 1e-200:  # tiny angles: relative accuracy too
        np.testing.assert_allclose(got, want, rtol=16 * EPS, atol=1e-323)


def _mp_dist(a, b):
    with mpmath.workprec(MP_PREC):
        return mpmath.sqrt(mpmath.fsum((_mp(x) - _mp(y)) ** 2 for x, y in zip(a, b, strict=True)))


table_values = st.one_of(finite, st.sampled_from([1.5e308, -1.5e308, 1e-310, -3e-320, 1e200, 0.0, 7.0]))


@given(data=st.data(), L=st.integers(2, 6), d=st.integers(1, 3))
def test_neighbour_and_min_pairwise_distances_against_mpmath(data, L, d):
    vals = data.draw(st.lists(table_values, min_size=L * d, max_size=L * d))
    table = np.array(vals).reshape(L, d)
    exact = {(p, q): _mp_dist(table[p], table[q]) for p in range(L) for q in range(L) if p < q}
    neighbours = [exact[(p, p + 1)] for p in range(L - 1)]
    if any(v > FLOAT_MAX for v in neighbours):
        with pytest.raises(ValueError, match="pe"):
            posenc.analysis.neighbour_distances(table)
    else:
        got = posenc.analysis.neighbour_distances(table.tolist())
        np.testing.assert_allclose(got, [float(v) for v in neighbours], rtol=8 * EPS, atol=0)
    smallest = min(exact.values())
    if smallest > FLOAT_MAX:
        with pytest.raises(ValueError, match="pe"):
            posenc.analysis.min_pairwise_distance(table)
    else:
        assert posenc.analysis.min_pairwise_distance(table) == pytest.approx(
            float(smallest), rel=8 * EPS, abs=0
        )


@given(data=st.data(), n=st.integers(3, 12), d=st.integers(1, 2), scale_by_length=st.booleans())
def test_predicates_against_direct_loops(data, n, d, scale_by_length):
    vals = data.draw(st.lists(st.integers(-3, 3), min_size=n * d, max_size=n * d))
    T = np.array(vals, dtype=float).reshape(n, d)

    def encode(length):
        if length > n:
            raise ValueError("not defined")
        return T[:length] / length if scale_by_length else T[:length].tolist()

    lengths = sorted(set(data.draw(st.lists(st.integers(1, n), min_size=1, max_size=4))))
    rows = {L: [[float(x) / (L if scale_by_length else 1) for x in T[p]] for p in range(L)] for L in lengths}
    bound = data.draw(st.floats(0, 4))
    assert posenc.analysis.is_bounded(encode, lengths, bound=bound) == all(
        abs(x) <= bound for L in lengths for r in rows[L] for x in r
    )
    assert posenc.analysis.is_unique(encode, np.array(lengths)) == all(
        len({tuple(r) for r in rows[L]}) == L for L in lengths
    )
    assert posenc.analysis.is_length_consistent(encode, tuple(lengths), atol=0.0) == all(
        rows[a][p] == rows[b][p] for a in lengths for b in lengths if a < b for p in range(a)
    )
    k = data.draw(st.integers(1, n))

    def shift_ok(L):
        if k >= L:
            return True
        dist = [math.dist(rows[L][p + k], rows[L][p]) for p in range(L - k)]
        return max(dist) - min(dist) <= 1e-9 * max(max(dist), 1e-300)

    assert posenc.analysis.is_shift_consistent(encode, lengths, offsets=[k]) == all(
        shift_ok(L) for L in lengths
    )
    train = data.draw(st.integers(1, n))
    test = train + data.draw(st.integers(1, 4))
    assert posenc.analysis.is_defined_beyond(encode, train, test) == (test <= n)
    tol = data.draw(st.sampled_from([0.0, 0.01, 0.5]))
    if test <= n:
        seen = [[float(x) / (train if scale_by_length else 1) for x in T[p]] for p in range(train)]
        new = [[float(x) / (test if scale_by_length else 1) for x in T[p]] for p in range(train, test)]
        lo = [min(r[j] for r in seen) for j in range(d)]
        hi = [max(r[j] for r in seen) for j in range(d)]
        want = all(
            lo[j] - tol * (hi[j] - lo[j]) <= r[j] <= hi[j] + tol * (hi[j] - lo[j])
            for r in new
            for j in range(d)
        )
    else:
        want = False
    assert posenc.analysis.stays_in_training_range(encode, train, test, tol=tol) == want


def test_stays_in_training_range_with_a_range_wider_than_float64():
    table = np.array([[-1.5e308], [1.5e308], [1.7e308], [-1.7e308]])
    assert posenc.analysis.stays_in_training_range(
        lambda L: table[:L], 2, 4, tol=0.1
    )  # margin overflows to inf
    assert not posenc.analysis.stays_in_training_range(lambda L: table[:L], 2, 4, tol=0.0)


# ---------------------------------------------------------------------------------------
# (a) probe.py
# ---------------------------------------------------------------------------------------


@given(
    n_seq=st.integers(1, 4), length=st.integers(1, 6), vocab=st.integers(1, 2**53), seed=st.integers(0, 2**70)
)
def test_copy_task_is_the_documented_generator(n_seq, length, vocab, seed):
    got = posenc.analysis.copy_task(n_seq, length, vocab, seed=seed)
    want = np.random.default_rng(seed).integers(0, vocab, size=(n_seq, length), dtype=np.int64)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64 and 0 <= got.min() and got.max() < vocab


@given(
    tokens=st.lists(st.lists(st.integers(0, 2**53), min_size=3, max_size=3), min_size=1, max_size=3),
    offset=st.integers(0, 10**30),
)
def test_copy_targets_by_hand(tokens, offset):
    got = posenc.analysis.copy_targets(tokens, offset)
    for b, row in enumerate(tokens):
        for i in range(3):
            assert got[b, i] == (row[i - offset] if i >= offset else -1)


def _rotate(vec, angle_scale, pos):
    out = list(vec)
    for i in range(len(vec) // 2):
        th = pos * angle_scale[i]
        a, b = vec[2 * i], vec[2 * i + 1]
        out[2 * i] = a * math.cos(th) - b * math.sin(th)
        out[2 * i + 1] = a * math.sin(th) + b * math.cos(th)
    return out


@settings(max_examples=20)
@given(
    method=st.sampled_from(["sinusoidal", "learned", "rope", "alibi"]),
    seed=st.integers(0, 1000),
    slope=st.floats(-2, 2),
    L=st.integers(1, 5),
    vocab=st.integers(1, 4),
    n=st.integers(1, 3),
)
def test_probe_scores_weights_predictions_by_hand(method, seed, slope, L, vocab, n):
    d = 4
    probe = AttentionProbe(method, max_len=5, d=d, vocab=vocab, seed=seed, slope=slope)
    rng = np.random.default_rng(seed)
    probe.params["C"] = rng.normal(size=(vocab, vocab))
    if method == "sinusoidal":
        probe.params["A"] = rng.normal(size=(d, d))
    P = probe.position_scores(L)
    om = [10000.0 ** (-2 * i / d) for i in range(d // 2)]
    want_P = np.zeros((L, L))
    for i in range(L):
        for j in range(L):
            if method == "alibi":
                want = -slope * (i - j)
            elif method == "learned":
                want = math.fsum(probe.params["U"][i, t] * probe.params["V"][j, t] for t in range(d))
            elif method == "rope":
                qa, kb = _rotate(probe.params["a"], om, i), _rotate(probe.params["b"], om, j)
                want = math.fsum(x * y for x, y in zip(qa, kb, strict=True))
            else:
                pi, pj = reference_table([i], d)[0], reference_table([j], d)[0]
                A = probe.params["A"]
                want = math.fsum(pi[a] * A[a, b] * pj[b] for a in range(d) for b in range(d))
            assert P[i, j] == pytest.approx(want, rel=1e-12, abs=1e-12)
            want_P[i, j] = want
    tokens = rng.integers(0, vocab, size=(n, L))
    w = probe.weights(tokens.tolist())
    pred = probe.predict(tokens)
    for b in range(n):
        for i in range(L):
            row = [
                probe.params["C"][tokens[b, i], tokens[b, j]] + want_P[i, j] if j <= i else -math.inf
                for j in range(L)
            ]
            want_w = hand_softmax(row)
            np.testing.assert_allclose(w[b, i], want_w, rtol=1e-12, atol=1e-300)
            mass = [math.fsum(want_w[j] for j in range(L) if tokens[b, j] == v) for v in range(vocab)]
            best = max(mass)
            assert mass[pred[b, i]] >= best * (1 - 1e-12)


@settings(max_examples=15)
@given(seed=st.integers(0, 1000), train_len=st.integers(2, 5), vocab=st.integers(2, 5), slope=st.floats(0, 3))
def test_fit_probe_first_loss_and_probe_accuracy_by_hand(seed, train_len, vocab, slope):
    offset = 1
    probe, losses = posenc.analysis.fit_probe(
        "alibi",
        train_len=train_len,
        offset=offset,
        steps=1,
        lr=0.05,
        batch=3,
        d=4,
        vocab=vocab,
        seed=seed,
        slope=slope,
    )
    # step 1 starts from C = 0: the loss is that of the fixed ALiBi weights, on the batch the
    # documented generator draws (numpy.random.default_rng(seed + 1))
    tokens = np.random.default_rng(seed + 1).integers(0, vocab, size=(3, train_len))
    terms = []
    for b in range(3):
        for i in range(offset, train_len):
            w = hand_softmax([-slope * (i - j) for j in range(i + 1)])
            o = math.fsum(w[j] for j in range(i + 1) if tokens[b, j] == tokens[b, i - offset])
            terms.append(-math.log(o))
    assert losses.shape == (1,)
    assert losses[0] == pytest.approx(math.fsum(terms) / len(terms), rel=1e-12)
    # accuracy of the trained probe, predictions written out from its parameters
    length, n_seq, acc_seed = train_len + 2, 3, seed + 7
    acc = posenc.analysis.probe_accuracy(probe, length, offset, n_seq=n_seq, seed=acc_seed)
    toks = np.random.default_rng(acc_seed).integers(0, vocab, size=(n_seq, length))
    C = probe.params["C"]
    hits = total = 0
    for b in range(n_seq):
        for i in range(offset, length):
            w = hand_softmax([C[toks[b, i], toks[b, j]] - slope * (i - j) for j in range(i + 1)])
            mass = [math.fsum(w[j] for j in range(i + 1) if toks[b, j] == v) for v in range(vocab)]
            top = max(mass)
            assume(top - sorted(mass)[-2] > 1e-9)  # a near tie would make the argmax arbitrary
            hits += mass.index(top) == toks[b, i - offset]
            total += 1
    assert acc == hits / total


# ---------------------------------------------------------------------------------------
# (a) decay.py
# ---------------------------------------------------------------------------------------

offsets_all = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.floats(1e-300, 1.5e308).map(lambda x: x * 1.0),
    st.sampled_from([2.0**53, 2.0**53 + 2, 1e300, -1.5e308, 5e-324, 0.5, 1.0]),
)
bases = st.sampled_from([10000.0, 500000.0, 2.0, 1e300])
widths = st.sampled_from([2, 4, 16, 64])


def _mp_omegas_float(d, base):
    # the correctly rounded float64 frequencies, as exact mpmath numbers
    with mpmath.workprec(MP_PREC):
        return [
            mpmath.mpf(float(mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / d))) for i in range(d // 2)
        ]


def _mp_J(k, base):
    with mpmath.workprec(MP_PREC):
        a = abs(_mp(k))
        if a == 0:
            return mpmath.mpf(1)
        return (mpmath.ci(a) - mpmath.ci(a / _mp(base))) / mpmath.log(_mp(base))


@given(x=st.one_of(st.floats(1e-300, 1.5e308), st.sampled_from([5e-324, 4.0, 4.000000000000001, 2.0**53])))
def test_cosine_integral_against_mpmath(x):
    with mpmath.workprec(MP_PREC):
        want = float(mpmath.ci(_mp(x)))
    assert posenc.analysis.cosine_integral(x) == pytest.approx(want, rel=0, abs=2e-15 * max(1.0, abs(want)))


@settings(max_examples=40)
@given(k=offsets_all, base=bases, d=widths)
def test_oscillatory_integral_and_integral_approximation(k, base, d):
    want = float(_mp_J(k, base))
    tol = 4e-15 / math.log(base) + 2.0**-51
    assert posenc.analysis.oscillatory_integral(k, base) == pytest.approx(want, abs=tol)
    assert posenc.analysis.integral_approximation(k, d, base) == pytest.approx(
        d / 2 * want, abs=d / 2 * tol + 2 * EPS * d
    )


@settings(max_examples=40)
@given(ks=st.lists(offsets_all, min_size=1, max_size=3), base=bases, d=widths)
def test_dot_product_sum_is_exact_for_every_finite_offset(ks, base, d):
    got = posenc.analysis.dot_product_sum(np.array(ks), d, base)
    om = _mp_omegas_float(d, base)
    with mpmath.workprec(MP_PREC):
        want = [float(mpmath.fsum(mpmath.cos(_mp(k) * w) for w in om)) for k in ks]
    np.testing.assert_allclose(got, want, rtol=0, atol=d * 2.0**-50)


@given(k=st.one_of(st.floats(-(2.0**53), 2.0**53), st.sampled_from([2**53, -(2**53), 3, 0])), base=bases)
def test_endpoint_correction_against_mpmath(k, base):
    with mpmath.workprec(MP_PREC):
        kk = _mp(k)
        want = float((mpmath.cos(kk) - mpmath.cos(kk / _mp(base))) / 2)
    assert posenc.analysis.endpoint_correction(k, base) == pytest.approx(want, abs=2.0**-50)


@given(d=st.integers(1, 2**15).map(lambda h: 2 * h), base=bases)
def test_width_functions_against_mpmath(d, base):
    with mpmath.workprec(MP_PREC):
        b, lam = _mp(base), mpmath.log(_mp(base))
        # <w^2> as the closed form of the geometric series (checked against the sum below)
        m2 = 2 * (1 - b**-2) / (d * (1 - b ** (mpmath.mpf(-4) / d)))
        onset = mpmath.pi * d / lam
    assert posenc.analysis.mean_square_frequency(d, base) == pytest.approx(float(m2), rel=8 * EPS)
    assert posenc.analysis.aliasing_onset(d, base) == pytest.approx(float(onset), rel=4 * EPS)
    assert posenc.analysis.noise_floor(d) == pytest.approx(math.sqrt(d) / 2, rel=2 * EPS)
    if d <= 64:
        om = _mp_omegas_float(d, base)
        with mpmath.workprec(MP_PREC):
            direct = mpmath.fsum(w**2 for w in om) / (d // 2)
        assert float(m2) == pytest.approx(float(direct), rel=1e-14)


@given(k=offsets_all, d=widths, base=bases)
def test_asymptotes_and_envelope_against_mpmath(k, d, base):
    with mpmath.workprec(MP_PREC):
        kk, b = abs(_mp(k)), _mp(base)
        lam = mpmath.log(b)
        m2 = 2 * (1 - b**-2) / (d * (1 - b ** (mpmath.mpf(-4) / d)))
        near = d * (1 - kk**2 * m2 / 2) / 2
        if abs(near) > FLOAT_MAX:
            with pytest.raises(ValueError, match=r"\bk\b"):
                posenc.analysis.near_asymptote(k, d, base)
        else:
            assert posenc.analysis.near_asymptote(k, d, base) == pytest.approx(
                float(near), rel=16 * EPS, abs=d * EPS
            )
        if kk == 0:
            return
        log_ = d * (lam - mpmath.log(kk) - mpmath.euler) / (2 * lam)
        assert posenc.analysis.log_asymptote(k, d, base) == pytest.approx(
            float(log_), abs=8 * EPS * d * (1 + float(abs(mpmath.log(kk))))
        )
        env = d * (b + 1) / (2 * kk * lam)
        if env > FLOAT_MAX:
            with pytest.raises(ValueError, match=r"\bk\b"):
                posenc.analysis.far_envelope(k, d, base)
        else:
            assert posenc.analysis.far_envelope(k, d, base) == pytest.approx(float(env), rel=8 * EPS)
        t = mpmath.log(lam * kk / (mpmath.pi * d)) / lam
        t = min(max(t, 0), 1)
        assert posenc.analysis.aliased_fraction(k, d, base) == pytest.approx(float(t), abs=8 * EPS)
        if kk <= 2**53:
            far = d * (mpmath.sin(kk) - b * mpmath.sin(kk / b)) / (2 * kk * lam)
            if env <= FLOAT_MAX:
                assert posenc.analysis.far_asymptote(k, d, base) == pytest.approx(
                    float(far), abs=16 * EPS * float(env)
                )


# ---------------------------------------------------------------------------------------
# (b) bad input: a clear TypeError/ValueError naming the argument, within one second
# ---------------------------------------------------------------------------------------


def _refuses(call, exc, name):
    start = time.perf_counter()
    with pytest.raises(exc) as info:
        call()
    elapsed = time.perf_counter() - start
    message = str(info.value)
    assert re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message), (name, message)
    assert elapsed < 1.0, (name, elapsed)  # refused at once, not after a long computation


Q, K, V = np.zeros((2, 3)), np.ones((4, 3)), np.ones((4, 2))
X3, W3 = np.ones((4, 3)), np.eye(3)


def _fresh_pe():
    return posenc.LearnedPositionalEncoding(4, 3)


def _backward(grad):
    pe = _fresh_pe()
    pe.forward(np.zeros((1, 2, 3)))
    return pe.backward(grad)


def _probe(**kw):
    return AttentionProbe(kw.pop("method", "alibi"), vocab=4, **kw)


def _quadratic(X):
    return float(np.sum(np.asarray(X) ** 2))


def _fit_readout(**kw):
    args = {"train_len": 2, "steps": 1}
    args.update(kw)
    target = args.pop("target", [0.0, 1.0, 2.0, 3.0])
    return posenc.analysis.fit_position_readout(_fresh_pe(), target, **args)


def _fit_probe(**kw):
    args = {"train_len": 3, "steps": 1, "batch": 2, "d": 4, "vocab": 4}
    args.update(kw)
    return posenc.analysis.fit_probe(args.pop("method", "alibi"), **args)


def _encode_returning(table):
    return lambda length: table


# Real-valued array arguments: (id, argument name, a valid shape, call, wrong shapes, -inf allowed).
ARRAY_SITES = [
    ("softmax", "scores", (2, 3), lambda a: posenc.softmax(a), [()], True),
    ("attention.q", "q", (2, 3), lambda a: posenc.attention(a, K, V), [(3,), (2, 4)], False),
    ("attention.k", "k", (4, 3), lambda a: posenc.attention(Q, a, V), [(3,), (4, 2)], False),
    ("attention.v", "v", (4, 2), lambda a: posenc.attention(Q, K, a), [(4,), (5, 2)], False),
    ("attention.bias", "bias", (2, 4), lambda a: posenc.attention(Q, K, V, bias=a), [(3, 3)], True),
    ("self_attention.x", "x", (4, 3), lambda a: posenc.self_attention(a, W3, W3, W3), [(3,), (4, 2)], False),
    (
        "self_attention.w_q",
        "w_q",
        (3, 3),
        lambda a: posenc.self_attention(X3, a, W3, W3),
        [(3,), (2, 3)],
        False,
    ),
    ("self_attention.w_k", "w_k", (3, 3), lambda a: posenc.self_attention(X3, W3, a, W3), [(2, 3)], False),
    ("self_attention.w_v", "w_v", (3, 3), lambda a: posenc.self_attention(X3, W3, W3, a), [(3, 3, 1)], False),
    (
        "taylor_terms.x",
        "x",
        (2, 2),
        lambda a: posenc.taylor_terms(_quadratic, a, np.ones((2, 2))),
        [(4,)],
        False,
    ),
    (
        "taylor_terms.p",
        "p",
        (2, 2),
        lambda a: posenc.taylor_terms(_quadratic, np.ones((2, 2)), a),
        [(2, 3)],
        False,
    ),
    ("forward", "X", (1, 2, 3), lambda a: _fresh_pe().forward(a), [(2, 3), (1, 2, 4), (1, 5, 3)], False),
    ("backward", "grad_output", (1, 2, 3), _backward, [(2, 3), (1, 3, 3)], False),
    (
        "PositionReadout",
        "weight",
        (3,),
        lambda a: posenc.analysis.PositionReadout(a, 0.0, []),
        [(3, 1)],
        False,
    ),
    (
        "predict",
        "Y",
        (2, 3),
        lambda a: posenc.analysis.PositionReadout(np.ones(3), 0.0, []).predict(a),
        [(2, 2), ()],
        False,
    ),
    ("fit_position_readout", "target", (4,), lambda a: _fit_readout(target=a), [(4, 1), (1,)], False),
    (
        "neighbour_distances",
        "pe",
        (3, 2),
        lambda a: posenc.analysis.neighbour_distances(a),
        [(3,), (1, 2)],
        False,
    ),
    (
        "min_pairwise_distance",
        "pe",
        (3, 2),
        lambda a: posenc.analysis.min_pairwise_distance(a),
        [(3,), (1, 2)],
        False,
    ),
    (
        "is_bounded",
        "encode",
        (3, 2),
        lambda a: posenc.analysis.is_bounded(_encode_returning(a), [3]),
        [(3,), (2, 2)],
        False,
    ),
    ("cosine_integral", "x", (3,), lambda a: posenc.analysis.cosine_integral(a), [], False),
    ("oscillatory_integral", "k", (3,), lambda a: posenc.analysis.oscillatory_integral(a), [], False),
    (
        "integral_approximation",
        "k",
        (2, 2),
        lambda a: posenc.analysis.integral_approximation(a, 4),
        [],
        False,
    ),
    ("dot_product_sum", "k", (3,), lambda a: posenc.analysis.dot_product_sum(a, 4), [], False),
    ("endpoint_correction", "k", (3,), lambda a: posenc.analysis.endpoint_correction(a), [], False),
    ("near_asymptote", "k", (3,), lambda a: posenc.analysis.near_asymptote(a, 4), [], False),
    ("log_asymptote", "k", (3,), lambda a: posenc.analysis.log_asymptote(a, 4), [], False),
    ("far_asymptote", "k", (3,), lambda a: posenc.analysis.far_asymptote(a, 4), [], False),
    ("far_envelope", "k", (3,), lambda a: posenc.analysis.far_envelope(a, 4), [], False),
    ("aliased_fraction", "k", (3,), lambda a: posenc.analysis.aliased_fraction(a, 4), [], False),
]
ARRAY_IDS = [s[0] for s in ARRAY_SITES]


@settings(max_examples=8)
@pytest.mark.parametrize(
    ("site", "name", "shape", "call", "wrong_shapes", "neg_inf_ok"), ARRAY_SITES, ids=ARRAY_IDS
)
@given(data=st.data())
def test_arrays_refuse_complex_nonfinite_empty_and_wrong_shapes(
    site, name, shape, call, wrong_shapes, neg_inf_ok, data
):
    n = math.prod(shape)
    good = np.array(data.draw(st.lists(st.floats(0.5, 2), min_size=n, max_size=n))).reshape(shape)
    call(good.tolist())  # valid, as a nested list
    # complex: the imaginary part would be dropped
    imag = data.draw(st.floats(0.1, 5))
    _refuses(lambda: call(good + 1j * imag), TypeError, name)
    _refuses(lambda: call(good.astype(complex)), TypeError, name)  # even with a zero imaginary part
    # bool and string arrays are not numbers
    _refuses(lambda: call(good > 1), TypeError, name)
    _refuses(lambda: call(good.astype(str)), TypeError, name)
    # NaN or infinity somewhere
    bad = good.copy()
    where = data.draw(st.integers(0, n - 1)) if n else 0
    value = data.draw(st.sampled_from([math.nan, math.inf] + ([] if neg_inf_ok else [-math.inf])))
    bad.flat[where] = value
    _refuses(lambda: call(bad), ValueError, name)
    # empty
    empty_shape = shape[:-1] + (0,) if shape else (0,)
    _refuses(lambda: call(np.zeros(empty_shape)), ValueError, name)
    _refuses(lambda: call([]), ValueError, name)
    # ragged nested lists
    if len(shape) >= 2:
        _refuses(lambda: call([[1.0, 2.0], [3.0]]), (TypeError, ValueError), name)
    for wrong in wrong_shapes:
        _refuses(lambda wrong=wrong: call(np.ones(wrong)), ValueError, name)


TOKEN_SITES = [
    ("copy_targets", lambda t: posenc.analysis.copy_targets(t, 1)),
    ("weights", lambda t: _probe().weights(t)),
    ("predict", lambda t: _probe().predict(t)),
    ("loss_and_grads", lambda t: _probe().loss_and_grads(t, 1)),
]


@settings(max_examples=10)
@pytest.mark.parametrize(("site", "call"), TOKEN_SITES, ids=[s[0] for s in TOKEN_SITES])
@given(tokens=st.lists(st.lists(st.integers(0, 3), min_size=3, max_size=3), min_size=1, max_size=3))
def test_tokens_must_be_a_nonempty_2d_integer_array(site, call, tokens):
    arr = np.array(tokens)
    call(tokens)  # valid
    _refuses(lambda: call(arr + 0j), TypeError, "tokens")
    _refuses(lambda: call(arr.astype(float)), TypeError, "tokens")
    _refuses(lambda: call(arr > 1), TypeError, "tokens")
    _refuses(lambda: call(-1 - arr), ValueError, "tokens")
    _refuses(lambda: call(np.zeros((1, 0), dtype=np.int64)), ValueError, "tokens")
    _refuses(lambda: call(arr[0]), ValueError, "tokens")
    _refuses(lambda: call(arr[None]), ValueError, "tokens")
    _refuses(lambda: call(np.array([[2**62]], dtype=np.uint64)), ValueError, "tokens")
    if site != "copy_targets":
        _refuses(lambda: call(arr + 4), ValueError, "vocab")


# Integer arguments (counts, lengths, widths, offsets): (id, name, call, valid value,
# too large (None: no upper limit), minimum, must be even).
COUNT_SITES = [
    ("softmax.axis", "axis", lambda v: posenc.softmax(np.ones((2, 2)), axis=v), -1, 2, -2, False),
    ("causal_mask.q_len", "q_len", lambda v: posenc.causal_mask(v, 4), 2, 10**30, 1, False),
    ("causal_mask.k_len", "k_len", lambda v: posenc.causal_mask(1, v), 2, 10**30, 1, False),
    ("integer_encoding", "length", lambda v: posenc.analysis.integer_encoding(v), 3, 2**40, 1, False),
    ("normalized_encoding", "length", lambda v: posenc.analysis.normalized_encoding(v), 3, 2**40, 1, False),
    ("binary_encoding.length", "length", lambda v: posenc.analysis.binary_encoding(v, 8), 3, 2**40, 1, False),
    ("binary_encoding.n_bits", "n_bits", lambda v: posenc.analysis.binary_encoding(2, v), 3, 10**9, 1, False),
    ("sine_encoding", "length", lambda v: posenc.analysis.sine_encoding(v), 3, 2**40, 1, False),
    ("Learned.max_len", "max_len", lambda v: posenc.LearnedPositionalEncoding(v, 2), 3, 2**40, 1, False),
    ("Learned.d_model", "d_model", lambda v: posenc.LearnedPositionalEncoding(2, v), 3, 2**40, 1, False),
    (
        "Learned.sinusoidal",
        "d_model",
        lambda v: posenc.LearnedPositionalEncoding(2, v, init="sinusoidal"),
        4,
        2**20,
        2,
        True,
    ),
    ("fit_position_readout.train_len", "train_len", lambda v: _fit_readout(train_len=v), 2, 10**30, 1, False),
    ("fit_position_readout.steps", "steps", lambda v: _fit_readout(steps=v), 1, 10**7, 1, False),
    (
        "fit_position_readout.batch_size",
        "batch_size",
        lambda v: _fit_readout(batch_size=v),
        2,
        2**40,
        1,
        False,
    ),
    ("copy_task.n_seq", "n_seq", lambda v: posenc.analysis.copy_task(v, 3, 4), 2, 2**40, 1, False),
    ("copy_task.length", "length", lambda v: posenc.analysis.copy_task(2, v, 4), 2, 2**40, 1, False),
    ("copy_task.vocab", "vocab", lambda v: posenc.analysis.copy_task(2, 3, v), 2, 2**60, 1, False),
    ("copy_targets.offset", "offset", lambda v: posenc.analysis.copy_targets([[1, 2]], v), 1, None, 0, False),
    ("AttentionProbe.max_len", "max_len", lambda v: _probe(max_len=v), 4, 2**40, 1, False),
    ("AttentionProbe.d", "d", lambda v: _probe(d=v), 4, 2**20, 2, True),
    ("AttentionProbe.vocab", "vocab", lambda v: AttentionProbe("alibi", vocab=v), 4, 2**15, 1, False),
    (
        "AttentionProbe.num_buckets",
        "num_buckets",
        lambda v: _probe(method="t5", num_buckets=v),
        32,
        2**20,
        1,
        False,
    ),
    (
        "AttentionProbe.max_distance",
        "max_distance",
        lambda v: _probe(method="t5", max_distance=v),
        128,
        2**40,
        1,
        False,
    ),
    ("position_scores", "length", lambda v: _probe().position_scores(v), 3, 2**15, 1, False),
    ("loss_and_grads.offset", "offset", lambda v: _probe().loss_and_grads([[1, 2, 3]], v), 1, 3, 0, False),
    ("fit_probe.train_len", "train_len", lambda v: _fit_probe(train_len=v), 3, 2**40, 2, False),
    ("fit_probe.offset", "offset", lambda v: _fit_probe(offset=v), 1, 3, 0, False),
    ("fit_probe.steps", "steps", lambda v: _fit_probe(steps=v), 1, 10**7, 1, False),
    ("fit_probe.batch", "batch", lambda v: _fit_probe(batch=v), 2, 2**40, 1, False),
    ("fit_probe.d", "d", lambda v: _fit_probe(d=v), 4, 2**20, 2, True),
    ("fit_probe.vocab", "vocab", lambda v: _fit_probe(vocab=v), 4, 2**15, 1, False),
    (
        "probe_accuracy.length",
        "length",
        lambda v: posenc.analysis.probe_accuracy(_probe(), v, 1, n_seq=2),
        3,
        2**40,
        2,
        False,
    ),
    (
        "probe_accuracy.offset",
        "offset",
        lambda v: posenc.analysis.probe_accuracy(_probe(), 3, v, n_seq=2),
        1,
        3,
        0,
        False,
    ),
    (
        "probe_accuracy.n_seq",
        "n_seq",
        lambda v: posenc.analysis.probe_accuracy(_probe(), 3, 1, n_seq=v),
        2,
        2**40,
        1,
        False,
    ),
    (
        "is_defined_beyond.train",
        "train_length",
        lambda v: posenc.analysis.is_defined_beyond(posenc.analysis.integer_encoding, v, 2**20),
        3,
        2**40,
        1,
        False,
    ),
    (
        "is_defined_beyond.test",
        "test_length",
        lambda v: posenc.analysis.is_defined_beyond(posenc.analysis.integer_encoding, 1, v),
        3,
        2**40,
        2,
        False,
    ),
    (
        "stays_in_training_range",
        "test_length",
        lambda v: posenc.analysis.stays_in_training_range(posenc.analysis.integer_encoding, 1, v),
        3,
        2**40,
        2,
        False,
    ),
    (
        "is_bounded.lengths",
        "lengths",
        lambda v: posenc.analysis.is_bounded(posenc.analysis.integer_encoding, [v]),
        3,
        2**40,
        1,
        False,
    ),
    (
        "is_shift_consistent.offsets",
        "offsets",
        lambda v: posenc.analysis.is_shift_consistent(posenc.analysis.integer_encoding, [3], offsets=[v]),
        1,
        2**40,
        1,
        False,
    ),
    (
        "dot_product_sum.d_model",
        "d_model",
        lambda v: posenc.analysis.dot_product_sum(1.0, v),
        4,
        2**20,
        2,
        True,
    ),
    (
        "integral_approximation.d_model",
        "d_model",
        lambda v: posenc.analysis.integral_approximation(1.0, v),
        4,
        2**20,
        2,
        True,
    ),
    (
        "mean_square_frequency",
        "d_model",
        lambda v: posenc.analysis.mean_square_frequency(v),
        4,
        10**400,
        2,
        True,
    ),
    (
        "near_asymptote.d_model",
        "d_model",
        lambda v: posenc.analysis.near_asymptote(1.0, v),
        4,
        10**400,
        2,
        True,
    ),
    (
        "log_asymptote.d_model",
        "d_model",
        lambda v: posenc.analysis.log_asymptote(2.0, v),
        4,
        10**400,
        2,
        True,
    ),
    (
        "far_asymptote.d_model",
        "d_model",
        lambda v: posenc.analysis.far_asymptote(2.0, v),
        4,
        10**400,
        2,
        True,
    ),
    ("far_envelope.d_model", "d_model", lambda v: posenc.analysis.far_envelope(2.0, v), 4, 10**400, 2, True),
    ("aliasing_onset", "d_model", lambda v: posenc.analysis.aliasing_onset(v), 4, 10**400, 2, True),
    (
        "aliased_fraction.d_model",
        "d_model",
        lambda v: posenc.analysis.aliased_fraction(2.0, v),
        4,
        10**400,
        2,
        True,
    ),
    ("noise_floor", "d_model", lambda v: posenc.analysis.noise_floor(v), 4, 10**400, 2, True),
]


@settings(max_examples=6)
@pytest.mark.parametrize(
    ("site", "name", "call", "valid", "too_large", "minimum", "even"),
    COUNT_SITES,
    ids=[s[0] for s in COUNT_SITES],
)
@given(
    bad_type=st.sampled_from([True, False, np.True_, 2.0, np.float64(3.0), "3", None, 2 + 0j, [2]]),
    below=st.integers(-(10**6), -1),
)
def test_counts_refuse_bools_floats_out_of_range_and_huge(
    site, name, call, valid, too_large, minimum, even, bad_type, below
):
    call(valid)
    call(np.int64(valid))  # numpy integers are integers
    assume(not (site == "causal_mask.k_len" and bad_type is None))  # None: the default, k_len = q_len
    _refuses(lambda: call(bad_type), TypeError, name)
    _refuses(lambda: call(minimum + below if minimum > -2 else minimum - 1 + below), ValueError, name)
    if too_large is not None:
        _refuses(lambda: call(too_large), ValueError, name)
    if even:
        _refuses(lambda: call(valid + 1), ValueError, name)


FLAG_SITES = [
    ("attention.causal", "causal", lambda v: posenc.attention(Q, K, V, causal=v)),
    ("self_attention.causal", "causal", lambda v: posenc.self_attention(X3, W3, W3, W3, causal=v)),
    ("fit_position_readout.train_embedding", "train_embedding", lambda v: _fit_readout(train_embedding=v)),
]


@settings(max_examples=8)
@pytest.mark.parametrize(("site", "name", "call"), FLAG_SITES, ids=[s[0] for s in FLAG_SITES])
@given(bad=st.sampled_from(["False", "True", "", 0, 1, None, 1.0, np.array([True]), np.int64(1)]))
def test_flags_must_be_real_bools(site, name, call, bad):
    call(False)
    call(np.True_)
    _refuses(lambda: call(bad), TypeError, name)


SEED_SITES = [
    ("LearnedPositionalEncoding", lambda s: posenc.LearnedPositionalEncoding(2, 2, seed=s)),
    ("fit_position_readout", lambda s: _fit_readout(seed=s)),
    ("AttentionProbe", lambda s: _probe(method="learned", seed=s)),
    ("fit_probe", lambda s: _fit_probe(seed=s)),
    ("copy_task", lambda s: posenc.analysis.copy_task(2, 2, 3, seed=s)),
    ("probe_accuracy", lambda s: posenc.analysis.probe_accuracy(_probe(), 3, 1, n_seq=2, seed=s)),
]


@settings(max_examples=8)
@pytest.mark.parametrize(("site", "call"), SEED_SITES, ids=[s[0] for s in SEED_SITES])
@given(
    negative=st.integers(-(2**70), -1), bad_type=st.sampled_from([1.5, 0.0, True, np.False_, "0", None, [1]])
)
def test_seeds_are_non_negative_integers(site, call, negative, bad_type):
    call(2**70)
    call(np.uint64(3))
    _refuses(lambda: call(negative), ValueError, "seed")
    _refuses(lambda: call(bad_type), TypeError, "seed")


# Real scalar arguments: (id, name, call, valid value, values refused with ValueError).
REAL_SITES = [
    ("attention.scale", "scale", lambda v: posenc.attention(Q, K, V, scale=v), 0.5, [math.nan, math.inf]),
    (
        "self_attention.scale",
        "scale",
        lambda v: posenc.self_attention(X3, W3, W3, W3, scale=v),
        2.0,
        [math.nan],
    ),
    (
        "taylor_terms.step",
        "step",
        lambda v: posenc.taylor_terms(_quadratic, Q, Q + 1, step=v),
        1e-3,
        [0.0, -1.0, math.nan, 1e300, 1e-300],
    ),
    (
        "Learned.std",
        "std",
        lambda v: posenc.LearnedPositionalEncoding(2, 2, std=v),
        0.5,
        [0.0, -1.0, math.inf, 1e301],
    ),
    (
        "PositionReadout.bias",
        "bias",
        lambda v: posenc.analysis.PositionReadout([1.0], v, []),
        0.5,
        [math.nan, -math.inf],
    ),
    ("fit_position_readout.lr", "lr", lambda v: _fit_readout(lr=v), 0.1, [0.0, -1.0, math.nan, math.inf]),
    (
        "fit_position_readout.content_std",
        "content_std",
        lambda v: _fit_readout(content_std=v),
        0.1,
        [-0.5, math.inf],
    ),
    (
        "sine_encoding.frequency",
        "frequency",
        lambda v: posenc.analysis.sine_encoding(3, frequency=v),
        2.0,
        [0.0, math.nan, 1e308, -1.7e308],
    ),
    ("AttentionProbe.slope", "slope", lambda v: _probe(slope=v), 0.5, [math.nan, math.inf]),
    ("fit_probe.lr", "lr", lambda v: _fit_probe(lr=v, steps=3), 0.1, [0.0, -2.0, math.inf, 1.7e308]),
    ("fit_probe.slope", "slope", lambda v: _fit_probe(slope=v), 0.1, [math.nan, 1e308]),
    (
        "is_bounded.bound",
        "bound",
        lambda v: posenc.analysis.is_bounded(posenc.analysis.integer_encoding, [2], bound=v),
        1.0,
        [-1.0, math.nan],
    ),
    (
        "is_length_consistent.atol",
        "atol",
        lambda v: posenc.analysis.is_length_consistent(posenc.analysis.integer_encoding, [2], atol=v),
        0.0,
        [-1e-3, math.inf],
    ),
    (
        "is_shift_consistent.rtol",
        "rtol",
        lambda v: posenc.analysis.is_shift_consistent(posenc.analysis.integer_encoding, [2], rtol=v),
        0.0,
        [-1.0, math.nan],
    ),
    (
        "stays_in_training_range.tol",
        "tol",
        lambda v: posenc.analysis.stays_in_training_range(posenc.analysis.integer_encoding, 2, 3, tol=v),
        0.0,
        [-1.0, math.nan],
    ),
    (
        "decay.base",
        "base",
        lambda v: posenc.analysis.dot_product_sum(1.0, 4, v),
        2.0,
        [1.0, 0.5, math.inf, -3.0],
    ),
    (
        "endpoint_correction.k",
        "k",
        lambda v: posenc.analysis.endpoint_correction(v),
        2.0**53,
        [2.0**53 + 2, 1e300, 1.5e308],
    ),
    ("far_asymptote.k", "k", lambda v: posenc.analysis.far_asymptote(v, 4), -(2.0**53), [1e300, 0.0]),
    ("near_asymptote.k", "k", lambda v: posenc.analysis.near_asymptote(v, 4), 1e150, [1e200, -1.5e308]),
    ("far_envelope.k", "k", lambda v: posenc.analysis.far_envelope(v, 4), 1e-300, [5e-324, 0.0]),
    ("cosine_integral.x", "x", lambda v: posenc.analysis.cosine_integral(v), 5e-324, [0.0, -1.0]),
]


@settings(max_examples=6)
@pytest.mark.parametrize(
    ("site", "name", "call", "valid", "bad_values"), REAL_SITES, ids=[s[0] for s in REAL_SITES]
)
@given(bad_type=st.sampled_from([True, np.False_, "1.0", None, 1 + 1j, [1.0]]), data=st.data())
def test_reals_refuse_other_types_and_out_of_range_values(
    site, name, call, valid, bad_values, bad_type, data
):
    call(valid)
    assume(not (name == "scale" and bad_type is None))  # None: the default 1/sqrt(d)
    assume(not (name in ("k", "x") and isinstance(bad_type, list)))  # offsets may be arrays
    _refuses(lambda: call(bad_type), TypeError, name)
    bad = data.draw(st.sampled_from(bad_values))
    _refuses(lambda: call(bad), ValueError, name)


CHOICE_SITES = [
    ("normalized_encoding.mode", "mode", lambda v: posenc.analysis.normalized_encoding(3, mode=v)),
    ("Learned.init", "init", lambda v: posenc.LearnedPositionalEncoding(2, 2, init=v)),
    ("AttentionProbe.method", "method", lambda v: AttentionProbe(v)),
    ("fit_probe.method", "method", lambda v: _fit_probe(method=v)),
]


@settings(max_examples=6)
@pytest.mark.parametrize(("site", "name", "call"), CHOICE_SITES, ids=[s[0] for s in CHOICE_SITES])
@given(bad=st.sampled_from(["", "uniform", "Fraction", "ALIBI", 3, None, ("alibi",), np.array(["x", "y"])]))
def test_choices_refuse_unknown_values(site, name, call, bad):
    _refuses(lambda: call(bad), (TypeError, ValueError), name)


# Sizes that would hang or exhaust memory are refused at once, naming an argument.
HUGE = [
    ("binary_encoding n_bits", "n_bits", lambda: posenc.analysis.binary_encoding(4, 10**12)),
    ("binary_encoding table", "n_bits", lambda: posenc.analysis.binary_encoding(2**20, 2**9)),
    ("causal_mask", "q_len", lambda: posenc.causal_mask(2**15, 2**15)),
    ("permutation_matrix", "perm", lambda: posenc.permutation_matrix(np.arange(2**15)[::-1])),
    (
        "attention scores",
        "q",
        lambda: posenc.attention(np.zeros((2**15, 1)), np.zeros((2**15, 1)), np.zeros((2**15, 1))),
    ),
    ("Learned table", "max_len", lambda: posenc.LearnedPositionalEncoding(2**20, 2**10)),
    (
        "fit_position_readout work",
        "steps",
        lambda: posenc.analysis.fit_position_readout(
            posenc.LearnedPositionalEncoding(64, 64),
            np.zeros(64),
            train_len=64,
            steps=10**6,
            batch_size=2**10,
        ),
    ),
    ("copy_task", "n_seq", lambda: posenc.analysis.copy_task(2**20, 2**20, 5)),
    ("AttentionProbe vocab", "vocab", lambda: AttentionProbe("alibi", vocab=2**15)),
    ("AttentionProbe learned table", "max_len", lambda: AttentionProbe("learned", max_len=2**25, d=64)),
    ("position_scores", "length", lambda: _probe().position_scores(2**15)),
    ("weights", "n_seq", lambda: _probe().weights(np.zeros((2**12, 2**9), dtype=np.int64))),
    (
        "fit_probe work",
        "steps",
        lambda: posenc.analysis.fit_probe("alibi", train_len=512, steps=10**4, batch=64),
    ),
    ("probe_accuracy", "n_seq", lambda: posenc.analysis.probe_accuracy(_probe(), 2**10, 1, n_seq=2**10)),
    (
        "min_pairwise_distance",
        "pe",
        lambda: posenc.analysis.min_pairwise_distance(np.random.default_rng(0).random((2**17, 2))),
    ),
    (
        "lengths count",
        "lengths",
        lambda: posenc.analysis.is_bounded(posenc.analysis.integer_encoding, list(range(1, 2000))),
    ),
    ("dot_product_sum terms", "k", lambda: posenc.analysis.dot_product_sum(np.zeros(2**17), 2**16)),
    ("dot_product_sum width", "d_model", lambda: posenc.analysis.dot_product_sum(1.0, 2**40)),
]


@pytest.mark.parametrize(("site", "name", "call"), HUGE, ids=[h[0] for h in HUGE])
def test_huge_sizes_are_refused_at_once(site, name, call):
    _refuses(call, ValueError, name)


# Values whose result lies beyond float64: a ValueError naming the culprit, never inf or NaN.
OVERFLOW = [
    ("attention q k", "q", lambda: posenc.attention([[1e200]], [[1e200]], [[1.0]])),
    (
        "attention bias",
        "bias",
        lambda: posenc.attention([[1e300]], [[1e8]], [[1.0]], scale=1.0, bias=[[1.7e308]]),
    ),
    ("self_attention", "w_q", lambda: posenc.self_attention([[1e200]], [[1e200]], [[1.0]], [[1.0]])),
    ("taylor_terms", "p", lambda: posenc.taylor_terms(_quadratic, [[1.0]], [[1e200]])),
    (
        "predict",
        "Y",
        lambda: posenc.analysis.PositionReadout([1e308, 1e308], 0.0, []).predict([[1e308, 1e308]]),
    ),
    ("fit_position_readout", "lr", lambda: _fit_readout(target=[1e100, 1e100, 0.0, 0.0], lr=1e10, steps=5)),
    (
        "neighbour_distances",
        "pe",
        lambda: posenc.analysis.neighbour_distances([[1.5e308, 1.5e308], [-1.5e308, -1.5e308]]),
    ),
    ("min_pairwise_distance", "pe", lambda: posenc.analysis.min_pairwise_distance([[1.5e308], [-1.5e308]])),
    (
        "is_shift_consistent",
        "encode",
        lambda: posenc.analysis.is_shift_consistent(
            _encode_returning(np.array([[1.5e308, 1.5e308], [-1.5e308, -1.5e308]])), [2]
        ),
    ),
    ("probe weights", "slope", lambda: AttentionProbe("alibi", slope=-1e308).weights([[0, 1, 2]])),
]


@pytest.mark.parametrize(("site", "name", "call"), OVERFLOW, ids=[o[0] for o in OVERFLOW])
def test_results_beyond_float64_are_refused(site, name, call):
    _refuses(call, ValueError, name)


def test_learned_forward_accepts_max_len_and_refuses_longer():
    pe = posenc.LearnedPositionalEncoding(3, 2)
    pe.forward([[[1, 2]] * 3])
    _refuses(lambda: pe.forward(np.zeros((1, 4, 2))), ValueError, "max_len")
    _refuses(
        lambda: posenc.LearnedPositionalEncoding(3, 2).backward(np.zeros((1, 3, 2))), RuntimeError, "forward"
    )


def test_taylor_terms_refuses_bad_callables():
    _refuses(lambda: posenc.taylor_terms("f", Q, Q), TypeError, "f")
    _refuses(lambda: posenc.taylor_terms(lambda X: np.ones(2), Q, Q), TypeError, "f")
    _refuses(lambda: posenc.taylor_terms(lambda X: 1j, Q, Q), TypeError, "f")
    _refuses(lambda: posenc.taylor_terms(lambda X: math.nan, Q, Q), ValueError, "f")


def test_predicates_refuse_bad_encoders_and_length_containers():
    _refuses(lambda: posenc.analysis.is_unique(None, [2]), TypeError, "encode")
    _refuses(lambda: posenc.analysis.is_unique(lambda L: np.zeros((L + 1, 1)), [2]), ValueError, "encode")
    _refuses(lambda: posenc.analysis.is_unique(posenc.analysis.integer_encoding, 3), TypeError, "lengths")
    _refuses(lambda: posenc.analysis.is_unique(posenc.analysis.integer_encoding, "3"), TypeError, "lengths")
    _refuses(
        lambda: posenc.analysis.is_unique(posenc.analysis.integer_encoding, np.array([[2]])),
        ValueError,
        "lengths",
    )
    _refuses(
        lambda: posenc.analysis.is_unique(posenc.analysis.integer_encoding, [2, 2.0]), TypeError, "lengths"
    )
    _refuses(
        lambda: posenc.analysis.is_defined_beyond(posenc.analysis.integer_encoding, 3, 3),
        ValueError,
        "test_length",
    )
    _refuses(lambda: posenc.analysis.probe_accuracy("probe", 3, 1), TypeError, "probe")
    _refuses(lambda: posenc.analysis.fit_position_readout(object(), [1.0], train_len=1), TypeError, "pe")
    _refuses(lambda: _probe(method="t5", num_buckets=32, max_distance=10), ValueError, "max_distance")
