"""Every documented bad input raises a clear error whose message names the argument.

Design contract: odd ``d_model``, non-positive sizes, bools/floats where ints are expected,
non-finite / 2-D / empty positions, unknown layout, non-float dtype, ``base <= 1`` and
integer positions beyond 2**53 raise ``ValueError`` or ``TypeError``, never a silent
wrong answer or a NaN.
"""

from __future__ import annotations

import numpy as np
import pytest

import posenc

PE = posenc.sinusoidal_encoding
NAN, INF = float("nan"), float("inf")

# (callable taking the bad value, argument name) for every place a d_model is accepted.
D_MODEL_SITES = [
    pytest.param(lambda d: posenc.frequencies(d), id="frequencies"),
    pytest.param(lambda d: PE(4, d), id="sinusoidal_encoding"),
    pytest.param(lambda d: posenc.relative_position_matrix(d, 1.0), id="relative_position_matrix"),
    pytest.param(lambda d: posenc.SinusoidalPositionalEncoding(4, d), id="SinusoidalPositionalEncoding"),
    pytest.param(
        lambda d: posenc.LearnedPositionalEncoding(4, d, init="sinusoidal"), id="Learned-sinusoidal"
    ),
]


@pytest.mark.parametrize("site", D_MODEL_SITES)
@pytest.mark.parametrize("d", [3, 5, 511, 0, -2, -3])
def test_d_model_odd_or_non_positive(site, d):
    with pytest.raises(ValueError, match="d_model"):
        site(d)


@pytest.mark.parametrize("site", D_MODEL_SITES)
@pytest.mark.parametrize("d", [4.0, 2.5, True, np.bool_(True), "4", None, np.float64(8)])
def test_d_model_wrong_type(site, d):
    with pytest.raises(TypeError, match="d_model"):
        site(d)


@pytest.mark.parametrize("site", D_MODEL_SITES)
def test_d_model_numpy_int_accepted(site):
    site(np.int64(4))  # numpy integers are integers: must not raise


@pytest.mark.parametrize("bad", [0, -1, -100])
def test_positions_non_positive_length(bad):
    with pytest.raises(ValueError, match="positions"):
        PE(bad, 4)


@pytest.mark.parametrize("bad", [True, False, 3.0, 2.5, np.float64(3.0), "3", None, 1 + 0j])
def test_positions_wrong_type(bad):
    with pytest.raises(TypeError, match="positions"):
        PE(bad, 4)


@pytest.mark.parametrize(
    "bad",
    [
        [0.0, NAN],
        [INF],
        [-INF, 1.0],
        np.array([1.0, np.nan], dtype=np.float32),
        np.array([np.inf], dtype=np.float16),
    ],
)
def test_positions_non_finite(bad):
    with pytest.raises(ValueError, match="positions"):
        PE(bad, 4)


@pytest.mark.parametrize("bad", [np.zeros((2, 2)), [[0, 1]], np.zeros((1, 3, 1)), np.array(5)])
def test_positions_not_one_dimensional(bad):
    with pytest.raises(ValueError, match="positions"):
        PE(bad, 4)


@pytest.mark.parametrize("bad", [[], np.array([], dtype=np.int64), np.zeros(0)])
def test_positions_empty(bad):
    with pytest.raises(ValueError, match="positions"):
        PE(bad, 4)


@pytest.mark.parametrize(
    "bad",
    [np.array([True, False]), np.array(["1", "2"]), np.array([1 + 1j]), np.array([1, None], dtype=object)],
)
def test_positions_non_real_dtype(bad):
    with pytest.raises(TypeError, match="positions"):
        PE(bad, 4)


@pytest.mark.parametrize(
    "bad",
    [
        np.array([2**53 + 1], dtype=np.int64),
        np.array([0, -(2**53) - 1], dtype=np.int64),
        np.array([2**63], dtype=np.uint64),
        np.array([2**64 - 1], dtype=np.uint64),
        np.array([np.iinfo(np.int64).min], dtype=np.int64),
        [2**60],
    ],
)
def test_integer_positions_beyond_2_53(bad):
    with pytest.raises(ValueError, match="positions"):
        PE(bad, 4)


def test_integer_positions_at_2_53_accepted():
    assert PE(np.array([2**53, -(2**53)], dtype=np.int64), 4).shape == (2, 4)


