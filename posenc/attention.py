r"""Scaled dot-product attention, the operation positional encodings exist for.

.. math:: \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + B\right) V

with an optional additive bias :math:`B` (relative-position biases, ALiBi) and an
optional causal mask. With neither, attention is permutation equivariant: permuting the
rows of :math:`Q, K, V` together permutes the rows of the output the same way.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_array


def softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    r"""Numerically stable softmax :math:`e^{s_j - \max s} / \sum_k e^{s_k - \max s}`.

    Entries equal to ``-inf`` get weight 0. A slice that is entirely ``-inf`` has no
    defined softmax and raises ``ValueError``.
    """
    scores = check_array(scores, "scores")
    top = np.max(scores, axis=axis, keepdims=True)
    if np.any(np.isneginf(top)):
        raise ValueError("softmax over a slice whose entries are all -inf (every key masked)")
    if np.any(np.isnan(scores)) or np.any(np.isposinf(scores)):
        raise ValueError("scores must not contain NaN or +inf")
    e = np.exp(scores - top)
    return e / np.sum(e, axis=axis, keepdims=True)


def causal_mask(q_len: int, k_len: int | None = None) -> np.ndarray:
    """Boolean ``(q_len, k_len)`` mask, ``True`` where query ``i`` may see key ``j``.

    Queries are the last ``q_len`` of ``k_len`` positions (as when decoding with a cache),
    so query ``i`` sits at absolute position ``i + k_len - q_len`` and sees keys up to it.
    """
    k_len = q_len if k_len is None else k_len
    if q_len <= 0 or k_len <= 0 or q_len > k_len:
        raise ValueError(f"need 0 < q_len <= k_len, got q_len={q_len}, k_len={k_len}")
    i_abs = np.arange(q_len)[:, None] + (k_len - q_len)
    return np.arange(k_len)[None, :] <= i_abs


def attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    bias: np.ndarray | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Scaled dot-product attention; returns ``(output, weights)``.

    Shapes: ``q`` is ``(..., Lq, d)``, ``k`` is ``(..., Lk, d)``, ``v`` is
    ``(..., Lk, dv)``; ``bias`` broadcasts to ``(..., Lq, Lk)``. The scores are
    :math:`QK^\top \cdot \mathrm{scale} + B` with ``scale = 1/sqrt(d)`` by default; with
    ``causal=True`` query ``i`` (the last ``Lq`` of ``Lk`` positions) cannot see keys after
    it. ``weights`` has shape ``(..., Lq, Lk)`` and its rows sum to 1; ``output`` is
    ``weights @ v`` with shape ``(..., Lq, dv)``.
    """
    q = check_array(q, "q", min_ndim=2)
    k = check_array(k, "k", min_ndim=2)
    v = check_array(v, "v", min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share their last dimension, got {q.shape} and {k.shape}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of positions, got {k.shape} and {v.shape}")
    d = q.shape[-1]
    if scale is None:
        scale = 1.0 / np.sqrt(d)
    elif not np.isfinite(scale):
        raise ValueError(f"scale must be finite, got {scale}")
    scores = (q @ np.swapaxes(k, -1, -2)) * scale
    if bias is not None:
        bias = check_array(bias, "bias")
        try:
            scores = scores + bias
        except ValueError as exc:
            raise ValueError(f"bias of shape {bias.shape} does not broadcast to scores {scores.shape}") from exc
    if causal:
        mask = causal_mask(q.shape[-2], k.shape[-2])
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ v, weights
