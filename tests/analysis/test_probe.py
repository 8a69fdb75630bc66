"""Tests of posenc.analysis.probe: the one-layer attention probe of chapter 12.

Expected values are written out by hand (targets, ALiBi and T5 position terms), computed
with math.cos / complex arithmetic independently of posenc (sinusoidal and RoPE position
terms), or obtained by central finite differences of the loss (the hand-written gradients).
"""

from __future__ import annotations

import cmath
import math
import time

import numpy as np
import pytest
from conftest import hand_softmax, reference_table
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import posenc
from posenc.analysis.probe import METHODS, AttentionProbe, copy_targets, copy_task, fit_probe, probe_accuracy


def test_copy_targets_by_hand() -> None:
    tokens = np.array([[5, 1, 4, 2, 2]])
    np.testing.assert_array_equal(copy_targets(tokens, 1), [[-1, 5, 1, 4, 2]])
    np.testing.assert_array_equal(copy_targets(tokens, 3), [[-1, -1, -1, 5, 1]])
    np.testing.assert_array_equal(copy_targets(tokens, 0), tokens)
    np.testing.assert_array_equal(copy_targets(tokens, 7), [[-1] * 5])


def test_copy_task_is_seeded_and_in_range() -> None:
    a, b = copy_task(4, 10, 7, seed=3), copy_task(4, 10, 7, seed=3)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (4, 10) and a.min() >= 0 and a.max() <= 6


def test_alibi_position_term_by_hand() -> None:
    probe = AttentionProbe("alibi", slope=0.25)
    want = np.array([[0.0, 0.25, 0.5], [-0.25, 0.0, 0.25], [-0.5, -0.25, 0.0]])
    np.testing.assert_array_equal(probe.position_scores(3), want)
    assert probe.num_position_parameters == 0


def test_t5_position_term_exact_buckets() -> None:
    # unidirectional, 32 buckets: distances 0..15 are their own bucket; keys after the query share bucket 0
    probe = AttentionProbe("t5")
    probe.params["beta"] = np.arange(32, dtype=np.float64) * 10.0
    P = probe.position_scores(6)
    for i in range(6):
        for j in range(6):
            assert P[i, j] == 10.0 * max(i - j, 0)
    assert probe.num_position_parameters == 32


