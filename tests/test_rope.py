"""posenc.rope against independent references.

Expected values come from hand-derived small cases and complex multiplication
``(a + ib) * exp(i m theta)`` in mpmath or plain Python ``complex`` (never posenc itself).
The ``rope_type`` scalings are tested in tests/test_rope_scaling.py.
"""

from __future__ import annotations

import cmath
import math

import mpmath
import numpy as np
import pytest
from conftest import (
    EPS,
    MP_PREC,
    RNG_SEED,
    angle_atol,
    ref_rope_complex,
    refuses,
    rounded_omegas,
    yarn_frequencies,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
from posenc import apply_rope, rope_decay_bound, rope_frequencies, rope_matrix

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("d,base", [(2, 10000.0), (8, 10000.0), (64, 10000.0), (128, 500000.0)])
def test_default_frequencies_are_correctly_rounded(d, base):
    got = rope_frequencies(d, base)
    assert got.dtype == np.float64 and got.shape == (d // 2,)
    assert got.tolist() == rounded_omegas(d, base)


def test_frequencies_hand_values():
    # base 100, d = 4: 100**0 = 1 and 100**(-1/2) = 0.1
    np.testing.assert_allclose(rope_frequencies(4, 100.0), [1.0, 0.1], rtol=1e-15)


def test_hand_case_d4():
    # theta = (1, 0.1) for base 100; position 1: pair 0 (1, 0) -> (cos 1, sin 1),
    # pair 1 (0, 1) -> (-sin 0.1, cos 0.1).
    x = np.array([[1.0, 0.0, 0.0, 1.0]])
    got = apply_rope(x, [1], base=100.0)
    expected = [math.cos(1), math.sin(1), -math.sin(0.1), math.cos(0.1)]
    np.testing.assert_allclose(got[0], expected, rtol=0, atol=4 * EPS)
    # the same numbers in the half layout: pairs (0, 2) and (1, 3)
    x_half = np.array([[1.0, 0.0, 0.0, 1.0]])
    got_half = apply_rope(x_half, [1], base=100.0, layout="half")
    expected_half = [math.cos(1), -math.sin(0.1), math.sin(1), math.cos(0.1)]
    np.testing.assert_allclose(got_half[0], expected_half, rtol=0, atol=4 * EPS)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_against_mpmath_complex_multiplication(layout):
    rng = np.random.default_rng(RNG_SEED)
    d, positions = 16, [0, 1, 7, -3, 1000, 123456, 2.5]
    x = rng.standard_normal((len(positions), d))
    got = apply_rope(x, positions, layout=layout)
    expected = ref_rope_complex(x, positions, rounded_omegas(d), layout)
    np.testing.assert_allclose(got, expected, rtol=0, atol=angle_atol(positions, np.abs(x).max()))


def test_interleaved_is_gptj_rotate_every_two_and_half_is_rotate_half():
    # Both written here in the elementwise form x * cos + rot(x) * sin used by public code.
    rng = np.random.default_rng(RNG_SEED + 1)
    d, L = 12, 9
    x = rng.standard_normal((2, L, d))
    theta = np.array(rounded_omegas(d))
    ang = np.arange(L)[:, None] * theta[None, :]
    rot_two = np.stack([-x[..., 1::2], x[..., 0::2]], axis=-1).reshape(x.shape)
    gptj = x * np.repeat(np.cos(ang), 2, axis=-1) + rot_two * np.repeat(np.sin(ang), 2, axis=-1)
    np.testing.assert_allclose(apply_rope(x), gptj, atol=1e-13)
    rot_half = np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], axis=-1)
    cos2, sin2 = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))
    neox = x * cos2 + rot_half * sin2
    np.testing.assert_allclose(apply_rope(x, layout="half"), neox, atol=1e-13)


