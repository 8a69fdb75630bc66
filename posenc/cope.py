r"""Contextual positions (CoPE): a position is a running count of gates.

CoPE (Golovneva, Wang, Weston and Sukhbaatar 2024, "Contextual Position Encoding:
Learning to Count What's Important") replaces the token distance :math:`i - j` between
a query at :math:`i` and a key at :math:`j` by a *count*: each key :math:`t` between the
two gets a gate :math:`g_{it} \in [0, 1]` (in the paper the sigmoid of the query-key
score), and the position of key :math:`j` seen from query :math:`i` is

.. math:: p_{ij} = \sum_{t=j}^{i} g_{it} \qquad (j \le i),

the number of keys from :math:`j` to :math:`i` that the gates count. With every gate 1
this is the token distance plus one, :math:`p_{ij} = i - j + 1`; with a gate that is 1 on
sentence ends and 0 elsewhere it counts sentences (:func:`cope_positions`).
"""

from __future__ import annotations

import numpy as np

from ._arrays import as_real_array
from ._validation import check_size

__all__ = ["cope_positions"]


def cope_positions(gates: object) -> np.ndarray:
    r"""CoPE positions :math:`p_{ij} = \sum_{t=j}^{i} g_{it}`, float64, the shape of ``gates``.

    ``gates`` has shape ``(..., L, L)``: entry ``[..., i, t]`` is the gate
    :math:`g_{it}` of key :math:`t` for query :math:`i` (leading axes for batch and heads).
    Only the causal part :math:`t \le i` is used; the gates above the diagonal are ignored,
    as a causal mask zeroes them in the paper's implementation before the sum. Entry
    ``[..., i, j]`` of the result is the sum of the gates of keys :math:`j, j+1, \dots, i`
    (a reversed cumulative sum along the last axis); for :math:`j > i` it is the empty sum
    0.0. The paper then reads a position embedding at the fractional position
    :math:`p_{ij}` by interpolating between its two neighbouring integers; that step is not
    part of this function.

    With all gates 1, :math:`p_{ij} = i - j + 1` for :math:`j \le i`: token positions are
    the special case of constant gates.

    ``gates``: a real array-like with at least 2 dimensions whose last two are equal
    (``L >= 1``), every value finite and in :math:`[0, 1]` (a sigmoid's range, hard 0/1
    gates included); at most 2**28 entries. Other input raises ``TypeError`` or
    ``ValueError`` naming ``gates``.
    """
    g = as_real_array(gates, "gates", min_ndim=2)
    if g.shape[-1] != g.shape[-2]:
        raise ValueError(f"gates must have shape (..., L, L) (one gate per query i and key t), got {g.shape}")
    check_size(g.shape, "gates")
    low, high = float(g.min()), float(g.max())
    if low < 0.0 or high > 1.0:
        raise ValueError(f"gates must lie in [0, 1] (a sigmoid's range), got values in [{low!r}, {high!r}]")
    n = g.shape[-1]
    causal = np.tril(np.ones((n, n), dtype=bool))
    masked = np.where(causal, g, 0.0)
    # reversed cumulative sum: p[i, j] = sum_{t >= j} masked[i, t] = sum_{t=j}^{i} g[i, t]
    return np.flip(np.cumsum(np.flip(masked, axis=-1), axis=-1), axis=-1) + 0.0
