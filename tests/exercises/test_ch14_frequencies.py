"""Chapter 14's checkers: each accepts a correct answer and names each known mistake.

The student functions are written by hand here in plain numpy (no posenc): the correct
ones independently of the reference, the wrong ones as a student would write them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import expect_mistake, mistake_of

import posenc
import posenc.exercises as ex
from posenc import exercises
from posenc.exercises import ExerciseError

CHECKERS = ("check_partial_rope", "check_long_term_similarity", "check_critical_dimension")


def _turn(x, positions, theta, layout="interleaved"):
    x = np.asarray(x, dtype=np.float64)
    ang = np.multiply.outer(np.asarray(positions, dtype=np.float64), theta)
    c, s = np.cos(ang), np.sin(ang)
    h = x.shape[-1] // 2
    a, b = (x[..., 0::2], x[..., 1::2]) if layout == "interleaved" else (x[..., :h], x[..., h:])
    out = np.empty_like(x)
    first, second = a * c - b * s, a * s + b * c
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = first, second
    else:
        out[..., :h], out[..., h:] = first, second
    return out


def partial(freqs="rotary", channels="first", rest="copy", layout="interleaved", ignore_dim=False):
    def fn(x, positions, rotary_dim, base=10000.0):
        x = np.asarray(x, dtype=np.float64)
        d = x.shape[-1]
        r = d if ignore_dim else rotary_dim
        width = d if freqs == "head" else r
        theta = base ** (-np.arange(0, r, 2) / width)
        out = x.copy()
        sl = slice(0, r) if channels == "first" else slice(d - r, d)
        out[..., sl] = _turn(x[..., sl], positions, theta, layout)
        if rest == "zero":
            out[..., r:] = 0.0
        return out

    return fn


def similarity(n_terms="pairs", mean=False, division=False, missing_2=False, fixed_base=False):
    def fn(distances, d_head, base=10000.0):
        b = 10000.0 if fixed_base else base
        n = d_head if n_terms == "all" else d_head // 2
        i = np.arange(n)
        theta = b ** (-(1 if missing_2 else 2) * i / d_head)
        m = np.asarray(distances, dtype=np.float64)[:, None]
        total = np.cos(m / theta if division else m * theta).sum(axis=1)
        return total / n if mean else total

    return fn


def critical(rounding=math.ceil, dims=True, two_pi=True, complement=False, log=None):
    def fn(d_head, base, train_length):
        t = train_length / (2 * math.pi) if two_pi else train_length
        lg = math.log(t) if log == "natural" else math.log(t) / math.log(base)
        pairs = min(d_head // 2, max(0, rounding(d_head / 2 * lg)))
        if complement:
            return d_head - 2 * pairs
        return 2 * pairs if dims else pairs

    return fn


def critical_by_counting(d_head, base, train_length):
    count = 0
    for i in range(d_head // 2):
        if 2 * math.pi * base ** (2 * i / d_head) < train_length:
            count += 1
    return 2 * count


CORRECT = {
    "check_partial_rope": partial(),
    "check_long_term_similarity": similarity(),
    "check_critical_dimension": critical_by_counting,
}

MISTAKES = {
    ("check_partial_rope", "partial rotary with the full head's frequencies"): partial(freqs="head"),
    ("check_partial_rope", "rotary_dim ignored (every channel rotated)"): partial(ignore_dim=True),
    ("check_partial_rope", "pass-through channels zeroed"): partial(rest="zero"),
    ("check_partial_rope", "the last rotary_dim channels rotated instead of the first"): partial(
        channels="last"
    ),
    ("check_partial_rope", "half layout inside the rotated channels"): partial(layout="half"),
    ("check_long_term_similarity", "sum over all d coordinates instead of the d/2 pairs"): similarity(
        n_terms="all"
    ),
    ("check_long_term_similarity", "mean instead of sum"): similarity(mean=True),
    ("check_long_term_similarity", "division instead of multiplication"): similarity(division=True),
    ("check_long_term_similarity", "missing factor 2 in the exponent 2i/d"): similarity(missing_2=True),
    ("check_long_term_similarity", "base argument ignored"): similarity(fixed_base=True),
    ("check_critical_dimension", "floor instead of ceiling"): critical(rounding=math.floor),
    ("check_critical_dimension", "pairs instead of dimensions"): critical(dims=False),
    ("check_critical_dimension", "training length not divided by 2*pi"): critical(two_pi=False),
    ("check_critical_dimension", "counted the dimensions that never complete a turn"): critical(
        complement=True
    ),
    ("check_critical_dimension", "natural logarithm instead of the logarithm to the base"): critical(
        log="natural"
    ),
}


@pytest.mark.parametrize("checker", CHECKERS)
def test_correct_answer_passes(checker):
    assert getattr(ex, checker)(CORRECT[checker]).startswith("correct on ")


def test_the_log_formula_passes_too():
    assert ex.check_critical_dimension(critical()).startswith("correct on ")


def test_every_known_mistake_has_an_example():
    listed = {(c, name) for c, names in ex.KNOWN_MISTAKES.items() if c in CHECKERS for name in names}
    assert listed == set(MISTAKES)
    assert all(c in ex.__all__ for c in CHECKERS)


@pytest.mark.parametrize(("checker", "mistake"), sorted(MISTAKES))
def test_every_known_mistake_is_named(checker, mistake):
    error = expect_mistake(getattr(ex, checker), MISTAKES[checker, mistake], f"known mistake '{mistake}'")
    assert error.mistake == mistake


def test_unknown_errors_and_bad_results_are_reported():
    def off(x, positions, rotary_dim, base=10000.0):
        return partial()(x, positions, rotary_dim, base) + 1e-3

    with pytest.raises(ExerciseError) as info:
        ex.check_partial_rope(off)
    assert info.value.mistake is None and "no known mistake" in str(info.value)

    with pytest.raises(ExerciseError) as info:
        ex.check_long_term_similarity(lambda m, d, base=10000.0: list(similarity()(m, d, base)))
    assert info.value.mistake == "not an array"

    with pytest.raises(ExerciseError) as info:
        ex.check_critical_dimension(lambda d, b, t: float(critical_by_counting(d, b, t)))
    assert info.value.mistake == "wrong dtype"  # a float scalar: its dtype is the problem


def test_bad_argument_and_stub():
    with pytest.raises(TypeError, match="fn"):
        ex.check_partial_rope(3)

    def stub(*args, **kwargs):
        raise NotImplementedError

    with pytest.raises(NotImplementedError):
        ex.check_critical_dimension(stub)


@pytest.mark.parametrize(
    ("convert", "problem"),
    [(float, "wrong dtype"), (complex, "complex values"), (lambda v: 10**30, "wrong dtype")],
)
def test_critical_dimension_scalars_are_diagnosed_by_kind(convert, problem):
    def fn(d, b, t):
        return convert(posenc.critical_dimension(d, b, t))

    assert mistake_of(exercises.check_critical_dimension, fn) == problem
