"""posenc.symbolic against hand-derived cases."""

import math
import os

import numpy as np
import pytest
import sympy as sp

from posenc import symbolic
from posenc.symbolic import _without_sine_squares, rotation, sinusoidal_vector, softmax_rows, vanishes

t, u = sp.symbols("t u", real=True)


def test_vanishes_true_for_an_identity_and_false_otherwise():
    assert vanishes(sp.sin(t + u) - sp.sin(t) * sp.cos(u) - sp.cos(t) * sp.sin(u))
    assert not vanishes(sp.sin(t + u) - sp.sin(t) * sp.cos(u))
    assert not vanishes(sp.cos(t))


def test_sine_squares_are_rewritten_by_the_pythagorean_identity():
    s, c = sp.sin(t), sp.cos(t)
    assert _without_sine_squares(s**2 + c**2 - 1) == 0
    assert _without_sine_squares(s**4 + 2 * s**2 * c**2 + c**4 - 1) == 0  # (s^2 + c^2)^2 - 1
    assert _without_sine_squares(s**3) == sp.expand(s - s * c**2)
    assert _without_sine_squares(s * sp.sin(u) ** 2) == sp.expand(s - s * sp.cos(u) ** 2)
    assert _without_sine_squares(s * c) == s * c  # nothing to rewrite


def test_vanishes_uses_both_the_quick_rewrite_and_simplify():
    # needs sin^2 + cos^2 = 1 (the rewrite), then only simplify knows tan = sin / cos
    assert vanishes(sp.sin(t + u) ** 2 + sp.cos(t + u) ** 2 - 1)
    assert _without_sine_squares(sp.expand(sp.tan(t) - sp.sin(t) / sp.cos(t))) != 0
    assert vanishes(sp.tan(t) - sp.sin(t) / sp.cos(t))
    assert not vanishes(sp.sin(t) ** 2 - sp.cos(t) ** 2)
    assert not vanishes(sp.sin(t) ** 2 + sp.cos(u) ** 2 - 1)  # two angles: not an identity


def test_rotation_is_counter_clockwise_and_composes():
    # R(pi/2) maps the x axis to the y axis (counter-clockwise)
    assert rotation(sp.pi / 2) * sp.Matrix([1, 0]) == sp.Matrix([0, 1])
    diff = rotation(t) * rotation(u) - rotation(t + u)
    assert all(vanishes(entry) for entry in diff)
    assert all(vanishes(entry) for entry in rotation(t).T * rotation(t) - sp.eye(2))


def test_softmax_rows_sums_to_one_and_matches_the_definition():
    a, b = sp.symbols("a b", real=True)
    s = softmax_rows(sp.Matrix([[a, b], [0, sp.log(3)]]))
    assert sp.simplify(s[0, 0] + s[0, 1]) == 1
    assert sp.simplify(s[0, 0] - 1 / (1 + sp.exp(b - a))) == 0
    assert s[1, 0] == sp.Rational(1, 4) and s[1, 1] == sp.Rational(3, 4)


def test_sinusoidal_vector_at_numbers_is_sin_cos_of_each_product():
    # the math module's sin and cos of the products, written out: (sin 1.5, cos 1.5, sin 6, cos 6)
    got = sinusoidal_vector(3, [sp.Rational(1, 2), 2])
    want = [math.sin(1.5), math.cos(1.5), math.sin(6.0), math.cos(6.0)]
    assert got.shape == (4, 1)
    assert [float(e) for e in got] == pytest.approx(want, rel=1e-15, abs=1e-15)


def test_sinusoidal_vector_with_the_book_frequencies_is_vaswanis_row():
    # d = 4: omega_0 = 1 and omega_1 = 10000**(-1/2) = 1/100 exactly; row p = 5 by hand
    got = sinusoidal_vector(5, [sp.Integer(10000) ** sp.Rational(-2 * i, 4) for i in range(2)])
    assert list(got) == [sp.sin(5), sp.cos(5), sp.sin(sp.Rational(1, 20)), sp.cos(sp.Rational(1, 20))]
    want = [math.sin(5), math.cos(5), math.sin(0.05), math.cos(0.05)]
    np.testing.assert_allclose([float(e) for e in got], want, rtol=0, atol=1e-15)