@pytest.mark.parametrize(
    ("layout", "exc"),
    [("neox", ValueError), ("Interleaved", ValueError), ("SPLIT", ValueError), ("", ValueError)]
    + [(None, TypeError), (0, TypeError)],  # not a string at all: a type error
)
def test_unknown_layout(layout, exc):
    with pytest.raises(exc, match="layout"):
        PE(4, 4, layout=layout)
    with pytest.raises(exc, match="layout"):
        posenc.relative_position_matrix(4, 1.0, layout=layout)
    with pytest.raises(exc, match="layout"):
        posenc.SinusoidalPositionalEncoding(4, 4, layout=layout)


@pytest.mark.parametrize(
    "dtype", [np.int32, np.int64, int, "int16", np.uint8, bool, np.complex128, object, "foo"]
)
def test_bad_dtype(dtype):
    with pytest.raises(TypeError, match="dtype"):
        PE(4, 4, dtype=dtype)
    with pytest.raises(TypeError, match="dtype"):
        posenc.SinusoidalPositionalEncoding(4, 4, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, "float32", float])
def test_float_dtypes_accepted(dtype):
    assert PE(3, 4, dtype=dtype).dtype == np.dtype(dtype)


BASE_SITES = [
    pytest.param(lambda b: posenc.frequencies(4, base=b), id="frequencies"),
    pytest.param(lambda b: PE(4, 4, base=b), id="sinusoidal_encoding"),
    pytest.param(lambda b: posenc.relative_position_matrix(4, 1.0, base=b), id="relative_position_matrix"),
    pytest.param(
        lambda b: posenc.SinusoidalPositionalEncoding(4, 4, base=b), id="SinusoidalPositionalEncoding"
    ),
]


@pytest.mark.parametrize("site", BASE_SITES)
@pytest.mark.parametrize("base", [1.0, 1, 0.5, 0.0, -10000.0, INF, NAN, -INF])
def test_base_out_of_range(site, base):
    with pytest.raises(ValueError, match="base"):
        site(base)


@pytest.mark.parametrize("site", BASE_SITES)
@pytest.mark.parametrize("base", ["10000", None, True, 1j, [10000.0]])
def test_base_wrong_type(site, base):
    with pytest.raises(TypeError, match="base"):
        site(base)


@pytest.mark.parametrize("offset", [NAN, INF, -INF])
def test_offset_non_finite(offset):
    with pytest.raises(ValueError, match="offset"):
        posenc.relative_position_matrix(4, offset)


@pytest.mark.parametrize("offset", ["1", None, True, 1j, [1.0]])
def test_offset_wrong_type(offset):
    with pytest.raises(TypeError, match="offset"):
        posenc.relative_position_matrix(4, offset)


@pytest.mark.parametrize("cls", [posenc.SinusoidalPositionalEncoding, posenc.LearnedPositionalEncoding])
def test_max_len(cls):
    for bad in (0, -5):
        with pytest.raises(ValueError, match="max_len"):
            cls(bad, 4)
    for bad in (4.0, True, "4", None):
        with pytest.raises(TypeError, match="max_len"):
            cls(bad, 4)


def test_no_nan_from_good_input_extremes():
    # The largest accepted inputs give finite values in [-1, 1], not NaN; beyond the
    # documented limit |p| <= 2**53 positions are refused (1.5e308 used to give NaN).
    pe = PE(np.array([2.0**53, -(2.0**53), 2.0**53 - 1, 5e-324]), 8)
    assert np.all(np.isfinite(pe)) and np.all(np.abs(pe) <= 1)
    for bad in ([1e300], [-1e300], [1.5e308], [2.0**53 + 2]):
        with pytest.raises(ValueError, match="positions"):
            PE(np.array(bad), 8)


@pytest.mark.parametrize("bad", [0, -1.5, float("nan"), float("inf")])
def test_check_positive_real_rejects_non_positive_and_non_finite(bad):
    from posenc._validation import check_positive_real

    with pytest.raises(ValueError, match="lr"):
        check_positive_real(bad, "lr")


@pytest.mark.parametrize("bad", [True, "1", None])
def test_check_positive_real_rejects_non_numbers(bad):
    from posenc._validation import check_positive_real

    with pytest.raises(TypeError, match="lr"):
        check_positive_real(bad, "lr")


def test_check_positive_real_returns_a_float():
    from posenc._validation import check_positive_real

    assert check_positive_real(np.int64(3), "lr") == 3.0
    assert type(check_positive_real(np.float32(0.5), "lr")) is float


