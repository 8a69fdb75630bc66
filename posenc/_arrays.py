"""Internal: shared by the posenc modules. Array-like arguments as checked numpy arrays.

Positions and offsets, real arrays, integer arrays, per-head or per-pair vectors: each
is converted once, with a message naming the argument for bools, complex numbers,
strings, ragged lists, NaN, infinities and out-of-range values, so that no function
computes on an array it did not check. Scalar arguments and the documented limits are
in ``posenc._validation``.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._validation import (
    MAX_ELEMENTS,
    MAX_ELEMENTS_TEXT,
    MAX_POSITION,
    MAX_POSITION_TEXT,
    check_positive_int,
    check_size,
)


def is_integer_dtype(dtype: object) -> bool:
    """Whether ``dtype`` holds signed or unsigned integers (bools and timedelta64 do not).

    numpy files ``timedelta64`` under ``np.integer``; a duration is not a number here.
    """
    return np.dtype(dtype).kind in "iu"


def is_real_dtype(dtype: object) -> bool:
    """Whether ``dtype`` holds real numbers: integers or floats (bools, complex, timedelta64 do not)."""
    return np.dtype(dtype).kind in "iuf"


def as_array(value: object, name: str) -> np.ndarray:
    """``np.asarray(value)``, with ragged or unconvertible input a ``TypeError`` naming ``name``."""
    try:
        return np.asarray(value)
    except (ValueError, TypeError, OverflowError) as exc:
        raise TypeError(f"{name} must be an array-like of numbers with a regular shape ({exc})") from None


def _real_dtype_or_raise(arr: np.ndarray, name: str, what: str) -> None:
    # Real means integer or floating; bool, complex, strings and objects are refused.
    if not is_real_dtype(arr.dtype):
        kind = "complex" if np.issubdtype(arr.dtype, np.complexfloating) else str(arr.dtype)
        raise TypeError(f"{name} must {what}, got dtype {kind}")


def all_finite(arr: np.ndarray) -> bool:
    """Whether every entry of ``arr`` is finite (integer arrays always are)."""
    # min and max propagate NaN and expose infinities: two passes, no temporary array.
    if arr.size == 0 or not np.issubdtype(arr.dtype, np.floating):
        return True
    return bool(np.isfinite(arr.min()) and np.isfinite(arr.max()))


def as_positions(
    positions: object,
    name: str = "positions",
    *,
    allow_length: bool = True,
    any_shape: bool = False,
    bounded: bool = True,
    per_position: int = 0,
    what: str = "",
) -> np.ndarray:
    """Turn ``positions`` into a float64 array of finite positions.

    With ``allow_length`` (the default) an integer ``L`` means the positions
    ``0, 1, ..., L-1`` (``1 <= L <= 2**28``) and another scalar raises ``TypeError``;
    without it a real scalar is one position (a 0-D result). An array-like (list, tuple,
    numpy array of an integer or floating dtype) is taken as it is: non-empty, real values
    with ``|p| <= 2**53`` (any finite float with ``bounded=False``; negative and
    non-integer allowed), 1-D unless ``any_shape`` (e.g. ``(B, L)`` ids; with
    ``allow_length`` still not 0-D). Integer positions are range-checked before the exact
    conversion to float64, never through int32 or float32. With ``per_position``, the
    caller's array of ``len(positions) * per_position`` entries (``what``, for the
    message) is checked by :func:`~posenc._validation.check_size`, for an ``int`` before
    ``arange(L)`` is formed. Bools, complex numbers, strings, objects, ragged lists, NaN,
    infinities and magnitudes above the limit raise ``TypeError``/``ValueError`` naming
    ``name``.
    """
    if allow_length:
        if isinstance(positions, (bool, np.bool_)):
            raise TypeError(f"{name} must be an int length or a 1-D array of positions, got a bool")
        if type(positions) is int or isinstance(positions, numbers.Integral):  # an exact int skips the ABC
            length = check_positive_int(positions, name, MAX_ELEMENTS, MAX_ELEMENTS_TEXT)
            if per_position:
                check_size((length, per_position), what)
            return np.arange(length, dtype=np.float64)
        if isinstance(positions, numbers.Number):
            raise TypeError(
                f"{name} must be an int length or a 1-D array of positions, got the scalar {positions!r}; "
                "wrap a single position in a list"
            )
    elif isinstance(positions, (bool, np.bool_)):
        raise TypeError(f"{name} must be an array of real positions, got a bool")
    arr = as_array(positions, name)
    if not any_shape:
        _real_dtype_or_raise(arr, name, "hold real numbers")
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    elif allow_length and arr.ndim == 0:
        raise TypeError(f"{name} must be an int length or an array of positions, got a 0-D array")
    if per_position:
        check_size((arr.size, per_position), what)
    if any_shape:  # the 1-D path checked the dtype above
        _real_dtype_or_raise(arr, name, "hold real numbers")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if is_integer_dtype(arr.dtype):
        if int(arr.min()) < -MAX_POSITION or int(arr.max()) > MAX_POSITION:
            raise ValueError(f"{name} must have magnitude at most {MAX_POSITION_TEXT} to be exact in float64")
        return arr.astype(np.float64)
    out = arr.astype(np.float64)
    if not all_finite(out):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    if bounded and (biggest := float(np.max(np.abs(out)))) > MAX_POSITION:
        raise ValueError(f"{name} must have magnitude at most {MAX_POSITION_TEXT}, got {biggest!r}")
    return out


def as_offsets(k: object, name: str = "k") -> tuple[np.ndarray, bool]:
    """Return ``k`` as a float64 array of finite offsets and whether it was a scalar.

    A real scalar or a non-empty array-like of any shape: any finite float, integers up to
    2**53 in magnitude; otherwise refused as by :func:`as_positions`.
    """
    return as_positions(k, name, allow_length=False, any_shape=True, bounded=False), np.ndim(k) == 0


def as_real_array(
    value: object,
    name: str,
    *,
    ndim: int | None = None,
    min_ndim: int | None = None,
    nonempty: bool = True,
    finite: bool = True,
    keep_float_dtype: bool = False,
) -> np.ndarray:
    """Return ``value`` (an array-like of real numbers) as a float array, checked.

    Integer input is promoted to float64 (never computed in a small integer type); float
    input becomes float64, or keeps its float dtype with ``keep_float_dtype``. Bool,
    complex, string and object input raise ``TypeError``; a wrong number of dimensions,
    an empty array (with ``nonempty``) or NaN/infinity (with ``finite``) raise
    ``ValueError``; every message names ``name``.
    """
    arr = as_array(value, name)
    _real_dtype_or_raise(arr, name, "be a real-valued array (integers or floats)")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {arr.shape}")
    if nonempty and arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if is_integer_dtype(arr.dtype) or not keep_float_dtype:
        arr = arr.astype(np.float64)
    if finite and not all_finite(arr):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    return arr


def as_integer_array(
    value: object, name: str, *, what: str = "integers", nonempty: bool = False, bounded: bool = False
) -> np.ndarray:
    """Return ``value`` (an integer scalar or array-like of any shape) as a numpy integer array.

    By default the integer dtype is kept (e.g. ``uint64``) and the magnitude is not
    limited: for callers that only compare or clip the values. With ``bounded`` the
    entries must have magnitude at most 2**53 (else ``ValueError``) and the result is
    int64. Floats (even ``3.0``), bools, complex numbers, strings, objects (Python
    integers beyond the int64/uint64 range arrive as objects) and ragged lists raise
    ``TypeError``; an empty array raises ``ValueError`` with ``nonempty``. Messages name
    ``name`` and say it must hold ``what``.
    """
    arr = as_array(value, name)
    if arr.size == 0 and isinstance(value, (list, tuple)):
        arr = arr.astype(np.int64)  # numpy reads [] as float64; an empty list holds no non-integer
    if arr.dtype == object:
        raise TypeError(
            f"{name} must hold {what}, got dtype object (integers beyond the int64/uint64 range, "
            "or values of mixed types)"
        )
    if not is_integer_dtype(arr.dtype):  # bools included
        raise TypeError(f"{name} must hold {what}, got dtype {arr.dtype}")
    if nonempty and arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if not bounded:
        return arr
    if arr.size and (int(arr.min()) < -MAX_POSITION or int(arr.max()) > MAX_POSITION):
        raise ValueError(f"{name} must have magnitude at most {MAX_POSITION_TEXT}")
    return arr.astype(np.int64)


def as_positive_vector(value: object, name: str, *, per: str | None = None) -> np.ndarray:
    """Return ``value`` as a non-empty 1-D float64 array of finite values > 0.

    For parameters given once per head, per frequency pair and so on (``per`` names the
    unit in the message: ``per="head"`` reads "one finite value > 0 per head"). Accepts a
    list, tuple or 1-D array of integers or floats. A scalar, another number of
    dimensions, an empty array, NaN, infinities, zero and negative values raise
    ``ValueError``; bools, complex numbers and strings ``TypeError``; all name ``name``.
    """
    arr = as_real_array(value, name, ndim=1)
    if float(arr.min()) <= 0.0:
        what = "finite values > 0" if per is None else f"one finite value > 0 per {per}"
        raise ValueError(f"{name} must hold {what}, got {float(arr.min())!r}")
    return arr


def check_finite_result(values: np.ndarray, message: str) -> np.ndarray:
    """Return ``values`` if every entry is finite, else raise ``ValueError(message)``.

    For results whose true value lies beyond the float64 range (about 1.8e308): the
    message names the arguments responsible and their limit.
    """
    if not all_finite(np.asarray(values)):
        raise ValueError(message)
    return values


def check_token_shape(shape: tuple[int, ...], name: str, target: tuple[int, ...]) -> None:
    """Refuse a position shape that does not broadcast to ``target`` (= ``x.shape[:-1]``).

    At least one axis, no more axes than ``target``, the last axis equal to the number of
    tokens ``target[-1]``, every other axis 1 or equal to the matching axis of ``target``.
    """
    ok = 1 <= len(shape) <= len(target) and shape[-1] == target[-1]
    ok = ok and all(n in (1, t) for n, t in zip(shape[::-1], target[::-1], strict=False))
    if not ok:
        raise ValueError(
            f"{name} has shape {tuple(shape)} (position axes), which does not broadcast to "
            f"x.shape[:-1] = {tuple(target)} with its last axis the {target[-1]} tokens; "
            "use e.g. (L,), (B, 1, L) for x of shape (B, H, L, d), or (B, H, L)"
        )
