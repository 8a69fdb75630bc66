r"""Sinusoidal positional encoding (Vaswani et al., 2017).

For an even model width :math:`d` and :math:`i = 0, \dots, d/2 - 1` the frequencies are

.. math:: \omega_i = \mathrm{base}^{-2i/d},

and position :math:`p` is encoded, in the paper's ``"interleaved"`` layout, as

.. math:: PE_{p,2i} = \sin(p\,\omega_i), \qquad PE_{p,2i+1} = \cos(p\,\omega_i).

The ``"half"`` layout (also accepted as ``"split"``) puts all sines first and all cosines
after them, with the same frequencies. Shifting every position by :math:`k` rotates each
(sin, cos) pair by the angle :math:`k\omega_i`, so :math:`PE_{p+k} = M_k\,PE_p` for a
block-diagonal matrix :math:`M_k` that does not depend on :math:`p`
(:func:`relative_position_matrix`).
"""

from __future__ import annotations

import math

import numpy as np

from ._arrays import as_positions, as_real_array
from ._exact import correctly_rounded_frequencies, correctly_rounded_wavelengths
from ._table import fill
from ._validation import (
    MAX_ELEMENTS,
    MAX_ELEMENTS_TEXT,
    check_base,
    check_float_dtype,
    check_length,
    check_position,
    check_positive_int,
    check_size,
    check_width,
    is_int,
)
from .layouts import check_layout, layout_permutation


def frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    r"""Angular frequencies :math:`\omega_i = \mathrm{base}^{-2i/d_{model}}`, :math:`i = 0..d_{model}/2-1`.

    Returns a float64 array of length ``d_model // 2``, decreasing from
    :math:`\omega_0 = 1` to :math:`\omega_{d/2-1} = \mathrm{base}^{-(d-2)/d}` (not
    :math:`1/\mathrm{base}`). Every entry is the float64 number nearest to the exact value.

    ``d_model``: a positive even ``int`` (bools refused) at most 2**16; ``base``: a finite
    real number greater than 1. Raises ``TypeError`` for other types and ``ValueError``
    for an odd, non-positive or too large ``d_model`` or ``base <= 1``.
    """
    d_model = check_width(d_model, "d_model")
    base = check_base(base)
    return correctly_rounded_frequencies(d_model, base).copy()


def wavelengths(d_model: int, base: float = 10000.0) -> np.ndarray:
    r"""Wavelengths :math:`\lambda_i = 2\pi/\omega_i = 2\pi\,\mathrm{base}^{2i/d_{model}}`.

    One per pair, :math:`i = 0..d_{model}/2-1`.

    :math:`\lambda_i` is the number of positions after which the pair ``(2i, 2i+1)``
    repeats. Returns a float64 array of length ``d_model // 2``, a geometric progression
    with ratio :math:`\mathrm{base}^{2/d_{model}}` from :math:`\lambda_0 = 2\pi` to
    :math:`\lambda_{d/2-1} = 2\pi\,\mathrm{base}^{(d-2)/d}`, which is strictly less
    than :math:`2\pi\,\mathrm{base}` for every ``d_model``. Every entry is the float64
    number nearest to the exact value.

    Raises ``TypeError``/``ValueError`` for a non-integer, odd, non-positive or too large
    ``d_model`` (at most 2**16), for ``base`` that is not a finite number greater than 1,
    or for a ``base`` so large that the longest wavelength is beyond float64's range
    (:math:`2\pi\,\mathrm{base}^{(d-2)/d} > 1.8 \cdot 10^{308}`).
    """
    d_model = check_width(d_model, "d_model")
    base = check_base(base)
    out = correctly_rounded_wavelengths(d_model, base).copy()
    if not math.isfinite(out[-1]):
        raise ValueError(
            f"base = {base!r} is too large for d_model = {d_model}: the longest wavelength "
            f"2*pi*base**((d_model-2)/d_model) exceeds float64's range (1.8e308)"
        )
    return out


