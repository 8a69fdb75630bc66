"""The SymPy helpers refuse matrices, NaN, infinities and an empty matrix, naming the argument."""

from __future__ import annotations

import pytest
import sympy as sp

from posenc import symbolic


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
