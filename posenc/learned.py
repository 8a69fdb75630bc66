r"""Learned absolute positional embeddings (as in BERT and GPT-2).

A trainable table :math:`E \in \mathbb{R}^{L_{max} \times d}`. The forward pass adds its
first :math:`L` rows to every sequence of a batch, :math:`Y_b = X_b + E_{:L}`. Because
the same rows are used by all :math:`B` sequences, the chain rule sums their gradients:

.. math:: \frac{\partial \mathcal{L}}{\partial E_{p}} = \sum_{b=1}^{B}
          \frac{\partial \mathcal{L}}{\partial Y_{b,p}} \quad (p < L), \qquad
          \frac{\partial \mathcal{L}}{\partial E_{p}} = 0 \quad (p \ge L),

and :math:`\partial \mathcal{L} / \partial X = \partial \mathcal{L} / \partial Y`.
There is no row for a position :math:`\ge L_{max}`: such input is rejected.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._validation import (
    check_array,
    check_even_int,
    check_finite_real,
    check_positive_int,
    check_positive_real,
)
from .sinusoidal import sinusoidal_encoding

INITS = ("normal", "sinusoidal")


class LearnedPositionalEncoding:
    """Trainable position table with forward and backward passes.

    Parameters
    ----------
    max_len, d_model
        Table shape. ``d_model`` must be even only for ``init="sinusoidal"``.
    seed
        Seed of the ``numpy.random.default_rng`` that draws the initial table.
    init
        ``"normal"``: entries drawn from :math:`\\mathcal{N}(0, \\mathrm{std}^2)`;
        ``"sinusoidal"``: the sinusoidal table (then trained like any other).
    std
        Standard deviation of the normal initialisation. The default 0.02 is BERT's
        ``initializer_range`` (BERT draws from a truncated normal); OpenAI's released
        GPT-2 code initialises its position table with standard deviation 0.01.
    """

    def __init__(
        self, max_len: int, d_model: int, *, seed: int = 0, init: str = "normal", std: float = 0.02
    ) -> None:
        self.max_len = check_positive_int(max_len, "max_len")
        self.d_model = check_positive_int(d_model, "d_model")
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {init!r}")
        if init == "sinusoidal":
            check_even_int(d_model, "d_model")
            self.embedding = sinusoidal_encoding(self.max_len, self.d_model)
        else:
            std = check_positive_real(std, "std")
            rng = np.random.default_rng(seed)
            self.embedding = rng.normal(0.0, std, size=(self.max_len, self.d_model))
        self.grad_embedding = np.zeros_like(self.embedding)
        self._last_shape: tuple[int, ...] | None = None

    @property
    def num_parameters(self) -> int:
        """Number of trainable scalars, ``max_len * d_model``."""
        return self.embedding.size

    def forward(self, X: np.ndarray) -> np.ndarray:
        """Return ``X + embedding[:L]`` for ``X`` of shape ``(B, L, d_model)``.

        Raises ``ValueError`` when ``L > max_len``: the table has no row for those positions.
        """
        X = check_array(X, "X", ndim=3)
        if X.shape[-1] != self.d_model:
            raise ValueError(f"X must have last dimension d_model={self.d_model}, got shape {X.shape}")
        length = X.shape[1]
        if length > self.max_len:
            raise ValueError(
                f"sequence length {length} exceeds max_len={self.max_len}: a learned table has no "
                "embedding for positions it was not given"
            )
        self._last_shape = X.shape
        return X + self.embedding[:length]

    __call__ = forward

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        """Gradient with respect to ``X``; sets ``grad_embedding`` (recomputed, not accumulated).

        ``grad_embedding[:L]`` is the batch sum of ``grad_output`` and rows ``L:`` are zero.
        """
        if self._last_shape is None:
            raise RuntimeError("backward called before forward")
        grad_output = check_array(grad_output, "grad_output", ndim=3)
        if grad_output.shape != self._last_shape:
            raise ValueError(
                f"grad_output must have the shape of the last forward output {self._last_shape}, "
                f"got {grad_output.shape}"
            )
        length = grad_output.shape[1]
        self.grad_embedding = np.zeros_like(self.embedding)
        self.grad_embedding[:length] = grad_output.sum(axis=0)
        return np.array(grad_output, dtype=np.float64, copy=True)


class PositionReadout:
    r"""A linear readout :math:`\hat y = Y w + c` fitted by :func:`fit_position_readout`.

    Attributes: ``weight`` (shape ``(d_model,)``), ``bias`` (a float) and ``losses``, the
    training loss before each gradient step (shape ``(steps,)``).
    """

    def __init__(self, weight: np.ndarray, bias: float, losses: np.ndarray) -> None:
        self.weight = weight
        self.bias = float(bias)
        self.losses = losses

    def predict(self, Y: np.ndarray) -> np.ndarray:
        """Return ``Y @ weight + bias`` for ``Y`` of shape ``(..., d_model)``."""
        Y = check_array(Y, "Y", min_ndim=1)
        if Y.shape[-1] != self.weight.shape[0]:
            raise ValueError(f"Y must have last dimension {self.weight.shape[0]}, got shape {Y.shape}")
        return Y @ self.weight + self.bias


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
    """
    if not isinstance(pe, LearnedPositionalEncoding):
        raise TypeError(f"pe must be a LearnedPositionalEncoding, got {type(pe).__name__}")
    train_len = check_positive_int(train_len, "train_len")
    if train_len > pe.max_len:
        raise ValueError(f"train_len must be at most pe.max_len={pe.max_len}, got {train_len}")
    target = check_array(target, "target", ndim=1).astype(np.float64)
    if target.shape[0] < train_len:
        raise ValueError(f"target must have at least train_len={train_len} entries, got {target.shape[0]}")
    if not np.all(np.isfinite(target)):
        raise ValueError("target must be finite, got NaN or infinity")
    steps = check_positive_int(steps, "steps")
    batch_size = check_positive_int(batch_size, "batch_size")
    lr = check_positive_real(lr, "lr")
    content_std = check_finite_real(content_std, "content_std")
    if content_std < 0:
        raise ValueError(f"content_std must be non-negative, got {content_std}")
    if not isinstance(train_embedding, (bool, np.bool_)):
        raise TypeError(f"train_embedding must be a bool, got {train_embedding!r}")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an integer, got {seed!r}")

    rng = np.random.default_rng(seed)
    d = pe.d_model
    w = rng.normal(0.0, 1.0 / np.sqrt(d), size=d)
    c = 0.0
    t = target[:train_len]
    n = batch_size * train_len
    losses = np.empty(steps)
    for step in range(steps):
        X = rng.normal(0.0, content_std, size=(batch_size, train_len, d))
        Y = pe.forward(X)
        r = Y @ w + c - t
        losses[step] = 0.5 * np.sum(r**2) / n
        grad_w = np.einsum("bp,bpd->d", r, Y) / n
        grad_c = float(np.sum(r)) / n
        if train_embedding:
            pe.backward(r[:, :, None] * w[None, None, :] / n)
            pe.embedding -= lr * pe.grad_embedding
        w = w - lr * grad_w
        c = c - lr * grad_c
    return PositionReadout(w, c, losses)
