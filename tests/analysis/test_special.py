"""posenc.analysis.special: the cosine integral Ci(x) against mpmath's ``ci`` at 300 bits."""

from __future__ import annotations

import mpmath
import pytest
from conftest import mpf_exact
from hypothesis import given
from hypothesis import strategies as st

import posenc

MP_PREC = 300


@given(x=st.one_of(st.floats(1e-300, 1.5e308), st.sampled_from([5e-324, 4.0, 4.000000000000001, 2.0**53])))
def test_cosine_integral_against_mpmath(x):
    with mpmath.workprec(MP_PREC):
        want = float(mpmath.ci(mpf_exact(x)))
    assert posenc.analysis.cosine_integral(x) == pytest.approx(want, rel=0, abs=2e-15 * max(1.0, abs(want)))
