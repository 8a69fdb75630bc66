r"""The checkers of the appendix (real model configurations).

:func:`check_wavelengths` checks ``fn(d_head, base)``, the RoPE wavelengths
:math:`\lambda_i = 2\pi\,\mathrm{base}^{2i/d}` in positions; :func:`check_yarn_ratio` checks
``fn(d_head, base, factor, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0)``,
YaRN's per-pair ratio :math:`\theta_i'/\theta_i` (transformers' defaults, bounds floored and
ceiled); :func:`check_mpt_alibi_slopes` checks ``fn(n_heads, alibi_bias_max=8)``, MPT's
ALiBi slopes, which are Press et al.'s slopes raised to the power ``alibi_bias_max / 8``.
Each names the known mistakes of its exercise.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..alibi import alibi_slopes
from ..rope import rope_frequencies
from ._runner import Case, Variant, register_mistakes, run_checker

_WAVE = register_mistakes(
    "check_wavelengths",
    missing_2pi=(
        "missing 2*pi (a period in radians per unit angle, not in positions)",
        "pair i turns by theta_i per position, so one full turn takes 2*pi/theta_i positions.",
    ),
    frequencies=(
        "frequencies instead of wavelengths",
        "theta_i = base**(-2i/d) is the angle per position; the wavelength is 2*pi/theta_i.",
    ),
    missing_2=(
        "missing factor 2 in the exponent 2i/d",
        "the wavelength of pair i = 0..d/2-1 is 2*pi*base**(2i/d).",
    ),
    base_ignored=("base argument ignored", "use the base you are given, not the constant 10000."),
)

_YARN = register_mistakes(
    "check_yarn_ratio",
    no_truncation=(
        "ramp bounds not rounded (floor/ceil)",
        "transformers' default truncate=True floors the lower bound and ceils the upper one before "
        "building the ramp.",
    ),
    reversed=(
        "ramp reversed (fast pairs divided, slow pairs kept)",
        "the fast pairs (small i, many turns in L0) keep their frequency; the slow ones are divided "
        "by the factor.",
    ),
    no_2pi=(
        "bounds without 2*pi (turn counts read as angles)",
        "pair i makes L0 * theta_i / (2*pi) turns in L0; solve that for i: "
        "r(beta) = d * ln(L0 / (2*pi*beta)) / (2 * ln(base)).",
    ),
    multiplied=(
        "frequencies multiplied by the factor",
        "interpolation slows the slow pairs down: their frequency becomes theta_i / factor.",
    ),
)

_MPT = register_mistakes(
    "check_mpt_alibi_slopes",
    bias_max_ignored=(
        "alibi_bias_max ignored (always 8)",
        "MPT's slopes are 2**(-alibi_bias_max * h / n) for a power of two n; 8 is only the default.",
    ),
    geometric=(
        "2^(-b*h/n) for a non-power-of-two head count",
        "for n not a power of two, take the N slopes of the largest power of two N < n, then the first "
        "n - N odd-numbered slopes of the 2N-head sequence.",
    ),
    round_up=(
        "rounded up to a power of two and truncated",
        "the first n slopes of the 2N-head sequence drop the gentlest slopes; MPT reorders them: the "
        "even-numbered ones (the N-head sequence) first, then the odd-numbered ones.",
    ),
    off_by_one=(
        "off by one: h starts at 0 (first slope 1)",
        "h runs from 1 to n: the first slope is 2**(-alibi_bias_max / n), not 1.",
    ),
)


def _wave(d: int, base: float, *, two_pi: bool = True, exponent: float = 2.0) -> np.ndarray:
    out = base ** (exponent * np.arange(d // 2) / d)
    return 2 * math.pi * out if two_pi else out


def check_wavelengths(fn: Callable) -> str:
    r"""Check ``fn(d_head, base)`` against :math:`2\pi/\theta_i` from :func:`~posenc.rope.rope_frequencies`.

    The result must be the float64 array of the ``d_head/2`` wavelengths in positions
    (relative tolerance ``1e-12``). Recognised mistakes: :math:`2\pi` missing, the
    frequencies returned instead, the factor 2 of :math:`2i/d` missing, ``base`` ignored.
    """
    grid = [(2, 10000.0), (8, 10000.0), (64, 10000.0), (96, 10000.0), (128, 500000.0), (256, 1e6), (64, 10.0)]
    cases = [
        Case((d, b), {}, 2 * math.pi / rope_frequencies(d, b), 1e-12, f"d_head={d}, base={b:g}")
        for d, b in grid
    ]
    variants = [
        Variant(("missing_2pi",), lambda c: _wave(*c.args, two_pi=False)),
        Variant(("frequencies",), lambda c: rope_frequencies(*c.args)),
        Variant(("missing_2",), lambda c: _wave(*c.args, exponent=1.0)),
        Variant(("base_ignored",), lambda c: _wave(c.args[0], 10000.0)),
    ]
    return run_checker(
        "check_wavelengths",
        "your wavelengths",
        fn,
        cases,
        _WAVE,
        variants,
        relative=True,
        shape_doc=" = (d_head/2,)",
    )


def _yarn_ratio(
    d: int,
    base: float,
    factor: float,
    orig: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    *,
    truncate: bool = True,
    reverse: bool = False,
    two_pi: bool = True,
    multiply: bool = False,
) -> np.ndarray:
    """The ratio theta'_i / theta_i, written out for the wrong variants (the reference is posenc)."""
    turn = 2 * math.pi if two_pi else 1.0

    def r(beta: float) -> float:
        return d * math.log(orig / (beta * turn)) / (2 * math.log(base))

    low, high = r(beta_fast), r(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(d // 2) - low) / (high - low), 0.0, 1.0)
    if reverse:
        ramp = 1.0 - ramp
    scaled = factor if multiply else 1.0 / factor
    return (1.0 - ramp) + ramp * scaled


def check_yarn_ratio(fn: Callable) -> str:
    r"""Check ``fn(d_head, base, factor, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0)``.

    The result must be the float64 array of :math:`\theta_i'/\theta_i` for YaRN
    (:func:`~posenc.rope.rope_frequencies` with ``rope_type`` ``"yarn"`` divided by the plain
    frequencies; relative tolerance ``1e-12``). Recognised mistakes: bounds not floored and
    ceiled, the ramp reversed, the bounds without :math:`2\pi`, multiplying by the factor.
    """
    grid = [
        (64, 10000.0, 40.0, 4096, 32.0, 1.0),
        (128, 1e6, 4.0, 32768, 32.0, 1.0),
        (128, 10000.0, 4.0, 4096, 32.0, 1.0),
        (128, 500000.0, 8.0, 8192, 16.0, 2.0),
        (96, 10000.0, 32.0, 4096, 32.0, 1.0),
    ]
    cases = []
    for d, b, s, L0, bf, bs in grid:
        sc = {
            "rope_type": "yarn",
            "factor": s,
            "original_max_position_embeddings": L0,
            "beta_fast": bf,
            "beta_slow": bs,
        }
        expected = rope_frequencies(d, b, sc) / rope_frequencies(d, b)
        cases.append(
            Case(
                (d, b, s, L0),
                {"beta_fast": bf, "beta_slow": bs},
                expected,
                1e-12,
                f"d_head={d}, base={b:g}, factor={s:g}, L0={L0}, beta_fast={bf:g}, beta_slow={bs:g}",
            )
        )

    def variant(**kw):
        return lambda c: _yarn_ratio(*c.args, **c.kwargs, **kw)

    variants = [
        Variant(("no_truncation",), variant(truncate=False)),
        Variant(("reversed",), variant(reverse=True)),
        Variant(("no_2pi",), variant(two_pi=False)),
        Variant(("multiplied",), variant(multiply=True)),
    ]
    return run_checker(
        "check_yarn_ratio",
        "your YaRN ratios",
        fn,
        cases,
        _YARN,
        variants,
        relative=True,
        shape_doc=" = (d_head/2,)",
    )


def _geo(n: int, b: float, start: int = 1) -> np.ndarray:
    return 2.0 ** (-b * np.arange(start, n + start) / n)


def check_mpt_alibi_slopes(fn: Callable) -> str:
    r"""Check ``fn(n_heads, alibi_bias_max=8)``: MPT's slopes, ``alibi_slopes(n) ** (alibi_bias_max / 8)``.

    The result must be the float64 array of the ``n_heads`` slopes in MPT's order (relative
    tolerance ``1e-10``). Recognised mistakes: ``alibi_bias_max`` ignored,
    :math:`2^{-bh/n}` for every ``n``, the first ``n`` slopes of the next power of two,
    an off-by-one start.
    """
    grid = [(n, 8.0) for n in (1, 2, 3, 5, 6, 7, 12, 24, 32)]
    grid += [(n, b) for n in (1, 3, 4, 6, 10, 16, 20, 40, 56, 64, 112) for b in (4.0, 12.0, 16.0)]
    cases = [
        Case(
            (n,),
            {"alibi_bias_max": b},
            alibi_slopes(n) ** (b / 8.0),
            1e-10,
            f"n_heads={n}, alibi_bias_max={b:g}",
        )
        for n, b in grid
    ]

    def off_by_one(n: int, b: float) -> np.ndarray:
        # MPT's construction (the next power of two C, even-numbered slopes first) from h = 0
        C = 1 << ((n - 1).bit_length())
        s = _geo(C, b, start=0)
        return s if C == n else np.concatenate([s[1::2], s[0::2]])[:n]

    def round_up(n: int, b: float) -> np.ndarray:
        C = 1 << ((n - 1).bit_length())
        return _geo(C, b)[:n]

    variants = [
        Variant(("bias_max_ignored",), lambda c: alibi_slopes(c.args[0])),
        Variant(("geometric",), lambda c: _geo(c.args[0], c.kwargs["alibi_bias_max"])),
        Variant(("round_up",), lambda c: round_up(c.args[0], c.kwargs["alibi_bias_max"])),
        Variant(("off_by_one",), lambda c: off_by_one(c.args[0], c.kwargs["alibi_bias_max"])),
    ]
    return run_checker(
        "check_mpt_alibi_slopes",
        "your MPT slopes",
        fn,
        cases,
        _MPT,
        variants,
        relative=True,
        shape_doc=" = (n_heads,)",
    )
