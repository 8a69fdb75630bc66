"""posenc.exercises: what every checker shares, run on every checker.

The package imports lightly; every known mistake of every checker has a wrong
implementation that the checker names; a broken result (a list, None, a scalar, an extra
axis, a missing row, the wrong dtype, NaN, infinity, complex values, a function that
raises) is named precisely; a checker refuses a non-callable. The student functions come
from the chapter files (tests/exercises/test_<module>.py), written by hand in plain numpy.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import expect_mistake, expect_problem

import posenc
import posenc.exercises
import posenc.exercises as ex
from posenc.exercises import ExerciseError

from .test_ch03_sinusoidal import shapes_in, sin_float32_angles, sin_table
from .test_ch04_rotation import shift_matrix
from .test_ch08_learned import (
    backward_correct,
    backward_first,
    backward_grad_x_summed,
    backward_in_place,
    backward_loop_overwrites,
    backward_mean,
    backward_only_used_rows,
    make_backward_accumulating,
)
from .test_ch09_rope import rope
from .test_ch10_relative import t5_exact, t5_float
from .test_ch11_alibi import (
    slopes_consecutive,
    slopes_correct,
    slopes_duplicates,
    slopes_off_by_one,
    slopes_power_of_two,
    slopes_round_up,
)
from .test_ch16_rope_nd import CORRECT_CH16, INT_CHECKERS_CH16, MISTAKE_EXAMPLES_CH16
from .test_chA_configs import CHA_CORRECT, CHA_MISTAKES

CHECKERS = (
    "check_sinusoidal_encoding",
    "check_relative_position_matrix",
    "check_learned_backward",
    "check_rope",
    "check_t5_bucket",
    "check_alibi_slopes",
    *CORRECT_CH16,
    *CHA_CORRECT,
)


def test_import_is_light():
    code = (
        "import sys, posenc.exercises; print(sorted(m for m in ('sympy', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_error_is_an_assertion_error():
    assert issubclass(ExerciseError, AssertionError)


def test_not_implemented_propagates():
    def stub(*args, **kwargs):
        raise NotImplementedError("Exercise 3.4 is not yet implemented")

    for name in CHECKERS:
        with pytest.raises(NotImplementedError, match="not yet implemented"):
            getattr(ex, name)(stub)


# --------------------------------------------------------------------------------------
# Every known mistake, written as a wrong implementation, is named by its checker
# --------------------------------------------------------------------------------------


def _sin(**options):
    return lambda positions, d_model, base=10000.0: sin_table(positions, d_model, base, **options)


def _shift(**options):
    return lambda d_model, offset, base=10000.0: shift_matrix(d_model, offset, base, **options)


def _rope(**options):
    return lambda x, positions, base=10000.0: rope(x, positions, base, **options)


def _t5(**options):
    return lambda r, **kw: t5_float(r, **kw, **options)


# (checker, mistake name) -> (the student's function, or a factory for a stateful one; checker kwargs)
MISTAKE_EXAMPLES = {
    ("check_sinusoidal_encoding", "concatenated (half layout) instead of interleaved"): _sin(layout="half"),
    ("check_sinusoidal_encoding", "division instead of multiplication"): _sin(op="div"),
    ("check_sinusoidal_encoding", "sin and cos swapped"): _sin(swap=True),
    ("check_sinusoidal_encoding", "missing factor 2 in the exponent 2i/d"): _sin(expo="no2"),
    ("check_sinusoidal_encoding", "column index instead of pair index in the exponent"): _sin(expo="column"),
    ("check_sinusoidal_encoding", "base argument ignored"): (
        lambda positions, d_model, base=10000.0: sin_table(positions, d_model, 10000.0)
    ),
    ("check_sinusoidal_encoding", "float32 angles at large positions"): sin_float32_angles,
    ("check_relative_position_matrix", "M_{-k} (transposed: sine sign flipped)"): _shift(sign=-1.0),
    ("check_relative_position_matrix", "matrix for the half layout"): _shift(layout="half"),
    ("check_relative_position_matrix", "division instead of multiplication"): _shift(op="div"),
    ("check_relative_position_matrix", "missing factor 2 in the exponent 2i/d"): _shift(expo="no2"),
    ("check_relative_position_matrix", "base argument ignored"): (
        lambda d_model, offset, base=10000.0: shift_matrix(d_model, offset, 10000.0)
    ),
    ("check_relative_position_matrix", "matrix does not depend on the offset"): (
        lambda d_model, offset, base=10000.0: np.eye(d_model)
    ),
    ("check_learned_backward", "gradient of only the first batch element"): backward_first,
    ("check_learned_backward", "gradient of only the last batch element"): backward_loop_overwrites,
    ("check_learned_backward", "mean instead of sum over the batch"): backward_mean,
    ("check_learned_backward", "only L rows returned"): backward_only_used_rows,
    ("check_learned_backward", "grad_X summed over the batch"): backward_grad_x_summed,
    ("check_learned_backward", "gradient accumulated across calls"): make_backward_accumulating,
    ("check_learned_backward", "grad_output modified in place"): backward_in_place,
    ("check_rope", "half/interleaved layout confusion"): _rope(layout="half"),
    ("check_rope", "rotation by -m*theta (sine sign flipped)"): _rope(sign=-1.0),
    ("check_rope", "positions argument ignored"): (
        lambda x, positions, base=10000.0: rope(x, np.arange(x.shape[-2]), base)
    ),
    ("check_rope", "division instead of multiplication"): _rope(op="div"),
    ("check_rope", "missing factor 2 in the exponent 2i/d"): _rope(expo="no2"),
    ("check_rope", "base argument ignored"): lambda x, positions, base=10000.0: rope(x, positions, 10000.0),
    ("check_rope", "float32 angles at large positions"): _rope(dtype=np.float32),
    ("check_t5_bucket", "query minus key (sign flipped)"): lambda r, **kw: t5_exact(r, **kw, sign=-1),
    ("check_t5_bucket", "floating-point log at an exact tie (one bucket low)"): t5_float,
    ("check_t5_bucket", "floating-point (float32) log, one bucket off near a boundary"): _t5(
        dtype=np.float32
    ),
    ("check_t5_bucket", "round() instead of floor (off-by-one buckets)"): _t5(rnd=np.round),
    ("check_t5_bucket", "ceil instead of floor (off-by-one buckets)"): _t5(rnd=np.ceil),
    ("check_t5_bucket", "log buckets start one too high (off by one)"): _t5(shift=1),
    ("check_t5_bucket", "no clipping to the last bucket"): _t5(clip=False),
    ("check_t5_bucket", "|r| instead of max(-r, 0) in causal mode"): _t5(causal_abs=True),
    ("check_alibi_slopes", "2^(-8h/n) for a non-power-of-two head count"): (
        lambda n: np.array(slopes_power_of_two(n))
    ),
    ("check_alibi_slopes", "rounded up to a power of two and truncated"): slopes_round_up,
    ("check_alibi_slopes", "right slopes, wrong order (sorted)"): lambda n: np.sort(slopes_correct(n))[::-1],
    ("check_alibi_slopes", "consecutive instead of every other slope of the 2N-head sequence"): (
        slopes_consecutive
    ),
    ("check_alibi_slopes", "even-numbered (duplicate) slopes appended"): slopes_duplicates,
    ("check_alibi_slopes", "off by one: h starts at 0 (first slope 1)"): slopes_off_by_one,
    **MISTAKE_EXAMPLES_CH16,
    **CHA_MISTAKES,
}


STATEFUL = {make_backward_accumulating}


def test_every_known_mistake_has_an_example():
    # the checkers of Part V chapters are tested in tests/exercises/test_<module>.py
    listed = {
        (checker, name)
        for checker, names in ex.KNOWN_MISTAKES.items()
        for name in names
        if checker in CHECKERS
    }
    assert listed == set(MISTAKE_EXAMPLES)


@pytest.mark.parametrize("checker, mistake", sorted(MISTAKE_EXAMPLES))
def test_every_known_mistake_is_named(checker, mistake):
    student = MISTAKE_EXAMPLES[checker, mistake]
    if student in STATEFUL:
        student = student()
    err = expect_mistake(getattr(ex, checker), student, f"known mistake '{mistake}'")
    assert err.mistake == mistake


def test_known_mistakes_table_covers_every_checker():
    checkers = {name for name in ex.__all__ if name.startswith("check_")}
    assert set(ex.KNOWN_MISTAKES) == checkers >= set(CHECKERS)
    for name in checkers - set(CHECKERS):  # a later chapter's checker: tested in its own file
        module = getattr(ex, name).__module__.rsplit(".", 1)[-1]
        assert (Path(__file__).parent / f"test_{module}.py").is_file(), name
    assert all(len(v) >= 4 for v in ex.KNOWN_MISTAKES.values())
    for names in ex.KNOWN_MISTAKES.values():
        assert len(set(names)) == len(names)
        assert not set(names) & set(ex.RESULT_PROBLEMS)
        assert not any(" + " in name for name in names)  # " + " joins a combination


# --------------------------------------------------------------------------------------
# Robustness: a broken result is named precisely, for every checker
# --------------------------------------------------------------------------------------


# checker -> a correct student function
CORRECT = {
    "check_sinusoidal_encoding": sin_table,
    "check_relative_position_matrix": shift_matrix,
    "check_learned_backward": backward_correct,
    "check_rope": rope,
    "check_t5_bucket": t5_exact,
    "check_alibi_slopes": slopes_correct,
    **CORRECT_CH16,
    **CHA_CORRECT,
}


def spoiled(checker, change):
    """The correct function of ``checker`` with ``change`` applied to its (array) result."""
    correct = CORRECT[checker]
    if checker == "check_learned_backward":

        def student(grad_output, max_len):
            grad_X, grad_E = correct(grad_output, max_len)
            return grad_X, change(grad_E)

        return student
    return lambda *args, **kwargs: change(correct(*args, **kwargs))


def with_nan(a):
    a = np.array(a, dtype=np.float64)
    a.flat[a.size // 2] = np.nan
    return a


def with_inf(a):
    a = np.array(a, dtype=np.float64)
    a.flat[0] = -np.inf
    return a


def test_correct_functions_pass_unchanged():
    for checker in CORRECT:
        assert getattr(ex, checker)(spoiled(checker, lambda a: a)).startswith("correct on ")


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_function_that_raises(checker):
    def student(*args, **kwargs):
        raise ZeroDivisionError("float division by zero")

    err = expect_problem(
        getattr(ex, checker),
        student,
        "raised an exception",
        "raised ZeroDivisionError: float division by zero",
    )
    assert "on input" in str(err)
    assert isinstance(err.__cause__, ZeroDivisionError)


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_function_that_raises_on_some_inputs(checker):
    calls = []

    def student(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyError("third")
        return CORRECT[checker](*args, **kwargs)

    expect_problem(getattr(ex, checker), student, "raised an exception", "raised KeyError: 'third'")


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_list(checker):
    err = expect_problem(
        getattr(ex, checker), spoiled(checker, lambda a: np.asarray(a).tolist()), "not an array", "np.asarray"
    )
    found = re.search(
        r"a list of length (\d+) \(shape \(([\d, ]*)\) as an array\); "
        r"expected a numpy array of shape \(([\d, ]*)\)",
        str(err),
    )
    assert found, str(err)
    length, got, expected = found.groups()
    assert got == expected and got.startswith(length)  # the right values, only not an array


@pytest.mark.parametrize("checker", CHECKERS)
def test_none(checker):
    expect_problem(getattr(ex, checker), spoiled(checker, lambda a: None), "not an array", "None", "return")


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_scalar(checker):
    expect_problem(
        getattr(ex, checker), spoiled(checker, lambda a: np.asarray(a).flat[0]), "not an array", "a scalar"
    )


@pytest.mark.parametrize("checker", CHECKERS)
def test_an_extra_axis(checker):
    err = expect_problem(getattr(ex, checker), spoiled(checker, lambda a: a[..., None]), "wrong shape")
    got, expected = shapes_in(str(err))
    assert got == (*expected, 1)


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_missing_row(checker):
    err = expect_problem(getattr(ex, checker), spoiled(checker, lambda a: a[1:]), "wrong shape")
    got, expected = shapes_in(str(err))
    assert got == (expected[0] - 1, *expected[1:])


FLOAT_CHECKERS = [c for c in CHECKERS if c != "check_t5_bucket" and c not in INT_CHECKERS_CH16]


@pytest.mark.parametrize("checker", FLOAT_CHECKERS)
def test_an_integer_array(checker):
    expect_problem(
        getattr(ex, checker),
        spoiled(checker, lambda a: a.astype(np.int64)),
        "wrong dtype",
        "int64",
        "float64",
    )


@pytest.mark.parametrize("checker", FLOAT_CHECKERS)
def test_a_float32_array(checker):
    expect_problem(
        getattr(ex, checker),
        spoiled(checker, lambda a: a.astype(np.float32)),
        "wrong dtype",
        "float32",
        "float64",
    )


def test_t5_float_buckets_are_the_wrong_dtype():
    expect_problem(
        ex.check_t5_bucket,
        spoiled("check_t5_bucket", lambda a: a.astype(np.float64)),
        "wrong dtype",
        "float64",
        "integer",
    )


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_bool_array(checker):
    expect_problem(getattr(ex, checker), spoiled(checker, lambda a: a > 0), "wrong dtype", "bool")


@pytest.mark.parametrize("checker", CHECKERS)
def test_an_object_array(checker):
    expect_problem(
        getattr(ex, checker), spoiled(checker, lambda a: a.astype(object)), "wrong dtype", "object"
    )


@pytest.mark.parametrize("checker", CHECKERS)
def test_nan(checker):
    expect_problem(
        getattr(ex, checker), spoiled(checker, with_nan), "NaN or infinity", "1 NaN and 0 infinite"
    )


@pytest.mark.parametrize("checker", CHECKERS)
def test_infinity(checker):
    err = expect_problem(
        getattr(ex, checker), spoiled(checker, with_inf), "NaN or infinity", "0 NaN and 1 infinite"
    )
    assert re.search(r"at index \(0(, 0)*,?\)", str(err))


@pytest.mark.parametrize("checker", CHECKERS)
def test_complex_with_the_right_real_part(checker):
    expect_problem(
        getattr(ex, checker),
        spoiled(checker, lambda a: a + 0j),
        "complex values",
        "complex128",
        "imaginary part is zero",
    )


@pytest.mark.parametrize("checker", CHECKERS)
def test_complex_with_an_imaginary_part(checker):
    expect_problem(
        getattr(ex, checker),
        spoiled(checker, lambda a: a + 0.25j),
        "complex values",
        "imaginary parts up to 0.25",
    )


@pytest.mark.parametrize("checker", CHECKERS)
# --------------------------------------------------------------------------------------
# The checkers' own arguments
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, 3, np.zeros((4, 8)), "my_function"])
def test_a_non_callable_fn_is_refused(checker, value):
    with pytest.raises(TypeError, match=rf"{checker}: the argument fn must be your function \(a callable\)"):
        getattr(ex, checker)(value)


ALL_CHECKERS = [name for name in posenc.exercises.__all__ if name.startswith("check_")]


@pytest.mark.parametrize("checker", ALL_CHECKERS)
@pytest.mark.parametrize(
    "result, problem",
    [
        pytest.param(lambda: np.ma.masked_all((3,)), "masked array", id="masked"),
        pytest.param(lambda: np.broadcast_to(np.float64(0.0), (10**6, 10**6)), "entries", id="huge-float"),
        pytest.param(lambda: np.broadcast_to(np.int64(0), (10**6, 10**6)), "entries", id="huge-int"),
    ],
)
def test_checkers_name_a_masked_or_huge_result(checker, result, problem):
    with pytest.raises(posenc.exercises.ExerciseError, match=problem):
        if checker == "check_learned_backward":  # a student's backward returns two gradients
            getattr(posenc.exercises, checker)(lambda *args, **kwargs: (result(), result()))
        else:
            getattr(posenc.exercises, checker)(lambda *args, **kwargs: result())
