r"""A one-layer attention probe for comparing positional encodings on a copy task.

The task: a sequence of random tokens :math:`x_0, \dots, x_{L-1}` from a vocabulary of
size :math:`V`; at every position :math:`i \ge k` the layer must output the token
:math:`x_{i-k}` that sits ``offset`` :math:`= k` steps back. It is solvable by relative
position alone, which makes it a clean test of how an encoding behaves past the training
length.

The probe is a single causal attention head whose values are the one-hot tokens
:math:`Y_j = e_{x_j}`. Its scores are a content term plus a position term,

.. math:: S_{ij} = C_{x_i x_j} + P_{ij}, \qquad j \le i,

with a learned :math:`V \times V` matrix :math:`C` (the product :math:`W_Q W_K^\top`
restricted to one-hot tokens) and :math:`P` built from one encoding:

* ``"sinusoidal"``: :math:`P_{ij} = p_i^\top A\, p_j`, :math:`p` the fixed sinusoidal
  table, :math:`A` a learned :math:`d \times d` matrix;
* ``"learned"``: :math:`P_{ij} = u_i^\top v_j` with two learned tables
  :math:`U, V \in \mathbb{R}^{L_{max} \times d}`; positions :math:`\ge L_{max}` have no row;
* ``"rope"``: :math:`P_{ij} = (R_i a)^\top (R_j b) = a^\top R_{j-i} b` with learned
  vectors :math:`a, b \in \mathbb{R}^d` rotated by :func:`~posenc.rope.apply_rope`;
* ``"t5"``: :math:`P_{ij} = \beta_{\mathrm{bucket}(j-i)}`, one learned scalar per
  unidirectional T5 bucket (:func:`~posenc.relative.t5_relative_position_bucket`);
* ``"alibi"``: :math:`P_{ij} = -m\,(i - j)` with a fixed slope :math:`m`; nothing
  positional is learned.

The output at :math:`i` is :math:`o_i = \sum_j w_{ij} Y_j` with
:math:`w_i = \mathrm{softmax}(S_{i,:})`, the prediction is :math:`\arg\max o_i`, and the
training loss is the mean of :math:`-\ln o_i[x_{i-k}]` over the positions
:math:`i \ge k`. Its gradient with respect to the scores is
:math:`\partial \ell / \partial S_{ij} = w_{ij}(g_{ij} - \sum_l w_{il} g_{il})` with
:math:`g_{ij} = -[x_j = x_{i-k}] / o_i[x_{i-k}]`; :func:`fit_probe` backpropagates it to
the parameters by hand and takes Adam steps.
"""

from __future__ import annotations

import numpy as np

from .._validation import (
    check_choice,
    check_finite_real,
    check_int,
    check_length,
    check_positive_int,
    check_positive_real,
    check_seed,
    check_size,
    check_width,
)
from ..relative import t5_relative_position_bucket
from ._probe_tables import causal_mask, rotate_rows, sinusoidal_rows, t5_buckets
from .tasks import check_tokens, copy_targets, copy_task, shifted_targets

METHODS = ("sinusoidal", "learned", "rope", "t5", "alibi")
MAX_VOCAB = 2**14  # the content matrix C is vocab x vocab
MAX_BUCKETS = 1024
MAX_DISTANCE = 2**28
MAX_STEPS = 10**6
# fit_probe: steps * batch * train_len**2 * (vocab + d) (one pass over the scores each)
MAX_WORK = 2**34  # about 1 ns each (measured): at most about 20 s
MAX_WORK_TEXT = "2**34"


