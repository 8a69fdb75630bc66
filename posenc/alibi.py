r"""ALiBi: attention with linear biases (Press, Smith and Lewis, ICLR 2022).

ALiBi adds no vector to the token embeddings. Instead head :math:`h` of every layer adds
a fixed penalty, linear in the distance between query and key, to the attention scores:

.. math:: \mathrm{score}_h(i, j) = \frac{q_i \cdot k_j}{\sqrt{d}} - m_h\,\lvert i - j \rvert ,

with head-specific slopes :math:`m_h` that are fixed before training, never learned.
For a power of two :math:`n` the slopes are the geometric sequence
:math:`m_h = 2^{-8h/n}`, :math:`h = 1, \dots, n`. For other head counts Press et al.'s
rule takes the :math:`N` slopes of the largest power of two :math:`N < n` and appends the
first :math:`n - N` odd-numbered slopes :math:`2^{-8h/(2N)}`, :math:`h = 1, 3, 5, \dots`,
of the :math:`2N`-head sequence (the geometric midpoints between consecutive
:math:`N`-head slopes, steepest first).

Implementations differ in the bias they add, not in the softmax they produce:
:func:`alibi_bias` returns the distance form :math:`-m_h \lvert i - j \rvert` of the
package contract, :func:`alibi_bias_key_form` the key-index forms used by BLOOM
(:math:`m_h\, j`) and MPT (:math:`m_h (j - (k_{len}-1))`). On the keys a causal query can
see, the three differ by a constant per query row, which the softmax ignores.
"""

from __future__ import annotations

import numpy as np

from ._bias_positions import query_key_positions
from ._validation import check_bool, check_choice, check_positive_int, check_query_key_lengths, check_size

__all__ = ["alibi_bias", "alibi_bias_key_form", "alibi_slopes"]

_KEY_FORMS = ("bloom", "mpt")


MAX_HEADS = 2**20


def _check_n_heads(n_heads: object) -> int:
    return check_positive_int(n_heads, "n_heads", MAX_HEADS, "2**20")


def _geometric_slopes(n: int) -> np.ndarray:
    """``2**(-8 h / n)`` for ``h = 1..n`` in float64 (exact when ``8h/n`` is an integer)."""
    h = np.arange(1, n + 1, dtype=np.float64)
    return np.exp2(-8.0 * h / n)


def alibi_slopes(n_heads: int) -> np.ndarray:
    r"""Head slopes :math:`m_1, \dots, m_n` of ALiBi, following Press et al.'s rule, as float64.

    If ``n_heads`` :math:`= n` is a power of two, :math:`m_h = 2^{-8h/n}`: a geometric
    sequence with first term and ratio :math:`2^{-8/n}` and last term :math:`2^{-8}`
    (for 8 heads: :math:`1/2, 1/4, \dots, 1/256`).

    Otherwise let :math:`N` be the largest power of two below :math:`n`. The result is the
    :math:`N`-head sequence followed by the first :math:`n - N` entries of
    :math:`2^{-8h/(2N)}` for odd :math:`h = 1, 3, 5, \dots` (every other slope of the
    :math:`2N`-head sequence, starting with its first). The result is then not sorted:
    e.g. 3 heads give :math:`1/16, 1/256, 1/4`.

    Raises ``TypeError`` if ``n_heads`` is not an ``int`` (bools refused) and
    ``ValueError`` if it is not positive or exceeds 2**20 (a million heads, some
    milliseconds; 2**28 took several seconds).
    """
    n = _check_n_heads(n_heads)
    lower = 1 << (n.bit_length() - 1)  # largest power of two <= n
    slopes = _geometric_slopes(lower)
    if lower == n:
        return slopes
    midpoints = _geometric_slopes(2 * lower)[0::2][: n - lower]
    return np.concatenate([slopes, midpoints])


