r"""Scaled dot-product attention, the operation positional encodings exist for.

.. math:: \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + B\right) V

with an optional additive bias :math:`B` (relative-position biases, ALiBi) and an
optional causal mask. With neither, attention is permutation equivariant: permuting the
rows of :math:`Q, K, V` together permutes the rows of the output the same way.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._arrays import as_array, as_real_array, is_integer_dtype, is_real_dtype
from ._validation import (
    check_bool,
    check_callable,
    check_finite_real,
    check_int,
    check_positive_real,
    check_query_key_lengths,
    check_size,
)

# Step range of taylor_terms: the second difference divides by step**2, so a step far
# outside it underflows or overflows before the rounding of f is even considered.
MIN_STEP = 2.0**-30
MAX_STEP = 2.0**30


def softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    r"""Numerically stable softmax :math:`e^{s_j - \max s} / \sum_k e^{s_k - \max s}` along ``axis``.

    ``scores``: a non-empty array-like (list, tuple or array) of at least one dimension,
    of an integer or floating dtype; entries are finite or ``-inf`` (weight 0). Integer,
    float16 and float32 input are promoted: the computation and the result are float64,
    relative error a few ulp per entry. ``axis``: an integer in ``[-ndim, ndim)``.

    Raises ``TypeError`` for bool, complex, string or object scores or a non-integer
    ``axis``; ``ValueError`` for an empty array, NaN or ``+inf`` entries, an
    out-of-range ``axis``, or a slice whose entries are all ``-inf`` (no defined softmax).
    """
    scores = as_real_array(scores, "scores", min_ndim=1, finite=False)
    axis = check_int(axis, "axis")
    if not -scores.ndim <= axis < scores.ndim:
        raise ValueError(
            f"axis must be in [-{scores.ndim}, {scores.ndim}) for scores of shape {scores.shape}, got {axis}"
        )
    if np.isnan(scores).any() or np.isposinf(scores).any():
        raise ValueError("scores must not contain NaN or +inf")
    top = np.max(scores, axis=axis, keepdims=True)
    if np.isneginf(top).any():
        raise ValueError(
            f"scores has a slice along axis {axis} whose entries are all -inf (every key masked): its "
            "softmax is undefined"
        )
    with np.errstate(over="ignore"):  # s - max below -1.8e308 is -inf: weight exactly 0
        e = np.exp(scores - top)
    return e / np.sum(e, axis=axis, keepdims=True)


def causal_mask(q_len: int, k_len: int | None = None) -> np.ndarray:
    """Boolean ``(q_len, k_len)`` mask, ``True`` where query ``i`` may see key ``j``.

    Queries are the last ``q_len`` of ``k_len`` positions (as when decoding with a cache),
    so query ``i`` sits at absolute position ``i + k_len - q_len`` and sees keys up to it.
    ``q_len`` and ``k_len`` are integers (not bools) with ``1 <= q_len <= k_len`` and
    ``q_len * k_len <= 2**28`` (the size of the mask); else ``TypeError``/``ValueError``.
    """
    q_len, k_len = check_query_key_lengths(q_len, k_len)
    check_size((q_len, k_len), "the mask (q_len, k_len)")
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
    r"""Scaled dot-product attention; returns ``(output, weights)``, both float64.

    Shapes: ``q`` is ``(..., Lq, d)``, ``k`` is ``(..., Lk, d)``, ``v`` is
    ``(..., Lk, dv)`` (leading dimensions broadcast); ``bias`` broadcasts to
    ``(..., Lq, Lk)``. The scores are :math:`QK^\top \cdot \mathrm{scale} + B` with
    ``scale = 1/sqrt(d)`` by default; with ``causal=True`` query ``i`` (the last ``Lq`` of
    ``Lk`` positions) cannot see keys after it. ``weights`` has shape ``(..., Lq, Lk)``
    and its rows sum to 1; ``output`` is ``weights @ v`` with shape ``(..., Lq, dv)``.

    Accepted input: ``q``, ``k``, ``v`` non-empty array-likes of finite real numbers
    (integer and float16/float32 input is promoted; everything is computed in float64);
    ``bias`` real, finite or ``-inf`` (a masked key); ``causal`` a bool (``bool`` or
    ``numpy.bool_``); ``scale`` ``None`` or a finite real number. The scores array may
    hold at most 2**28 entries. Raises ``TypeError`` (bool, complex, string input, a
    non-bool ``causal``) or ``ValueError`` (empty or non-finite input, shapes that do not
    match, scores ``q @ k^T`` (formed before ``scale`` is applied) or scaled scores beyond
    the float64 range, a query row with every key masked), each
    naming the argument.
    """
    q = as_real_array(q, "q", min_ndim=2)
    k = as_real_array(k, "k", min_ndim=2)
    v = as_real_array(v, "v", min_ndim=2)
    causal = check_bool(causal, "causal")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share their last dimension, got {q.shape} and {k.shape}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of positions, got {k.shape} and {v.shape}")
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            "the leading (batch) dimensions of q, k and v must broadcast, "
            f"got {q.shape}, {k.shape}, {v.shape}"
        ) from None
    d = q.shape[-1]
    scale = 1.0 / float(np.sqrt(d)) if scale is None else check_finite_real(scale, "scale")
    score_shape = (*batch, q.shape[-2], k.shape[-2])
    if bias is not None:
        bias = as_real_array(bias, "bias", finite=False)
        if np.isnan(bias).any() or np.isposinf(bias).any():
            raise ValueError("bias must not contain NaN or +inf (-inf masks a key)")
        try:
            score_shape = np.broadcast_shapes(score_shape, bias.shape)
        except ValueError:
            raise ValueError(
                f"bias of shape {bias.shape} does not broadcast to scores {score_shape}"
            ) from None
    if causal and q.shape[-2] > k.shape[-2]:
        raise ValueError(
            f"with causal=True the queries are the last of the keys' positions: q must not have more "
            f"positions than k, got q of shape {q.shape} and k of shape {k.shape}"
        )
    check_size(score_shape, "the attention scores of q and k (..., Lq, Lk)")
    check_size((*score_shape[:-1], v.shape[-1]), "the attention output of q and v (..., Lq, dv)")
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (q @ np.swapaxes(k, -1, -2)) * scale
    if not np.isfinite(scores).all():
        raise ValueError(
            "the scores q @ k^T * scale exceed the float64 range (about 1.8e308): scale q, k or scale down"
        )
    if bias is not None:
        with np.errstate(over="ignore"):
            scores = scores + bias
        if np.isposinf(scores).any():
            raise ValueError("scores + bias exceed the float64 range (about 1.8e308)")
    if causal:
        mask = causal_mask(q.shape[-2], k.shape[-2])
        scores = np.where(mask, scores, -np.inf)
    if np.isneginf(scores.max(axis=-1)).any():
        raise ValueError(
            "a query row has every key masked (bias -inf and/or causal): its softmax is undefined"
        )
    weights = softmax(scores, axis=-1)
    with np.errstate(over="ignore", invalid="ignore"):
        out = weights @ v
    if not np.isfinite(out).all():
        raise ValueError("weights @ v exceeds the float64 range (about 1.8e308): scale v down")
    return out, weights


def permutation_matrix(perm: object) -> np.ndarray:
    r"""The permutation matrix :math:`P` with :math:`P_{i,\pi(i)} = 1`, as float64.

    ``perm`` is a permutation :math:`\pi` of ``0..L-1``: a non-empty 1-D array-like of
    integers (not bools or floats), ``L <= 2**14`` so that the ``(L, L)`` result has at
    most 2**28 entries. Then :math:`(PX)_i = X_{\pi(i)}`, i.e. ``P @ X`` equals
    ``X[perm]``, and :math:`P^\top P = P P^\top = I`.
    """
    arr = as_array(perm, "perm")
    if arr.size == 0:  # [] has dtype float64: say what is wrong, not the dtype
        raise ValueError(f"perm must be a non-empty 1-D sequence, got shape {arr.shape}")
    if not is_integer_dtype(arr.dtype):  # bools, floats, objects, strings
        raise TypeError(f"perm must be a 1-D sequence of integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"perm must be a non-empty 1-D sequence, got shape {arr.shape}")
    n = arr.size
    check_size((n, n), "the permutation matrix (len(perm), len(perm))")
    if not np.array_equal(np.sort(arr), np.arange(n)):
        raise ValueError(f"perm must be a permutation of 0..{n - 1}, got {arr.tolist()[:20]}")
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
    r"""Single-head self-attention of the rows of ``x``; returns ``(output, weights)``, float64.

    .. math:: \mathrm{Attention}(X) = \mathrm{softmax}\!\left(\frac{(XW_Q)(XW_K)^\top}{\sqrt{d_k}}\right) XW_V

    ``x`` is ``(..., L, d_model)``, ``w_q`` and ``w_k`` are ``(d_model, d_k)``, ``w_v`` is
    ``(d_model, d_v)``: non-empty array-likes (lists, tuples, arrays) of finite real
    numbers, promoted to float64 before any product. ``bias``, ``causal`` and ``scale``
    are checked and used as in :func:`attention`. Errors name the argument (``x``,
    ``w_q``, ``w_k``, ``w_v``, ...), as in :func:`attention`.
    """
    x = as_real_array(x, "x", min_ndim=2)
    check_bool(causal, "causal")
    q = _project(x, w_q, "w_q")
    k = _project(x, w_k, "w_k")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"w_q and w_k must have the same number of columns, got {q.shape[-1]} and {k.shape[-1]}"
        )
    return attention(q, k, _project(x, w_v, "w_v"), bias=bias, causal=causal, scale=scale)


def _project(x: np.ndarray, w: object, name: str) -> np.ndarray:
    """``x @ w`` for a checked float64 ``x``; ``w`` must be a real ``(d_model, d)`` matrix."""
    w = as_real_array(w, name, ndim=2)
    if w.shape[0] != x.shape[-1]:
        raise ValueError(f"{name} must have {x.shape[-1]} rows (x's last dimension), got shape {w.shape}")
    check_size((*x.shape[:-1], w.shape[1]), f"x @ {name}")
    with np.errstate(over="ignore", invalid="ignore"):
        out = x @ w
    if not np.isfinite(out).all():
        raise ValueError(f"x @ {name} exceeds the float64 range (about 1.8e308): scale x or {name} down")
    return out


MAX_TAYLOR_WORK = 2**28  # L * L * d: entries of the 2L shifted copies of x that taylor_terms forms


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

    Accepted input: ``f`` a callable returning a finite real scalar; ``x`` and ``p``
    non-empty 2-D array-likes of finite real numbers of one shape (promoted to float64),
    with :math:`L^2 d \le 2^{28}` (the diagonal term calls ``f`` on :math:`2L` arrays of
    shape :math:`(L, d)`: up to about 2 s at the limit with an ``f`` that costs nothing);
    ``step`` a real number in ``[2**-30, 2**30]``. Raises ``TypeError``/``ValueError``
    naming ``f``, ``x``, ``p`` or ``step``, also when a term exceeds the float64 range.
    """
    check_callable(f, "f", "(L, d) array -> float")
    x = as_real_array(x, "x", ndim=2)
    p = as_real_array(p, "p", ndim=2)
    if p.shape != x.shape:
        raise ValueError(f"p must have the shape of x {x.shape}, got {p.shape}")
    rows, width = x.shape
    if rows * rows * width > MAX_TAYLOR_WORK:
        raise ValueError(
            f"x of shape {x.shape} is too large: the diagonal term evaluates f on {2 * rows} arrays of "
            f"shape {x.shape}, L*L*d = {rows * rows * width}, at most 2**28"
        )
    step = check_positive_real(step, "step")
    if not MIN_STEP <= step <= MAX_STEP:
        raise ValueError(f"step must be in [2**-30, 2**30] (the finite-difference range), got {step}")

    def call(arg: np.ndarray) -> float:
        value = f(arg)
        arr = np.asarray(value)
        if arr.ndim != 0 or not is_real_dtype(arr.dtype):
            raise TypeError(f"f must return a real scalar, got {value!r}")
        out = float(arr)
        if not np.isfinite(out):
            raise ValueError(f"f must return a finite value, got {out}")
        return out

    f0 = call(x)

    def d1_d2(direction: np.ndarray) -> tuple[float, float]:
        norm = float(np.linalg.norm(direction))
        if norm == 0.0:
            return 0.0, 0.0
        u = direction / norm
        plus, minus = call(x + step * u), call(x - step * u)
        return norm * (plus - minus) / (2 * step), norm**2 * (plus - 2 * f0 + minus) / step**2

    with np.errstate(over="ignore", invalid="ignore"):
        first, full_second = d1_d2(p)
        diagonal_second = 0.0
        only_m = np.zeros_like(p)
        for m in range(x.shape[0]):
            only_m[m] = p[m]
            diagonal_second += d1_d2(only_m)[1]
            only_m[m] = 0.0
    terms = {
        "f0": f0,
        "first": first,
        "diagonal": 0.5 * diagonal_second,
        "cross": 0.5 * (full_second - diagonal_second),
    }
    if not all(np.isfinite(v) for v in terms.values()):
        raise ValueError("the Taylor terms exceed the float64 range: scale p (or f) down")
    return terms
