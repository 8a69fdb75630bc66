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
