r"""Diagnostics of a positional-encoding table ``pe`` of shape ``(L, d)``.

For the sinusoidal table, :math:`PE_m \cdot PE_n = \sum_i \cos((m-n)\omega_i)` depends
on :math:`m - n` only, so :func:`dot_product_distance` returns a symmetric Toeplitz
matrix with :math:`d/2` on its diagonal, and every row norm is :math:`\sqrt{d/2}`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._arrays import as_positions, as_real_array, check_finite_result
from .._validation import check_base, check_finite_real, check_size, check_width


def dot_product_distance(pe: np.ndarray) -> np.ndarray:
    """Gram matrix ``pe @ pe.T``: entry ``(m, n)`` is the dot product of rows ``m`` and ``n``.

    ``pe``: a non-empty, finite, 2-D real array-like ``(L, d)`` (lists accepted; integer
    dtypes are promoted to float64, so nothing is computed in a small integer type; bools,
    complex numbers, NaN and infinities are refused). The result, float64 ``(L, L)``, may
    have at most 2**28 entries, and a result that overflows float64 is refused. Errors
    name ``pe``.
    """
    pe = as_real_array(pe, "pe", ndim=2)
    check_size((pe.shape[0], pe.shape[0]), "the Gram matrix (L, L) with L = pe.shape[0]")
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below
        gram = pe @ pe.T
    return check_finite_result(gram, "pe has entries too large: the dot products overflow float64")


@dataclass(frozen=True)
class EncodingStatistics:
    """Summary of an encoding table (see :func:`encoding_statistics`).

    Checked when built: ``norms`` (one per row, ``>= 0``), ``dim_mean`` and ``dim_var``
    (one per column, variances ``>= 0``) non-empty 1-D arrays of finite reals, stored as
    float64; ``min <= max`` finite reals. Anything else raises ``TypeError``/``ValueError``
    naming the field.
    """

    norms: np.ndarray
    dim_mean: np.ndarray
    dim_var: np.ndarray
    min: float
    max: float

    def __post_init__(self) -> None:
        for name in ("norms", "dim_mean", "dim_var"):
            object.__setattr__(self, name, as_real_array(getattr(self, name), name, ndim=1))
        if self.dim_mean.shape != self.dim_var.shape:
            raise ValueError(
                f"dim_mean and dim_var must have one entry per column each, got {self.dim_mean.shape} "
                f"and {self.dim_var.shape}"
            )
        for name in ("norms", "dim_var"):
            if float(getattr(self, name).min()) < 0.0:
                raise ValueError(f"{name} must be >= 0, got {float(getattr(self, name).min())!r}")
        low, high = check_finite_real(self.min, "min"), check_finite_real(self.max, "max")
        if low > high:
            raise ValueError(f"min must be at most max, got min={low!r}, max={high!r}")
        object.__setattr__(self, "min", low)
        object.__setattr__(self, "max", high)


def encoding_statistics(pe: np.ndarray) -> EncodingStatistics:
    """Row norms, per-dimension (column) mean and variance, and global min/max of ``pe``.

    ``pe`` as in :func:`dot_product_distance`; statistics that overflow float64 (entries
    near 1e154 and above) are refused. Errors name ``pe``.
    """
    pe = as_real_array(pe, "pe", ndim=2)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below
        parts = (np.linalg.norm(pe, axis=1), pe.mean(axis=0), pe.var(axis=0))
    for part in parts:
        check_finite_result(part, "pe has entries too large: its statistics overflow float64")
    norms, dim_mean, dim_var = parts
    return EncodingStatistics(norms, dim_mean, dim_var, float(pe.min()), float(pe.max()))


def mean_dot_by_offset(pe: np.ndarray) -> np.ndarray:
    """Average of ``pe[p] @ pe[p + k]`` over all valid ``p``, for ``k = 0..L-1``.

    ``pe`` as in :func:`dot_product_distance` (the ``(L, L)`` Gram matrix is formed, so
    ``L * L <= 2**28``). Errors name ``pe``.
    """
    gram = dot_product_distance(pe)
    with np.errstate(over="ignore"):
        means = np.array([np.diagonal(gram, offset=k).mean() for k in range(gram.shape[0])])
    if not np.isfinite(means).all():  # a sum of finite products overflowed: average the scaled terms
        with np.errstate(over="ignore"):
            means = np.array(
                [(np.diagonal(gram, offset=k) / (gram.shape[0] - k)).sum() for k in range(gram.shape[0])]
            )
        check_finite_result(means, "pe has entries too large: the mean dot products overflow float64")
    return means


def dot_product_profile(offsets: object, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    r"""Closed form of the sinusoidal dot product as a function of the offset.

    Returns :math:`D(k) = \sum_{i=0}^{d/2-1} \cos(k\,\omega_i)` for each ``k`` in
    ``offsets`` (an int ``K`` meaning ``0..K-1``, or a 1-D array of real offsets), where
    :math:`\omega_i = \mathrm{base}^{-2i/d}`. For every position :math:`p`,
    :math:`PE_p \cdot PE_{p+k} = D(k)`; :math:`D` is even, :math:`D(0) = d/2` and
    :math:`|D(k)| \le d/2`. Raises like :func:`~posenc.sinusoidal.sinusoidal_encoding`.

    ``offsets`` an ``int`` ``1 <= K <= 2**28`` or a non-empty 1-D real array-like with
    ``|k| <= 2**53`` (as ``positions`` of :func:`~posenc.sinusoidal.sinusoidal_encoding`);
    ``d_model`` a positive even ``int`` at most 2**16; ``base`` a finite real number
    greater than 1; ``len(offsets) * d_model / 2`` at most 2**28 (the cosines are formed
    at once). The angle is ``k * w`` in float64 (``w`` correctly rounded), so each term
    is within :math:`|k|\,\omega_i\,2^{-52}` plus a few ulp of the exact cosine.
    """
    from ..sinusoidal import frequencies

    k = as_positions(offsets, "offsets")
    d_model = check_width(d_model, "d_model")
    base = check_base(base)
    check_size((k.size, d_model // 2), "the cosines (offsets, d_model / 2)")
    omega = frequencies(d_model, base)
    return np.cos(k[:, None] * omega[None, :]).sum(axis=1)


def toeplitz_deviation(matrix: np.ndarray) -> float:
    r"""Largest distance of a square matrix from Toeplitz form.

    Returns :math:`\max_{i,j} |A_{ij} - A_{i-\min(i,j),\, j-\min(i,j)}|`: every entry
    compared with the first entry of its diagonal. It is ``0.0`` exactly when ``A`` is
    Toeplitz (constant along every diagonal). Raises ``ValueError`` unless ``matrix`` is a
    non-empty, finite, square 2-D real array-like (integers promoted to float64; bools and
    complex numbers refused with ``TypeError``); a deviation that overflows float64 is
    refused. Errors name ``matrix``.
    """
    a = as_real_array(matrix, "matrix", ndim=2)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"matrix must be square and non-empty, got shape {a.shape}")
    n = a.shape[0]
    i, j = np.indices((n, n))
    m = np.minimum(i, j)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below
        deviation = float(np.max(np.abs(a - a[i - m, j - m])))
    if not np.isfinite(deviation):
        raise ValueError("matrix has entries too large: the deviation overflows float64")
    return deviation
