"""Part V RoPE additions against independent oracles written here.

Covered: apply_rope's ``rotary_dim`` and per-sequence positions, the ``longrope`` type of
rope_frequencies (and a transformers-5 ``rope_parameters`` dict), apply_rope_nd,
axial_rope_frequencies, apply_mrope and mrope_positions. Every oracle is a direct loop
over tokens and pairs with Python ``complex`` arithmetic (``(a + ib) * exp(i phi)``), the
frequencies from conftest's mpmath values, or a re-statement of the transformers code in
plain numpy; posenc's own output is never the expected value.
"""

from __future__ import annotations

import cmath
import math
import time

import numpy as np
import pytest
from conftest import EPS, rounded_omegas
from hypothesis import given
from hypothesis import strategies as st

import posenc
from posenc import (
    apply_mrope,
    apply_rope,
    apply_rope_nd,
    axial_rope_frequencies,
    mrope_positions,
    rope_frequencies,
)

layouts = st.sampled_from(["interleaved", "half"])


def pair_index(d: int, layout: str) -> list[tuple[int, int]]:
    half = d // 2
    return [(2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + half) for i in range(half)]


def loop_rotate(x, angle, layout: str, rot: int | None = None, scale: float = 1.0) -> np.ndarray:
    """Rotate pair j of row (n, tok) of x[..., L, d] by angle(n, tok, j) with Python complex numbers.

    ``n`` is the tuple of leading indices; only the first ``rot`` channels rotate (paired
    inside them by ``layout``), the others are copied.
    """
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    rot = d if rot is None else rot
    out = x.copy()
    for n in np.ndindex(x.shape[:-2]):
        for tok in range(x.shape[-2]):
            for j, (p, q) in enumerate(pair_index(rot, layout)):
                z = complex(x[n + (tok, p)], x[n + (tok, q)]) * cmath.exp(1j * angle(n, tok, j)) * scale
                out[n + (tok, p)], out[n + (tok, q)] = z.real, z.imag
    return out


def close(got, ref, x, scale: float = 1.0, slack: float = 8.0) -> None:
    """|got - ref| <= slack * eps * (|a| + |b|) * scale, per entry (rounding of two float64 rotations)."""
    bound = slack * EPS * (np.abs(np.asarray(x, dtype=np.float64)).max(initial=0.0) * 2 + 1e-300) * scale
    assert np.all(np.abs(np.asarray(got, dtype=np.float64) - ref) <= bound), float(np.max(np.abs(got - ref)))


# --------------------------------------------------------------------------- rotary_dim


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
    close(got, ref, x)
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


# --------------------------------------------------------------------------- per-sequence positions


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
    close(got, ref, x)


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


# --------------------------------------------------------------------------- longrope


LONG = {
    "rope_type": "longrope",
    "short_factor": [1.0, 2.0],
    "long_factor": [4.0, 8.0],
    "original_max_position_embeddings": 16,
    "max_position_embeddings": 64,
}


def test_longrope_hand_case():
    # d = 4, base 100: theta = (1, 0.1). s = 64 / 16 = 4 (no factor key), L0 = 16:
    # attention factor sqrt(1 + ln 4 / ln 16) = sqrt(1 + 1/2) = sqrt(1.5).
    att = math.sqrt(1.5)
    for seq_len, expected in [(None, [1.0, 0.05]), (16, [1.0, 0.05]), (17, [0.25, 0.0125])]:
        inv, a = rope_frequencies(4, 100.0, LONG, seq_len=seq_len, return_attention_factor=True)
        np.testing.assert_allclose(inv, expected, rtol=2 * EPS)
        assert a == pytest.approx(att, rel=2 * EPS)
    # an explicit factor wins over max_position_embeddings (as transformers' `if factor is None`)
    _, a = rope_frequencies(4, 100.0, {**LONG, "factor": 16.0}, return_attention_factor=True)
    assert a == pytest.approx(math.sqrt(2.0), rel=2 * EPS)  # 1 + ln 16 / ln 16
    # s <= 1: attention factor 1; an explicit attention_factor is used as it is
    _, a = rope_frequencies(4, 100.0, {**LONG, "max_position_embeddings": 16}, return_attention_factor=True)
    assert a == 1.0
    _, a = rope_frequencies(4, 100.0, {**LONG, "attention_factor": 0.75}, return_attention_factor=True)
    assert a == 0.75


