r"""Error-free float64 arithmetic and the frequencies carried beyond float64.

Internal: used by ``_table``, ``sinusoidal`` and ``analysis/decay``; not public API.

The tables and dot-product sums need angles :math:`p\,\omega_i` that are never rounded:
:math:`\omega_i = \mathrm{base}^{-2i/d}` is carried as a sum ``hi + lo`` of two float64
numbers (about 106 bits), products are split exactly (Veltkamp, Dekker), and sin/cos of
such an exact angle take one extra angle addition.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

# The (d_model, base) caches below pay: on one CPU, calls in turn (medians), float64 tables
# of 1024 x 64, 16384 x 512 and 65536 x 1024 took 0.46, 22.4 and 267 ms with the mpmath
# frequencies cached and 1.28, 29.7 and 325 ms with them computed again for each call.


@lru_cache(maxsize=64)
def correctly_rounded_frequencies(d_model: int, base: float) -> np.ndarray:
    # base ** (-2i/d) evaluated with 113-bit mpmath arithmetic and rounded once to
    # float64, so each entry is the float64 nearest to the exact real number. The plain
    # float64 formulas are not: ``base ** x`` can be 1 ulp off, ``exp(-x * log(base))``
    # up to 14 ulp for d_model <= 4096 (measured in chapter 3).
    import mpmath

    with mpmath.workprec(113):
        b = mpmath.mpf(base)
        values = [float(mpmath.power(b, mpmath.mpf(-2 * i) / d_model)) for i in range(d_model // 2)]
    out = np.array(values, dtype=np.float64)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=64)
def correctly_rounded_wavelengths(d_model: int, base: float) -> np.ndarray:
    # 2*pi * base ** (2i/d) with 113-bit mpmath arithmetic, rounded once to float64.
    import mpmath

    with mpmath.workprec(113):
        b = mpmath.mpf(base)
        two_pi = 2 * mpmath.pi
        values = [float(two_pi * mpmath.power(b, mpmath.mpf(2 * i) / d_model)) for i in range(d_model // 2)]
    out = np.array(values, dtype=np.float64)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=64)
def frequency_pairs(d_model: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    # omega_i as an unevaluated sum hi + lo of two float64 numbers: hi is the correctly
    # rounded frequency (the one `frequencies` returns), lo the rounding error, itself
    # rounded to float64 (|lo| <= 2^-53 |hi|), so that hi + lo equals omega_i to within
    # about 2^-106 relative (2^-53 of lo, plus the 2^-113 of the working precision).
    import mpmath

    hi = correctly_rounded_frequencies(d_model, base)
    with mpmath.workprec(113):
        b = mpmath.mpf(base)
        lo = [
            float(mpmath.power(b, mpmath.mpf(-2 * i) / d_model) - mpmath.mpf(float(h)))
            for i, h in enumerate(hi)
        ]
    lo = np.array(lo, dtype=np.float64)
    lo.setflags(write=False)
    return hi, lo


def split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Veltkamp splitting: a == big + small exactly, each half with at most 26 significant
    # bits, so products of halves are exact in float64 (valid for |a| < 2^996).
    c = a * 134217729.0  # 2^27 + 1
    big = c - (c - a)
    return big, a - big


def exact_sincos(p: np.ndarray, w_hi: np.ndarray, w_lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""sin and cos of the exact angle :math:`p\,\omega` (``p`` and ``w_*`` broadcast).

    The angle is carried as ``hi + delta``: ``hi = fl(p * w_hi)``, ``delta`` the exact
    rounding error of that product (Dekker's two-product) plus ``p * w_lo``. Then
    :math:`\sin(h + \delta) = \sin h \cos\delta + \cos h \sin\delta` (and likewise for cos),
    each sin/cos one float64 evaluation. The angle is exact to about
    :math:`|p|\,\omega\,2^{-106}`, so the result is within a few float64 rounding errors
    of the true value whatever :math:`|p|` (up to :math:`2^{53}`).
    """
    p_big, p_small = split(p)
    w_big, w_small = split(w_hi)
    hi = p * w_hi
    err = ((p_big * w_big - hi) + p_big * w_small + p_small * w_big) + p_small * w_small
    delta = err + p * w_lo
    sh, ch = np.sin(hi), np.cos(hi)
    sd, cd = np.sin(delta), np.cos(delta)
    return sh * cd + ch * sd, ch * cd - sh * sd


def two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a * b = hi + lo`` exactly (Dekker), for any finite float64 ``a``, ``b`` (broadcast).

    The mantissas (in ``[0.5, 1)``) are multiplied, so the split cannot overflow; the
    exponent is put back with ``ldexp`` (exact unless ``lo`` falls into the subnormal range,
    where its absolute error is below 2**-1074 times the scale).
    """
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    ma, mb = np.broadcast_arrays(ma, mb)
    hi = ma * mb
    ah, al = split(ma)
    bh, bl = split(mb)
    lo = ((ah * bh - hi) + ah * bl + al * bh) + al * bl
    e = ea + eb
    return np.ldexp(hi, e), np.ldexp(lo, e)


def cos_sum(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    # cos(hi + lo) for exact float64 parts: cos and sin of each part are correctly reduced.
    return np.cos(hi) * np.cos(lo) - np.sin(hi) * np.sin(lo)


def exact_quotient(a: np.ndarray, base: float) -> tuple[np.ndarray, np.ndarray]:
    """``a / base = q + r`` with ``q = fl(a / base)`` and the remainder ``r`` to full precision."""
    q = a / base
    ph, pl = two_product(q, np.float64(base))
    r = ((a - ph) - pl) / base  # a - ph is exact (Sterbenz): ph is within one ulp of a
    return q, r
