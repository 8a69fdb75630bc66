r"""Rotation of coordinate pairs by unit phases, and the thread knob of the kernels.

Internal: used by ``_rope_inputs``, ``rope``, ``rope_nd``, ``_table`` and
``analysis/_probe_tables``; ``posenc`` exports its ``set_num_threads``/``get_num_threads``.

A pair :math:`(a, b)` is read as the complex number :math:`z = a + \mathrm{i}b` and rotated
by a phase :math:`w = c + \mathrm{i}s` (for RoPE :math:`w = s\,e^{\mathrm{i}m\theta}`, ``s``
the attention factor) with one complex128 product, numpy's ``multiply``:

.. math:: z\,w = (a c - b s) + \mathrm{i}\,(a s + b c).

Each component is within :math:`2u(|ac| + |bs|)` of the exact value (:math:`u = 2^{-53}`;
two roundings with FMA instructions, three without). Every caller goes through this one
product, with both operands given the same shape, so a pair gets the same bits whatever
the layout, the tiling, the strides, the input dtype (float16, float32 and integers up to
:math:`2^{53}` widen to float64 exactly) or the number of threads; the result is rounded
once to the output dtype.

The work is memory-bound, in tiles of at most ``TILE_PAIRS`` pairs. A float64 interleaved
array whose last axis has stride 8 is multiplied as its complex128 view; otherwise a tile's
pairs are gathered into a complex128 scratch in cache (a float64 half-layout tile is first
copied as it lies), multiplied in place and scattered back. No thread is started unless
the caller asks with :func:`set_num_threads` (or ``POSENC_NUM_THREADS``, read at import):
then a call of at least ``THREAD_MIN_PAIRS`` pairs splits its tiles into that many
contiguous runs, one per thread, started for the call and joined before it returns.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from ._validation import check_int

TILE_PAIRS = 1 << 18  # a 4 MiB complex128 scratch: in L3 cache, few numpy calls per array
THREAD_MIN_PAIRS = 1 << 18  # smaller calls run in the calling thread whatever the setting
MAX_THREADS = 1024

T = TypeVar("T")
R = TypeVar("R")


def _check_threads(n: object, name: str) -> int:
    return check_int(n, name, 1, MAX_THREADS)


def _threads_from_environment() -> int:
    text = os.environ.get("POSENC_NUM_THREADS", "").strip()
    if not text:
        return 1
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"POSENC_NUM_THREADS must be a positive integer, got {text!r}") from None
    return _check_threads(value, "POSENC_NUM_THREADS")


_num_threads = _threads_from_environment()


def set_num_threads(n: int) -> int:
    """Let the table and rotation kernels use up to ``n`` threads; returns the previous setting.

    The default is 1 (no thread is ever started), or the integer in the environment
    variable ``POSENC_NUM_THREADS`` when ``posenc`` was imported. With ``n > 1`` a call of
    :func:`~posenc.sinusoidal.sinusoidal_encoding`, :func:`~posenc.rope.apply_rope` (and the
    other RoPE functions) on at least 2**18 pairs shares its tiles among ``n`` threads
    started for that call (the calling thread is one of them) and ended before it returns.
    Results are the same bits whatever ``n``. ``n``: an ``int`` from 1 to 1024 (bools
    refused); ``TypeError``/``ValueError`` otherwise. The setting is global to the process.
    """
    global _num_threads
    previous, _num_threads = _num_threads, _check_threads(n, "n")
    return previous


def get_num_threads() -> int:
    """The number of threads the kernels may use (see :func:`set_num_threads`); 1 by default."""
    return _num_threads


def in_threads(work: Callable[[list[T]], R], tiles: list[T], pairs: int) -> list[R]:
    """``[work(run) for run in runs]``: ``tiles`` cut into contiguous runs, one per thread.

    One run (``[work(tiles)]``, in this thread) unless :func:`get_num_threads` is above 1 and
    the call has at least ``THREAD_MIN_PAIRS`` pairs. The threads are started here and
    joined before returning, also when one raises (the first exception is raised then), so
    that none still writes into an array its caller has dropped. ``work`` must give a tile
    the same values whichever run holds it (each run its own scratch).
    """
    n = min(_num_threads, len(tiles)) if pairs >= THREAD_MIN_PAIRS else 1
    if n <= 1:
        return [work(tiles)]
    runs = [tiles[len(tiles) * t // n : len(tiles) * (t + 1) // n] for t in range(n)]
    results: list = [None] * n
    errors: list[BaseException] = []

    def run(t: int) -> None:
        try:
            results[t] = work(runs[t])
        except BaseException as exc:  # re-raised by the calling thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,), name=f"posenc-{t}") for t in range(1, n)]
    for thread in threads:
        thread.start()
    run(0)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def multiply_phase(z: np.ndarray, phase: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """``out = z * phase`` for complex128 ``z`` and ``phase`` (broadcast): the kernel itself.

    Both operands are first given the same number of dimensions (leading axes of length
    1): numpy evaluates a one-element product of operands of different dimensions with an
    unfused scalar loop, which would round some pairs differently.
    """
    if z.ndim < phase.ndim:
        z = z.reshape((1,) * (phase.ndim - z.ndim) + z.shape)
    elif phase.ndim < z.ndim:
        phase = phase.reshape((1,) * (z.ndim - phase.ndim) + phase.shape)
    return np.multiply(z, phase, out=out)


def unit_phases(angles: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """``cos(angles) * scale + 1j * sin(angles) * scale`` as complex128 (angles float64)."""
    phase = np.empty(angles.shape, dtype=np.complex128)
    np.multiply(np.cos(angles), scale, out=phase.real)
    np.multiply(np.sin(angles), scale, out=phase.imag)
    return phase


def rotate_pairs(
    arr: np.ndarray, phase: np.ndarray, layout: str, out_dtype: np.dtype
) -> tuple[np.ndarray, bool]:
    r"""Rotate the pairs of ``arr[..., L, d]`` by ``phase[..., L, d/2]`` (complex128).

    Pair :math:`i` of row :math:`l` is ``(arr[..., l, 2i], arr[..., l, 2i+1])`` for
    ``layout="interleaved"`` and ``(arr[..., l, i], arr[..., l, i + d/2])`` for ``"half"``;
    it becomes :math:`(a + \mathrm{i}b)\,\mathrm{phase}[..., l, i]` computed by
    :func:`multiply_phase` in float64, rounded once to ``out_dtype``. ``arr`` may have any
    real dtype and strides. ``phase`` is ``(L, d/2)`` or has leading axes that broadcast
    to those of ``arr`` (per-sequence positions); it is broadcast tile by tile, never to
    the full size of ``arr``.

    Returns ``(out, finite)``: a new array and whether every entry of it is finite (checked
    on each tile while it is in cache). A NaN or an infinity in ``arr`` always reaches the
    output: infinity times any number, zero included, is not finite.
    """
    length, d = arr.shape[-2], arr.shape[-1]
    half = d // 2
    out = np.empty(arr.shape, dtype=out_dtype)
    if out.size == 0:
        return out, True
    x3 = arr.reshape(-1, length, d)  # a view whenever the leading axes allow one
    o3 = out.reshape(-1, length, d)
    lead = x3.shape[0]
    direct = layout == "interleaved" and x3.dtype == o3.dtype == np.float64 and x3.strides[-1] == 8
    stage = layout == "half" and x3.dtype == np.float64
    tile_pairs = TILE_PAIRS // 2 if stage else TILE_PAIRS  # the staged copy shares the cache
    rows = max(1, min(length, tile_pairs // half))
    heads = max(1, min(lead, tile_pairs // (rows * half)))
    tile_phase = _phase_tiles(phase, arr.shape[:-2], length, half, heads)
    tiles = [
        (n0, min(lead, n0 + heads), l0, min(length, l0 + rows))
        for l0 in range(0, length, rows)
        for n0 in range(0, lead, heads)
    ]

    def rotate_some(some: list[tuple[int, int, int, int]]) -> bool:
        buf = None if direct else np.empty((heads, rows, half), dtype=np.complex128)
        staged = np.empty((heads, rows, d)) if stage else None
        # an overflow to the output dtype, or inf * 0, is reported by the result, not a warning
        with np.errstate(over="ignore", invalid="ignore"):
            return all([_rotate_tile(x3, o3, buf, staged, tile_phase, layout, tile) for tile in some])

    return out, all(in_threads(rotate_some, tiles, out.size // 2))


def _phase_tiles(phase: np.ndarray, lead_shape: tuple[int, ...], length: int, half: int, heads: int):
    """A function ``(n0, n1, l0, l1) -> phases`` of the tile (flat leading rows n0:n1, rows l0:l1).

    ``(L, d/2)`` phases are sliced by rows, or repeated for the ``heads`` leading indices of
    a tile that holds all ``L`` rows (numpy multiplies arrays of one shape faster than it
    broadcasts one over the other; the product is the same). Phases with leading axes are
    reshaped when they span every leading axis of ``arr``, else gathered tile by tile.
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


