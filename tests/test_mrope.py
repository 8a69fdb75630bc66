"""posenc.mrope: Qwen2-VL's multimodal RoPE against transformers' construction.

apply_mrope against ``apply_multimodal_rotary_pos_emb`` restated in numpy and against a
loop; with equal ids it is one-dimensional RoPE in the half layout; mrope_positions against
hand examples and a restatement of ``get_rope_index``; the grid size limit is named, and
``mrope_section`` may be a tuple, an array or hold zeros.
"""

from __future__ import annotations

import cmath

import numpy as np
import pytest
from conftest import EPS, assert_rotation_close, loop_rotate, rounded_omegas
from hypothesis import given
from hypothesis import strategies as st

import posenc
from posenc import (
    apply_mrope,
    mrope_positions,
)

NAN, INF = float("nan"), float("inf")


def test_huge_mrope_grid_names_the_limit():
    with pytest.raises(ValueError, match=r"2\*\*28"):
        posenc.mrope_positions([(2**20, 2**20, 2**20)])


def test_mrope_section_accepts_tuples_arrays_and_zeros():
    x = np.ones((1, 8))
    for section in ([4, 0, 0], (0, 0, 4), np.array([1, 2, 1])):
        got = posenc.apply_mrope(x, [[3], [5], [7]], section)
        axis_of = [a for a, n in enumerate(section) for _ in range(int(n))]
        for j, w in enumerate(rounded_omegas(8)):
            z = complex(1.0, 1.0) * cmath.exp(1j * [3, 5, 7][axis_of[j]] * w)
            assert abs(got[0, j] - z.real) <= 8 * EPS and abs(got[0, j + 4] - z.imag) <= 8 * EPS


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
    assert_rotation_close(got, loop, x)


def test_mrope_with_equal_ids_is_one_dimensional_rope_in_half_layout():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 6, 16))
    ids = rng.integers(0, 10**5, size=6)
    theta = rounded_omegas(16)
    got = apply_mrope(x, np.stack([ids] * 3), [2, 3, 3])
    assert_rotation_close(got, loop_rotate(x, lambda n, tok, j: float(ids[tok]) * theta[j], "half"), x)
    # per-sequence ids (3, B, 1, L)
    ids2 = rng.integers(0, 100, size=(2, 1, 6))
    got = apply_mrope(x, np.stack([ids2] * 3), [2, 3, 3])
    assert_rotation_close(
        got, loop_rotate(x, lambda n, tok, j: float(ids2[n[0], 0, tok]) * theta[j], "half"), x
    )


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
