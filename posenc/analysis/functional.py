r"""The phase functional equation :math:`\varphi_m - \varphi_n = \varphi_{m-n}` (chapter 6).

A phase sequence :math:`\varphi:\mathbb{Z}\to\mathbb{R}` gives relative-position inner
products exactly when it satisfies the equation (up to a constant, and modulo
:math:`2\pi` for angles). These helpers evaluate the equation's residual on a grid of
integer positions, exactly in real arithmetic or reduced modulo a period.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._arrays import as_integer_array, as_real_array
from .._validation import check_callable, check_positive_real, check_size

# |x| / period above this is refused: the spacing of float64 numbers there exceeds the
# period / 2, so x does not determine its residue.
_MAX_TURNS = 2**52


def wrap_angle(x: object, period: float = 2 * np.pi) -> np.ndarray:
    r"""Reduce ``x`` to the interval :math:`[-P/2, P/2)` modulo the period :math:`P`.

    The result is :math:`x - P\,\lfloor (x + P/2)/P \rfloor`: two angles are equal modulo
    :math:`P` exactly when their wrapped difference is zero. ``period`` defaults to
    :math:`2\pi` (angles); it must be a finite positive number.

    ``x``: a real scalar or array-like of any shape (integers promoted to float64; bools,
    complex numbers, NaN and infinities refused; empty arrays give empty results) with
    ``|x| <= 2**52 * period`` (beyond it neighbouring float64 numbers are more than half a
    period apart, so ``x`` has no meaningful residue). The result is always in
    :math:`[-P/2, P/2)`; it differs from the exact residue of ``x`` by at most about
    :math:`|x|\,2^{-52}` (the rounding of :math:`P\lfloor\cdot\rfloor`), modulo :math:`P`.
    """
    period = check_positive_real(period, "period")
    arr = as_real_array(x, "x", nonempty=False)
    if arr.size and float(np.max(np.abs(arr))) > _MAX_TURNS * period:
        raise ValueError(
            f"x must have magnitude at most 2**52 * period = {_MAX_TURNS * period!r}, "
            f"got {float(np.max(np.abs(arr)))!r}"
        )
    out = arr - period * np.floor((arr + period / 2) / period)
    # Rounding can leave a value just outside [-P/2, P/2): move it in by one period.
    half = period / 2
    out = np.where(out >= half, out - period, out)
    return np.where(out < -half, out + period, out)


def functional_equation_residual(
    phi: Callable[[np.ndarray], np.ndarray],
    m: object,
    n: object,
    *,
    period: float | None = None,
) -> np.ndarray:
    r"""Residual :math:`r(m, n) = \varphi_m - \varphi_n - \varphi_{m-n}` of the phase equation.

    ``phi`` is a vectorised function of integer positions (it receives an ``int64`` array
    and must return a real array of the same shape); ``m`` and ``n`` are integer arrays
    (or scalars) that broadcast against each other. The residual is zero for every
    :math:`m, n` exactly when :math:`\varphi_m = m\theta` with :math:`\theta = \varphi_1`.

    With ``period`` :math:`P` the residual is reduced to :math:`[-P/2, P/2)`: this tests
    the equation in :math:`\mathbb{R}/P\mathbb{Z}`, the right setting for angles
    (:math:`P = 2\pi`), where the solutions are :math:`\varphi_m \equiv m\theta`.

    ``m``, ``n``: non-empty integer scalars or array-likes (numpy integer dtypes; floats,
    bools and complex numbers refused) with ``|m|, |n| <= 2**53``; ``phi`` must return
    finite real values (NaN or infinity from ``phi`` is refused, naming ``phi``);
    ``period`` None or a finite positive real number. Every error names the argument.
    """
    check_callable(phi, "phi", "on integer arrays")
    if period is not None:
        period = check_positive_real(period, "period")
    mm = as_integer_array(m, "m", what="integers (positions in Z)", nonempty=True, bounded=True)
    nn = as_integer_array(n, "n", what="integers (positions in Z)", nonempty=True, bounded=True)
    try:
        shape = np.broadcast_shapes(mm.shape, nn.shape)
    except ValueError as exc:
        raise ValueError(f"m and n must broadcast together, got shapes {mm.shape} and {nn.shape}") from exc
    check_size(shape, "the residual (m and n broadcast together)")
    mm, nn = np.broadcast_arrays(mm, nn)
    values = []
    for arg, label in ((mm, "phi(m)"), (nn, "phi(n)"), (mm - nn, "phi(m - n)")):
        out = as_real_array(phi(arg), label)  # real and finite, as float64
        if out.shape != arg.shape:
            raise ValueError(f"phi must return an array of the input's shape {arg.shape}, got {out.shape}")
        values.append(out)
    residual = values[0] - values[1] - values[2]
    if not np.all(np.isfinite(residual)):
        raise ValueError("phi's values are too large: the residual overflows float64")
    if period is None:
        return residual
    if float(np.max(np.abs(residual))) > _MAX_TURNS * period:
        raise ValueError(
            f"the residual exceeds 2**52 * period = {_MAX_TURNS * period!r} in magnitude, so it has no "
            "meaningful residue modulo period; phi's values are too large for this period"
        )
    return wrap_angle(residual, period)
