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

import numpy as np

from ._validation import check_array, check_even_int, check_positive_int
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
        Standard deviation of the normal initialisation (0.02, as in BERT and GPT-2).
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
            if not (np.isfinite(std) and std > 0):
                raise ValueError(f"std must be a positive finite number, got {std}")
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
