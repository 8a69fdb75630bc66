"""posenc.analysis.nope: the random attention stack and the linear probe, against plain numpy."""

from __future__ import annotations

import time

import numpy as np
import pytest

import posenc
import posenc.exercises
from posenc.analysis import (
    fit_linear_probe,
    random_attention_stack,
)


def own_stack(x, n_layers, causal, rope_layers, gain, seed):
    """The stack written out with loops over tokens (no posenc)."""
    rng = np.random.default_rng(seed)
    L, d = x.shape
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)
    states, h = [x], x
    for layer in range(n_layers):
        wq, wk, wv = gain * rng.standard_normal((3, d, d)) / np.sqrt(d)
        q, k, v = h @ wq, h @ wk, h @ wv
        if layer in rope_layers:
            for name, m in (("q", q), ("k", k)):
                z = (m[:, 0::2] + 1j * m[:, 1::2]) * np.exp(1j * np.outer(np.arange(L), theta))
                r = np.empty_like(m)
                r[:, 0::2], r[:, 1::2] = z.real, z.imag
                q, k = (r, k) if name == "q" else (q, r)
        out = np.zeros_like(h)
        for i in range(L):
            keys = range(i + 1) if causal else range(L)
            s = np.array([q[i] @ k[j] / np.sqrt(d) for j in keys])
            w = np.exp(s - s.max())
            w /= w.sum()
            out[i] = sum(wj * v[j] for wj, j in zip(w, keys, strict=True))
        h = h + out
        h = (h - h.mean(axis=1, keepdims=True)) / h.std(axis=1, keepdims=True)
        states.append(h)
    return np.stack(states)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("rope_layers", [(), (1,), (0, 2)])
def test_stack_matches_loops(causal, rope_layers):
    x = np.random.default_rng(3).standard_normal((7, 6))
    got = random_attention_stack(x, 3, causal=causal, rope_layers=rope_layers, gain=1.3, seed=4)
    np.testing.assert_allclose(got, own_stack(x, 3, causal, rope_layers, 1.3, 4), atol=1e-10)


def test_stack_batches_and_causality():
    x = np.random.default_rng(0).standard_normal((2, 9, 4))
    h = random_attention_stack(x, 2, seed=1)
    assert h.shape == (3, 2, 9, 4)
    np.testing.assert_allclose(h[:, 1], random_attention_stack(x[1], 2, seed=1), atol=1e-12)
    y = x.copy()
    y[:, 5:] += 1.0  # the future does not change the past in a causal stack
    np.testing.assert_allclose(random_attention_stack(y, 2, seed=1)[:, :, :5], h[:, :, :5], atol=1e-12)
    # without the mask and without RoPE, permuting the tokens permutes the states
    perm = np.random.default_rng(2).permutation(9)
    full = random_attention_stack(x, 2, causal=False, seed=1)
    np.testing.assert_allclose(random_attention_stack(x[:, perm], 2, causal=False, seed=1), full[:, :, perm])


def test_stack_errors():
    x = np.zeros((4, 3))
    with pytest.raises(ValueError, match="even"):
        random_attention_stack(x, 2, rope_layers=[0])
    with pytest.raises(ValueError, match="rope_layers"):
        random_attention_stack(np.zeros((4, 2)), 2, rope_layers=[2])
    with pytest.raises(ValueError, match="repeat"):
        random_attention_stack(np.zeros((4, 2)), 2, rope_layers=[1, 1])
    with pytest.raises(TypeError, match="rope_layers"):
        random_attention_stack(np.zeros((4, 2)), 2, rope_layers=[True])
    with pytest.raises(TypeError, match="causal"):
        random_attention_stack(x, 2, causal=1)
    with pytest.raises(ValueError, match="n_layers"):
        random_attention_stack(x, 0)
    with pytest.raises(ValueError, match="x"):
        random_attention_stack(np.zeros(4), 1)
    with pytest.raises(ValueError, match="gain"):
        random_attention_stack(x, 1, gain=-1.0)


def test_linear_probe_recovers_a_linear_map():
    rng = np.random.default_rng(5)
    F = rng.standard_normal((200, 5))
    w, c = np.array([1.0, -2.0, 0.5, 0.0, 3.0]), 7.0
    probe = fit_linear_probe(F, F @ w + c)
    np.testing.assert_allclose(probe.weight, w, atol=1e-10)
    assert abs(probe.bias - c) < 1e-10
    # ridge: the closed form (F_c^T F_c + lam I)^{-1} F_c^T y_c
    y = F @ w + c + rng.standard_normal(200)
    lam = 10.0
    Fc, yc = F - F.mean(0), y - y.mean()
    own = np.linalg.solve(Fc.T @ Fc + lam * np.eye(5), Fc.T @ yc)
    ridge = fit_linear_probe(F, y, ridge=lam)
    np.testing.assert_allclose(ridge.weight, own, atol=1e-10)
    assert abs(ridge.bias - (y.mean() - F.mean(0) @ own)) < 1e-10
    with pytest.raises(ValueError, match="targets"):
        fit_linear_probe(F, y[:-1])
    with pytest.raises(ValueError, match="ridge"):
        fit_linear_probe(F, y, ridge=-1)


def test_fit_linear_probe_overflow_names_features_and_targets():
    with pytest.raises(ValueError, match="features or targets"):
        posenc.analysis.fit_linear_probe([[5e-324], [1e-323], [0.0]], [1e300, 0.0, 1.0])


@pytest.mark.parametrize(
    "x, gain", [(np.full((4, 4), 1e308), 1.0), (np.ones((4, 4)), 1e308)], ids=["huge-x", "huge-gain"]
)
def test_random_attention_stack_overflow_names_x_and_gain(x, gain, recwarn):
    with pytest.raises(ValueError, match="x or gain"):
        random_attention_stack(x, 2, gain=gain)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_linear_probe_refuses_features_whose_mean_overflows():
    with pytest.raises(ValueError, match="features"):
        fit_linear_probe([[1e308, 1.0], [1e308, 0.0], [-1e308, 2.0]], [1.0, 2.0, 3.0])


def test_linear_probe_refuses_a_solve_of_minutes():
    t0 = time.process_time()
    with pytest.raises(ValueError, match="features of shape"):
        fit_linear_probe(np.zeros((2, 4096)), [0.0, 1.0], ridge=1.0)
    assert time.process_time() - t0 < 1.0


def test_linear_probe_still_fits_a_line():
    # y = 3 f0 - 2 f1 + 5, exactly: the probe recovers it without a ridge
    rng = np.random.default_rng(0)
    F = rng.standard_normal((50, 2))
    probe = fit_linear_probe(F, 3 * F[:, 0] - 2 * F[:, 1] + 5)
    assert np.allclose(probe.predict(np.array([[1.0, 1.0], [0.0, 0.0]])), [6.0, 5.0], atol=1e-9)


def test_attention_stack_refuses_minutes_of_work_and_a_string_flag():
    t0 = time.process_time()
    with pytest.raises(ValueError, match="too much work"):
        random_attention_stack(np.ones((4096, 2)), 1024)
    assert time.process_time() - t0 < 1.0
    with pytest.raises(TypeError, match="causal"):
        random_attention_stack(np.ones((4, 2)), 1, causal="False")
