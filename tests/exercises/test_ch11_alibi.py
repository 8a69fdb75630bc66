"""posenc.exercises.ch11_alibi: check_alibi_slopes (chapter 11)
accepts a correct implementation and names each known mistake.

The student functions are written by hand here in plain numpy (no posenc); the shared
robustness suite of tests/exercises/test_checkers.py runs on them too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import expect_mistake

import posenc.exercises as ex
from posenc.exercises import ExerciseError


def slopes_power_of_two(n, start=1):
    first = 2.0 ** (-8.0 / n)
    return [first ** (h) for h in range(start, n + start)]


def slopes_correct(n):
    if math.log2(n).is_integer():
        return np.array(slopes_power_of_two(n))
    closest = 2 ** math.floor(math.log2(n))
    extra = slopes_power_of_two(2 * closest)[0::2][: n - closest]
    return np.array(slopes_power_of_two(closest) + extra)


def slopes_round_up(n):
    c = 2 ** math.ceil(math.log2(n))
    return np.array(slopes_power_of_two(c)[:n])


def slopes_consecutive(n):
    closest = 2 ** math.floor(math.log2(n))
    extra = slopes_power_of_two(2 * closest)[: n - closest]
    return np.array(slopes_power_of_two(closest) + extra)


def slopes_duplicates(n):
    closest = 2 ** math.floor(math.log2(n))
    extra = slopes_power_of_two(2 * closest)[1::2][: n - closest]
    return np.array(slopes_power_of_two(closest) + extra)


def slopes_off_by_one(n):
    if math.log2(n).is_integer():
        return np.array(slopes_power_of_two(n, start=0))
    closest = 2 ** math.floor(math.log2(n))
    extra = slopes_power_of_two(2 * closest, start=0)[0::2][: n - closest]
    return np.array(slopes_power_of_two(closest, start=0) + extra)


def test_alibi_correct():
    assert ex.check_alibi_slopes(slopes_correct).startswith("correct on ")


def test_alibi_geometric_hint():
    err = expect_mistake(
        ex.check_alibi_slopes, lambda n: np.array(slopes_power_of_two(n)), "non-power-of-two head count"
    )
    assert "odd-numbered" in str(err)


def test_alibi_relative_error_is_reported():
    def student(n):
        out = slopes_correct(n)
        out[-1] *= 1.0 + 1e-7
        return out

    with pytest.raises(ExerciseError, match="largest relative difference 1e-07") as info:
        ex.check_alibi_slopes(student)
    assert info.value.mistake is None
