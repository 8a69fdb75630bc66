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

from .._arrays import as_real_array
from .._validation import check_choice, check_even_int, check_int, check_nonnegative_real, check_size
from ..layouts import check_layout

STRUCTURES = ("full", "block")


def fit_linear_map(source: np.ndarray, target: np.ndarray, *, rcond: float | None = None) -> np.ndarray:
    r"""Least-squares matrix :math:`\hat M` with ``target[j] ≈ M @ source[j]`` for every row ``j``.

    Solves :math:`\min_M \lVert S M^\top - T \rVert_F` with ``numpy.linalg.lstsq``
    (singular values below ``rcond`` times the largest are treated as zero; ``None`` is
    numpy's default, machine epsilon times the larger dimension). When ``source`` has
    fewer independent rows than columns the solution is not unique and the minimum-norm
    one is returned: it reproduces the training pairs but need not be the true map.

    ``source`` has shape ``(n, d_in)`` and ``target`` shape ``(n, d_out)``; the result has
    shape ``(d_out, d_in)``.

    ``source`` and ``target``: non-empty, finite, 2-D real array-likes (integers promoted to
    float64; bools and complex numbers refused) with the same number of rows; the result
    may have at most 2**28 entries (``d_out * d_in``). ``rcond``: None or a finite real
    number >= 0 (bools refused). Raises ``ValueError``/``TypeError`` naming the argument;
    a fit whose entries overflow float64 is refused.
    """
    s = as_real_array(source, "source", ndim=2)
    t = as_real_array(target, "target", ndim=2)
    if s.shape[0] != t.shape[0]:
        raise ValueError(
            f"source and target must have the same number of rows, got {s.shape[0]} and {t.shape[0]}"
        )
    if rcond is not None:
        rcond = check_nonnegative_real(rcond, "rcond")
    check_size((t.shape[1], s.shape[1]), "the fitted matrix (target.shape[1], source.shape[1])")
    m_t = np.linalg.lstsq(s, t, rcond=rcond)[0]
    if not np.all(np.isfinite(m_t)):
        raise ValueError("source and target are too large or too badly scaled: the fit overflows float64")
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
    ``layout="interleaved"`` and ``(i, i + d/2)`` for ``layout="half"`` (or its synonym ``"split"``).

    ``pe`` a non-empty, finite, 2-D real array-like (integers promoted to float64; bools and
    complex numbers refused) with at most 2**14 columns (the ``d x d`` result); ``offset``
    an ``int`` (bools refused); ``rcond`` as :func:`fit_linear_map`. Raises ``TypeError``
    for a non-integer ``offset``; ``ValueError`` for a table that is not 2-D, an odd width
    with ``structure="block"``, ``|offset| >= L``, or an unknown ``structure``/``layout``.
    """
    pe = as_real_array(pe, "pe", ndim=2)
    offset = check_int(offset, "offset")
    structure = check_choice(structure, "structure", STRUCTURES)
    layout = check_layout(layout)
    check_size((pe.shape[1], pe.shape[1]), "the fitted matrix (pe.shape[1], pe.shape[1])")
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
    array of length ``d/2``. ``m``: a finite 2-D real array-like (integers promoted to
    float64; bools and complex numbers refused). Raises ``ValueError`` unless ``m`` is
    square with even, positive size.
    """
    m = as_real_array(m, "m", ndim=2)
    if m.shape[0] != m.shape[1]:
        raise ValueError(f"m must be square, got shape {m.shape}")
    layout = check_layout(layout)
    d = check_even_int(m.shape[0], "m.shape[0]")
    i = np.arange(d // 2)
    a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
    return np.arctan2(m[a, b], m[a, a])
