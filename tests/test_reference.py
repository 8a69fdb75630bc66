"""posenc.reference, the textbook code the chapters show, against two kinds of evidence.

1. The reference functions are right: compared with independent computations (mpmath at
   256 bits through conftest's helpers, exact rationals, hand-derived cases).
2. The package's fast or validated functions compute the same thing: compared with the
   reference on many inputs (hypothesis), within the rounding the two evaluations allow.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import EPS, angle_tolerance, exact_t5_bucket, reference_shift_matrix, reference_table
from hypothesis import assume, example, given
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


def test_reference_p_rope_frequencies_by_hand():
    # d = 8, base 10^4: theta_i = 10^(-i) = 1, 0.1, 0.01, 0.001; p d/2 pairs are kept
    np.testing.assert_allclose(reference.p_rope_frequencies(8, 1.0), [1.0, 0.1, 0.01, 0.001], rtol=4 * EPS)
    np.testing.assert_allclose(reference.p_rope_frequencies(8, 0.5), [1.0, 0.1, 0.0, 0.0], rtol=4 * EPS)
    # p d/2 = 2.4: two pairs turn, the 0.4 of a pair does not
    np.testing.assert_allclose(reference.p_rope_frequencies(8, 0.6), [1.0, 0.1, 0.0, 0.0], rtol=4 * EPS)
    assert reference.p_rope_frequencies(8, 0.0).tolist() == [0.0] * 4


def test_reference_p_rope_and_the_package_differ_only_just_below_a_whole_pair():
    # the double nearest 0.29 is 0.28999999999999998002..., so p d/2 for d = 200 is just
    # below 29: the formula keeps 28 pairs, the package (which reads p as the decimal it
    # was written as, to 1e-12) keeps 29
    assert Fraction(0.29) < Fraction(29, 100) and 0.29 * 200 / 2 < 29
    assert np.count_nonzero(reference.p_rope_frequencies(200, 0.29)) == 28
    assert np.count_nonzero(posenc.p_rope_frequencies(200, 0.29)) == 29


def test_reference_yarn_frequencies_by_hand():
    # Llama-2-like: d = 128, base 10^4, L0 = 4096, s = 4. Pair i turns
    # r_i = 4096 * 10^(-i/16) / (2 pi) times over L0 (10^4 ** (-2i/128) = 10^(-i/16)).
    r = [4096 * 10 ** (-i / 16) / (2 * math.pi) for i in range(64)]
    assert r[20] > 32 > r[21] and r[45] > 1 > r[46]  # beta_fast = 32, beta_slow = 1
    # so the ramp runs from pair 20 (floor) to pair 46 (ceiling): rho_i = (i - 20) / 26
    ratio = reference.yarn_frequencies(128, 10000.0, 4.0, 4096) / (10000.0 ** (-np.arange(64) / 64))
    np.testing.assert_allclose(ratio[:21], 1.0, rtol=8 * EPS)
    np.testing.assert_allclose(ratio[46:], 0.25, rtol=8 * EPS)
    # pair 33 is half-way: (1 - 1/2) + (1/2) / 4 = 0.625; pair 26: 1 - 6/26 + (6/26) / 4
    np.testing.assert_allclose(ratio[33], 0.625, rtol=8 * EPS)
    np.testing.assert_allclose(ratio[26], 1 - 6 / 26 * 0.75, rtol=8 * EPS)


def test_reference_yarn_attention_factor_by_hand():
    assert reference.yarn_attention_factor(math.e**10) == pytest.approx(2.0, rel=4 * EPS)  # 0.1 * 10 + 1
    assert reference.yarn_attention_factor(1.0) == 1.0
    assert reference.yarn_attention_factor(0.5) == 1.0  # no temperature below the training length


def test_reference_axial_rope_frequencies_by_hand():
    # d = 8, two axes: two pairs per axis, each a 4-wide RoPE: 10^4 ** (-2i/4) = 1, 0.01
    F = reference.axial_rope_frequencies(8, 2)
    np.testing.assert_allclose(F, [[1.0, 0.01, 0.0, 0.0], [0.0, 0.0, 1.0, 0.01]], rtol=4 * EPS)
    # d = 12, three axes: pairs (0, 1) row 0, (2, 3) row 1, (4, 5) row 2, same two frequencies
    F3 = reference.axial_rope_frequencies(12, 3, base=100.0)  # 100 ** (-2i/4) = 1, 0.1
    expected = np.zeros((3, 6))
    for a in range(3):
        expected[a, 2 * a : 2 * a + 2] = [1.0, 0.1]
    np.testing.assert_allclose(F3, expected, rtol=4 * EPS)
    assert reference.axial_rope_frequencies(4, 1).tolist() == [[1.0, 0.01]]  # one axis: plain RoPE


def test_reference_mrope_by_hand():
    # d = 6, base 8: theta = 8 ** (-2j/6) = 1, 1/2, 1/4; sections (1, 1, 1): pair 0 follows
    # the temporal id, pair 1 the height id, pair 2 the width id
    x = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]])  # half layout: pair j is (x[j], x[j + 3])
    ids = np.array([[math.pi / 2], [2 * math.pi], [0.0]])  # angles pi/2, pi, 0
    # R(pi/2)(1, 4) = (-4, 1); R(pi)(2, 5) = (-2, -5); (3, 6) does not turn
    np.testing.assert_allclose(
        reference.mrope(x, ids, [1, 1, 1], base=8.0), [[-4, -2, 3, 1, -5, 6]], atol=1e-15
    )
    # sections (2, 0, 1): pairs 0 and 1 follow the temporal id, pair 2 the width id
    ids2 = np.array([[math.pi], [5.0], [4 * math.pi]])  # angles pi, pi/2, pi
    np.testing.assert_allclose(
        reference.mrope(x, ids2, [2, 0, 1], base=8.0), [[-1, -5, -3, -4, 2, -6]], atol=1e-14
    )


def test_reference_kerple_bias_by_hand():
    log = reference.kerple_bias(np.array([2.0]), np.array([1.0]), 3, 3)
    ln2, ln3, inf = math.log(2), math.log(3), math.inf
    np.testing.assert_allclose(
        log[0], [[0, -inf, -inf], [-2 * ln2, 0, -inf], [-2 * ln3, -2 * ln2, 0]], rtol=4 * EPS
    )
    # power, r1 = 1/2, r2 = 2, bidirectional; queries at positions 1 and 2 of 0..2
    power = reference.kerple_bias(np.array([0.5]), np.array([2.0]), 2, 3, kind="power", causal=False)
    assert power[0].tolist() == [[-0.5, 0.0, -0.5], [-2.0, -0.5, 0.0]]


def test_reference_fire_bias_by_hand():
    inf = math.inf
    # f the identity, c = 1, L = 1: row i divides ln(1 + distance) by ln(1 + max(1, i))
    u = reference.fire_bias(lambda v: v, 3, 3)
    ln2, ln3 = math.log(2), math.log(3)
    np.testing.assert_allclose(u, [[0, -inf, -inf], [1, 0, -inf], [1, ln2 / ln3, 0]], rtol=4 * EPS)
    # L = 4: every row divides by ln 5, so no row's farthest key reaches 1
    u4 = reference.fire_bias(lambda v: v, 3, 3, threshold=4.0, causal=False)
    ln5 = math.log(5)
    expected = [[0, ln2 / ln5, ln3 / ln5], [ln2 / ln5, 0, ln2 / ln5], [ln3 / ln5, ln2 / ln5, 0]]
    np.testing.assert_allclose(u4, expected, rtol=4 * EPS)
    # f may return one bias per head: here 3u and -u
    heads = reference.fire_bias(lambda v: np.stack([3 * v, -v]), 2, 2, c=2.0)
    # c = 2: the second query (i = 1) sees distance 1: ln 3 / ln 3 = 1
    np.testing.assert_allclose(heads, [[[0, -inf], [3, 0]], [[0, -inf], [-1, 0]]], rtol=4 * EPS)


def test_reference_xpos_scale_by_hand():
    # d = 4, gamma = 0.4: zeta = (0 + 0.4) / 1.4 = 2/7 and (1/2 + 0.4) / 1.4 = 9/14
    got = reference.xpos_scale(np.array([0.0, 512.0, -1024.0]), 4)
    expected = [[1.0, 1.0], [2 / 7, 9 / 14], [(7 / 2) ** 2, (14 / 9) ** 2]]
    np.testing.assert_allclose(got, expected, rtol=8 * EPS)
    # query times factor, key divided: the score of pair j scales by zeta_j ** ((m - n) / 512)
    m, n = 700.0, 188.0
    both = reference.xpos_scale(np.array([m]), 4)[0] / reference.xpos_scale(np.array([n]), 4)[0]
    np.testing.assert_allclose(both, [2 / 7, 9 / 14], rtol=1e-14)


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
    np.testing.assert_array_equal(split, fast[:, posenc.layout_permutation(d_model)])


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


@given(d_head=even_widths, base=bases, p=st.floats(0.0, 1.0))
@example(d_head=18, base=10.0, p=1 / 3)  # p d/2 rounds up to exactly 3.0 in float64
def test_p_rope_frequencies_agrees_with_the_reference(d_head, base, p):
    # away from the 1e-12 below a whole pair where the package reads p as a decimal
    assume(p * d_head / 2 == math.floor(p * d_head / 2) or math.ceil(p * d_head / 2) - p * d_head / 2 > 1e-9)
    fast = posenc.p_rope_frequencies(d_head, p, base=base)
    ref = reference.p_rope_frequencies(d_head, p, base)
    kept = math.floor(p * d_head / 2)  # p d/2 as float64 forms it (p = 1/3 gives 3 of 9)
    assert np.count_nonzero(ref) == np.count_nonzero(fast) == kept
    np.testing.assert_allclose(fast, ref, rtol=reference_frequency_error(d_head, base) + 4 * EPS, atol=0)


@given(
    d_head=st.integers(4, 128).map(lambda h: 2 * h),
    base=st.sampled_from([100.0, 10000.0, 500000.0, 1e6]),
    factor=st.floats(1.0, 64.0),
    original_length=st.sampled_from([64, 512, 2048, 4096, 8192, 32768, 131072]),
    betas=st.sampled_from([(32.0, 1.0), (16.0, 2.0), (64.0, 0.5), (4.0, 1.0)]),
)
def test_yarn_agrees_with_the_reference(d_head, base, factor, original_length, betas):
    beta_fast, beta_slow = betas
    scaling = {
        "rope_type": "yarn",
        "factor": factor,
        "original_max_position_embeddings": original_length,
        "beta_fast": beta_fast,
        "beta_slow": beta_slow,
    }
    fast, attention = posenc.rope_frequencies(d_head, base, scaling, return_attention_factor=True)
    ref = reference.yarn_frequencies(d_head, base, factor, original_length, beta_fast, beta_slow)
    # the same ramp, and frequencies a few ulp apart (the package's are correctly rounded)
    np.testing.assert_allclose(fast, ref, rtol=reference_frequency_error(d_head, base) + 8 * EPS, atol=0)
    assert attention == pytest.approx(reference.yarn_attention_factor(factor), rel=4 * EPS)
    # from the definition: pair i turns r_i = L0 theta_i / 2 pi times over the original context;
    # a pair turning fewer than beta_slow times is divided by s, the fastest pair (theta_0 = 1)
    # is kept when it turns more than beta_fast times
    plain = posenc.rope_frequencies(d_head, base)
    turns = original_length * plain / (2 * math.pi)
    slow = turns < beta_slow
    np.testing.assert_allclose(ref[slow], plain[slow] / factor, rtol=8 * EPS)
    if turns[0] > beta_fast:
        assert ref[0] == 1.0


@given(n_axes=st.integers(1, 4), block=st.integers(1, 16), base=bases)
def test_axial_rope_frequencies_agrees_with_the_reference(n_axes, block, base):
    d_head = 2 * n_axes * block
    fast = posenc.axial_rope_frequencies(d_head, n_axes, base=base)
    ref = reference.axial_rope_frequencies(d_head, n_axes, base)
    assert fast.shape == ref.shape == (n_axes, d_head // 2)
    assert np.array_equal(fast == 0, ref == 0)
    np.testing.assert_allclose(fast, ref, rtol=reference_frequency_error(2 * block, base) + 4 * EPS, atol=0)


@st.composite
def mrope_inputs(draw):
    half = draw(st.integers(1, 24))
    cut = sorted(draw(st.lists(st.integers(0, half), min_size=2, max_size=2)))
    section = [cut[0], cut[1] - cut[0], half - cut[1]]
    length = draw(st.integers(1, 9))
    lead = draw(st.sampled_from([(), (2,), (2, 3)]))  # (L, d), (B, L, d), (B, H, L, d)
    return section, (*lead, length, 2 * half)


@given(
    inputs=mrope_inputs(),
    seed=st.integers(0, 2**16),
    top=st.sampled_from([10, 4096, 2**20]),
    base=st.sampled_from([10000.0, 1e6]),
)
def test_apply_mrope_agrees_with_the_reference(inputs, seed, top, base):
    section, shape = inputs
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    ids = rng.integers(0, top, size=(3, shape[-2]))
    fast = posenc.apply_mrope(x, ids, section, base=base)
    ref = reference.mrope(x, ids, section, base)
    rel = reference_frequency_error(shape[-1], base) + 2 * EPS
    pair_norm = np.sqrt(x[..., : shape[-1] // 2] ** 2 + x[..., shape[-1] // 2 :] ** 2).max()
    assert np.max(np.abs(fast - ref)) <= pair_norm * (top * rel + 8 * EPS)
    # the section split matters: with unequal ids a wrong a(j) moves a pair far off
    if len(set(ids[:, 0])) == 3 and min(section) > 0:
        for wrong in ([section[1], section[0], section[2]], [section[0], section[2], section[1]]):
            if wrong != section:
                assert np.max(np.abs(reference.mrope(x, ids, wrong, base) - ref)) > 1e-6


@given(
    n_heads=st.integers(1, 6),
    q_len=st.integers(1, 8),
    extra=st.integers(0, 8),
    kind=st.sampled_from(["log", "power"]),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_kerple_bias_agrees_with_the_reference(n_heads, q_len, extra, kind, causal, seed):
    rng = np.random.default_rng(seed)
    r1 = rng.uniform(0.01, 10.0, n_heads)
    r2 = rng.uniform(0.01, 2.0 if kind == "power" else 10.0, n_heads)
    k_len = q_len + extra
    fast = posenc.kerple_bias(r1, r2, q_len, k_len, kind=kind, causal=causal)
    ref = reference.kerple_bias(r1, r2, q_len, k_len, kind, causal)
    assert fast.shape == ref.shape == (n_heads, q_len, k_len)
    assert np.array_equal(np.isinf(fast), np.isinf(ref))
    assert np.isinf(ref).any() == (causal and q_len > 1)  # the first query sees the second key only if not
    finite = np.isfinite(ref)
    # log(1 + x) against log1p(x): the rounding of 1 + x costs up to one ulp of 1 in the log
    scale = np.broadcast_to(r1[:, None, None], ref.shape)[finite]
    assert np.all(np.abs(fast[finite] - ref[finite]) <= scale * 2 * EPS + 4 * EPS * np.abs(ref[finite]))


@given(
    q_len=st.integers(1, 10),
    extra=st.integers(0, 10),
    c=st.floats(0.1, 10.0),
    threshold=st.floats(0.5, 64.0),
    causal=st.booleans(),
    heads=st.booleans(),
)
def test_fire_bias_agrees_with_the_reference(q_len, extra, c, threshold, causal, heads):
    k_len = q_len + extra
    weights = np.array([1.0, -2.5, 0.25])

    def f(u):  # one bias per head, or one for all heads
        return weights[:, None, None] * u if heads else u

    fast = posenc.fire_bias(f, q_len, k_len, c=c, threshold=threshold, causal=causal)
    ref = reference.fire_bias(f, q_len, k_len, c, threshold, causal)
    assert fast.shape == ref.shape == ((3,) if heads else ()) + (q_len, k_len)
    assert np.array_equal(np.isinf(fast), np.isinf(ref))
    # each of ln(1 + c d) and ln(1 + c max(L, i)) is off by up to half an ulp of 1 plus an ulp
    # in the reference, an ulp in the package's log1p; d >= 1 where u is not 0
    rel = EPS / math.log1p(c) + EPS / math.log1p(c * threshold) + 8 * EPS
    finite = np.isfinite(ref)
    assert np.all(np.abs(fast[finite] - ref[finite]) <= 2 * rel * np.abs(ref[finite]))


@given(
    length=st.integers(1, 40),
    start=st.integers(-5000, 5000),
    d_head=even_widths,
    gamma=st.sampled_from([0.1, 0.4, 1.0]),
    scale_base=st.sampled_from([256.0, 512.0, 4096.0]),
)
def test_xpos_scale_agrees_with_the_reference(length, start, d_head, gamma, scale_base):
    positions = np.arange(start, start + length, dtype=np.float64)
    fast = posenc.xpos_scale(positions, d_head, gamma=gamma, scale_base=scale_base)
    ref = reference.xpos_scale(positions, d_head, gamma, scale_base)
    assert fast.shape == ref.shape == (length, d_head // 2)
    # zeta ** t with t = p / scale_base: zeta's few ulp grow by abs(t), the power's own by
    # abs(t ln zeta); the package's exp(t ln zeta) likewise
    t = np.abs(positions)[:, None] / scale_base
    log_zeta = np.abs(np.log((np.arange(0, d_head, 2) / d_head + gamma) / (1 + gamma)))
    bound = 8 * EPS * (1 + t * (1 + log_zeta))
    assert np.all(np.abs(fast / ref - 1) <= bound)


@pytest.mark.parametrize(
    "name",
    [
        "sinusoidal_table",
        "shift_matrix",
        "rope",
        "alibi_bias",
        "t5_bucket",
        "p_rope_frequencies",
        "yarn_frequencies",
        "yarn_attention_factor",
        "axial_rope_frequencies",
        "mrope",
        "kerple_bias",
        "fire_bias",
        "xpos_scale",
    ],
)
def test_reference_functions_stay_short(name):
    import inspect

    source = inspect.getsource(getattr(reference, name))
    body = source.split('"""')[-1]
    code = [line for line in body.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert len(code) <= 20, f"{name} is meant to be read in a chapter: {len(code)} lines"