# ---------------------------------------------------------------------------------------
# The shared checkers of posenc._validation, each with accepted and refused input. The
# argument name "widget" is not used by any public function: a message that names it
# comes from the name passed in, not from a fixed text.
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [1, 7, np.int64(12), np.uint8(255), 2**28])
def test_check_length_accepts_positive_integers_up_to_2_28(value):
    from posenc._validation import check_length

    got = check_length(value, "widget")
    assert type(got) is int and got == int(value)


@pytest.mark.parametrize(
    ("value", "exc"),
    [
        (0, ValueError),
        (-3, ValueError),
        (2**28 + 1, ValueError),
        (True, TypeError),
        (np.bool_(True), TypeError),
        (3.0, TypeError),
        (np.float64(3.0), TypeError),
        ("3", TypeError),
        (None, TypeError),
        (3 + 0j, TypeError),
        ([3], TypeError),
    ],
)
def test_check_length_refusals_name_the_argument(value, exc):
    from posenc._validation import check_length

    with pytest.raises(exc, match="widget"):
        check_length(value, "widget")


def test_check_length_message_states_the_limit():
    from posenc._validation import check_length

    with pytest.raises(ValueError, match=r"at most 2\*\*28"):
        check_length(2**28 + 1, "widget")


@pytest.mark.parametrize(
    ("q_len", "k_len", "expected"),
    [(3, None, (3, 3)), (2, 5, (2, 5)), (4, 4, (4, 4)), (np.int32(1), np.int64(9), (1, 9))],
)
def test_check_query_key_lengths_accepts_q_at_most_k(q_len, k_len, expected):
    from posenc._validation import check_query_key_lengths

    got = check_query_key_lengths(q_len, k_len)
    assert got == expected and all(type(n) is int for n in got)


@pytest.mark.parametrize(
    ("q_len", "k_len", "exc", "name"),
    [
        (5, 2, ValueError, "q_len=5, k_len=2"),
        (0, 3, ValueError, "q_len"),
        (3, 0, ValueError, "k_len"),
        (3, -1, ValueError, "k_len"),
        (2**28 + 1, None, ValueError, "q_len"),
        (True, 3, TypeError, "q_len"),
        (2.0, 3, TypeError, "q_len"),
        (3, 4.0, TypeError, "k_len"),
        (3, "4", TypeError, "k_len"),
    ],
)
def test_check_query_key_lengths_refusals(q_len, k_len, exc, name):
    from posenc._validation import check_query_key_lengths

    with pytest.raises(exc, match=name):
        check_query_key_lengths(q_len, k_len)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([3, 0, 5], [3, 0, 5]),
        ((1,), [1]),
        (range(2, 5), [2, 3, 4]),
        (np.array([4, 2], dtype=np.int16), [4, 2]),
        ([np.int64(7), 8], [7, 8]),
    ],
)
def test_check_int_sequence_accepts_sequences_of_integers(value, expected):
    from posenc._validation import check_int_sequence

    got = check_int_sequence(value, "widget", minimum=0)
    assert got == expected and all(type(n) is int for n in got)


@pytest.mark.parametrize(
    ("value", "kwargs", "exc", "name"),
    [
        ("123", {}, TypeError, "widget"),
        (b"12", {}, TypeError, "widget"),
        (3, {}, TypeError, "widget"),
        ({1, 2}, {}, TypeError, "widget"),
        (iter([1, 2]), {}, TypeError, "widget"),
        (None, {}, TypeError, "widget"),
        ([], {}, ValueError, "widget"),
        (np.zeros((2, 2), dtype=np.int64), {}, ValueError, "widget"),
        (np.array(3), {}, ValueError, "widget"),
        ([1, 2, 3], {"max_entries": 2}, ValueError, "widget"),
        ([1, True], {}, TypeError, r"widget\[1\]"),
        ([1, 2.0], {}, TypeError, r"widget\[1\]"),
        (np.array([1.0, 2.0]), {}, TypeError, r"widget\[0\]"),
        ([1, 1 + 0j], {}, TypeError, r"widget\[1\]"),
        (["1"], {}, TypeError, r"widget\[0\]"),
        ([4, -1], {"minimum": 0}, ValueError, r"widget\[1\] must be an integer >= 0"),
        ([4, 9], {"maximum": 8}, ValueError, r"widget\[1\] must be at most 8"),
    ],
)
def test_check_int_sequence_refusals(value, kwargs, exc, name):
    from posenc._validation import check_int_sequence

    with pytest.raises(exc, match=name):
        check_int_sequence(value, "widget", **kwargs)


