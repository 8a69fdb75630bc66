"""Tests of posenc.analysis.naive: integer, normalised and binary position encodings."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import EPS, mpf_exact, refuses_call
from hypothesis import given
from hypothesis import strategies as st

import posenc
from posenc.analysis.probe import AttentionProbe


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


MP_PREC = 300

FLOAT_MAX = float(np.finfo(np.float64).max)

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@given(length=st.integers(1, 300))
def test_integer_and_normalized_encodings_are_exact_quotients(length):
    assert posenc.analysis.integer_encoding(length)[:, 0].tolist() == [float(p) for p in range(length)]
    ends = posenc.analysis.normalized_encoding(np.int32(length))[:, 0].tolist()
    frac = posenc.analysis.normalized_encoding(length, mode="fraction")[:, 0].tolist()
    assert ends == [float(Fraction(p, max(length - 1, 1))) for p in range(length)]
    assert frac == [float(Fraction(p, length)) for p in range(length)]


@given(n_bits=st.integers(1, 80), data=st.data())
def test_binary_encoding_is_the_bits(n_bits, data):
    length = data.draw(st.integers(1, min(2**n_bits, 300)))
    got = posenc.analysis.binary_encoding(length, n_bits)
    assert got.shape == (length, n_bits)
    for p in range(length):
        assert got[p].tolist() == [float(ch) for ch in format(p, f"0{n_bits}b")]


@given(
    length=st.integers(1, 40),
    frequency=st.one_of(
        finite.filter(lambda f: f != 0),
        st.floats(1e-300, 1e300).map(lambda f: f * 1.0),
        st.sampled_from([1.0, -1.0, 0.1, math.pi, 2.0**52 + 1, 1e300, -1e300, 5e-324]),
    ),
)
def test_sine_encoding_is_the_sine_of_the_exact_product(length, frequency):
    if not math.isfinite(abs(frequency) * (length - 1)):
        length = 2
    got = posenc.analysis.sine_encoding(length, frequency=frequency)[:, 0]
    with mpmath.workprec(MP_PREC):
        want = [float(mpmath.sin(mpmath.mpf(frequency) * p)) for p in range(length)]
    np.testing.assert_allclose(got, want, rtol=0, atol=8 * EPS)
    if abs(frequency) < 1e-200:  # tiny angles: relative accuracy too
        np.testing.assert_allclose(got, want, rtol=16 * EPS, atol=1e-323)


def _mp_dist(a, b):
    with mpmath.workprec(MP_PREC):
        return mpmath.sqrt(mpmath.fsum((mpf_exact(x) - mpf_exact(y)) ** 2 for x, y in zip(a, b, strict=True)))


table_values = st.one_of(finite, st.sampled_from([1.5e308, -1.5e308, 1e-310, -3e-320, 1e200, 0.0, 7.0]))


@given(data=st.data(), L=st.integers(2, 6), d=st.integers(1, 3))
def test_neighbour_and_min_pairwise_distances_against_mpmath(data, L, d):
    vals = data.draw(st.lists(table_values, min_size=L * d, max_size=L * d))
    table = np.array(vals).reshape(L, d)
    exact = {(p, q): _mp_dist(table[p], table[q]) for p in range(L) for q in range(L) if p < q}
    neighbours = [exact[(p, p + 1)] for p in range(L - 1)]
    if any(v > FLOAT_MAX for v in neighbours):
        with pytest.raises(ValueError, match="pe"):
            posenc.analysis.neighbour_distances(table)
    else:
        got = posenc.analysis.neighbour_distances(table.tolist())
        np.testing.assert_allclose(got, [float(v) for v in neighbours], rtol=8 * EPS, atol=0)
    smallest = min(exact.values())
    if smallest > FLOAT_MAX:
        with pytest.raises(ValueError, match="pe"):
            posenc.analysis.min_pairwise_distance(table)
    else:
        assert posenc.analysis.min_pairwise_distance(table) == pytest.approx(
            float(smallest), rel=8 * EPS, abs=0
        )


@given(data=st.data(), n=st.integers(3, 12), d=st.integers(1, 2), scale_by_length=st.booleans())
def test_predicates_against_direct_loops(data, n, d, scale_by_length):
    vals = data.draw(st.lists(st.integers(-3, 3), min_size=n * d, max_size=n * d))
    T = np.array(vals, dtype=float).reshape(n, d)

    def encode(length):
        if length > n:
            raise ValueError("not defined")
        return T[:length] / length if scale_by_length else T[:length].tolist()

    lengths = sorted(set(data.draw(st.lists(st.integers(1, n), min_size=1, max_size=4))))
    rows = {L: [[float(x) / (L if scale_by_length else 1) for x in T[p]] for p in range(L)] for L in lengths}
    bound = data.draw(st.floats(0, 4))
    assert posenc.analysis.is_bounded(encode, lengths, bound=bound) == all(
        abs(x) <= bound for L in lengths for r in rows[L] for x in r
    )
    assert posenc.analysis.is_unique(encode, np.array(lengths)) == all(
        len({tuple(r) for r in rows[L]}) == L for L in lengths
    )
    assert posenc.analysis.is_length_consistent(encode, tuple(lengths), atol=0.0) == all(
        rows[a][p] == rows[b][p] for a in lengths for b in lengths if a < b for p in range(a)
    )
    k = data.draw(st.integers(1, n))

    def shift_ok(L):
        if k >= L:
            return True
        dist = [math.dist(rows[L][p + k], rows[L][p]) for p in range(L - k)]
        return max(dist) - min(dist) <= 1e-9 * max(max(dist), 1e-300)

    assert posenc.analysis.is_shift_consistent(encode, lengths, offsets=[k]) == all(
        shift_ok(L) for L in lengths
    )
    train = data.draw(st.integers(1, n))
    test = train + data.draw(st.integers(1, 4))
    assert posenc.analysis.is_defined_beyond(encode, train, test) == (test <= n)
    tol = data.draw(st.sampled_from([0.0, 0.01, 0.5]))
    if test <= n:
        seen = [[float(x) / (train if scale_by_length else 1) for x in T[p]] for p in range(train)]
        new = [[float(x) / (test if scale_by_length else 1) for x in T[p]] for p in range(train, test)]
        lo = [min(r[j] for r in seen) for j in range(d)]
        hi = [max(r[j] for r in seen) for j in range(d)]
        want = all(
            lo[j] - tol * (hi[j] - lo[j]) <= r[j] <= hi[j] + tol * (hi[j] - lo[j])
            for r in new
            for j in range(d)
        )
    else:
        want = False
    assert posenc.analysis.stays_in_training_range(encode, train, test, tol=tol) == want


def test_stays_in_training_range_with_a_range_wider_than_float64():
    table = np.array([[-1.5e308], [1.5e308], [1.7e308], [-1.7e308]])
    assert posenc.analysis.stays_in_training_range(
        lambda L: table[:L], 2, 4, tol=0.1
    )  # margin overflows to inf
    assert not posenc.analysis.stays_in_training_range(lambda L: table[:L], 2, 4, tol=0.0)


def _probe(**kw):
    return AttentionProbe(kw.pop("method", "alibi"), vocab=4, **kw)


def test_predicates_refuse_bad_encoders_and_length_containers():
    refuses_call(lambda: posenc.analysis.is_unique(None, [2]), TypeError, "encode")
    refuses_call(lambda: posenc.analysis.is_unique(lambda L: np.zeros((L + 1, 1)), [2]), ValueError, "encode")
    refuses_call(lambda: posenc.analysis.is_unique(posenc.analysis.integer_encoding, 3), TypeError, "lengths")
    refuses_call(
        lambda: posenc.analysis.is_unique(posenc.analysis.integer_encoding, "3"), TypeError, "lengths"
    )
    refuses_call(
        lambda: posenc.analysis.is_unique(posenc.analysis.integer_encoding, np.array([[2]])),
        ValueError,
        "lengths",
    )
    refuses_call(
        lambda: posenc.analysis.is_unique(posenc.analysis.integer_encoding, [2, 2.0]), TypeError, "lengths"
    )
    refuses_call(
        lambda: posenc.analysis.is_defined_beyond(posenc.analysis.integer_encoding, 3, 3),
        ValueError,
        "test_length",
    )
    refuses_call(lambda: posenc.analysis.probe_accuracy("probe", 3, 1), TypeError, "probe")
    refuses_call(lambda: posenc.analysis.fit_position_readout(object(), [1.0], train_len=1), TypeError, "pe")
    refuses_call(lambda: _probe(method="t5", num_buckets=32, max_distance=10), ValueError, "max_distance")
