r"""RoPE in several dimensions: axial and mixed RoPE for images, video and other grids.

A token at coordinates :math:`c = (c_0, \dots, c_{n-1})` (row and column of an image patch,
frame, height and width of a video patch, ...) has pair :math:`j` of its query or key
turned by the angle

.. math:: \phi_j(c) = \sum_a c_a F_{a j},

with a frequency matrix :math:`F` of shape ``(n_axes, d_head/2)``. Because
:math:`\phi_j` is linear in :math:`c`, the rotation :math:`R(c)` of the whole vector
satisfies :math:`R(c)^\top R(c') = R(c' - c)`, so
:math:`\langle R(c)q, R(c')k\rangle = \langle q, R(c' - c)k\rangle` depends on the
coordinates only through their difference, on every axis at once.

*Axial* RoPE (:func:`axial_rope_frequencies`) gives each axis its own consecutive block of
pairs, with the frequencies of a smaller 1-D RoPE: each pair turns with one coordinate
only. *Mixed* RoPE lets :math:`F` be dense (e.g. learned), so a pair turns with a
direction in the grid, which can represent diagonal structure that axial RoPE cannot.
M-RoPE (Qwen2-VL) is in :mod:`posenc.mrope`.
"""

from __future__ import annotations

import numpy as np

from ._arrays import as_positions, as_real_array, check_token_shape
from ._rope_inputs import rotate_checked
from ._rotate import unit_phases
from ._validation import (
    MAX_D_MODEL,
    MAX_D_MODEL_TEXT,
    check_base,
    check_positive_int,
    check_size,
    check_width,
)
from .layouts import check_layout
from .sinusoidal import frequencies


