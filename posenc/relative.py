r"""Relative position: Shaw et al.'s clipped embeddings and T5's bucketed bias.

Both schemes look at the *relative position* :math:`r = j - i` of a key :math:`j` seen
from a query :math:`i` (T5 calls it ``memory_position - context_position``; Shaw et al.
clip the same :math:`j - i`). A positive :math:`r` is a key *after* the query.

**Shaw et al. (2018).** The offset is clipped to :math:`[-K, K]` and shifted to an index
:math:`\operatorname{clip}(j - i, -K, K) + K \in \{0, \dots, 2K\}` into a learned table of
:math:`2K + 1` vectors :math:`w^K_0, \dots, w^K_{2K}`; with :math:`a^K_{ij} = w^K_{\text{index}}`
the logit is :math:`e_{ij} = q_i (k_j + a^K_{ij})^\top / \sqrt{d}`.

**T5 (Raffel et al., 2020).** The offset is mapped to one of ``num_buckets`` buckets and
each bucket holds one learned scalar per head, added to the logit. With ``h`` buckets for
one direction (``num_buckets / 2`` if bidirectional, else ``num_buckets``),
:math:`m = \lfloor h/2 \rfloor` exact buckets, :math:`s = h - m` logarithmic ones, and
:math:`n \ge 0` the distance looked up, the bucket is :math:`n` for :math:`n < m` and

.. math:: m + \min\Big(s - 1,\ \Big\lfloor s \,\frac{\ln(n/m)}{\ln(D/m)} \Big\rfloor\Big)
          \qquad (n \ge m,\ D = \text{max\_distance}).

This module evaluates that floor *exactly*, with integer arithmetic; see
:func:`t5_relative_position_bucket` for where the float32 formula of the public
implementations lands elsewhere.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ._arrays import as_integer_array, as_real_array, check_finite_result
from ._validation import (
    MAX_POSITION,
    MAX_POSITION_TEXT,
    check_bool,
    check_int,
    check_length,
    check_offset_int,
    check_positive_int,
    check_size,
)

# Documented limits of the T5 configuration: the exact thresholds take s - 1 integer
# roots of numbers with up to s * log2(max_distance) bits (s = half the buckets of one
# direction), about 0.4 s at the limits.
MAX_BUCKETS = 2**11
MAX_BUCKETS_TEXT = "2**11 = 2048"


def _iroot_ceil(value: int, k: int) -> int:
    """Smallest integer x >= 0 with x**k >= value (exact, for Python ints)."""
    if value <= 0:
        return 0
    bits = value.bit_length()
    shift = max(bits - 64, 0)
    exponent = (math.log2(value >> shift) + shift) / k
    # A start at or above the root: the float estimate raised by far more than its error
    # (or a power of two when the root is beyond the float range).
    x = (1 << -(-bits // k)) if exponent > 1000 else int(2.0**exponent * (1 + 2.0**-40)) + 2
    while True:  # Newton's iteration decreases from above to floor(value ** (1/k))
        y = ((k - 1) * x + value // x ** (k - 1)) // k
        if y >= x:
            break
        x = y
    return x if x**k >= value else x + 1


def _relative_grid(q_len: int, k_len: int, query_offset: int) -> np.ndarray:
    """``rel[a, j] = j - (query_offset + a)``, int64."""
    queries = query_offset + np.arange(q_len, dtype=np.int64)
    return np.arange(k_len, dtype=np.int64)[None, :] - queries[:, None]


def _half_and_exact(bidirectional: bool, num_buckets: int) -> tuple[int, int]:
    half = num_buckets // 2 if bidirectional else num_buckets
    return half, half // 2


def _check_t5_config(
    bidirectional: object, num_buckets: object, max_distance: object
) -> tuple[bool, int, int]:
    bidirectional = check_bool(bidirectional, "bidirectional")
    num_buckets = check_positive_int(num_buckets, "num_buckets", MAX_BUCKETS, MAX_BUCKETS_TEXT)
    if bidirectional and num_buckets % 2:
        raise ValueError(
            f"num_buckets must be even when bidirectional=True (half for each sign), got {num_buckets}"
        )
    half, max_exact = _half_and_exact(bidirectional, num_buckets)
    if max_exact < 1:
        need = 4 if bidirectional else 2
        raise ValueError(
            f"num_buckets must be at least {need} (bidirectional={bidirectional}) so that one exact bucket "
            f"exists, got {num_buckets}"
        )
    max_distance = check_int(max_distance, "max_distance", 1, MAX_POSITION, MAX_POSITION_TEXT)
    if max_distance <= max_exact:
        raise ValueError(
            f"max_distance must exceed the number of exact buckets max_exact={max_exact}, got {max_distance}"
        )
    return bidirectional, num_buckets, max_distance


@lru_cache(maxsize=256)
def _thresholds(max_exact: int, n_log: int, max_distance: int) -> tuple[int, ...]:
    # T_t = smallest integer n with n >= m (D/m)^(t/s), i.e. n^s m^t >= D^t m^s ... divided by m^t:
    # n^s >= D^t m^(s-t), for t = 1 .. s-1.
    return tuple(_iroot_ceil(max_distance**t * max_exact ** (n_log - t), n_log) for t in range(1, n_log))


def t5_bucket_thresholds(
    *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> np.ndarray:
    r"""Smallest distance :math:`n = |r|` whose bucket is at least ``b``, for every bucket ``b``.

    Entry ``b`` is the smallest distance whose bucket (of the half, before the bidirectional
    offset) is at least ``b``; bucket ``b`` is empty when entries ``b`` and ``b + 1`` are
    equal (``num_buckets=32, max_distance=9``: entries 9 to 15 are all 9). Exact integers:
    ``b`` for the exact buckets ``b < m``, and for the logarithmic bucket ``m + t``
    (``t = 1 .. s-1``) the smallest integer :math:`n` with :math:`n^s \ge D^t m^{s-t}`, i.e.
    :math:`\lceil m (D/m)^{t/s} \rceil`. Entry ``m`` is ``m`` itself. The bucket of a
    distance ``n`` is the number of entries ``<= n``, minus 1.

    ``bidirectional`` a real bool; ``num_buckets`` a positive ``int`` at most 2**11 =
    2048 (even when bidirectional, with at least one exact bucket); ``max_distance`` an
    ``int`` with ``m < max_distance <= 2**53``. Bools are refused for the integers and
    strings or 0/1 for the flag; every error names the argument.
    """
    bidirectional, num_buckets, max_distance = _check_t5_config(bidirectional, num_buckets, max_distance)
    half, max_exact = _half_and_exact(bidirectional, num_buckets)
    upper = _thresholds(max_exact, half - max_exact, max_distance)
    return np.array(list(range(max_exact + 1)) + list(upper), dtype=np.int64)


def t5_relative_position_bucket(
    relative_position: object, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> np.ndarray:
    r"""T5's bucket index of each relative position ``key_pos - query_pos``.

    ``relative_position`` is an integer array of any shape (``memory_position -
    context_position`` in T5's words, :math:`r = j - i`); the result is an int64 array of
    the same shape with values in ``0 .. num_buckets - 1``.

    * ``bidirectional=True``: ``h = num_buckets / 2`` buckets per sign; keys *after* the
      query (:math:`r > 0`) get the offset ``h``, keys at or before it none; the distance
      looked up is :math:`n = |r|`.
    * ``bidirectional=False`` (causal): ``h = num_buckets``, :math:`n = \max(-r, 0)`, so
      every key after the query shares bucket 0 with :math:`r = 0` (a causal mask hides
      them anyway).

    With :math:`m = \lfloor h/2\rfloor` and :math:`s = h - m`: :math:`n < m` gives bucket
    :math:`n` (exact); :math:`n \ge m` gives :math:`m + \min(s-1, t)` with
    :math:`t = \lfloor s \ln(n/m) / \ln(D/m) \rfloor`, :math:`D` = ``max_distance``; so
    every :math:`n \ge D` shares the last bucket ``h - 1``. ``t`` is the largest integer
    with :math:`(D/m)^t \le (n/m)^s`, i.e. :math:`D^t m^{s-t} \le n^s`: this function
    compares those integers (through precomputed exact thresholds, see
    :func:`t5_bucket_thresholds`), so a distance exactly on a boundary
    (:math:`n = m (D/m)^{t/s}` an integer) gets the bucket the formula gives in exact
    arithmetic.

    Difference from the public implementations: Mesh TensorFlow (T5's original code) and
    Hugging Face ``T5Attention._relative_position_bucket`` evaluate the formula in
    float32 (``log(n.float() / m) / log(D / m) * s``, truncated to an integer), so a
    quotient within float32 rounding of an integer can be truncated to the wrong side.
    Measured with a numpy emulation of that float32 arithmetic (true division as on the
    CPU; enumerating every distance up to 4096): for the default ``(32, 128)``, in both
    modes, float32 and this function agree everywhere (the boundaries 16, 32, 64 are
    exact ties and float32 happens to land on them). Disagreements exist elsewhere and go
    both ways: at an exact tie a rounded-down quotient gives one bucket *less* (a naive
    float64 evaluation does this for ``num_buckets=20, max_distance=160``, bidirectional,
    at ``|r| = 10, 20, 80``; float32 with division by a reciprocal, as GPU kernels do,
    for ``num_buckets=20, max_distance=1000``, causal, at ``|r| = 100``); just below a
    boundary a rounded-up quotient gives one bucket *more* (float32, causal
    ``num_buckets=83, max_distance=1000`` at ``|r| = 796``, where the exact quotient is
    38.999998). The exact answer is the one defined by the formula; a model trained with
    the float32 buckets uses those, and the difference is at most one bucket at a
    handful of distances.

    ``relative_position`` may be any integer array-like (lists, numpy integer dtypes up to
    int64/uint64; empty arrays give empty results); the keywords as
    :func:`t5_bucket_thresholds` (``num_buckets <= 2**11``, ``max_distance <= 2**53``).
    Raises ``TypeError`` for non-integer ``relative_position`` (floats, bools, complex
    numbers) or arguments (``bidirectional`` must be a real bool), ``ValueError`` for an
    odd ``num_buckets`` when bidirectional, fewer than one exact bucket,
    ``max_distance <= m`` or a value over its limit.
    """
    bidirectional, num_buckets, max_distance = _check_t5_config(bidirectional, num_buckets, max_distance)
    arr = as_integer_array(
        relative_position,
        "relative_position",
        what="integers (key position minus query position, a whole number of tokens)",
    )
    half, max_exact = _half_and_exact(bidirectional, num_buckets)
    # every |r| >= max_distance lands in the last bucket: clip first so that abs() cannot overflow
    lim = max_distance + 1
    if np.issubdtype(arr.dtype, np.unsignedinteger):
        # lim as a uint64 array: a Python int above the dtype's range (301 for uint8) is refused
        rel = np.minimum(arr, np.array(lim, dtype=np.uint64)).astype(np.int64)
    else:
        rel = np.clip(arr, -lim, lim).astype(np.int64)
    if bidirectional:
        offset = np.where(rel > 0, half, 0).astype(np.int64)
        n = np.abs(rel)
    else:
        offset = np.zeros(rel.shape, dtype=np.int64)
        n = np.maximum(-rel, 0)
    bounds = np.array(_thresholds(max_exact, half - max_exact, max_distance), dtype=np.int64)
    large = max_exact + np.searchsorted(bounds, n, side="right")
    return np.asarray(offset + np.where(n < max_exact, n, large), dtype=np.int64)  # 0-d stays an array


def t5_bias(
    bucket_table: object,
    q_len: int,
    k_len: int,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
    query_offset: int | None = 0,
) -> np.ndarray:
    r"""Position bias ``(H, q_len, k_len)`` from a learned bucket table ``(num_buckets, H)``.

    Entry ``[h, a, j]`` is ``bucket_table[bucket(j - i_a), h]`` with
    ``i_a = query_offset + a`` (T5's ``compute_bias``: queries ``0 .. q_len-1`` by
    default; ``query_offset=None`` puts the queries at the last ``q_len`` of the
    ``k_len`` positions, as in incremental decoding) and keys ``0 .. k_len-1``. The bias
    depends on ``j - i`` only, and the table has ``num_buckets * H`` entries whatever the
    lengths. T5 adds it to the attention logits (which it does not scale by
    :math:`1/\sqrt{d}`).

    ``bucket_table`` a 2-D real array-like ``(num_buckets, H)`` with ``H >= 1``, finite
    (integers promoted to float64; bools and complex numbers refused); ``q_len``,
    ``k_len`` positive ``int``; ``query_offset`` None or an ``int`` with
    ``|query_offset| <= 2**53``; the T5 keywords as :func:`t5_bucket_thresholds`. The
    result may have at most 2**28 entries (``H * q_len * k_len``). Every error names the
    argument.
    """
    table = as_real_array(bucket_table, "bucket_table", ndim=2)
    bidirectional, num_buckets, max_distance = _check_t5_config(bidirectional, num_buckets, max_distance)
    if table.shape[0] != num_buckets:
        raise ValueError(
            f"bucket_table must have num_buckets={num_buckets} rows (one per bucket), got shape {table.shape}"
        )
    q_len = check_length(q_len, "q_len")
    k_len = check_length(k_len, "k_len")
    if query_offset is None:
        if q_len > k_len:
            raise ValueError(
                f"with query_offset=None the queries are the last q_len of the k_len positions: "
                f"q_len must be at most k_len, got q_len={q_len}, k_len={k_len}"
            )
        query_offset = k_len - q_len
    query_offset = check_offset_int(query_offset, "query_offset")
    check_size((table.shape[1], q_len, k_len), "the bias (H = bucket_table.shape[1], q_len, k_len)")
    rel = _relative_grid(q_len, k_len, query_offset)
    buckets = t5_relative_position_bucket(
        rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    return np.moveaxis(table[buckets], -1, 0)


def shaw_relative_positions(
    q_len: int, k_len: int, max_relative_position: int, *, query_offset: int = 0
) -> np.ndarray:
    r"""Shaw et al.'s index matrix ``(q_len, k_len)``: ``clip(j - i, -K, K) + K``.

    ``i = query_offset + a`` for row ``a``, ``j`` the column; ``K`` =
    ``max_relative_position``. The values lie in ``0 .. 2K``: index ``K`` is the query
    itself, ``K + r`` a key ``r`` steps after it, ``0`` every key ``K`` or more steps
    before it and ``2K`` every key ``K`` or more steps after it (tensor2tensor's
    ``_generate_relative_positions_matrix`` convention). ``K = 0`` is allowed (one shared
    vector, i.e. no position information).

    ``q_len``, ``k_len`` positive ``int`` with ``q_len * k_len <= 2**28``;
    ``max_relative_position`` an ``int`` in ``0 .. 2**53``; ``query_offset`` an ``int``
    with ``|query_offset| <= 2**53``. Bools are refused; every error names the argument.
    """
    q_len = check_length(q_len, "q_len")
    k_len = check_length(k_len, "k_len")
    K = check_int(max_relative_position, "max_relative_position", 0, MAX_POSITION, MAX_POSITION_TEXT)
    query_offset = check_offset_int(query_offset, "query_offset")
    check_size((q_len, k_len), "the index matrix (q_len, k_len)")
    rel = _relative_grid(q_len, k_len, query_offset)
    return np.clip(rel, -K, K) + K


def shaw_relative_logits(
    q: object, k: object, rel_key_embeddings: object, max_relative_position: int, *, query_offset: int = 0
) -> np.ndarray:
    r"""Attention logits with relative key embeddings (Shaw et al., eqs. 4-5).

    :math:`e_{ij} = q_i\,(k_j + a^K_{ij})^\top / \sqrt{d}` with
    :math:`a^K_{ij} = w^K[\operatorname{clip}(j - i, -K, K) + K]`. ``q`` has shape
    ``(..., q_len, d)`` (already projected, :math:`x_i W^Q`), ``k`` ``(..., k_len, d)``
    (:math:`x_j W^K`), ``rel_key_embeddings`` ``(2K + 1, d)`` (shared by the leading
    batch/head axes, as Shaw et al. share it across heads). Returns ``(..., q_len, k_len)``.
    The relative term is formed as ``q @ w^T`` (``q_len x (2K+1)``) and then gathered,
    instead of materialising the ``q_len x k_len x d`` tensor :math:`a^K`.

    ``q``, ``k``, ``rel_key_embeddings``: non-empty, finite real array-likes (integers
    promoted to float64; bools and complex numbers refused) whose leading axes broadcast;
    ``max_relative_position`` and ``query_offset`` as :func:`shaw_relative_positions`.
    The result may have at most 2**28 entries; a result that overflows float64 is
    refused. Every error names the argument.
    """
    q = as_real_array(q, "q", min_ndim=2)
    k = as_real_array(k, "k", min_ndim=2)
    w = as_real_array(rel_key_embeddings, "rel_key_embeddings", ndim=2)
    K = check_int(max_relative_position, "max_relative_position", 0, MAX_POSITION, MAX_POSITION_TEXT)
    try:
        lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the leading (batch/head) axes of q and k must broadcast, got shapes {q.shape} and {k.shape}"
        ) from None
    check_size(lead + (q.shape[-2], k.shape[-2]), "the logits (..., q_len, k_len)")
    check_size(q.shape[:-1] + (w.shape[0],), "the relative term (..., q_len, 2K+1)")
    d = q.shape[-1]
    if k.shape[-1] != d or w.shape[1] != d:
        raise ValueError(
            f"q, k and rel_key_embeddings must share the last dimension, got {q.shape}, {k.shape}, {w.shape}"
        )
    if w.shape[0] != 2 * K + 1:
        raise ValueError(
            f"rel_key_embeddings must have 2*K+1 = {2 * K + 1} rows for max_relative_position={K}, "
            f"got shape {w.shape}"
        )
    idx = shaw_relative_positions(q.shape[-2], k.shape[-2], K, query_offset=query_offset)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below
        content = q @ np.swapaxes(k, -1, -2)
        rel_all = q @ w.T  # (..., q_len, 2K+1)
        rel = np.take_along_axis(rel_all, np.broadcast_to(idx, rel_all.shape[:-1] + idx.shape[-1:]), axis=-1)
        logits = (content + rel) / np.sqrt(d)
    return check_finite_result(
        logits, "q, k or rel_key_embeddings are too large: the logits overflow float64"
    )


__all__ = [
    "shaw_relative_logits",
    "shaw_relative_positions",
    "t5_bias",
    "t5_bucket_thresholds",
    "t5_relative_position_bucket",
]
