r"""How RoPE's frequencies are spent: position against context length.

With :math:`\theta_i = \mathrm{base}^{-2i/d}` (pair :math:`i = 0, \dots, d/2-1`), three
quantities of the recent literature on RoPE depend only on the frequencies:

* the **long-term similarity** :math:`B(m) = \sum_{i=0}^{d/2-1}\cos(m\theta_i)` (Men, Xu
  et al. 2024, "Base of RoPE Bounds Context Length"): for a query :math:`\mathbf{q}` with
  uncorrelated zero-mean coordinates of variance :math:`\sigma^2`, a key
  :math:`\mathbf{q} + \boldsymbol{\varepsilon}` (noise independent of :math:`\mathbf{q}`)
  beats an independent key by :math:`2\sigma^2 B(m)` in expectation at offset :math:`m`
  (:func:`long_term_similarity`);
* the **smallest base** for which :math:`B(m) \ge 0` at every offset :math:`0 \le m < L`
  of a context of :math:`L` tokens (:func:`min_base_for_context`);
* the **critical dimension** (Liu et al. 2023, "Scaling Laws of RoPE-based
  Extrapolation"): the number of dimensions whose period :math:`2\pi/\theta_i` is shorter
  than the training length :math:`T`, :math:`d_{extra} = 2\lceil (d/2)\log_{\mathrm{base}}
  (T/2\pi)\rceil` (:func:`critical_dimension`);

and p-RoPE (Barbero et al., ICLR 2025) keeps only the fastest pairs
(:func:`p_rope_frequencies`).
"""

from __future__ import annotations

import math

import numpy as np

from ._arrays import as_positions
from ._validation import (
    check_base,
    check_finite_real,
    check_positive_int,
    check_positive_real,
    check_width,
    is_int,
)
from .sinusoidal import frequencies

__all__ = ["critical_dimension", "long_term_similarity", "min_base_for_context", "p_rope_frequencies"]

_FIRST_CHUNK, _LAST_CHUNK = 128, 16384  # offsets per block in min_base_for_context: doubling
_MAX_SCAN_WORK = 2**20 * 200  # L * d/2 * steps_per_decade allowed in min_base_for_context


