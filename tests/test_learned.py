"""Tests of posenc.LearnedPositionalEncoding: init, forward, backward, length limit.

Gradients are checked two independent ways: the batch sum written as an explicit loop,
and central finite differences of a scalar loss L(E) = sum(W * tanh(X + E[:L])).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import EPS, draw_array, reference_table, refuses_call
from hypothesis import given
from hypothesis import strategies as st

import posenc


def _loop_forward(X, E):
    B, L, d = X.shape
    out = np.empty_like(X, dtype=np.float64)
    for b in range(B):
        for p in range(L):
            for j in range(d):
                out[b, p, j] = X[b, p, j] + E[p, j]
    return out


def _loop_batch_sum(G, max_len):
    B, L, d = G.shape
    out = np.zeros((max_len, d))
    for p in range(L):
        for j in range(d):
            total = 0.0
            for b in range(B):
                total += G[b, p, j]
            out[p, j] = total
    return out


# ---------------------------------------------------------------------------------------
# construction
# ---------------------------------------------------------------------------------------


def test_shapes_and_num_parameters():
    pe = posenc.LearnedPositionalEncoding(12, 5)  # odd d_model is fine for a learned table
    assert pe.embedding.shape == (12, 5)
    assert pe.grad_embedding.shape == (12, 5)
    assert np.all(pe.grad_embedding == 0)
    assert pe.num_parameters == 60


def test_normal_init_is_the_documented_draw():
    # Documented: drawn from numpy.random.default_rng(seed) as N(0, std^2).
    pe = posenc.LearnedPositionalEncoding(7, 6, seed=42, std=0.5)
    expected = np.random.default_rng(42).normal(0.0, 0.5, size=(7, 6))
    np.testing.assert_array_equal(pe.embedding, expected)


def test_default_std_is_bert_scale():
    pe = posenc.LearnedPositionalEncoding(200, 64)
    # 12800 samples of N(0, 0.02^2): the sample std is within 5% of 0.02 (≈ 8 sigma).
    assert abs(pe.embedding.std() - 0.02) < 0.001
    assert abs(pe.embedding.mean()) < 0.001


def test_seed_reproducibility():
    a = posenc.LearnedPositionalEncoding(10, 8, seed=3)
    b = posenc.LearnedPositionalEncoding(10, 8, seed=3)
    c = posenc.LearnedPositionalEncoding(10, 8, seed=4)
    np.testing.assert_array_equal(a.embedding, b.embedding)
    assert not np.array_equal(a.embedding, c.embedding)


def test_sinusoidal_init_equals_sinusoidal_table():
    pe = posenc.LearnedPositionalEncoding(9, 8, init="sinusoidal")
    np.testing.assert_allclose(pe.embedding, reference_table(range(9), 8), rtol=0, atol=1e-15)


def test_constructor_errors():
    with pytest.raises(ValueError, match="d_model"):
        posenc.LearnedPositionalEncoding(4, 3, init="sinusoidal")
    with pytest.raises(ValueError, match="init"):
        posenc.LearnedPositionalEncoding(4, 4, init="uniform")
    for std in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="std"):
            posenc.LearnedPositionalEncoding(4, 4, std=std)
    with pytest.raises(ValueError, match="max_len"):
        posenc.LearnedPositionalEncoding(0, 4)
    with pytest.raises(TypeError, match="max_len"):
        posenc.LearnedPositionalEncoding(4.0, 4)
    with pytest.raises(ValueError, match="d_model"):
        posenc.LearnedPositionalEncoding(4, -2)
    with pytest.raises(TypeError, match="d_model"):
        posenc.LearnedPositionalEncoding(4, True)


# ---------------------------------------------------------------------------------------
# forward / backward
# ---------------------------------------------------------------------------------------


def test_forward_adds_first_rows():
    rng = np.random.default_rng(1)
    pe = posenc.LearnedPositionalEncoding(6, 3, seed=5)
    X = rng.normal(size=(4, 4, 3))
    np.testing.assert_array_equal(pe.forward(X), _loop_forward(X, pe.embedding))
    np.testing.assert_array_equal(pe(X), _loop_forward(X, pe.embedding))


def test_backward_is_batch_sum_and_rows_beyond_L_are_zero():
    rng = np.random.default_rng(2)
    pe = posenc.LearnedPositionalEncoding(8, 4)
    X = rng.normal(size=(3, 5, 4))
    pe.forward(X)
    G = rng.normal(size=X.shape)
    G_copy = G.copy()
    grad_x = pe.backward(G)
    np.testing.assert_allclose(pe.grad_embedding, _loop_batch_sum(G, 8), rtol=1e-15, atol=1e-15)
    assert np.all(pe.grad_embedding[5:] == 0)
    np.testing.assert_array_equal(grad_x, G)  # dY/dX is the identity
    grad_x[...] = 0  # the returned gradient is not an alias of the caller's array
    np.testing.assert_array_equal(G, G_copy)


def _loss(E, X, W):
    L = X.shape[1]
    return float(np.sum(W * np.tanh(X + E[:L])))


def _central_difference(f, A: np.ndarray, h: float) -> np.ndarray:
    """(f(A + h e_idx) - f(A - h e_idx)) / 2h for every entry idx of A."""
    grad = np.zeros_like(A)
    for idx in np.ndindex(A.shape):
        Ap, Am = A.copy(), A.copy()
        Ap[idx] += h
        Am[idx] -= h
        grad[idx] = (f(Ap) - f(Am)) / (2 * h)
    return grad


def test_gradient_matches_central_finite_differences():
    rng = np.random.default_rng(3)
    max_len, d, B, L = 5, 4, 3, 3
    pe = posenc.LearnedPositionalEncoding(max_len, d, seed=7, std=0.5)
    X = rng.normal(size=(B, L, d))
    W = rng.normal(size=(B, L, d))
    Y = pe.forward(X)
    grad_x = pe.backward(W * (1 - np.tanh(Y) ** 2))  # dL/dY for L = sum(W tanh(Y))

    h = 1e-6
    E = pe.embedding.copy()
    fd_E = _central_difference(lambda Ev: _loss(Ev, X, W), E, h)
    # Central differences have O(h^2) truncation and O(eps/h) rounding error: ~1e-9 here.
    np.testing.assert_allclose(pe.grad_embedding, fd_E, rtol=0, atol=1e-7)
    assert np.all(fd_E[L:] == 0)  # rows the loss never reads have zero gradient

    fd_X = _central_difference(lambda Xv: _loss(E, Xv, W), X, h)
    np.testing.assert_allclose(grad_x, fd_X, rtol=0, atol=1e-7)


def test_second_backward_recomputes_not_accumulates():
    rng = np.random.default_rng(4)
    pe = posenc.LearnedPositionalEncoding(6, 2)
    X = rng.normal(size=(2, 6, 2))
    pe.forward(X)
    G1, G2 = rng.normal(size=X.shape), rng.normal(size=X.shape)
    pe.backward(G1)
    pe.backward(G2)
    np.testing.assert_allclose(pe.grad_embedding, _loop_batch_sum(G2, 6), rtol=1e-15, atol=1e-15)
    # A shorter batch afterwards: rows beyond the new L go back to zero.
    pe.forward(X[:, :2])
    G3 = rng.normal(size=(2, 2, 2))
    pe.backward(G3)
    np.testing.assert_allclose(pe.grad_embedding, _loop_batch_sum(G3, 6), rtol=1e-15, atol=1e-15)
    assert np.all(pe.grad_embedding[2:] == 0)


@given(
    max_len=st.integers(1, 8),
    d=st.integers(1, 6),
    B=st.integers(1, 4),
    data=st.data(),
)
def test_backward_batch_sum_property(max_len, d, B, data):
    L = data.draw(st.integers(1, max_len))
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    pe = posenc.LearnedPositionalEncoding(max_len, d, seed=seed)
    X = rng.normal(size=(B, L, d))
    out = pe.forward(X)
    np.testing.assert_array_equal(out, _loop_forward(X, pe.embedding))
    G = rng.normal(size=(B, L, d))
    pe.backward(G)
    np.testing.assert_allclose(pe.grad_embedding, _loop_batch_sum(G, max_len), rtol=1e-14, atol=1e-14)
    assert pe.grad_embedding.shape == (max_len, d)


# ---------------------------------------------------------------------------------------
# length limit and misuse
# ---------------------------------------------------------------------------------------


def test_length_equal_to_max_len_allowed_longer_raises():
    pe = posenc.LearnedPositionalEncoding(4, 2)
    out = pe.forward(np.zeros((1, 4, 2)))
    np.testing.assert_array_equal(out[0], pe.embedding)
    with pytest.raises(ValueError, match="max_len"):
        pe.forward(np.zeros((1, 5, 2)))


def test_backward_before_forward_raises():
    pe = posenc.LearnedPositionalEncoding(4, 2)
    with pytest.raises(RuntimeError, match="forward"):
        pe.backward(np.zeros((1, 4, 2)))


def test_backward_wrong_shape_raises():
    pe = posenc.LearnedPositionalEncoding(4, 2)
    pe.forward(np.zeros((2, 3, 2)))
    with pytest.raises(ValueError, match="grad_output"):
        pe.backward(np.zeros((2, 4, 2)))
    with pytest.raises(ValueError, match="grad_output"):
        pe.backward(np.zeros((3, 2)))


def test_forward_wrong_shape_raises():
    pe = posenc.LearnedPositionalEncoding(4, 2)
    with pytest.raises(ValueError, match="X"):
        pe.forward(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="d_model"):
        pe.forward(np.zeros((1, 3, 3)))
    with pytest.raises(TypeError, match="X"):
        pe.forward(np.array([[["a", "b"]]]))


# ---------------------------------------------------------------------------------------
# PositionReadout / fit_position_readout
# ---------------------------------------------------------------------------------------


def test_position_readout_predict():
    r = posenc.analysis.PositionReadout(np.array([1.0, -2.0]), 0.5, np.array([1.0]))
    np.testing.assert_array_equal(r.predict(np.array([[3.0, 1.0], [0.0, 0.0]])), [1.5, 0.5])
    with pytest.raises(ValueError, match="Y"):
        r.predict(np.zeros((2, 3)))


def test_fit_position_readout_one_step_by_hand():
    # One step of the documented update, re-derived: same rng draw order (w, then X).
    seed, B, L, d, lr, std = 11, 3, 4, 2, 0.1, 0.2
    pe = posenc.LearnedPositionalEncoding(6, d, seed=1)
    E0 = pe.embedding.copy()
    target = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    out = posenc.analysis.fit_position_readout(
        pe, target, train_len=L, steps=1, lr=lr, batch_size=B, content_std=std, seed=seed
    )
    rng = np.random.default_rng(seed)
    w = rng.normal(0.0, 1.0 / np.sqrt(d), size=d)
    X = rng.normal(0.0, std, size=(B, L, d))
    n = B * L
    r = np.zeros((B, L))
    for b in range(B):
        for p in range(L):
            r[b, p] = sum((X[b, p, j] + E0[p, j]) * w[j] for j in range(d)) - target[p]
    np.testing.assert_allclose(out.losses, [0.5 * np.sum(r**2) / n], rtol=1e-13)
    expected_E = E0.copy()
    for p in range(L):
        expected_E[p] -= lr * sum(r[b, p] for b in range(B)) * w / n
    np.testing.assert_allclose(pe.embedding, expected_E, rtol=1e-13, atol=1e-16)
    np.testing.assert_array_equal(pe.embedding[L:], E0[L:])  # rows ≥ train_len untouched
    grad_w = sum(r[b, p] * (X[b, p] + E0[p]) for b in range(B) for p in range(L)) / n
    np.testing.assert_allclose(out.weight, w - lr * grad_w, rtol=1e-13)
    assert out.bias == pytest.approx(-lr * r.sum() / n, rel=1e-13)


def test_fit_position_readout_learns_and_freezing():
    target = np.arange(8, dtype=float) / 7
    pe = posenc.LearnedPositionalEncoding(8, 8, seed=0, std=0.5)
    fit = posenc.analysis.fit_position_readout(pe, target, train_len=6, steps=300, lr=0.2)
    assert fit.losses.shape == (300,)
    assert fit.losses[-1] < 0.05 * fit.losses[0]
    frozen = posenc.LearnedPositionalEncoding(8, 8, seed=0, std=0.5)
    E0 = frozen.embedding.copy()
    posenc.analysis.fit_position_readout(frozen, target, train_len=6, steps=5, train_embedding=False)
    np.testing.assert_array_equal(frozen.embedding, E0)


@pytest.mark.parametrize(
    "kwargs,exc,name",
    [
        ({"train_len": 9}, ValueError, "train_len"),
        ({"train_len": 0}, ValueError, "train_len"),
        ({"train_len": 4, "steps": 0}, ValueError, "steps"),
        ({"train_len": 4, "lr": 0.0}, ValueError, "lr"),
        ({"train_len": 4, "batch_size": 2.0}, TypeError, "batch_size"),
        ({"train_len": 4, "content_std": -1.0}, ValueError, "content_std"),
        ({"train_len": 4, "train_embedding": 1}, TypeError, "train_embedding"),
        ({"train_len": 4, "seed": 1.5}, TypeError, "seed"),
    ],
)
def test_fit_position_readout_errors(kwargs, exc, name):
    pe = posenc.LearnedPositionalEncoding(8, 2)
    with pytest.raises(exc, match=name):
        posenc.analysis.fit_position_readout(pe, np.zeros(8), **kwargs)


def test_fit_position_readout_bad_pe_and_target():
    pe = posenc.LearnedPositionalEncoding(8, 2)
    with pytest.raises(TypeError, match="pe"):
        posenc.analysis.fit_position_readout(
            posenc.SinusoidalPositionalEncoding(8, 2), np.zeros(8), train_len=4
        )
    with pytest.raises(ValueError, match="target"):
        posenc.analysis.fit_position_readout(pe, np.zeros(3), train_len=4)
    with pytest.raises(ValueError, match="target"):
        posenc.analysis.fit_position_readout(pe, np.array([0.0, np.nan, 0.0, 0.0]), train_len=4)


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
    X = draw_array(data.draw, (B, L, d), np.int8)
    out = pe.forward(X.tolist())
    assert out.dtype == np.float64
    for b in range(B):
        for p in range(L):
            for c in range(d):
                assert out[b, p, c] == float(X[b, p, c]) + pe.embedding[p, c]
    for _ in range(2):  # recomputed, not accumulated
        G = draw_array(data.draw, (B, L, d), np.float64)
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


def test_learned_forward_accepts_max_len_and_refuses_longer():
    pe = posenc.LearnedPositionalEncoding(3, 2)
    pe.forward([[[1, 2]] * 3])
    refuses_call(lambda: pe.forward(np.zeros((1, 4, 2))), ValueError, "max_len")
    refuses_call(
        lambda: posenc.LearnedPositionalEncoding(3, 2).backward(np.zeros((1, 3, 2))), RuntimeError, "forward"
    )


@pytest.mark.parametrize(("std", "error"), [(-1.0, ValueError), ("abc", TypeError), (math.nan, ValueError)])
def test_std_is_checked_with_either_initialisation(std, error):
    for init in ("normal", "sinusoidal"):
        with pytest.raises(error, match="std"):
            posenc.LearnedPositionalEncoding(4, 4, init=init, std=std)
