"""posenc.reference, the textbook code the chapters show, against two kinds of evidence.

1. The reference functions are right: compared with independent computations (mpmath at
   256 bits through conftest's helpers, exact rationals, hand-derived cases).
2. The package's fast or validated functions compute the same thing: compared with the
   reference on many inputs (hypothesis), within the rounding the two evaluations allow.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest
from conftest import EPS, angle_tolerance, exact_t5_bucket, reference_shift_matrix, reference_table
from hypothesis import given
from hypothesis import strategies as st

import posenc
from posenc import reference

even_widths = st.integers(1, 32).map(lambda h: 2 * h)
bases = st.sampled_from([10.0, 100.0, 10000.0, 500000.0])


@functools.cache
def reference_frequency_error(d_model: int, base: float) -> float:
    """Largest relative error of the reference's float64 ``base ** (-2i/d)``: a few ulp."""
    exact = [mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / d_model) for i in range(d_model // 2)]
    got = base ** (-np.arange(0, d_model, 2) / d_model)
    return max(float(abs(g - e) / e) for g, e in zip(got, exact, strict=True))


# ---- 1. the reference is right ---------------------------------------------------------


@given(length=st.integers(1, 40), d_model=even_widths, base=bases)
def test_reference_table_is_the_sinusoidal_formula(length, d_model, base):
    exact = reference_table(range(length), d_model, base)
    got = reference.sinusoidal_table(length, d_model, base)
    # angle p*w is formed from a w a few ulp off (measured here) and rounded once more
    rel = reference_frequency_error(d_model, base) + EPS
    bound = np.arange(length)[:, None] * rel * 1.01 + 4 * EPS
    assert got.shape == (length, d_model)
    assert np.all(np.abs(got - exact) <= bound)


@given(d_model=even_widths, offset=st.integers(-300, 300), base=bases)
def test_reference_shift_matrix_is_the_block_rotation(d_model, offset, base):
    expected = reference_shift_matrix(d_model, offset, base)
    rel = reference_frequency_error(d_model, base) + EPS
    np.testing.assert_allclose(
        reference.shift_matrix(d_model, offset, base), expected, rtol=0, atol=abs(offset) * rel + 4 * EPS
    )


def test_reference_rope_is_complex_multiplication_by_the_phase():
    rng = np.random.default_rng(3)
    d, positions = 8, np.array([0.0, 1.0, 5.0, 123.0])
    x = rng.normal(size=(2, positions.size, d))
    theta = [mpmath.power(10000, mpmath.mpf(-2 * i) / d) for i in range(d // 2)]
    out = reference.rope(x, positions)
    for b in range(2):
        for l_, m in enumerate(positions):
            for i, t in enumerate(theta):
                z = mpmath.mpc(x[b, l_, 2 * i], x[b, l_, 2 * i + 1]) * mpmath.expj(m * t)
                assert abs(out[b, l_, 2 * i] - float(z.real)) < 1e-13
                assert abs(out[b, l_, 2 * i + 1] - float(z.imag)) < 1e-13
    perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])  # interleaved -> half
    np.testing.assert_array_equal(reference.rope(x[..., perm], positions, layout="half"), out[..., perm])


@given(
    d_model=even_widths, base=bases, k=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=4)
)
def test_reference_cosine_sum_is_the_sum_of_cosines(d_model, base, k):
    omega = posenc.frequencies(d_model, base)
    got = reference.cosine_sum(np.array(k), omega)
    assert got.shape == (len(k),)
    with mpmath.workprec(256):
        for kk, g in zip(k, got, strict=True):
            exact = mpmath.fsum(mpmath.cos(mpmath.mpf(kk) * mpmath.mpf(float(w))) for w in omega)
            # each angle k*w rounded once (|k| w 2^-53), cos within an ulp, the sum d/2 roundings
            bound = abs(kk) * float(omega.sum()) * 2.0**-53 + d_model * EPS
            assert abs(g - float(exact)) <= bound
    # the dot product of two rows of the textbook table, offset k apart (integer offsets)
    table = reference.sinusoidal_table(40, d_model, base)
    np.testing.assert_allclose(
        np.sum(table[:-7] * table[7:], axis=1), reference.cosine_sum(7.0, omega) * np.ones(33), atol=1e-9
    )


