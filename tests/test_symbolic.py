"""posenc.symbolic against hand-derived cases."""

import sympy as sp

from posenc.symbolic import rotation, softmax_rows, vanishes

t, u = sp.symbols("t u", real=True)


def test_vanishes_true_for_an_identity_and_false_otherwise():
    assert vanishes(sp.sin(t + u) - sp.sin(t) * sp.cos(u) - sp.cos(t) * sp.sin(u))
    assert not vanishes(sp.sin(t + u) - sp.sin(t) * sp.cos(u))
    assert not vanishes(sp.cos(t))


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
