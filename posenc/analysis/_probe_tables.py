"""Internal: the fixed tables of ``posenc.analysis.probe``, computed once per size.

A fit reads the same causal mask, sinusoidal table, RoPE phases and T5 buckets at every
step, so each is kept (read-only, the last 16 sizes) under its integer arguments. The
tables are exactly those of the public functions: the RoPE rotation gives the bits of
:func:`~posenc.rope.apply_rope` (the tests compare them).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._rope_inputs import rotate_checked
from .._rotate import unit_phases
from ..relative import t5_relative_position_bucket
from ..rope import rope_frequencies
from ..sinusoidal import sinusoidal_encoding


@lru_cache(maxsize=16)
def causal_mask(length: int) -> tuple[np.ndarray, np.ndarray]:
    """``mask[i, j] = j <= i`` and its complement, shape ``(length, length)`` (read-only, shared)."""
    mask = np.tril(np.ones((length, length), dtype=bool))
    above = ~mask
    mask.setflags(write=False)
    above.setflags(write=False)
    return mask, above


@lru_cache(maxsize=16)
def sinusoidal_rows(length: int, d: int) -> np.ndarray:
    """``sinusoidal_encoding(length, d)``, read-only."""
    pe = sinusoidal_encoding(length, d)
    pe.setflags(write=False)
    return pe


@lru_cache(maxsize=16)
def rope_row_phases(length: int, d: int, sign: float) -> np.ndarray:
    """The phases by which ``apply_rope(x, sign * np.arange(length))`` turns the rows of
    ``x`` (``(length, d)``, base 10000, interleaved pairs), formed as apply_rope forms
    them, read-only."""
    pos = sign * np.arange(length, dtype=np.float64)
    inv, scale = rope_frequencies(d, return_attention_factor=True)
    phase = unit_phases(pos[:, None] * inv, scale)
    phase.setflags(write=False)
    return phase


def rotate_rows(x: np.ndarray, sign: float = 1.0) -> np.ndarray:
    """``apply_rope(x, sign * np.arange(len(x)))`` for a float64 ``(L, d)`` ``x``, with kept phases."""
    return rotate_checked(x, rope_row_phases(x.shape[0], x.shape[1], sign), "interleaved")


@lru_cache(maxsize=16)
def t5_buckets(length: int, num_buckets: int, max_distance: int) -> np.ndarray:
    """Unidirectional T5 buckets of ``key - query`` for ``length`` positions, read-only."""
    i = np.arange(length)
    buckets = t5_relative_position_bucket(
        i[None, :] - i[:, None], bidirectional=False, num_buckets=num_buckets, max_distance=max_distance
    )
    buckets.setflags(write=False)
    return buckets
