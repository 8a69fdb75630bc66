"""posenc.exercises.ch04_rotation: check_relative_position_matrix (chapter 4)
accepts a correct implementation and names each known mistake.

The student functions are written by hand here in plain numpy (no posenc); the shared
robustness suite of tests/exercises/test_checkers.py runs on them too.
"""

from __future__ import annotations

import math

import numpy as np
from conftest import expect_mistake

import posenc.exercises as ex


def shift_matrix(d_model, offset, base=10000.0, *, sign=1.0, layout="interleaved", op="mul", expo="pair"):
    i = np.arange(d_model // 2)
    w = base ** (-(2 * i if expo == "pair" else i) / d_model)
    a = offset / w if op == "div" else offset * w
    m = np.zeros((d_model, d_model))
    for j, (c, s) in enumerate(zip(np.cos(a), sign * np.sin(a), strict=True)):
        m[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [[c, s], [-s, c]]
    if layout == "half":
        perm = np.r_[0:d_model:2, 1:d_model:2]
        m = m[np.ix_(perm, perm)]
    return m


def test_relative_matrix_correct():
    assert ex.check_relative_position_matrix(shift_matrix).startswith("correct on ")


def test_relative_matrix_textbook_rotation_is_transposed():
    def student(d_model, offset, base=10000.0):
        blocks = []
        for w in base ** (-np.arange(0, d_model, 2) / d_model):
            c, s = math.cos(offset * w), math.sin(offset * w)
            blocks.append(np.array([[c, -s], [s, c]]))  # rotation of (x, y), applied to (sin, cos)
        out = np.zeros((d_model, d_model))
        for j, b in enumerate(blocks):
            out[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = b
        return out

    expect_mistake(ex.check_relative_position_matrix, student, "transposed")


def test_relative_matrix_fixed_offset_does_not_depend_on_the_offset():
    expect_mistake(
        ex.check_relative_position_matrix,
        lambda d_model, offset, base=10000.0: shift_matrix(d_model, 1, base),
        "does not depend on the offset",
    )
