r"""The checkers of chapter 14's exercises: RoPE frequencies at work.

:func:`check_partial_rope` checks a partial rotary embedding ``fn(x, positions,
rotary_dim, base=10000.0)`` (interleaved pairs inside the first ``rotary_dim`` channels)
against :func:`~posenc.rope.apply_rope` with ``rotary_dim``; it names partial rotary with
the full head's frequencies, ``rotary_dim`` ignored, the pass-through channels zeroed, the
last channels rotated instead of the first, and the half layout.

:func:`check_long_term_similarity` checks ``fn(distances, d_head, base=10000.0)`` against
:func:`~posenc.rope_budget.long_term_similarity` (Men et al.'s :math:`B(m)`); it names the
sum over all :math:`d` coordinates, the mean instead of the sum, division instead of
multiplication, the missing factor 2 in :math:`2i/d` and the ``base`` argument ignored.

:func:`check_critical_dimension` checks ``fn(d_head, base, train_length)`` against
:func:`~posenc.rope_budget.critical_dimension` (Liu et al.'s :math:`d_{extra}`); it names
the floor instead of the ceiling, pairs instead of dimensions, the :math:`2\pi` left out,
the complement (the dimensions that never complete a turn) and the natural logarithm.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..rope import apply_rope
from ..rope_budget import critical_dimension, long_term_similarity
from ..sinusoidal import frequencies
from ._runner import (
    Case,
    Variant,
    check_fn,
    frequency_mistakes,
    register_mistakes,
    result_problem,
    run_checker,
)

_PARTIAL = register_mistakes(
    "check_partial_rope",
    full_head=(
        "partial rotary with the full head's frequencies",
        "the rotated channels form a RoPE of width rotary_dim: theta_i = base**(-2i/rotary_dim) for "
        "i = 0..rotary_dim/2-1, not base**(-2i/d_head). With the head's exponent only the fastest "
        "frequencies are used and the slow end of the spectrum is lost (that is p-RoPE, not partial "
        "rotary).",
    ),
    all_rotated=(
        "rotary_dim ignored (every channel rotated)",
        "only channels 0 .. rotary_dim-1 turn; channels rotary_dim .. d_head-1 are copied unchanged.",
    ),
    zeroed=(
        "pass-through channels zeroed",
        "the channels after rotary_dim carry content and must be copied, not dropped or set to 0.",
    ),
    last=(
        "the last rotary_dim channels rotated instead of the first",
        "GPT-NeoX, GPT-J and Phi rotate the first rotary_dim channels of each head (x[..., :rotary_dim]).",
    ),
    layout=(
        "half layout inside the rotated channels",
        "this exercise pairs the rotated channels as (2i, 2i+1) (interleaved, as GPT-J); the half layout "
        "pairs (i, i + rotary_dim/2).",
    ),
)

_SIMILARITY = register_mistakes(
    "check_long_term_similarity",
    all_d=(
        "sum over all d coordinates instead of the d/2 pairs",
        "there is one frequency per pair: B(m) = sum over i = 0..d/2-1 of cos(m * theta_i), "
        "theta_i = base**(-2i/d); B(0) = d/2.",
    ),
    mean=("mean instead of sum", "B(m) is the sum of the d/2 cosines (B(0) = d/2), not their mean."),
    **frequency_mistakes("m", "theta_i"),
)

_CRITICAL = register_mistakes(
    "check_critical_dimension",
    floor=(
        "floor instead of ceiling",
        "count the pairs i = 0, 1, ... whose period 2*pi*base**(2i/d) is shorter than T: there are "
        "ceil((d/2) * log_base(T / (2 pi))) of them.",
    ),
    pairs=("pairs instead of dimensions", "each pair has two dimensions: d_extra = 2 * (number of pairs)."),
    no_2pi=(
        "training length not divided by 2*pi",
        "a pair's period is 2*pi/theta_i, not 1/theta_i: compare 2*pi*base**(2i/d) with T.",
    ),
    complement=(
        "counted the dimensions that never complete a turn",
        "d_extra counts the dimensions whose period is shorter than T (they see full turns in "
        "training); the other d - d_extra never do.",
    ),
    natural_log=(
        "natural logarithm instead of the logarithm to the base",
        "log_base(T / 2 pi) = ln(T / 2 pi) / ln(base).",
    ),
)


def _rotate_interleaved(x: np.ndarray, positions: np.ndarray, theta: np.ndarray) -> np.ndarray:
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.multiply.outer(positions, theta))
    out = np.empty_like(x, dtype=np.float64)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def partial_rope_cases(specs: list, rng: np.random.Generator, *, layout: str) -> list[Case]:
    """Cases ``(x, positions, rotary_dim)`` with kwarg ``base`` for a partial-rotary checker.

    ``specs`` holds ``(shape of x, rotary_dim, positions, base)``; ``x`` is drawn from ``rng``
    and the expected result is :func:`~posenc.rope.apply_rope` with ``rotary_dim`` and ``layout``.
    """
    cases = []
    for shape, r, positions, base in specs:
        x = rng.standard_normal(shape)
        cases.append(
            Case(
                (x, positions.copy(), r),
                {"base": base},
                apply_rope(x, positions, base=base, layout=layout, rotary_dim=r),
                1e-9,
                f"x of shape {shape}, rotary_dim={r}, positions={np.array2string(positions, precision=1)}, "
                f"base={base:g}",
            )
        )
    return cases


def check_partial_rope(fn: Callable) -> str:
    r"""Check ``fn(x, positions, rotary_dim, base=10000.0)``, a partial rotary embedding.

    ``x`` has shape ``(..., L, d_head)``, ``positions`` is a 1-D float64 array of length
    ``L`` and ``rotary_dim`` an even integer at most ``d_head``. The result (float64, the
    shape of ``x``) turns the pairs :math:`(2i, 2i+1)` of the first ``rotary_dim`` channels
    by :math:`m\,\mathrm{base}^{-2i/\texttt{rotary\_dim}}` and copies the other channels:
    :func:`~posenc.rope.apply_rope` with ``rotary_dim``.

    Recognised mistakes: partial rotary with the full head's frequencies
    (:math:`\mathrm{base}^{-2i/d_{head}}`), ``rotary_dim`` ignored, the pass-through channels
    zeroed, the last ``rotary_dim`` channels rotated, the half layout inside the rotated
    channels.
    """
    check_fn("check_partial_rope", fn)
    rng = np.random.default_rng(14)
    specs = [
        ((6, 8), 4, np.arange(6.0), 10000.0),
        ((5, 16), 4, np.arange(5.0) + 3, 10000.0),
        ((2, 4, 24), 8, np.array([0.0, 5.0, 17.0, 1000.0]), 10000.0),  # GPT-NeoX-like 25 %
        ((3, 32), 16, rng.uniform(-300, 300, size=3), 10000.0),
        ((4, 80), 32, np.array([1.0, 2.0, 50.0, 2047.0]), 10000.0),  # Phi-2: 0.4 of 80
        ((2, 3, 64), 16, np.array([7.0, 300.0, 4000.0]), 500.0),
        ((4, 16), 16, np.arange(4.0), 10000.0),  # rotary_dim = d_head: plain RoPE
    ]
    cases = partial_rope_cases(specs, rng, layout="interleaved")

    def variant(kind: str) -> Callable[[Case], np.ndarray]:
        def compute(case: Case) -> np.ndarray:
            x, positions, r = case.args
            base = case.kwargs["base"]
            d = x.shape[-1]
            if kind == "full_head":
                out = x.astype(np.float64).copy()
                out[..., :r] = _rotate_interleaved(x[..., :r], positions, frequencies(d, base)[: r // 2])
                return out
            if kind == "all_rotated":
                return apply_rope(x, positions, base=base)
            if kind == "zeroed":
                out = apply_rope(x, positions, base=base, rotary_dim=r)
                out[..., r:] = 0.0
                return out
            if kind == "last":
                out = x.astype(np.float64).copy()
                out[..., d - r :] = apply_rope(x[..., d - r :], positions, base=base)
                return out
            return apply_rope(x, positions, base=base, rotary_dim=r, layout="half")

        return compute

    variants = [Variant((k,), variant(k)) for k in ("full_head", "all_rotated", "zeroed", "last", "layout")]
    return run_checker(
        "check_partial_rope", "your partial RoPE", fn, cases, _PARTIAL, variants, shape_doc=" = x.shape"
    )


def check_long_term_similarity(fn: Callable) -> str:
    r"""Check ``fn(distances, d_head, base=10000.0)``: Men et al.'s :math:`B(m) = \sum_i \cos(m\theta_i)`.

    ``distances`` is a 1-D float64 array, ``d_head`` an even integer; the result is a
    float64 array of the shape of ``distances``, :math:`\sum_{i=0}^{d/2-1}\cos(m\theta_i)`
    with :math:`\theta_i = \mathrm{base}^{-2i/d}`
    (:func:`~posenc.rope_budget.long_term_similarity`).

    Recognised mistakes: the sum over all :math:`d` coordinates (:math:`i` up to
    :math:`d - 1`), the mean instead of the sum, division instead of multiplication, the
    missing factor 2 in :math:`2i/d`, the ``base`` argument ignored.
    """
    check_fn("check_long_term_similarity", fn)
    rng = np.random.default_rng(140)
    cases = []
    specs = [
        (np.arange(10.0), 8, 10000.0),
        (np.array([0.0, 1.0, 100.0, 4095.0, 20000.0]), 128, 10000.0),
        (rng.uniform(0, 5000, size=7), 64, 500000.0),
        (np.array([3.0, 30.0, 300.0]), 16, 50.0),
    ]
    for m, d, base in specs:
        cases.append(
            Case(
                (m.copy(), d),
                {"base": base},
                long_term_similarity(m, d, base=base),
                1e-9 * d,
                f"distances={np.array2string(m, precision=1)}, d_head={d}, base={base:g}",
            )
        )

    def variant(kind: str) -> Callable[[Case], np.ndarray]:
        def compute(case: Case) -> np.ndarray:
            m, d = case.args
            base = case.kwargs["base"]
            i = np.arange(d if kind == "all_d" else d // 2)
            if kind == "missing_2":
                theta = base ** (-i / d)
            elif kind == "base_ignored":
                theta = 10000.0 ** (-2 * i / d)
            else:
                theta = base ** (-2 * i / d)
            angles = np.outer(m, 1 / theta) if kind == "division" else np.outer(m, theta)
            total = np.cos(angles).sum(axis=1)
            return total / (d // 2) if kind == "mean" else total

        return compute

    variants = [Variant((k,), variant(k)) for k in ("all_d", "mean", "division", "missing_2", "base_ignored")]
    return run_checker(
        "check_long_term_similarity",
        "your B(m)",
        fn,
        cases,
        _SIMILARITY,
        variants,
        shape_doc=" = distances.shape",
    )


def check_critical_dimension(fn: Callable) -> str:
    r"""Check ``fn(d_head, base, train_length)``: Liu et al.'s critical dimension, an ``int``.

    :math:`d_{extra} = 2\lceil (d/2)\log_{\mathrm{base}}(T/2\pi)\rceil`, twice the number of
    pairs whose period :math:`2\pi\,\mathrm{base}^{2i/d}` is shorter than the training length
    :math:`T` (:func:`~posenc.rope_budget.critical_dimension`). The function may return a
    Python ``int`` or a numpy integer.

    Recognised mistakes: the floor instead of the ceiling, pairs instead of dimensions, the
    :math:`2\pi` left out, the complement :math:`d - d_{extra}`, the natural logarithm.
    """
    check_fn("check_critical_dimension", fn)
    specs = [
        (128, 10000.0, 4096),
        (128, 500000.0, 8192),
        (128, 1e6, 16384),
        (64, 10000.0, 2048),
        (80, 10000.0, 2048),
        (256, 10000.0, 2048),
        (128, 1e6, 131072),
    ]
    cases = [
        Case((d, b, t), {}, np.asarray(critical_dimension(d, b, t)), 0.0, f"d_head={d}, base={b:g}, T={t}")
        for d, b, t in specs
    ]

    def variant(kind: str) -> Callable[[Case], np.ndarray]:
        def compute(case: Case) -> np.ndarray:
            d, b, t = case.args
            x = (d / 2) * math.log(t / (1.0 if kind == "no_2pi" else 2 * math.pi))
            x = x if kind == "natural_log" else x / math.log(b)
            pairs = math.floor(x) if kind == "floor" else math.ceil(x)
            pairs = min(d // 2, max(0, pairs))
            if kind == "pairs":
                return np.asarray(pairs)
            if kind == "complement":
                return np.asarray(d - 2 * pairs)
            return np.asarray(2 * pairs)

        return compute

    variants = [Variant((k,), variant(k)) for k in ("floor", "pairs", "no_2pi", "complement", "natural_log")]

    def wrapped(d: int, b: float, t: int) -> object:
        value = fn(d, b, t)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            if not -(2**63) <= value < 2**63:
                raise result_problem(
                    f"your critical dimension returned the integer {value}, beyond int64's range; "
                    f"expected an integer between 0 and d_head = {d}\n"
                    f"  on input d_head={d}, base={b:g}, T={t}",
                    "wrong dtype",
                )
            return np.asarray(value, dtype=np.int64)
        if isinstance(value, (float, complex, np.floating, np.complexfloating)):
            return np.asarray(value)  # a 0-d array: its dtype is then diagnosed, not "not an array"
        return value

    return run_checker(
        "check_critical_dimension",
        "your critical dimension",
        wrapped,
        cases,
        _CRITICAL,
        variants,
        kind="int",
        exact=True,
    )
