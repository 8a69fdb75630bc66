"""posenc.mrope: Qwen2-VL's multimodal RoPE at the edges of its input contract.

The grid size limit of ``mrope_positions`` is named, and ``mrope_section`` may be a tuple,
an array or hold zeros, each checked against the rotation written out with ``cmath``.
"""

from __future__ import annotations

import cmath

import numpy as np
import pytest
from conftest import EPS, rounded_omegas

import posenc

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
