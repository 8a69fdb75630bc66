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
from collections.abc import Callable

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


# ---- Part V: frequencies, scalings, N-D rotations and other biases ----------------


def p_rope_frequencies(d_head: int, p: float, base: float = 10000.0) -> np.ndarray:
    """p-RoPE: the fastest fraction p of the pairs keep RoPE's θ_i, the rest get 0.

    θ_i = base ** (-2i/d) when i + 1 <= p d/2, else 0: floor(p d/2) pairs turn as in
    RoPE (their frequencies are not respaced), and a pair with frequency 0 never turns.
    """
    i = np.arange(d_head // 2)
    theta = base ** (-2 * i / d_head)
    return np.where(i + 1 <= p * d_head / 2, theta, 0.0)


def yarn_frequencies(
    d_head: int,
    base: float,
    factor: float,
    original_length: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
) -> np.ndarray:
    """YaRN: each θ_i moves from θ_i (kept) to θ_i / s (interpolated) along a ramp ρ_i.

    Over the original context L0 pair i turns r_i = L0 θ_i / 2π times. Pairs with
    r_i >= beta_fast keep θ_i, pairs with r_i <= beta_slow get θ_i / s (s = factor),
    and in between θ'_i = (1 - ρ_i) θ_i + ρ_i θ_i / s. The ramp is linear in the pair
    index, i.e. in ln r_i: it runs from the index where r = beta_fast to the one where
    r = beta_slow, i(β) = (d/2) ln(L0 / (2π β)) / ln(base), rounded outward (floor and
    ceiling: transformers' default truncate=True) and kept in 0..d-1 as transformers
    does.
    """
    theta = base ** (-np.arange(0, d_head, 2) / d_head)

    def pair_index(rotations: float) -> float:  # solve L0 θ_i / 2π = rotations for i
        ratio = original_length / (2 * math.pi * rotations)
        return d_head / 2 * math.log(ratio) / math.log(base)

    low = max(math.floor(pair_index(beta_fast)), 0)
    high = min(math.ceil(pair_index(beta_slow)), d_head - 1)
    ramp = np.clip((np.arange(d_head // 2) - low) / (high - low), 0.0, 1.0)
    return (1 - ramp) * theta + ramp * theta / factor


def yarn_attention_factor(factor: float) -> float:
    """YaRN's attention factor a = 0.1 ln(s) + 1 for s > 1 (1 otherwise).

    RoPE's cos and sin are multiplied by a, so a query and a key both grow by a and
    every logit by a ** 2.
    """
    return 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0


def axial_rope_frequencies(
    d_head: int,
    n_axes: int = 2,
    base: float = 10000.0,
) -> np.ndarray:
    """Axial RoPE's frequencies F, shape (n_axes, d/2): pair j turns by Σ_a c_a F[a, j].

    The d/2 pairs split into n_axes consecutive blocks of b = d/(2 n_axes) pairs.
    Block a follows coordinate c_a alone, with the frequencies of a (d/n_axes)-wide
    RoPE, base ** (-2i/(2b)) for i = 0..b-1; F is zero outside the blocks.
    """
    b = d_head // (2 * n_axes)
    block = base ** (-np.arange(b) / b)  # a (2b)-wide RoPE: base ** (-2i/(2b))
    return np.kron(np.eye(n_axes), block)  # row a: the block at pairs a b .. a b + b - 1


def mrope(
    x: np.ndarray,
    positions: np.ndarray,
    mrope_section: list[int],
    base: float = 10000.0,
) -> np.ndarray:
    """Qwen2-VL's M-RoPE (half layout): pair j of token l turns by p[a(j), l] θ_j.

    ``positions`` has shape (3, L): the temporal, height and width ids of each token;
    θ_j = base ** (-2j/d) as in 1-D RoPE. ``mrope_section`` (s_t, s_h, s_w) splits the
    d/2 pairs into consecutive runs: a(j) = 0 for the first s_t pairs, 1 for the next
    s_h, 2 for the last s_w. Pair j is the coordinates (j, j + d/2); equal ids give
    1-D RoPE.
    """
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    axis = np.repeat([0, 1, 2], mrope_section)  # a(j): the id that turns pair j
    ids = np.asarray(positions, dtype=np.float64)[axis]  # (d/2, L): p[a(j), l]
    angle = ids.T * theta  # (L, d/2)
    a, b = x[..., : d // 2], x[..., d // 2 :]
    cos, sin = np.cos(angle), np.sin(angle)
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def kerple_bias(
    r1: np.ndarray,
    r2: np.ndarray,
    q_len: int,
    k_len: int,
    kind: str = "log",
    causal: bool = True,
) -> np.ndarray:
    """KERPLE's bias of head h at distance δ = abs(i - j), shape (H, q_len, k_len).

    ``"log"``: -r1_h ln(1 + r2_h δ); ``"power"``: -r1_h δ ** r2_h (0 < r2_h <= 2). The
    queries are the last ``q_len`` of ``k_len`` positions, as in alibi_bias; with
    ``causal`` the keys after the query (j > i) get -inf.
    """
    i = np.arange(k_len - q_len, k_len)[:, None]
    j = np.arange(k_len)[None, :]
    delta = np.abs(i - j)
    r1 = np.asarray(r1, dtype=np.float64)[:, None, None]
    r2 = np.asarray(r2, dtype=np.float64)[:, None, None]
    if kind == "log":
        bias = -r1 * np.log(1 + r2 * delta)
    else:
        bias = -r1 * delta**r2
    return np.where(j > i, -np.inf, bias) if causal else bias


def fire_bias(
    f: Callable[[np.ndarray], np.ndarray],
    q_len: int,
    k_len: int,
    c: float = 1.0,
    threshold: float = 1.0,
    causal: bool = True,
) -> np.ndarray:
    """FIRE's bias f(u) with u = ψ(abs(i - j)) / ψ(max(L, i)), ψ(x) = ln(1 + c x).

    L = ``threshold``; i is the absolute query position (the queries are the last
    ``q_len`` of ``k_len`` positions). For a key the query sees, 0 <= u <= 1, and from
    i >= L on the farthest key is at u = 1 however long the sequence. ``f`` (a small
    MLP in the paper) maps the (q_len, k_len) array u to the bias; with ``causal`` the
    keys j > i get -inf.
    """
    i = np.arange(k_len - q_len, k_len)[:, None]
    j = np.arange(k_len)[None, :]
    u = np.log(1 + c * np.abs(i - j)) / np.log(1 + c * np.maximum(threshold, i))
    bias = np.asarray(f(u), dtype=np.float64)
    return np.where(j > i, -np.inf, bias) if causal else bias


def xpos_scale(
    positions: np.ndarray,
    d_head: int,
    gamma: float = 0.4,
    scale_base: float = 512,
) -> np.ndarray:
    """xPos's factor of pair j at position p, shape (L, d/2): ζ_j ** (p / scale_base).

    ζ_j = (2j/d + γ) / (1 + γ) < 1. Queries multiply pair j (both coordinates) by the
    factor and keys divide by it, so the score of query m and key n is scaled by
    ζ_j ** ((m - n) / scale_base), which decays with m - n, fastest for small j.
    """
    zeta = (np.arange(0, d_head, 2) / d_head + gamma) / (1 + gamma)
    p = np.asarray(positions, dtype=np.float64)[:, None]
    return zeta ** (p / scale_base)