def test_reference_alibi_slopes_by_hand():
    assert reference.alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]
    # 6 heads: the 4-head slopes 2^-2, 2^-4, 2^-6, 2^-8, then every other slope of the
    # 8-head sequence 2^-1, 2^-3
    assert reference.alibi_slopes(6).tolist() == [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8, 2.0**-1, 2.0**-3]
    assert reference.alibi_slopes(1).tolist() == [2.0**-8]


def test_reference_alibi_bias_by_hand():
    bias = reference.alibi_bias(np.array([0.5]), q_len=2, k_len=3)
    # queries at absolute positions 1 and 2 of 0..2
    assert bias[0].tolist() == [[-0.5, 0.0, -math.inf], [-1.0, -0.5, 0.0]]


@given(
    r=st.integers(-3000, 3000),
    bidirectional=st.booleans(),
    config=st.sampled_from([(32, 128), (20, 160), (64, 256), (10, 50)]),
)
def test_reference_t5_bucket_is_the_formula_away_from_ties(r, bidirectional, config):
    num_buckets, max_distance = config
    got = reference.t5_bucket(r, bidirectional, num_buckets, max_distance)
    exact = exact_t5_bucket(r, bidirectional, num_buckets, max_distance)
    # float64 may land one bucket low exactly at a tie, never anywhere else
    assert got == exact or got == exact - 1
    # package: exact everywhere
    assert (
        posenc.t5_relative_position_bucket(
            r, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
        )
        == exact
    )


def test_reference_t5_bucket_lands_low_at_a_known_tie():
    # num_buckets=20 bidirectional: 10 per sign, m = 5, s = 5, D = 160; |r| = 20 gives
    # (160/5)^t <= (20/5)^5, i.e. 32^t <= 1024 = 32^2: t = 2 exactly, bucket 7 ...
    assert exact_t5_bucket(20, True, 20, 160) == 10 + 5 + 2
    # ... which float64's log(4)/log(32)*5 = 1.999... truncates to 1
    assert reference.t5_bucket(20, True, 20, 160) == 10 + 5 + 1


def test_reference_learned_backward_by_finite_differences():
    rng = np.random.default_rng(0)
    X, E = rng.normal(size=(3, 4, 2)), rng.normal(size=(6, 2))
    G = rng.normal(size=(3, 4, 2))  # the upstream gradient: loss = sum(G * forward(X, E))
    grad_X, grad_E = reference.learned_backward(G, 6)
    h = 1e-6
    for idx in np.ndindex(E.shape):
        Ep, Em = E.copy(), E.copy()
        Ep[idx] += h
        Em[idx] -= h
        numeric = (
            np.sum(G * reference.learned_forward(X, Ep)) - np.sum(G * reference.learned_forward(X, Em))
        ) / (2 * h)
        assert abs(numeric - grad_E[idx]) < 1e-7
    np.testing.assert_array_equal(grad_X, G)
    assert not grad_E[4:].any()


# ---- 2. the package agrees with the reference ------------------------------------------


@given(length=st.integers(1, 300), d_model=even_widths, base=bases)
def test_sinusoidal_encoding_agrees_with_the_reference(length, d_model, base):
    fast = posenc.sinusoidal_encoding(length, d_model, base=base)
    ref = reference.sinusoidal_table(length, d_model, base)
    positions = range(length)
    rel = reference_frequency_error(d_model, base) + EPS
    bound = angle_tolerance(positions, d_model, base) + np.arange(length)[:, None] * rel
    assert np.all(np.abs(fast - ref) <= bound)
    split = posenc.sinusoidal_encoding(length, d_model, base=base, layout="split")
    np.testing.assert_array_equal(split, fast[:, posenc.interleaved_to_split(d_model)])


@given(d_model=even_widths, offset=st.integers(-(2**16), 2**16), base=bases)
def test_relative_position_matrix_agrees_with_the_reference(d_model, offset, base):
    rel = reference_frequency_error(d_model, base) + EPS
    np.testing.assert_allclose(
        posenc.relative_position_matrix(d_model, offset, base=base),
        reference.shift_matrix(d_model, offset, base),
        rtol=0,
        atol=2 * abs(offset) * rel + 8 * EPS,
    )