@given(d=st.sampled_from([2, 8, 32]), seed=st.integers(0, 2**32 - 1), seq_len=st.integers(1, 10**6))
def test_longrope_matches_the_transformers_formula(d, seed, seq_len):
    rng = np.random.default_rng(seed)
    short, long = rng.uniform(0.5, 3.0, d // 2).tolist(), rng.uniform(1.0, 40.0, d // 2).tolist()
    orig, factor = 4096, float(rng.uniform(0.5, 64.0))
    sc = {"rope_type": "longrope", "short_factor": short, "long_factor": long}
    sc |= {"original_max_position_embeddings": orig, "factor": factor}
    inv, att = rope_frequencies(d, 10000.0, sc, seq_len=seq_len, return_attention_factor=True)
    ext = long if seq_len > orig else short
    expected = [w / e for w, e in zip(rounded_omegas(d), ext, strict=True)]
    np.testing.assert_allclose(inv, expected, rtol=2 * EPS)
    expected_att = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(orig))
    assert att == pytest.approx(expected_att, rel=4 * EPS)


@pytest.mark.parametrize("top", [15, 16])  # max position 15: short factors; 16 -> seq_len 17: long
def test_apply_rope_longrope_picks_factors_from_the_positions_and_scales(top):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4))
    pos = np.array([[0, 5, top], [1, 2, 3]])[:, :]  # per-sequence ids, max over both rows
    ext = [4.0, 8.0] if top == 16 else [1.0, 2.0]
    theta = [w / e for w, e in zip(rounded_omegas(4, 100.0), ext, strict=True)]
    got = apply_rope(x, pos, base=100.0, layout="half", scaling=LONG)
    ref = loop_rotate(
        x, lambda n, tok, j: float(np.float64(pos[n + (tok,)]) * theta[j]), "half", scale=math.sqrt(1.5)
    )
    close(got, ref, x, scale=1.5)


def test_transformers5_rope_parameters_dicts_as_they_stand():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 8))
    phi3 = {
        "rope_type": "longrope",
        "rope_theta": 10000.0,
        "partial_rotary_factor": 0.5,
        "short_factor": [1.0, 1.5],
        "long_factor": [2.0, 3.0],
        "original_max_position_embeddings": 4096,
        "factor": 32.0,
    }
    got = apply_rope(x, [0, 7, 9], layout="half", scaling=phi3, rotary_dim=4)
    theta = [w / e for w, e in zip(rounded_omegas(4), [1.0, 1.5], strict=True)]
    att = math.sqrt(1 + math.log(32.0) / math.log(4096))
    ref = loop_rotate(x, lambda n, tok, j: [0, 7, 9][tok] * theta[j], "half", rot=4, scale=att)
    close(got, ref, x, scale=att)
    plain = {"rope_type": "default", "rope_theta": 500000.0}
    got = apply_rope(x, [0, 7, 9], base=500000.0, scaling=plain)
    ref = loop_rotate(x, lambda n, tok, j: [0, 7, 9][tok] * rounded_omegas(8, 500000.0)[j], "interleaved")
    close(got, ref, x)


# --------------------------------------------------------------------------- N-D RoPE


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

    close(apply_rope_nd(x, coords, freqs, layout=layout), loop_rotate(x, angle, layout), x)


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
    close(got, ref, x)
    if layout == "interleaved":
        first = loop_rotate(x[:, :6], lambda n, tok, j: float(rc[tok, 0]) * w[j], "interleaved")
        close(got[:, :6], first, x)


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


# --------------------------------------------------------------------------- M-RoPE


def rotate_half(v):
    h = v.shape[-1] // 2
    return np.concatenate([-v[..., h:], v[..., :h]], axis=-1)


def transformers_mrope(x, positions, section, base=10000.0):
    """transformers 4.x ``apply_multimodal_rotary_pos_emb`` restated in numpy (float64)."""
    d = x.shape[-1]
    inv = np.array(rounded_omegas(d, base))
    freqs = positions[..., None].astype(np.float64) * inv  # (3, L, d/2)
    emb = np.concatenate([freqs, freqs], axis=-1)  # (3, L, d)
    cuts = np.cumsum(list(section) * 2)[:-1]
    cos = np.concatenate([m[i % 3] for i, m in enumerate(np.split(np.cos(emb), cuts, axis=-1))], axis=-1)
    sin = np.concatenate([m[i % 3] for i, m in enumerate(np.split(np.sin(emb), cuts, axis=-1))], axis=-1)
    return x * cos + rotate_half(x) * sin