def test_meta_llama_complex_view():
    # Meta's reference: view the last axis as d/2 complex numbers (x[2i] + i x[2i+1]).
    rng = np.random.default_rng(RNG_SEED + 2)
    d, L = 8, 6
    x = rng.standard_normal((L, d))
    theta = rounded_omegas(d)
    expected = np.empty_like(x)
    for m in range(L):
        for i, th in enumerate(theta):
            z = complex(x[m, 2 * i], x[m, 2 * i + 1]) * cmath.exp(1j * m * th)
            expected[m, 2 * i], expected[m, 2 * i + 1] = z.real, z.imag
    np.testing.assert_allclose(apply_rope(x), expected, atol=1e-14)


def test_offset_decoding_positions():
    rng = np.random.default_rng(RNG_SEED + 3)
    x = rng.standard_normal((3, 40, 8))
    full = apply_rope(x)
    tail = apply_rope(x[:, 30:], np.arange(30, 40))
    np.testing.assert_allclose(tail, full[:, 30:], rtol=0, atol=0)
    # integer and float positions give identical angles
    assert np.array_equal(
        apply_rope(x[:, :5], np.arange(5, dtype=np.int64)), apply_rope(x[:, :5], np.arange(5.0))
    )


def test_positions_beyond_int32_are_not_truncated():
    x = np.ones((1, 2))
    p = 2**40 + 3
    got = apply_rope(x, np.array([p], dtype=np.int64), base=100.0)
    z = complex(1.0, 1.0) * cmath.exp(1j * float(p))  # theta_0 = 1 exactly
    with mpmath.workprec(200):
        exact = mpmath.mpc(1, 1) * mpmath.expj(mpmath.mpf(p))
    np.testing.assert_allclose(got[0], [float(exact.real), float(exact.imag)], atol=1e-15)
    np.testing.assert_allclose(got[0], [z.real, z.imag], atol=1e-15)


def test_dtypes():
    rng = np.random.default_rng(RNG_SEED + 4)
    x64 = rng.standard_normal((5, 8))
    x32 = x64.astype(np.float32)
    got32 = apply_rope(x32, np.arange(5) + 70000)
    assert got32.dtype == np.float32
    expected = apply_rope(x32.astype(np.float64), np.arange(5) + 70000).astype(np.float32)
    assert np.array_equal(got32, expected)  # float64 arithmetic, one final rounding
    assert apply_rope(x64.astype(np.float16)).dtype == np.float16
    xi = np.arange(8).reshape(1, 8)
    assert apply_rope(xi).dtype == np.float64
    np.testing.assert_allclose(apply_rope(xi), apply_rope(xi.astype(float)), atol=0)


@given(
    d=st.sampled_from([2, 4, 8, 16, 32]),
    m=st.integers(-10_000, 10_000),
    n=st.integers(-10_000, 10_000),
    seed=st.integers(0, 2**32 - 1),
    layout=st.sampled_from(["interleaved", "half"]),
)
def test_relative_position_property(d, m, n, seed, layout):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 1, d))
    lhs = float(apply_rope(q, [m], layout=layout)[0] @ apply_rope(k, [n], layout=layout)[0])
    rhs = float(apply_rope(q, [m - n], layout=layout)[0] @ k[0])
    scale = float(np.linalg.norm(q) * np.linalg.norm(k))
    assert abs(lhs - rhs) <= (abs(m) + abs(n) + abs(m - n) + 8) * 4 * EPS * scale


@given(seed=st.integers(0, 2**32 - 1), layout=st.sampled_from(["interleaved", "half"]))
def test_norm_preserved(seed, layout):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 7, 16)) * 10
    pos = rng.integers(-(10**6), 10**6, size=7)
    got = apply_rope(x, pos, layout=layout)
    np.testing.assert_allclose(np.linalg.norm(got, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-14)


def test_scaled_apply_matches_complex_reference():
    rng = np.random.default_rng(RNG_SEED + 5)
    d, positions = 16, np.arange(0, 5000, 499)
    x = rng.standard_normal((positions.size, d))
    sc = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}
    att = 0.1 * math.log(4.0) + 1
    got = apply_rope(x, positions, scaling=sc)
    expected = ref_rope_complex(x, positions, yarn_frequencies(d, 10000.0, 4.0, 2048), scale=att)
    np.testing.assert_allclose(got, expected, atol=angle_atol(positions, np.abs(x).max() * att))
    np.testing.assert_allclose(np.linalg.norm(got, axis=-1), att * np.linalg.norm(x, axis=-1), rtol=1e-14)
    lin = {"rope_type": "linear", "factor": 4.0}
    # position interpolation: position p with factor 4 is position p/4 unscaled
    np.testing.assert_allclose(
        apply_rope(x, positions, scaling=lin), apply_rope(x, positions / 4.0), atol=1e-12
    )


