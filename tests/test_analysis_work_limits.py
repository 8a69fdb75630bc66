"""posenc.analysis refuses work it cannot finish in seconds, and inputs that overflow, by name."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

from posenc.analysis import AttentionProbe, fit_linear_probe, fit_probe, random_attention_stack


def test_linear_probe_refuses_features_whose_mean_overflows():
    with pytest.raises(ValueError, match="features"):
        fit_linear_probe([[1e308, 1.0], [1e308, 0.0], [-1e308, 2.0]], [1.0, 2.0, 3.0])


def test_linear_probe_refuses_a_solve_of_minutes():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="features of shape"):
        fit_linear_probe(np.zeros((2, 4096)), [0.0, 1.0], ridge=1.0)
    assert time.perf_counter() - t0 < 1.0


def test_linear_probe_still_fits_a_line():
    # y = 3 f0 - 2 f1 + 5, exactly: the probe recovers it without a ridge
    rng = np.random.default_rng(0)
    F = rng.standard_normal((50, 2))
    probe = fit_linear_probe(F, 3 * F[:, 0] - 2 * F[:, 1] + 5)
    assert np.allclose(probe.predict(np.array([[1.0, 1.0], [0.0, 0.0]])), [6.0, 5.0], atol=1e-9)


def test_sinusoidal_probe_refuses_a_matrix_beyond_the_limit():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"\(d, d\)"):
        AttentionProbe("sinusoidal", d=2**16)
    with pytest.raises(ValueError, match=r"\(d, d\)"):
        fit_probe("sinusoidal", d=2**16, steps=1, train_len=2, batch=1)
    assert time.perf_counter() - t0 < 1.0


def test_attention_stack_refuses_minutes_of_work_and_a_string_flag():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="too much work"):
        random_attention_stack(np.ones((4096, 2)), 1024)
    assert time.perf_counter() - t0 < 1.0
    with pytest.raises(TypeError, match="causal"):
        random_attention_stack(np.ones((4, 2)), 1, causal="False")


@pytest.mark.parametrize(
    ("fields", "error", "name"),
    [
        ({"norms": [np.nan]}, ValueError, "norms"),
        ({"dim_mean": [1j]}, TypeError, "dim_mean"),
        ({"dim_var": "a"}, TypeError, "dim_var"),
        ({"dim_var": [-1.0]}, ValueError, "dim_var"),
        ({"min": None}, TypeError, "min"),
        ({"min": 2.0}, ValueError, "min must be at most max"),
    ],
)
def test_encoding_statistics_checks_its_fields(fields, error, name):
    from posenc import EncodingStatistics

    good = {"norms": [1.0], "dim_mean": [0.0], "dim_var": [1.0], "min": -1.0, "max": 1.0}
    with pytest.raises(error, match=name):
        EncodingStatistics(**{**good, **fields})
    made = EncodingStatistics(**good)
    assert made.norms.dtype == np.float64 and made.min == -1.0


def test_mean_dot_by_offset_averages_without_overflowing():
    from posenc.analysis.statistics import mean_dot_by_offset

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = mean_dot_by_offset([[1e154], [1e154]])
    assert np.allclose(got, [1e308, 1e308], rtol=1e-15, atol=0)
    # direct averages of the products at each offset: (1+4+9)/3, (2+6)/2, 3
    assert np.allclose(mean_dot_by_offset([[1.0], [2.0], [3.0]]), [14 / 3, 4.0, 3.0], rtol=1e-15)


def test_readout_counts_a_step_s_fixed_cost():
    import posenc
    from posenc.analysis import fit_position_readout

    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="steps"):  # a million tiny steps: half a minute before
        fit_position_readout(
            posenc.LearnedPositionalEncoding(1, 1), [1.0], train_len=1, steps=10**6, batch_size=1
        )
    assert time.perf_counter() - t0 < 1.0


def test_dot_product_sum_refuses_a_minute_of_cosines():
    from posenc.analysis import dot_product_sum

    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="k.size"):
        dot_product_sum(np.zeros(2**21 + 1), 128)  # 2**27 + 64 terms
    assert time.perf_counter() - t0 < 1.0
    assert dot_product_sum(0.0, 128) == 64.0  # D(0) = d/2
