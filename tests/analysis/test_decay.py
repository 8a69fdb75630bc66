"""Tests of posenc.analysis.decay: the dot product as a sum, its integral, Ci and the asymptotic regimes.

Expected values come from mpmath (the integral by numerical quadrature, Ci from mpmath.ci,
sums of cosines at 256 bits) or from plain formulas written here; never from posenc.
"""

from __future__ import annotations

import math
import time

import mpmath
import numpy as np
import pytest
from conftest import EPS, mp_cos_sum, mp_omegas, mpf_exact, rounded_omegas
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc


def mp_ci(x: float) -> float:
    with mpmath.workdps(40):
        return float(mpmath.ci(mpmath.mpf(x)))


def mp_integral_quad(k: float, base: float) -> float:
    """∫_0^1 cos(k·base^(-t)) dt by Gauss-Legendre quadrature, split where it oscillates."""
    with mpmath.workdps(30):
        kk, b = mpmath.mpf(k), mpmath.mpf(base)
        pieces = max(4, int(abs(k) / 3))
        nodes = mpmath.linspace(0, 1, pieces + 1)
        return float(mpmath.quad(lambda t: mpmath.cos(kk * mpmath.power(b, -t)), nodes))


def mp_integral_ci(k: float, base: float) -> float:
    """(Ci(|k|) − Ci(|k|/base))/ln(base) in mpmath (for large k, where quadrature is slow)."""
    with mpmath.workdps(40):
        kk, b = abs(mpmath.mpf(k)), mpmath.mpf(base)
        return float((mpmath.ci(kk) - mpmath.ci(kk / b)) / mpmath.log(b))


# ---------------------------------------------------------------------------------------
# cosine_integral
# ---------------------------------------------------------------------------------------


def test_cosine_integral_matches_mpmath_on_a_wide_grid():
    xs = np.concatenate([np.logspace(-10, 9, 120), np.linspace(3.5, 4.5, 11), [4.0, np.nextafter(4.0, 5)]])
    got = posenc.analysis.cosine_integral(xs)
    for x, g in zip(xs, got, strict=True):
        ref = mp_ci(float(x))
        assert abs(g - ref) <= 2e-15 * max(1.0, abs(ref)), x


@given(st.floats(min_value=1e-8, max_value=1e8, allow_nan=False, allow_infinity=False))
def test_cosine_integral_property(x):
    ref = mp_ci(x)
    assert abs(posenc.analysis.cosine_integral(x) - ref) <= 2e-15 * max(1.0, abs(ref))


def test_cosine_integral_known_values():
    # Ci has its first zero at 0.6165..., and Ci(x) ~ gamma + ln x near 0 (DLMF 6.6.6).
    assert abs(posenc.analysis.cosine_integral(0.6165054856207162)) < 1e-15
    x = 1e-9
    assert posenc.analysis.cosine_integral(x) == pytest.approx(0.5772156649015329 + math.log(x), rel=1e-15)


def test_cosine_integral_scalar_and_shape():
    assert isinstance(posenc.analysis.cosine_integral(2.0), float)
    arr = np.full((2, 3), 5.0)
    out = posenc.analysis.cosine_integral(arr)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out, mp_ci(5.0), atol=2e-15)


@pytest.mark.parametrize("bad", [0.0, -1.0, [1.0, 0.0]])
def test_cosine_integral_rejects_non_positive(bad):
    with pytest.raises(ValueError, match="x must be positive"):
        posenc.analysis.cosine_integral(bad)


@pytest.mark.parametrize(
    "bad,exc", [(True, TypeError), ("1", TypeError), (float("nan"), ValueError), ([], ValueError)]
)
def test_cosine_integral_rejects_bad_input(bad, exc):
    with pytest.raises(exc, match="x must"):
        posenc.analysis.cosine_integral(bad)


# ---------------------------------------------------------------------------------------
# oscillatory_integral / integral_approximation
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("base", [10.0, 10000.0, 500000.0])
@pytest.mark.parametrize("k", [1e-6, 0.01, 0.5, 2.0, 3.99, 4.01, 10.0, 77.0, 300.0])
def test_oscillatory_integral_against_quadrature(k, base):
    # the quadrature knows nothing about Ci: this checks the closed form itself
    ref = mp_integral_quad(k, base)
    assert abs(posenc.analysis.oscillatory_integral(k, base) - ref) <= 4e-15
    assert abs(posenc.analysis.oscillatory_integral(-k, base) - ref) <= 4e-15  # even in k


