r"""Recovering the shift matrix :math:`M_k` from encodings alone.

For the sinusoidal table, :math:`PE_{p+k} = M_k\,PE_p` with :math:`M_k` block diagonal
(see :func:`~posenc.sinusoidal.relative_position_matrix`). Given only the rows of a table, the
functions here estimate such a matrix by least squares: stack pairs
:math:`(x_j, y_j) = (PE_{p_j}, PE_{p_j + k})` as the rows of :math:`X` and :math:`Y`
and solve

.. math:: \hat M = \arg\min_M \lVert X M^\top - Y \rVert_F ,

taking the minimum-norm solution when the problem is underdetermined. With
``structure="block"`` the estimate is constrained to the block-diagonal pattern of
:math:`M_k` (one independent 2x2 least-squares problem per frequency pair), which stays
well conditioned even when the slow pairs barely move over the training positions.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_array, check_even_int
from .sinusoidal import _check_layout

STRUCTURES = ("full", "block")


def fit_linear_map(source: np.ndarray, target: np.ndarray, *, rcond: float | None = None) -> np.ndarray:
    r"""Least-squares matrix :math:`\hat M` with ``target[j] ≈ M @ source[j]`` for every row ``j``.

    Solves :math:`\min_M \lVert S M^\top - T \rVert_F` with ``numpy.linalg.lstsq``
    (singular values below ``rcond`` times the largest are treated as zero; ``None`` is
    numpy's default, machine epsilon times the larger dimension). When ``source`` has
    fewer independent rows than columns the solution is not unique and the minimum-norm
    one is returned: it reproduces the training pairs but need not be the true map.

    ``source`` has shape ``(n, d_in)`` and ``target`` shape ``(n, d_out)``; the result has
    shape ``(d_out, d_in)``. Raises ``ValueError`` for mismatched row counts or non-finite
    entries, ``TypeError`` for non-real arrays.
    """
    s = check_array(source, "source", ndim=2).astype(np.float64)
    t = check_array(target, "target", ndim=2).astype(np.float64)
    if s.shape[0] != t.shape[0]:
        raise ValueError(
            f"source and target must have the same number of rows, got {s.shape[0]} and {t.shape[0]}"
        )
    if s.shape[0] == 0 or s.shape[1] == 0 or t.shape[1] == 0:
        raise ValueError(f"source and target must be non-empty, got shapes {s.shape} and {t.shape}")
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(t))):
        raise ValueError("source and target must be finite (no NaN or infinity)")
    if rcond is not None and not (np.isfinite(rcond) and rcond >= 0):
        raise ValueError(f"rcond must be a finite non-negative number or None, got {rcond!r}")
    m_t = np.linalg.lstsq(s, t, rcond=rcond)[0]
    return np.ascontiguousarray(m_t.T)


def _shift_pairs(pe: np.ndarray, offset: int) -> tuple[np.ndarray, np.ndarray]:
    # Rows p and p + offset of a table whose rows are consecutive integer positions.
    if offset >= 0:
        return pe[: pe.shape[0] - offset], pe[offset:]
    return pe[-offset:], pe[: pe.shape[0] + offset]


def fit_shift_matrix(
    pe: np.ndarray,
    offset: int,
    *,
    structure: str = "full",
    layout: str = "interleaved",
    rcond: float | None = None,
) -> np.ndarray:
    r"""Estimate :math:`M_k` with ``pe[p + offset] ≈ M @ pe[p]`` from the rows of ``pe``.

    ``pe`` is an encoding table of shape ``(L, d)`` whose row ``r`` encodes position
    ``p0 + r`` (consecutive integer positions; ``p0`` is irrelevant). The training pairs
    are all ``(pe[r], pe[r + offset])`` with both rows inside the table, so
    ``L - |offset|`` pairs; ``offset`` may be negative.

    ``structure="full"`` fits an unconstrained ``d x d`` matrix by least squares
    (:func:`fit_linear_map`); in exact arithmetic it is :math:`M_k` as soon as the
    training rows span :math:`\mathbb{R}^d`, but in float64 the slow frequency pairs of a
    short table are numerically dependent and the fit can be far from :math:`M_k`.
    ``structure="block"`` fits each sin/cos pair on its own (``d/2`` problems of size 2),
    returning a block-diagonal matrix; the pairs are columns ``(2i, 2i+1)`` for
    ``layout="interleaved"`` and ``(i, i + d/2)`` for ``layout="split"``.

    Raises ``TypeError`` for a non-integer ``offset``; ``ValueError`` for a table that is
    not 2-D, an odd width with ``structure="block"``, ``|offset| >= L``, or an unknown
    ``structure``/``layout``.
    """
    pe = check_array(pe, "pe", ndim=2).astype(np.float64)
    if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, (int, np.integer)):
        raise TypeError(f"offset must be an integer (rows are integer positions), got {offset!r}")
    offset = int(offset)
    if structure not in STRUCTURES:
        raise ValueError(f"structure must be one of {STRUCTURES}, got {structure!r}")
    layout = _check_layout(layout)
    length, d = pe.shape
    if abs(offset) >= length:
        raise ValueError(f"offset must satisfy |offset| < L = {length} to give any pair, got {offset}")
    x, y = _shift_pairs(pe, offset)
    if structure == "full":
        return fit_linear_map(x, y, rcond=rcond)
    d = check_even_int(d, "pe.shape[1]")
    half = d // 2
    m = np.zeros((d, d), dtype=np.float64)
    for i in range(half):
        cols = [2 * i, 2 * i + 1] if layout == "interleaved" else [i, i + half]
        m[np.ix_(cols, cols)] = fit_linear_map(x[:, cols], y[:, cols], rcond=rcond)
    return m


def shift_matrix_angles(m: np.ndarray, *, layout: str = "interleaved") -> np.ndarray:
    r"""Rotation angle of each 2x2 block of a shift matrix, in :math:`(-\pi, \pi]`.

    For a block :math:`\begin{pmatrix} \cos\theta & \sin\theta \\ -\sin\theta & \cos\theta
    \end{pmatrix}` (the convention of :func:`~posenc.sinusoidal.relative_position_matrix`, acting on
    (sin, cos)) this returns :math:`\theta = \operatorname{atan2}(m_{01}, m_{00})`, so for
    :math:`M_k` the angles are :math:`k\omega_i` reduced modulo :math:`2\pi`. Returns an
    array of length ``d/2``. Raises ``ValueError`` unless ``m`` is square with even size.
    """
    m = check_array(m, "m", ndim=2).astype(np.float64)
    if m.shape[0] != m.shape[1]:
        raise ValueError(f"m must be square, got shape {m.shape}")
    layout = _check_layout(layout)
    d = check_even_int(m.shape[0], "m.shape[0]")
    i = np.arange(d // 2)
    a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
    return np.arctan2(m[a, b], m[a, a])