@given(seed=st.integers(0, 2**32 - 1), section=st.sampled_from([(1, 2, 1), (2, 1, 1), (0, 3, 1), (4, 0, 0)]))
def test_apply_mrope_matches_the_transformers_construction(seed, section):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 5, 8))
    positions = rng.integers(0, 3000, size=(3, 5))
    got = apply_mrope(x, positions, list(section))
    ref = transformers_mrope(x, positions, section)
    np.testing.assert_allclose(got, ref, rtol=0, atol=16 * EPS * 3000 * np.abs(x).max())
    # and the pair-by-pair statement: pair j turns by the axis whose section holds j
    axis_of = [a for a, n in enumerate(section) for _ in range(n)]
    theta = rounded_omegas(8)
    loop = loop_rotate(x, lambda n, tok, j: float(positions[axis_of[j], tok]) * theta[j], "half")
    close(got, loop, x)


def test_mrope_with_equal_ids_is_one_dimensional_rope_in_half_layout():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 6, 16))
    ids = rng.integers(0, 10**5, size=6)
    theta = rounded_omegas(16)
    got = apply_mrope(x, np.stack([ids] * 3), [2, 3, 3])
    close(got, loop_rotate(x, lambda n, tok, j: float(ids[tok]) * theta[j], "half"), x)
    # per-sequence ids (3, B, 1, L)
    ids2 = rng.integers(0, 100, size=(2, 1, 6))
    got = apply_mrope(x, np.stack([ids2] * 3), [2, 3, 3])
    close(got, loop_rotate(x, lambda n, tok, j: float(ids2[n[0], 0, tok]) * theta[j], "half"), x)


def test_mrope_positions_hand_examples():
    # text 2, a 1 x 2 x 3 image grid, text 2 (worked out from the Qwen2-VL rule):
    # text 0, 1; grid starts at s = 2: t = 2, h = 2..3, w = 2..4 (row-major); its largest id
    # is 4, so the text continues at 5.
    got = mrope_positions([2, (1, 2, 3), 2])
    assert got.dtype == np.int64
    assert got.tolist() == [
        [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
        [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
        [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
    ]
    # a video of 3 frames of 1 x 2 patches first: t = 0, 1, 2 -> next start max(3, 1, 2) = 3;
    # then two adjacent 1 x 1 grids at 3 and 4, and one text token at 5.
    assert mrope_positions([(3, 1, 2), (1, 1, 1), (1, 1, 1), 1]).tolist() == [
        [0, 0, 1, 1, 2, 2, 3, 4, 5],
        [0, 0, 0, 0, 0, 0, 3, 4, 5],
        [0, 1, 0, 1, 0, 1, 3, 4, 5],
    ]
    assert mrope_positions([4]).tolist() == [[0, 1, 2, 3]] * 3


def get_rope_index_4x(segments):
    """The loop of transformers 4.x ``Qwen2VLModel.get_rope_index`` for one sequence, in numpy."""
    pieces = []
    for seg in segments:
        start = int(pieces[-1].max()) + 1 if pieces else 0
        if isinstance(seg, int):
            pieces.append(np.tile(np.arange(seg), (3, 1)) + start)
        else:
            t, h, w = seg
            t_index = np.repeat(np.arange(t), h * w)
            h_index = np.tile(np.repeat(np.arange(h), w), t)
            w_index = np.tile(np.arange(w), t * h)
            pieces.append(np.stack([t_index, h_index, w_index]) + start)
        if pieces[-1].size == 0:
            pieces.pop()  # an empty text run: transformers computes the next start from the grid
    return np.concatenate(pieces, axis=1)


@given(
    st.lists(
        st.one_of(st.integers(0, 4), st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4))),
        min_size=1,
        max_size=6,
    ).filter(lambda s: any(x != 0 for x in s))
)
def test_mrope_positions_match_the_get_rope_index_loop(segments):
    np.testing.assert_array_equal(mrope_positions(segments), get_rope_index_4x(segments))


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
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"n_axes"):
        posenc.axial_rope_frequencies(65536, 16384)
    assert time.perf_counter() - t0 < 1.0
    assert posenc.axial_rope_frequencies(8, 2).shape == (2, 4)