@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_oscillatory_integral_large_offsets(base):
    ks = [1e3, 12345.0, base / 3, base, 7 * base, 1e7, 1e9]
    got = posenc.analysis.oscillatory_integral(np.array(ks), base)
    for k, g in zip(ks, got, strict=True):
        assert abs(g - mp_integral_ci(k, base)) <= 4e-15 / math.log(base) + 1e-16


def test_oscillatory_integral_at_zero_and_continuity():
    assert posenc.analysis.oscillatory_integral(0) == 1.0
    assert posenc.analysis.oscillatory_integral(0.0, 3.0) == 1.0
    # J(k) = 1 - k^2 <theta^2>/2 + O(k^4), <theta^2> = (1 - b^-2)/(2 ln b)
    k, b = 1e-4, 10000.0
    m2 = (1 - b**-2) / (2 * math.log(b))
    assert posenc.analysis.oscillatory_integral(k, b) == pytest.approx(1 - k * k * m2 / 2, abs=1e-16)


@given(
    st.floats(min_value=-1e7, max_value=1e7, allow_nan=False),
    st.floats(min_value=1.5, max_value=1e6),
)
def test_oscillatory_integral_bounded_and_even(k, base):
    j = posenc.analysis.oscillatory_integral(k, base)
    assert -1.0 <= j <= 1.0 + 1e-15
    assert j == posenc.analysis.oscillatory_integral(-k, base)


def test_integral_approximation_scales_by_half_width():
    ks = np.array([[0.0, 1.0], [50.0, 2e5]])
    for d in (2, 64, 4096):
        got = posenc.analysis.integral_approximation(ks, d, 10000.0)
        assert got.shape == (2, 2)
        for idx in np.ndindex(2, 2):
            k = float(ks[idx])
            ref = 1.0 if k == 0 else mp_integral_ci(k, 10000.0)
            assert abs(got[idx] - d / 2 * ref) <= d / 2 * 4e-15


@pytest.mark.parametrize(
    "call",
    [
        lambda: posenc.analysis.oscillatory_integral(1.0, base=1.0),
        lambda: posenc.analysis.oscillatory_integral(1.0, base=float("inf")),
        lambda: posenc.analysis.integral_approximation(1.0, 63),
        lambda: posenc.analysis.integral_approximation(1.0, 0),
        lambda: posenc.analysis.oscillatory_integral(float("nan")),
        lambda: posenc.analysis.oscillatory_integral(np.array([2**60])),
    ],
)
def test_integral_value_errors(call):
    with pytest.raises(ValueError, match="base|d_model|k must"):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: posenc.analysis.oscillatory_integral("3"),
        lambda: posenc.analysis.oscillatory_integral(1.0, base="10"),
        lambda: posenc.analysis.integral_approximation(1.0, 64.0),
        lambda: posenc.analysis.dot_product_sum(True, 64),
        lambda: posenc.analysis.dot_product_sum(np.array([1 + 1j]), 64),
    ],
)
def test_type_errors(call):
    with pytest.raises(TypeError, match="base|d_model|k must"):
        call()


# ---------------------------------------------------------------------------------------
# dot_product_sum
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("d_model", [2, 8, 64, 512])
def test_dot_product_sum_against_mpmath(d_model):
    ks = [0, 1, 2.5, 17, 1000, 123457, 10**6, 3 * 10**6]
    got = posenc.analysis.dot_product_sum(np.array(ks, dtype=float), d_model)
    omegas = [float(w) for w in mp_omegas(d_model)]
    for k, g in zip(ks, got, strict=True):
        bound = sum((abs(k) * w + 4) * EPS for w in omegas)  # the docstring's error bound
        assert abs(g - mp_cos_sum(k, d_model)) <= bound, k


