r"""The naive position encodings that motivate sinusoids (chapter 2).

- integer positions :math:`p` (unbounded);
- normalised positions :math:`p/(L-1)` or :math:`p/L` (bounded, but the gap between
  neighbours depends on the sequence length :math:`L`);
- binary vectors: the bits of :math:`p` (bounded, unique only below :math:`2^{n}`, and
  the distance between neighbours jumps at carries);
- a single sine :math:`\sin p` (bounded, injective on the integers, but it folds and
  nearly repeats).

It also states the requirements of chapter 2 as predicates on an encoder
``L -> (L, d) table``: :func:`is_bounded`, :func:`is_unique`, :func:`is_length_consistent`,
:func:`is_shift_consistent`, :func:`is_defined_beyond`, :func:`stays_in_training_range`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .._arrays import as_real_array
from .._validation import (
    check_callable,
    check_choice,
    check_finite_real,
    check_length,
    check_lengths,
    check_nonnegative_real,
    check_size,
)

NORMALISATIONS = ("endpoints", "fraction")
# min_pairwise_distance compares all pairs: rows**2 * columns coordinate differences.
# 5-80 ns each (measured; narrow tables cost the most): at most about 20 s.
MAX_PAIR_WORK = 2**28
MAX_PAIR_WORK_TEXT = "2**28"
MAX_LENGTHS = 1024  # entries of ``lengths``/``offsets`` in the predicates
_ENCODER_CALL = "length -> (L, d) array"  # what ``encode`` must be, for the error message


def integer_encoding(length: int) -> np.ndarray:
    """Positions ``0, 1, ..., length-1`` as a float64 column, shape ``(length, 1)``.

    ``length``: an integer (not a bool) in ``[1, 2**28]``; else ``TypeError``/``ValueError``.
    """
    length = check_length(length, "length")
    return np.arange(length, dtype=np.float64)[:, None]


def normalized_encoding(length: int, *, mode: str = "endpoints") -> np.ndarray:
    """Positions scaled into ``[0, 1]``, shape ``(length, 1)``, float64.

    ``mode="endpoints"``: :math:`p/(L-1)`, first position 0 and last 1 (a single position
    maps to 0). ``mode="fraction"``: :math:`p/L`, values ``0, 1/L, ..., (L-1)/L``. Each
    value is the correctly rounded quotient. ``length``: an integer in ``[1, 2**28]``;
    ``mode`` one of the two strings; else ``TypeError``/``ValueError`` naming them.
    """
    length = check_length(length, "length")
    mode = check_choice(mode, "mode", NORMALISATIONS)
    p = np.arange(length, dtype=np.float64)
    denominator = max(length - 1, 1) if mode == "endpoints" else length
    return (p / denominator)[:, None]


def binary_encoding(length: int, n_bits: int) -> np.ndarray:
    """Bits of each position, most significant first, shape ``(length, n_bits)``, values 0/1 (float64).

    ``length`` and ``n_bits`` are integers (not bools), ``length >= 1``, ``n_bits >= 1`` and
    ``length * n_bits <= 2**28`` (the size of the table). Raises ``ValueError`` when
    ``length > 2**n_bits``: the bits could not tell the positions apart. Every check is
    made without forming ``2**n_bits``, so a huge ``n_bits`` is refused at once.
    """
    length = check_length(length, "length")
    n_bits = check_length(n_bits, "n_bits")
    if (length - 1).bit_length() > n_bits:
        raise ValueError(f"{n_bits} bits distinguish only {2**n_bits} positions, got length={length}")
    check_size((length, n_bits), "the table (length, n_bits)")
    p = np.arange(length, dtype=np.int64)[:, None]
    out = np.zeros((length, n_bits), dtype=np.float64)
    low = min(n_bits, 63)  # positions are below 2**28: higher bits are zero
    shifts = np.arange(low - 1, -1, -1, dtype=np.int64)[None, :]
    out[:, n_bits - low :] = (p >> shifts) & 1
    return out


def _sin_exact_product(frequency: float, length: int) -> np.ndarray:
    # sin(frequency * p) for p = 0..length-1 with the product taken exactly. frequency is
    # m * 2**(e-53) with an integer |m| < 2**53, cut into chunks of 17, 18 and 18 bits; each
    # chunk times p (< 2**28) is exact in float64, and so is its scaling by a power of two,
    # so frequency * p = a1 + a2 + a3 exactly. sin and cos of each exact float64 part are
    # correctly reduced (libm), and the three rotations are multiplied as unit complex
    # numbers: a few ulp of error, whatever the size of the angle.
    mant, exp = math.frexp(abs(frequency))
    m = int(mant * 2**53)
    chunks = ((m >> 36, exp - 17), ((m >> 18) & 0x3FFFF, exp - 35), (m & 0x3FFFF, exp - 53))
    p = np.arange(length, dtype=np.float64)
    re = np.ones(length)
    im = np.zeros(length)
    for chunk, shift in chunks:
        if chunk == 0:
            continue
        a = np.ldexp(float(chunk) * p, shift)
        c, s = np.cos(a), np.sin(a)
        re, im = re * c - im * s, re * s + im * c
    return im if frequency > 0 else -im


def sine_encoding(length: int, *, frequency: float = 1.0) -> np.ndarray:
    r"""A single sine wave :math:`\sin(\omega p)` as a float64 column, shape ``(length, 1)``.

    Bounded in :math:`[-1, 1]`. For :math:`\omega = 1` it is injective on the integers
    (:math:`\sin a = \sin b` would force :math:`a - b \in 2\pi\mathbb{Z}` or
    :math:`a + b \in \pi + 2\pi\mathbb{Z}`, impossible for distinct integers because
    :math:`\pi` is irrational), yet it folds (:math:`\sin p = \sin(\pi - p)`) and comes
    arbitrarily close to repeating, so distinct positions can get nearly equal values.

    ``length``: an integer in ``[1, 2**28]``. ``frequency``: a finite non-zero real
    number with :math:`|\omega|\,(L-1)` at most the float64 maximum (about 1.8e308).
    The product :math:`\omega p` is formed exactly (not rounded to float64), so every
    entry is within a few ulp (absolute error below :math:`10^{-15}`) of the sine of the
    exact product, for every accepted frequency.
    """
    length = check_length(length, "length")
    frequency = check_finite_real(frequency, "frequency")
    if frequency == 0.0:
        raise ValueError("frequency must be non-zero (sin(0 * p) = 0 for every position)")
    if not math.isfinite(abs(frequency) * (length - 1)):
        raise ValueError(
            f"|frequency| * (length - 1) must be at most the float64 maximum (about 1.8e308), "
            f"got frequency={frequency}, length={length}"
        )
    return _sin_exact_product(frequency, length)[:, None]


def _distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distances between the rows of ``a`` and ``b`` (broadcast), over the last axis.

    Plain ``sqrt(sum(diff**2))`` where that is safe; rows whose differences overflow or
    whose squares would over- or underflow are recomputed with scaling (halving the
    operands when the difference itself overflows). A distance beyond the float64 range
    comes back as ``inf``.
    """
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        diff = a - b
        plain = np.sqrt(np.sum(diff * diff, axis=-1))
        top = np.max(np.abs(diff), axis=-1)
        redo = ~np.isfinite(plain) | ((top > 0) & (top < 2.0**-480)) | (top > 2.0**480)
        if not redo.any():
            return plain
        factor = np.ones_like(plain)
        overflowed = ~np.isfinite(top)
        if overflowed.any():
            half = 0.5 * a - 0.5 * b
            diff = np.where(overflowed[..., None], half, diff)
            factor = np.where(overflowed, 2.0, 1.0)
            top = np.max(np.abs(diff), axis=-1)
        safe = np.where(top > 0, top, 1.0)
        scaled = top * np.sqrt(np.sum((diff / safe[..., None]) ** 2, axis=-1)) * factor
        return np.where(redo, scaled, plain)