def test_check_int_sequence_message_says_what_is_wanted():
    from posenc._validation import check_int_sequence

    with pytest.raises(TypeError, match="widget must be a list, tuple or 1-D array of 3 gadget counts"):
        check_int_sequence("abc", "widget", what="3 gadget counts")


def test_check_sequence_returns_a_list_of_the_entries_unchecked():
    from posenc._validation import check_sequence

    marker = object()
    assert check_sequence((1, "a", marker), "widget", "gadgets") == [1, "a", marker]
    assert check_sequence([2.5], "widget", "gadgets") == [2.5]


@pytest.mark.parametrize(
    ("value", "exc"),
    [("ab", TypeError), (b"ab", TypeError), ({1, 2}, TypeError), ({1: 2}, TypeError),
     (iter([1]), TypeError), (range(3), TypeError), (np.array([1.0]), TypeError), (1.0, TypeError),
     (None, TypeError), ([], ValueError), ((), ValueError)],
)  # fmt: skip
def test_check_sequence_refusals_name_the_argument(value, exc):
    from posenc._validation import check_sequence

    with pytest.raises(exc, match="widget"):
        check_sequence(value, "widget", "gadgets")
    if exc is TypeError:
        with pytest.raises(TypeError, match="widget must be a list or tuple of gadgets"):
            check_sequence(value, "widget", "gadgets")


def test_check_lengths_accepts_lengths_up_to_2_28():
    from posenc._validation import check_lengths

    assert check_lengths([1, 2**28], "widget") == [1, 2**28]
    assert check_lengths(np.array([5, 3]), "widget", max_entries=2) == [5, 3]


@pytest.mark.parametrize(
    ("value", "exc", "name"),
    [
        ([0], ValueError, r"widget\[0\]"),
        ([3, 2**28 + 1], ValueError, r"widget\[1\] must be at most 2\*\*28"),
        ([True], TypeError, r"widget\[0\]"),
        ([2.0], TypeError, r"widget\[0\]"),
        ([1, 2, 3], ValueError, "widget must have at most 2 entries"),
        (4, TypeError, "widget must be a list, tuple or 1-D array of positive integers"),
        ([], ValueError, "widget"),
    ],
)
def test_check_lengths_refusals(value, exc, name):
    from posenc._validation import check_lengths

    with pytest.raises(exc, match=name):
        check_lengths(value, "widget", max_entries=2)


def test_check_callable_returns_the_callable():
    from posenc._validation import check_callable

    assert check_callable(len, "widget", "of one argument") is len
    assert check_callable(np.sin, "widget", "on arrays") is np.sin


@pytest.mark.parametrize("value", [None, 3, "len", [len]])
def test_check_callable_refuses_non_callables(value):
    from posenc._validation import check_callable

    expected = f"widget must be a callable of one argument, got {type(value).__name__}"
    with pytest.raises(TypeError, match=f"^{expected}$"):
        check_callable(value, "widget", "of one argument")


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        ([1, -2, 3], np.int64),
        (np.array([2**64 - 1], dtype=np.uint64), np.uint64),
        (np.array([[1, 2]], dtype=np.int8), np.int8),
        (np.int32(-7), np.int32),
        (np.array([2**62, -(2**62)], dtype=np.int64), np.int64),
    ],
)
def test_as_integer_array_keeps_integer_dtype_and_magnitude(value, dtype):
    from posenc._arrays import as_integer_array

    got = as_integer_array(value, "widget")
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.array(value, dtype=dtype))


def test_as_integer_array_empty_only_without_nonempty():
    from posenc._arrays import as_integer_array

    assert as_integer_array(np.zeros(0, dtype=np.int64), "widget").shape == (0,)
    with pytest.raises(ValueError, match="widget must not be empty"):
        as_integer_array(np.zeros(0, dtype=np.int64), "widget", nonempty=True)


@pytest.mark.parametrize(
    "value",
    [
        [1.0, 2.0],
        3.0,
        np.array([True, False]),
        True,
        [1 + 0j],
        ["1"],
        [2**70],  # beyond int64 and uint64: an object array
        [1, None],
    ],
)
def test_as_integer_array_refuses_non_integers(value):
    from posenc._arrays import as_integer_array

    with pytest.raises(TypeError, match="widget must hold gadget ids"):
        as_integer_array(value, "widget", what="gadget ids")


