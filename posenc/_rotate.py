r"""Rotation of coordinate pairs by unit phases: the one arithmetic kernel of RoPE and of the tables.

A pair :math:`(a, b)` is read as the complex number :math:`z = a + \mathrm{i}b` and rotated
by a phase :math:`w = c + \mathrm{i}s` (for RoPE :math:`w = e^{\mathrm{i}m\theta}`, times the
YaRN attention factor) with one complex128 product, numpy's ``multiply``:

.. math:: z\,w = (a c - b s) + \mathrm{i}\,(a s + b c).

numpy evaluates each component in float64 with two roundings, fused on machines with FMA
instructions (there ``re = fl(a*c - fl(b*s))`` and ``im = fl(a*s + fl(b*c))``), else three.
Either way the error of each component is at most :math:`2u(|ac| + |bs|)` with
:math:`u = 2^{-53}`, and every caller goes through this one product, so the result for a
pair does not depend on the layout, the tiling, the strides or the input dtype: inputs
of another dtype are converted to float64 exactly (float16, float32 and integers up to
:math:`2^{53}` are exact in float64), and the result is rounded once to the output dtype.

The work is memory-bound. For the interleaved layout the pairs are already adjacent: a
contiguous float64 array is viewed as complex128 and multiplied in one call, a float32
array is widened tile by tile (its complex64 view converted to complex128) into a
scratch buffer that stays in cache. The half layout needs its two halves interleaved
first, so each tile is gathered into the complex scratch, multiplied in place and
scattered into the output. A float64 tile is first copied as it is into a second
scratch (a contiguous copy streams from memory at full speed; the gather, numpy's
strided copy one element at a time, then reads from cache): measured about a sixth
faster for the whole rotation.

One core cannot keep up with memory here: widening, multiplying, narrowing and the
finiteness check of a float32 tile take longer than streaming it. A rotation of at least
``THREAD_MIN_PAIRS`` pairs is therefore shared among up to ``MAX_THREADS`` threads (no more
than the CPUs the process may use), each with its own scratch; numpy releases the GIL
inside each call. The tiles are cut into contiguous runs, which the threads take in turn,
so that a thread slowed down by other work on its CPU takes fewer of them. The calling
thread is one of the threads; the others are ``MAX_THREADS - 1`` workers started on first
use and kept for the life of the process (a forked child starts its own): starting and
ending threads on every call cost more than a mid-size table itself on a small virtual
machine (each new thread maps a stack, each ending one unmaps it). A tile is computed by
the same calls whichever thread takes it, so the result is the same with one thread or
several.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

# Pairs per tile: a complex128 scratch of 4 MiB per thread, in a large L3 cache beside the
# other thread's (measured faster than 1 MiB tiles that fit the 1 MiB L2: half as many numpy
# calls, whose Python glue the threads take turns to run). The half layout in float64 also
# stages a float64 copy of the tile, so its tiles hold half as many pairs.
TILE_PAIRS = 1 << 18
# A rotation of at least this many pairs is shared among up to MAX_THREADS threads.
THREAD_MIN_PAIRS = 1 << 18
MAX_THREADS = 4
# A shared rotation or table is cut into up to this many runs of tiles per thread, which
# the threads take in turn (in_threads). Benchmark runs on the 2-core machine of chapter 13
# had calls where one thread ended twice as late as the other with half of the tiles each.
RUNS_PER_THREAD = 8

T = TypeVar("T")
R = TypeVar("R")

_workers: ThreadPoolExecutor | None = None
_workers_lock = threading.Lock()

_COMPLEX_VIEW = {np.dtype(np.float64): np.dtype(np.complex128), np.dtype(np.float32): np.dtype(np.complex64)}


def multiply_phase(z: np.ndarray, phase: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """``out = z * phase`` for complex128 ``z`` and ``phase`` (broadcast): the kernel itself.

    Both operands are first given the same number of dimensions (leading axes of length
    1): numpy evaluates a one-element product of operands of different dimensions with an
    unfused scalar loop, which would round some pairs differently from the same pairs in a
    larger call.
    """
    if z.ndim < phase.ndim:
        z = z.reshape((1,) * (phase.ndim - z.ndim) + z.shape)
    elif phase.ndim < z.ndim:
        phase = phase.reshape((1,) * (z.ndim - phase.ndim) + phase.shape)
    return np.multiply(z, phase, out=out)


def _complex_view(a: np.ndarray) -> np.ndarray | None:
    """``a[..., 2i] + 1j*a[..., 2i+1]`` as a view, or None when the layout does not allow one."""
    cdt = _COMPLEX_VIEW.get(a.dtype)
    if cdt is None or a.ndim == 0 or a.strides[-1] != a.itemsize:
        return None
    return a.view(cdt)


def unit_phases(angles: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """``cos(angles) * scale + 1j * sin(angles) * scale`` as complex128 (angles float64).

    For many angles the sines are computed in a second thread while this one computes the
    cosines (the same numpy calls on the same arrays either way, so the same values).
    """
    phase = np.empty(angles.shape, dtype=np.complex128)

    def fill(part: np.ndarray, fn) -> None:
        np.multiply(fn(angles), scale, out=part)

    if phase.size >= THREAD_MIN_PAIRS // 4 and _cpu_count() > 1:
        _share(fill, [(phase.real, np.cos), (phase.imag, np.sin)])
    else:
        fill(phase.real, np.cos)
        fill(phase.imag, np.sin)
    return phase


def rotate_pairs(
    arr: np.ndarray, phase: np.ndarray, layout: str, out_dtype: np.dtype
) -> tuple[np.ndarray, bool]:
    r"""Rotate the pairs of ``arr[..., L, d]`` by ``phase[..., L, d/2]`` (complex128).

    Pair :math:`i` of row :math:`l` is ``(arr[..., l, 2i], arr[..., l, 2i+1])`` for
    ``layout="interleaved"`` and ``(arr[..., l, i], arr[..., l, i + d/2])`` for ``"half"``;
    it becomes :math:`(a + \mathrm{i}b)\,\mathrm{phase}[..., l, i]` computed by
    :func:`multiply_phase` in float64, rounded once to ``out_dtype``. ``arr`` may have any
    real dtype, strides and number of leading axes. ``phase`` is ``(L, d/2)`` (the same
    phases for every leading index) or has leading axes that broadcast to those of
    ``arr`` (one row of phases per sequence: per-sequence position ids); it is never
    broadcast to the full size of ``arr`` in memory, only tile by tile.

    Returns ``(out, finite)``, a new array and whether every entry of it is finite
    (checked on each tile while it is in cache, by :func:`_tile_finite`). A NaN or an
    infinity in ``arr`` always gives one in the output: infinity times any number, zero
    included, is not finite.
    """
    length, d = arr.shape[-2], arr.shape[-1]
    half = d // 2
    out = np.empty(arr.shape, dtype=out_dtype)
    if out.size == 0:
        return out, True
    x3 = arr.reshape(-1, length, d)  # a view whenever the leading axes allow one
    o3 = out.reshape(-1, length, d)
    lead = x3.shape[0]
    zx = _complex_view(x3) if layout == "interleaved" else None
    zo = _complex_view(o3) if layout == "interleaved" else None
    direct = zx is not None and zo is not None and x3.dtype == np.float64 and o3.dtype == np.float64
    stage = layout == "half" and x3.dtype == np.float64
    tile_pairs = max(1, TILE_PAIRS // 2) if stage else TILE_PAIRS
    rows = max(1, min(length, tile_pairs // half))
    heads = max(1, min(lead, tile_pairs // (rows * half)))
    tile_phase = _phase_tiles(phase, arr.shape[:-2], length, half, heads)
    # Rows outer, leading indices inner: consecutive tiles share their rows of phases.
    tiles = [
        (n0, min(lead, n0 + heads), l0, min(length, l0 + rows))
        for l0 in range(0, length, rows)
        for n0 in range(0, lead, heads)
    ]

    def rotate_some(runs: Iterable[list[tuple[int, int, int, int]]]) -> bool:
        # each thread its own scratch: a complex tile, and a staging copy for "half" float64
        buf = None if direct else np.empty((heads, rows, half), dtype=np.complex128)
        staged = np.empty((heads, rows, d)) if stage else None
        # An overflow to the output dtype, or inf * 0 from an infinite input, is reported
        # by the result (the caller then names the problem), not by a numpy warning.
        with np.errstate(over="ignore", invalid="ignore"):
            return all(
                _rotate_tiles(x3, o3, zx, zo, buf, staged, tile_phase, layout, some, direct) for some in runs
            )

    return out, all(in_threads(rotate_some, tiles, out.size // 2))


def in_threads(work: Callable[[Iterable[list[T]]], R], tiles: list[T], pairs: int) -> list[R]:
    """``work`` over contiguous runs of ``tiles``, shared among threads; the list of its results.

    ``work`` takes an iterable of runs (lists of consecutive tiles) and returns one result
    for all of them. For fewer than ``THREAD_MIN_PAIRS`` pairs it is called once, in this
    thread, with one run of every tile (``[work([tiles])]``). Otherwise up to
    ``MAX_THREADS`` threads (no more than the CPUs this process may use, and at least two
    tiles each) call it at once, on iterables that share up to ``RUNS_PER_THREAD`` runs per
    thread: each run goes to the first thread that asks for one, so a thread slowed down
    by other work on its CPU takes fewer runs instead of holding up the call. numpy
    releases the GIL inside each call, so the threads compute side by side. ``work`` must
    give a tile the same values whichever thread takes it (each call its own scratch), so
    that the result does not depend on the threads.
    """
    workers = 1 if pairs < THREAD_MIN_PAIRS else max(1, min(MAX_THREADS, _cpu_count(), len(tiles) // 2))
    if workers == 1:
        return [work([tiles])]
    count = min(len(tiles), RUNS_PER_THREAD * workers)
    bounds = [len(tiles) * r // count for r in range(count + 1)]
    take = _in_turn([tiles[a:b] for a, b in itertools.pairwise(bounds)])
    return _share(work, [(take(),) for _ in range(workers)])


def _in_turn(items: list[T]) -> Callable[[], Iterator[T]]:
    """``take``: every ``take()`` is an iterator over ``items``, shared: each item goes to one of them."""
    lock = threading.Lock()
    source = iter(items)
    done = object()

    def take() -> Iterator[T]:
        while True:
            with lock:
                item = next(source, done)
            if item is done:
                return
            yield item

    return take


def _share(fn: Callable[..., R], calls: list[tuple]) -> list[R]:
    """``[fn(*args) for args in calls]``, the first in this thread and the others in the kept workers.

    Returns only when every call has ended, also when one raises (the first exception is
    raised then), so that no worker still writes into an array its caller has dropped.
    """
    pending = [_executor().submit(fn, *args) for args in calls[1:]]
    try:
        first = fn(*calls[0])
    finally:
        for f in pending:
            f.exception()  # wait for it whatever happened here
    return [first] + [f.result() for f in pending]


def _executor() -> ThreadPoolExecutor:
    """The ``MAX_THREADS - 1`` worker threads, started on first use (again in a forked child)."""
    global _workers
    with _workers_lock:
        if _workers is None:
            _workers = ThreadPoolExecutor(max_workers=MAX_THREADS - 1, thread_name_prefix="posenc")
        return _workers


def _forget_workers() -> None:
    # after fork: the child has only the forking thread, the parent's workers are not its own
    global _workers, _workers_lock
    _workers, _workers_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


def _cpu_count() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _phase_tiles(phase: np.ndarray, lead_shape: tuple[int, ...], length: int, half: int, heads: int):
    """A function ``(n0, n1, l0, l1) -> phases`` of the tile (flat leading rows n0:n1, rows l0:l1).

    ``(L, d/2)`` phases (the same for every leading index) are sliced by rows only, or,
    when a tile spans ``heads > 1`` leading indices (then it holds all ``L`` rows), repeated
    once for ``heads`` of them: numpy multiplies arrays of one shape faster than it
    broadcasts one over the other, and the product is the same. Phases with leading axes
    are reshaped when they already span every leading axis of ``arr``, and otherwise
    gathered tile by tile from a broadcast view (no full-size copy).
    """
    if phase.ndim > 2 and all(n == 1 for n in phase.shape[:-2]):
        phase = phase.reshape(length, half)
    if phase.ndim == 2 and heads > 1:
        repeated = np.empty((heads, length, half), dtype=phase.dtype)
        repeated[...] = phase
        return lambda n0, n1, l0, l1: repeated[: n1 - n0]
    if phase.ndim == 2:
        return lambda n0, n1, l0, l1: phase[l0:l1]
    lead_p = (1,) * (len(lead_shape) + 2 - phase.ndim) + phase.shape[:-2]
    if lead_p == tuple(lead_shape):
        phase3 = phase.reshape(-1, length, half)
        return lambda n0, n1, l0, l1: phase3[n0:n1, l0:l1]
    wide = np.broadcast_to(phase, tuple(lead_shape) + (length, half))

    def gather(n0: int, n1: int, l0: int, l1: int) -> np.ndarray:
        index = np.unravel_index(np.arange(n0, n1), lead_shape)
        return wide[index + (slice(l0, l1),)]

    return gather


def _rotate_tiles(x3, o3, zx, zo, buf, staged, tile_phase, layout, tiles, direct) -> bool:
    """Rotate ``tiles`` (``(n0, n1, l0, l1)``: leading rows n0:n1, rows l0:l1) of ``x3`` into ``o3``.

    ``buf`` and ``staged`` are this caller's scratch (None where the path needs none).
    Returns False at the first tile with a non-finite entry, True when every tile is finite.
    """
    half = x3.shape[-1] // 2
    for n0, n1, l0, l1 in tiles:
        ph = tile_phase(n0, n1, l0, l1)
        dst = o3[n0:n1, l0:l1]
        if direct:
            multiply_phase(zx[n0:n1, l0:l1], ph, zo[n0:n1, l0:l1])
        else:
            z = buf[: n1 - n0, : l1 - l0]
            src = x3[n0:n1, l0:l1]
            if staged is not None:  # a plain copy of the tile into cache first
                staged[: n1 - n0, : l1 - l0] = src
                src = staged[: n1 - n0, : l1 - l0]
            if zx is not None:
                z[...] = zx[n0:n1, l0:l1]
            elif layout == "interleaved":
                z.real, z.imag = src[..., 0::2], src[..., 1::2]
            else:
                z.real, z.imag = src[..., :half], src[..., half:]
            multiply_phase(z, ph, z)
            if zo is not None:
                zo[n0:n1, l0:l1] = z
            elif layout == "interleaved":
                dst[..., 0::2], dst[..., 1::2] = z.real, z.imag
            else:  # one copy, whose inner loop runs along a half row
                halves = dst.reshape(dst.shape[:-1] + (2, half))
                halves[...] = z.view(np.float64).reshape(z.shape + (2,)).swapaxes(-1, -2)
        if not _tile_finite(dst):
            return False
    return True


def _tile_finite(tile: np.ndarray) -> bool:
    """Whether every entry of ``tile`` (a few MiB, in cache) is finite.

    One pass first: the sum of the entries (``np.einsum``'s unrolled sum, faster than
    numpy's pairwise ``add.reduce``) is finite only if every entry is, since an infinity or
    a NaN makes the sum infinite or NaN (``inf - inf`` is NaN). A sum that is not finite
    proves nothing (finite entries may overflow it), so it is checked again: ``max``
    propagates NaN and shows +inf, ``min`` shows -inf (two passes, no temporary array; a
    BLAS dot product would be faster per entry but may start threads). The caller silences
    the overflow warning (``np.errstate``). Measured in ``apply_rope``'s float32 half layout
    (the 8 x 32 x 4096 x 128 array of the benchmark, 11 rounds in turn, three runs): 1.74x,
    1.61x, 1.58x a copy, against 1.88x, 1.70x, 1.69x with ``max`` and ``min`` alone.
    """
    if tile.flags.c_contiguous and np.isfinite(np.einsum("i->", tile.reshape(-1))):
        return True
    return bool(np.isfinite(tile.max()) and np.isfinite(tile.min()))
