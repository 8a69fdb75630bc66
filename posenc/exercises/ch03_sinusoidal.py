r"""The checker of chapter 3's exercise: the sinusoidal table.

:func:`check_sinusoidal_encoding` checks ``fn(positions, d_model, base=10000.0)`` against
:func:`~posenc.sinusoidal.sinusoidal_encoding` (the interleaved float64 table) and names
the known mistakes: concatenated (half) layout, division instead of multiplication, sin
and cos swapped, missing factor 2 in ``2i/d``, column index instead of pair index (and
combinations of these), the ``base`` argument ignored, float32 angles at large positions.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from ..sinusoidal import frequencies, sinusoidal_encoding
from ._angles import FLOAT32_ANGLES, float32_diagnosis, position_tol
from ._runner import Case, Variant, register_mistakes, run_checker

_SIN = register_mistakes(
    "check_sinusoidal_encoding",
    half=(
        "concatenated (half layout) instead of interleaved",
        "Vaswani et al. interleave the pairs: column 2i holds sin(p*w_i) and column 2i+1 holds "
        "cos(p*w_i). Putting all sines first and all cosines after them is the 'half' layout.",
    ),
    division=(
        "division instead of multiplication",
        "the angle is p * w_i with w_i = base**(-2i/d); dividing p by w_i (p / w_i = p * base**(2i/d)) "
        "makes the slow pairs the fastest ones.",
    ),
    swapped=(
        "sin and cos swapped",
        "the even column 2i holds the sine and the odd column 2i+1 the cosine (row 0 is 0, 1, 0, 1, ...).",
    ),
    missing_2=(
        "missing factor 2 in the exponent 2i/d",
        "w_i = base**(-2i/d) with i the pair index 0..d/2-1; base**(-i/d) only reaches base**(-1/2).",
    ),
    column_index=(
        "column index instead of pair index in the exponent",
        "both columns 2i and 2i+1 of pair i use the same frequency w_i = base**(-2i/d); using "
        "base**(-j/d) for column j gives the cosine a different frequency than its sine.",
    ),
    base_ignored=(
        "base argument ignored",
        "use the base you are given (e.g. base=500 or 1e6), not the constant 10000.",
    ),
    float32=FLOAT32_ANGLES,
)


def _sinusoid_variant(
    positions: np.ndarray,
    d: int,
    base: float,
    *,
    half: bool = False,
    division: bool = False,
    swapped: bool = False,
    exponent: str = "pair",
) -> np.ndarray:
    pos = np.asarray(positions, dtype=np.float64)[:, None]
    pairs = d // 2
    if exponent == "pair":
        expo_sin = expo_cos = 2.0 * np.arange(pairs) / d
    elif exponent == "missing_2":
        expo_sin = expo_cos = np.arange(pairs) / d
    else:  # column index
        expo_sin, expo_cos = np.arange(0, d, 2) / d, np.arange(1, d, 2) / d
    omega_sin = frequencies(d, base=base) if exponent == "pair" else base ** (-expo_sin)
    omega_cos = frequencies(d, base=base) if exponent == "pair" else base ** (-expo_cos)
    if division:
        a_sin, a_cos = pos / omega_sin, pos / omega_cos
    else:
        a_sin, a_cos = pos * omega_sin, pos * omega_cos
    first, second = np.sin(a_sin), np.cos(a_cos)
    if swapped:
        first, second = np.cos(a_sin), np.sin(a_cos)
    out = np.empty((pos.shape[0], d))
    if half:
        out[:, :pairs], out[:, pairs:] = first, second
    else:
        out[:, 0::2], out[:, 1::2] = first, second
    return out


def _sinusoid_cases() -> list[Case]:
    rng = np.random.default_rng(0)
    cases = []
    specs: list[tuple[np.ndarray, int, float]] = []
    for d in (2, 4, 6, 8, 16, 32, 64, 128, 512):
        specs.append((np.arange(50, dtype=np.float64), d, 10000.0))
    for d, base in ((8, 500.0), (16, 1e6), (64, 10.0), (32, 2.0**16)):
        specs.append((np.arange(40, dtype=np.float64), d, base))
    for d in (4, 16, 64):
        specs.append((rng.uniform(-1000.0, 1000.0, size=30), d, 10000.0))
        specs.append((np.sort(rng.integers(0, 5000, size=30)).astype(np.float64), d, 10000.0))
    # large positions: beyond float32's exact integers (2**24), where float32 angles are wrong
    for d in (8, 64):
        specs.append((np.array([123_456_789.0, 98_765_431.0, 2.0**27 + 3.0, 16_777_217.0]), d, 10000.0))
    for positions, d, base in specs:
        label = (
            f"positions={np.array2string(positions[:4], precision=3, separator=', ')}"
            f"{'...' if positions.size > 4 else ''} (len {positions.size}), d_model={d}, base={base:g}"
        )
        cases.append(
            Case(
                args=(positions.copy(), d),
                kwargs={"base": base},
                expected=sinusoidal_encoding(positions, d, base=base),
                tol=position_tol(positions),
                label=label,
                large=bool(np.max(np.abs(positions), initial=0.0) >= 2.0**20),
            )
        )
    return cases


def _sinusoid_variants() -> list[Variant]:
    variants = []
    # every combination of the structural mistakes, fewest mistakes first
    flags = ("half", "division", "swapped")
    combos = []
    for exponent in ("pair", "missing_2", "column_index"):
        for chosen in itertools.product((False, True), repeat=3):
            names = [f for f, on in zip(flags, chosen, strict=True) if on] + (
                [exponent] if exponent != "pair" else []
            )
            if names:
                combos.append((len(names), exponent, chosen, names))
    combos.sort(key=lambda c: c[0])
    for _, exponent, chosen, names in combos:
        kw = dict(zip(flags, chosen, strict=True))

        def compute(case: Case, kw=kw, exponent=exponent) -> np.ndarray:
            positions, d = case.args
            return _sinusoid_variant(positions, d, case.kwargs["base"], exponent=exponent, **kw)

        variants.append(Variant(tuple(names), compute))
    variants.append(Variant(("base_ignored",), lambda case: sinusoidal_encoding(case.args[0], case.args[1])))
    return variants


def check_sinusoidal_encoding(fn: Callable) -> str:
    r"""Check ``fn(positions, d_model, base=10000.0)`` against :func:`~posenc.sinusoidal.sinusoidal_encoding`.

    ``positions`` is a 1-D float64 array, the result must be the interleaved float64
    ``(len(positions), d_model)`` table (column ``2i`` = :math:`\sin(p\omega_i)`, column
    ``2i+1`` = :math:`\cos(p\omega_i)`, :math:`\omega_i = \mathrm{base}^{-2i/d}`).
    Inputs: widths 2 to 512, bases 2**16, 10, 500, 1e6, negative and non-integer
    positions, and positions above :math:`2^{24}`. Tolerance ``1e-9 + 1e-14·max|p|``.

    Recognised mistakes (and any combination of the first five): concatenated (half layout)
    layout, division instead of multiplication, sin/cos swapped, missing factor 2 in
    ``2i/d``, column index ``j/d`` instead of pair index, the ``base`` argument ignored,
    float32 angles at large positions (with a float64 result; a float32 result is refused
    as the wrong dtype).
    """
    cases = _sinusoid_cases()
    return run_checker(
        "check_sinusoidal_encoding",
        "your sinusoidal encoding",
        fn,
        cases,
        _SIN,
        _sinusoid_variants(),
        shape_doc=" = (len(positions), d_model)",
        extra_diagnosis=lambda outputs: float32_diagnosis([c.args[0] for c in cases], cases, outputs),
    )