def test_rope_matrix_is_the_same_map_and_a_group():
    rng = np.random.default_rng(RNG_SEED + 7)
    d = 8
    x = rng.standard_normal((1, d))
    for layout in ("interleaved", "half"):
        r5 = rope_matrix(d, 5, layout=layout)
        np.testing.assert_allclose(x @ r5.T, apply_rope(x, [5], layout=layout), atol=1e-15)
        np.testing.assert_allclose(r5.T @ r5, np.eye(d), atol=1e-15)
        np.testing.assert_allclose(
            rope_matrix(d, 2, layout=layout) @ rope_matrix(d, 3, layout=layout), r5, atol=1e-15
        )
    # interleaved block 0 is [[cos, -sin], [sin, cos]] of angle 5
    r = rope_matrix(d, 5)
    np.testing.assert_allclose(
        r[:2, :2], [[math.cos(5), -math.sin(5)], [math.sin(5), math.cos(5)]], atol=1e-15
    )


def test_decay_bound_reference():
    d = 8
    theta = rounded_omegas(d)
    for r in (0, 1, 10, 37.5, 250):
        partial, total = 0j, 0.0
        for th in theta:
            partial += cmath.exp(1j * r * th)
            total += abs(partial)
        assert rope_decay_bound(d, distances=[r])[0] == pytest.approx(total / (d // 2), rel=1e-13)
    # at distance 0 every phase is 1: mean of 1..d/2 = (d/2 + 1) / 2
    assert rope_decay_bound(128, distances=[0])[0] == pytest.approx(32.5, rel=1e-15)


def test_decay_bound_bounds_the_score():
    # |sum_i h_i e^{i r theta_i}| <= max|h_{i+1} - h_i| * sum_j |S_j| with h_{d/2} = 0
    rng = np.random.default_rng(RNG_SEED + 8)
    d = 32
    theta = np.array(rounded_omegas(d))
    for _ in range(20):
        h = rng.standard_normal(d // 2) + 1j * rng.standard_normal(d // 2)
        hh = np.append(h, 0)
        for r in (1, 5, 50, 300):
            lhs = abs(np.sum(h * np.exp(1j * r * theta)))
            rhs = np.abs(np.diff(hh)).max() * rope_decay_bound(d, distances=[r])[0] * (d // 2)
            assert lhs <= rhs * (1 + 1e-12)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"d_head": 7}, ValueError, "d_head must be even"),
        ({"d_head": 0}, ValueError, "d_head"),
        ({"d_head": 8, "base": 1.0}, ValueError, "base"),
        ({"d_head": 8, "scaling": {"rope_type": "proportional"}}, ValueError, "unknown rope_type"),
        ({"d_head": 8, "scaling": {"rope_type": "longrope"}}, ValueError, "short_factor"),
        ({"d_head": 8, "scaling": {"factor": 2.0}}, ValueError, "rope_type"),
        ({"d_head": 8, "scaling": {"rope_type": "linear", "type": "yarn", "factor": 2}}, ValueError, "agree"),
        ({"d_head": 8, "scaling": {"rope_type": "linear"}}, ValueError, "'factor'"),
        ({"d_head": 8, "scaling": {"rope_type": "linear", "factor": 0.0}}, ValueError, "factor"),
        ({"d_head": 8, "scaling": {"rope_type": "linear", "factor": -2.0}}, ValueError, "factor"),
        ({"d_head": 8, "scaling": {"rope_type": "linear", "factor": "2"}}, TypeError, "factor"),
        ({"d_head": 8, "scaling": {"rope_type": "yarn", "factor": 2.0}}, ValueError, "original_max_position"),
        (
            {
                "d_head": 8,
                "scaling": {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 8},
            },
            ValueError,
            "seq_len",
        ),
        (
            {
                "d_head": 8,
                "scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4},
            },
            ValueError,
            "original_max_position_embeddings",
        ),
        (
            {"d_head": 8, "scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1}},
            ValueError,
            "high_freq_factor",
        ),
        (
            {
                "d_head": 8,
                "scaling": {
                    "rope_type": "llama3",
                    "factor": 8,
                    "low_freq_factor": 4,
                    "high_freq_factor": 1,
                    "original_max_position_embeddings": 64,
                },
            },
            ValueError,
            "high_freq_factor > low_freq_factor",
        ),
        (
            {
                "d_head": 8,
                "scaling": {
                    "rope_type": "yarn",
                    "factor": 2,
                    "original_max_position_embeddings": 64,
                    "beta_fast": 1,
                    "beta_slow": 32,
                },
            },
            ValueError,
            "beta_fast > beta_slow",
        ),
        ({"d_head": 8, "scaling": [("rope_type", "linear")]}, TypeError, "scaling"),
    ],
)
def test_frequency_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        rope_frequencies(**kwargs)


def test_apply_errors():
    x = np.zeros((3, 8))
    with pytest.raises(ValueError, match="layout"):
        apply_rope(x, layout="neox")
    with pytest.raises(ValueError, match="length 3"):
        apply_rope(x, [0, 1])
    with pytest.raises(ValueError, match="d_head"):
        apply_rope(np.zeros((3, 7)))
    with pytest.raises(ValueError, match="at least 2"):
        apply_rope(np.zeros(8))
    with pytest.raises(ValueError, match="finite"):
        apply_rope(x, [0, np.nan, 2])
    with pytest.raises(TypeError, match="x"):
        apply_rope(np.array([["a", "b"]]))


LIMIT = 2**53

even_d = st.sampled_from([2, 4, 6, 8, 12, 16])


def rope_reference(x: np.ndarray, positions, d: int, layout: str) -> np.ndarray:
    """Each pair as a complex number times exp(i m theta) in mpmath (theta rounded once)."""
    thetas = rounded_omegas(d)
    out = np.empty_like(x, dtype=np.float64)
    with mpmath.workprec(MP_PREC):
        for row, m in enumerate(positions):
            for i, th in enumerate(thetas):
                a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
                z = mpmath.mpc(float(x[row, a]), float(x[row, b])) * mpmath.expj(
                    mpmath.mpf(float(m)) * mpmath.mpf(th)
                )
                out[row, a], out[row, b] = float(z.real), float(z.imag)
    return out


@settings(max_examples=30)
@given(
    d=st.sampled_from([2, 4, 8]),
    length=st.integers(1, 5),
    layout=st.sampled_from(["interleaved", "half"]),
    integer_x=st.booleans(),
    data=st.data(),
)
def test_apply_rope_and_rope_matrix_match_complex_rotation(d, length, layout, integer_x, data):
    positions = data.draw(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=length, max_size=length))
    values = data.draw(st.lists(st.integers(-50, 50), min_size=length * d, max_size=length * d))
    x = np.array(values, dtype=np.int32 if integer_x else np.float64).reshape(length, d)
    got = posenc.apply_rope(x.tolist(), tuple(positions), layout=layout)
    ref = rope_reference(x, positions, d, layout)
    # the angle fl(m * theta) is off by <= |m| theta 2^-53; cos/sin and the products add a few ulp
    atol = (max(abs(p) for p in positions) * 2 * EPS + 16 * EPS) * 50 * 2
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, ref, rtol=0, atol=atol)
    m = positions[0]
    rm = posenc.rope_matrix(d, m, layout=layout)
    ref_m = rope_reference(np.eye(d), [m] * d, d, layout).T  # columns: rotated unit vectors
    np.testing.assert_allclose(rm, ref_m, rtol=0, atol=(abs(m) * 2 * EPS + 16 * EPS) * 2)


