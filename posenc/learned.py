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

from ._arrays import as_real_array, check_finite_result
from ._validation import check_choice, check_length, check_positive_real, check_seed, check_size, check_width
from .sinusoidal import sinusoidal_encoding

INITS = ("normal", "sinusoidal")
MAX_STD = 1e300  # normal draws stay below 40 std, far inside the float64 range
MAX_STEPS = 10**6


class LearnedPositionalEncoding:
    """Trainable position table with forward and backward passes.

    The table (``embedding``) and its gradient (``grad_embedding``) are float64. Bad
    arguments raise ``TypeError``/``ValueError`` naming them.

    Parameters
    ----------
    max_len, d_model
        Table shape: positive integers (not bools) with ``max_len * d_model <= 2**28``.
        ``d_model`` must be even (and at most 2**16) only for ``init="sinusoidal"``.
    seed
        Seed of the ``numpy.random.default_rng`` that draws the initial table: a
        non-negative integer.
    init
        ``"normal"``: entries drawn from :math:`\\mathcal{N}(0, \\mathrm{std}^2)`;
        ``"sinusoidal"``: the sinusoidal table (then trained like any other).
    std
        Standard deviation of the normal initialisation, a real number in
        ``(0, 1e300]``, checked with either ``init`` (``"sinusoidal"`` does not use it).
        The default 0.02 is BERT's ``initializer_range`` (BERT draws from a truncated
        normal); OpenAI's released GPT-2 code initialises its position table with
        standard deviation 0.01.
    """

    def __init__(
        self, max_len: int, d_model: int, *, seed: int = 0, init: str = "normal", std: float = 0.02
    ) -> None:
        self.max_len = check_length(max_len, "max_len")
        self.d_model = check_length(d_model, "d_model")
        init = check_choice(init, "init", INITS)
        seed = check_seed(seed)
        check_size((self.max_len, self.d_model), "the table (max_len, d_model)")
        std = check_positive_real(std, "std")  # checked for either init: a bad std is a bug either way
        if std > MAX_STD:
            raise ValueError(f"std must be at most 1e300 (draws must stay finite), got {std}")
        if init == "sinusoidal":
            check_width(d_model, "d_model")
            self.embedding = sinusoidal_encoding(self.max_len, self.d_model)
        else:
            rng = np.random.default_rng(seed)
            self.embedding = rng.normal(0.0, std, size=(self.max_len, self.d_model))
        self.grad_embedding = np.zeros_like(self.embedding)
        self._last_shape: tuple[int, ...] | None = None

    @property
    def num_parameters(self) -> int:
        """Number of trainable scalars, ``max_len * d_model``."""
        return self.embedding.size

    def forward(self, X: np.ndarray) -> np.ndarray:
        """Return ``X + embedding[:L]`` (float64) for ``X`` of shape ``(B, L, d_model)``.

        ``X``: a non-empty 3-D array-like of finite real numbers (integer and float16/32
        input is promoted to float64). ``L == max_len`` is allowed; raises ``ValueError``
        when ``L > max_len`` (the table has no row for those positions), for a wrong
        shape, NaN/infinity or a sum beyond the float64 range; ``TypeError`` for bool,
        complex or string input.
        """
        X = as_real_array(X, "X", ndim=3)
        if X.shape[-1] != self.d_model:
            raise ValueError(f"X must have last dimension d_model={self.d_model}, got shape {X.shape}")
        length = X.shape[1]
        if length > self.max_len:
            raise ValueError(
                f"X has sequence length {length}, which exceeds max_len={self.max_len}: a learned "
                "table has no embedding for positions it was not given"
            )
        with np.errstate(over="ignore"):
            out = X + self.embedding[:length]
        check_finite_result(out, "X + embedding exceeds the float64 range (about 1.8e308): scale X down")
        self._last_shape = X.shape
        return out

    __call__ = forward

    def backward(self, grad_output: np.ndarray) -> np.ndarray:
        """Gradient with respect to ``X`` (float64); sets ``grad_embedding`` (recomputed, not accumulated).

        ``grad_embedding[:L]`` is the batch sum of ``grad_output`` and rows ``L:`` are zero.
        ``grad_output``: a 3-D array-like of finite real numbers with the shape of the last
        :meth:`forward` input; raises ``RuntimeError`` before any forward, ``TypeError``/
        ``ValueError`` naming ``grad_output`` otherwise (also when the batch sum exceeds
        the float64 range).
        """
        if self._last_shape is None:
            raise RuntimeError("backward called before forward")
        grad_output = as_real_array(grad_output, "grad_output", ndim=3)
        if grad_output.shape != self._last_shape:
            raise ValueError(
                f"grad_output must have the shape of the last forward output {self._last_shape}, "
                f"got {grad_output.shape}"
            )
        length = grad_output.shape[1]
        with np.errstate(over="ignore"):
            summed = grad_output.sum(axis=0)
        check_finite_result(summed, "the batch sum of grad_output exceeds the float64 range (about 1.8e308)")
        self.grad_embedding = np.zeros_like(self.embedding)
        self.grad_embedding[:length] = summed
        return grad_output  # already a new float64 array (as_real_array copies)
