r"""The textbook form of each encoding: the formula, written as a reader would write it.

These functions are what the chapters show (with ``literalinclude``), so they are short
and plain: float64 numpy, no input checks beyond what the formula needs, no tiling, no
tricks for accuracy or memory. The package's public functions compute the same things
faster, more accurately, or with validated input; ``tests/test_reference.py`` checks
each of them against the function here on many inputs, and checks these against
independent computations (mpmath, hand-derived cases).

Notation as in the book: positions :math:`m, n`, pair index :math:`i`, angular frequency
:math:`\omega_i = \mathrm{base}^{-2i/d}`, and :math:`R(\theta)` the counter-clockwise
rotation :math:`\begin{pmatrix}\cos\theta & -\sin\theta\\ \sin\theta & \cos\theta\end{pmatrix}`.
"""

from __future__ import annotations

import math

import numpy as np


def sinusoidal_table(length: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """Vaswani et al.'s table: PE[m, 2i] = sin(m ω_i) and PE[m, 2i+1] = cos(m ω_i)."""
    m = np.arange(length)[:, None]  # positions, one per row
    omega = base ** (-np.arange(0, d_model, 2) / d_model)  # one frequency per pair
    pe = np.zeros((length, d_model))
    pe[:, 0::2] = np.sin(m * omega)
    pe[:, 1::2] = np.cos(m * omega)
    return pe


def shift_matrix(d_model: int, offset: float, base: float = 10000.0) -> np.ndarray:
    """The matrix M_k with PE[m + k] = M_k @ PE[m] (interleaved layout), k = offset.

    Pair i holds (sin mω_i, cos mω_i); the angle-addition formulas turn it into
    (sin (m+k)ω_i, cos (m+k)ω_i) with the 2×2 block [[cos kω_i, sin kω_i], [-sin kω_i, cos kω_i]].
    """
    omega = base ** (-np.arange(0, d_model, 2) / d_model)
    M = np.zeros((d_model, d_model))
    for i, w in enumerate(omega):
        c, s = math.cos(offset * w), math.sin(offset * w)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, s], [-s, c]]
    return M


def cosine_sum(k: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """The dot product of two table rows an offset k apart: PE[m]·PE[m+k] = Σ_i cos(k ω_i).

    Pair i contributes sin(mω)sin((m+k)ω) + cos(mω)cos((m+k)ω) = cos(kω), whatever m is.
    ``omega`` holds the frequencies ω_i; each angle k ω_i is rounded to float64 before its
    cosine is taken, so a term can be off by up to abs(k) ω_i 2**-53 (plus an ulp).
    """
    angles = np.multiply.outer(np.asarray(k, dtype=np.float64), omega)  # one row of k ω_i per k
    return np.cos(angles).sum(axis=-1)


def rope(
    x: np.ndarray, positions: np.ndarray, base: float = 10000.0, layout: str = "interleaved"
) -> np.ndarray:
    """Rotate pair i of the row at position m by the angle m θ_i (counter-clockwise).

    ``x`` has shape ``(..., L, d)``; ``positions`` has length ``L``. ``"interleaved"``
    pairs coordinates ``(2i, 2i+1)``, ``"half"`` pairs ``(i, i + d/2)``.
    """
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta  # (L, d/2)
    cos, sin = np.cos(angle), np.sin(angle)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x[..., : d // 2], x[..., d // 2 :]
    first = a * cos - b * sin  # R(m theta) applied to (a, b)
    second = a * sin + b * cos
    out = np.empty(x.shape)
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = first, second
    else:
        out[..., : d // 2], out[..., d // 2 :] = first, second
    return out


def alibi_slopes(n_heads: int) -> np.ndarray:
    """Press et al.'s head slopes: 2 ** (-8h/n) for h = 1..n when n is a power of two.

    Otherwise the slopes of the largest power of two N < n, then every other slope of
    the 2N-head sequence until there are n.
    """
    n = 2 ** math.floor(math.log2(n_heads))
    slopes = [2.0 ** (-8 * h / n) for h in range(1, n + 1)]
    extra = [2.0 ** (-8 * h / (2 * n)) for h in range(1, 2 * n + 1, 2)]
    return np.array(slopes + extra[: n_heads - n])


def alibi_bias(slopes: np.ndarray, q_len: int, k_len: int) -> np.ndarray:
    """Causal ALiBi bias -m_h (i - j) for keys j <= i, and -inf for the keys after i.

    The queries are the last ``q_len`` of ``k_len`` positions (``i = k_len - q_len + row``).
    """
    i = np.arange(k_len - q_len, k_len)[:, None]
    j = np.arange(k_len)[None, :]
    bias = -np.asarray(slopes)[:, None, None] * np.abs(i - j)
    return np.where(j > i, -np.inf, bias)


def t5_bucket(
    relative_position: int, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> int:
    """T5's bucket of one relative position ``key_pos - query_pos``, the formula in float64.

    Half the buckets (all, when causal) count distance: the first half of those exactly,
    the rest on a log scale up to ``max_distance``. Evaluated in floating point, a distance
    that falls exactly on a log-bucket boundary can land one bucket low; the package's
    posenc.t5_relative_position_bucket uses exact integer comparisons instead.
    """
    bucket = 0
    if bidirectional:
        num_buckets //= 2
        bucket += num_buckets if relative_position > 0 else 0
        n = abs(relative_position)
    else:
        n = max(-relative_position, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return bucket + n
    log_part = math.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    return bucket + min(max_exact + int(log_part), num_buckets - 1)


def learned_forward(X: np.ndarray, E: np.ndarray) -> np.ndarray:
    """Add rows ``0..L-1`` of the table ``E`` to every sequence of ``X`` (shape ``(B, L, d)``)."""
    return X + E[: X.shape[1]]


def learned_backward(grad_output: np.ndarray, max_len: int) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of learned_forward: ``grad_X = grad_output``; ``grad_E[p]`` sums the batch.

    Rows ``L..max_len-1`` were not used, so their gradient is zero.
    """
    L, d = grad_output.shape[1:]
    grad_E = np.zeros((max_len, d))
    grad_E[:L] = grad_output.sum(axis=0)
    return grad_output.copy(), grad_E