def test_sinusoidal_vector_symbolic_dot_product_is_a_sum_of_cosines_of_the_offset():
    m, n = sp.symbols("m n", real=True)
    om = sp.symbols("omega_0:3", positive=True)
    dot = (sinusoidal_vector(m, om).T * sinusoidal_vector(n, om))[0]
    assert vanishes(dot - sum(sp.cos((n - m) * w) for w in om))
    assert vanishes((sinusoidal_vector(m, om).T * sinusoidal_vector(m, om))[0] - 3)  # d/2, not d
    assert not vanishes(dot - sum(sp.cos((n + m) * w) for w in om))


@pytest.mark.parametrize(
    ("position", "omegas", "exc", "name"),
    [
        (t, "ab", TypeError, "omegas must be a list or tuple"),
        (t, {u}, TypeError, "omegas must be a list or tuple"),
        (t, u, TypeError, "omegas must be a list or tuple"),
        (t, [], ValueError, "omegas must not be empty"),
        (t, [u, "w"], TypeError, r"omegas\[1\]"),
        (t, [True], TypeError, r"omegas\[0\]"),
        (t, [None], TypeError, r"omegas\[0\]"),
        (t, [sp.Eq(u, 1)], TypeError, r"omegas\[0\]"),
        ("t", [u], TypeError, "position"),
        (np.bool_(True), [u], TypeError, "position"),
        ([t], [u], TypeError, "position"),
    ],
)
def test_sinusoidal_vector_refusals_name_the_argument(position, omegas, exc, name):
    with pytest.raises(exc, match=name):
        sinusoidal_vector(position, omegas)


EVALUATED = "POSENC_TEST_STRING_WAS_EVALUATED"


@pytest.mark.parametrize(
    "call, name",
    [
        pytest.param(symbolic.rotation, "angle", id="rotation"),
        pytest.param(symbolic.vanishes, "expr", id="vanishes"),
        pytest.param(lambda s: symbolic.softmax_rows([[s, 1]]), "scores", id="softmax_rows"),
    ],
)
def test_symbolic_helpers_never_evaluate_a_string(call, name, monkeypatch):
    monkeypatch.delenv(EVALUATED, raising=False)
    code = f"__import__('os').environ.__setitem__('{EVALUATED}', '1') or 0"
    with pytest.raises(TypeError, match=name):
        call(code)
    assert EVALUATED not in os.environ
    with pytest.raises(TypeError, match=name):
        call(None)


def test_softmax_rows_refuses_infinite_scores_and_keeps_symbols():
    with pytest.raises(ValueError, match="scores"):
        symbolic.softmax_rows([[float("inf"), 1]])
    with pytest.raises(ValueError, match="scores"):
        symbolic.softmax_rows(sp.Matrix([[sp.oo, 0]]))
    for nan in (float("nan"), sp.nan):  # SymPy's NaN is neither finite nor infinite
        with pytest.raises(ValueError, match="scores"):
            symbolic.softmax_rows([[nan, 1]])
    a, b = sp.symbols("a b")
    row = symbolic.softmax_rows([[a, b]])
    assert sp.simplify(row[0] - 1 / (1 + sp.exp(b - a))) == 0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: symbolic.vanishes(sp.zeros(2)), "expr"),  # a zero matrix is not the number 0
        (lambda: symbolic.vanishes(sp.MatrixSymbol("A", 2, 2)), "expr"),
        (lambda: symbolic.rotation(sp.Matrix([[0]])), "angle"),
        (lambda: symbolic.sinusoidal_vector(sp.Matrix([[1]]), [1]), "position"),
    ],
)
def test_matrices_are_refused(call, name):
    with pytest.raises(TypeError, match=name):
        call()


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: symbolic.rotation(float("nan")), "angle"),
        (lambda: symbolic.rotation(sp.oo), "angle"),
        (lambda: symbolic.sinusoidal_vector(sp.zoo, [1]), "position"),
        (lambda: symbolic.sinusoidal_vector(1, [float("inf")]), r"omegas\[0\]"),
        (lambda: symbolic.softmax_rows(sp.Matrix(0, 0, [])), "scores must not be empty"),
    ],
)
def test_nan_infinities_and_empty_scores_are_refused(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_symbols_of_unknown_finiteness_still_work():
    x = sp.Symbol("x")
    assert symbolic.vanishes(sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1)
    assert symbolic.rotation(x)[1, 0] == sp.sin(x)
