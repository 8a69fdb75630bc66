"""Tests of posenc.cope.cope_positions (CoPE's contextual positions).

Oracle: the definition p[i, j] = sum of g[i, t] for t = j..i, evaluated by an explicit
double loop in exact rational arithmetic (fractions.Fraction of the float64 gates), and
hand-worked small cases (all gates 1 give i - j + 1; sentence-end gates count sentences).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import posenc


def loop_oracle(g: np.ndarray) -> np.ndarray:
    """p[..., i, j] = sum_{t=j}^{i} g[..., i, t], summed exactly, rounded once."""
    flat = g.reshape(-1, g.shape[-2], g.shape[-1])
    out = np.zeros(flat.shape)
    n = g.shape[-1]
    for b in range(flat.shape[0]):
        for i in range(n):
            for j in range(i + 1):
                out[b, i, j] = float(
                    sum((Fraction(float(flat[b, i, t])) for t in range(j, i + 1)), Fraction(0))
                )
    return out.reshape(g.shape)


def test_all_gates_one_give_token_distance_plus_one():
    n = 7
    p = posenc.cope_positions(np.ones((n, n)))
    i, j = np.indices((n, n))
    assert np.array_equal(p, np.where(j <= i, i - j + 1, 0).astype(np.float64))
    assert p.dtype == np.float64


def test_sentence_gates_count_sentence_ends():
    # tokens: a b . c d . e ; gate 1 on the two '.' keys
    is_end = np.array([0, 0, 1, 0, 0, 1, 0], dtype=float)
    gates = np.tile(is_end, (7, 1))
    p = posenc.cope_positions(gates)
    # query 6 ('e'): keys 6 -> 0 ends between, 3..5 -> 1, 0..2 -> 2
    assert p[6].tolist() == [2, 2, 2, 1, 1, 1, 0]
    # query 4 ('d'): keys 3, 4 in its sentence -> 0; keys 0..2 -> 1 (the '.' at 2); later keys 0
    assert p[4].tolist() == [1, 1, 1, 0, 0, 0, 0]


def test_upper_triangle_of_gates_is_ignored():
    rng = np.random.default_rng(0)
    g = rng.uniform(size=(5, 5))
    g2 = g.copy()
    g2[np.triu_indices(5, 1)] = rng.uniform(size=10)
    assert np.array_equal(posenc.cope_positions(g), posenc.cope_positions(g2))
    assert np.all(posenc.cope_positions(g)[np.triu_indices(5, 1)] == 0.0)


@given(
    st.integers(1, 6),
    st.integers(1, 3),
    st.integers(0, 2**31 - 1),
)
def test_matches_the_loop_oracle(n, batch, seed):
    rng = np.random.default_rng(seed)
    g = rng.uniform(size=(batch, 2, n, n))
    g[rng.uniform(size=g.shape) < 0.3] = 0.0
    got = posenc.cope_positions(g)
    np.testing.assert_allclose(got, loop_oracle(g), rtol=1e-14, atol=1e-15)
    assert got.shape == g.shape


def test_positions_decrease_along_keys_and_are_bounded():
    g = np.random.default_rng(3).uniform(size=(9, 9))
    p = posenc.cope_positions(g)
    for i in range(9):
        row = p[i, : i + 1]
        assert np.all(np.diff(row) <= 1e-15)  # farther keys (smaller j) count more gates
        assert row[0] <= i + 1 and row[-1] == g[i, i]


@pytest.mark.parametrize(
    "bad, exc, words",
    [
        (np.ones(4), ValueError, "at least 2"),
        (np.ones((3, 4)), ValueError, "(..., L, L)"),
        (np.full((2, 2), 1.5), ValueError, "[0, 1]"),
        (np.full((2, 2), -0.1), ValueError, "[0, 1]"),
        (np.array([[np.nan, 0], [0, 0]]), ValueError, "gates"),
        (np.ones((2, 2), dtype=bool), TypeError, "gates"),
        (np.ones((2, 2), dtype=complex), TypeError, "gates"),
        ("ab", TypeError, "gates"),
        (np.ones((0, 0)), ValueError, "gates"),
    ],
)
def test_bad_gates_are_refused(bad, exc, words):
    with pytest.raises(exc) as info:
        posenc.cope_positions(bad)
    assert words in str(info.value)
