"""Chapter 18's checkers (check_kerple_bias, check_fire_distances): a correct function
passes, each known mistake is named, a broken result is named for what it is.

The student functions are written here by hand in plain numpy (no posenc), the correct
ones from the formulas, the wrong ones as a student would write them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import posenc.exercises as ex
from posenc.exercises import ExerciseError


def dist(n):
    i = np.arange(n)
    return np.abs(i[:, None] - i[None, :]).astype(np.float64)


def kerple_log(r1, r2, n):
    return -np.asarray(r1)[:, None, None] * np.log(1.0 + np.asarray(r2)[:, None, None] * dist(n))


def kerple_power(r1, r2, n):
    return -np.asarray(r1)[:, None, None] * dist(n) ** np.asarray(r2)[:, None, None]


def fire_u(q_len, k_len, c, threshold):
    i = np.arange(q_len)[:, None] + (k_len - q_len)
    j = np.arange(k_len)[None, :]
    return np.log(c * np.abs(i - j) + 1.0) / np.log(c * np.maximum(threshold, i) + 1.0)


def _fire(norm="query", log=True, row=False, c_one=False):
    def student(q_len, k_len, c, threshold):
        c = 1.0 if c_one else c
        i = np.arange(q_len)[:, None] + (0 if row else k_len - q_len)
        j = np.arange(k_len)[None, :]
        psi = (lambda x: np.log(c * x + 1.0)) if log else (lambda x: x * 1.0)
        if norm == "query":
            den = psi(np.maximum(threshold, i))
        elif norm == "key":
            den = psi(np.maximum(threshold, j))
        else:
            den = psi(np.maximum(threshold, k_len - 1))
        return np.broadcast_to(psi(np.abs(i - j)) / den, (q_len, k_len)).astype(np.float64)

    return student


def _k(expr):
    def student(r1, r2, n):
        a = np.asarray(r1)[:, None, None]
        b = np.asarray(r2)[:, None, None]
        with np.errstate(divide="ignore"):
            return expr(a, b, dist(n))

    return student


# (checker kwargs, mistake name, the student's function)
MISTAKES = [
    ("log", "log kernel without the 1+", _k(lambda a, b, d: -a * np.log(b * d))),
    (
        "log",
        "log kernel without the 1+",
        _k(lambda a, b, d: np.where(d > 0, -a * np.log(np.where(d > 0, b * d, 1)), 0.0)),
    ),
    ("log", "sign flipped (a reward for distance)", _k(lambda a, b, d: a * np.log1p(b * d))),
    ("log", "r1 and r2 swapped", _k(lambda a, b, d: -b * np.log1p(a * d))),
    ("log", "base-10 logarithm", _k(lambda a, b, d: -a * np.log10(1 + b * d))),
    ("log", "exponent ignored (ALiBi's line reused)", _k(lambda a, b, d: -a * d)),
    ("power", "exponent ignored (ALiBi's line reused)", _k(lambda a, b, d: -a * d)),
    ("power", "sign flipped (a reward for distance)", _k(lambda a, b, d: a * d**b)),
    (
        "power",
        "exponent ignored (ALiBi's line reused) + sign flipped (a reward for distance)",
        _k(lambda a, b, d: a * d),
    ),
    ("power", "r1 and r2 swapped", _k(lambda a, b, d: -b * d**a)),
    ("power", "exponent applied to r1 |i-j|", _k(lambda a, b, d: -((a * d) ** b))),
]
FIRE_MISTAKES = [
    ("normalised by the key position instead of the query position", _fire(norm="key")),
    ("query row index instead of the absolute query position", _fire(row=True)),
    ("normalised by the sequence length (no progressive interpolation)", _fire(norm="length")),
    ("no logarithm (psi(x) = x)", _fire(log=False)),
    ("c argument ignored", _fire(c_one=True)),
]


def test_correct_functions_pass():
    assert ex.check_kerple_bias(kerple_log).startswith("correct on ")
    assert ex.check_kerple_bias(kerple_power, kind="power").startswith("correct on ")
    assert ex.check_fire_distances(fire_u).startswith("correct on ")


def test_the_other_kernel_fails():
    with pytest.raises(ExerciseError):
        ex.check_kerple_bias(kerple_power)
    with pytest.raises(ExerciseError):
        ex.check_kerple_bias(kerple_log, kind="power")


@pytest.mark.parametrize("kind, mistake, student", MISTAKES)
def test_kerple_mistakes_are_named(kind, mistake, student):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ExerciseError) as info:
            ex.check_kerple_bias(student, kind=kind)
    assert info.value.mistake == mistake, str(info.value)
    assert f"known mistake '{mistake}'" in str(info.value) and "Hint:" in str(info.value)


@pytest.mark.parametrize("mistake, student", FIRE_MISTAKES)
def test_fire_mistakes_are_named(mistake, student):
    with pytest.raises(ExerciseError) as info:
        ex.check_fire_distances(student)
    assert info.value.mistake == mistake, str(info.value)
    assert "Hint:" in str(info.value)


def test_every_registered_mistake_has_an_example():
    named = {m for _, m, _ in MISTAKES if " + " not in m}
    assert named == set(ex.KNOWN_MISTAKES["check_kerple_bias"])
    assert {m for m, _ in FIRE_MISTAKES} == set(ex.KNOWN_MISTAKES["check_fire_distances"])


@pytest.mark.parametrize(
    "check, correct",
    [
        (ex.check_kerple_bias, kerple_log),
        (lambda fn: ex.check_kerple_bias(fn, kind="power"), kerple_power),
        (ex.check_fire_distances, fire_u),
    ],
)
def test_broken_results_are_named(check, correct):
    def raises(*args):
        raise ZeroDivisionError("boom")

    def as_list(*args):
        return correct(*args).tolist()

    def with_nan(*args):
        out = correct(*args).copy()
        out.flat[-1] = np.nan
        return out

    def float32(*args):
        return correct(*args).astype(np.float32)

    def transposed(*args):
        return np.swapaxes(correct(*args), -1, -2)[..., :1, :]

    for student, problem in (
        (raises, "raised an exception"),
        (as_list, "not an array"),
        (with_nan, "NaN or infinity"),
        (float32, "wrong dtype"),
        (transposed, "wrong shape"),
    ):
        with pytest.raises(ExerciseError) as info:
            check(student)
        assert info.value.mistake == problem, str(info.value)


def test_unknown_error_reports_the_first_failing_input():
    with pytest.raises(ExerciseError) as info:
        ex.check_fire_distances(lambda q, k, c, t: fire_u(q, k, c, t) + 0.01)
    assert info.value.mistake is None and "First failing input" in str(info.value)


def test_bad_checker_arguments():
    with pytest.raises(TypeError, match="fn"):
        ex.check_kerple_bias(3)
    with pytest.raises(ValueError, match="kind"):
        ex.check_kerple_bias(kerple_log, kind="cubic")
    with pytest.raises(TypeError, match="kind"):
        ex.check_kerple_bias(kerple_log, kind=2)
    with pytest.raises(TypeError, match="fn"):
        ex.check_fire_distances(None)


def test_stub_raising_not_implemented_propagates():
    def stub(*args):
        raise NotImplementedError

    with pytest.raises(NotImplementedError):
        ex.check_kerple_bias(stub)
    with pytest.raises(NotImplementedError):
        ex.check_fire_distances(stub)
