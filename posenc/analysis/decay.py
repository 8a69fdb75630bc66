r"""Decay of the sinusoidal dot product with distance: the sum, its integral, its regimes.

For an even width :math:`d`, :math:`\omega_i = b^{-2i/d}` (:math:`b` = ``base``,
:math:`\lambda = \ln b`) and an offset :math:`k = m - n`, the dot product of two rows of
the sinusoidal table is the sum of :math:`d/2` cosines

.. math:: D(k) = \sum_{i=0}^{d/2-1} \cos(k\,\omega_i).

With :math:`t_i = 2i/d` it is :math:`d/2` times a left Riemann sum (spacing :math:`2/d`) of

.. math:: J(k) = \int_0^1 \cos(k\,b^{-t})\,dt = \frac{\mathrm{Ci}(|k|) - \mathrm{Ci}(|k|/b)}{\lambda},
          \qquad J(0) = 1,

where :math:`\mathrm{Ci}(x) = -\int_x^\infty \cos(s)/s\,ds` is the cosine integral (the
substitution :math:`s = |k| e^{-\lambda t}` gives the closed form). The asymptotic regimes of
:math:`(d/2)J(k)` are

* :math:`|k| \ll 1`: :math:`\tfrac{d}{2}\bigl(1 - \tfrac{k^2}{2}\langle\omega^2\rangle\bigr)`;
* :math:`1 \ll |k| \ll b`: :math:`\tfrac{d}{2}\,(\lambda - \ln|k| - \gamma)/\lambda`, a
  *logarithmic* decay;
* :math:`|k| \gg b`: :math:`\tfrac{d}{2}\,(\sin|k| - b\sin(|k|/b))/(|k|\lambda)`, the
  :math:`O(1/|k|)` tail, with the large constant :math:`b/\lambda`.

The sum follows :math:`(d/2)J` (up to the endpoint term :func:`endpoint_correction`) only
while :math:`|k| < \pi d/\lambda` (:func:`aliasing_onset`); beyond, its fastest terms alias
and :math:`D` becomes a sum of pseudo-random-phase cosines whose mean square tends to
:math:`d/4` (:func:`noise_floor`).

Input contract of every function here: an offset ``k`` (``x`` for
:func:`~posenc.analysis.special.cosine_integral`) is a real scalar or a non-empty
array-like of any shape of finite real numbers (integers up to 2**53 in magnitude;
:func:`endpoint_correction` and
:func:`far_asymptote` also floats only up to 2**53); ``d_model`` is an even integer in
``[2, 2**16]``; ``base`` a finite real number ``> 1``. Bools, complex numbers, strings,
NaN and infinities raise ``TypeError``/``ValueError`` naming the argument, and so does a
result beyond the float64 range. Scalars give floats, arrays float64 arrays of their shape.

Only numpy is imported; nothing here needs mpmath or sympy.
"""

from __future__ import annotations

import math

import numpy as np

from .._arrays import as_offsets, check_finite_result
from .._exact import cos_sum, exact_quotient, split, two_product
from .._validation import MAX_POSITION, check_base, check_width
from .special import (
    EULER_GAMMA,
    SERIES_MAX,
    ci_continued_fraction,
    cin_series,
    scalar_or_array,
)

_CHUNK = 1 << 22  # cosines evaluated per block in dot_product_sum (bounds memory)
# dot_product_sum evaluates k.size * d_model / 2 terms (about 30 ns each here): at most this
# many, a few seconds (2**31 was over a minute).
MAX_TERMS = 2**27
MAX_TERMS_TEXT = "2**27"


def _check_quotient_range(arr: np.ndarray, name: str = "k") -> None:
    # k/b is carried as quotient + remainder (about 106 bits): exact enough for |k| <= 2**53.
    if float(np.max(np.abs(arr))) > MAX_POSITION:
        raise ValueError(
            f"{name} must have magnitude at most 2**53 here (k/base is reduced to about 106 bits), "
            f"got {float(np.max(np.abs(arr)))!r}"
        )


def _finite(values: np.ndarray, what: str) -> np.ndarray:
    return check_finite_result(values, f"{what} is beyond the float64 range (about 1.8e308) for this k")


