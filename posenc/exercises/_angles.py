"""Internal: shared by the checkers of chapters 3, 9 and 17, whose results are sines and cosines of p * w_i.

The tolerance of an input, which grows with its largest position, the known mistake
"float32 angles at large positions" with its diagnosis (right to float32 accuracy at
small positions, wrong above 2**24), and RoPE computed plainly with the known mistakes of
chapters 9 and 17 on request. Not part of the public API: checkers import these names.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..sinusoidal import frequencies
from ._runner import Case, is_close

FLOAT32_ANGLES = (
    "float32 angles at large positions",
    "form the angles p * w_i in float64 (np.float64 positions and frequencies) and cast only the "
    "final result if you need float32; float32 has 24 bits, so above 2**24 the positions "
    "themselves are rounded and the angle error at p ~ 1e8 is several radians.",
)


def position_tol(positions: np.ndarray, scale: float = 1.0) -> float:
    # float64 angles computed with a naive base**x are a few ulp off in w_i, so the angle
    # error grows like |p| * 1e-15; allow that, and nothing like float32's 6e-8 * |p|.
    return 1e-9 + 1e-14 * scale * float(np.max(np.abs(positions), initial=0.0))


def float32_diagnosis(
    positions: Sequence[np.ndarray],
    cases: Sequence[Case],
    outputs: list[np.ndarray],
    *,
    large: float = 2.0**24,
) -> tuple[str, ...] | None:
    """float32 angles: right to float32 accuracy at small positions, wrong at large ones."""
    any_large = large_bad = False
    for pos, case, out in zip(positions, cases, outputs, strict=True):
        expected = np.asarray(case.expected)
        if out.shape != expected.shape:
            return None
        top = float(np.max(np.abs(pos), initial=0.0))
        if top >= large:
            any_large = True
            large_bad = large_bad or not is_close(out, expected, case.tol)
        elif not is_close(out, expected, 1e-4 + 1e-6 * top):
            return None
    return ("float32",) if any_large and large_bad else None


def rope_variant(
    x: np.ndarray,
    positions: np.ndarray,
    base: float,
    layout: str,
    *,
    division: bool = False,
    missing_2: bool = False,
) -> np.ndarray:
    """RoPE of ``x`` by ``positions`` as a student might write it, with the known mistakes on request.

    ``layout`` ``"interleaved"`` or ``"half"``; ``division`` forms the angle ``p / theta_i``,
    ``missing_2`` the frequencies ``base**(-i/d)``. Without them it is RoPE computed plainly
    (cos and sin of ``p * theta_i``), the reference of the other mistakes' variants.
    """
    d = x.shape[-1]
    theta = base ** (-np.arange(d // 2) / d) if missing_2 else frequencies(d, base=base)
    pos = np.asarray(positions, dtype=np.float64)[:, None]
    ang = pos / theta if division else pos * theta
    cos, sin = np.cos(ang), np.sin(ang)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x[..., : d // 2], x[..., d // 2 :]
    out = np.empty_like(x, dtype=np.float64)
    first, second = a * cos - b * sin, a * sin + b * cos
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = first, second
    else:
        out[..., : d // 2], out[..., d // 2 :] = first, second
    return out
