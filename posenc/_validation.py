"""Input checks shared by the posenc modules.

Every public function validates its arguments with these helpers so that bad input fails
early with a message naming the argument and what was expected, instead of producing a
silently wrong array or a NaN.
"""

from __future__ import annotations

import numbers

import numpy as np

# Largest integer magnitude that float64 represents exactly; integer positions beyond it
# would be rounded when the angle is formed.
MAX_EXACT_INTEGER = 2**53


def check_positive_int(value: object, name: str) -> int:
    """Return ``value`` as an ``int`` if it is a positive integer, else raise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {value!r} of type {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def check_even_int(value: object, name: str) -> int:
    """Return ``value`` as an ``int`` if it is a positive even integer, else raise."""
    value = check_positive_int(value, name)
    if value % 2:
        raise ValueError(f"{name} must be even (sin/cos come in pairs), got {value}")
    return value


def check_base(base: object) -> float:
    """Return ``base`` as a float if it is a finite real number greater than 1."""
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, numbers.Real):
        raise TypeError(f"base must be a real number greater than 1, got {base!r}")
    base = float(base)
    if not np.isfinite(base) or base <= 1.0:
        raise ValueError(f"base must be a finite number greater than 1, got {base}")
    return base


def check_finite_real(value: object, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_positive_real(value: object, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number greater than 0."""
    value = check_finite_real(value, name)
    if value <= 0.0:
        raise ValueError(f"{name} must be a finite positive number, got {value}")
    return value


def as_positions(positions: object, name: str = "positions") -> np.ndarray:
    """Turn ``positions`` into a 1-D float64 array of finite positions.

    An integer ``L`` means the positions ``0, 1, ..., L-1``. A sequence or array is taken
    as it is (any real values, negative and non-integer allowed). Integer positions are
    converted to float64 directly, never through int32 or float32; integers larger in
    magnitude than 2**53 are rejected because float64 cannot hold them exactly.
    """
    if isinstance(positions, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int length or a 1-D array of positions, got a bool")
    if isinstance(positions, numbers.Integral):
        length = check_positive_int(positions, name)
        return np.arange(length, dtype=np.float64)
    if isinstance(positions, numbers.Real):
        raise TypeError(
            f"{name} must be an int length or a 1-D array of positions, got the scalar {positions!r}; "
            "wrap a single position in a list"
        )
    arr = np.asarray(positions)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.issubdtype(arr.dtype, np.integer):
        if arr.size and np.max(np.abs(arr.astype(object))) > MAX_EXACT_INTEGER:
            raise ValueError(f"{name} must have magnitude at most 2**53 to be exact in float64")
        return arr.astype(np.float64)
    out = arr.astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    return out


def check_array(value: object, name: str, ndim: int | None = None, min_ndim: int | None = None) -> np.ndarray:
    """Return ``value`` as a float array with the required number of dimensions."""
    arr = np.asarray(value)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
    ):
        raise TypeError(f"{name} must be a real-valued array, got dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {arr.shape}")
    return arr


def check_float_dtype(dtype: object) -> np.dtype:
    """Return ``dtype`` as a numpy floating dtype (float16, float32 or float64)."""
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"dtype must be a numpy floating dtype, got {dtype!r}") from exc
    if dt not in (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"dtype must be float16, float32 or float64, got {dt}")
    return dt
