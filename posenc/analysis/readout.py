r"""Reading position back out of an encoding: a linear readout fitted by gradient descent.

Chapter 8 asks how much of a position a linear map can recover from an encoding table
(learned or sinusoidal): :class:`PositionReadout` holds the fitted map and
:func:`fit_position_readout` fits it on the training positions.
"""

from __future__ import annotations

import numpy as np

from .._arrays import as_real_array, check_finite_result
from .._validation import (
    check_bool,
    check_finite_real,
    check_length,
    check_nonnegative_real,
    check_positive_int,
    check_positive_real,
    check_seed,
    check_size,
)
from ..learned import MAX_STEPS, LearnedPositionalEncoding

# fit_position_readout: steps * (batch_size * train_len * d_model + STEP_COST), in multiply-adds
# of about 30-100 ns each; STEP_COST is a step's fixed cost (about 30 us of numpy calls), so
# a million tiny steps count too. At the limit, some seconds (2**30 without it: minutes).
STEP_COST = 2**10
MAX_WORK = 2**28
MAX_WORK_TEXT = "2**28"
# Largest |target|: the loss sums squared errors of about this size over a batch.
MAX_TARGET = 1e150


class PositionReadout:
    r"""A linear readout :math:`\hat y = Y w + c` fitted by :func:`fit_position_readout`.

    Attributes: ``weight`` (float64, shape ``(d_model,)``), ``bias`` (a float) and
    ``losses``, the training loss before each gradient step (float64, shape ``(steps,)``).
    The constructor takes array-likes: ``weight`` a non-empty 1-D array of finite real
    numbers, ``bias`` a finite real number, ``losses`` a 1-D array of finite numbers
    (possibly empty); else ``TypeError``/``ValueError`` naming the argument.
    """

    def __init__(self, weight: np.ndarray, bias: float, losses: np.ndarray) -> None:
        self.weight = as_real_array(weight, "weight", ndim=1)
        self.bias = check_finite_real(bias, "bias")
        self.losses = as_real_array(losses, "losses", ndim=1, nonempty=False)

    def predict(self, Y: np.ndarray) -> np.ndarray:
        """Return ``Y @ weight + bias`` (float64) for ``Y`` of shape ``(..., d_model)``.

        ``Y``: a non-empty array-like of finite real numbers, at least 1-D; raises
        ``TypeError``/``ValueError`` naming ``Y`` (also when the result exceeds the float64
        range).
        """
        Y = as_real_array(Y, "Y", min_ndim=1)
        if Y.shape[-1] != self.weight.shape[0]:
            raise ValueError(f"Y must have last dimension {self.weight.shape[0]}, got shape {Y.shape}")
        with np.errstate(over="ignore", invalid="ignore"):
            out = Y @ self.weight + self.bias
        return check_finite_result(out, "Y @ weight + bias exceeds the float64 range (about 1.8e308)")