def _ci_difference(k: np.ndarray, base: float) -> np.ndarray:
    # Ci(k) - Ci(k/base) for k > 0 without the cancellation of the two logarithms:
    # for small arguments Ci(x) = gamma + ln x - Cin(x), so the difference of the gamma + ln
    # parts is exactly ln(base).
    lam = math.log(base)
    out = np.empty_like(k)
    lo = k / base
    both_small = k <= SERIES_MAX
    out[both_small] = lam - cin_series(k[both_small]) + cin_series(lo[both_small])
    mixed = (~both_small) & (lo <= SERIES_MAX)
    if np.any(mixed):
        ci_lo = EULER_GAMMA + np.log(lo[mixed]) - cin_series(lo[mixed])
        out[mixed] = ci_continued_fraction(k[mixed]) - ci_lo
    both_large = lo > SERIES_MAX
    if np.any(both_large):
        out[both_large] = ci_continued_fraction(k[both_large]) - ci_continued_fraction(lo[both_large])
    return out


def oscillatory_integral(k: object, base: float = 10000.0) -> np.ndarray | float:
    r"""The normalised integral :math:`J(k) = \int_0^1 \cos(k\,b^{-t})\,dt` in closed form.

    With :math:`\lambda = \ln b` and :math:`s = |k| e^{-\lambda t}`,
    :math:`J(k) = \frac{1}{\lambda}\int_{|k|/b}^{|k|} \frac{\cos s}{s}\,ds
    = \frac{\mathrm{Ci}(|k|) - \mathrm{Ci}(|k|/b)}{\lambda}` for :math:`k \ne 0`, and
    :math:`J(0) = 1`. :math:`J` is even, :math:`J(k) = 1 - O(k^2)` near 0, and
    :math:`(d/2)J(k)` is the integral approximation of the dot product
    (:func:`integral_approximation`). The difference of the two Ci values is formed
    without cancelling logarithms, so :math:`J` has an absolute error below
    :math:`4\cdot 10^{-15}/\ln b + 2^{-51}` (the last term: rounding of a value near 1) for
    every finite ``k`` (scalar or array, any shape).

    Raises ``TypeError``/``ValueError`` naming ``k`` or ``base`` for non-real or
    non-finite offsets and for ``base <= 1``.
    """
    arr, scalar = as_offsets(k, "k")
    base = check_base(base)
    a = np.abs(arr).ravel()
    out = np.ones_like(a)
    nz = a > 0
    out[nz] = _ci_difference(a[nz], base) / math.log(base)
    return scalar_or_array(out.reshape(arr.shape), scalar)


def integral_approximation(k: object, d_model: int, base: float = 10000.0) -> np.ndarray | float:
    r"""The continuum approximation :math:`\tfrac{d}{2}\int_0^1 \cos(k\,b^{-t})\,dt` of the dot product.

    Equals :math:`\tfrac{d}{2}\,(\mathrm{Ci}(|k|) - \mathrm{Ci}(|k|/b))/\ln b`
    (:func:`oscillatory_integral` times :math:`d/2`): :math:`d/2` terms, one per
    (sin, cos) pair, spaced :math:`\Delta t = 2/d`. Raises ``TypeError``/``ValueError``
    naming the argument for bad ``k``, an odd or non-positive ``d_model``, or
    ``base <= 1``.
    """
    d_model = check_width(d_model, "d_model")
    j = oscillatory_integral(k, base)
    return (d_model / 2) * j