@settings(max_examples=20)
@given(m=st.one_of(st.integers(-LIMIT, LIMIT), st.floats(-float(LIMIT), float(LIMIT))), d=even_d)
def test_apply_rope_keeps_every_pair_length_up_to_2_53(m, d):
    # Rotations preserve |a + ib|: an oracle that holds at every position, however large.
    x = np.arange(1.0, d + 1.0)[None, :]
    got = posenc.apply_rope(x, [m])
    pairs_in = np.hypot(x[0, 0::2], x[0, 1::2])
    pairs_out = np.hypot(got[0, 0::2], got[0, 1::2])
    np.testing.assert_allclose(pairs_out, pairs_in, rtol=8 * EPS)


@settings(max_examples=30)
@given(
    d=st.sampled_from([2, 4, 8]),
    rows=st.integers(1, 4),
    layout=st.sampled_from(["interleaved", "half"]),
    angle_dtype=st.sampled_from([np.float64, np.float32, np.int64]),
    data=st.data(),
)
def test_rotate_by_angles_matches_complex_rotation(d, rows, layout, angle_dtype, data):
    values = data.draw(st.lists(st.integers(-50, 50), min_size=rows * d, max_size=rows * d))
    x = np.array(values, dtype=np.float64).reshape(rows, d)
    flat = data.draw(
        st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=rows * d // 2, max_size=rows * d // 2)
    )
    angles = np.array(flat).astype(angle_dtype).reshape(rows, d // 2)
    got = posenc.rotate_by_angles(x.tolist(), angles, layout=layout)
    assert got.dtype == np.float64 and got.shape == (rows, d)
    with mpmath.workprec(MP_PREC):  # each pair times exp(i phi), phi the given angle exactly
        for r in range(rows):
            for i in range(d // 2):
                a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
                z = mpmath.mpc(x[r, a], x[r, b]) * mpmath.expj(mpmath.mpf(float(angles[r, i])))
                # cos and sin within an ulp, the complex product within 2 roundings: |a| + |b| <= 100
                assert abs(got[r, a] - float(z.real)) <= 100 * 4 * EPS
                assert abs(got[r, b] - float(z.imag)) <= 100 * 4 * EPS


def test_rotate_by_angles_broadcasts_and_agrees_with_apply_rope():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 3, 8)).astype(np.float32)
    theta = posenc.rope_frequencies(8)
    for m in (0.0, 3.0, 1e6, float(2**40)):
        # the same float64 angles m * theta: the same bits as apply_rope (one kernel)
        np.testing.assert_array_equal(posenc.rotate_by_angles(x, m * theta), posenc.apply_rope(x, [m] * 3))
    # a 1-D vector, and one angle per vector broadcast over the pairs
    np.testing.assert_allclose(posenc.rotate_by_angles([1, 0], [math.pi / 2]), [0.0, 1.0], atol=2 * EPS)
    per_vector = posenc.rotate_by_angles(np.ones((3, 4)), np.array([[0.0], [math.pi], [math.pi / 2]]))
    np.testing.assert_allclose(per_vector, [[1, 1, 1, 1], [-1, -1, -1, -1], [-1, 1, -1, 1]], atol=4 * EPS)
    # float32 angles are used as they are: exactly the float64 rotation by their values
    a32 = (np.arange(1, 5) * np.float32(0.1)).astype(np.float32)
    np.testing.assert_array_equal(
        posenc.rotate_by_angles(np.ones(8), a32), posenc.rotate_by_angles(np.ones(8), a32.astype(np.float64))
    )


