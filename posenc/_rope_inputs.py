"""The checked rotation shared by the RoPE functions (1-D, N-D and M-RoPE).

Internal: used by ``rope``, ``rope_nd`` and ``analysis/_probe_tables``; not public API.

Their position checks are ``as_positions`` and ``check_token_shape`` in ``_arrays``.
"""

from __future__ import annotations

import numpy as np

from ._arrays import all_finite, as_real_array, check_finite_result
from ._rotate import rotate_pairs


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
        finite = finite and all_finite(out[..., rot:])
    if not finite:
        as_real_array(arr, "x", min_ndim=2, keep_float_dtype=True)  # raises if x is not finite
        check_finite_result(
            out, f"x is too large: the rotated values (times the attention factor) overflow {arr.dtype}"
        )
    return out
