"""posenc.exercises.ch03_sinusoidal: check_sinusoidal_encoding (chapter 3)
accepts a correct implementation and names each known mistake.

The student functions are written by hand here in plain numpy (no posenc); the shared
robustness suite of tests/exercises/test_checkers.py runs on them too.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import expect_mistake, expect_problem

import posenc.exercises as ex
from posenc.exercises import ExerciseError


def sin_table(positions, d_model, base=10000.0, *, layout="interleaved", op="mul", swap=False, expo="pair"):
    p = np.asarray(positions, dtype=np.float64)[:, None]
    if expo == "pair":
        w_sin = w_cos = np.exp(-np.log(base) * np.arange(0, d_model, 2) / d_model)
    elif expo == "no2":
        w_sin = w_cos = base ** (-np.arange(d_model // 2) / d_model)
    else:
        w_sin, w_cos = (
            base ** (-np.arange(0, d_model, 2) / d_model),
            base ** (-np.arange(1, d_model, 2) / d_model),
        )
    a_sin = p / w_sin if op == "div" else p * w_sin
    a_cos = p / w_cos if op == "div" else p * w_cos
    s, c = np.sin(a_sin), np.cos(a_cos)
    if swap:
        s, c = np.cos(a_sin), np.sin(a_cos)
    if layout == "half":
        return np.concatenate([s, c], axis=1)
    out = np.zeros((p.shape[0], d_model))
    out[:, ::2], out[:, 1::2] = s, c
    return out


def sin_float32_angles(positions, d_model, base=10000.0):
    """float32 positions and angles, float64 result."""
    p = np.asarray(positions).astype(np.float32)[:, None]
    w = (base ** (-np.arange(0, d_model, 2) / d_model)).astype(np.float32)
    out = np.zeros((p.shape[0], d_model))
    out[:, ::2], out[:, 1::2] = np.sin(p * w), np.cos(p * w)
    return out


def test_sinusoidal_correct():
    assert ex.check_sinusoidal_encoding(sin_table).startswith("correct on ")


def test_sinusoidal_correct_with_plain_power():
    def power_form(positions, d_model, base=10000.0):
        i = np.arange(d_model // 2)
        angles = np.outer(np.asarray(positions, dtype=float), 1.0 / base ** (2 * i / d_model))
        return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(len(positions), d_model)

    assert "correct on" in ex.check_sinusoidal_encoding(power_form)


@pytest.mark.parametrize(
    "options, words",
    [
        ({"layout": "half", "swap": True}, ["concatenated (half layout)", "sin and cos swapped"]),
        ({"op": "div", "expo": "no2"}, ["division instead of multiplication", "missing factor 2"]),
        (
            {"layout": "half", "op": "div", "swap": True, "expo": "column"},
            ["concatenated (half layout)", "division", "sin and cos swapped", "column index"],
        ),
    ],
)
def test_sinusoidal_combined_mistakes(options, words):
    def student(positions, d_model, base=10000.0):
        return sin_table(positions, d_model, base, **options)

    err = expect_mistake(ex.check_sinusoidal_encoding, student, *words)
    assert err.mistake.count(" + ") == len(words) - 1
    assert str(err).count("Hint:") == len(words)


def test_sinusoidal_float32_result_is_the_wrong_dtype():
    def student(positions, d_model, base=10000.0):
        return sin_float32_angles(positions, d_model, base).astype(np.float32)

    expect_problem(ex.check_sinusoidal_encoding, student, "wrong dtype", "float32", "float64")


def test_sinusoidal_float32_of_a_float64_table_is_the_wrong_dtype():
    # right angles, cast at the end: not a float32-angle mistake, the result is too coarse
    def student(positions, d_model, base=10000.0):
        return sin_table(positions, d_model, base).astype(np.float32)

    err = expect_problem(ex.check_sinusoidal_encoding, student, "wrong dtype", "float32")
    assert "angles" not in str(err)


def test_sinusoidal_float32_positions_float64_result():
    def student(positions, d_model, base=10000.0):
        p = np.asarray(positions).astype(np.float32).astype(np.float64)
        return sin_table(p, d_model, base)

    expect_mistake(ex.check_sinusoidal_encoding, student, "float32 angles")


def test_sinusoidal_unknown_mistake_is_reported_generically():
    def student(positions, d_model, base=10000.0):
        out = sin_table(positions, d_model, base)
        out[:, -1] += 0.5
        return out

    with pytest.raises(ExerciseError, match="no known mistake matches") as info:
        ex.check_sinusoidal_encoding(student)
    assert info.value.mistake is None
    assert "largest difference 0.5 " in str(info.value)


def shapes_in(message: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (got, expected) shapes of a wrong-shape message."""
    found = re.search(r"has shape \(([\d, ]*)\), expected \(([\d, ]*)\)", message)
    assert found, message
    return tuple(tuple(int(n) for n in group.replace(" ", "").split(",") if n) for group in found.groups())


def test_sinusoidal_transposed_is_a_wrong_shape():
    def student(positions, d_model, base=10000.0):
        return sin_table(positions, d_model, base).T

    err = expect_problem(ex.check_sinusoidal_encoding, student, "wrong shape", "(len(positions), d_model)")
    got, expected = shapes_in(str(err))
    assert got == expected[::-1] and got != expected
