r"""Diagnostics of a positional-encoding table ``pe`` of shape ``(L, d)``.

For the sinusoidal table, :math:`PE_m \cdot PE_n = \sum_i \cos((m-n)\omega_i)` depends
on :math:`m - n` only, so :func:`dot_product_distance` returns a symmetric Toeplitz
matrix with :math:`d/2` on its diagonal, and every row norm is :math:`\sqrt{d/2}`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_array


def dot_product_distance(pe: np.ndarray) -> np.ndarray:
    """Gram matrix ``pe @ pe.T``: entry ``(m, n)`` is the dot product of rows ``m`` and ``n``."""
    pe = check_array(pe, "pe", ndim=2)
    return pe @ pe.T


@dataclass(frozen=True)
class EncodingStatistics:
    """Summary of an encoding table (see :func:`encoding_statistics`)."""

    norms: np.ndarray
    dim_mean: np.ndarray
    dim_var: np.ndarray
    min: float
    max: float


def encoding_statistics(pe: np.ndarray) -> EncodingStatistics:
    """Row norms, per-dimension (column) mean and variance, and global min/max of ``pe``."""
    pe = check_array(pe, "pe", ndim=2)
    if pe.size == 0:
        raise ValueError("pe must not be empty")
    return EncodingStatistics(
        norms=np.linalg.norm(pe, axis=1),
        dim_mean=pe.mean(axis=0),
        dim_var=pe.var(axis=0),
        min=float(pe.min()),
        max=float(pe.max()),
    )


def mean_dot_by_offset(pe: np.ndarray) -> np.ndarray:
    """Average of ``pe[p] @ pe[p + k]`` over all valid ``p``, for ``k = 0..L-1``."""
    gram = dot_product_distance(pe)
    return np.array([np.diagonal(gram, offset=k).mean() for k in range(gram.shape[0])])


def dot_product_profile(offsets: object, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    r"""Closed form of the sinusoidal dot product as a function of the offset.

    Returns :math:`D(k) = \sum_{i=0}^{d/2-1} \cos(k\,\omega_i)` for each ``k`` in
    ``offsets`` (an int ``K`` meaning ``0..K-1``, or a 1-D array of real offsets), where
    :math:`\omega_i = \mathrm{base}^{-2i/d}`. For every position :math:`p`,
    :math:`PE_p \cdot PE_{p+k} = D(k)`; :math:`D` is even, :math:`D(0) = d/2` and
    :math:`|D(k)| \le d/2`. Raises like :func:`~posenc.sinusoidal.sinusoidal_encoding`.
    """
    from ._validation import as_positions, check_base, check_even_int
    from .sinusoidal import frequencies

    k = as_positions(offsets, "offsets")
    d_model = check_even_int(d_model, "d_model")
    base = check_base(base)
    omega = frequencies(d_model, base)
    return np.cos(k[:, None] * omega[None, :]).sum(axis=1)


def toeplitz_deviation(matrix: np.ndarray) -> float:
    r"""Largest distance of a square matrix from Toeplitz form.

    Returns :math:`\max_{i,j} |A_{ij} - A_{i-\min(i,j),\, j-\min(i,j)}|`: every entry
    compared with the first entry of its diagonal. It is ``0.0`` exactly when ``A`` is
    Toeplitz (constant along every diagonal). Raises ``ValueError`` unless ``matrix`` is a
    non-empty square 2-D array.
    """
    a = check_array(matrix, "matrix", ndim=2).astype(np.float64)
    if a.shape[0] != a.shape[1] or a.shape[0] == 0:
        raise ValueError(f"matrix must be square and non-empty, got shape {a.shape}")
    n = a.shape[0]
    i, j = np.indices((n, n))
    m = np.minimum(i, j)
    return float(np.max(np.abs(a - a[i - m, j - m])))
