"""Exercise checkers name the real problem in the cases a second audit found misdiagnosed."""

from __future__ import annotations

import numpy as np
import pytest

import posenc
from posenc import exercises
from posenc.exercises import ExerciseError
from posenc.exercises.ch15_nope import _nope_indices
from posenc.exercises.ch16_rope_nd import _axes_variant


def _mistake(check, fn):
    with pytest.raises(ExerciseError) as info:
        check(fn)
    return info.value.mistake


def test_a_backward_that_returns_its_own_accumulator_is_named():
    store: dict = {}

    def backward(g, max_len):
        acc = store.setdefault((g.shape[2], max_len), np.zeros((max_len, g.shape[2])))
        acc[: g.shape[1]] += g.sum(axis=0)
        return g.copy(), acc  # the accumulator itself, no copy

    assert _mistake(exercises.check_learned_backward, backward) == "gradient accumulated across calls"


@pytest.mark.parametrize(
    ("convert", "problem"),
    [(float, "wrong dtype"), (complex, "complex values"), (lambda v: 10**30, "wrong dtype")],
)
def test_critical_dimension_scalars_are_diagnosed_by_kind(convert, problem):
    def fn(d, b, t):
        return convert(posenc.critical_dimension(d, b, t))

    assert _mistake(exercises.check_critical_dimension, fn) == problem


def test_complex_nope_layers_are_called_complex():
    assert _mistake(exercises.check_nope_layers, lambda n, k: _nope_indices(n, k) + 0j) == "complex values"


def test_a_function_that_reverses_its_section_list_is_still_matched():
    def fn(section, d_head):
        result = _axes_variant(list(section), d_head, "reversed_axes")
        section.reverse()  # writes to the caller's list
        return result

    assert _mistake(exercises.check_mrope_channel_axes, fn) == "sections in the order width, height, temporal"
