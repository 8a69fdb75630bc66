r"""Small SymPy helpers that several chapters' certifying cells share.

SymPy is not a dependency of ``posenc`` (it is in the book's requirements and in the
``notebook`` extra); it is imported when one of these functions is called.

Notation as in the book: :math:`R(\theta)` is the counter-clockwise rotation
:math:`\begin{pmatrix}\cos\theta & -\sin\theta\\ \sin\theta & \cos\theta\end{pmatrix}`.
"""

from __future__ import annotations

from typing import Any


def vanishes(expr: Any) -> bool:
    """Whether a trigonometric SymPy expression simplifies to exactly zero.

    The expression is expanded, its trigonometric functions of sums expanded
    (:math:`\\sin(a+b) = \\sin a\\cos b + \\cos a\\sin b`, ...), then simplified; ``True``
    only when the result is the integer 0, so an expression SymPy cannot reduce counts as
    not vanishing (a check built on it fails rather than passes by accident).
    """
    import sympy as sp

    return sp.simplify(sp.expand_trig(sp.expand(expr))) == 0


def rotation(angle: Any) -> Any:
    r"""The counter-clockwise rotation :math:`R(\theta)` as a 2×2 SymPy matrix."""
    import sympy as sp

    return sp.Matrix([[sp.cos(angle), -sp.sin(angle)], [sp.sin(angle), sp.cos(angle)]])


def softmax_rows(scores: Any) -> Any:
    r"""Row-wise softmax of a SymPy matrix: entry :math:`(i, j)` is :math:`e^{s_{ij}} / \sum_l e^{s_{il}}`."""
    import sympy as sp

    s = sp.Matrix(scores)
    e = s.applyfunc(sp.exp)
    return sp.Matrix(s.rows, s.cols, lambda i, j: e[i, j] / sum(e[i, col] for col in range(s.cols)))
