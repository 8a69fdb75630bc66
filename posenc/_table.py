r"""How :func:`posenc.sinusoidal_encoding` fills a table: angle addition over blocks.

Internal: :mod:`posenc.sinusoidal` checks the arguments and calls :func:`fill`, which
computes :func:`posenc.reference.sinusoidal_table` faster and within a few float64 rounding
errors of the exact values at every position (tests/test_table.py: against mpmath).

An integer position is written :math:`p = p_0 + j` with :math:`p_0` a multiple of
``BLOCK`` and :math:`0 \le j <` ``BLOCK``. With :math:`u = \sin p_0\omega + \mathrm{i}\cos
p_0\omega` and :math:`v = \cos j\omega - \mathrm{i}\sin j\omega`, both evaluated by
:func:`~posenc._exact.exact_sincos` (exact angles),

.. math:: u\,v = \sin(p_0\omega + j\omega) + \mathrm{i}\cos(p_0\omega + j\omega),

the (sin, cos) pair of the interleaved layout: one complex product per entry instead of a
sine and a cosine. The decomposition depends on :math:`p` alone, so a position gets the
same bits from every call. The product
has an *absolute* error of a few :math:`2^{-53}`, which near a zero of sin or cos would be
many float32 ulps: entries below ``TINY`` in magnitude are evaluated again directly, so
their error stays relative. Non-integer positions are evaluated directly.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._exact import exact_sincos, frequency_pairs
from ._rotate import in_threads, multiply_phase

BLOCK = 256
TINY = 2.0**-20
# Pairs per row range: a 2 MiB complex128 tile, in cache beside the offsets.
CHUNK_PAIRS = 1 << 17
# For float64, float32 and float16 (by item size): the unsigned and signed integer dtypes
# of that width and the bit pattern of TINY read as an unsigned integer (_below_tiny).
_TINY_BITS = {
    np.dtype(ft).itemsize: (
        np.dtype(f"u{np.dtype(ft).itemsize}"),
        np.dtype(f"i{np.dtype(ft).itemsize}"),
        int(np.array(TINY, dtype=ft).view(f"u{np.dtype(ft).itemsize}")),
    )
    for ft in (np.float64, np.float32, np.float16)
}


# Kept for the last few widths, as it pays: on one CPU, calls in turn (medians), float64
# tables of 1024 x 64, 16384 x 512 and 65536 x 1024 took 0.13, 18.9 and 168 ms with it and
# 0.46, 22.4 and 267 ms with it emptied before each call. Memory: 2048 * d bytes an entry
# (BLOCK x d/2 complex128: 8 MiB at d = 4096, 128 MiB at the limit 2**16), at most 8.
@lru_cache(maxsize=8)
def offsets(d_model: int, base: float) -> np.ndarray:
    """``cos(j w_i) - 1j * sin(j w_i)`` for ``j = 0..BLOCK-1`` (rows), complex128, read-only."""
    w_hi, w_lo = frequency_pairs(d_model, base)
    s, c = exact_sincos(np.arange(BLOCK, dtype=np.float64)[:, None], w_hi[None, :], w_lo[None, :])
    v = np.empty(s.shape, dtype=np.complex128)
    v.real, v.imag = c, -s
    v.setflags(write=False)
    return v


def sincos_rows(
    pos: np.ndarray,
    d_model: int,
    base: float,
    out: np.ndarray | None = None,
    scratch: np.ndarray | None = None,
) -> np.ndarray:
    """``sin(p w_i) + 1j * cos(p w_i)`` for ``p`` in ``pos`` (rows), complex128 ``(pos.size, d/2)``.

    Integer positions of magnitude at most 2**53 by angle addition, others directly; the
    entries below ``TINY`` are not yet recomputed (:func:`fix_tiny`). Written into ``out``
    when it is given (a complex128 array of that shape), with ``scratch`` (two as large)
    for the gathered operands: a fresh array of a few MiB costs more in page faults than
    the product itself.
    """
    w_hi, w_lo = frequency_pairs(d_model, base)
    integer = (pos == np.floor(pos)) & (np.abs(pos) <= 2.0**53)
    if out is None:
        out = np.empty((pos.size, d_model // 2), dtype=np.complex128)
    if scratch is None:
        scratch = np.empty((2, *out.shape), dtype=np.complex128)
    if not np.all(integer):
        s, c = exact_sincos(pos[:, None], w_hi[None, :], w_lo[None, :])
        out.real, out.imag = s, c
        if np.any(integer):
            sel = np.flatnonzero(integer)
            out[sel] = sincos_rows(pos[sel], d_model, base)
        return out
    k = np.floor(pos / BLOCK)
    j = (pos - k * BLOCK).astype(np.intp)  # exact: integers of magnitude <= 2^53
    k_min = k.min()
    if k.max() - k_min < pos.size:  # a run: every block from the first to the last
        starts = (k_min + np.arange(int(k.max() - k_min) + 1)) * BLOCK
        block_of = (k - k_min).astype(np.intp)
    else:
        starts, block_of = np.unique(k * BLOCK, return_inverse=True)
    s, c = exact_sincos(starts[:, None], w_hi[None, :], w_lo[None, :])
    u = np.empty(s.shape, dtype=np.complex128)
    u.real, u.imag = s, c
    v = offsets(d_model, base)
    # Both operands gathered to the shape of the result, apart from it (numpy rounds a
    # product computed in place differently for some lengths); mode "raise" would buffer.
    u = np.take(u, block_of, axis=0, out=scratch[0, : pos.size], mode="clip")
    v = np.take(v, j, axis=0, out=scratch[1, : pos.size], mode="clip")
    return multiply_phase(u, v, out)


def _below_tiny(vals: np.ndarray, axis: int | None = None, inclusive: bool = False):
    """Whether the float array ``vals`` has an entry below ``TINY`` in magnitude (along ``axis``).

    ``inclusive``: at most ``TINY`` instead.

    Two reductions that only read (no scratch array): the bits of a float of magnitude
    ``m``, read as an unsigned integer, are ``bits(m)`` when it is positive and
    ``2^(w-1) + bits(m)`` when it is negative, so its signed reading is
    ``bits(m) - 2^(w-1)``; magnitudes and bit patterns are ordered alike. ``vals`` must not
    be empty.
    """
    unsigned, signed, limit = _TINY_BITS[vals.dtype.itemsize]
    limit += int(inclusive)
    negative_limit = limit - 2 ** (8 * vals.dtype.itemsize - 1)
    return (vals.view(unsigned).min(axis=axis) < limit) | (vals.view(signed).min(axis=axis) < negative_limit)


def _has_tiny(vals: np.ndarray, pos: np.ndarray, inclusive: bool) -> bool:
    """:func:`_below_tiny` over the rows of ``vals`` (table rows of the positions ``pos``).

    The row of position 0 is exact as computed, (sin 0, cos 0) = (0, 1) in every column,
    so its zeros are left out.
    """
    zero = np.flatnonzero(pos == 0)
    parts = [vals[: zero[0]], vals[zero[0] + 1 :]] if zero.size == 1 else [vals]
    return any(part.size and bool(_below_tiny(part, inclusive=inclusive)) for part in parts)


def fix_tiny(rows: np.ndarray, pos: np.ndarray, d_model: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """Recompute with :func:`exact_sincos` the entries of ``rows`` below ``TINY`` in magnitude.

    ``rows`` holds ``sin + 1j * cos`` for the positions ``pos`` (complex128, before any
    rounding to the table's dtype, so that a float32 table is the float64 table rounded).
    Returns the row and column indices, in the float64 view ``(n, d)`` of ``rows``, of the
    recomputed entries (a few in a table of millions: the rows holding one are found
    first, then the entries in them). The package's callers ignore the return value; only
    a test (tests/test_table.py) reads it, to see which entries were recomputed.
    """
    vals = rows.view(np.float64)  # (n, d): sin w_0, cos w_0, sin w_1, ...
    # The common case: none, seen in one pass.
    if not _has_tiny(vals, pos, inclusive=False):
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    sel = np.flatnonzero(_below_tiny(vals, axis=1))
    r_in, col = np.divmod(np.flatnonzero(np.abs(vals[sel]) < TINY), vals.shape[1])
    r = sel[r_in]
    if r.size:
        w_hi, w_lo = frequency_pairs(d_model, base)
        exact_s, exact_c = exact_sincos(pos[r], w_hi[col // 2], w_lo[col // 2])
        vals[r, col] = np.where(col % 2 == 0, exact_s, exact_c)
    return r, col


def fill(out: np.ndarray, pos: np.ndarray, d_model: int, base: float, layout: str) -> None:
    """Write the table of the positions ``pos`` (float64, 1-D) into ``out`` (``(pos.size, d_model)``).

    Row ranges of at most ``CHUNK_PAIRS`` pairs, each computed in a complex128 scratch
    (or straight into a C-contiguous float64 interleaved ``out``, viewed as complex128),
    fixed (:func:`fix_tiny`) and stored in ``layout`` (``"interleaved"`` or ``"half"``, as
    :func:`~posenc.layouts.check_layout` returns it). A run of consecutive integers (the
    usual ``0..L-1``) takes :func:`_fill_run` instead: the same products, so the same bits.
    """
    half = d_model // 2
    direct = layout == "interleaved" and out.dtype == np.float64 and out.flags.c_contiguous
    if _is_run(pos):
        _fill_run(out, pos, d_model, base, layout, direct)
        return
    step = max(1, CHUNK_PAIRS // half)
    chunks = [(a, min(pos.size, a + step)) for a in range(0, pos.size, step)]
    target = out.view(np.complex128) if direct else None

    def fill_some(some: list[tuple[int, int]]) -> None:
        scratch = np.empty((3, min(step, pos.size), half), dtype=np.complex128)
        for a, b in some:
            rows = target[a:b] if direct else scratch[2, : b - a]
            sincos_rows(pos[a:b], d_model, base, rows, scratch[:2])
            _fix_and_store(out, a, rows, pos[a:b], d_model, base, layout)

    in_threads(fill_some, chunks, pos.size * half)


def _is_run(pos: np.ndarray) -> bool:
    """Whether ``pos`` is ``p, p + 1, ..`` with integers of magnitude below 2**53."""
    first, last = float(pos[0]), float(pos[-1])
    return (
        first == np.floor(first)
        and max(abs(first), abs(last)) < 2.0**53
        and last - first == pos.size - 1
        and bool(np.all(np.diff(pos) == 1.0))
    )


def _fill_run(out: np.ndarray, pos: np.ndarray, d_model: int, base: float, layout: str, direct: bool) -> None:
    """:func:`fill` for consecutive integer positions: the products of :func:`sincos_rows`.

    The start phases ``u_k`` of every block the run touches are evaluated in one call, and
    each range of rows within a block is one product of ``u_k`` (copied to the shape of the
    range: numpy multiplies two arrays of one shape faster than it broadcasts a row) with
    a slice of :func:`offsets`; no gather. Same operands as :func:`sincos_rows`, same bits.
    """
    half = d_model // 2
    w_hi, w_lo = frequency_pairs(d_model, base)
    first = int(pos[0])
    k_first = first // BLOCK
    n_blocks = (first + pos.size - 1) // BLOCK - k_first + 1
    starts = (k_first + np.arange(n_blocks, dtype=np.float64)) * BLOCK
    s, c = exact_sincos(starts[:, None], w_hi[None, :], w_lo[None, :])
    u = np.empty(s.shape, dtype=np.complex128)
    u.real, u.imag = s, c
    v = offsets(d_model, base)
    step = max(1, min(BLOCK, CHUNK_PAIRS // half))
    ranges = []  # (a, b, k, j0): rows a..b-1 are block k, offsets j0..
    a = 0
    while a < pos.size:
        k, j0 = divmod(first + a, BLOCK)
        b = min(pos.size, a + step, a + BLOCK - j0)
        ranges.append((a, b, k - k_first, j0))
        a = b
    target = out.view(np.complex128) if direct else None

    def fill_some(some: list[tuple[int, int, int, int]]) -> None:
        scratch = np.empty((2, min(step, pos.size), half), dtype=np.complex128)
        u_rows, u_k = scratch[0], -1
        for a, b, k, j0 in some:
            m = b - a
            if k != u_k:
                u_rows[...], u_k = u[k], k
            rows = target[a:b] if direct else scratch[1, :m]
            multiply_phase(u_rows[:m], v[j0 : j0 + m], rows)
            _fix_and_store(out, a, rows, pos[a:b], d_model, base, layout)

    in_threads(fill_some, ranges, pos.size * half)


def _fix_and_store(
    out: np.ndarray, a: int, rows: np.ndarray, pos: np.ndarray, d_model: int, base: float, layout: str
) -> None:
    """:func:`fix_tiny` on the complex128 products ``rows``, then store them at row ``a`` of ``out``.

    ``rows`` may already be ``out``'s own memory (a float64 interleaved table). A float32 or
    float16 table is stored first and scanned as stored (fewer bytes): rounding is monotonic
    and ``TINY`` is representable, so an entry below ``TINY`` before rounding is at most
    ``TINY`` after; only then are the products fixed and stored again.
    """
    if out.dtype == np.float64:
        fix_tiny(rows, pos, d_model, base)
    if np.may_share_memory(rows, out):
        return
    dst = out[a : a + rows.shape[0]]
    _store(dst, rows, layout)
    if out.dtype != np.float64 and _has_tiny(dst, pos, inclusive=True):
        fix_tiny(rows, pos, d_model, base)
        _store(dst, rows, layout)


def _store(dst: np.ndarray, rows: np.ndarray, layout: str) -> None:
    """``dst[...] = rows`` (complex ``sin + 1j * cos``) as real columns in ``layout``."""
    if layout == "interleaved":
        dst[...] = rows.view(np.float64)
    else:
        half = rows.shape[1]
        dst[:, :half], dst[:, half:] = rows.real, rows.imag
