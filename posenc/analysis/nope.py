r"""Position without an encoding: a random attention stack and a linear probe of its states.

Chapter 15 asks whether the hidden states of an attention stack *without* positional
encoding (NoPE) carry the position of each token. :func:`random_attention_stack` runs
``n_layers`` single-head attention layers with random weights on inputs ``x`` of shape
``(..., L, d)``; layer :math:`l` maps the states :math:`H` to

.. math:: H' = \mathrm{LN}\big(H + \mathrm{softmax}(Q K^\top/\sqrt d + M)\, V\big),
          \qquad Q = H W_Q,\ K = H W_K,\ V = H W_V,

with :math:`W_\bullet` drawn i.i.d. from :math:`\mathcal N(0, g^2/d)` (``gain`` :math:`g`),
:math:`M` the causal mask (or nothing), and :math:`\mathrm{LN}` the layer norm without
learned parameters (each token's vector centred and divided by its standard deviation).
In the layers listed in ``rope_layers`` the queries and keys are turned by RoPE
(:func:`~posenc.rope.apply_rope`, positions ``0..L-1``) before the scores: a mixed stack.

:func:`fit_linear_probe` fits :math:`\hat y = F w + c` by least squares (with an optional
ridge penalty on :math:`w`): a linear stand-in for the probes with which Haviv et al.
(2022) read positions out of the hidden states of language models trained without
positional encoding.
"""

from __future__ import annotations

import math

import numpy as np

from .._arrays import as_real_array
from .._validation import (
    check_bool,
    check_nonnegative_real,
    check_positive_int,
    check_seed,
    check_size,
    is_int,
)
from ..attention import attention
from ..rope import apply_rope
from .readout import PositionReadout

MAX_LAYERS = 1024
MAX_STACK_SCORES = 2**27  # n_layers * tokens * L in random_attention_stack
MAX_STACK_PRODUCTS = 2**31  # n_layers * tokens * d * d in random_attention_stack
MAX_LSTSQ_WORK = 2**31  # rows * d * min(rows, d) of the least-squares solve in fit_linear_probe


def random_attention_stack(
    x: object,
    n_layers: int,
    *,
    causal: bool = True,
    rope_layers: object = (),
    gain: float = 1.0,
    seed: int = 0,
) -> np.ndarray:
    r"""Hidden states of ``n_layers`` random single-head attention layers, float64.

    Returns an array of shape ``(n_layers + 1, *x.shape)``: entry 0 is ``x`` itself, entry
    :math:`l` the states after layer :math:`l` (residual connection, then layer norm, as
    in the module docstring). The weights of layer :math:`l` are the :math:`l`-th draw of
    three ``(d, d)`` matrices from ``numpy.random.default_rng(seed)``, the same for every
    sequence of the batch.

    ``x``: a real array-like of shape ``(..., L, d)`` with ``d >= 2`` and even when
    ``rope_layers`` is not empty; ``n_layers``: an integer in ``[1, 1024]``; ``causal``: a
    bool; ``rope_layers``: an iterable of distinct layer indices in ``[0, n_layers)``
    (0-based); ``gain``: a finite real ``>= 0``; ``seed``: a non-negative integer. The work
    is bounded: ``n_layers * tokens * L`` scores at most 2**27 and ``n_layers * tokens * d**2``
    multiply-adds at most 2**31 (``tokens`` the rows of ``x``, ``x.size / d``; a few seconds
    at the limits). Bad input raises ``TypeError``/``ValueError`` naming the argument.
    """
    x = as_real_array(x, "x", min_ndim=2)
    d = x.shape[-1]
    if d < 2:
        raise ValueError(f"x must have a last dimension d >= 2, got shape {x.shape}")
    n_layers = check_positive_int(n_layers, "n_layers", MAX_LAYERS, "1024")
    causal = check_bool(causal, "causal")
    gain = check_nonnegative_real(gain, "gain")
    seed = check_seed(seed)
    layers = _layer_indices(rope_layers, n_layers)
    if layers and d % 2:
        raise ValueError(f"RoPE layers need an even width d, got d = {d}")
    check_size((n_layers + 1, *x.shape), "the hidden states (n_layers + 1, *x.shape)")
    check_size((*x.shape[:-1], x.shape[-2]), "the attention weights (..., L, L)")
    rows = x.size // d  # tokens in the batch
    scores, products = n_layers * rows * x.shape[-2], n_layers * rows * d * d
    if scores > MAX_STACK_SCORES or products > MAX_STACK_PRODUCTS:
        raise ValueError(
            f"x of shape {x.shape} with n_layers={n_layers} is too much work: {scores} attention scores "
            f"(n_layers * tokens * L, at most 2**27) and {products} multiply-adds in the projections "
            f"(n_layers * tokens * d * d, at most 2**31)"
        )
    rng = np.random.default_rng(seed)
    states = np.empty((n_layers + 1, *x.shape))
    states[0] = h = x
    for layer in range(n_layers):
        with np.errstate(over="ignore", invalid="ignore"):
            w_q, w_k, w_v = gain * rng.standard_normal((3, d, d)) / np.sqrt(d)
            q, k, v = h @ w_q, h @ w_k, h @ w_v
        if not all(np.isfinite(a).all() for a in (q, k, v)):
            raise ValueError(
                f"the queries, keys or values of layer {layer} overflow float64: x or gain is too large "
                f"(largest |x| {float(np.abs(x).max()):.3g}, gain {gain:g})"
            )
        if layer in layers:
            q, k = apply_rope(q), apply_rope(k)
        out, _ = attention(q, k, v, causal=bool(causal))
        h = h + out
        centred = h - h.mean(axis=-1, keepdims=True)
        h = centred / np.sqrt(np.mean(centred**2, axis=-1, keepdims=True) + 1e-12)
        states[layer + 1] = h
    return states


