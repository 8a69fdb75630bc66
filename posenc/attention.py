r"""Scaled dot-product attention, the operation positional encodings exist for.

.. math:: \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + B\right) V

with an optional additive bias :math:`B` (relative-position biases, ALiBi) and an
optional causal mask. With neither, attention is permutation equivariant: permuting the
rows of :math:`Q, K, V` together permutes the rows of the output the same way.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._validation import check_array, check_positive_real


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
    for name, value in (("q_len", q_len), ("k_len", k_len)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
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
            raise ValueError(
                f"bias of shape {bias.shape} does not broadcast to scores {scores.shape}"
            ) from exc
    if causal:
        mask = causal_mask(q.shape[-2], k.shape[-2])
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ v, weights


def permutation_matrix(perm: object) -> np.ndarray:
    r"""The permutation matrix :math:`P` with :math:`P_{i,\pi(i)} = 1`, as float64.

    ``perm`` is a permutation :math:`\pi` of ``0..L-1`` (a 1-D integer sequence). Then
    :math:`(PX)_i = X_{\pi(i)}`, i.e. ``P @ X`` equals ``X[perm]``, and
    :math:`P^\top P = P P^\top = I`.
    """
    arr = np.asarray(perm)
    if arr.dtype == object or arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"perm must be a 1-D sequence of integers, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"perm must be a non-empty 1-D sequence, got shape {arr.shape}")
    n = arr.size
    if not np.array_equal(np.sort(arr), np.arange(n)):
        raise ValueError(f"perm must be a permutation of 0..{n - 1}, got {arr.tolist()}")
    p = np.zeros((n, n), dtype=np.float64)
    p[np.arange(n), arr] = 1.0
    return p


def self_attention(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    *,
    bias: np.ndarray | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Single-head self-attention of the rows of ``x``; returns ``(output, weights)``.

    .. math:: \mathrm{Attention}(X) = \mathrm{softmax}\!\left(\frac{(XW_Q)(XW_K)^\top}{\sqrt{d_k}}\right) XW_V

    ``x`` is ``(..., L, d_model)``, ``w_q`` and ``w_k`` are ``(d_model, d_k)``, ``w_v`` is
    ``(d_model, d_v)``; ``bias``, ``causal`` and ``scale`` are passed to :func:`attention`.
    """
    x = check_array(x, "x", min_ndim=2)
    mats = {
        "w_q": check_array(w_q, "w_q", ndim=2),
        "w_k": check_array(w_k, "w_k", ndim=2),
        "w_v": check_array(w_v, "w_v", ndim=2),
    }
    for name, w in mats.items():
        if w.shape[0] != x.shape[-1]:
            raise ValueError(f"{name} must have {x.shape[-1]} rows (x's last dimension), got shape {w.shape}")
    if mats["w_q"].shape[1] != mats["w_k"].shape[1]:
        raise ValueError(f"w_q and w_k must have the same number of columns, got {w_q.shape} and {w_k.shape}")
    return attention(x @ mats["w_q"], x @ mats["w_k"], x @ mats["w_v"], bias=bias, causal=causal, scale=scale)


def taylor_terms(
    f: Callable[[np.ndarray], float], x: np.ndarray, p: np.ndarray, *, step: float = 1e-3
) -> dict[str, float]:
    r"""First- and second-order Taylor terms of :math:`f(X + P)` around :math:`X`, by central differences.

    ``x`` and ``p`` have shape ``(L, d)``; row :math:`m` of ``p`` is the vector
    :math:`p_m` added to token :math:`m`. With :math:`\nabla_m f` the gradient with respect
    to row :math:`m` and :math:`H_{mn}` the :math:`d\times d` block of the Hessian,

    .. math::
        f(X + P) = f(X) + \underbrace{\textstyle\sum_m p_m^\top \nabla_m f}_{\texttt{first}}
        + \underbrace{\tfrac12 \textstyle\sum_m p_m^\top H_{mm} p_m}_{\texttt{diagonal}}
        + \underbrace{\textstyle\sum_{m<n} p_m^\top H_{mn} p_n}_{\texttt{cross}} + O(\lVert P\rVert^3).

    The terms are directional derivatives: ``first`` :math:`= D_P f`, ``diagonal``
    :math:`= \tfrac12\sum_m D^2_{P^{(m)}} f` with :math:`P^{(m)}` the matrix that keeps only
    row :math:`m` of :math:`P`, and ``cross`` :math:`= \tfrac12 (D^2_P f - \sum_m D^2_{P^{(m)}} f)`.
    Each is computed with step ``step`` along the unit direction, so the truncation error
    is :math:`O(\mathrm{step}^2)` relative to the term. Also returns ``f0`` :math:`= f(X)`.
    """
    if not callable(f):
        raise TypeError(f"f must be a callable (L, d) array -> float, got {type(f).__name__}")
    x = check_array(x, "x", ndim=2).astype(np.float64)
    p = check_array(p, "p", ndim=2).astype(np.float64)
    if p.shape != x.shape:
        raise ValueError(f"p must have the shape of x {x.shape}, got {p.shape}")
    step = check_positive_real(step, "step")
    f0 = float(f(x))

    def d1_d2(direction: np.ndarray) -> tuple[float, float]:
        norm = float(np.linalg.norm(direction))
        if norm == 0.0:
            return 0.0, 0.0
        u = direction / norm
        plus, minus = float(f(x + step * u)), float(f(x - step * u))
        return norm * (plus - minus) / (2 * step), norm**2 * (plus - 2 * f0 + minus) / step**2

    first, full_second = d1_d2(p)
    diagonal_second = 0.0
    for m in range(x.shape[0]):
        only_m = np.zeros_like(p)
        only_m[m] = p[m]
        diagonal_second += d1_d2(only_m)[1]
    return {
        "f0": f0,
        "first": first,
        "diagonal": 0.5 * diagonal_second,
        "cross": 0.5 * (full_second - diagonal_second),
    }