def test_as_integer_array_refuses_ragged_lists():
    from posenc._arrays import as_integer_array

    with pytest.raises(TypeError, match="widget must be an array-like of numbers with a regular shape"):
        as_integer_array([[1, 2], [3]], "widget")


def test_as_integer_array_bounded_limits_magnitude_to_2_53():
    from posenc._arrays import as_integer_array

    got = as_integer_array(np.array([2**53, -(2**53)], dtype=np.int64), "widget", bounded=True)
    assert got.dtype == np.int64 and got.tolist() == [2**53, -(2**53)]
    assert as_integer_array(np.array([3], dtype=np.uint8), "widget", bounded=True).dtype == np.int64
    for bad in ([2**53 + 1], np.array([2**63], dtype=np.uint64)):
        with pytest.raises(ValueError, match=r"widget must have magnitude at most 2\*\*53"):
            as_integer_array(bad, "widget", bounded=True)


def test_as_positions_one_d_by_default_any_shape_on_request():
    from posenc._arrays import as_positions

    assert as_positions(3).tolist() == [0.0, 1.0, 2.0]  # an int L is 0..L-1
    assert as_positions(np.array([[1, 2]]), any_shape=True).tolist() == [[1.0, 2.0]]
    assert as_positions(4, any_shape=True).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"widget must be 1-D, got shape \(1, 2\)"):
        as_positions([[1, 2]], "widget")
    with pytest.raises(TypeError, match="widget must be an int length or an array of positions, got a 0-D"):
        as_positions(np.array(2.0), "widget", any_shape=True)
    with pytest.raises(TypeError, match="wrap a single position in a list"):
        as_positions(2.5, "widget", any_shape=True)


def test_as_positions_without_length_takes_a_scalar_as_one_position():
    from posenc._arrays import as_positions

    got = as_positions(3, "widget", allow_length=False, any_shape=True)
    assert got.shape == () and got == 3.0  # one position, not 0..2
    with pytest.raises(TypeError, match="widget must be an array of real positions, got a bool"):
        as_positions(True, "widget", allow_length=False, any_shape=True)
    with pytest.raises(TypeError, match="widget must be an int length or a 1-D array of positions, got a b"):
        as_positions(True, "widget")


def test_as_positions_bounded_only_by_default():
    from posenc._arrays import as_positions

    with pytest.raises(ValueError, match=r"widget must have magnitude at most 2\*\*53, got 1e\+300"):
        as_positions([1e300], "widget")
    assert as_positions([1e300], "widget", bounded=False).tolist() == [1e300]
    with pytest.raises(ValueError, match=r"widget must have magnitude at most 2\*\*53 to be exact"):
        as_positions([2**53 + 1], "widget", bounded=False)  # integers are always range-checked


@pytest.mark.parametrize(
    ("value", "expected"),
    [([1, 2.5], [1.0, 2.5]), ((3,), [3.0]), (np.array([0.25, 4.0], dtype=np.float32), [0.25, 4.0])],
)
def test_as_positive_vector_accepts_positive_finite_vectors(value, expected):
    from posenc._arrays import as_positive_vector

    got = as_positive_vector(value, "widget")
    assert got.dtype == np.float64 and got.shape == (len(expected),)
    assert got.tolist() == expected


@pytest.mark.parametrize(
    ("value", "exc"),
    [
        (1.0, ValueError),
        ([[1.0]], ValueError),
        ([], ValueError),
        ([1.0, 0.0], ValueError),
        ([-2.0], ValueError),
        ([-0.0], ValueError),
        ([NAN], ValueError),
        ([INF], ValueError),
        ([True], TypeError),
        ([1j], TypeError),
        (["1"], TypeError),
        ([[1.0], [2.0, 3.0]], TypeError),
    ],
)
def test_as_positive_vector_refusals_name_the_argument(value, exc):
    from posenc._arrays import as_positive_vector

    with pytest.raises(exc, match="widget"):
        as_positive_vector(value, "widget")


def test_as_positive_vector_message_names_the_unit():
    from posenc._arrays import as_positive_vector

    with pytest.raises(ValueError, match=r"widget must hold one finite value > 0 per gadget, got -1\.0"):
        as_positive_vector([2.0, -1.0], "widget", per="gadget")