def sinusoidal_encoding(
    positions: int | np.ndarray,
    d_model: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    dtype: np.dtype | type = np.float64,
    out: np.ndarray | None = None,
) -> np.ndarray:
    r"""The sinusoidal encoding table, shape ``(L, d_model)``.

    ``positions`` is an int ``L`` (positions ``0..L-1``) or a 1-D array of real positions
    (negative and non-integer values allowed). With ``layout="interleaved"`` column
    ``2i`` holds :math:`\sin(p\,\omega_i)` and column ``2i+1`` holds
    :math:`\cos(p\,\omega_i)`; with ``layout="half"`` columns ``0..d/2-1`` hold the sines
    and columns ``d/2..d-1`` the cosines.

    ``out``, if given, is a writable array of shape ``(L, d_model)`` and dtype ``dtype``
    that receives the table and is returned (no other table-sized array is allocated); its
    contents are identical to the returned table without ``out``.
    :func:`iter_sinusoidal_blocks` yields the same table in row blocks.

    Accuracy and speed. The angle :math:`p\,\omega_i` is carried beyond float64: positions
    are float64 (never int32 or float32), :math:`\omega_i` is a sum ``w_hi + w_lo`` of two
    float64 numbers (about 106 bits), ``p * w_hi`` is split exactly into ``hi`` plus its
    rounding error, and only the small correction ``delta`` (that error plus ``p * w_lo``)
    is rounded, so the angle ``hi + delta`` is within about :math:`|p|\,\omega_i\,2^{-106}`
    (at most about :math:`2^{-53}` for :math:`|p| \le 2^{53}`) and every entry is within a
    few float64 rounding errors (:math:`\lesssim 2^{-51}`) of the exact value at *every*
    position, instead of the :math:`|p|\,\omega_i\,2^{-53}` of the
    textbook ``sin(p * w)``. Integer positions :math:`p = p_0 + j`
    (:math:`p_0` a multiple of 256, :math:`0 \le j < 256`) are combined by angle addition
    from exact sin/cos of the block starts and offsets, a few multiply-adds per entry
    instead of a sin and a cos; non-integer positions are evaluated directly. Values are
    computed in float64 and only the result is rounded to ``dtype``, so a float32 table is
    the float64 table rounded (within one float32 ulp of the correctly rounded value).

    Accepted input. ``positions``: an ``int`` ``1 <= L <= 2**28``, or a non-empty 1-D
    list/tuple/array of integers or floats with ``|p| <= 2**53`` (bools, complex numbers,
    NaN and infinities refused). ``d_model``: a positive even ``int`` at most 2**16.
    ``base``: a finite real number greater than 1. ``layout``: ``"interleaved"`` or
    ``"half"`` (``"split"`` is a synonym). ``dtype``: float16, float32 or float64. Without
    ``out`` the table may have at most 2**28 entries (``L * d_model``; 2 GiB in float64);
    larger tables are refused before any allocation (stream them with
    :func:`iter_sinusoidal_blocks`).
    Anything else raises ``TypeError``/``ValueError`` naming the argument.
    """
    d_model = check_width(d_model, "d_model")
    what = "the table (positions, d_model)"
    pos = as_positions(positions, per_position=d_model if out is None else 0, what=what)
    base = check_base(base)
    layout = check_layout(layout)
    dt = check_float_dtype(dtype)
    shape = (pos.size, d_model)
    if out is None:  # its size was checked by as_positions
        out = np.empty(shape, dtype=dt)
    else:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a numpy array or None, got {type(out).__name__}")
        if out.shape != shape or out.dtype != dt:
            raise ValueError(f"out must have shape {shape} and dtype {dt}, got {out.shape} and {out.dtype}")
        if not out.flags.writeable:
            raise ValueError("out must be writable")
    fill(out, pos, d_model, base, layout)
    return out


def iter_sinusoidal_blocks(
    positions: int | np.ndarray,
    d_model: int,
    *,
    block: int = 4096,
    base: float = 10000.0,
    layout: str = "interleaved",
    dtype: np.dtype | type = np.float64,
):
    """Yield ``(start, table_rows)`` for consecutive row blocks of the sinusoidal table.

    ``table_rows`` is ``sinusoidal_encoding(positions, ...)[start : start + block]``
    (bit for bit), computed without forming the whole table, so tables larger than
    memory can be streamed (e.g. L = 2^20, d_model = 1024 in float64 is 8 GiB).
    Each yielded array is new; consume or copy it before the next step.

    Arguments as :func:`sinusoidal_encoding` (``positions`` at most 2**28 of them), and
    ``block`` a positive ``int``; one block (``min(block, L) * d_model`` entries) may hold
    at most 2**28 entries. The arguments are checked when this function is called, before
    the first block is computed.
    """
    if not is_int(positions):
        pos = as_positions(positions)
    else:  # an int L: each block's positions are formed when it is, never arange(L) at once
        pos = check_positive_int(positions, "positions", MAX_ELEMENTS, MAX_ELEMENTS_TEXT)
    d_model = check_width(d_model, "d_model")
    base = check_base(base)
    layout = check_layout(layout)
    dt = check_float_dtype(dtype)
    block = check_positive_int(block, "block")
    length = pos if isinstance(pos, int) else pos.size
    check_size((min(block, length), d_model), "one block (block, d_model)")
    return _iter_blocks(pos, length, d_model, block, base, layout, dt)


