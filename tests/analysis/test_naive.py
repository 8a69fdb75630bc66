"""Tests of posenc.analysis.naive: integer, normalised and binary position encodings."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import posenc


def test_integer_encoding():
    got = posenc.analysis.integer_encoding(4)
    assert got.shape == (4, 1) and got.dtype == np.float64
    np.testing.assert_array_equal(got, [[0.0], [1.0], [2.0], [3.0]])


@given(length=st.integers(1, 500))
def test_integer_encoding_property(length):
    got = posenc.analysis.integer_encoding(length)
    assert got.shape == (length, 1)
    assert got[0, 0] == 0 and got[-1, 0] == length - 1
    assert np.all(np.diff(got[:, 0]) == 1)


def test_normalized_endpoints_hand():
    np.testing.assert_array_equal(
        posenc.analysis.normalized_encoding(5), [[0.0], [0.25], [0.5], [0.75], [1.0]]
    )
    np.testing.assert_array_equal(posenc.analysis.normalized_encoding(1), [[0.0]])
    np.testing.assert_array_equal(posenc.analysis.normalized_encoding(2, mode="endpoints"), [[0.0], [1.0]])


def test_normalized_fraction_hand():
    np.testing.assert_array_equal(
        posenc.analysis.normalized_encoding(4, mode="fraction"), [[0.0], [0.25], [0.5], [0.75]]
    )
    np.testing.assert_array_equal(posenc.analysis.normalized_encoding(1, mode="fraction"), [[0.0]])


@given(length=st.integers(2, 1000), mode=st.sampled_from(["endpoints", "fraction"]))
def test_normalized_values(length, mode):
    got = posenc.analysis.normalized_encoding(length, mode=mode)
    assert got.shape == (length, 1) and got.dtype == np.float64
    denominator = length - 1 if mode == "endpoints" else length
    for p in (0, 1, length // 2, length - 1):
        # Correctly rounded p / denominator (one float division is correctly rounded).
        assert got[p, 0] == float(Fraction(p, denominator))
    assert got[0, 0] == 0.0
    assert np.all(np.diff(got[:, 0]) > 0)
    if mode == "endpoints":
        assert got[-1, 0] == 1.0
    else:
        assert got[-1, 0] < 1.0


def test_normalized_gap_depends_on_length():
    # The requirement that fails: the same neighbour offset means different distances.
    gap10 = np.diff(posenc.analysis.normalized_encoding(10)[:, 0])[0]
    gap100 = np.diff(posenc.analysis.normalized_encoding(100)[:, 0])[0]
    assert gap10 == float(Fraction(1, 9)) and gap100 == float(Fraction(1, 99))


def test_binary_hand():
    got = posenc.analysis.binary_encoding(8, 3)
    expected = [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1]]
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float64
    # Most significant bit first: position 6 = 0b110.
    np.testing.assert_array_equal(posenc.analysis.binary_encoding(7, 4)[6], [0, 1, 1, 0])


@given(n_bits=st.integers(1, 12), data=st.data())
def test_binary_bits_reconstruct_positions(n_bits, data):
    length = data.draw(st.integers(1, 2**n_bits))  # length == 2**n_bits allowed
    got = posenc.analysis.binary_encoding(length, n_bits)
    assert got.shape == (length, n_bits)
    assert set(np.unique(got)) <= {0.0, 1.0}
    for p in range(0, length, max(1, length // 17)):
        assert "".join(str(int(b)) for b in got[p]) == format(p, f"0{n_bits}b")
    assert len({tuple(r) for r in got}) == length  # unique rows


def test_binary_too_few_bits_raises():
    with pytest.raises(ValueError, match="length"):
        posenc.analysis.binary_encoding(9, 3)
    posenc.analysis.binary_encoding(8, 3)  # exactly 2**n_bits positions is fine


@pytest.mark.parametrize(
    "call,exc,name",
    [
        (lambda: posenc.analysis.integer_encoding(0), ValueError, "length"),
        (lambda: posenc.analysis.integer_encoding(-3), ValueError, "length"),
        (lambda: posenc.analysis.integer_encoding(3.0), TypeError, "length"),
        (lambda: posenc.analysis.integer_encoding(True), TypeError, "length"),
        (lambda: posenc.analysis.normalized_encoding(0), ValueError, "length"),
        (lambda: posenc.analysis.normalized_encoding(4, mode="percent"), ValueError, "mode"),
        (lambda: posenc.analysis.binary_encoding(0, 3), ValueError, "length"),
        (lambda: posenc.analysis.binary_encoding(4, 0), ValueError, "n_bits"),
        (lambda: posenc.analysis.binary_encoding(4, 2.0), TypeError, "n_bits"),
        (lambda: posenc.analysis.binary_encoding(4.5, 3), TypeError, "length"),
    ],
)
def test_naive_bad_input(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# ---------------------------------------------------------------------------------------
# sine_encoding, distances, requirement predicates
# ---------------------------------------------------------------------------------------


def test_sine_encoding():
    got = posenc.analysis.sine_encoding(5, frequency=0.5)
    assert got.shape == (5, 1)
    np.testing.assert_allclose(got[:, 0], [math.sin(0.5 * p) for p in range(5)], rtol=0, atol=2**-52)
    with pytest.raises(ValueError, match="frequency"):
        posenc.analysis.sine_encoding(5, frequency=0.0)
    with pytest.raises(ValueError, match="frequency"):
        posenc.analysis.sine_encoding(5, frequency=float("inf"))


def test_neighbour_distances_binary_hamming():
    # Bits flipped from p to p+1 for p = 0..6 with 3 bits: 1, 2, 1, 3, 1, 2, 1.
    got = posenc.analysis.neighbour_distances(posenc.analysis.binary_encoding(8, 3))
    np.testing.assert_allclose(got**2, [1, 2, 1, 3, 1, 2, 1], rtol=1e-15)
    with pytest.raises(ValueError, match="pe"):
        posenc.analysis.neighbour_distances(np.ones((1, 3)))


def test_min_pairwise_distance_hand():
    assert posenc.analysis.min_pairwise_distance(np.array([[0.0], [3.0], [1.0]])) == 1.0
    assert posenc.analysis.min_pairwise_distance(np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 2.0]])) == 2.0
    assert posenc.analysis.min_pairwise_distance(np.array([[1.0, 2.0], [0.0, 0.0], [1.0, 2.0]])) == 0.0
    with pytest.raises(ValueError, match="pe"):
        posenc.analysis.min_pairwise_distance(np.ones((1, 2)))
    with pytest.raises(ValueError, match="pe"):
        posenc.analysis.min_pairwise_distance(np.array([[0.0], [np.nan]]))


def _sinus(length):
    return posenc.sinusoidal_encoding(length, 16)


def _binary3(length):
    return posenc.analysis.binary_encoding(length, 3)


def test_requirement_predicates():
    lengths = [4, 8, 16]
    integer, normalized = posenc.analysis.integer_encoding, posenc.analysis.normalized_encoding
    # bounded: integers exceed 1 once L > 2; normalised and sinusoidal stay in [-1, 1].
    assert posenc.analysis.is_bounded(integer, [2]) and not posenc.analysis.is_bounded(integer, lengths)
    assert posenc.analysis.is_bounded(normalized, lengths) and posenc.analysis.is_bounded(_sinus, lengths)
    # unique: 3 bits cannot encode 16 positions (the encoder raises -> False).
    assert posenc.analysis.is_unique(integer, lengths) and posenc.analysis.is_unique(_sinus, lengths)
    assert posenc.analysis.is_unique(_binary3, [8]) and not posenc.analysis.is_unique(_binary3, lengths)
    # length consistency: p/(L-1) moves when L changes; integers and sinusoids do not.
    assert not posenc.analysis.is_length_consistent(normalized, lengths)
    assert posenc.analysis.is_length_consistent(integer, lengths) and posenc.analysis.is_length_consistent(
        _sinus, lengths
    )
    # shift consistency: binary neighbour distances jump at carries (1, √2, 1, √3, ...).
    assert posenc.analysis.is_shift_consistent(integer, lengths, offsets=(1, 3))
    assert posenc.analysis.is_shift_consistent(_sinus, lengths, offsets=(1, 3))
    assert not posenc.analysis.is_shift_consistent(_binary3, [8])
    # beyond training length.
    assert posenc.analysis.is_defined_beyond(integer, 8, 100) and not posenc.analysis.is_defined_beyond(
        _binary3, 8, 9
    )
    assert not posenc.analysis.stays_in_training_range(integer, 10, 20)  # 10..19 > 9
    assert not posenc.analysis.stays_in_training_range(_binary3, 4, 8)  # MSB never 1 in training
    assert posenc.analysis.stays_in_training_range(
        posenc.analysis.sine_encoding, 100, 200
    )  # sin p fills [-1, 1]


def test_predicate_errors():
    integer = posenc.analysis.integer_encoding
    with pytest.raises(TypeError, match="lengths"):
        posenc.analysis.is_bounded(integer, 5)
    with pytest.raises(ValueError, match="lengths"):  # empty: the right type, a bad value
        posenc.analysis.is_unique(integer, [])
    with pytest.raises(ValueError, match="lengths"):
        posenc.analysis.is_unique(integer, [0])
    with pytest.raises(TypeError, match="encode"):
        posenc.analysis.is_bounded("not callable", [3])
    with pytest.raises(ValueError, match="rows"):
        posenc.analysis.is_bounded(lambda n: np.zeros((n + 1, 2)), [3])
    with pytest.raises(ValueError, match="test_length"):
        posenc.analysis.is_defined_beyond(integer, 8, 8)
    with pytest.raises(ValueError, match="tol"):
        posenc.analysis.stays_in_training_range(integer, 2, 4, tol=-0.1)
    with pytest.raises(TypeError, match="offsets"):
        posenc.analysis.is_shift_consistent(integer, [4], offsets=2)
