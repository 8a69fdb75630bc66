r"""bfloat16 emulated in numpy: rounding float32 values to 8 significant bits.

bfloat16 keeps the sign and the 8 exponent bits of float32 and only the top 7 of its 23
stored fraction bits, so it has float32's range with 8 significant bits (unit roundoff
:math:`2^{-8}`). A float32 value :math:`x` is rounded to bfloat16 by keeping the high 16
bits of its bit pattern :math:`u`, rounding to nearest with ties to even on the dropped
low 16 bits:

.. math:: u' = \bigl(u + \mathtt{0x7FFF} + \lfloor u / 2^{16} \rfloor \bmod 2\bigr)
          \;\&\; \mathtt{0xFFFF0000} .

The added :math:`\mathtt{0x7FFF}` carries into bit 16 exactly when the dropped part is
above one half of the bfloat16 spacing; at exactly one half it carries only when bit 16
(the last kept bit) is 1, which rounds the tie to the even neighbour. A carry out of the
fraction raises the exponent, which is the right result (and gives infinity above the
largest bfloat16 value). NaN stays NaN. The result is returned as float32 holding
bfloat16 values, so numpy arithmetic on it is float32 arithmetic on bfloat16 inputs (the
way bfloat16 kernels that accumulate in float32 compute), and every result must be
rounded again to stay in bfloat16.
"""

from __future__ import annotations

import numpy as np

from ._arrays import as_array

__all__ = ["round_to_bfloat16"]

_LOW = np.uint32(0x7FFF)
_KEEP = np.uint32(0xFFFF0000)


def round_to_bfloat16(x: object) -> np.ndarray:
    r"""Round float32 values to the nearest bfloat16 value (ties to even); returns float32.

    ``x``: a float32 or float16 scalar or array-like (float16 values are exact in float32,
    so they are converted first). float64 input raises ``TypeError``: rounding it to
    float32 first and then to bfloat16 would round twice; cast it with
    ``np.float32(...)`` (or ``.astype(np.float32)``) if that is what you want. Integer,
    bool, complex and object input raise ``TypeError``. The result has the shape of ``x``;
    finite values of magnitude at least :math:`2^{127}(2 - 2^{-8})` become infinite, NaN
    stays NaN, signed zeros keep their sign.
    """
    arr = as_array(x, "x")
    if arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    if arr.dtype != np.float32:
        hint = ": cast it to float32 first (this rounds once more)" if arr.dtype == np.float64 else ""
        raise TypeError(f"x must hold float32 (or float16) values, got dtype {arr.dtype}{hint}")
    u = np.ascontiguousarray(arr).view(np.uint32)
    with np.errstate(over="ignore"):
        rounded = (u + _LOW + ((u >> np.uint32(16)) & np.uint32(1))) & _KEEP
    out = rounded.view(np.float32)
    nan = np.isnan(arr)
    if nan.any():  # a NaN's payload can carry into the exponent: keep it a NaN
        out = np.where(nan, np.float32(np.nan), out)
    return out.reshape(arr.shape)
