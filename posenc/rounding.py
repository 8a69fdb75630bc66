"""Bounds shown in prose, rounded in the bound's direction.

A measured bound such as "the error is at most 1.42e-14" must not be displayed as "at most
1e-14": rounding to nearest can move a bound to the wrong side of the value it bounds. These
helpers round the exact binary value of a float (read with ``decimal.Decimal``, so no
second rounding happens on the way) to ``digits`` significant digits, up for an upper bound
and down for a lower bound, and return the text a chapter glues.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from ._validation import check_positive_int

__all__ = ["at_least", "at_most", "round_down", "round_up"]


def _directed(value: float, digits: int, rounding: str, name: str) -> tuple[Decimal, int]:
    """``value`` rounded to ``digits`` significant digits in the direction ``rounding``, and the
    validated ``digits``."""
    digits = check_positive_int(digits, "digits", maximum=17)
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise TypeError(f"{name}: value must be a real number, got {type(value).__name__}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name}: value must be finite, got {x}")
    exact = Decimal(x)
    if exact == 0:
        return exact, digits
    step = Decimal(1).scaleb(exact.adjusted() - digits + 1)  # one unit in the last kept digit
    return exact.quantize(step, rounding=rounding), digits


def round_up(value: float, digits: int = 2) -> float:
    """The smallest number with ``digits`` significant digits that is ``>= value``.

    ``round_up(1.42e-14) == 1.5e-14``; a value that already has ``digits`` digits is kept.
    (The result is the nearest float to that decimal, which prints as the decimal.)
    """
    return float(_directed(value, digits, ROUND_CEILING, "round_up")[0])


def round_down(value: float, digits: int = 2) -> float:
    """The largest number with ``digits`` significant digits that is ``<= value``.

    ``round_down(0.9957) == 0.99``.
    """
    return float(_directed(value, digits, ROUND_FLOOR, "round_down")[0])


def _text(rounded: tuple[Decimal, int]) -> str:
    d, digits = rounded
    x = float(d)
    if x != 0 and not 1e-4 <= abs(x) < 1e6:
        return f"{x:.{digits - 1}e}"
    decimals = max(0, digits - 1 - d.adjusted()) if x != 0 else 0
    return f"{x:.{decimals}f}"


def at_most(value: float, digits: int = 2) -> str:
    """Text for "at most ``value``": ``value`` rounded up to ``digits`` significant digits.

    ``at_most(1.42e-14) == "1.5e-14"``, ``at_most(7.11e-15) == "7.2e-15"``,
    ``at_most(0.0291, 1) == "0.03"``.
    """
    return _text(_directed(value, digits, ROUND_CEILING, "at_most"))


def at_least(value: float, digits: int = 2) -> str:
    """Text for "at least ``value``": ``value`` rounded down to ``digits`` significant digits.

    ``at_least(0.0291) == "0.029"``, ``at_least(0.9957, 3) == "0.995"``,
    ``at_least(1.9898, 3) == "1.98"``.
    """
    return _text(_directed(value, digits, ROUND_FLOOR, "at_least"))
