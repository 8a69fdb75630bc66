r"""How :func:`posenc.sinusoidal_encoding` fills a table: angle addition over blocks.

Private to the package: :mod:`posenc.sinusoidal` validates the arguments and calls
:func:`fill`. The textbook table is :func:`posenc.reference.sinusoidal_table`; this module
computes the same numbers faster and to within a few float64 rounding errors at every
position (tests/test_sinusoidal_fast.py compares the two).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._exact import exact_sincos, frequency_pairs
from ._rotate import multiply_phase

# An integer position p is written p = p0 + j with p0 = _BLOCK * floor(p / _BLOCK) and
# 0 <= j < _BLOCK. sin/cos of p0*omega and of j*omega are evaluated with exact_sincos and
# combined by angle addition, one complex product per entry (_rotate.multiply_phase):
# with u = sin(p0 w) + i cos(p0 w) and v = cos(j w) - i sin(j w),
# u * v = sin(p0 w + j w) + i cos(p0 w + j w), the (sin, cos) pair of the interleaved layout.
# The decomposition depends on p alone, so a position gets the same bits from every call
# (one-shot table, ``out=``, iter_sinusoidal_blocks, arbitrary integer arrays).
_BLOCK = 256
# Combined values smaller than this in magnitude are recomputed with exact_sincos: the
# angle-addition result has an *absolute* error of a few 2^-53, which near a zero of sin or
# cos would be several float32 ulps; the direct evaluation keeps the error relative.
_TINY = 2.0**-20
# Pairs per inner step: a complex128 tile of 512 KiB, so the working set stays in the L2 cache.
_CHUNK_PAIRS = 1 << 15


@lru_cache(maxsize=8)
def _offset_tables(d_model: int, base: float) -> np.ndarray:
    """``cos(j w_i) - 1j * sin(j w_i)`` for ``j = 0.._BLOCK-1`` (rows), complex128, exact sin/cos."""
    w_hi, w_lo = frequency_pairs(d_model, base)
    s, c = exact_sincos(np.arange(_BLOCK, dtype=np.float64)[:, None], w_hi[None, :], w_lo[None, :])
    v = np.empty(s.shape, dtype=np.complex128)
    v.real, v.imag = c, -s
    v.setflags(write=False)
    return v


def _start_phases(starts: np.ndarray, w_hi: np.ndarray, w_lo: np.ndarray) -> np.ndarray:
    """``sin(p0 w_i) + 1j * cos(p0 w_i)`` for the block starts ``p0`` (rows), complex128."""
    s, c = exact_sincos(starts[:, None], w_hi[None, :], w_lo[None, :])
    u = np.empty(s.shape, dtype=np.complex128)
    u.real, u.imag = s, c
    return u


def _sincos_rows(pos: np.ndarray, d_model: int, base: float) -> np.ndarray:
    """``sin(p w_i) + 1j * cos(p w_i)`` for ``p`` in ``pos`` (rows), complex128 ``(pos.size, d/2)``."""
    w_hi, w_lo = frequency_pairs(d_model, base)
    integer = (pos == np.floor(pos)) & (np.abs(pos) <= 2.0**53)
    if not np.all(integer):
        s, c = exact_sincos(pos[:, None], w_hi[None, :], w_lo[None, :])
        rows = np.empty(s.shape, dtype=np.complex128)
        rows.real, rows.imag = s, c
        if np.any(integer):
            sel = np.flatnonzero(integer)
            rows[sel] = _sincos_rows(pos[sel], d_model, base)
        return rows
    p0 = np.floor(pos / _BLOCK) * _BLOCK
    ji = (pos - p0).astype(np.intp)  # exact: integers of magnitude <= 2^53
    starts = np.unique(p0)
    u = _start_phases(starts, w_hi, w_lo)
    return multiply_phase(u[np.searchsorted(starts, p0)], _offset_tables(d_model, base)[ji], None)


def _consecutive(pos: np.ndarray) -> bool:
    """True if ``pos`` is a run of consecutive integers (the common ``0..L-1`` case)."""
    first, last = pos[0], pos[-1]
    # Strictly below 2**53: the fast path forms last + 1, which must be exact.
    return bool(
        first == np.floor(first)
        and max(abs(first), abs(last)) < 2.0**53
        and last - first == pos.size - 1
        and (pos.size < 2 or np.all(np.diff(pos) == 1.0))
    )


def _fix_tiny(rows: np.ndarray, pos: np.ndarray, w_hi, w_lo, scratch: np.ndarray) -> bool:
    """Recompute with :func:`exact_sincos` the entries of ``rows`` below ``_TINY`` in magnitude.

    ``rows`` holds ``sin + 1j * cos`` for the positions ``pos`` (complex128, before any
    rounding to the table's dtype, so that a float32 table is the float64 table rounded).
    Returns whether any entry was recomputed.
    """
    vals = rows.view(np.float64)  # (n, d): sin w_0, cos w_0, sin w_1, ...
    np.abs(vals, out=scratch)
    if scratch.min() >= _TINY:
        return False
    r, col = np.nonzero(scratch < _TINY)
    exact_s, exact_c = exact_sincos(pos[r], w_hi[col // 2], w_lo[col // 2])
    vals[r, col] = np.where(col % 2 == 0, exact_s, exact_c)
    return True


def _store(out: np.ndarray, a: int, rows: np.ndarray, layout: str) -> np.ndarray:
    """Write the complex rows (sin + i cos) into ``out[a : a + len(rows)]`` in ``layout``."""
    dst = out[a : a + rows.shape[0]]
    if layout == "interleaved":
        dst[...] = rows.view(np.float64)
    else:
        half = rows.shape[1]
        dst[:, :half], dst[:, half:] = rows.real, rows.imag
    return dst


def _store_fixed(out, a, rows, pos, w_hi, w_lo, layout, scratch, narrow) -> None:
    """:func:`_fix_tiny` then :func:`_store` (scratch arrays of at least ``len(rows)`` rows).

    For a float32 or float16 table (``narrow``, a scratch of that dtype) the stored values
    are scanned first, at half the cost or less: rounding is monotonic and ``_TINY`` is
    representable, so an entry below ``_TINY`` before rounding is at most ``_TINY`` after;
    only when one is found are the float64 values scanned, fixed and stored again.
    """
    m = rows.shape[0]
    if narrow is None:
        _fix_tiny(rows, pos, w_hi, w_lo, scratch[:m])
        _store(out, a, rows, layout)
        return
    dst = _store(out, a, rows, layout)
    np.abs(dst, out=narrow[:m])
    if narrow[:m].min() <= _TINY and _fix_tiny(rows, pos, w_hi, w_lo, scratch[:m]):
        _store(out, a, rows, layout)


def fill(out: np.ndarray, pos: np.ndarray, d_model: int, base: float, layout: str) -> None:
    half = d_model // 2
    w_hi, w_lo = frequency_pairs(d_model, base)
    step = max(1, min(_BLOCK, _CHUNK_PAIRS // half))
    scratch = np.empty((step, d_model))
    narrow = np.empty((step, d_model), dtype=out.dtype) if out.dtype.itemsize < 8 else None
    if not _consecutive(pos):
        for a in range(0, pos.size, step):
            sel = pos[a : a + step]
            rows = _sincos_rows(sel, d_model, base)
            _store_fixed(out, a, rows, sel, w_hi, w_lo, layout, scratch, narrow)
        return
    # Fast path, positions first, first+1, ...: the same products as _sincos_rows (so the
    # same bits), without gathers, in cache-sized row steps; a float64 interleaved table is
    # computed in place, anything else in a complex scratch tile that is then stored.
    v_all = _offset_tables(d_model, base)
    first_start = np.floor(pos[0] / _BLOCK) * _BLOCK
    u_all = _start_phases(np.arange(first_start, pos[-1] + 1, _BLOCK, dtype=np.float64), w_hi, w_lo)
    direct = layout == "interleaved" and out.dtype == np.float64 and out.strides[-1] == 8
    target = out.view(np.complex128) if direct else np.empty((step, half), dtype=np.complex128)
    offset = int(pos[0] - first_start)  # row r has block k = (offset + r) // B, j = (offset + r) % B
    a = 0
    n = pos.size
    while a < n:
        k, j0 = divmod(offset + a, _BLOCK)
        b = min(n, a + step, a + _BLOCK - j0)
        m = b - a
        rows = multiply_phase(u_all[k], v_all[j0 : j0 + m], target[a:b] if direct else target[:m])
        if direct:
            _fix_tiny(rows, pos[a:b], w_hi, w_lo, scratch[:m])
        else:
            _store_fixed(out, a, rows, pos[a:b], w_hi, w_lo, layout, scratch, narrow)
        a = b
