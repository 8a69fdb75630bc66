"""Shared by the checkers of chapters 3 and 9, whose results are sines and cosines of angles p * w_i.

The tolerance of an input, which grows with its largest position, and the known mistake
"float32 angles at large positions" with its diagnosis: right to float32 accuracy at
small positions, wrong above 2**24.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._runner import _Case, _close

_FLOAT32_ANGLES = (
    "float32 angles at large positions",
    "form the angles p * w_i in float64 (np.float64 positions and frequencies) and cast only the "
    "final result if you need float32; float32 has 24 bits, so above 2**24 the positions "
    "themselves are rounded and the angle error at p ~ 1e8 is several radians.",
)


def _position_tol(positions: np.ndarray, scale: float = 1.0) -> float:
    # float64 angles computed with a naive base**x are a few ulp off in w_i, so the angle
    # error grows like |p| * 1e-15; allow that, and nothing like float32's 6e-8 * |p|.
    return 1e-9 + 1e-14 * scale * float(np.max(np.abs(positions), initial=0.0))


def _float32_diagnosis(
    positions: Sequence[np.ndarray],
    cases: Sequence[_Case],
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
            large_bad = large_bad or not _close(out, expected, case.tol)
        elif not _close(out, expected, 1e-4 + 1e-6 * top):
            return None
    return ("float32",) if any_large and large_bad else None