def _iter_blocks(
    pos: np.ndarray | int,
    length: int,
    d_model: int,
    block: int,
    base: float,
    layout: str,
    dt: np.dtype,
):
    for a in range(0, length, block):
        if isinstance(pos, int):
            rows = np.arange(a, min(a + block, length), dtype=np.float64)
        else:
            rows = pos[a : a + block]
        buf = np.empty((rows.size, d_model), dtype=dt)
        fill(buf, rows, d_model, base, layout)
        yield a, buf


def relative_position_matrix(
    d_model: int, offset: float, *, base: float = 10000.0, layout: str = "interleaved"
) -> np.ndarray:
    r"""The matrix :math:`M_k` with :math:`PE_{p+k} = M_k\,PE_p` for every position :math:`p`.

    In the interleaved layout :math:`M_k` is block diagonal with 2x2 blocks

    .. math:: R_i(k) = \begin{pmatrix} \cos k\omega_i & \sin k\omega_i \\
                                       -\sin k\omega_i & \cos k\omega_i \end{pmatrix},

    acting on the pair :math:`(\sin p\omega_i, \cos p\omega_i)`; it is orthogonal and
    :math:`M_j M_k = M_{j+k}`. For ``layout="half"`` the same matrix is returned with rows
    and columns permuted to match that layout.

    ``d_model``: a positive even ``int`` with ``d_model**2 <= 2**28`` (so at most 16384);
    ``offset``: a real number (int or float, bools refused) with ``|offset| <= 2**53``;
    ``base`` a finite real number greater than 1; ``layout`` ``"interleaved"`` or
    ``"half"`` (``"split"`` is a synonym). The angle is formed as ``offset * w`` in float64
    with ``w`` the correctly rounded frequency, so each entry is within
    :math:`|k|\,\omega_i\,2^{-52}` plus a few ulp of the exact value.
    """
    d_model = check_width(d_model, "d_model")
    k = check_position(offset, "offset")
    base = check_base(base)
    layout = check_layout(layout)
    check_size((d_model, d_model), "the matrix (d_model, d_model)")
    omega = correctly_rounded_frequencies(d_model, base)
    c, s = np.cos(k * omega), np.sin(k * omega)
    m = np.zeros((d_model, d_model), dtype=np.float64)
    idx = np.arange(d_model // 2)
    m[2 * idx, 2 * idx] = c
    m[2 * idx, 2 * idx + 1] = s
    m[2 * idx + 1, 2 * idx] = -s
    m[2 * idx + 1, 2 * idx + 1] = c
    if layout == "half":
        perm = layout_permutation(d_model)
        m = m[np.ix_(perm, perm)]
    return m


class SinusoidalPositionalEncoding:
    """A precomputed sinusoidal table that is added to a batch of embeddings.

    ``forward(X)`` returns ``X + table[:L]`` for ``X`` of shape ``(B, L, d_model)`` (any
    number of leading axes is accepted), broadcasting the table over the batch. The
    table has no trainable parameters; ``L`` may not exceed ``max_len`` (compute a larger
    table, the formula works for every position).

    ``max_len`` and ``d_model`` as ``positions`` and ``d_model`` of
    :func:`sinusoidal_encoding` (the table has at most 2**28 entries). ``forward`` takes a
    real array-like (integers are promoted to float64; bools, complex numbers, NaN and
    infinities are refused) of at least two dimensions.
    """

    def __init__(
        self,
        max_len: int,
        d_model: int,
        *,
        base: float = 10000.0,
        layout: str = "interleaved",
        dtype: np.dtype | type = np.float64,
    ) -> None:
        self.max_len = check_length(max_len, "max_len")
        self.d_model = check_width(d_model, "d_model")
        check_size((self.max_len, self.d_model), "the table (max_len, d_model)")
        self.table = sinusoidal_encoding(self.max_len, self.d_model, base=base, layout=layout, dtype=dtype)
        self.table.setflags(write=False)

    def forward(self, X: np.ndarray) -> np.ndarray:
        """Return ``X + PE[:L]`` where ``L = X.shape[-2]``."""
        X = as_real_array(X, "X", min_ndim=2, nonempty=False, keep_float_dtype=True)
        if X.shape[-1] != self.d_model:
            raise ValueError(f"X must have last dimension d_model={self.d_model}, got shape {X.shape}")
        length = X.shape[-2]
        if length > self.max_len:
            raise ValueError(f"X has sequence length {length}, more than max_len={self.max_len}")
        return X + self.table[:length]

    __call__ = forward
