"""posenc.exercises.ch09_rope: check_rope (chapter 9)
accepts a correct implementation and names each known mistake.

The student functions are written by hand here in plain numpy (no posenc); the shared
robustness suite of tests/exercises/test_checkers.py runs on them too.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import expect_mistake

import posenc.exercises as ex


def rope(
    x, positions, base=10000.0, *, layout="interleaved", sign=1.0, op="mul", expo="pair", dtype=np.float64
):
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    i = np.arange(d // 2)
    theta = (base ** (-(2 * i if expo == "pair" else i) / d)).astype(dtype)
    p = np.asarray(positions).astype(dtype)[:, None]
    ang = p / theta if op == "div" else p * theta
    c, s = np.cos(ang).astype(np.float64), sign * np.sin(ang).astype(np.float64)
    if layout == "interleaved":
        z = (x[..., 0::2] + 1j * x[..., 1::2]) * (c + 1j * s)
        out = np.empty_like(x)
        out[..., 0::2], out[..., 1::2] = z.real, z.imag
        return out
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=-1)


def test_rope_correct_interleaved_and_half():
    assert ex.check_rope(rope).startswith("correct on ")
    assert ex.check_rope(
        lambda x, p, base=10000.0: rope(x, p, base, layout="half"), layout="half"
    ).startswith("correct on ")


def test_rope_layout_confusion_both_ways():
    err = expect_mistake(
        ex.check_rope,
        lambda x, p, base=10000.0: rope(x, p, base, layout="half"),
        "asks for the interleaved layout",
        "as in the half layout",
    )
    assert err.mistake == "half/interleaved layout confusion"
    err = expect_mistake(
        lambda fn: ex.check_rope(fn, layout="half"),
        rope,
        "asks for the half layout",
        "as in the interleaved layout",
        "rotate_half",
    )
    assert err.mistake == "half/interleaved layout confusion"


def test_rope_layout_confusion_and_sign():
    err = expect_mistake(
        ex.check_rope, lambda x, p, base=10000.0: rope(x, p, base, layout="half", sign=-1.0), "(a cos - b sin"
    )
    assert err.mistake == "half/interleaved layout confusion + rotation by -m*theta (sine sign flipped)"


def test_rope_student_writing_into_its_input_does_not_confuse_the_checker():
    def student(x, positions, base=10000.0):
        out = rope(x, positions, base, sign=-1.0)
        positions *= -1.0  # scribbles on its argument after using it
        return out

    expect_mistake(ex.check_rope, student, "rotation by -m*theta")


def test_rope_layout_argument():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "check_rope: the argument layout must be 'interleaved' or 'half' "
            "('split' is accepted as a synonym of 'half'), got 'neox'"
        ),
    ):
        ex.check_rope(rope, layout="neox")
    with pytest.raises(TypeError, match="the argument layout"):
        ex.check_rope(rope, layout=np.array(["half", "half"]))