ROTATE_BY_ANGLES_BAD = [
    (lambda: posenc.rotate_by_angles(np.ones((2, 5)), np.zeros(2)), ValueError, "x.shape[-1]"),
    (lambda: posenc.rotate_by_angles(np.ones((2, 4)), np.zeros(3)), ValueError, "angles"),
    (lambda: posenc.rotate_by_angles(np.ones((2, 4)), np.zeros((3, 2))), ValueError, "angles"),
    (lambda: posenc.rotate_by_angles(np.ones((2, 4)), [0.0, NAN]), ValueError, "angles"),
    (lambda: posenc.rotate_by_angles(np.ones((2, 4)), [0.0, INF]), ValueError, "angles"),
    (lambda: posenc.rotate_by_angles(np.ones((2, 4)), [0j, 1j]), TypeError, "angles"),
    (lambda: posenc.rotate_by_angles(np.ones((2, 4)), [True, False]), TypeError, "angles"),
    (lambda: posenc.rotate_by_angles(np.ones((2, 4)), np.zeros((2, 0))), ValueError, "angles"),
    (lambda: posenc.rotate_by_angles(np.ones((2, 4)) + 0j, [0.0, 1.0]), TypeError, "x"),
    (lambda: posenc.rotate_by_angles(np.array([1.0, NAN]), [0.0]), ValueError, "x"),
    (lambda: posenc.rotate_by_angles(np.ones(0), [0.0]), ValueError, "x"),
    (lambda: posenc.rotate_by_angles(1.0, [0.0]), ValueError, "x"),
    (lambda: posenc.rotate_by_angles(np.ones(4), [0.0, 1.0], layout="neox"), ValueError, "layout"),
    (lambda: posenc.rotate_by_angles(np.full(2, 6e4, dtype=np.float16), [0.7]), ValueError, "x"),
]


