r"""The phase functional equation :math:`\varphi_m - \varphi_n = \varphi_{m-n}` (chapter 6).

A phase sequence :math:`\varphi:\mathbb{Z}\to\mathbb{R}` gives relative-position inner
products exactly when it satisfies the equation (up to a constant, and modulo
:math:`2\pi` for angles). These helpers evaluate the equation's residual on a grid of
integer positions, exactly in real arithmetic or reduced modulo a period.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._validation import check_positive_real


def _is_real(arr: np.ndarray) -> bool:
    return np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)


def wrap_angle(x: object, period: float = 2 * np.pi) -> np.ndarray:
    r"""Reduce ``x`` to the interval :math:`[-P/2, P/2)` modulo the period :math:`P`.

    The result is :math:`x - P\,\lfloor (x + P/2)/P \rfloor`: two angles are equal modulo
    :math:`P` exactly when their wrapped difference is zero. ``period`` defaults to
    :math:`2\pi` (angles); it must be a finite positive number.
    """
    period = check_positive_real(period, "period")
    arr = np.asarray(x)
    if not _is_real(arr):
        raise TypeError(f"x must be a real-valued array, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("x must be finite, got NaN or infinity")
    return arr - period * np.floor((arr + period / 2) / period)


def _as_int_array(value: object, name: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must hold integers (positions in Z), got dtype {arr.dtype}")
    return arr.astype(np.int64)


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
    """
    if not callable(phi):
        raise TypeError(f"phi must be a callable on integer arrays, got {type(phi).__name__}")
    mm = _as_int_array(m, "m")
    nn = _as_int_array(n, "n")
    try:
        mm, nn = np.broadcast_arrays(mm, nn)
    except ValueError as exc:
        raise ValueError(f"m and n must broadcast together, got shapes {mm.shape} and {nn.shape}") from exc
    values = []
    for arg in (mm, nn, mm - nn):
        out = np.asarray(phi(arg))
        if out.shape != arg.shape:
            raise ValueError(f"phi must return an array of the input's shape {arg.shape}, got {out.shape}")
        if not _is_real(out):
            raise TypeError(f"phi must return real numbers, got dtype {out.dtype}")
        values.append(out.astype(np.float64))
    residual = values[0] - values[1] - values[2]
    if period is None:
        return residual
    return wrap_angle(residual, period)
