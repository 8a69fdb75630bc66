r"""The checker of chapter 9's exercise: the rotary embedding (RoPE).

:func:`check_rope` checks ``fn(x, positions, base=10000.0)`` against
:func:`~posenc.rope.apply_rope` in the layout the exercise asks for (interleaved or half)
and names the known mistakes: the other layout, rotation by :math:`-m\theta_i`, the
``positions`` argument ignored, division instead of multiplication, missing factor 2 in
``2i/d``, the ``base`` argument ignored, float32 angles at large positions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..layouts import check_layout
from ..rope import apply_rope
from ._angles import FLOAT32_ANGLES, float32_diagnosis, position_tol, rope_variant
from ._runner import Case, Variant, check_fn, frequency_mistakes, register_mistakes, run_checker

_ROPE = register_mistakes(
    "check_rope",
    layout=(
        "half/interleaved layout confusion",
        "this exercise asks for the {layout} layout, and your function pairs the coordinates as in the "
        "{other} layout. Interleaved (RoFormer, Meta LLaMA) pairs coordinates (2i, 2i+1); half (GPT-NeoX, "
        "Hugging Face rotate_half) pairs (i, i + d/2). Both are RoPE, but a checkpoint trained with one "
        "layout is wrong under the other.",
    ),
    sign=(
        "rotation by -m*theta (sine sign flipped)",
        "the pair (a, b) becomes (a cos - b sin, a sin + b cos), i.e. (a + ib) * exp(i m theta).",
    ),
    positions=(
        "positions argument ignored",
        "rotate row l by the angle positions[l] * theta_i, not l * theta_i: positions may be offset "
        "(decoding with a cache) or arbitrary.",
    ),
    **frequency_mistakes("m", "theta_i"),
    float32=FLOAT32_ANGLES,
)


def check_rope(fn: Callable, layout: str = "interleaved") -> str:
    r"""Check ``fn(x, positions, base=10000.0)`` against :func:`~posenc.rope.apply_rope` with ``layout``.

    ``x`` has shape ``(..., L, d_head)`` (2-D and 3-D inputs are used), ``positions`` is a
    1-D float64 array of length ``L``; the result is a float64 array of the shape of ``x``
    in which pair :math:`i` is rotated by :math:`m\theta_i` counter-clockwise,
    :math:`(a, b) \mapsto (a\cos - b\sin, a\sin + b\cos)`. ``layout`` is the layout the
    exercise asks for: ``"interleaved"`` pairs ``(2i, 2i+1)``, ``"half"`` (or its synonym
    ``"split"``) pairs ``(i, i + d/2)``.

    Recognised mistakes: the other layout (half vs interleaved confusion), rotation by
    :math:`-m\theta_i` (sine sign flipped), both of these, the ``positions`` argument ignored
    (always ``0..L-1``), division instead of multiplication, missing factor 2 in ``2i/d``,
    the ``base`` argument ignored, float32 angles at large positions.
    """
    check_fn("check_rope", fn)
    layout = check_layout(layout, "check_rope: the argument layout")
    other = "half" if layout == "interleaved" else "interleaved"
    rng = np.random.default_rng(9)
    cases = []
    specs = []
    for d in (2, 4, 8, 16, 64):
        specs.append(((7, d), np.arange(7, dtype=np.float64), 10000.0))
        specs.append(((3, 5, d), np.arange(10, 15, dtype=np.float64), 10000.0))
        specs.append(((6, d), rng.uniform(-500, 500, size=6), 10000.0))
    for d, base in ((16, 500.0), (32, 1e6)):
        specs.append(((2, 4, d), np.array([3.0, 1.0, 4.0, 1.5]), base))
    for d in (8, 64):
        specs.append(((4, d), np.array([123_456_789.0, 98_765_431.0, 2.0**27 + 3.0, 16_777_217.0]), 10000.0))
    for shape, positions, base in specs:
        x = rng.standard_normal(shape)
        cases.append(
            Case(
                (x, positions.copy()),
                {"base": base},
                apply_rope(x, positions, base=base, layout=layout),
                position_tol(positions, scale=4.0),
                f"x of shape {shape}, positions={np.array2string(positions[:4], precision=3, separator=', ')}"
                f"{'...' if positions.size > 4 else ''}, base={base:g}",
                large=bool(np.max(np.abs(positions), initial=0.0) >= 2.0**20),
            )
        )

    def v(**kw):
        def compute(case: Case) -> np.ndarray:
            x, positions = case.args
            return rope_variant(
                x,
                positions,
                case.kwargs["base"],
                kw.get("layout", layout),
                division=kw.get("division", False),
                missing_2=kw.get("missing_2", False),
            )

        return compute

    variants = [
        Variant(("layout",), v(layout=other)),
        Variant(
            ("sign",),
            lambda case: apply_rope(case.args[0], -case.args[1], base=case.kwargs["base"], layout=layout),
        ),
        Variant(
            ("layout", "sign"),
            lambda case: apply_rope(case.args[0], -case.args[1], base=case.kwargs["base"], layout=other),
        ),
        Variant(
            ("positions",),
            lambda case: apply_rope(case.args[0], None, base=case.kwargs["base"], layout=layout),
        ),
        Variant(("division",), v(division=True)),
        Variant(("missing_2",), v(missing_2=True)),
        Variant(("base_ignored",), lambda case: apply_rope(case.args[0], case.args[1], layout=layout)),
    ]
    return run_checker(
        "check_rope",
        f"your RoPE ({layout})",
        fn,
        cases,
        _ROPE,
        variants,
        shape_doc=" = x.shape",
        fmt={"layout": layout, "other": other},
        extra_diagnosis=lambda outputs: float32_diagnosis([c.args[1] for c in cases], cases, outputs),
    )
