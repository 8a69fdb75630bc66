"""Input checks and the checked rotation shared by the RoPE functions (1-D, N-D and M-RoPE).

Position ids may come per sequence (left padding, packed sequences): an array whose shape
broadcasts to ``x.shape[:-1]``, e.g. ``(B, 1, L)`` for ``x`` of shape ``(B, H, L, d)``.
The token axis is never broadcast: the last axis of the positions is the ``L`` tokens.
"""

from __future__ import annotations

import numpy as np

from ._rotate import rotate_pairs
from ._validation import (
    MAX_POSITION,
    MAX_POSITION_TEXT,
    _all_finite,
    _asarray,
    _real_dtype_or_raise,
    as_real_array,
    check_finite_result,
)


def as_position_values(value: object, name: str) -> np.ndarray:
    """``value`` as a float64 array of any shape: real, finite, non-empty, ``|p| <= 2**53``.

    Integer positions are range-checked before the exact conversion to float64 (never
    through int32 or float32). Bools, complex numbers, strings, objects, ragged lists, NaN
    and infinities raise ``TypeError``/``ValueError`` naming ``name``.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an array of real positions, got a bool")
    arr = _asarray(value, name)
    _real_dtype_or_raise(arr, name, "hold real numbers")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if np.issubdtype(arr.dtype, np.integer):
        if int(arr.min()) < -MAX_POSITION or int(arr.max()) > MAX_POSITION:
            raise ValueError(f"{name} must have magnitude at most {MAX_POSITION_TEXT} to be exact in float64")
        return arr.astype(np.float64)
    out = arr.astype(np.float64)
    if not _all_finite(out):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    if float(np.max(np.abs(out))) > MAX_POSITION:
        biggest = float(np.max(np.abs(out)))
        raise ValueError(f"{name} must have magnitude at most {MAX_POSITION_TEXT}, got {biggest!r}")
    return out


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


def rotate_checked(
    arr: np.ndarray, phase: np.ndarray, layout: str, rotary_dim: int | None = None
) -> np.ndarray:
    """Rotate the pairs of ``arr[..., :rotary_dim]`` by ``phase`` in the one kernel.

    The channels from ``rotary_dim`` on (none when it is None) are copied unchanged into the
    result, which has the dtype of ``arr``. A non-finite ``arr`` is refused naming ``x``,
    an overflowing result (``x`` near its dtype's largest value, or a huge attention
    factor) with a ``ValueError`` naming the overflow.
    """
    d = arr.shape[-1]
    rot = d if rotary_dim is None else rotary_dim
    if rot == d:
        out, finite = rotate_pairs(arr, phase, layout, arr.dtype)
    else:
        out = np.empty(arr.shape, dtype=arr.dtype)
        out[..., rot:] = arr[..., rot:]
        out[..., :rot], finite = rotate_pairs(arr[..., :rot], phase, layout, arr.dtype)
        finite = finite and _all_finite(out[..., rot:])
    if not finite:
        as_real_array(arr, "x", min_ndim=2, keep_float_dtype=True)  # raises if x is not finite
        check_finite_result(
            out, f"x is too large: the rotated values (times the attention factor) overflow {arr.dtype}"
        )
    return out
