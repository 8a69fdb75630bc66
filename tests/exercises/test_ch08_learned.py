"""posenc.exercises.ch08_learned: check_learned_backward (chapter 8)
accepts a correct implementation and names each known mistake.

The student functions are written by hand here in plain numpy (no posenc); the shared
robustness suite of tests/exercises/test_checkers.py runs on them too.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import expect_mistake, expect_problem, mistake_of

import posenc.exercises as ex
from posenc import exercises
from posenc.exercises import ExerciseError

from .test_ch03_sinusoidal import shapes_in


def backward_correct(grad_output, max_len):
    B, L, d = grad_output.shape
    grad_E = np.zeros((max_len, d))
    for b in range(B):
        grad_E[:L] += grad_output[b]
    return np.array(grad_output, copy=True), grad_E


def backward_first(grad_output, max_len):
    grad_E = np.zeros((max_len, grad_output.shape[2]))
    grad_E[: grad_output.shape[1]] = grad_output[0]
    return grad_output.copy(), grad_E


def backward_loop_overwrites(grad_output, max_len):
    grad_E = np.zeros((max_len, grad_output.shape[2]))
    for b in range(grad_output.shape[0]):
        grad_E[: grad_output.shape[1]] = grad_output[b]
    return grad_output.copy(), grad_E


def backward_mean(grad_output, max_len):
    grad_E = np.zeros((max_len, grad_output.shape[2]))
    grad_E[: grad_output.shape[1]] = grad_output.mean(axis=0)
    return grad_output.copy(), grad_E


def backward_only_used_rows(grad_output, max_len):
    return grad_output.copy(), grad_output.sum(axis=0)


def backward_grad_x_summed(grad_output, max_len):
    _, grad_E = backward_correct(grad_output, max_len)
    return grad_output.sum(axis=0), grad_E


def make_backward_accumulating():
    store = {}

    def student(grad_output, max_len):
        key = (max_len, grad_output.shape[2])
        store.setdefault(key, np.zeros(key))
        store[key][: grad_output.shape[1]] += grad_output.sum(axis=0)
        return grad_output.copy(), store[key].copy()

    return student


def backward_in_place(grad_output, max_len):
    grad_E = np.zeros((max_len, grad_output.shape[2]))
    grad_output[0] = grad_output.sum(axis=0)  # "saves memory"
    grad_E[: grad_output.shape[1]] = grad_output[0]
    return grad_output, grad_E


def test_backward_correct():
    assert ex.check_learned_backward(backward_correct).startswith("correct on ")


def test_backward_first_element_hint_mentions_batch_of_one():
    err = expect_mistake(
        ex.check_learned_backward, backward_first, "gradient of only the first batch element"
    )
    assert "B = 1" in str(err)


def test_backward_wrong_grad_x_is_not_a_known_mistake():
    def student(grad_output, max_len):
        _, grad_E = backward_correct(grad_output, max_len)
        return -grad_output, grad_E

    with pytest.raises(ExerciseError, match="grad_E is right on every input") as info:
        ex.check_learned_backward(student)
    assert info.value.mistake is None
    assert "grad_X: largest difference" in str(info.value)


def test_backward_nan_gradient_is_not_called_accumulation():
    # NaN != NaN: the result of the second call "differs" from the first one
    def student(grad_output, max_len):
        grad_X, grad_E = backward_correct(grad_output, max_len)
        grad_E[0, 0] = np.nan
        return grad_X, grad_E

    err = expect_problem(ex.check_learned_backward, student, "NaN or infinity", "grad_E", "1 NaN")
    assert "accumulated" not in str(err)


def test_backward_random_result_is_not_called_accumulation():
    rng = np.random.default_rng(0)

    def student(grad_output, max_len):
        grad_X, grad_E = backward_correct(grad_output, max_len)
        return grad_X, grad_E + rng.normal(scale=1e-3, size=grad_E.shape)

    expect_problem(ex.check_learned_backward, student, "different results for the same input", "grad_E")


def test_backward_list_pair_is_refused():
    expect_problem(
        ex.check_learned_backward,
        lambda g, max_len: list(backward_correct(g, max_len)),
        "not an array",
        "tuple (grad_X, grad_E)",
        "a list of length 2",
    )


def test_backward_grad_x_problems_name_grad_x():
    def student(grad_output, max_len):
        grad_X, grad_E = backward_correct(grad_output, max_len)
        return grad_X + 0j, grad_E

    expect_problem(ex.check_learned_backward, student, "complex values", "grad_X")


def test_backward_grad_e_with_a_wrong_shape():
    def student(grad_output, max_len):
        grad_X, grad_E = backward_correct(grad_output, max_len)
        return grad_X, grad_E.T

    err = expect_problem(ex.check_learned_backward, student, "wrong shape", "grad_E", "(max_len, d)")
    got, expected = shapes_in(str(err))
    assert got == expected[::-1]


def test_a_backward_that_returns_its_own_accumulator_is_named():
    store: dict = {}

    def backward(g, max_len):
        acc = store.setdefault((g.shape[2], max_len), np.zeros((max_len, g.shape[2])))
        acc[: g.shape[1]] += g.sum(axis=0)
        return g.copy(), acc  # the accumulator itself, no copy

    assert mistake_of(exercises.check_learned_backward, backward) == "gradient accumulated across calls"
