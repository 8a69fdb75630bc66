"""posenc.analysis.readout: the linear position readout of chapter 8, checked by hand.

``PositionReadout.predict`` is ``Y @ w + bias`` summed with ``math.fsum``; two steps of
``fit_position_readout`` are replayed with the gradient of the mean squared error written out.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from conftest import draw_array
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
import posenc.exercises

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@given(data=st.data(), d=st.integers(1, 4), n=st.integers(1, 4), bias=finite)
def test_position_readout_predict_by_hand(data, d, n, bias):
    w = data.draw(st.lists(finite, min_size=d, max_size=d))
    Y = draw_array(data.draw, (n, d), np.int8)
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


def test_fit_position_readout_names_a_huge_target_and_refuses_hours_of_work():
    pe = posenc.LearnedPositionalEncoding(8, 4)
    with pytest.raises(ValueError, match="target"):
        posenc.analysis.fit_position_readout(pe, np.full(8, 1e308), train_len=8)
    big = posenc.LearnedPositionalEncoding(1024, 1024)
    start = time.process_time()
    with pytest.raises(ValueError, match="2\\*\\*28"):  # 4096 steps here would take over an hour
        posenc.analysis.fit_position_readout(
            big, np.arange(1024.0), train_len=1024, steps=4096, batch_size=16
        )
    assert time.process_time() - start < 1.0


def test_readout_counts_a_step_s_fixed_cost():
    import posenc
    from posenc.analysis import fit_position_readout

    t0 = time.process_time()
    with pytest.raises(ValueError, match="steps"):  # a million tiny steps: half a minute before
        fit_position_readout(
            posenc.LearnedPositionalEncoding(1, 1), [1.0], train_len=1, steps=10**6, batch_size=1
        )
    assert time.process_time() - t0 < 1.0