@given(
    seed=st.integers(0, 2**16),
    shape=st.tuples(st.integers(1, 3), st.integers(1, 9), even_widths),
    layout=st.sampled_from(["interleaved", "half"]),
    offset=st.integers(-(2**30), 2**30),
    base=bases,
    dtype=st.sampled_from([np.float64, np.float32]),
)
def test_apply_rope_agrees_with_the_reference(seed, shape, layout, offset, base, dtype):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape).astype(dtype)
    positions = offset + np.arange(shape[1])
    fast = posenc.apply_rope(x, positions, base=base, layout=layout)
    ref = reference.rope(x.astype(np.float64), positions, base, layout)
    assert fast.dtype == dtype
    # both form m*theta in float64 from a theta a few ulp apart; the rotation moves a
    # pair of norm r by at most r * (angle difference)
    rel = reference_frequency_error(shape[2], base) + 2 * EPS
    pair_norm = np.sqrt(x.astype(np.float64)[..., 0::2] ** 2 + x.astype(np.float64)[..., 1::2] ** 2).max()
    out_ulp = np.finfo(dtype).eps
    bound = pair_norm * (np.abs(positions).max() * rel + 8 * EPS + out_ulp)
    assert np.max(np.abs(fast.astype(np.float64) - ref)) <= bound


@given(
    d_model=even_widths, base=bases, k=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=5)
)
def test_dot_product_sum_agrees_with_the_reference(d_model, base, k):
    omega = posenc.frequencies(d_model, base)
    exact_products = posenc.analysis.dot_product_sum(np.array(k), d_model, base)
    rounded_angles = reference.cosine_sum(np.array(k), omega)
    # the two differ by the rounding of the angles k*w_i in the reference (|k| w 2^-53 each)
    # plus the documented d 2^-50 of dot_product_sum and the reference's own d ulp
    bound = np.abs(k) * omega.sum() * 2.0**-53 + d_model * (2.0**-50 + EPS)
    assert np.all(np.abs(exact_products - rounded_angles) <= bound)


@given(n_heads=st.integers(1, 80), q_len=st.integers(1, 6), extra=st.integers(0, 6))
def test_alibi_agrees_with_the_reference(n_heads, q_len, extra):
    k_len = q_len + extra
    slopes = posenc.alibi_slopes(n_heads)
    np.testing.assert_allclose(slopes, reference.alibi_slopes(n_heads), rtol=4 * EPS, atol=0)
    fast = posenc.alibi_bias(n_heads, q_len, k_len)
    ref = reference.alibi_bias(reference.alibi_slopes(n_heads), q_len, k_len)
    assert np.array_equal(np.isinf(fast), np.isinf(ref))
    finite = np.isfinite(ref)
    np.testing.assert_allclose(fast[finite], ref[finite], rtol=8 * EPS, atol=0)


@given(batch=st.integers(1, 4), length=st.integers(1, 7), extra=st.integers(0, 4), seed=st.integers(0, 99))
def test_learned_encoding_agrees_with_the_reference(batch, length, extra, seed):
    max_len, d = length + extra, 4
    enc = posenc.LearnedPositionalEncoding(max_len, d, seed=seed)
    rng = np.random.default_rng(seed)
    X, G = rng.normal(size=(batch, length, d)), rng.normal(size=(batch, length, d))
    np.testing.assert_array_equal(enc.forward(X), reference.learned_forward(X, enc.embedding))
    grad_X, grad_E = reference.learned_backward(G, max_len)
    np.testing.assert_array_equal(enc.backward(G), grad_X)
    # summing a batch in another order may differ in the last bit
    np.testing.assert_allclose(enc.grad_embedding, grad_E, rtol=0, atol=8 * EPS * np.abs(G).sum(axis=0).max())


@pytest.mark.parametrize("name", ["sinusoidal_table", "shift_matrix", "rope", "alibi_bias", "t5_bucket"])
def test_reference_functions_stay_short(name):
    import inspect

    source = inspect.getsource(getattr(reference, name))
    body = source.split('"""')[-1]
    code = [line for line in body.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert len(code) <= 20, f"{name} is meant to be read in a chapter: {len(code)} lines"
