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

from collections.abc import Callable, Sequence

import numpy as np

from ._validation import check_array, check_finite_real, check_positive_int

NORMALISATIONS = ("endpoints", "fraction")


def integer_encoding(length: int) -> np.ndarray:
    """Positions ``0, 1, ..., length-1`` as a float64 column, shape ``(length, 1)``."""
    length = check_positive_int(length, "length")
    return np.arange(length, dtype=np.float64)[:, None]


def normalized_encoding(length: int, *, mode: str = "endpoints") -> np.ndarray:
    """Positions scaled into ``[0, 1]``, shape ``(length, 1)``.

    ``mode="endpoints"``: :math:`p/(L-1)`, first position 0 and last 1 (a single position
    maps to 0). ``mode="fraction"``: :math:`p/L`, values ``0, 1/L, ..., (L-1)/L``.
    """
    length = check_positive_int(length, "length")
    if mode not in NORMALISATIONS:
        raise ValueError(f"mode must be one of {NORMALISATIONS}, got {mode!r}")
    p = np.arange(length, dtype=np.float64)
    denominator = max(length - 1, 1) if mode == "endpoints" else length
    return (p / denominator)[:, None]


def binary_encoding(length: int, n_bits: int) -> np.ndarray:
    """Bits of each position, most significant first, shape ``(length, n_bits)``, values 0/1.

    Raises ``ValueError`` when ``length > 2**n_bits``: the bits could not tell the
    positions apart.
    """
    length = check_positive_int(length, "length")
    n_bits = check_positive_int(n_bits, "n_bits")
    if length > 2**n_bits:
        raise ValueError(f"{n_bits} bits distinguish only {2**n_bits} positions, got length={length}")
    p = np.arange(length, dtype=np.int64)[:, None]
    shifts = np.arange(n_bits - 1, -1, -1, dtype=np.int64)[None, :]
    return ((p >> shifts) & 1).astype(np.float64)


def sine_encoding(length: int, *, frequency: float = 1.0) -> np.ndarray:
    r"""A single sine wave :math:`\sin(\omega p)` as a float64 column, shape ``(length, 1)``.

    Bounded in :math:`[-1, 1]`. For :math:`\omega = 1` it is injective on the integers
    (:math:`\sin a = \sin b` would force :math:`a - b \in 2\pi\mathbb{Z}` or
    :math:`a + b \in \pi + 2\pi\mathbb{Z}`, impossible for distinct integers because
    :math:`\pi` is irrational), yet it folds (:math:`\sin p = \sin(\pi - p)`) and comes
    arbitrarily close to repeating, so distinct positions can get nearly equal values.
    """
    length = check_positive_int(length, "length")
    frequency = check_finite_real(frequency, "frequency")
    if frequency == 0.0:
        raise ValueError("frequency must be non-zero (sin(0 * p) = 0 for every position)")
    return np.sin(frequency * np.arange(length, dtype=np.float64))[:, None]


def _as_table(pe: object, name: str = "pe") -> np.ndarray:
    """``pe`` as a float64 ``(L, d)`` array with at least one row."""
    arr = check_array(pe, name, ndim=2).astype(np.float64)
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must have at least one row and one column, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def neighbour_distances(pe: np.ndarray) -> np.ndarray:
    r"""Euclidean distances :math:`\lVert PE_{p+1} - PE_p \rVert_2` between consecutive rows.

    ``pe`` has shape ``(L, d)`` with ``L >= 2``; the result has shape ``(L - 1,)``. For 0/1
    vectors (binary encodings) the squared distance is the Hamming distance.
    """
    arr = _as_table(pe)
    if arr.shape[0] < 2:
        raise ValueError(f"pe must have at least two rows (positions), got shape {arr.shape}")
    return np.linalg.norm(np.diff(arr, axis=0), axis=1)


