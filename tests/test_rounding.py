"""posenc.rounding: a displayed bound never lands on the wrong side of the value it bounds."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc.rounding import at_least, at_most, round_down, round_up


@pytest.mark.parametrize(
    ("value", "digits", "up", "down"),
    [
        (1.42e-14, 2, "1.5e-14", "1.4e-14"),  # the review's "at most 1e-14" for 1.42e-14
        (7.11e-15, 2, "7.2e-15", "7.1e-15"),
        (0.0291, 1, "0.03", "0.02"),
        (0.9957, 3, "0.996", "0.995"),
        (1.9898, 3, "1.99", "1.98"),
        (0.9996, 3, "1.00", "0.999"),
        (12345.6, 2, "13000", "12000"),
        (2.0, 2, "2.0", "2.0"),  # already two digits: kept
        (-1.5, 1, "-1", "-2"),  # up is towards +inf, down towards -inf
        (0.0, 3, "0", "0"),
    ],
)
def test_hand_worked_cases(value, digits, up, down):
    assert at_most(value, digits) == up
    assert at_least(value, digits) == down


@given(
    st.floats(min_value=-1e300, max_value=1e300, allow_nan=False).filter(lambda x: x == 0 or abs(x) > 1e-300),
    st.integers(1, 6),
)
def test_bounds_are_on_the_right_side_and_tight(x, digits):
    up, down = round_up(x, digits), round_down(x, digits)
    assert Decimal(str(up)) >= Decimal(x) >= Decimal(str(down))  # the printed decimal, not the float
    if x != 0:  # tight: each is less than one unit of the last kept digit away from x
        unit = Decimal(1).scaleb(Decimal(x).adjusted() - digits + 1)
        assert Decimal(str(up)) - Decimal(x) < unit and Decimal(x) - Decimal(str(down)) < unit
    assert float(at_most(x, digits)) == up and float(at_least(x, digits)) == down


def test_numpy_scalars_are_read_as_their_float():
    assert at_most(np.float32(0.1), 2) == "0.11"  # float32 0.1 is 0.100000001...
    assert at_least(np.float64(0.1), 2) == "0.10"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "1.0", None, True])
def test_bad_values_are_refused(bad):
    with pytest.raises((TypeError, ValueError), match="value"):
        at_most(bad)


@pytest.mark.parametrize("digits", [0, -1, 1.5])
def test_bad_digit_counts_are_refused(digits):
    with pytest.raises((TypeError, ValueError), match="digits"):
        round_up(1.0, digits)
