"""posenc.rope_nd and apply_rope's Part V arguments against independent oracles.

Covered: apply_rope's ``rotary_dim`` and per-sequence positions, apply_rope_nd and
axial_rope_frequencies (M-RoPE is in tests/test_mrope.py, the ``longrope`` scaling in
tests/test_rope_scaling.py). Every oracle is a direct loop over tokens and pairs with
Python ``complex`` arithmetic (``(a + ib) * exp(i phi)``), the frequencies from conftest's
mpmath values; posenc's own output is never the expected value.
"""

from __future__ import annotations

import cmath
import time

import numpy as np
import pytest
from conftest import EPS, assert_rotation_close, loop_rotate, rounded_omegas
from hypothesis import given
from hypothesis import strategies as st

import posenc
from posenc import (
    apply_rope,
    apply_rope_nd,
    axial_rope_frequencies,
)

layouts = st.sampled_from(["interleaved", "half"])


@given(
    seed=st.integers(0, 2**32 - 1),
    layout=layouts,
    half=st.integers(1, 6),
    data=st.data(),
    lead=st.lists(st.integers(1, 3), max_size=2),
)
def test_rotary_dim_rotates_the_first_channels_only(seed, layout, half, data, lead):
    d = 2 * half
    rot = 2 * data.draw(st.integers(1, half))
    rng = np.random.default_rng(seed)
    length = int(rng.integers(1, 5))
    x = rng.standard_normal((*lead, length, d))
    pos = rng.integers(-(10**6), 10**6, size=length)
    theta = rounded_omegas(rot, 10000.0)  # a rot-dimensional RoPE's frequencies
    got = apply_rope(x, pos, layout=layout, rotary_dim=rot)
    ref = loop_rotate(x, lambda n, tok, j: float(np.float64(pos[tok]) * theta[j]), layout, rot)
    assert_rotation_close(got, ref, x)
    assert np.array_equal(got[..., rot:], x[..., rot:])  # passed through bit for bit


def test_rotary_dim_hand_case_gpt_neox_half_layout():
    # d = 6, rotary_dim = 4, half layout inside the first 4 channels: pairs (0, 2), (1, 3)
    # with theta = 100**0 = 1 and 100**(-1/2) = 0.1; position 2: angles 2 and 0.2.
    x = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]])
    got = apply_rope(x, [2], base=100.0, layout="half", rotary_dim=4)
    z0 = complex(1.0, 3.0) * cmath.exp(2j)
    z1 = complex(2.0, 4.0) * cmath.exp(0.2j)
    expected = [z0.real, z1.real, z0.imag, z1.imag, 5.0, 6.0]
    np.testing.assert_allclose(got[0], expected, rtol=0, atol=8 * EPS * 8)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rotary_dim_equal_to_d_head_is_plain_rope(layout):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    pos = rng.integers(0, 5000, size=5)
    assert np.array_equal(apply_rope(x, pos, layout=layout, rotary_dim=8), apply_rope(x, pos, layout=layout))


@given(seed=st.integers(0, 2**32 - 1), layout=layouts, kind=st.sampled_from(["B1L", "BHL", "HL", "11L"]))
def test_per_sequence_positions_against_a_loop(seed, layout, kind):
    rng = np.random.default_rng(seed)
    b, h, length, d = 2, 3, 4, 6
    x = rng.standard_normal((b, h, length, d))
    shape = {"B1L": (b, 1, length), "BHL": (b, h, length), "HL": (h, length), "11L": (1, 1, length)}[kind]
    pos = rng.integers(-(2**40), 2**40, size=shape)
    theta = rounded_omegas(d)
    full = np.broadcast_to(pos, (b, h, length))
    got = apply_rope(x, pos, layout=layout)
    ref = loop_rotate(x, lambda n, tok, j: float(np.float64(full[n + (tok,)]) * theta[j]), layout)
    assert_rotation_close(got, ref, x)


def test_equal_rows_of_positions_give_one_dimensional_rope_exactly():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 2, 7, 10))
    pos = rng.integers(0, 10**9, size=7)
    for layout in ("interleaved", "half"):
        one = apply_rope(x, pos, layout=layout)
        assert np.array_equal(apply_rope(x, np.tile(pos, (3, 1, 1)), layout=layout), one)
        assert np.array_equal(apply_rope(x, np.tile(pos, (3, 2, 1)), layout=layout), one)


def test_left_padding_reproduces_the_unpadded_scores():
    # Two sequences of 5 and 3 tokens, the second left-padded by 2 junk tokens whose ids
    # are 1 (as transformers' generate). Scores among real tokens equal the unpadded ones.
    rng = np.random.default_rng(3)
    d = 8
    q_a, k_a = rng.standard_normal((2, 5, d))
    q_b, k_b = rng.standard_normal((2, 3, d))
    junk = rng.standard_normal((2, 2, d))
    q = np.stack([q_a, np.concatenate([junk[0], q_b])])[:, None]  # (B, 1 head, L, d)
    k = np.stack([k_a, np.concatenate([junk[1], k_b])])[:, None]
    ids = np.array([[0, 1, 2, 3, 4], [1, 1, 0, 1, 2]])[:, None, :]  # (B, 1, L)
    rq, rk = apply_rope(q, ids, layout="half"), apply_rope(k, ids, layout="half")
    theta = rounded_omegas(d)

    def scores(qs, ks):  # the unpadded sequence rotated at 0..n-1 by the loop oracle
        rot = [loop_rotate(v[None], lambda _, tok, j: tok * theta[j], "half")[0] for v in (qs, ks)]
        return rot[0] @ rot[1].T

    np.testing.assert_allclose(rq[0, 0] @ rk[0, 0].T, scores(q_a, k_a), rtol=0, atol=1e-13)
    np.testing.assert_allclose(rq[1, 0, 2:] @ rk[1, 0, 2:].T, scores(q_b, k_b), rtol=0, atol=1e-13)


