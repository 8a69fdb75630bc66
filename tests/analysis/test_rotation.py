"""Tests of posenc.analysis.rotation: fit_linear_map, fit_shift_matrix, shift_matrix_angles.

The true shift matrix is built from mpmath (conftest.reference_shift_matrix), and
least-squares fits are checked against maps chosen by the test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import (
    EPS,
    mp_omegas,
    reference_shift_matrix,
    reference_table,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc


@given(seed=st.integers(0, 2**32 - 1), d_in=st.integers(1, 6), d_out=st.integers(1, 6))
def test_fit_linear_map_recovers_a_known_map(seed, d_in, d_out):
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(d_out, d_in))
    s = rng.normal(size=(3 * d_in + 2, d_in))  # overdetermined, full column rank a.s.
    got = posenc.analysis.fit_linear_map(s, s @ m.T)
    assert got.shape == (d_out, d_in)
    np.testing.assert_allclose(got, m, rtol=0, atol=1e-10)


def test_fit_linear_map_underdetermined_is_minimum_norm():
    rng = np.random.default_rng(0)
    s = rng.normal(size=(2, 4))  # 2 pairs in R^4: many exact solutions
    m_true = rng.normal(size=(3, 4))
    t = s @ m_true.T
    got = posenc.analysis.fit_linear_map(s, t)
    np.testing.assert_allclose(s @ got.T, t, atol=1e-12)  # reproduces the training pairs
    # Minimum norm: every row of the solution lies in the row space of s.
    null = np.linalg.svd(s)[2][2:]  # orthonormal basis of s's null space
    np.testing.assert_allclose(got @ null.T, 0, atol=1e-12)
    assert not np.allclose(got, m_true)  # ... and so is not the true map


def test_fit_linear_map_errors():
    z = np.zeros
    with pytest.raises(ValueError, match="rows"):
        posenc.analysis.fit_linear_map(z((3, 2)), z((4, 2)))
    with pytest.raises(ValueError, match="finite"):
        posenc.analysis.fit_linear_map(np.array([[np.nan]]), z((1, 1)))
    with pytest.raises(ValueError, match="rcond"):
        posenc.analysis.fit_linear_map(z((2, 2)), z((2, 2)), rcond=-1.0)
    with pytest.raises(ValueError, match="source"):
        posenc.analysis.fit_linear_map(z(3), z((3, 1)))
    with pytest.raises(TypeError, match="target"):
        posenc.analysis.fit_linear_map(z((1, 1)), np.array([["a"]]))


@pytest.mark.parametrize("offset", [1, 3, -2, 0])
def test_fit_shift_matrix_block_recovers_m_k(offset):
    d, L = 8, 64
    pe = reference_table(range(L), d)  # independent table (mpmath)
    got = posenc.analysis.fit_shift_matrix(pe, offset, structure="block")
    np.testing.assert_allclose(got, reference_shift_matrix(d, offset), rtol=0, atol=1e-9)


def test_fit_shift_matrix_full_recovers_m_k_when_well_conditioned():
    # d = 4, ω = (1, 0.01): 60 positions turn the slow pair by 0.6 rad, enough to fit.
    pe = reference_table(range(60), 4)
    got = posenc.analysis.fit_shift_matrix(pe, 5, structure="full")
    np.testing.assert_allclose(got, reference_shift_matrix(4, 5), rtol=0, atol=1e-7)


def test_fit_shift_matrix_half_layout():
    d, L, k = 6, 40, 2
    perm = np.array([0, 2, 4, 1, 3, 5])  # interleaved -> half, written out for d = 6
    pe = reference_table(range(L), d, layout="half")
    got = posenc.analysis.fit_shift_matrix(pe, k, structure="block", layout="half")
    np.testing.assert_allclose(got, reference_shift_matrix(d, k)[np.ix_(perm, perm)], rtol=0, atol=1e-9)


def test_fit_shift_matrix_errors():
    pe = reference_table(range(10), 4)
    with pytest.raises(TypeError, match="offset"):
        posenc.analysis.fit_shift_matrix(pe, 1.5)
    with pytest.raises(TypeError, match="offset"):
        posenc.analysis.fit_shift_matrix(pe, True)
    with pytest.raises(ValueError, match="offset"):
        posenc.analysis.fit_shift_matrix(pe, 10)
    with pytest.raises(ValueError, match="offset"):
        posenc.analysis.fit_shift_matrix(pe, -10)
    with pytest.raises(ValueError, match="structure"):
        posenc.analysis.fit_shift_matrix(pe, 1, structure="diag")
    with pytest.raises(ValueError, match="layout"):
        posenc.analysis.fit_shift_matrix(pe, 1, layout="neox")
    with pytest.raises(ValueError, match="shape"):
        posenc.analysis.fit_shift_matrix(np.ones((5, 3)), 1, structure="block")
    with pytest.raises(ValueError, match="pe"):
        posenc.analysis.fit_shift_matrix(np.ones(5), 1)


def _wrap(theta):
    # Reduce to (-π, π].
    r = math.remainder(theta, 2 * math.pi)
    return math.pi if r == -math.pi else r


@pytest.mark.parametrize("k", [1.0, 2.5, -7.0, 100.0, 4.0])
def test_shift_matrix_angles_of_m_k(k):
    d = 8
    got = posenc.analysis.shift_matrix_angles(reference_shift_matrix(d, k))
    expected = [_wrap(float(k * w)) for w in mp_omegas(d)]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert np.all(got > -math.pi) and np.all(got <= math.pi)


def test_shift_matrix_angles_half_layout():
    d, k = 6, 3.0
    perm = np.array([0, 2, 4, 1, 3, 5])
    m_half = reference_shift_matrix(d, k)[np.ix_(perm, perm)]
    expected = [_wrap(float(k * w)) for w in mp_omegas(d)]
    np.testing.assert_allclose(
        posenc.analysis.shift_matrix_angles(m_half, layout="half"), expected, atol=1e-12
    )


def test_shift_matrix_angles_errors():
    with pytest.raises(ValueError, match="square"):
        posenc.analysis.shift_matrix_angles(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="m.shape"):
        posenc.analysis.shift_matrix_angles(np.eye(3))
    with pytest.raises(ValueError, match="layout"):
        posenc.analysis.shift_matrix_angles(np.eye(4), layout="neox")


@settings(max_examples=25)
@given(d_in=st.integers(1, 4), d_out=st.integers(1, 4), data=st.data())
def test_fit_linear_map_recovers_an_integer_map_from_lists(d_in, d_out, data):
    m = np.array(data.draw(st.lists(st.integers(-5, 5), min_size=d_in * d_out, max_size=d_in * d_out)))
    m = m.reshape(d_out, d_in)
    source = np.vstack([np.eye(d_in, dtype=np.int64), np.ones((1, d_in), dtype=np.int64)])
    target = np.array(
        [[sum(int(m[o, c]) * int(s[c]) for c in range(d_in)) for o in range(d_out)] for s in source]
    )
    got = posenc.analysis.fit_linear_map(source.tolist(), target.astype(np.int16), rcond=np.float32(1e-12))
    np.testing.assert_allclose(got, m, rtol=0, atol=1e-12)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("offset", [1, 3, -2])
def test_fit_shift_matrix_recovers_the_exact_shift(layout, offset):
    d, base, length = 6, 4.0, 24
    pe = reference_table(range(length), d, base, layout=layout)
    ref = reference_shift_matrix(d, offset, base)
    if layout == "half":
        perm = [0, 2, 4, 1, 3, 5]
        ref = ref[np.ix_(perm, perm)]
    for structure in ("full", "block"):
        got = posenc.analysis.fit_shift_matrix(pe, np.int16(offset), structure=structure, layout=layout)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9)


@given(
    angles=st.lists(st.floats(-3.14, 3.14), min_size=1, max_size=5),
    layout=st.sampled_from(["interleaved", "half"]),
)
def test_shift_matrix_angles_reads_back_the_angles(angles, layout):
    half = len(angles)
    m = np.zeros((2 * half, 2 * half))
    for i, th in enumerate(angles):
        a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + half)
        m[a, a], m[a, b], m[b, a], m[b, b] = math.cos(th), math.sin(th), -math.sin(th), math.cos(th)
    got = posenc.analysis.shift_matrix_angles(m.tolist(), layout=layout)
    np.testing.assert_allclose(got, angles, rtol=0, atol=4 * EPS)