def dot_product_sum(k: object, d_model: int, base: float = 10000.0) -> np.ndarray | float:
    r"""The exact dot product :math:`D(k) = PE_m\cdot PE_{m+k} = \sum_{i=0}^{d/2-1}\cos(k\,\omega_i)`.

    :math:`\omega_i = b^{-2i/d}` are the correctly rounded float64 frequencies of
    :func:`~posenc.sinusoidal.frequencies`. Vectorised over ``k`` (scalar or array of any shape; the
    cosines are evaluated in blocks, so long arrays and wide models do not exhaust
    memory). Each product :math:`k\omega_i` is formed exactly, as the sum of two float64
    numbers (Dekker's two-product), and its cosine from theirs, so every term is within a
    few ulp of :math:`\cos(k\omega_i)` for every finite float64 ``k``, however large:
    :math:`|D_{\mathrm{computed}} - D| \le d\cdot 2^{-50}`.

    Accepted: ``k`` a real scalar or non-empty array-like of finite real numbers (integers
    up to 2**53 in magnitude); ``d_model`` an even integer in ``[2, 2**16]``; ``base`` a
    finite real number ``> 1``; ``k.size * d_model / 2 <= 2**27`` (a few seconds; refused at once). Raises
    ``TypeError``/``ValueError`` naming the argument otherwise.
    """
    from ..sinusoidal import frequencies

    arr, scalar = as_offsets(k, "k")
    d_model = check_width(d_model, "d_model")
    base = check_base(base)
    terms = arr.size * (d_model // 2)
    if terms > MAX_TERMS:
        raise ValueError(
            f"k.size * d_model / 2 = {terms} cosines exceed the limit {MAX_TERMS_TEXT}: pass fewer offsets"
        )
    omega = frequencies(d_model, base)
    w_hi, w_lo = split(omega)  # 0 < omega <= 1: no overflow
    flat = arr.ravel()
    out = np.empty_like(flat)
    step = max(1, _CHUNK // omega.size)
    for start in range(0, flat.size, step):
        block = flat[start : start + step]
        out[start : start + step] = _cos_products(block, omega, w_hi, w_lo).sum(axis=1)
    return scalar_or_array(out.reshape(arr.shape), scalar)


def _cos_products(k: np.ndarray, omega: np.ndarray, w_hi: np.ndarray, w_lo: np.ndarray) -> np.ndarray:
    # cos(k_j * omega_i) with the product exact: k * omega = hi + lo (Dekker). For |k| above
    # 2**900 the split would overflow and the general (mantissa-scaled) two-product is used.
    big = float(np.max(np.abs(k))) > 2.0**900
    if big:
        hi, lo = two_product(k[:, None], omega[None, :])
    else:
        k_hi, k_lo = split(k)
        hi = k[:, None] * omega[None, :]
        lo = (((k_hi[:, None] * w_hi - hi) + k_hi[:, None] * w_lo) + k_lo[:, None] * w_hi) + k_lo[
            :, None
        ] * w_lo
    if not big and float(np.max(np.abs(hi))) < 2.0**26:
        # |lo| <= 2**-28: cos(lo) rounds to 1 and sin(lo) to lo
        return np.cos(hi) - np.sin(hi) * lo
    return cos_sum(hi, lo)


def endpoint_correction(k: object, base: float = 10000.0) -> np.ndarray | float:
    r"""First Euler–Maclaurin correction :math:`\tfrac12(\cos k - \cos(k/b))` of the Riemann sum.

    :math:`D(k)` is :math:`d/2` times a *left* Riemann sum of :math:`f(t) = \cos(k b^{-t})`
    with spacing :math:`h = 2/d`, and :math:`h\sum_{i<1/h} f(t_i) = \int_0^1 f
    + \tfrac{h}{2}(f(0) - f(1)) + O(h^2 \max|f'|)`, so
    :math:`D(k) \approx \tfrac{d}{2}J(k) + \tfrac12(\cos k - \cos(k/b))` while
    :math:`|k| < \pi d/\ln b` (:func:`aliasing_onset`). Independent of ``d_model``.

    ``k`` as in :func:`dot_product_sum` with :math:`|k| \le 2^{53}` (``ValueError`` naming
    ``k`` above), ``base`` finite ``> 1``. :math:`k/b` is carried as quotient plus
    remainder (about 106 bits), so the result is within a few ulp (absolute error below
    :math:`2^{-50}`) for every accepted ``k``.
    """
    arr, scalar = as_offsets(k, "k")
    base = check_base(base)
    _check_quotient_range(arr)
    q, r = exact_quotient(arr, base)
    return scalar_or_array(0.5 * (np.cos(arr) - cos_sum(q, r)), scalar)


def mean_square_frequency(d_model: int, base: float = 10000.0) -> float:
    r"""Mean of :math:`\omega_i^2` over the :math:`d/2` pairs.

    :math:`\langle\omega^2\rangle = \frac{2}{d}\,\frac{1 - b^{-2}}{1 - b^{-4/d}}`.

    The geometric series :math:`\sum_{i<d/2} b^{-4i/d}`. It sets the curvature of the dot
    product at 0: :math:`D(k) = \tfrac{d}{2}(1 - \tfrac{k^2}{2}\langle\omega^2\rangle) + O(k^4)`.
    As :math:`d \to \infty` it tends to the continuum value :math:`(1 - b^{-2})/(2\ln b)`.
    """
    d_model = check_width(d_model, "d_model")
    base = check_base(base)
    lam = math.log(base)
    return float((2 / d_model) * math.expm1(-2 * lam) / math.expm1(-4 * lam / d_model))


def near_asymptote(k: object, d_model: int, base: float = 10000.0) -> np.ndarray | float:
    r"""Small-offset regime :math:`|k| \ll 1` of the dot product.

    :math:`\tfrac{d}{2}\bigl(1 - \tfrac{k^2}{2}\langle\omega^2\rangle\bigr)`.

    The second-order Taylor polynomial of :math:`D(k)` at 0 (:func:`mean_square_frequency`);
    the error is at most :math:`\tfrac{d}{2}\,k^4\langle\omega^4\rangle/24 \le \tfrac{d}{2}\,k^4/24`.
    ``k`` as in :func:`dot_product_sum`; ``ValueError`` naming ``k`` when the polynomial
    leaves the float64 range (:math:`|k| \gtrsim 10^{154}`).
    """
    arr, scalar = as_offsets(k, "k")
    m2 = mean_square_frequency(d_model, base)
    with np.errstate(over="ignore"):
        out = (d_model / 2) * (1.0 - 0.5 * arr * arr * m2)
    return scalar_or_array(_finite(out, "the near asymptote (d/2)(1 - k^2 <w^2>/2)"), scalar)


def log_asymptote(k: object, d_model: int, base: float = 10000.0) -> np.ndarray | float:
    r"""Intermediate regime :math:`1 \ll |k| \ll b`: :math:`\tfrac{d}{2}\,(\ln b - \ln|k| - \gamma)/\ln b`.

    From :math:`\mathrm{Ci}(|k|) = O(1/|k|)` and
    :math:`\mathrm{Ci}(|k|/b) = \gamma + \ln(|k|/b) + O((k/b)^2)`: the normalised dot product
    falls *logarithmically*, like :math:`1 - \ln|k|/\ln b`, and this line reaches 0 at
    :math:`|k| = b\,e^{-\gamma}`. The neglected terms are
    :math:`\tfrac{d}{2}\,(\mathrm{Ci}(|k|) + \mathrm{Cin}(|k|/b))/\ln b`, of size at most
    :math:`\tfrac{d}{2}\,(1/|k| + k^2/(4b^2))/\ln b` for :math:`|k| \ge 2`.
    Raises ``ValueError`` for ``k == 0`` (the logarithm diverges).
    """
    arr, scalar = as_offsets(k, "k")
    if np.any(arr == 0):
        raise ValueError("k must be nonzero for the logarithmic asymptote")
    d_model = check_width(d_model, "d_model")
    lam = math.log(check_base(base))
    return scalar_or_array((d_model / 2) * (lam - np.log(np.abs(arr)) - EULER_GAMMA) / lam, scalar)


def far_asymptote(k: object, d_model: int, base: float = 10000.0) -> np.ndarray | float:
    r"""Far regime :math:`|k| \gg b`: :math:`\tfrac{d}{2}\,(\sin|k| - b\,\sin(|k|/b))/(|k|\ln b)`.

    From :math:`\mathrm{Ci}(x) = \sin(x)/x + O(1/x^2)`. The second term dominates: the
    integral approximation decays as :math:`O(1/|k|)`, but with the envelope
    :math:`\tfrac{d}{2}\,(b+1)/(|k|\ln b)` (see :func:`far_envelope`), which is small only
    once :math:`|k| \gg b`. Raises ``ValueError`` for ``k == 0`` and for
    :math:`|k| > 2^{53}`. :math:`|k|/b` is carried as quotient plus remainder (about 106
    bits), so the absolute error is a few ulp of :func:`far_envelope` for every accepted
    ``k`` (``ValueError`` naming ``k`` if the value leaves the float64 range).
    """
    arr, scalar = as_offsets(k, "k")
    if np.any(arr == 0):
        raise ValueError("k must be nonzero for the far asymptote")
    d_model = check_width(d_model, "d_model")
    base = check_base(base)
    _check_quotient_range(arr)
    a = np.abs(arr)
    q, r = exact_quotient(a, base)
    sin_ab = np.sin(q) * np.cos(r) + np.cos(q) * np.sin(r)
    with np.errstate(over="ignore"):
        out = (d_model / 2) * (np.sin(a) - base * sin_ab) / (a * math.log(base))
    return scalar_or_array(_finite(out, "the far asymptote"), scalar)


def far_envelope(k: object, d_model: int, base: float = 10000.0) -> np.ndarray | float:
    r"""Envelope :math:`\tfrac{d}{2}\,(b+1)/(|k|\ln b)` of :func:`far_asymptote` (its maximum modulus).

    ``k`` nonzero, as in :func:`dot_product_sum`; ``ValueError`` naming ``k`` when the
    envelope exceeds the float64 range (a subnormal ``k``).
    """
    arr, scalar = as_offsets(k, "k")
    if np.any(arr == 0):
        raise ValueError("k must be nonzero for the far envelope")
    d_model = check_width(d_model, "d_model")
    base = check_base(base)
    with np.errstate(over="ignore"):
        out = ((base + 1.0) / math.log(base)) / np.abs(arr) * (d_model / 2)  # no spurious overflow
    return scalar_or_array(_finite(out, "the far envelope (d/2)(b+1)/(|k| ln b)"), scalar)


def aliasing_onset(d_model: int, base: float = 10000.0) -> float:
    r"""The offset :math:`k_* = \pi d/\ln b` beyond which the sum stops following the integral.

    As a function of the index, the phase of term :math:`i` is
    :math:`\psi(i) = k\,e^{-2\lambda i/d}`, with step :math:`|\psi'(i)| = (2\lambda k/d)e^{-2\lambda i/d}`
    per index. By Poisson summation
    :math:`\sum_i e^{i\psi(i)} = \sum_{m\in\mathbb{Z}} \int e^{i(\psi(x) + 2\pi m x)}dx`, and the
    :math:`m \ne 0` terms acquire a stationary point once :math:`|\psi'| \ge 2\pi` somewhere,
    first at :math:`i = 0`: :math:`2\lambda k/d = 2\pi`.
    """
    d_model = check_width(d_model, "d_model")
    return math.pi * d_model / math.log(check_base(base))


def aliased_fraction(k: object, d_model: int, base: float = 10000.0) -> np.ndarray | float:
    r"""Fraction :math:`t_*(k) \in [0, 1]` of the frequency range whose terms have aliased.

    Term :math:`i` (at :math:`t = 2i/d`) has phase step :math:`(2\lambda|k|/d)e^{-\lambda t}`
    per index; it exceeds :math:`2\pi` for :math:`t < t_*`, with
    :math:`t_* = \ln(\lambda|k|/(\pi d))/\lambda` clipped to :math:`[0, 1]`. It is 0 up to
    :func:`aliasing_onset` and reaches 1 at :math:`|k| = \pi d\,b/\lambda`. Heuristically the
    aliased part behaves like :math:`t_* d/2` random-phase cosines, so the local mean
    square of :math:`D - \tfrac{d}{2}J` is about :math:`t_*\,d/4`.
    """
    arr, scalar = as_offsets(k, "k")
    d_model = check_width(d_model, "d_model")
    lam = math.log(check_base(base))
    a = np.abs(arr)
    with np.errstate(divide="ignore", over="ignore"):  # an overflow here means t* = 1
        t = np.log(lam * a / (math.pi * d_model)) / lam
    return scalar_or_array(np.clip(np.where(a > 0, t, 0.0), 0.0, 1.0), scalar)


def noise_floor(d_model: int) -> float:
    r"""Long-run RMS :math:`\sqrt{d/4} = \sqrt{d}/2` of :math:`D(k)` over integer offsets.

    The :math:`\omega_i` are distinct and lie in :math:`(0, 1]`, so for :math:`i \ne j`
    neither :math:`\omega_i \pm \omega_j` nor :math:`2\omega_i` is a multiple of
    :math:`2\pi`; the averages of :math:`\cos(k\omega_i)\cos(k\omega_j)` over
    :math:`k = 0..K-1` tend to 0 and those of :math:`\cos^2(k\omega_i)` to :math:`1/2`.
    Hence :math:`\frac1K\sum_{k<K} D(k)^2 \to \tfrac{d}{2}\cdot\tfrac12 = d/4`.
    """
    d_model = check_width(d_model, "d_model")
    return math.sqrt(d_model / 4)