class AttentionProbe:
    r"""One causal attention head whose scores are :math:`C_{x_i x_j} + P_{ij}`.

    Accepted values: ``method`` one of the strings listed below; ``max_len`` a positive integer
    (``max_len * d <= 2**28``); ``d`` an even integer in ``[2, 2**16]`` (checked for every
    method; ``"sinusoidal"``'s ``(d, d)`` matrix at most 2**28 entries, so ``d <= 2**14``);
    ``vocab`` an integer in ``[1, 2**14]``; ``seed`` a non-negative integer;
    ``slope`` a finite real number; ``num_buckets`` in ``[1, 1024]`` and
    ``max_distance`` in ``[1, 2**28]``, a valid unidirectional T5 configuration. Sizes of
    the arrays a method builds (``(length, length)`` scores, ``(n_seq, L, L)`` weights)
    are limited to 2**28 entries. Bad arguments raise ``TypeError``/``ValueError`` naming
    them; scores beyond the float64 range (a huge ``slope`` or trained parameters) raise
    ``ValueError``. All arrays are float64.

    Parameters
    ----------
    method
        One of ``"sinusoidal"``, ``"learned"``, ``"rope"``, ``"t5"``, ``"alibi"``; see the
        module docstring for the position term :math:`P` of each.
    max_len
        Longest sequence of the *learned* table (ignored by the other methods).
    d
        Width of the position vectors (even; for ``"t5"`` and ``"alibi"`` unused).
    vocab
        Vocabulary size :math:`V`.
    seed
        Seed of the initial parameters (small normal entries where a zero start would
        have zero gradient, zeros elsewhere).
    slope
        ALiBi's fixed slope :math:`m`.
    num_buckets, max_distance
        T5 bucketing (unidirectional, as in T5's decoder).
    """

    def __init__(
        self,
        method: str,
        *,
        max_len: int = 32,
        d: int = 32,
        vocab: int = 16,
        seed: int = 0,
        slope: float = 0.5,
        num_buckets: int = 32,
        max_distance: int = 128,
    ) -> None:
        self.method = check_choice(method, "method", METHODS)
        self.max_len = check_length(max_len, "max_len")
        self.d = check_width(d, "d")
        self.vocab = check_positive_int(vocab, "vocab", MAX_VOCAB, "2**14")
        self.slope = check_finite_real(slope, "slope")
        self.num_buckets = check_positive_int(num_buckets, "num_buckets", MAX_BUCKETS, "1024")
        self.max_distance = check_positive_int(max_distance, "max_distance", MAX_DISTANCE, "2**28")
        seed = check_seed(seed)
        if method == "t5":  # the bucket configuration is checked now, not at the first call
            t5_relative_position_bucket(
                np.zeros(1, dtype=np.int64),
                bidirectional=False,
                num_buckets=self.num_buckets,
                max_distance=self.max_distance,
            )
        if method == "learned":
            check_size((self.max_len, self.d), "the learned tables (max_len, d)")
        if method == "sinusoidal":
            check_size((self.d, self.d), "the position matrix A (d, d)")
        rng = np.random.default_rng(seed)
        self.params: dict[str, np.ndarray] = {"C": np.zeros((self.vocab, self.vocab))}
        if method == "sinusoidal":
            self.params["A"] = np.zeros((self.d, self.d))
        elif method == "learned":
            self.params["U"] = rng.normal(0.0, 0.1, size=(self.max_len, self.d))
            self.params["V"] = rng.normal(0.0, 0.1, size=(self.max_len, self.d))
        elif method == "rope":
            self.params["a"] = rng.normal(0.0, 0.1, size=self.d)
            self.params["b"] = rng.normal(0.0, 0.1, size=self.d)
        elif method == "t5":
            self.params["beta"] = np.zeros(self.num_buckets)

    @property
    def num_position_parameters(self) -> int:
        """Number of learned scalars in the position term (everything except ``C``)."""
        return int(sum(v.size for k, v in self.params.items() if k != "C"))

    def position_scores(self, length: int) -> np.ndarray:
        """The position term :math:`P` of shape ``(length, length)`` (before the causal mask), float64.

        ``length``: a positive integer with ``length**2 <= 2**28``. Raises ``ValueError``
        for the learned table when ``length > max_len``; errors name ``length``.
        """
        length = check_length(length, "length")
        check_size((length, length), "the position scores (length, length)")
        return self._position_terms(length)[0]

    def _position_terms(self, length: int) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
        """:meth:`position_scores` (``length`` already checked) and what its gradient reuses:
        the sinusoidal table, or RoPE's rotated ``a`` and ``b``."""
        p = self.params
        if self.method == "sinusoidal":
            pe = sinusoidal_rows(length, self.d)
            return pe @ p["A"] @ pe.T, (pe,)
        if self.method == "learned":
            if length > self.max_len:
                raise ValueError(
                    f"length {length} exceeds max_len={self.max_len}: the learned tables have no rows "
                    "for those positions"
                )
            return p["U"][:length] @ p["V"][:length].T, ()
        if self.method == "rope":
            qa = rotate_rows(np.broadcast_to(p["a"], (length, self.d)))
            kb = rotate_rows(np.broadcast_to(p["b"], (length, self.d)))
            return qa @ kb.T, (qa, kb)
        if self.method == "t5":
            return p["beta"][t5_buckets(length, self.num_buckets, self.max_distance)], ()
        i = np.arange(length, dtype=np.float64)
        with np.errstate(over="ignore"):
            return -self.slope * (i[:, None] - i[None, :]), ()

    def _tokens(self, tokens: object) -> np.ndarray:
        tokens = check_tokens(tokens)
        if tokens.max() >= self.vocab:
            raise ValueError(f"tokens must be < vocab={self.vocab}")
        return tokens

    def weights(self, tokens: np.ndarray) -> np.ndarray:
        """Causal attention weights ``(n_seq, L, L)`` (float64) for integer ``tokens`` ``(n_seq, L)``.

        ``tokens``: a non-empty 2-D array-like of integer token ids in ``[0, vocab)`` (bools,
        floats and complex numbers refused), ``n_seq * L**2 <= 2**28``. Errors name
        ``tokens`` or ``vocab``; scores beyond the float64 range raise ``ValueError``.
        """
        return self._weights_of(self._tokens(tokens))

    def _weights_of(self, tokens: np.ndarray) -> np.ndarray:
        """:meth:`weights` of checked ``tokens``, after the size check of the weights."""
        length = tokens.shape[1]
        check_size((tokens.shape[0], length, length), "the weights (n_seq, length, length)")
        return self._weights(self._pair_index(tokens), self._scores_term(length)[0])

    def _scores_term(self, length: int) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
        """:meth:`_position_terms` for the scores: an overflow there is reported by :meth:`_weights`."""
        with np.errstate(over="ignore", invalid="ignore"):
            return self._position_terms(length)

    def _pair_index(self, tokens: np.ndarray) -> np.ndarray:
        """``x_i * vocab + x_j`` for every query ``i`` and key ``j``: the flat index of ``C[x_i, x_j]``."""
        return tokens[:, :, None] * self.vocab + tokens[:, None, :]

    def _weights(self, pairs: np.ndarray, position: np.ndarray) -> np.ndarray:
        """:meth:`weights` from the :meth:`_pair_index` of checked tokens and the position term."""
        length = pairs.shape[1]
        with np.errstate(over="ignore", invalid="ignore"):
            # one flat gather: several times faster than C[x[:, :, None], x[:, None, :]]
            scores = np.take(self.params["C"].ravel(), pairs)
            scores += position
        mask, above = causal_mask(length)
        # Entries above the diagonal are masked out: only a non-finite score on or below it is
        # an error (the whole array is checked first, the common case, all finite).
        if not np.isfinite(scores).all() and not np.isfinite(scores[:, mask]).all():
            raise ValueError(
                "the attention scores C + P are not finite (beyond the float64 range, about 1.8e308): "
                "slope or the trained parameters are too large"
            )
        # softmax over the keys j <= i, in place (the array is this call's own)
        np.copyto(scores, -np.inf, where=above)
        with np.errstate(over="ignore"):  # below -1.8e308 after the shift: weight exactly 0
            scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        return scores

    def predict(self, tokens: np.ndarray) -> np.ndarray:
        """Predicted token ``argmax_v sum_j w_ij [x_j = v]`` at every position, ``(n_seq, L)``.

        ``tokens`` as in :meth:`weights`, with ``n_seq * L * vocab <= 2**28`` as well.
        """
        tokens = self._tokens(tokens)
        check_size((*tokens.shape, self.vocab), "the one-hot outputs (n_seq, length, vocab)")
        w = self._weights_of(tokens)
        onehot = np.eye(self.vocab)[tokens]
        return np.argmax(w @ onehot, axis=-1)

    def loss_and_grads(self, tokens: np.ndarray, offset: int) -> tuple[float, dict[str, np.ndarray]]:
        r"""Mean cross-entropy :math:`-\ln o_i[x_{i-k}]` over ``i >= offset`` and its gradients.

        ``tokens`` as in :meth:`weights`; ``offset`` an integer in ``[0, L)``. Returns the
        loss (a float) and a dict of float64 gradients shaped like ``params``.
        """
        tokens = self._tokens(tokens)
        offset = check_int(offset, "offset", 0)
        n, length = tokens.shape
        if offset >= length:
            raise ValueError(f"offset must be smaller than the sequence length {length}, got {offset}")
        check_size((n, length, length), "the weights (n_seq, length, length)")
        return self._loss_and_grads(tokens, offset)

    def _loss_and_grads(self, tokens: np.ndarray, offset: int) -> tuple[float, dict[str, np.ndarray]]:
        """:meth:`loss_and_grads` of checked ``tokens`` and ``offset`` (:func:`fit_probe` draws both)."""
        n, length = tokens.shape
        position, reused = self._scores_term(length)
        pairs = self._pair_index(tokens)
        w = self._weights(pairs, position)
        targets = shifted_targets(tokens, offset)
        valid = targets >= 0
        G = (tokens[:, None, :] == targets[:, :, None]) & valid[:, :, None]  # [x_j = t_i]
        o = np.sum(w * G, axis=-1)  # o_i[t_i]
        o_safe = np.where(valid, np.maximum(o, 1e-300), 1.0)
        count = int(valid.sum())
        loss = float(-np.sum(np.log(o_safe)[valid]) / count)
        # -[x_j = t_i] / o_i / count: -1 / o_i / count where G holds, -0.0 elsewhere
        g = np.where(G, (-1.0 / o_safe / count)[:, :, None], -0.0)
        dS = w * (g - np.sum(w * g, axis=-1, keepdims=True))
        grads: dict[str, np.ndarray] = {}
        dC = np.bincount(pairs.ravel(), weights=dS.ravel(), minlength=self.vocab**2)
        grads["C"] = dC.reshape(self.vocab, -1)
        dP = dS.sum(axis=0)
        p = self.params
        if self.method == "sinusoidal":
            (pe,) = reused
            grads["A"] = pe.T @ dP @ pe
        elif self.method == "learned":
            U, V = p["U"][:length], p["V"][:length]
            grads["U"] = np.zeros_like(p["U"])
            grads["V"] = np.zeros_like(p["V"])
            grads["U"][:length] = dP @ V
            grads["V"][:length] = dP.T @ U
        elif self.method == "rope":
            qa, kb = reused
            # R_i^T = R_{-i}: rotate back by minus the positions
            grads["a"] = rotate_rows(dP @ kb, -1.0).sum(axis=0)
            grads["b"] = rotate_rows(dP.T @ qa, -1.0).sum(axis=0)
        elif self.method == "t5":
            grads["beta"] = np.bincount(
                t5_buckets(length, self.num_buckets, self.max_distance).ravel(),
                weights=dP.ravel(),
                minlength=self.num_buckets,
            )
        return loss, grads