def _layer_indices(rope_layers: object, n_layers: int) -> frozenset[int]:
    if isinstance(rope_layers, (str, bytes)) or not hasattr(rope_layers, "__iter__"):
        raise TypeError(f"rope_layers must be an iterable of layer indices, got {type(rope_layers).__name__}")
    out = []
    for value in rope_layers:
        if not is_int(value):
            raise TypeError(f"rope_layers must hold integer layer indices, got {value!r}")
        if not 0 <= int(value) < n_layers:
            raise ValueError(f"rope_layers entries must be in [0, n_layers={n_layers}), got {int(value)}")
        out.append(int(value))
    if len(set(out)) != len(out):
        raise ValueError(f"rope_layers must not repeat a layer, got {out}")
    return frozenset(out)


def fit_linear_probe(features: object, targets: object, *, ridge: float = 0.0) -> PositionReadout:
    r"""Least-squares linear probe :math:`\hat y = F w + c`, as a :class:`~.readout.PositionReadout`.

    Minimises :math:`\lVert F w + c\mathbf 1 - y\rVert^2 + \lambda \lVert w\rVert^2`
    (``ridge`` :math:`\lambda`; the intercept :math:`c` is not penalised) by solving the
    normal equations of the centred problem with ``numpy.linalg.lstsq``:
    :math:`w = \arg\min \lVert \tilde F w - \tilde y\rVert^2 + \lambda\lVert w\rVert^2`,
    :math:`c = \bar y - \bar F w`. The result's ``losses`` is empty (no iterations).

    ``features``: a real ``(N, d)`` array-like; ``targets``: real, shape ``(N,)``;
    ``ridge``: a finite real ``>= 0``. ``N >= 2``; the solve's work
    ``rows * d * min(rows, d)`` (``rows = N``, or ``N + d`` with a ridge) at most 2**31.
    Errors name the argument.
    """
    F = as_real_array(features, "features", ndim=2)
    y = as_real_array(targets, "targets", ndim=1)
    if y.shape[0] != F.shape[0]:
        raise ValueError(f"targets must have one entry per row of features ({F.shape[0]}), got {y.shape[0]}")
    if F.shape[0] < 2:
        raise ValueError(f"features must have at least 2 rows, got {F.shape[0]}")
    ridge = check_nonnegative_real(ridge, "ridge")
    rows, d = F.shape[0] + (F.shape[1] if ridge > 0 else 0), F.shape[1]
    if rows * d * min(rows, d) > MAX_LSTSQ_WORK:
        raise ValueError(
            f"features of shape {F.shape} are too large for the least-squares solve: {rows} rows "
            f"(N{' + d with ridge' if ridge > 0 else ''}) * d * min(rows, d) = {rows * d * min(rows, d)} "
            f"exceeds 2**31 (a few seconds)"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        f_mean, y_mean = F.mean(axis=0), float(y.mean())
        Fc, yc = F - f_mean, y - y_mean
    if not (np.isfinite(Fc).all() and np.isfinite(f_mean).all()):
        raise ValueError("features: the column means or the centred features exceed float64 (rescale them)")
    if not (np.isfinite(yc).all() and math.isfinite(y_mean)):
        raise ValueError("targets: the mean or the centred targets exceed float64 (rescale them)")
    if ridge > 0:
        Fc = np.vstack([Fc, np.sqrt(ridge) * np.eye(d)])
        yc = np.concatenate([yc, np.zeros(d)])
    with np.errstate(over="ignore", invalid="ignore"):
        try:
            w = np.linalg.lstsq(Fc, yc, rcond=None)[0]
        except np.linalg.LinAlgError as exc:  # e.g. entries near the float64 limit
            raise ValueError(f"features: the least-squares solve failed ({exc}); rescale them") from None
        c = y_mean - float(f_mean @ w)
    if not (np.isfinite(w).all() and np.isfinite(c)):
        raise ValueError(
            "the least-squares weights overflow float64: targets are far larger than the spread of "
            "features can fit (rescale features or targets)"
        )
    return PositionReadout(w, c, np.empty(0))


__all__ = ["fit_linear_probe", "random_attention_stack"]