def _nd_angles(coords: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    r"""``angles[..., l, j] = sum_a coords[..., l, a] * freqs[a, j]`` in float64.

    Summed axis by axis in a fixed order (``((c_0 F_0 + c_1 F_1) + c_2 F_2) ...``), one
    elementwise product and sum at a time, never a BLAS product whose order or fused
    operations may vary: a pair whose frequency is zero on every axis but one gets exactly
    the 1-D angle ``fl(c_a * F_aj)`` (adding a zero is exact).
    """
    angles = coords[..., 0, None] * freqs[0]
    for a in range(1, freqs.shape[0]):
        angles += coords[..., a, None] * freqs[a]
    return angles


def apply_rope_nd(
    x: np.ndarray,
    coords: np.ndarray,
    freqs: np.ndarray,
    *,
    layout: str = "interleaved",
) -> np.ndarray:
    r"""N-D RoPE: rotate pair :math:`j` of token :math:`l` by :math:`\sum_a c_{l,a} F_{a,j}`.

    ``x[..., L, d_head]`` holds the queries or keys; ``coords[..., L, n_axes]`` the
    coordinates of each token; ``freqs`` :math:`F` of shape ``(n_axes, d_head/2)``. Pair
    :math:`j` of token :math:`l` (coordinates ``(2j, 2j+1)`` for ``layout="interleaved"``,
    ``(j, j + d/2)`` for ``"half"``) is read as :math:`z = a + \mathrm{i}b` and replaced by
    :math:`z\,e^{\mathrm{i}\phi_{l,j}}`, :math:`\phi_{l,j} = \sum_a c_{l,a}F_{a,j}`. With
    :func:`axial_rope_frequencies` this is axial RoPE, with a dense ``freqs`` mixed RoPE;
    with one axis and ``freqs = rope_frequencies(d_head)[None]`` it is :func:`~posenc.rope.apply_rope`.
    The map keeps every pair's length, and
    :math:`\langle R(c)q, R(c')k\rangle = \langle q, R(c'-c)k\rangle`.

    The angles are formed in float64 (coordinates never cast to int32 or float32; the sum
    over axes in a fixed order, axis 0 first, never a BLAS product) and each pair is rotated by one
    complex128 product in the kernel of :func:`~posenc.rope.apply_rope`, the result rounded once
    to the input's float dtype (integer input gives float64).

    Accepted input (anything else raises ``TypeError``/``ValueError`` naming the
    argument): ``x`` as in :func:`~posenc.rope.apply_rope` (real, finite, at least 2-D, even
    last dimension at most 2**16); ``coords`` a real array-like, finite, ``|c| <= 2**53``,
    of shape ``(..., L, n_axes)`` whose leading part broadcasts to ``x.shape[:-1]`` with
    its axis ``-2`` equal to ``L`` (e.g. ``(L, n_axes)`` for every sequence alike,
    ``(B, 1, L, n_axes)`` for ``x`` of shape ``(B, H, L, d)``); ``freqs`` a finite real
    2-D array-like of shape ``(n_axes, d_head/2)`` (any real values, zero and negative
    included; ``n_axes`` at least 1, at most 2**16); ``layout`` ``"interleaved"`` or ``"half"``.
    """
    arr = as_real_array(x, "x", min_ndim=2, keep_float_dtype=True, finite=False)
    layout = check_layout(layout)
    d = check_width(arr.shape[-1], "x.shape[-1] (d_head)")
    f = as_real_array(freqs, "freqs", ndim=2)
    if f.shape[1] != d // 2:
        raise ValueError(f"freqs must have shape (n_axes, d_head/2) = (n_axes, {d // 2}), got {f.shape}")
    if f.shape[0] > MAX_D_MODEL:
        raise ValueError(f"freqs must have at most {MAX_D_MODEL_TEXT} rows (axes), got {f.shape[0]}")
    c = as_positions(coords, "coords", allow_length=False, any_shape=True)
    if c.ndim < 2 or c.shape[-1] != f.shape[0]:
        raise ValueError(
            f"coords must have shape (..., L, n_axes) with n_axes = freqs.shape[0] = {f.shape[0]}, "
            f"got {c.shape}"
        )
    check_token_shape(c.shape[:-1], "coords", arr.shape[:-1])
    with np.errstate(over="ignore", invalid="ignore"):
        angles = _nd_angles(c, f)
    if not np.all(np.isfinite(angles)):
        raise ValueError("coords and freqs are too large: the angles sum_a coords * freqs overflow float64")
    return rotate_checked(arr, unit_phases(angles), layout)


def axial_rope_frequencies(d_head: int, n_axes: int = 2, *, base: float = 10000.0) -> np.ndarray:
    r"""The ``(n_axes, d_head/2)`` frequency matrix of axial RoPE, float64.

    The ``d_head/2`` pairs are split into ``n_axes`` consecutive blocks of
    :math:`b = d_{head}/(2\,n_{axes})` pairs; block :math:`a` (pairs
    :math:`ab, \dots, ab + b - 1`) holds the frequencies of a :math:`(d_{head}/n_{axes})`-
    dimensional RoPE, :math:`\mathrm{base}^{-2i/(d_{head}/n_{axes})}` for
    :math:`i = 0, \dots, b-1`, in row :math:`a`, and every other entry is zero. So pair
    :math:`ab + i` of a token at coordinates :math:`c` turns by
    :math:`c_a\,\mathrm{base}^{-2i n_{axes}/d_{head}}`: :func:`apply_rope_nd` with this
    matrix applies, to block :math:`a` of the vector, 1-D RoPE at position :math:`c_a`
    (for the interleaved layout the block is the contiguous channels
    ``2ab .. 2ab + 2b - 1``). With ``n_axes=1`` it is ``rope_frequencies(d_head)[None]``.

    Accepted input (anything else raises ``TypeError``/``ValueError`` naming the
    argument): ``d_head`` a positive even ``int`` at most 2**16; ``n_axes`` a positive
    ``int`` (bools refused) that divides ``d_head/2``: when the pairs do not split
    evenly (e.g. ``d_head=12, n_axes=4``: 6 pairs) the blocks would need different
    frequency sets, so it is refused with a ``ValueError`` naming ``n_axes``; the matrix
    (``n_axes * d_head / 2`` entries) at most 2**28 entries; ``base`` a finite real number
    greater than 1.
    """
    d = check_width(d_head, "d_head")
    n = check_positive_int(n_axes, "n_axes")
    base = check_base(base)
    half = d // 2
    if half % n:
        raise ValueError(
            f"n_axes = {n} must divide the number of pairs d_head/2 = {half} (each axis gets an "
            f"equal block of pairs); use a d_head that is a multiple of {2 * n}"
        )
    check_size((n, half), "the frequency matrix (n_axes, d_head/2)")
    block = half // n
    inner = frequencies(2 * block, base)
    out = np.zeros((n, half), dtype=np.float64)
    for a in range(n):
        out[a, a * block : (a + 1) * block] = inner
    return out
