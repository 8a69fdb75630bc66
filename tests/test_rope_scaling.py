"""``dynamic`` takes L0 from ``max_position_embeddings`` when ``original_max_position_embeddings`` is missing.

transformers 5 validates a ``dynamic`` ``rope_parameters`` dict with only ``factor``
required and reads L0 from ``config.max_position_embeddings``. The expected frequencies are
recomputed here from the NTK formula, independently of posenc.
"""

import math

import numpy as np
import pytest

import posenc


def ntk(d: int, base: float, factor: float, length: int, orig: int) -> np.ndarray:
    new_base = base * (factor * max(length, orig) / orig - (factor - 1)) ** (d / (d - 2))
    return np.array([new_base ** (-2 * i / d) for i in range(d // 2)])


@pytest.mark.parametrize("seq_len", [100, 4096, 5000, 16384])
def test_dynamic_rope_parameters_without_original_length(seq_len):
    params = {"rope_type": "dynamic", "factor": 4.0, "rope_theta": 10000.0, "max_position_embeddings": 4096}
    got = posenc.rope_frequencies(64, 10000.0, params, seq_len=seq_len)
    np.testing.assert_allclose(got, ntk(64, 10000.0, 4.0, seq_len, 4096), rtol=1e-13)


def test_original_length_wins_over_max_position_embeddings():
    params = {
        "rope_type": "dynamic",
        "factor": 2.0,
        "original_max_position_embeddings": 1024,
        "max_position_embeddings": 4096,
    }
    got = posenc.rope_frequencies(32, 10000.0, params, seq_len=3000)
    np.testing.assert_allclose(got, ntk(32, 10000.0, 2.0, 3000, 1024), rtol=1e-13)
    assert not math.isclose(got[-1], ntk(32, 10000.0, 2.0, 3000, 4096)[-1], rel_tol=1e-6)


def test_dynamic_without_any_length_is_refused():
    with pytest.raises(ValueError, match="max_position_embeddings"):
        posenc.rope_frequencies(32, 10000.0, {"rope_type": "dynamic", "factor": 2.0}, seq_len=100)


@pytest.mark.parametrize(
    ("bad", "exc"), [(64.0, TypeError), (0, ValueError), (-5, ValueError), ("64", TypeError)]
)
def test_bad_max_position_embeddings_is_refused(bad, exc):
    params = {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": bad}
    with pytest.raises(exc, match=r"scaling\['max_position_embeddings'\]"):
        posenc.rope_frequencies(32, 10000.0, params, seq_len=100)