def fit_probe(
    method: str,
    *,
    train_len: int = 32,
    offset: int = 1,
    steps: int = 300,
    lr: float = 0.05,
    batch: int = 32,
    d: int = 32,
    vocab: int = 16,
    seed: int = 0,
    slope: float = 0.5,
) -> tuple[AttentionProbe, np.ndarray]:
    r"""Train an :class:`AttentionProbe` on the copy task at length ``train_len`` with Adam.

    Every step draws a fresh batch of ``batch`` sequences (seeded), computes the loss and
    gradients of :meth:`AttentionProbe.loss_and_grads` and updates every parameter with
    Adam (:math:`\beta_1 = 0.9`, :math:`\beta_2 = 0.999`, :math:`\epsilon = 10^{-8}`).
    Returns the probe and the loss before each step (shape ``(steps,)``).

    Accepted values: ``train_len`` a positive integer, ``offset`` an integer in
    ``[0, train_len)``, ``steps`` in ``[1, 10**6]``, ``batch`` a positive integer, ``lr``
    a finite real number ``> 0``, ``seed`` a non-negative integer, and ``method``, ``d``,
    ``vocab``, ``slope`` as for :class:`AttentionProbe`; the total work
    ``steps * batch * train_len**2 * (vocab + d)`` is at most 2**34 (refused at once).
    Errors name the argument; a run that leaves the float64 range raises ``ValueError``
    naming ``lr``.
    """
    train_len = check_length(train_len, "train_len")
    offset = check_int(offset, "offset", 0)
    if offset >= train_len:
        raise ValueError(f"offset must be smaller than train_len={train_len}, got {offset}")
    steps = check_positive_int(steps, "steps", MAX_STEPS, "10**6")
    batch = check_length(batch, "batch")
    lr = check_positive_real(lr, "lr")
    seed = check_seed(seed)
    probe = AttentionProbe(method, max_len=train_len, d=d, vocab=vocab, seed=seed, slope=slope)
    check_size((batch, train_len, train_len), "a batch of weights (batch, train_len, train_len)")
    work = steps * batch * train_len * train_len * (probe.vocab + probe.d)
    if work > MAX_WORK:
        raise ValueError(
            f"steps * batch * train_len**2 * (vocab + d) = {work} exceeds the limit {MAX_WORK_TEXT} "
            "(well over ten seconds of computation): reduce steps, batch or train_len"
        )
    rng = np.random.default_rng(seed + 1)
    m = {k: np.zeros_like(v) for k, v in probe.params.items()}
    s = {k: np.zeros_like(v) for k, v in probe.params.items()}
    losses = np.empty(steps)
    for t in range(1, steps + 1):
        tokens = rng.integers(0, vocab, size=(batch, train_len))
        try:
            loss, grads = probe._loss_and_grads(tokens, offset)
        except ValueError as exc:
            raise ValueError(f"training diverged at step {t}: lower lr (got {lr}) or slope ({exc})") from None
        losses[t - 1] = loss
        with np.errstate(over="ignore", invalid="ignore"):
            for k, g in grads.items():
                m[k] = 0.9 * m[k] + 0.1 * g
                s[k] = 0.999 * s[k] + 0.001 * g * g
                m_hat = m[k] / (1 - 0.9**t)
                s_hat = s[k] / (1 - 0.999**t)
                probe.params[k] = probe.params[k] - lr * m_hat / (np.sqrt(s_hat) + 1e-8)
        if not all(np.isfinite(v).all() for v in probe.params.values()):
            raise ValueError(f"training diverged at step {t} (parameters beyond the float64 range): lower lr")
    return probe, losses


