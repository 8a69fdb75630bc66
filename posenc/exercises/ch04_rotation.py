r"""The checker of chapter 4's exercise: the shift matrix :math:`M_k`.

:func:`check_relative_position_matrix` checks ``fn(d_model, offset, base=10000.0)``
against :func:`~posenc.sinusoidal.relative_position_matrix` (:math:`PE_{p+k} = M_k PE_p`
in the interleaved layout) and names the known mistakes: :math:`M_{-k}` (transposed), the
matrix of the half layout, division instead of multiplication, missing factor 2 in
``2i/d``, the ``base`` argument ignored, a matrix that does not depend on the offset.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..sinusoidal import frequencies, relative_position_matrix
from ._runner import Case, Variant, frequency_mistakes, is_close, register_mistakes, run_checker

_REL = register_mistakes(
    "check_relative_position_matrix",
    transposed=(
        "M_{-k} (transposed: sine sign flipped)",
        "M_k maps the pair (sin p*w, cos p*w) to (sin (p+k)w, cos (p+k)w) = "
        "(cos kw * sin pw + sin kw * cos pw, -sin kw * sin pw + cos kw * cos pw): the +sin is in the "
        "first row. The textbook rotation [[c, -s], [s, c]] acts on (cos, sin) pairs, and the "
        "transpose is the map for row vectors (PE[p] @ M).",
    ),
    half=(
        "matrix for the half layout",
        "the exercise uses the interleaved layout: pair i occupies columns 2i and 2i+1, so the "
        "2x2 blocks sit on the diagonal; the half layout pairs columns i and i + d/2.",
    ),
    **frequency_mistakes("k", "w_i"),
    no_offset=(
        "matrix does not depend on the offset",
        "M_k rotates the pair i by the angle k * w_i, so it changes with the offset k: only M_0 is the "
        "identity. Use the offset argument in every block.",
    ),
)


def _block_matrix(d: int, angles: np.ndarray, *, sign: float = 1.0) -> np.ndarray:
    c, s = np.cos(angles), sign * np.sin(angles)
    m = np.zeros((d, d))
    idx = np.arange(d // 2)
    m[2 * idx, 2 * idx] = c
    m[2 * idx, 2 * idx + 1] = s
    m[2 * idx + 1, 2 * idx] = -s
    m[2 * idx + 1, 2 * idx + 1] = c
    return m


def _offset_ignored(cases: Sequence[Case], outputs: list[np.ndarray]) -> tuple[str, ...] | None:
    """Every width gives the same matrix for all its offsets (which the reference does not)."""
    groups: dict[tuple, list[np.ndarray]] = {}
    for case, out in zip(cases, outputs, strict=True):
        groups.setdefault((case.args[0], case.kwargs["base"]), []).append(out)
    several = [outs for outs in groups.values() if len(outs) > 1]
    if several and all(all(is_close(o, outs[0], 1e-12) for o in outs[1:]) for outs in several):
        return ("no_offset",)
    return None


def check_relative_position_matrix(fn: Callable) -> str:
    r"""Check ``fn(d_model, offset, base=10000.0)`` against the reference shift matrix.

    The reference is :func:`~posenc.sinusoidal.relative_position_matrix`.

    The result must be the float64 ``(d_model, d_model)`` matrix :math:`M_k` with
    :math:`PE_{p+k} = M_k PE_p` in the interleaved layout. Inputs: widths 2 to 128, integer,
    negative, fractional and large offsets, several bases.

    Recognised mistakes: :math:`M_{-k} = M_k^\top` (sine sign flipped, or the matrix for
    row vectors), the matrix of the half layout, division instead of multiplication,
    missing factor 2 in ``2i/d``, the ``base`` argument ignored, the identity / a matrix
    that does not depend on the offset.
    """
    cases = []
    for d in (2, 4, 8, 16, 64, 128):
        for k in (1, 2, 5, -3, 0.5, 37, 1000):
            cases.append(
                Case(
                    (d, k),
                    {"base": 10000.0},
                    relative_position_matrix(d, k),
                    1e-9 + 1e-14 * abs(k),
                    f"d_model={d}, offset={k}, base=10000",
                )
            )
    for d, base in ((8, 500.0), (16, 1e6)):
        cases.append(
            Case(
                (d, 3),
                {"base": base},
                relative_position_matrix(d, 3, base=base),
                1e-9,
                f"d_model={d}, offset=3, base={base:g}",
            )
        )

    def angles(case: Case, *, division: bool = False, missing_2: bool = False) -> np.ndarray:
        d, k = case.args
        base = case.kwargs["base"]
        omega = base ** (-np.arange(d // 2) / d) if missing_2 else frequencies(d, base=base)
        return k / omega if division else k * omega

    variants = [
        Variant(("transposed",), lambda case: _block_matrix(case.args[0], angles(case), sign=-1.0)),
        Variant(
            ("half",),
            lambda case: relative_position_matrix(
                case.args[0], case.args[1], base=case.kwargs["base"], layout="half"
            ),
        ),
        Variant(("division",), lambda case: _block_matrix(case.args[0], angles(case, division=True))),
        Variant(("missing_2",), lambda case: _block_matrix(case.args[0], angles(case, missing_2=True))),
        Variant(("base_ignored",), lambda case: relative_position_matrix(case.args[0], case.args[1])),
    ]
    return run_checker(
        "check_relative_position_matrix",
        "your relative position matrix",
        fn,
        cases,
        _REL,
        variants,
        shape_doc=" = (d_model, d_model)",
        extra_diagnosis=lambda outputs: _offset_ignored(cases, outputs),
    )