@given(seed=st.integers(0, 2**32 - 1), layout=layouts, n_axes=st.integers(1, 4), half=st.integers(1, 5))
def test_apply_rope_nd_against_a_loop(seed, layout, n_axes, half):
    rng = np.random.default_rng(seed)
    d, length = 2 * half, int(rng.integers(1, 5))
    x = rng.standard_normal((2, length, d))
    coords = rng.integers(-1000, 1000, size=(2, length, n_axes))
    freqs = rng.standard_normal((n_axes, half))

    def angle(n, tok, j):  # the documented float64 sum, axis 0 first
        total = float(coords[n + (tok, 0)]) * float(freqs[0, j])
        for a in range(1, n_axes):
            total += float(coords[n + (tok, a)]) * float(freqs[a, j])
        return total

    assert_rotation_close(apply_rope_nd(x, coords, freqs, layout=layout), loop_rotate(x, angle, layout), x)


def test_axial_rope_frequencies_hand_values():
    np.testing.assert_array_equal(axial_rope_frequencies(8, 2, base=100.0), [[1, 0.1, 0, 0], [0, 0, 1, 0.1]])
    # d = 12, 3 axes: blocks of 2 pairs, each the frequencies of a 4-dimensional RoPE
    w = rounded_omegas(4, 10000.0)
    expected = np.zeros((3, 6))
    for a in range(3):
        expected[a, 2 * a : 2 * a + 2] = w
    np.testing.assert_array_equal(axial_rope_frequencies(12, 3), expected)
    np.testing.assert_array_equal(axial_rope_frequencies(16, 1), [rounded_omegas(16)])


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_axial_rope_is_one_dimensional_rope_on_each_block(layout):
    # interleaved: channels 0..d/2-1 get 1-D RoPE (width d/2) at the row r, the rest at
    # the column c. half: block a is pairs a*b..a*b+b-1 of the (j, j + d/2) pairing.
    rng = np.random.default_rng(6)
    d = 12
    x = rng.standard_normal((4, d))
    rc = np.array([[0, 0], [3, 1], [2, 5], [7, 7]])
    w = rounded_omegas(d // 2)
    got = apply_rope_nd(x, rc, axial_rope_frequencies(d, 2), layout=layout)
    ref = loop_rotate(x, lambda n, tok, j: float(rc[tok, j // 3]) * w[j % 3], layout)
    assert_rotation_close(got, ref, x)
    if layout == "interleaved":
        first = loop_rotate(x[:, :6], lambda n, tok, j: float(rc[tok, 0]) * w[j], "interleaved")
        assert_rotation_close(got[:, :6], first, x)


@given(seed=st.integers(0, 2**32 - 1), n_axes=st.integers(1, 3))
def test_nd_rope_is_relative(seed, n_axes):
    # <R(c) q, R(c') k> = <q, R(c' - c) k> for integer coordinates (any dense freqs)
    rng = np.random.default_rng(seed)
    d = 6
    q, k = rng.standard_normal((2, 1, d))
    freqs = rng.uniform(-1.0, 1.0, (n_axes, d // 2))
    c1, c2 = rng.integers(-50, 50, size=(2, 1, n_axes))
    left = float((apply_rope_nd(q, c1, freqs) @ apply_rope_nd(k, c2, freqs).T)[0, 0])
    right = float((q @ apply_rope_nd(k, c2 - c1, freqs).T)[0, 0])
    assert abs(left - right) <= 1e-12 * (1 + abs(left))


def test_float32_input_keeps_its_dtype_with_rotary_dim_and_nd():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    out = posenc.apply_rope(x, np.zeros((2, 3), dtype=np.int64), rotary_dim=4)
    assert out.dtype == np.float32 and np.array_equal(out, x)  # position 0 rotates by nothing
    out = posenc.apply_rope_nd(x, np.zeros((3, 2)), posenc.axial_rope_frequencies(8))
    assert out.dtype == np.float32 and np.array_equal(out, x)
    out = posenc.apply_mrope(x, np.zeros((3, 3), dtype=np.int32), (2, 1, 1))
    assert out.dtype == np.float32 and np.array_equal(out, x)


def test_axial_frequency_matrix_has_a_size_limit():
    t0 = time.process_time()
    with pytest.raises(ValueError, match=r"n_axes"):
        posenc.axial_rope_frequencies(65536, 16384)
    assert time.process_time() - t0 < 1.0
    assert posenc.axial_rope_frequencies(8, 2).shape == (2, 4)