def _rotate_tile(x3, o3, buf, staged, tile_phase, layout: str, tile: tuple[int, int, int, int]) -> bool:
    """Rotate one tile (leading rows n0:n1, rows l0:l1) of ``x3`` into ``o3``; whether it is finite.

    ``buf`` is the caller's complex scratch, None for the direct float64 interleaved path.
    """
    n0, n1, l0, l1 = tile
    half = x3.shape[-1] // 2
    ph = tile_phase(n0, n1, l0, l1)
    src, dst = x3[n0:n1, l0:l1], o3[n0:n1, l0:l1]
    if buf is None:
        multiply_phase(src.view(np.complex128), ph, dst.view(np.complex128))
    else:
        z = buf[: n1 - n0, : l1 - l0]
        # a float32 interleaved tile is widened as its complex64 view (one pass, not two)
        as_complex = layout == "interleaved" and src.dtype == np.float32 and src.strides[-1] == 4
        if as_complex:
            z[...] = src.view(np.complex64)
        elif layout == "interleaved":
            z.real, z.imag = src[..., 0::2], src[..., 1::2]
        else:
            if staged is not None:  # a plain copy streams at full speed; the gather then reads cache
                staged[: n1 - n0, : l1 - l0] = src
                src = staged[: n1 - n0, : l1 - l0]
            z.real, z.imag = src[..., :half], src[..., half:]
        multiply_phase(z, ph, z)
        if layout == "interleaved" and dst.dtype == np.float32:
            dst.view(np.complex64)[...] = z
        elif layout == "interleaved":
            dst[..., 0::2], dst[..., 1::2] = z.real, z.imag
        else:
            # one copy, whose inner loop runs along a half row (measured faster than two)
            halves = dst.reshape(dst.shape[:-1] + (2, half))
            halves[...] = z.view(np.float64).reshape(z.shape + (2,)).swapaxes(-1, -2)
    return _tile_finite(dst)


def _tile_finite(tile: np.ndarray) -> bool:
    """Whether every entry of ``tile`` (a few MiB, in cache) is finite.

    The sum of the entries is finite only if every entry is (an infinity or a NaN makes it
    infinite or NaN); a sum that is not finite proves nothing (finite entries may overflow
    it), so then ``max`` (which propagates NaN and shows +inf) and ``min`` decide. One pass
    in the common case, and no temporary array.
    """
    if tile.flags.c_contiguous and np.isfinite(np.einsum("i->", tile.reshape(-1))):
        return True
    return bool(np.isfinite(tile.max()) and np.isfinite(tile.min()))