def test_sinusoidal_position_term_identity_is_cosine_sum() -> None:
    d = 8
    probe = AttentionProbe("sinusoidal", d=d)
    probe.params["A"] = np.eye(d)
    P = probe.position_scores(5)
    for i in range(5):
        for j in range(5):
            want = sum(math.cos((i - j) * 10000.0 ** (-2 * k / d)) for k in range(d // 2))
            assert P[i, j] == pytest.approx(want, abs=1e-12)
    assert probe.num_position_parameters == d * d


def test_rope_position_term_complex_form() -> None:
    d = 6
    probe = AttentionProbe("rope", d=d, seed=4)
    a, b = probe.params["a"], probe.params["b"]
    P = probe.position_scores(7)
    for i in range(7):
        for j in range(7):
            want = 0.0
            for k in range(d // 2):
                theta = 10000.0 ** (-2 * k / d)
                za = complex(a[2 * k], a[2 * k + 1]) * cmath.exp(1j * i * theta)
                zb = complex(b[2 * k], b[2 * k + 1]) * cmath.exp(1j * j * theta)
                want += (za.conjugate() * zb).real
            assert P[i, j] == pytest.approx(want, abs=1e-12)


def test_rope_term_rotates_as_apply_rope_bit_for_bit() -> None:
    # the probe rotates with phases it keeps between steps; apply_rope computes them anew
    from posenc import apply_rope
    from posenc.analysis._probe_tables import rotate_rows

    x = np.random.default_rng(5).standard_normal((9, 8))
    assert np.array_equal(rotate_rows(x), apply_rope(x))
    back = -np.arange(9, dtype=np.float64)
    assert np.array_equal(rotate_rows(x, -1.0), apply_rope(x, back))
    assert not np.array_equal(rotate_rows(x, -1.0), rotate_rows(x))  # the sign is used


def test_infinite_scores_above_the_diagonal_are_masked_not_refused() -> None:
    probe = AttentionProbe("learned", max_len=3, d=2)
    probe.params["U"][:] = 0.0
    probe.params["V"][:] = 0.0
    probe.params["U"][0, 0] = probe.params["V"][1, 0] = 1e200  # P[0, 1] = 1e400: inf, above the diagonal
    with np.errstate(over="ignore"):
        assert np.isinf(probe.position_scores(3)[0, 1])
    w = probe.weights([[0, 1, 2]])
    assert np.all(np.isfinite(w)) and np.allclose(w.sum(axis=-1), 1.0)
    assert w[0, 0, 1] == 0.0 and w[0, 0, 0] == 1.0
    probe.params["V"][1, 0], probe.params["U"][1, 0] = 0.0, 1e200
    probe.params["V"][0, 0] = 1e200  # now P[1, 0], below the diagonal, is inf
    with pytest.raises(ValueError, match="not finite"):
        probe.weights([[0, 1, 2]])


def test_learned_has_no_rows_beyond_max_len() -> None:
    probe = AttentionProbe("learned", max_len=8, d=4)
    assert probe.position_scores(8).shape == (8, 8)
    assert probe.num_position_parameters == 2 * 8 * 4
    with pytest.raises(ValueError, match="max_len"):
        probe.position_scores(9)


@pytest.mark.parametrize("method", METHODS)
def test_weights_are_causal_distributions(method: str) -> None:
    probe = AttentionProbe(method, max_len=12, d=4, vocab=5, seed=1)
    probe.params["C"] = np.random.default_rng(0).normal(size=(5, 5))
    w = probe.weights(copy_task(3, 12, 5, seed=2))
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    assert np.all(w[:, np.triu_indices(12, 1)[0], np.triu_indices(12, 1)[1]] == 0.0)


@pytest.mark.parametrize("method", METHODS)
def test_gradients_match_finite_differences(method: str) -> None:
    rng = np.random.default_rng(7)
    probe = AttentionProbe(method, max_len=9, d=4, vocab=4, seed=3, num_buckets=8, max_distance=6)
    for key in probe.params:
        probe.params[key] = rng.normal(0.0, 0.5, size=probe.params[key].shape)
    tokens = copy_task(3, 9, 4, seed=5)
    _, grads = probe.loss_and_grads(tokens, 2)
    h = 1e-6
    for key, value in probe.params.items():
        for idx in np.ndindex(value.shape):
            old = value[idx]
            value[idx] = old + h
            up, _ = probe.loss_and_grads(tokens, 2)
            value[idx] = old - h
            down, _ = probe.loss_and_grads(tokens, 2)
            value[idx] = old
            assert grads[key][idx] == pytest.approx((up - down) / (2 * h), abs=1e-7)


def test_uniform_attention_loss_is_log_of_inverse_share() -> None:
    # zero content and position terms (t5 starts at zero): query i attends uniformly to i+1 keys,
    # so o_i[target] = (number of keys j <= i holding the target) / (i + 1)
    probe = AttentionProbe("t5", vocab=3)
    tokens = np.array([[0, 1, 0, 2]])
    loss, _ = probe.loss_and_grads(tokens, 1)
    shares = [1 / 2, 1 / 3, 2 / 4]  # targets 0, 1, 0 at i = 1, 2, 3, held by 1, 1, 2 of the keys
    assert loss == pytest.approx(-sum(math.log(s) for s in shares) / 3, rel=1e-12)


def test_fit_is_deterministic_and_learns_the_task_in_range() -> None:
    p1, l1 = fit_probe("t5", train_len=16, steps=60, lr=0.1)
    p2, l2 = fit_probe("t5", train_len=16, steps=60, lr=0.1)
    np.testing.assert_array_equal(l1, l2)
    np.testing.assert_array_equal(p1.params["beta"], p2.params["beta"])
    assert l1[-1] < 0.1 * l1[0]
    assert probe_accuracy(p1, 16, 1) == 1.0


def test_alibi_cannot_look_three_back() -> None:
    # ALiBi's bias decreases with distance; with random content the weights favour nearer keys, so a
    # target three steps back is found no more often than chance allows (vocab 16: a few percent).
    probe, _ = fit_probe("alibi", train_len=16, offset=3, steps=60, lr=0.1)
    assert probe_accuracy(probe, 16, 3) < 0.3


@pytest.mark.parametrize(
    ("kwargs", "exc"),
    [
        ({"method": "cosine"}, ValueError),
        ({"method": 3}, TypeError),
        ({"method": "rope", "d": 5}, ValueError),
        ({"method": "rope", "vocab": 0}, ValueError),
        ({"method": "alibi", "slope": float("nan")}, ValueError),
    ],
)
def test_constructor_rejects_bad_arguments(kwargs: dict, exc: type) -> None:
    method = kwargs.pop("method")
    with pytest.raises(exc):
        AttentionProbe(method, **kwargs)


def test_bad_calls_name_the_argument() -> None:
    probe = AttentionProbe("alibi", vocab=4)
    with pytest.raises(ValueError, match="offset"):
        probe.loss_and_grads(np.zeros((1, 3), dtype=int), 3)
    with pytest.raises(TypeError, match="tokens"):
        probe.weights(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="vocab"):
        probe.weights(np.array([[0, 4]]))
    with pytest.raises(ValueError, match="offset"):
        fit_probe("alibi", train_len=4, offset=4)
    with pytest.raises(TypeError, match="probe"):
        probe_accuracy("alibi", 8, 1)  # type: ignore[arg-type]


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


def test_sinusoidal_probe_refuses_a_matrix_beyond_the_limit():
    t0 = time.process_time()
    with pytest.raises(ValueError, match=r"\(d, d\)"):
        AttentionProbe("sinusoidal", d=2**16)
    with pytest.raises(ValueError, match=r"\(d, d\)"):
        fit_probe("sinusoidal", d=2**16, steps=1, train_len=2, batch=1)
    assert time.process_time() - t0 < 1.0