def test_dot_product_sum_is_the_table_dot_product():
    pe = posenc.sinusoidal_encoding(np.array([0.0, 5.0, 900.0]), 64, base=500000.0)
    got = posenc.analysis.dot_product_sum(np.array([5.0, 900.0]), 64, base=500000.0)
    np.testing.assert_allclose(got, [pe[0] @ pe[1], pe[0] @ pe[2]], atol=1e-12)


def test_dot_product_sum_scalar_shape_blocks_and_int_input():
    assert isinstance(posenc.analysis.dot_product_sum(3, 8), float)
    assert posenc.analysis.dot_product_sum(0, 4096) == 2048.0
    ks = np.arange(6000, dtype=np.int64).reshape(3, 2000)  # 3 blocks of 2^22 cosines at d = 4096
    got = posenc.analysis.dot_product_sum(ks, 4096)
    assert got.shape == (3, 2000)
    w = 10000.0 ** (-np.arange(0, 4096, 2) / 4096)  # plain numpy, independent of posenc
    for k in (1, 2999, 5999):
        assert abs(got.ravel()[k] - np.cos(k * w).sum()) < 1e-9


@given(st.integers(min_value=-(10**7), max_value=10**7), st.sampled_from([16, 128]))
def test_dot_product_sum_even_and_bounded(k, d):
    v = posenc.analysis.dot_product_sum(k, d)
    assert abs(v) <= d / 2 + 1e-12
    assert v == posenc.analysis.dot_product_sum(-k, d)


# ---------------------------------------------------------------------------------------
# Euler-Maclaurin correction, regimes, onset, noise floor
# ---------------------------------------------------------------------------------------


def test_endpoint_correction_formula_and_effect():
    k = np.array([0.0, 1.0, 30.0])
    np.testing.assert_allclose(
        posenc.analysis.endpoint_correction(k, 100.0), 0.5 * (np.cos(k) - np.cos(k / 100.0)), rtol=0, atol=0
    )
    # well below the aliasing onset the corrected integral tracks the 256-bit sum closely
    d, b = 512, 10000.0
    for kk in (1.0, 7.0, 20.0, 40.0):
        exact = mp_cos_sum(kk, d, b)
        plain = d / 2 * mp_integral_ci(kk, b)
        corrected = plain + 0.5 * (math.cos(kk) - math.cos(kk / b))
        assert abs(posenc.analysis.integral_approximation(kk, d, b) - plain) < 1e-12
        assert abs(exact - corrected) < 0.2 and abs(exact - corrected) < abs(exact - plain) + 1e-9