def alibi_bias(n_heads: int, q_len: int, k_len: int | None = None, *, causal: bool = True) -> np.ndarray:
    r"""ALiBi bias tensor of shape ``(n_heads, q_len, k_len)``, float64.

    Entry :math:`(h, i, j)` is :math:`-m_h \lvert i_{abs} - j \rvert` with
    :math:`m_h` from :func:`alibi_slopes` and :math:`i_{abs} = i + k_{len} - q_{len}`:
    the queries are the last ``q_len`` of ``k_len`` positions, as when decoding with a
    key/value cache (``k_len`` defaults to ``q_len``). With ``causal=True`` the entries
    with :math:`j > i_{abs}` (keys after the query) are :math:`-\infty`, so the visible
    entries are :math:`-m_h (i_{abs} - j)`, the paper's causal form. With ``causal=False``
    the symmetric bias :math:`-m_h \lvert i_{abs} - j \rvert` is returned everywhere, for
    bidirectional attention.

    The tensor is meant to be added to the scaled scores :math:`q_i \cdot k_j / \sqrt{d}`
    (e.g. ``posenc.attention(q, k, v, bias=...)`` with ``q`` of shape ``(H, q_len, d)``).
    ``n_heads``, ``q_len``, ``k_len`` are positive ``int`` (bools refused), ``causal`` a
    real bool (``bool`` or ``numpy.bool_``; ``'False'``, 0 and 1 are refused). The tensor
    may have at most 2**28 entries (``n_heads * q_len * k_len``). Raises ``TypeError`` for
    other types, ``ValueError`` for non-positive sizes, ``q_len > k_len`` or a tensor
    over the limit, each naming the argument.
    """
    n = _check_n_heads(n_heads)
    q, k = check_query_key_lengths(q_len, k_len)
    causal = check_bool(causal, "causal")
    check_size((n, q, k), "the bias (n_heads, q_len, k_len)")  # before the slopes are formed
    slopes = alibi_slopes(n)
    i_abs, j = query_key_positions(q, k)
    neg_distance = -np.abs(i_abs - j)  # integer, so the diagonal is +0.0 after scaling
    bias = slopes[:, None, None] * neg_distance[None, :, :]
    if causal:
        bias = np.where((j > i_abs)[None, :, :], -np.inf, bias)
    return bias


def alibi_bias_key_form(
    n_heads: int,
    q_len: int,
    k_len: int | None = None,
    *,
    convention: str = "bloom",
    causal: bool = True,
) -> np.ndarray:
    r"""The key-index form of the ALiBi bias used in practice, shape ``(n_heads, q_len, k_len)``.

    ``convention="bloom"`` (Hugging Face BLOOM, and Press et al.'s fairseq code) gives
    :math:`m_h\, j`; ``convention="mpt"`` (MosaicML MPT) gives
    :math:`m_h\,(j - (k_{len} - 1))`. Every row is the same: the bias depends on the key
    only. On the visible keys :math:`j \le i_{abs}` of a causal row it exceeds the contract
    form :math:`-m_h (i_{abs} - j)` of :func:`alibi_bias` by the row constant
    :math:`m_h\, i_{abs}` (BLOOM) or :math:`m_h (i_{abs} - k_{len} + 1)` (MPT), so the
    softmax, and hence attention, is the same. With ``causal=True`` the entries
    :math:`j > i_{abs}` are :math:`-\infty`. With ``causal=False`` no mask is applied; the
    key form is then *not* equivalent to the symmetric bias (it rewards later keys
    without limit), which is why bidirectional ALiBi uses :func:`alibi_bias` with
    ``causal=False``.

    Arguments as :func:`alibi_bias`; ``convention`` ``"bloom"`` or ``"mpt"``.
    """
    convention = check_choice(convention, "convention", _KEY_FORMS)
    n = _check_n_heads(n_heads)
    q, k = check_query_key_lengths(q_len, k_len)
    causal = check_bool(causal, "causal")
    check_size((n, q, k), "the bias (n_heads, q_len, k_len)")  # before the slopes are formed
    slopes = alibi_slopes(n)
    j = np.arange(k, dtype=np.int64)
    key_index = j - (k - 1) if convention == "mpt" else j
    row = slopes[:, None] * key_index[None, :]
    bias = np.broadcast_to(row[:, None, :], (slopes.size, q, k)).copy()
    if causal:
        i_abs = np.arange(q, dtype=np.int64)[:, None] + (k - q)
        bias = np.where((j[None, :] > i_abs)[None, :, :], -np.inf, bias)
    return bias
