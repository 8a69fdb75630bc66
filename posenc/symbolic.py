r"""Small SymPy helpers that several chapters' certifying cells share.

SymPy is not a dependency of ``posenc`` (it is in the book's requirements and in the
``notebook`` extra); it is imported when one of these functions is called.

Notation as in the book: :math:`R(\theta)` is the counter-clockwise rotation
:math:`\begin{pmatrix}\cos\theta & -\sin\theta\\ \sin\theta & \cos\theta\end{pmatrix}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._validation import check_sequence


def vanishes(expr: Any) -> bool:
    r"""Whether a trigonometric SymPy expression simplifies to exactly zero.

    The expression is expanded and its trigonometric functions of sums expanded
    (:math:`\sin(a+b) = \sin a\cos b + \cos a\sin b`, ...). If that polynomial in sines
    and cosines is zero once every :math:`\sin^2 a` is written :math:`1 - \cos^2 a`, the
    answer is ``True`` at once (only identities were used); otherwise it is simplified with
    ``sympy.simplify``, which is slower. ``True`` only when a result is the integer 0, so
    an expression SymPy cannot reduce counts as not vanishing (a check built on it fails
    rather than passes by accident).

    ``expr`` a finite SymPy expression or number; strings (never parsed: SymPy would
    evaluate them), bools, matrices and other objects raise ``TypeError``, NaN and
    infinities ``ValueError``, naming ``expr``.
    """
    import sympy as sp

    expr = _expression(expr, "expr")
    trig = sp.expand_trig(sp.expand(expr))
    if _without_sine_squares(trig) == 0:
        return True
    return sp.simplify(trig) == 0


def _without_sine_squares(expr: Any) -> Any:
    r"""``expr`` expanded with every power :math:`\sin^k a`, :math:`k \ge 2`, written
    :math:`\sin^{k-2} a\,(1 - \cos^2 a)` until none is left (an identity for any ``a``)."""
    import sympy as sp

    def is_sine_square(e: Any) -> bool:
        return e.is_Pow and isinstance(e.base, sp.sin) and e.exp.is_Integer and e.exp >= 2

    expr = sp.expand(expr)
    while any(is_sine_square(e) for e in sp.preorder_traversal(expr)):
        expr = sp.expand(
            expr.replace(is_sine_square, lambda e: e.base ** (e.exp - 2) * (1 - sp.cos(e.base.args[0]) ** 2))
        )
    return expr


def rotation(angle: Any) -> Any:
    r"""The counter-clockwise rotation :math:`R(\theta)` as a 2×2 SymPy matrix.

    ``angle`` a finite SymPy expression or a number (strings, bools, matrices and other
    objects raise ``TypeError`` naming ``angle``: a string is never parsed, since SymPy
    would evaluate it; NaN and infinities raise ``ValueError``).
    """
    import sympy as sp

    angle = _expression(angle, "angle")
    return sp.Matrix([[sp.cos(angle), -sp.sin(angle)], [sp.sin(angle), sp.cos(angle)]])


def softmax_rows(scores: Any) -> Any:
    r"""Row-wise softmax of a SymPy matrix: entry :math:`(i, j)` is :math:`e^{s_{ij}} / \sum_l e^{s_{il}}`.

    ``scores`` a non-empty SymPy matrix, or a non-empty list of equally long rows of SymPy expressions
    or numbers. Strings, bools and other objects raise ``TypeError``, infinite or NaN
    entries ``ValueError`` (the softmax of a row holding ``oo`` is not defined entry by
    entry); messages name ``scores``.
    """
    import sympy as sp

    if not isinstance(scores, sp.MatrixBase):
        rows = check_sequence(scores, "scores", "rows of SymPy expressions or numbers")
        scores = [
            [
                _expression(v, f"scores[{i}][{j}]")
                for j, v in enumerate(check_sequence(row, f"scores[{i}]", "entries"))
            ]
            for i, row in enumerate(rows)
        ]
        if len({len(row) for row in scores}) != 1:
            raise ValueError(
                f"scores must have rows of one length, got lengths {[len(row) for row in scores]}"
            )
    s = sp.Matrix(scores)
    if s.rows == 0 or s.cols == 0:
        raise ValueError(f"scores must not be empty, got a {s.rows}x{s.cols} matrix")
    if any(e.is_finite is False or e.has(sp.nan) for e in s):
        raise ValueError(f"scores must have finite entries, got {s.tolist()}")
    e = s.applyfunc(sp.exp)
    return sp.Matrix(s.rows, s.cols, lambda i, j: e[i, j] / sum(e[i, col] for col in range(s.cols)))


def _expression(value: Any, name: str) -> Any:
    """``value`` as a SymPy expression; bools, strings and other non-numbers raise ``TypeError``."""
    import sympy as sp

    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a SymPy expression or a number, got the bool {value!r}")
    try:
        expr = sp.sympify(value, strict=True)
    except sp.SympifyError:
        raise TypeError(f"{name} must be a SymPy expression or a number, got {value!r}") from None
    # a matrix expression is an sp.Expr too (and a zero matrix is not the number 0)
    if not isinstance(expr, sp.Expr) or isinstance(expr, sp.MatrixExpr) or getattr(expr, "is_Matrix", False):
        raise TypeError(f"{name} must be a SymPy expression or a number, got {value!r}")
    if expr.is_finite is False or expr.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise ValueError(f"{name} must be finite (no NaN or infinity), got {expr}")
    return expr


def sinusoidal_vector(position: Any, omegas: Sequence[Any]) -> Any:
    r"""The sinusoidal encoding :math:`PE_p` of one position as a SymPy column vector.

    Vaswani et al.'s interleaved row with the frequencies given, symbolic or exact:
    entry :math:`2i` is :math:`\sin(\omega_i p)` and entry :math:`2i+1` is
    :math:`\cos(\omega_i p)`, for :math:`p` = ``position`` and :math:`\omega_i` =
    ``omegas[i]``, so the vector has ``2 * len(omegas)`` entries. With
    :math:`\omega_i = 10000^{-2i/d}` it is row :math:`p` of the table
    :func:`posenc.reference.sinusoidal_table` computes in floating point.

    ``position`` a finite SymPy expression or a number; ``omegas`` a non-empty list or
    tuple of them (SymPy symbols for a proof that holds for every frequency). Anything
    else (matrices, NaN, infinities, strings) raises ``TypeError`` or ``ValueError``
    naming the argument.
    """
    import sympy as sp

    freqs = check_sequence(omegas, "omegas", "SymPy expressions or numbers")
    p = _expression(position, "position")
    ws = [_expression(w, f"omegas[{i}]") for i, w in enumerate(freqs)]
    return sp.Matrix([f(w * p) for w in ws for f in (sp.sin, sp.cos)])
