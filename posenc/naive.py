r"""The naive position encodings that motivate sinusoids (chapter 2).

- integer positions :math:`p` (unbounded);
- normalised positions :math:`p/(L-1)` or :math:`p/L` (bounded, but the gap between
  neighbours depends on the sequence length :math:`L`);
- binary vectors: the bits of :math:`p` (bounded, unique only below :math:`2^{n}`, and
  the distance between neighbours jumps at carries).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_positive_int

NORMALISATIONS = ("endpoints", "fraction")


def integer_encoding(length: int) -> np.ndarray:
    """Positions ``0, 1, ..., length-1`` as a float64 column, shape ``(length, 1)``."""
    length = check_positive_int(length, "length")
    return np.arange(length, dtype=np.float64)[:, None]


def normalized_encoding(length: int, *, mode: str = "endpoints") -> np.ndarray:
    """Positions scaled into ``[0, 1]``, shape ``(length, 1)``.

    ``mode="endpoints"``: :math:`p/(L-1)`, first position 0 and last 1 (a single position
    maps to 0). ``mode="fraction"``: :math:`p/L`, values ``0, 1/L, ..., (L-1)/L``.
    """
    length = check_positive_int(length, "length")
    if mode not in NORMALISATIONS:
        raise ValueError(f"mode must be one of {NORMALISATIONS}, got {mode!r}")
    p = np.arange(length, dtype=np.float64)
    denominator = max(length - 1, 1) if mode == "endpoints" else length
    return (p / denominator)[:, None]


def binary_encoding(length: int, n_bits: int) -> np.ndarray:
    """Bits of each position, most significant first, shape ``(length, n_bits)``, values 0/1.

    Raises ``ValueError`` when ``length > 2**n_bits``: the bits could not tell the
    positions apart.
    """
    length = check_positive_int(length, "length")
    n_bits = check_positive_int(n_bits, "n_bits")
    if length > 2**n_bits:
        raise ValueError(f"{n_bits} bits distinguish only {2**n_bits} positions, got length={length}")
    p = np.arange(length, dtype=np.int64)[:, None]
    shifts = np.arange(n_bits - 1, -1, -1, dtype=np.int64)[None, :]
    return ((p >> shifts) & 1).astype(np.float64)