def long_term_similarity(distances: object, d_head: int, *, base: float = 10000.0) -> np.ndarray:
    r"""Men et al.'s :math:`B(m) = \sum_{i=0}^{d/2-1} \cos(m\,\theta_i)`, one value per distance.

    ``distances`` an ``int`` ``K`` (distances ``0..K-1``) or a non-empty 1-D array of real
    distances (``|m| <= 2**53``); ``d_head`` a positive even integer; ``base > 1``.
    :math:`B(0) = d/2` and :math:`B(-m) = B(m)`. ``len(distances) * d_head / 2`` is at most
    2**28. Bad arguments raise ``TypeError``/``ValueError`` naming them.

    Accuracy: the angles :math:`m\,\theta_i` are formed in float64 (unlike
    :func:`~posenc.sinusoidal.sinusoidal_encoding`, which never rounds them), so each
    cosine may be off by a small multiple of :math:`|m|\,\theta_i\,2^{-53}` (about
    :math:`10^{-10}` at :math:`|m| = 10^{6}`), of order 1 near :math:`|m| = 2^{53}`, where
    the result is only the sum of cosines of the rounded angles.
    """
    d = check_width(d_head, "d_head")
    m = as_positions(distances, "distances", per_position=d // 2, what="the angles (distances, d_head / 2)")
    base = check_base(base)
    return np.cos(np.outer(m, frequencies(d, base))).sum(axis=1)


def _first_negative(theta: np.ndarray, context_length: int) -> int | None:
    """The first offset ``0 <= m < context_length`` with ``sum_i cos(m theta_i) < 0``, or None."""
    start, chunk = 0, _FIRST_CHUNK  # blocks that double: a bad base usually fails early
    while start < context_length:
        m = np.arange(start, min(context_length, start + chunk), dtype=np.float64)
        neg = np.flatnonzero(np.cos(np.outer(m, theta)).sum(axis=1) < 0.0)
        if neg.size:
            return start + int(neg[0])
        start, chunk = start + chunk, min(2 * chunk, _LAST_CHUNK)
    return None


def min_base_for_context(
    context_length: object, d_head: int = 128, *, steps_per_decade: int = 200, start: float = 2.0
) -> float | np.ndarray:
    r"""The smallest base on a grid for which :math:`B(m) \ge 0` at every offset :math:`0 \le m < L`.

    The grid is :math:`b_j = 10^{j/\texttt{steps\_per\_decade}}` for :math:`b_j \ge`
    ``start`` (200 steps per decade: neighbouring bases differ by 1.16 %); the bases are
    tried from small to large and the first one whose :math:`B` (see
    :func:`long_term_similarity`) stays non-negative on ``0 .. L - 1`` is returned. The scan
    cannot be replaced by a bisection: the set of good bases is not an interval (a base
    somewhat above the result can fail again).

    ``context_length`` :math:`L` a positive integer at most 2**22, or a 1-D sequence of them
    (one sweep of the grid serves them all; the result is then a float64 array in the same
    order); ``d_head`` a positive even integer, ``steps_per_decade`` a positive integer,
    ``start > 1``. Each base tried costs up to :math:`L \cdot d/2` cosines and the number of
    bases grows with ``steps_per_decade``, so the scan is refused (``ValueError``, at once)
    when :math:`L_{\max} \cdot (d/2) \cdot \texttt{steps\_per\_decade} > 2^{20} \cdot 200`
    (at the default grid, :math:`L = 16384` with :math:`d = 128`, about 2 s here; the
    slowest allowed requests, small heads whose answer is a huge base, take about 10 s).
    With :math:`d = 2` the one frequency is 1 whatever the base, :math:`B(m) = \cos m`,
    and no base serves :math:`L \ge 3`: refused with ``ValueError``.
    """
    scalar = is_int(context_length)
    if scalar:
        items = [context_length]
    else:
        sequence = np.asarray(context_length, dtype=object)
        if sequence.ndim > 1:
            raise ValueError(
                f"context_length must be a positive int or a 1-D sequence of them, got shape {sequence.shape}"
            )
        items = list(sequence) if sequence.ndim == 1 else [context_length]  # a scalar: checked below
    if not items:
        raise ValueError("context_length must hold at least one length")
    lengths = [check_positive_int(v, "context_length", 2**22, "2**22") for v in items]
    d = check_width(d_head, "d_head")
    steps = check_positive_int(steps_per_decade, "steps_per_decade", 10_000)
    start = check_finite_real(start, "start")
    if start <= 1.0:
        raise ValueError(f"start must be a finite number greater than 1, got {start}")
    if start > 1e300:
        raise ValueError(f"start must be at most 1e300 (the largest base the scan tries), got {start}")
    longest = max(lengths)
    if longest * (d // 2) * steps > _MAX_SCAN_WORK:
        raise ValueError(
            f"context_length * d_head / 2 * steps_per_decade must be at most 2**20 * 200 (the scan "
            f"would take minutes), got {longest} * {d // 2} * {steps}"
        )
    if d == 2 and longest >= 3:
        raise ValueError(
            f"with d_head = 2 the one frequency is 1 for every base and B(m) = cos(m) < 0 at m = 2: "
            f"no base serves context_length {longest} (at most 2)"
        )
    found: dict[int, float] = {}
    j = math.ceil(steps * math.log10(start) - 1e-9)
    while len(found) < len(set(lengths)):
        b = 10.0 ** (j / steps)
        if b > 1e300:  # unreachable for the allowed lengths; a guard against an endless loop
            raise ValueError(f"no base up to 1e300 keeps B(m) >= 0 for m < {longest}")
        theta = np.power(b, -np.arange(0, d, 2, dtype=np.float64) / d)
        first = _first_negative(theta, longest)
        reach = longest if first is None else first  # B >= 0 on 0 .. reach - 1
        for length in set(lengths) - set(found):
            if length <= reach:
                found[length] = b
        j += 1
    if scalar:
        return found[lengths[0]]
    return np.array([found[length] for length in lengths], dtype=np.float64)


def critical_dimension(d_head: int, base: float, train_length: float) -> int:
    r"""Liu et al.'s critical dimension :math:`d_{extra} = 2\lceil (d/2)\log_{\mathrm{base}}(T/2\pi)\rceil`.

    Twice the number of pairs whose period :math:`2\pi\,\mathrm{base}^{2i/d}` is shorter
    than the training length :math:`T`, i.e. the pairs that turn through at least one full
    circle during training, clipped to ``0 .. d_head``. Counted directly from the periods
    (a pair whose period equals :math:`T` exactly is not counted, as in the ceiling).
    ``d_head`` a positive even integer, ``base > 1``, ``train_length`` a positive finite
    number.
    """
    d = check_width(d_head, "d_head")
    base = check_base(base)
    t = check_positive_real(train_length, "train_length")
    with np.errstate(over="ignore"):  # a period beyond float64 (base near 1e308) is inf, not < t
        periods = 2.0 * math.pi / frequencies(d, base)
    return 2 * int(np.count_nonzero(periods < t))


def p_rope_frequencies(d_head: int, p: float, *, base: float = 10000.0) -> np.ndarray:
    r"""p-RoPE's frequencies: RoPE's :math:`\theta_i` for the fastest pairs, 0 for the others.

    The fastest :math:`\lfloor p\,d/2 + 10^{-12}\rfloor` pairs are kept (the
    :math:`10^{-12}` so that a ``p`` written in decimal keeps the pairs it means: the
    double nearest 0.29 is just below it, and ``p=0.29`` with ``d_head=200`` keeps 29
    pairs, not 28): :math:`p = 1` is RoPE,
    :math:`p = 0` no rotation at all (NoPE). The kept pairs keep the
    frequencies of the full head (they are not respaced); a pair with frequency 0 is never
    turned, so its contribution to the score does not depend on position. Use the result
    with :func:`~posenc.rope_nd.apply_rope_nd` (one axis). ``p`` a real number in [0, 1].
    """
    d = check_width(d_head, "d_head")
    base = check_base(base)
    p = check_finite_real(p, "p")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    theta = frequencies(d, base).copy()
    theta[int(math.floor(p * (d // 2) + 1e-12)) :] = 0.0
    return theta