@pytest.mark.parametrize(
    ("site", "exc", "name"),
    ROTATE_BY_ANGLES_BAD,
    ids=[f"{n}-{i}" for i, (_, _, n) in enumerate(ROTATE_BY_ANGLES_BAD)],
)
def test_rotate_by_angles_refuses_bad_input(site, exc, name):
    refuses(exc, name, site)


@settings(max_examples=25)
@given(
    d=st.sampled_from([2, 4, 8, 16]),
    distances=st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=1, max_size=4),
)
def test_rope_decay_bound_matches_partial_sums(d, distances):
    thetas = rounded_omegas(d)
    expected = []
    for r in distances:
        partial, total = 0j, 0.0
        for th in thetas:
            partial += cmath.exp(1j * r * th)
            total += abs(partial)
        expected.append(total / (d // 2))
    got = posenc.rope_decay_bound(d, distances=tuple(distances))
    tol = (max(abs(r) for r in distances) + 1) * d * d * EPS * 4
    np.testing.assert_allclose(got, expected, rtol=0, atol=tol)


def test_rope_decay_bound_takes_distances_by_keyword_only():
    # rope_decay_bound(4, 3) read as (d_head, distances) or (distances, d_head)? Neither:
    refuses(TypeError, "positional", posenc.rope_decay_bound, 4, 3)
    assert posenc.rope_decay_bound(4, distances=[0])[0] == pytest.approx(1.5, rel=EPS)  # (|1| + |2|)/2


def test_positions_at_2_53_and_containers_are_accepted():
    x = np.arange(16.0).reshape(1, 2, 8) / 7
    ids = [[0, 2**53]]  # a nested list of ints, shape (1, 2) for x of shape (1, 2, 8)
    theta = rounded_omegas(8)
    got = posenc.apply_rope(x, ids)
    for tok, m in enumerate((0, 2**53)):
        for i, w in enumerate(theta):
            z = complex(x[0, tok, 2 * i], x[0, tok, 2 * i + 1]) * cmath.exp(1j * float(np.float64(m) * w))
            assert abs(got[0, tok, 2 * i] - z.real) <= 16 * EPS * 4
            assert abs(got[0, tok, 2 * i + 1] - z.imag) <= 16 * EPS * 4


def test_pass_through_channels_are_checked_for_nan():
    x = np.ones((2, 8))
    x[1, 6] = NAN
    refuses(ValueError, "x", posenc.apply_rope, x, rotary_dim=4)
