r"""RoPE's phases kept between calls, for rotations that repeat.

A model rotates its queries and its keys, in every layer, by the same phases
:math:`s\,e^{\mathrm{i}m\theta_i}`: the positions, the frequencies and the attention
factor :math:`s` do not change from one call to the next. Computing them (a cosine and a
sine per position and frequency: numpy's float64 ``cos`` took about 16 ns per angle on the
benchmark machine of chapter 13) is the largest part of :func:`posenc.apply_rope` that does
not grow with the number of heads: a few percent of a call on a batch, most of a call on
one head.

:func:`rope_phases` therefore keeps the phases of the last ``KEPT_ENTRIES`` distinct
requests of one row of positions, each of at most ``KEPT_PAIRS`` pairs (at most 32 MiB in
all), and returns a kept array (read-only) when the positions, the frequencies and the
factor are the same bits as those it was computed from. Equal bits give equal angles
``pos[:, None] * inv`` and so equal phases: a kept array is the array the same call would
compute (the tests compare them bit for bit). Positions that differ only in the sign of a
zero are different bits and are kept apart, since their sines differ in sign.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from ._rotate import unit_phases

# The largest phase table kept (8 MiB of complex128: positions x frequencies, e.g. 4096 x 64
# is 2**18) and how many are kept, the most recently used last.
KEPT_PAIRS = 1 << 19
KEPT_ENTRIES = 4

_kept: OrderedDict[tuple, np.ndarray] = OrderedDict()
_kept_lock = threading.Lock()


def rope_phases(pos: np.ndarray, inv: np.ndarray, scale: float) -> np.ndarray:
    r"""``unit_phases(pos[..., None] * inv, scale)``: :math:`s\,e^{\mathrm{i}\,p\,\theta_i}` in complex128.

    ``pos`` holds float64 positions (any shape), ``inv`` the float64 frequencies
    :math:`\theta_i`, ``scale`` the attention factor :math:`s`. For a 1-D ``pos`` with
    ``pos.size * inv.size <= KEPT_PAIRS`` the result is kept, read-only, and returned again
    for the same bits of ``pos``, ``inv`` and ``scale``; otherwise it is computed each time.
    """
    if pos.ndim != 1 or pos.size * inv.size > KEPT_PAIRS:
        return unit_phases(pos[..., None] * inv, scale)
    key = (pos.dtype.str, pos.tobytes(), inv.dtype.str, inv.tobytes(), np.float64(scale).tobytes())
    with _kept_lock:
        phase = _kept.get(key)
        if phase is not None:
            _kept.move_to_end(key)
            return phase
    phase = unit_phases(pos[:, None] * inv, scale)
    phase.setflags(write=False)
    with _kept_lock:
        _kept[key] = phase
        while len(_kept) > KEPT_ENTRIES:
            _kept.popitem(last=False)
    return phase


def forget_kept_phases() -> None:
    """Empty the kept phases: the next rotation computes its phases again (a first call)."""
    with _kept_lock:
        _kept.clear()


def kept_phase_count() -> int:
    """How many phase tables are kept now (at most ``KEPT_ENTRIES``)."""
    with _kept_lock:
        return len(_kept)
