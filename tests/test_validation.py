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
    pytest.param(lambda d: posenc.interleaved_to_split(d), id="interleaved_to_split"),
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
    [("half", ValueError), ("Interleaved", ValueError), ("SPLIT", ValueError), ("", ValueError)]
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
