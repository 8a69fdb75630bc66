r"""How :func:`posenc.sinusoidal_encoding` fills a table: angle addition over blocks.

Private to the package: :mod:`posenc.sinusoidal` validates the arguments and calls
:func:`fill`. The textbook table is :func:`posenc.reference.sinusoidal_table`; this module
computes the same numbers faster and to within a few float64 rounding errors at every
position (tests/test_sinusoidal_fast.py compares the two).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from functools import lru_cache

import numpy as np

from ._exact import correctly_rounded_frequencies, exact_sincos, frequency_pairs
from ._rotate import in_threads, multiply_phase

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
# For float64, float32 and float16 (by item size): the unsigned and signed integer dtypes
# of that width and the bit pattern of _TINY read as an unsigned integer (_has_tiny).
_TINY_BITS = {
    np.dtype(ft).itemsize: (
        np.dtype(f"u{np.dtype(ft).itemsize}"),
        np.dtype(f"i{np.dtype(ft).itemsize}"),
        int(np.array(_TINY, dtype=ft).view(f"u{np.dtype(ft).itemsize}")),
    )
    for ft in (np.float64, np.float32, np.float16)
}
# The complex view of a table written in place (float64 always, float32 when its small
# entries are known: see _fill_consecutive).
_COMPLEX = {np.dtype(np.float64): np.complex128, np.dtype(np.float32): np.complex64}
# Pairs per inner step: a complex128 tile of 2 MiB, beside the 1 MiB L2 cache in L3 (a
# narrow table's range spans two or more blocks of 256 rows, one broadcast product).
# Measured on the 2-core machine of chapter 13, calls timed in turn as in the benchmark:
# 2 MiB tiles against 1 MiB (half as many numpy calls, whose Python glue the threads take
# turns to run) made a 16384 x 512 table about a sixth faster, the larger ones no slower.
_CHUNK_PAIRS = 1 << 17
# The start phases of the first _CACHED_BLOCKS blocks (positions 0 .. 16383) are kept with
# the offset tables (a quarter of their size), as FFT libraries keep their twiddle factors:
# a table from position 0 of up to 16384 rows then evaluates no start phase of its own.
_CACHED_BLOCKS = 64
# The entries below _TINY found in a table of positions 0..n-1 are kept for the last
# _KNOWN_KEYS (d_model, base) pairs, with n (see _known_small). A table whose positions lie
# in 0..n-1 then recomputes those entries without looking for them: the products of a
# position are the same bits in every call (the decomposition depends on p alone), so
# the entries below _TINY are the same. A table with more than _KNOWN_MAX of them (a base
# so large that whole columns are tiny) is not kept.
_KNOWN_KEYS = 8
_KNOWN_MAX = 1 << 16
_known: OrderedDict = OrderedDict()
_known_lock = threading.Lock()


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


@lru_cache(maxsize=8)
def _first_start_phases(d_model: int, base: float) -> np.ndarray:
    """:func:`_start_phases` of the block starts ``0, _BLOCK, .., (_CACHED_BLOCKS - 1) * _BLOCK``.

    exact_sincos is elementwise, so these rows are the ones a call for any other set of
    starts would give.
    """
    w_hi, w_lo = frequency_pairs(d_model, base)
    u = _start_phases(_BLOCK * np.arange(_CACHED_BLOCKS, dtype=np.float64), w_hi, w_lo)
    u.setflags(write=False)
    return u


def _run_start_phases(first_start: float, k_lo: int, k_hi: int, d_model: int, base: float) -> np.ndarray:
    """:func:`_start_phases` of blocks ``k_lo .. k_hi`` (block ``k`` starts at ``first_start + k * _BLOCK``).

    From the cache of :func:`_first_start_phases` when all of them are among its blocks.
    """
    k0 = int(first_start // _BLOCK)  # block k is block k0 + k counted from position 0
    if 0 <= k0 + k_lo and k0 + k_hi < _CACHED_BLOCKS:
        return _first_start_phases(d_model, base)[k0 + k_lo : k0 + k_hi + 1]
    w_hi, w_lo = frequency_pairs(d_model, base)
    return _start_phases(first_start + _BLOCK * np.arange(k_lo, k_hi + 1, dtype=np.float64), w_hi, w_lo)


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


def _below_tiny(vals: np.ndarray, inclusive: bool, axis: int | None = None):
    """Whether the float array ``vals`` has an entry below ``_TINY`` in magnitude (``<=`` if ``inclusive``).

    Over the whole array (``axis=None``, a numpy bool) or along ``axis`` (one bool for each
    index of the other axes). Two reductions that only read: the bit pattern of a float of
    magnitude ``m`` is, as an unsigned integer of the same width, ``bits(m)`` when it is
    positive and ``2^(w-1) + bits(m)`` when it is negative, so its signed reading is
    ``bits(m) - 2^(w-1)``; magnitudes and bit patterns are ordered alike. The smallest
    unsigned reading is that of the smallest non-negative entry, the smallest signed reading
    that of the negative entry nearest to zero. (``np.abs`` then ``min`` would write a
    scratch array first.) ``vals`` must not be empty.
    """
    unsigned, signed, limit = _TINY_BITS[vals.dtype.itemsize]
    limit += int(inclusive)
    negative_limit = limit - 2 ** (8 * vals.dtype.itemsize - 1)
    return (vals.view(unsigned).min(axis=axis) < limit) | (vals.view(signed).min(axis=axis) < negative_limit)


def _has_tiny(vals: np.ndarray, inclusive: bool) -> bool:
    """:func:`_below_tiny` over the whole of ``vals`` (False when it is empty)."""
    return vals.size > 0 and bool(_below_tiny(vals, inclusive))


def _has_tiny_rows(vals: np.ndarray, skip: int, inclusive: bool) -> bool:
    """:func:`_has_tiny` over the rows of ``vals`` other than row ``skip`` (none when it is out of range).

    The row of position 0 is exact as computed, ``(sin 0, cos 0) = (0, 1)`` in every column
    (``u = 0 + 1i`` times ``v = 1 - 0i``), and its zeros need no second evaluation.
    """
    if not 0 <= skip < vals.shape[0]:
        return _has_tiny(vals, inclusive)
    return _has_tiny(vals[:skip], inclusive) or _has_tiny(vals[skip + 1 :], inclusive)


def _fix_tiny(rows: np.ndarray, pos: np.ndarray, w_hi, w_lo) -> tuple[np.ndarray, np.ndarray]:
    """Recompute with :func:`exact_sincos` the entries of ``rows`` below ``_TINY`` in magnitude.

    ``rows`` holds ``sin + 1j * cos`` for the positions ``pos`` (complex128, before any
    rounding to the table's dtype, so that a float32 table is the float64 table rounded).
    Returns the row and column indices, in the float64 view ``(n, d)`` of ``rows``, of
    the recomputed entries (there are a few in a table of millions: locate them, then
    evaluate only those).
    """
    vals = rows.view(np.float64)  # (n, d): sin w_0, cos w_0, sin w_1, ...
    # The rows that hold one (_below_tiny along each row), then the entries within those
    # rows: no temporary as large as the tile (in a thread, a freshly mapped temporary costs
    # page faults and, when unmapped, interrupts the other CPU).
    sel = np.flatnonzero(_below_tiny(vals, inclusive=False, axis=1))
    r_in, col = np.divmod(np.flatnonzero(np.abs(vals[sel]) < _TINY), vals.shape[1])
    r = sel[r_in]
    _recompute(vals, pos, r, col, w_hi, w_lo)
    return r, col


def _recompute(vals: np.ndarray, pos: np.ndarray, r: np.ndarray, col: np.ndarray, w_hi, w_lo) -> None:
    """Evaluate ``vals[r, col]`` directly with :func:`exact_sincos` (``vals``: a float view of the rows)."""
    if r.size:
        exact_s, exact_c = exact_sincos(pos[r], w_hi[col // 2], w_lo[col // 2])
        vals[r, col] = np.where(col % 2 == 0, exact_s, exact_c)


def _known_small(d_model: int, base: float, first: int, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The entries below ``_TINY`` of the table of positions ``first .. first + n - 1``, if known.

    Sorted positions and float64-view columns (as :func:`_fix_tiny` locates them, the row
    of position 0 left out), from a table of positions ``0 .. m - 1`` with ``m >= first + n``
    computed earlier in this process; None when no such table was kept.
    """
    with _known_lock:
        entry = _known.get((d_model, base))
        if entry is not None:
            _known.move_to_end((d_model, base))
    if entry is None or first < 0 or first + n > entry[0]:
        return None
    return entry[1], entry[2]


def forget_kept() -> None:
    """Empty every table kept between calls: frequencies, offsets, block starts, small entries.

    The next table of any width is then a first call again (``scripts/bench.py`` times one).
    """
    correctly_rounded_frequencies.cache_clear()
    frequency_pairs.cache_clear()
    _offset_tables.cache_clear()
    _first_start_phases.cache_clear()
    with _known_lock:
        _known.clear()


def _remember_small(d_model: int, base: float, n: int, found: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Keep the entries below ``_TINY`` found in the table of positions ``0 .. n - 1`` (see ``_known``)."""
    p = np.concatenate([r for r, _ in found]) if found else np.empty(0, dtype=np.intp)
    c = np.concatenate([c for _, c in found]) if found else np.empty(0, dtype=np.intp)
    keep = p != 0  # the row of position 0 is exact as computed (see _has_tiny_rows)
    p, c = p[keep], c[keep]
    if p.size > _KNOWN_MAX:
        return
    order = np.lexsort((c, p))
    p, c = p[order], c[order]
    p.setflags(write=False)
    c.setflags(write=False)
    with _known_lock:
        old = _known.get((d_model, base))
        if old is None or old[0] < n:
            _known[(d_model, base)] = (n, p, c)
        _known.move_to_end((d_model, base))
        while len(_known) > _KNOWN_KEYS:
            _known.popitem(last=False)


def _store(out: np.ndarray, a: int, rows: np.ndarray, layout: str) -> np.ndarray:
    """Write the complex rows (sin + i cos) into ``out[a : a + len(rows)]`` in ``layout``."""
    dst = out[a : a + rows.shape[0]]
    if layout == "interleaved":
        dst[...] = rows.view(np.float64)
    else:
        half = rows.shape[1]
        dst[:, :half], dst[:, half:] = rows.real, rows.imag
    return dst


def _store_fixed(out, a, rows, pos, w_hi, w_lo, layout, skip=-1) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_fix_tiny` then :func:`_store`, looking for small entries where it is cheapest.

    A float64 table is scanned in float64 (rows ``skip``, the row of position 0, left out:
    see :func:`_has_tiny_rows`). A float32 or float16 table is scanned after the store, at
    half the cost or less: rounding is monotonic and ``_TINY`` is representable, so an
    entry below ``_TINY`` before rounding is at most ``_TINY`` after; only when one is
    found are the float64 values scanned, and the entries fixed stored again. Returns the
    rows and float64-view columns of ``rows`` that were recomputed (as :func:`_fix_tiny`).
    """
    vals = rows.view(np.float64)
    none = (np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp))
    if out.dtype == np.float64:
        found = _fix_tiny(rows, pos, w_hi, w_lo) if _has_tiny_rows(vals, skip, inclusive=False) else none
        _store(out, a, rows, layout)
        return found
    dst = _store(out, a, rows, layout)
    if not _has_tiny_rows(dst, skip, inclusive=True):
        return none
    r, col = _fix_tiny(rows, pos, w_hi, w_lo)
    half = rows.shape[1]
    dst[r, col if layout == "interleaved" else col // 2 + (col % 2) * half] = vals[r, col]
    return r, col


def _segment_rows(half: int) -> int:
    """The most rows a range of :func:`_segments` can have."""
    blocks = _CHUNK_PAIRS // (half * _BLOCK)
    return _BLOCK * blocks if blocks >= 2 else max(1, min(_BLOCK, _CHUNK_PAIRS // half))


def _segments(n: int, offset: int, half: int):
    """Row ranges ``(a, b, k, j0)`` of the consecutive fast path, each one numpy product.

    Table row ``r`` is position ``first + r`` = block start ``k`` (counted from the first
    block) plus offset ``j = (offset + r) % _BLOCK``. A range within one block has its
    offsets ``j0 ..``; a range of whole blocks ``k, k+1, ..`` (used when a block is smaller
    than ``_CHUNK_PAIRS``, i.e. for narrow tables) has ``j0 = None``. Every range holds
    at most ``max(_CHUNK_PAIRS, half)`` pairs.
    """
    step = max(1, min(_BLOCK, _CHUNK_PAIRS // half))
    blocks = _CHUNK_PAIRS // (half * _BLOCK)
    a = 0
    while a < n:
        k, j0 = divmod(offset + a, _BLOCK)
        if j0 == 0 and blocks >= 2 and n - a >= 2 * _BLOCK:
            b = a + _BLOCK * min(blocks, (n - a) // _BLOCK)
            yield a, b, k, None
        else:
            b = min(n, a + step, a + _BLOCK - j0)
            yield a, b, k, j0
        a = b


def fill(
    out: np.ndarray, pos: np.ndarray, d_model: int, base: float, layout: str, consecutive: bool | None = None
) -> None:
    """Write the table of the positions ``pos`` (float64, 1-D) into ``out`` (``(pos.size, d_model)``).

    ``consecutive`` says that ``pos`` is ``first, first + 1, ...`` (integers of magnitude
    below 2**53), as for an ``int`` length; None means: find out (:func:`_consecutive`).
    """
    if consecutive is None:
        consecutive = _consecutive(pos)
    if not consecutive:
        w_hi, w_lo = frequency_pairs(d_model, base)
        step = max(1, min(_BLOCK, _CHUNK_PAIRS // (d_model // 2)))
        for a in range(0, pos.size, step):
            sel = pos[a : a + step]
            _store_fixed(out, a, _sincos_rows(sel, d_model, base), sel, w_hi, w_lo, layout)
        return
    _fill_consecutive(out, pos, d_model, base, layout)


def _fill_consecutive(out: np.ndarray, pos: np.ndarray, d_model: int, base: float, layout: str) -> None:
    """Positions ``first, first+1, ...``: the products of :func:`_sincos_rows` (so the same
    bits), without gathers, in cache-sized ranges (:func:`_segments`). A C-contiguous
    float64 interleaved table is computed in place, anything else in a complex scratch
    tile that is then stored. The ranges are shared among threads in runs
    (:func:`~posenc._rotate.in_threads`); for each run a thread takes the start phases of
    the blocks its ranges touch from the cache of the first blocks or evaluates them
    (:func:`_run_start_phases`): for a large table they are a sixth of the work, and
    elementwise, so the same values whichever thread computes them."""
    half = d_model // 2
    w_hi, w_lo = frequency_pairs(d_model, base)
    v_all = _offset_tables(d_model, base)
    first = int(pos[0])  # an integer of magnitude below 2**53: Python int arithmetic is exact
    first_start = float(first // _BLOCK * _BLOCK)
    offset = first - first // _BLOCK * _BLOCK
    zero_row = -first if first <= 0 < first + pos.size else -1
    known = _known_small(d_model, base, first, pos.size)
    # The products go straight into a C-contiguous interleaved table: a float64 one viewed as
    # complex128, and a float32 one viewed as complex64 when its small entries are known
    # (numpy forms the complex128 product and rounds each component once on the way, the
    # bits of the scratch tile stored; a scan would need the float64 values).
    contiguous = layout == "interleaved" and out.flags.c_contiguous
    direct = contiguous and (out.dtype == np.float64 or (out.dtype == np.float32 and known is not None))
    target = out.view(_COMPLEX[out.dtype]) if direct else None
    seg_rows = min(pos.size, _segment_rows(half))
    step = max(1, min(_BLOCK, _CHUNK_PAIRS // half))  # the most rows of a range within one block
    segments = list(_segments(pos.size, offset, half))

    def fill_some(
        runs: Iterable[list[tuple[int, int, int, int | None]]],
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        # each thread its own scratch tile and copy of a block's start phases
        scratch = None if direct else np.empty((seg_rows, half), dtype=np.complex128)
        u_rows = None
        found = []  # (positions, columns) of the entries recomputed, when looked for
        for some in runs:
            # the start phases of the blocks this run of ranges touches
            last_a, last_b, last_k, last_j0 = some[-1]
            k_lo = some[0][2]
            k_hi = last_k + (last_b - last_a) // _BLOCK - 1 if last_j0 is None else last_k
            u_some = _run_start_phases(first_start, k_lo, k_hi, d_model, base)
            # u_k repeated on every row of a range within a block: numpy multiplies two
            # arrays of one shape faster than it broadcasts a row, and the next range of the
            # same block reuses the copy (made when first needed).
            u_rows_k = -1
            for a, b, k, j0 in some:
                m = b - a
                rows = target[a:b] if direct else scratch[:m]
                if j0 is None:
                    blocks = rows.reshape(-1, _BLOCK, half)
                    multiply_phase(u_some[k - k_lo : k - k_lo + m // _BLOCK, None, :], v_all[None], blocks)
                else:
                    if u_rows is None:
                        u_rows = np.empty((min(pos.size, step), half), dtype=np.complex128)
                    if u_rows_k != k:
                        u_rows[...], u_rows_k = u_some[k - k_lo], k
                    multiply_phase(u_rows[:m], v_all[j0 : j0 + m], rows)
                if known is not None:  # the entries below _TINY are known: recompute them, no scan
                    lo, hi = np.searchsorted(known[0], (first + a, first + b))
                    if hi > lo:
                        _recompute(
                            rows.view(rows.real.dtype),
                            pos[a:b],
                            known[0][lo:hi] - (first + a),
                            known[1][lo:hi],
                            w_hi,
                            w_lo,
                        )
                    if not direct:
                        _store(out, a, rows, layout)
                    continue
                if direct:
                    if _has_tiny_rows(rows.view(np.float64), zero_row - a, inclusive=False):
                        r, col = _fix_tiny(rows, pos[a:b], w_hi, w_lo)
                        found.append((r + (first + a), col))
                else:
                    r, col = _store_fixed(out, a, rows, pos[a:b], w_hi, w_lo, layout, zero_row - a)
                    found.append((r + (first + a), col))
        return found

    found_by_thread = in_threads(fill_some, segments, pos.size * half)
    if known is None and first == 0:
        _remember_small(d_model, base, pos.size, [f for found in found_by_thread for f in found])