@pytest.mark.parametrize("d,b", [(2, 10000.0), (64, 10000.0), (512, 500000.0)])
def test_mean_square_frequency(d, b):
    with mpmath.workprec(256):
        ref = float(mpmath.fsum(w**2 for w in mp_omegas(d, b)) / (d // 2))
    assert posenc.analysis.mean_square_frequency(d, b) == pytest.approx(ref, rel=1e-14)


def test_near_asymptote_is_taylor_polynomial():
    d, b = 256, 10000.0
    for k in (1e-3, 0.05, 0.2):
        exact = mp_cos_sum(k, d, b)
        approx = posenc.analysis.near_asymptote(k, d, b)
        assert abs(exact - approx) <= d / 2 * k**4 / 24 + 1e-12


def test_log_asymptote_formula_and_regime():
    d, b = 128, 10000.0
    lam = math.log(b)
    for k in (5.0, 50.0, 500.0):
        formula = d / 2 * (lam - math.log(k) - 0.5772156649015329) / lam
        assert posenc.analysis.log_asymptote(-k, d, b) == pytest.approx(formula, rel=1e-14)
        # neglected terms: (Ci(k) + Cin(k/b))/lam, at most (1/k + k^2/(4 b^2))/lam in J units
        j = mp_integral_ci(k, b)
        assert abs(d / 2 * j - formula) <= d / 2 * (1 / k + k**2 / (4 * b * b)) / lam


def test_far_asymptote_and_envelope():
    d, b = 64, 10000.0
    lam = math.log(b)
    for k in (1e5, 3.3e6, 1e8):
        formula = d / 2 * (math.sin(k) - b * math.sin(k / b)) / (k * lam)
        assert posenc.analysis.far_asymptote(k, d, b) == pytest.approx(formula, rel=1e-12, abs=1e-15)
        assert abs(posenc.analysis.far_asymptote(k, d, b)) <= posenc.analysis.far_envelope(k, d, b)
        j = mp_integral_ci(k, b)
        assert abs(d / 2 * j - formula) <= d / 2 * 2 * (b / k) ** 2 / lam
    assert posenc.analysis.far_envelope(-2e5, d, b) == pytest.approx(d / 2 * (b + 1) / (2e5 * lam))


@pytest.mark.parametrize(
    "fn", [posenc.analysis.log_asymptote, posenc.analysis.far_asymptote, posenc.analysis.far_envelope]
)
def test_asymptotes_reject_zero(fn):
    with pytest.raises(ValueError, match="k must be nonzero"):
        fn(np.array([1.0, 0.0]), 64)


def test_aliasing_onset_and_fraction():
    assert posenc.analysis.aliasing_onset(512, 10000.0) == pytest.approx(
        math.pi * 512 / math.log(10000.0), rel=1e-15
    )
    d, b = 512, 10000.0
    lam = math.log(b)
    k_on = math.pi * d / lam
    frac = posenc.analysis.aliased_fraction(
        np.array([0.0, 1.0, 0.99 * k_on, 10 * k_on, 1.01 * k_on * b]), d, b
    )
    np.testing.assert_allclose(frac, [0, 0, 0, math.log(10) / lam, 1.0], atol=1e-15)


def test_noise_floor_is_long_run_rms():
    assert posenc.analysis.noise_floor(4096) == 32.0
    rng = np.random.default_rng(1)
    k = rng.integers(10**9, 2 * 10**9, 3000).astype(float)
    for d in (64, 256):
        w = 10000.0 ** (-np.arange(0, d, 2) / d)
        rms = np.sqrt(np.mean(np.cos(np.outer(k, w)).sum(axis=1) ** 2))
        assert abs(rms / posenc.analysis.noise_floor(d) - 1) < 0.1


def test_import_does_not_load_mpmath_or_sympy():
    import subprocess
    import sys

    code = "import posenc, sys; print('mpmath' in sys.modules, 'sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


MP_PREC = 300

FLOAT_MAX = float(np.finfo(np.float64).max)


offsets_all = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.floats(1e-300, 1.5e308).map(lambda x: x * 1.0),
    st.sampled_from([2.0**53, 2.0**53 + 2, 1e300, -1.5e308, 5e-324, 0.5, 1.0]),
)

bases = st.sampled_from([10000.0, 500000.0, 2.0, 1e300])

widths = st.sampled_from([2, 4, 16, 64])


def _mp_omegas_float(d, base):
    # the correctly rounded float64 frequencies, as exact mpmath numbers
    return [mpmath.mpf(w) for w in rounded_omegas(d, base)]


def _mp_J(k, base):
    with mpmath.workprec(MP_PREC):
        a = abs(mpf_exact(k))
        if a == 0:
            return mpmath.mpf(1)
        return (mpmath.ci(a) - mpmath.ci(a / mpf_exact(base))) / mpmath.log(mpf_exact(base))


@settings(max_examples=40)
@given(k=offsets_all, base=bases, d=widths)
def test_oscillatory_integral_and_integral_approximation(k, base, d):
    want = float(_mp_J(k, base))
    tol = 4e-15 / math.log(base) + 2.0**-51
    assert posenc.analysis.oscillatory_integral(k, base) == pytest.approx(want, abs=tol)
    assert posenc.analysis.integral_approximation(k, d, base) == pytest.approx(
        d / 2 * want, abs=d / 2 * tol + 2 * EPS * d
    )


@settings(max_examples=40)
@given(ks=st.lists(offsets_all, min_size=1, max_size=3), base=bases, d=widths)
def test_dot_product_sum_is_exact_for_every_finite_offset(ks, base, d):
    got = posenc.analysis.dot_product_sum(np.array(ks), d, base)
    om = _mp_omegas_float(d, base)
    with mpmath.workprec(MP_PREC):
        want = [float(mpmath.fsum(mpmath.cos(mpf_exact(k) * w) for w in om)) for k in ks]
    np.testing.assert_allclose(got, want, rtol=0, atol=d * 2.0**-50)


@given(k=st.one_of(st.floats(-(2.0**53), 2.0**53), st.sampled_from([2**53, -(2**53), 3, 0])), base=bases)
def test_endpoint_correction_against_mpmath(k, base):
    with mpmath.workprec(MP_PREC):
        kk = mpf_exact(k)
        want = float((mpmath.cos(kk) - mpmath.cos(kk / mpf_exact(base))) / 2)
    assert posenc.analysis.endpoint_correction(k, base) == pytest.approx(want, abs=2.0**-50)


@given(d=st.integers(1, 2**15).map(lambda h: 2 * h), base=bases)
def test_width_functions_against_mpmath(d, base):
    with mpmath.workprec(MP_PREC):
        b, lam = mpf_exact(base), mpmath.log(mpf_exact(base))
        # <w^2> as the closed form of the geometric series (checked against the sum below)
        m2 = 2 * (1 - b**-2) / (d * (1 - b ** (mpmath.mpf(-4) / d)))
        onset = mpmath.pi * d / lam
    assert posenc.analysis.mean_square_frequency(d, base) == pytest.approx(float(m2), rel=8 * EPS)
    assert posenc.analysis.aliasing_onset(d, base) == pytest.approx(float(onset), rel=4 * EPS)
    assert posenc.analysis.noise_floor(d) == pytest.approx(math.sqrt(d) / 2, rel=2 * EPS)
    if d <= 64:
        om = _mp_omegas_float(d, base)
        with mpmath.workprec(MP_PREC):
            direct = mpmath.fsum(w**2 for w in om) / (d // 2)
        assert float(m2) == pytest.approx(float(direct), rel=1e-14)


@given(k=offsets_all, d=widths, base=bases)
def test_asymptotes_and_envelope_against_mpmath(k, d, base):
    with mpmath.workprec(MP_PREC):
        kk, b = abs(mpf_exact(k)), mpf_exact(base)
        lam = mpmath.log(b)
        m2 = 2 * (1 - b**-2) / (d * (1 - b ** (mpmath.mpf(-4) / d)))
        near = d * (1 - kk**2 * m2 / 2) / 2
        if abs(near) > FLOAT_MAX:
            with pytest.raises(ValueError, match=r"\bk\b"):
                posenc.analysis.near_asymptote(k, d, base)
        else:
            assert posenc.analysis.near_asymptote(k, d, base) == pytest.approx(
                float(near), rel=16 * EPS, abs=d * EPS
            )
        if kk == 0:
            return
        log_ = d * (lam - mpmath.log(kk) - mpmath.euler) / (2 * lam)
        assert posenc.analysis.log_asymptote(k, d, base) == pytest.approx(
            float(log_), abs=8 * EPS * d * (1 + float(abs(mpmath.log(kk))))
        )
        env = d * (b + 1) / (2 * kk * lam)
        if env > FLOAT_MAX:
            with pytest.raises(ValueError, match=r"\bk\b"):
                posenc.analysis.far_envelope(k, d, base)
        else:
            assert posenc.analysis.far_envelope(k, d, base) == pytest.approx(float(env), rel=8 * EPS)
        t = mpmath.log(lam * kk / (mpmath.pi * d)) / lam
        t = min(max(t, 0), 1)
        assert posenc.analysis.aliased_fraction(k, d, base) == pytest.approx(float(t), abs=8 * EPS)
        if kk <= 2**53:
            far = d * (mpmath.sin(kk) - b * mpmath.sin(kk / b)) / (2 * kk * lam)
            if env <= FLOAT_MAX:
                assert posenc.analysis.far_asymptote(k, d, base) == pytest.approx(
                    float(far), abs=16 * EPS * float(env)
                )


def test_dot_product_sum_refuses_a_minute_of_cosines():
    from posenc.analysis import dot_product_sum

    t0 = time.process_time()
    with pytest.raises(ValueError, match="k.size"):
        dot_product_sum(np.zeros(2**21 + 1), 128)  # 2**27 + 64 terms
    assert time.process_time() - t0 < 1.0
    assert dot_product_sum(0.0, 128) == 64.0  # D(0) = d/2
