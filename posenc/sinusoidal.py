r"""Sinusoidal positional encoding (Vaswani et al., 2017).

For an even model width :math:`d` and :math:`i = 0, \dots, d/2 - 1` the frequencies are

.. math:: \omega_i = \mathrm{base}^{-2i/d},

and position :math:`p` is encoded, in the paper's ``"interleaved"`` layout, as

.. math:: PE_{p,2i} = \sin(p\,\omega_i), \qquad PE_{p,2i+1} = \cos(p\,\omega_i).

The ``"split"`` layout puts all sines first and all cosines after them, with the same
frequencies. Shifting every position by :math:`k` rotates each (sin, cos) pair by the
angle :math:`k\omega_i`, so :math:`PE_{p+k} = M_k\,PE_p` for a block-diagonal matrix
:math:`M_k` that does not depend on :math:`p` (:func:`relative_position_matrix`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._validation import (
    as_positions,
    check_array,
    check_base,
    check_even_int,
    check_finite_real,
    check_float_dtype,
    check_positive_int,
)

LAYOUTS = ("interleaved", "split")


def _check_layout(layout: object) -> str:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return str(layout)


@lru_cache(maxsize=64)
def _correctly_rounded_frequencies(d_model: int, base: float) -> np.ndarray:
    # base ** (-2i/d) evaluated with 113-bit mpmath arithmetic and rounded once to
    # float64, so each entry is the float64 nearest to the exact real number. The plain
    # float64 formulas are not: ``base ** x`` can be 1 ulp off, ``exp(-x * log(base))``
    # up to 14 ulp for d_model <= 4096 (measured in chapter 3).
    import mpmath

    with mpmath.workprec(113):
        b = mpmath.mpf(base)
        values = [float(mpmath.power(b, mpmath.mpf(-2 * i) / d_model)) for i in range(d_model // 2)]
    out = np.array(values, dtype=np.float64)
    out.setflags(write=False)
    return out


def frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    r"""Angular frequencies :math:`\omega_i = \mathrm{base}^{-2i/d_{model}}`, :math:`i = 0..d_{model}/2-1`.

    Returns a float64 array of length ``d_model // 2``, decreasing from
    :math:`\omega_0 = 1` to :math:`\omega_{d/2-1} = \mathrm{base}^{-(d-2)/d}` (not
    :math:`1/\mathrm{base}`). Every entry is the float64 number nearest to the exact value.

    Raises ``ValueError`` for an odd or non-positive ``d_model`` or ``base <= 1``.
    """
    d_model = check_even_int(d_model, "d_model")
    base = check_base(base)
    return _correctly_rounded_frequencies(d_model, base).copy()


@lru_cache(maxsize=64)
def _correctly_rounded_wavelengths(d_model: int, base: float) -> np.ndarray:
    # 2*pi * base ** (2i/d) with 113-bit mpmath arithmetic, rounded once to float64.
    import mpmath

    with mpmath.workprec(113):
        b = mpmath.mpf(base)
        two_pi = 2 * mpmath.pi
        values = [float(two_pi * mpmath.power(b, mpmath.mpf(2 * i) / d_model)) for i in range(d_model // 2)]
    out = np.array(values, dtype=np.float64)
    out.setflags(write=False)
    return out


def wavelengths(d_model: int, base: float = 10000.0) -> np.ndarray:
    r"""Wavelengths :math:`\lambda_i = 2\pi/\omega_i = 2\pi\,\mathrm{base}^{2i/d_{model}}`.

    One per pair, :math:`i = 0..d_{model}/2-1`.

    :math:`\lambda_i` is the number of positions after which the pair ``(2i, 2i+1)``
    repeats. Returns a float64 array of length ``d_model // 2``, a geometric progression
    with ratio :math:`\mathrm{base}^{2/d_{model}}` from :math:`\lambda_0 = 2\pi` to
    :math:`\lambda_{d/2-1} = 2\pi\,\mathrm{base}^{(d-2)/d}`, which is strictly less
    than :math:`2\pi\,\mathrm{base}` for every ``d_model``. Every entry is the float64
    number nearest to the exact value.

    Raises ``TypeError``/``ValueError`` for a non-integer, odd or non-positive ``d_model``
    or for ``base`` that is not a finite number greater than 1.
    """
    d_model = check_even_int(d_model, "d_model")
    base = check_base(base)
    return _correctly_rounded_wavelengths(d_model, base).copy()


def sinusoidal_encoding(
    positions: int | np.ndarray,
    d_model: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    dtype: np.dtype | type = np.float64,
) -> np.ndarray:
    r"""The sinusoidal encoding table, shape ``(L, d_model)``.

    ``positions`` is an int ``L`` (positions ``0..L-1``) or a 1-D array of real positions
    (negative and non-integer values allowed). With ``layout="interleaved"`` column
    ``2i`` holds :math:`\sin(p\,\omega_i)` and column ``2i+1`` holds
    :math:`\cos(p\,\omega_i)`; with ``layout="split"`` columns ``0..d/2-1`` hold the sines
    and columns ``d/2..d-1`` the cosines.

    The angles :math:`p\,\omega_i` are always formed in float64 from float64 positions
    (never int32 or float32), and sine and cosine are evaluated in float64; only the final
    values are rounded to ``dtype``. A float32 table therefore differs from the exact
    values by the float32 rounding alone (plus the float64 angle error,
    :math:`\approx |p|\,2^{-53}`, negligible for float32 up to very large positions).
    """
    pos = as_positions(positions)
    d_model = check_even_int(d_model, "d_model")
    base = check_base(base)
    layout = _check_layout(layout)
    dt = check_float_dtype(dtype)

    omega = _correctly_rounded_frequencies(d_model, base)
    angles = pos[:, None] * omega[None, :]
    half = d_model // 2
    out = np.empty((pos.size, d_model), dtype=np.float64)
    if layout == "interleaved":
        out[:, 0::2] = np.sin(angles)
        out[:, 1::2] = np.cos(angles)
    else:
        out[:, :half] = np.sin(angles)
        out[:, half:] = np.cos(angles)
    return out.astype(dt, copy=False)


def interleaved_to_split(d_model: int) -> np.ndarray:
    """Column permutation taking the interleaved layout to the split layout.

    Returns ``perm`` with ``split == interleaved[:, perm]``: the even columns (sines)
    followed by the odd columns (cosines). Its inverse is ``np.argsort(perm)``.
    """
    d_model = check_even_int(d_model, "d_model")
    return np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])


def relative_position_matrix(
    d_model: int, offset: float, *, base: float = 10000.0, layout: str = "interleaved"
) -> np.ndarray:
    r"""The matrix :math:`M_k` with :math:`PE_{p+k} = M_k\,PE_p` for every position :math:`p`.

    In the interleaved layout :math:`M_k` is block diagonal with 2x2 blocks

    .. math:: R_i(k) = \begin{pmatrix} \cos k\omega_i & \sin k\omega_i \\
                                       -\sin k\omega_i & \cos k\omega_i \end{pmatrix},

    acting on the pair :math:`(\sin p\omega_i, \cos p\omega_i)`; it is orthogonal and
    :math:`M_j M_k = M_{j+k}`. For ``layout="split"`` the same matrix is returned with rows
    and columns permuted to match that layout. ``offset`` may be any finite real number.
    """
    d_model = check_even_int(d_model, "d_model")
    k = check_finite_real(offset, "offset")
    base = check_base(base)
    layout = _check_layout(layout)
    omega = _correctly_rounded_frequencies(d_model, base)
    c, s = np.cos(k * omega), np.sin(k * omega)
    m = np.zeros((d_model, d_model), dtype=np.float64)
    idx = np.arange(d_model // 2)
    m[2 * idx, 2 * idx] = c
    m[2 * idx, 2 * idx + 1] = s
    m[2 * idx + 1, 2 * idx] = -s
    m[2 * idx + 1, 2 * idx + 1] = c
    if layout == "split":
        perm = interleaved_to_split(d_model)
        m = m[np.ix_(perm, perm)]
    return m


class SinusoidalPositionalEncoding:
    """A precomputed sinusoidal table that is added to a batch of embeddings.

    ``forward(X)`` returns ``X + table[:L]`` for ``X`` of shape ``(B, L, d_model)`` (any
    number of leading axes is accepted), broadcasting the table over the batch. The
    table has no trainable parameters; ``L`` may not exceed ``max_len`` (compute a larger
    table, the formula works for every position).
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
        self.max_len = check_positive_int(max_len, "max_len")
        self.d_model = check_even_int(d_model, "d_model")
        self.table = sinusoidal_encoding(self.max_len, self.d_model, base=base, layout=layout, dtype=dtype)
        self.table.setflags(write=False)

    def forward(self, X: np.ndarray) -> np.ndarray:
        """Return ``X + PE[:L]`` where ``L = X.shape[-2]``."""
        X = check_array(X, "X", min_ndim=2)
        if X.shape[-1] != self.d_model:
            raise ValueError(f"X must have last dimension d_model={self.d_model}, got shape {X.shape}")
        length = X.shape[-2]
        if length > self.max_len:
            raise ValueError(f"X has sequence length {length}, more than max_len={self.max_len}")
        return X + self.table[:length]

    __call__ = forward
