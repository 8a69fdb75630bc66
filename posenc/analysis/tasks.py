r"""The copy task of chapter 12: output the token ``offset`` steps back.

A sequence of random tokens :math:`x_0, \dots, x_{L-1}` from a vocabulary of size
:math:`V`; at every position :math:`i \ge k` the target is :math:`x_{i-k}`. It is solvable
by relative position alone, which makes it a clean test of how an encoding behaves past
the training length (:mod:`posenc.analysis.probe` fits one attention head to it).
"""

from __future__ import annotations

import numpy as np

from .._arrays import as_integer_array
from .._validation import (
    MAX_POSITION,
    MAX_POSITION_TEXT,
    check_int,
    check_length,
    check_positive_int,
    check_seed,
    check_size,
)


def copy_task(n_seq: int, length: int, vocab: int, *, seed: int = 0) -> np.ndarray:
    """Random int64 tokens of shape ``(n_seq, length)``, uniform on ``0 .. vocab-1``, seeded.

    ``n_seq``, ``length``: positive integers with ``n_seq * length <= 2**28``; ``vocab``:
    an integer in ``[1, 2**53]``; ``seed``: a non-negative integer (the seed of
    ``numpy.random.default_rng``). Bools, floats and out-of-range values raise
    ``TypeError``/``ValueError`` naming the argument. The targets of the task are the
    same array shifted by ``offset``: see :func:`copy_targets`.
    """
    n_seq = check_length(n_seq, "n_seq")
    length = check_length(length, "length")
    vocab = check_positive_int(vocab, "vocab", MAX_POSITION, MAX_POSITION_TEXT)
    seed = check_seed(seed)
    check_size((n_seq, length), "the tokens (n_seq, length)")
    rng = np.random.default_rng(seed)
    return rng.integers(0, vocab, size=(n_seq, length), dtype=np.int64)


def copy_targets(tokens: np.ndarray, offset: int) -> np.ndarray:
    """Targets ``t[:, i] = tokens[:, i - offset]`` for ``i >= offset`` and ``-1`` (no target) before.

    ``tokens``: a non-empty 2-D array-like of non-negative integers (token ids up to
    2**53; bools and floats refused); ``offset``: a non-negative integer. Returns int64 of
    the shape of ``tokens``; errors name the argument.
    """
    return shifted_targets(check_tokens(tokens), check_int(offset, "offset", 0))


def shifted_targets(tokens: np.ndarray, offset: int) -> np.ndarray:
    """:func:`copy_targets` of an int64 ``tokens`` array and an ``offset >= 0`` already checked."""
    t = np.full(tokens.shape, -1, dtype=np.int64)
    if offset < tokens.shape[1]:
        t[:, offset:] = tokens[:, : tokens.shape[1] - offset]
    return t


def check_tokens(tokens: object) -> np.ndarray:
    arr = as_integer_array(tokens, "tokens", what="integer token ids", nonempty=True, bounded=True)
    if arr.ndim != 2:
        raise ValueError(f"tokens must be 2-D (n_seq, length), got shape {arr.shape}")
    if arr.min() < 0:
        raise ValueError("tokens must be non-negative token ids")
    return arr