def probe_accuracy(
    probe: AttentionProbe, length: int, offset: int, *, n_seq: int = 64, seed: int = 12345
) -> float:
    """Fraction of positions ``i >= offset`` (over ``n_seq`` fresh sequences) predicted correctly.

    ``probe``: an :class:`AttentionProbe`; ``length`` a positive integer, ``offset`` an
    integer in ``[0, length)``; ``n_seq`` a positive integer and ``seed`` a non-negative
    integer, as for :func:`~posenc.analysis.tasks.copy_task` (``n_seq * length**2`` at most 2**28 for the
    weights). Errors name the argument.
    """
    if not isinstance(probe, AttentionProbe):
        raise TypeError(f"probe must be an AttentionProbe, got {type(probe).__name__}")
    length = check_length(length, "length")
    offset = check_int(offset, "offset", 0)
    if offset >= length:
        raise ValueError(f"offset must be smaller than length={length}, got {offset}")
    n_seq = check_length(n_seq, "n_seq")
    check_size((n_seq, length, length), "the weights (n_seq, length, length)")
    tokens = copy_task(n_seq, length, probe.vocab, seed=seed)
    pred = probe.predict(tokens)
    targets = copy_targets(tokens, offset)
    valid = targets >= 0
    return float(np.mean(pred[valid] == targets[valid]))


__all__ = ["METHODS", "AttentionProbe", "fit_probe", "probe_accuracy"]