def neighbour_distances(pe: np.ndarray) -> np.ndarray:
    r"""Euclidean distances :math:`\lVert PE_{p+1} - PE_p \rVert_2` between consecutive rows.

    ``pe``: a 2-D array-like of finite real numbers of shape ``(L, d)``, ``L >= 2``,
    ``d >= 1`` (integer input is promoted to float64); the result is float64 of shape
    ``(L - 1,)``, each entry within a few ulp of the exact distance, also for entries
    near the float64 limits (the differences are scaled when needed). For 0/1 vectors
    (binary encodings) the squared distance is the Hamming distance. Raises
    ``TypeError``/``ValueError`` naming ``pe``, also when a distance exceeds the float64
    range.
    """
    arr = as_real_array(pe, "pe", ndim=2)
    if arr.shape[0] < 2:
        raise ValueError(f"pe must have at least two rows (positions), got shape {arr.shape}")
    out = _distances(arr[1:], arr[:-1])
    if not np.isfinite(out).all():
        raise ValueError("pe: a distance between neighbouring rows exceeds the float64 range (about 1.8e308)")
    return out


def min_pairwise_distance(pe: np.ndarray) -> float:
    r"""Smallest :math:`\lVert PE_p - PE_q \rVert_2` over pairs of distinct positions :math:`p \ne q`.

    Zero means two positions share an encoding. For one column the distances are taken
    between sorted values (exact); for several columns all pairs are compared directly in
    blocks, without the cancellation-prone :math:`\lVert a\rVert^2 + \lVert b\rVert^2 - 2a\cdot b`
    (and with scaling near the float64 limits), within a few ulp.

    ``pe``: as in :func:`neighbour_distances`, with ``L**2 * d <= 2**28`` when ``d > 1``
    (the pairs are compared one by one; larger tables are refused at once). Raises
    ``TypeError``/``ValueError`` naming ``pe``, also when every pair is farther apart than
    the float64 range.
    """
    arr = as_real_array(pe, "pe", ndim=2)
    rows, cols = arr.shape
    if rows < 2:
        raise ValueError(f"pe must have at least two rows (positions), got shape {arr.shape}")
    if cols == 1:
        with np.errstate(over="ignore"):
            best = float(np.min(np.diff(np.sort(arr[:, 0]))))
    else:
        work = rows * rows * cols
        if work > MAX_PAIR_WORK:
            raise ValueError(
                f"pe of shape {arr.shape} needs rows**2 * columns = {work} comparisons, more than the "
                f"limit {MAX_PAIR_WORK_TEXT}"
            )
        best = math.inf
        block = max(1, 2**22 // (rows * cols))
        for start in range(0, rows - 1, block):
            chunk = arr[start : start + block]
            dist = _distances(chunk[:, None, :], arr[None, :, :])
            idx = np.arange(start, start + chunk.shape[0])
            dist[np.arange(chunk.shape[0]), idx] = np.inf  # a position is not its own neighbour
            best = min(best, float(np.min(dist)))
    if not math.isfinite(best):
        raise ValueError("pe: every pair of rows is farther apart than the float64 range (about 1.8e308)")
    return best


# ---------------------------------------------------------------------------------------
# The requirements of chapter 2, as predicates. ``encode`` maps a sequence length L to the
# (L, d) table of encodings of positions 0..L-1, and raises ValueError when the encoding
# does not exist at that length (binary vectors beyond 2**n_bits positions); a predicate
# then returns False.
# ---------------------------------------------------------------------------------------

Encoder = Callable[[int], np.ndarray]


def _encode(encode: Encoder, length: int) -> np.ndarray | None:
    try:
        table = encode(length)
    except ValueError:
        return None
    table = as_real_array(table, "encode(length)", ndim=2)
    if table.shape[0] != length:
        raise ValueError(f"encode({length}) must have {length} rows, got shape {table.shape}")
    return table


def is_bounded(encode: Encoder, lengths: Sequence[int], *, bound: float = 1.0) -> bool:
    r"""Bounded: :math:`\max_{p<L} \max_j |PE_L(p)_j| \le` ``bound`` for every ``L`` in ``lengths``.

    Shared contract of the predicates: ``encode`` is a callable ``L -> (L, d)`` array-like
    of finite real numbers (a ``ValueError`` from it means "not defined at that length",
    and the predicate returns False); ``lengths`` (and ``offsets``) are non-empty
    sequences (lists, tuples, 1-D integer arrays) of at most 1024 integers in
    ``[1, 2**28]``; tolerances are finite and ``>= 0``. Bad arguments raise
    ``TypeError``/``ValueError`` naming them; a table that is not finite, not 2-D or has
    the wrong number of rows raises ``ValueError`` naming ``encode``.
    """
    check_callable(encode, "encode", _ENCODER_CALL)
    bound = check_nonnegative_real(bound, "bound")
    tables = [_encode(encode, n) for n in check_lengths(lengths, "lengths", max_entries=MAX_LENGTHS)]
    return all(t is not None and float(np.max(np.abs(t))) <= bound for t in tables)


def is_unique(encode: Encoder, lengths: Sequence[int]) -> bool:
    r"""Unique: :math:`PE_L(p) \ne PE_L(q)` for all :math:`p \ne q < L`, every ``L`` in ``lengths``.

    Exact (float64) distinctness; :func:`min_pairwise_distance` says by how much (and
    limits the table size). Arguments as in :func:`is_bounded`.
    """
    check_callable(encode, "encode", _ENCODER_CALL)
    tables = [_encode(encode, n) for n in check_lengths(lengths, "lengths", max_entries=MAX_LENGTHS)]
    return all(t is not None and (t.shape[0] < 2 or _has_distinct_rows(t)) for t in tables)


def _has_distinct_rows(table: np.ndarray) -> bool:
    # Exact test (no distance): sort the rows lexicographically and compare neighbours.
    order = np.lexsort(table.T[::-1])
    ordered = table[order]
    return not bool(np.any(np.all(ordered[1:] == ordered[:-1], axis=1)))


def is_length_consistent(encode: Encoder, lengths: Sequence[int], *, atol: float = 1e-12) -> bool:
    r"""Length-consistent: the encoding of position :math:`p` does not depend on the length.

    :math:`PE_{L_1}(p) = PE_{L_2}(p)` (up to ``atol``) for all lengths :math:`L_1 < L_2` in
    ``lengths`` and :math:`p < L_1`. Then the distance between positions 2 and 4 is the
    same in a 10-token and a 100-token sequence. Arguments as in :func:`is_bounded`.
    """
    check_callable(encode, "encode", _ENCODER_CALL)
    atol = check_nonnegative_real(atol, "atol")
    ls = sorted(set(check_lengths(lengths, "lengths", max_entries=MAX_LENGTHS)))
    tables = [_encode(encode, n) for n in ls]
    if any(t is None for t in tables):
        return False
    for i in range(len(ls)):
        for j in range(i + 1, len(ls)):
            longer, shorter = tables[j][: ls[i]], tables[i]
            if longer.shape != shorter.shape:
                return False
            with np.errstate(over="ignore"):
                if not bool(np.all(np.abs(longer - shorter) <= atol)):
                    return False
    return True


def is_shift_consistent(
    encode: Encoder, lengths: Sequence[int], *, offsets: Sequence[int] = (1,), rtol: float = 1e-9
) -> bool:
    r"""Shift-consistent: :math:`\lVert PE_L(p+k) - PE_L(p)\rVert_2` depends on :math:`k` only.

    For every ``L`` in ``lengths`` and ``k`` in ``offsets`` (with ``k < L``), the distances
    over :math:`p = 0, \dots, L-k-1` agree up to ``rtol`` (relative to their maximum).
    Arguments as in :func:`is_bounded`; a distance beyond the float64 range raises
    ``ValueError`` naming ``encode``.
    """
    check_callable(encode, "encode", _ENCODER_CALL)
    rtol = check_nonnegative_real(rtol, "rtol")
    ks = check_lengths(offsets, "offsets", max_entries=MAX_LENGTHS)
    for n in check_lengths(lengths, "lengths", max_entries=MAX_LENGTHS):
        table = _encode(encode, n)
        if table is None:
            return False
        for k in ks:
            if k >= n:
                continue
            dist = _distances(table[k:], table[:-k])
            if not np.isfinite(dist).all():
                raise ValueError(f"encode({n}): a distance between rows exceeds the float64 range")
            if float(np.max(dist) - np.min(dist)) > rtol * max(float(np.max(dist)), 1e-300):
                return False
    return True


def is_defined_beyond(encode: Encoder, train_length: int, test_length: int) -> bool:
    """Defined beyond training: ``encode(test_length)`` exists (``test_length > train_length``).

    ``train_length`` and ``test_length``: integers in ``[1, 2**28]``; ``encode`` as in
    :func:`is_bounded`.
    """
    check_callable(encode, "encode", _ENCODER_CALL)
    train_length = check_length(train_length, "train_length")
    test_length = check_length(test_length, "test_length")
    if test_length <= train_length:
        raise ValueError(f"test_length must exceed train_length, got {test_length} <= {train_length}")
    return _encode(encode, test_length) is not None


def stays_in_training_range(
    encode: Encoder, train_length: int, test_length: int, *, tol: float = 0.01
) -> bool:
    r"""In range: unseen positions look like seen ones, coordinate by coordinate.

    With :math:`[lo_j, hi_j]` the range of coordinate :math:`j` over the training positions
    :math:`0..L_{train}-1` and :math:`w_j = hi_j - lo_j`, every unseen position
    :math:`L_{train} \le p < L_{test}` must satisfy
    :math:`lo_j - \mathrm{tol}\, w_j \le PE(p)_j \le hi_j + \mathrm{tol}\, w_j`.
    False when the encoding does not exist at ``test_length``. Arguments as in
    :func:`is_defined_beyond`, ``tol`` finite and ``>= 0``.
    """
    check_callable(encode, "encode", _ENCODER_CALL)
    tol = check_nonnegative_real(tol, "tol")
    if not is_defined_beyond(encode, train_length, test_length):
        return False
    seen = _encode(encode, train_length)
    new = _encode(encode, test_length)[train_length:]
    if seen is None or seen.shape[1] != new.shape[1]:
        return False
    lo, hi = seen.min(axis=0), seen.max(axis=0)
    if tol == 0.0:
        return bool(np.all(new >= lo) and np.all(new <= hi))
    with np.errstate(over="ignore"):
        margin = tol * (hi - lo)  # may be +inf: then nothing is out of range on that side
        return bool(np.all(new >= lo - margin) and np.all(new <= hi + margin))