def min_pairwise_distance(pe: np.ndarray) -> float:
    r"""Smallest :math:`\lVert PE_p - PE_q \rVert_2` over pairs of distinct positions :math:`p \ne q`.

    Zero means two positions share an encoding. For one column the distances are taken
    between sorted values (exact); for several columns all pairs are compared directly in
    blocks, without the cancellation-prone :math:`\lVert a\rVert^2 + \lVert b\rVert^2 - 2a\cdot b`.
    """
    arr = _as_table(pe)
    if arr.shape[0] < 2:
        raise ValueError(f"pe must have at least two rows (positions), got shape {arr.shape}")
    if arr.shape[1] == 1:
        return float(np.min(np.diff(np.sort(arr[:, 0]))))
    best = np.inf
    block = max(1, 2**22 // (arr.shape[0] * arr.shape[1]))
    for start in range(0, arr.shape[0] - 1, block):
        rows = arr[start : start + block]
        diff = rows[:, None, :] - arr[None, :, :]
        dist = np.sqrt(np.sum(diff * diff, axis=-1))
        idx = np.arange(start, start + rows.shape[0])
        dist[np.arange(rows.shape[0]), idx] = np.inf  # a position is not its own neighbour
        best = min(best, float(np.min(dist)))
    return best


# ---------------------------------------------------------------------------------------
# The requirements of chapter 2, as predicates. ``encode`` maps a sequence length L to the
# (L, d) table of encodings of positions 0..L-1, and raises ValueError when the encoding
# does not exist at that length (binary vectors beyond 2**n_bits positions); a predicate
# then returns False.
# ---------------------------------------------------------------------------------------

Encoder = Callable[[int], np.ndarray]


def _lengths(lengths: Sequence[int], name: str = "lengths") -> list[int]:
    if isinstance(lengths, (str, bytes)) or not isinstance(lengths, Sequence) or len(lengths) == 0:
        raise TypeError(f"{name} must be a non-empty sequence of positive integers, got {lengths!r}")
    return [check_positive_int(v, name) for v in lengths]


def _encode(encode: Encoder, length: int) -> np.ndarray | None:
    if not callable(encode):
        raise TypeError(f"encode must be a callable length -> (L, d) array, got {type(encode).__name__}")
    try:
        table = encode(length)
    except ValueError:
        return None
    table = _as_table(table, "encode(length)")
    if table.shape[0] != length:
        raise ValueError(f"encode({length}) must have {length} rows, got shape {table.shape}")
    return table


def is_bounded(encode: Encoder, lengths: Sequence[int], *, bound: float = 1.0) -> bool:
    r"""Bounded: :math:`\max_{p<L} \max_j |PE_L(p)_j| \le` ``bound`` for every ``L`` in ``lengths``."""
    bound = check_finite_real(bound, "bound")
    tables = [_encode(encode, n) for n in _lengths(lengths)]
    return all(t is not None and float(np.max(np.abs(t))) <= bound for t in tables)


def is_unique(encode: Encoder, lengths: Sequence[int]) -> bool:
    r"""Unique: :math:`PE_L(p) \ne PE_L(q)` for all :math:`p \ne q < L`, every ``L`` in ``lengths``.

    Exact (float64) distinctness; :func:`min_pairwise_distance` says by how much.
    """
    tables = [_encode(encode, n) for n in _lengths(lengths)]
    return all(t is not None and (t.shape[0] < 2 or min_pairwise_distance(t) > 0.0) for t in tables)


def is_length_consistent(encode: Encoder, lengths: Sequence[int], *, atol: float = 1e-12) -> bool:
    r"""Length-consistent: the encoding of position :math:`p` does not depend on the length.

    :math:`PE_{L_1}(p) = PE_{L_2}(p)` (up to ``atol``) for all lengths :math:`L_1 < L_2` in
    ``lengths`` and :math:`p < L_1`. Then the distance between positions 2 and 4 is the
    same in a 10-token and a 100-token sequence.
    """
    atol = check_finite_real(atol, "atol")
    ls = sorted(set(_lengths(lengths)))
    tables = [_encode(encode, n) for n in ls]
    if any(t is None for t in tables):
        return False
    return all(
        np.allclose(tables[j][: ls[i]], tables[i], rtol=0.0, atol=atol)
        for i in range(len(ls))
        for j in range(i + 1, len(ls))
    )


def is_shift_consistent(
    encode: Encoder, lengths: Sequence[int], *, offsets: Sequence[int] = (1,), rtol: float = 1e-9
) -> bool:
    r"""Shift-consistent: :math:`\lVert PE_L(p+k) - PE_L(p)\rVert_2` depends on :math:`k` only.

    For every ``L`` in ``lengths`` and ``k`` in ``offsets`` (with ``k < L``), the distances
    over :math:`p = 0, \dots, L-k-1` agree up to ``rtol`` (relative to their maximum).
    """
    rtol = check_finite_real(rtol, "rtol")
    ks = _lengths(offsets, "offsets")
    for n in _lengths(lengths):
        table = _encode(encode, n)
        if table is None:
            return False
        for k in ks:
            if k >= n:
                continue
            dist = np.linalg.norm(table[k:] - table[:-k], axis=1)
            if float(np.max(dist) - np.min(dist)) > rtol * max(float(np.max(dist)), 1e-300):
                return False
    return True


def is_defined_beyond(encode: Encoder, train_length: int, test_length: int) -> bool:
    """Defined beyond training: ``encode(test_length)`` exists (``test_length > train_length``)."""
    train_length = check_positive_int(train_length, "train_length")
    test_length = check_positive_int(test_length, "test_length")
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
    False when the encoding does not exist at ``test_length``.
    """
    tol = check_finite_real(tol, "tol")
    if tol < 0:
        raise ValueError(f"tol must be non-negative, got {tol}")
    if not is_defined_beyond(encode, train_length, test_length):
        return False
    seen = _encode(encode, train_length)
    new = _encode(encode, test_length)[train_length:]
    lo, hi = seen.min(axis=0), seen.max(axis=0)
    width = hi - lo
    return bool(np.all(new >= lo - tol * width) and np.all(new <= hi + tol * width))