def fit_position_readout(
    pe: LearnedPositionalEncoding,
    target: np.ndarray,
    *,
    train_len: int,
    steps: int = 1000,
    lr: float = 0.05,
    batch_size: int = 8,
    content_std: float = 0.1,
    train_embedding: bool = True,
    seed: int = 0,
) -> PositionReadout:
    r"""Train ``pe`` and a linear readout so that the readout recovers ``target[p]`` at position ``p``.

    Every step draws a batch of content vectors :math:`X_{b,p} \sim \mathcal{N}(0,
    \sigma^2 I)` (``sigma = content_std``) of shape ``(batch_size, train_len, d_model)``,
    forms :math:`Y = X + E_{:L}` with ``pe.forward``, predicts
    :math:`\hat y_{b,p} = Y_{b,p} \cdot w + c` and takes one gradient-descent step with
    step size ``lr`` on

    .. math:: \mathcal{L} = \frac{1}{2BL} \sum_{b=1}^{B} \sum_{p=0}^{L-1}
              (\hat y_{b,p} - t_p)^2 , \qquad L = \texttt{train\_len}.

    With :math:`N = BL` the gradients are :math:`\partial\mathcal{L}/\partial w =
    \frac1N \sum_{b,p} r_{b,p} Y_{b,p}`, :math:`\partial\mathcal{L}/\partial c =
    \frac1N \sum_{b,p} r_{b,p}` and :math:`\partial\mathcal{L}/\partial Y_{b,p} =
    \frac1N r_{b,p} w` with residual
    :math:`r = \hat y - t`; the last one goes through ``pe.backward``, and
    ``pe.embedding`` is updated in place by ``-lr * pe.grad_embedding`` (skipped when
    ``train_embedding`` is false). Rows ``p >= train_len`` therefore never change.
    ``w`` starts at :math:`\mathcal{N}(0, I/d)` and ``c`` at 0, drawn from
    ``numpy.random.default_rng(seed)`` like the content. Returns a :class:`PositionReadout`.

    Accepted input: ``pe`` a :class:`~posenc.learned.LearnedPositionalEncoding`; ``target`` a 1-D
    array-like of finite real numbers (magnitude at most 1e150) with at least ``train_len``
    entries; ``train_len`` an integer in ``[1, pe.max_len]``; ``steps`` an integer in ``[1, 10**6]``;
    ``batch_size`` a positive integer; ``lr`` a finite real number ``> 0``;
    ``content_std`` finite and ``>= 0``; ``train_embedding`` a bool; ``seed`` a
    non-negative integer; and ``steps * (batch_size * train_len * d_model + 1024) <= 2**28``
    (1024 for a step's fixed cost; refused at once, not after minutes). Bad input raises
    ``TypeError``/``ValueError`` naming the argument; a run whose loss or parameters leave
    the float64 range raises ``ValueError`` naming ``lr`` before ``pe`` is changed by that
    step.
    """
    if not isinstance(pe, LearnedPositionalEncoding):
        raise TypeError(f"pe must be a LearnedPositionalEncoding, got {type(pe).__name__}")
    train_len = check_positive_int(train_len, "train_len")
    if train_len > pe.max_len:
        raise ValueError(f"train_len must be at most pe.max_len={pe.max_len}, got {train_len}")
    target = as_real_array(target, "target", ndim=1)
    if target.shape[0] < train_len:
        raise ValueError(f"target must have at least train_len={train_len} entries, got {target.shape[0]}")
    largest = float(np.abs(target[:train_len]).max())
    if largest > MAX_TARGET:
        raise ValueError(
            f"target must have magnitude at most {MAX_TARGET:g} (the loss sums squares of errors of that "
            f"size), got {largest!r}"
        )
    steps = check_positive_int(steps, "steps", MAX_STEPS, "10**6")
    batch_size = check_length(batch_size, "batch_size")
    lr = check_positive_real(lr, "lr")
    content_std = check_nonnegative_real(content_std, "content_std")
    train_embedding = check_bool(train_embedding, "train_embedding")
    seed = check_seed(seed)
    d = pe.d_model
    check_size((batch_size, train_len, d), "a batch (batch_size, train_len, pe.d_model)")
    work = steps * (batch_size * train_len * d + STEP_COST)
    if work > MAX_WORK:
        raise ValueError(
            f"steps * (batch_size * train_len * d_model + {STEP_COST}) = {work} exceeds the limit "
            f"{MAX_WORK_TEXT} (tens of seconds or more of computation): reduce steps or batch_size"
        )

    rng = np.random.default_rng(seed)
    w = rng.normal(0.0, 1.0 / np.sqrt(d), size=d)
    c = 0.0
    t = target[:train_len]
    n = batch_size * train_len
    losses = np.empty(steps)
    for step in range(steps):
        X = rng.normal(0.0, content_std, size=(batch_size, train_len, d))
        with np.errstate(over="ignore", invalid="ignore"):
            Y = X + pe.embedding[:train_len]
            r = Y @ w + c - t
            losses[step] = 0.5 * np.sum(r**2) / n
            grad_w = np.einsum("bp,bpd->d", r, Y) / n
            grad_c = float(np.sum(r)) / n
            grad_e = (r[:, :, None] * w[None, None, :] / n).sum(axis=0)
            new_w = w - lr * grad_w
            new_c = c - lr * grad_c
            new_e = pe.embedding[:train_len] - lr * grad_e if train_embedding else None
        finite = np.isfinite(losses[step]) and np.isfinite(new_w).all() and np.isfinite(new_c)
        if not finite or (new_e is not None and not np.isfinite(new_e).all()):
            raise ValueError(
                f"training diverged at step {step} (a loss or parameter beyond the float64 range): "
                f"lower lr (got {lr}) or content_std (got {content_std})"
            )
        # The model's forward pass, through its public API: it returns Y again (finite here, as
        # the loss is) and records X's shape for pe.backward.
        pe.forward(X)
        if train_embedding:
            pe.backward(r[:, :, None] * w[None, None, :] / n)
            pe.embedding -= lr * pe.grad_embedding
        w, c = new_w, new_c
    return PositionReadout(w, c, losses)
