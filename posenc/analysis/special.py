r"""The cosine integral :math:`\mathrm{Ci}`, in float64 without SciPy.

:math:`\mathrm{Ci}(x) = -\int_x^\infty \cos(s)/s\,ds = \gamma + \ln x - \mathrm{Cin}(x)`
with :math:`\mathrm{Cin}(x) = \int_0^x (1-\cos s)/s\,ds` (DLMF 6.2.11). Chapter 7's decay
law :math:`J(k) = (\mathrm{Ci}(|k|) - \mathrm{Ci}(|k|/b))/\ln b` (:mod:`posenc.analysis.decay`) is
built on it.
"""

from __future__ import annotations

import numpy as np

from .._arrays import as_offsets

EULER_GAMMA = 0.57721566490153286060651209008240243
SERIES_MAX = 4.0  # |x| up to which Ci uses its power series; the continued fraction above


def cin_series(x: np.ndarray) -> np.ndarray:
    # Cin(x) = int_0^x (1 - cos t)/t dt = sum_{n>=1} (-1)^(n+1) x^(2n) / (2n (2n)!), |x| <= 4.
    # At |x| = 4 the 24th term is below 1e-30 and no term exceeds 4 (Cin(4) = 2.1): at most
    # one bit is lost to cancellation.
    x2 = x * x
    term = np.ones_like(x)  # x^(2n) / (2n)!, built up term by term
    total = np.zeros_like(x)
    for n in range(1, 25):
        term = term * x2 / ((2 * n - 1) * (2 * n))
        total += (1.0 if n % 2 else -1.0) * term / (2 * n)
    return total


def ci_continued_fraction(x: np.ndarray) -> np.ndarray:
    # Ci(x) = -Re E1(i x) for x > 0, with E1(z) = e^{-z} / (z + 1 - 1/(z + 3 - 4/(z + 5 - ...)))
    # (the even form of the continued fraction, DLMF 6.9), evaluated by the modified Lentz
    # method. It converges for x >= 4 in at most ~30 steps, faster for larger x.
    tiny = 1e-300
    b = 1.0 + 1j * x
    c = np.full(x.shape, 1.0 / tiny, dtype=complex)
    d = 1.0 / b
    h = d.copy()
    for i in range(2, 200):
        a = -float((i - 1) ** 2)
        b = b + 2.0
        d = 1.0 / (a * d + b)
        c = b + a / c
        delta = c * d
        h = h * delta
        if np.max(np.abs(delta - 1.0)) < 1e-17:
            break
    e1 = (np.cos(x) - 1j * np.sin(x)) * h
    return -e1.real


def cosine_integral(x: object) -> np.ndarray | float:
    r"""The cosine integral :math:`\mathrm{Ci}(x) = \gamma + \ln x - \mathrm{Cin}(x)`, :math:`x > 0`.

    :math:`\mathrm{Ci}(x) = -\int_x^\infty \cos(s)/s\,ds`, and
    :math:`\mathrm{Cin}(x) = \int_0^x (1-\cos s)/s\,ds` (DLMF 6.2.11). For :math:`x \le 4`
    the power series of :math:`\mathrm{Cin}` is summed (24 terms, at most one bit lost to
    cancellation); for :math:`x > 4`, :math:`\mathrm{Ci}(x) = -\operatorname{Re} E_1(ix)`
    from the continued fraction of :math:`E_1` (modified Lentz). Float64, vectorised; the
    error is below :math:`2\cdot 10^{-15}\max(1, |\mathrm{Ci}(x)|)` (measured against
    mpmath for :math:`10^{-10} \le x \le 10^9` in the tests), so near a zero of Ci the
    relative error is larger. Large :math:`\mathrm{Ci}(x)
    \sim \sin(x)/x` is limited by float64 ``sin``/``cos`` of a large argument, which are
    correctly rounded for the exact float64 ``x``.

    Returns a float for a scalar ``x``, else an array of the same shape. Raises
    ``TypeError`` for non-real input and ``ValueError`` unless every ``x`` is finite and
    positive.
    """
    arr, scalar = as_offsets(x, "x")
    if np.any(arr <= 0):
        raise ValueError("x must be positive (Ci has a logarithmic singularity at 0)")
    out = np.empty_like(arr)
    small = arr <= SERIES_MAX
    xs = arr[small]
    out[small] = EULER_GAMMA + np.log(xs) - cin_series(xs)
    if np.any(~small):
        out[~small] = ci_continued_fraction(arr[~small])
    return scalar_or_array(out, scalar)


def scalar_or_array(values: np.ndarray, scalar: bool) -> np.ndarray | float:
    return float(values.reshape(())) if scalar else values
