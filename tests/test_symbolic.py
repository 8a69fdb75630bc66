"""posenc.symbolic against hand-derived cases."""

import math

import numpy as np
import pytest
import sympy as sp

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
