"""``llama3`` with ``high_freq_factor == low_freq_factor`` (Llama 4 Scout): a step, no blend band.

Meta's ``apply_scaling`` for Llama 4 keeps a pair whose wavelength is below
L0 / high_freq_factor and divides it by the factor above L0 / low_freq_factor; with both
factors 1 the two thresholds coincide. The expectation is recomputed here from that rule.
"""

import math

import numpy as np
import pytest

import posenc

SCOUT = {
    "rope_type": "llama3",
    "factor": 16.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 1.0,
    "original_max_position_embeddings": 8192,
}


@pytest.mark.parametrize("d_head", [64, 128])
def test_equal_factors_give_a_step_at_the_original_length(d_head):
    base = 500000.0
    plain = np.array([base ** (-2 * i / d_head) for i in range(d_head // 2)])
    wavelength = 2 * math.pi / plain
    expected = np.where(wavelength > 8192, plain / 16.0, plain)
    got = posenc.rope_frequencies(d_head, base, SCOUT)
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    ratio = got / plain
    assert set(np.round(ratio, 12)) == {1.0, 1 / 16}  # no pair in between
    assert np.all(np.diff(ratio) <= 0)


def test_high_below_low_is_still_refused():
    bad = {**SCOUT, "low_freq_factor": 2.0}
    with pytest.raises(ValueError, match="high_freq_factor > low_freq_factor"):
        posenc.rope_frequencies(64, 500000.0, bad)
