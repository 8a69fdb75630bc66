"""Inputs a second hostile audit found: each refused at once naming the argument, or answered.

Python integers beyond float64's range (``float(10**400)`` raises ``OverflowError``), an
``int`` length turned into ``arange(L)`` before the size check, sizes with no limit
(``axial_rope_frequencies``, ``taylor_terms``, the base scan of ``min_base_for_context``),
a wavelength that overflows, messages that named the wrong argument, ``std`` unchecked for
the sinusoidal initialisation, ``dtype=None`` taken as float64, and ``permutation_matrix([])``.
"""

from __future__ import annotations

import math
import time
import tracemalloc
import warnings

import mpmath
import numpy as np
import pytest

import posenc

HUGE = 10**400  # a Python int: float(HUGE) raises OverflowError
LONGROPE = {"rope_type": "longrope", "original_max_position_embeddings": 4096, "factor": 2.0}


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: posenc.frequencies(8, base=HUGE), "base"),
        (lambda: posenc.wavelengths(8, HUGE), "base"),
        (lambda: posenc.sinusoidal_encoding(4, 8, base=HUGE), "base"),
        (lambda: posenc.apply_rope(np.ones((2, 8)), base=HUGE), "base"),
        (lambda: posenc.rope_frequencies(8, scaling={"rope_type": "linear", "factor": HUGE}), "factor"),
        (lambda: posenc.rope_frequencies(8, scaling={**LONGROPE, "factor": HUGE}), "factor"),
        (lambda: posenc.p_rope_frequencies(8, HUGE), "p"),
        (lambda: posenc.critical_dimension(8, 1e4, HUGE), "train_length"),
        (lambda: posenc.min_base_for_context(8, 8, start=HUGE), "start"),
        (lambda: posenc.attention_temperature([0], floor_scale=HUGE), "floor_scale"),
        (lambda: posenc.xpos_scale([0], 8, gamma=HUGE), "gamma"),
        (lambda: posenc.LearnedPositionalEncoding(4, 4, std=HUGE), "std"),
        (lambda: posenc.taylor_terms(lambda x: 0.0, np.ones((2, 2)), np.ones((2, 2)), step=HUGE), "step"),
    ],
)
def test_an_integer_beyond_float64_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def _refused_within_a_mebibyte(call, name):
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=name):
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize(
    "call",
    [
        lambda: posenc.sinusoidal_encoding(2**28, 2**16),
        lambda: posenc.iter_sinusoidal_blocks(2**28, 4, block=2**27),
        lambda: posenc.rope_decay_bound(4, distances=2**28),
        lambda: posenc.long_term_similarity(2**28, 4),
        lambda: posenc.xpos_scale(2**26, 8),
    ],
)
def test_an_int_length_is_refused_before_its_positions_are_formed(call):
    # arange(2**26) alone is 512 MiB; numpy reports its allocations to tracemalloc
    peak = _refused_within_a_mebibyte(call, "positions|distances|table|block|phases|angles")
    assert peak < 2**20, peak


def test_blocks_of_an_int_length_form_only_their_own_positions():
    tracemalloc.start()
    try:
        start, rows = next(posenc.iter_sinusoidal_blocks(2**28, 2, block=256))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert start == 0 and rows.shape == (256, 2) and peak < 2**20, peak
    # the rows are the table's, here against a direct formula (position p: sin p, cos p)
    p = np.arange(256.0)
    assert np.allclose(rows, np.stack([np.sin(p), np.cos(p)], axis=1), rtol=0, atol=1e-15)
    blocks = list(posenc.iter_sinusoidal_blocks(1000, 6, block=300))
    assert [s for s, _ in blocks] == [0, 300, 600, 900] and blocks[-1][1].shape == (100, 6)
    assert np.array_equal(np.concatenate([b for _, b in blocks]), posenc.sinusoidal_encoding(1000, 6))


def test_axial_frequency_matrix_has_a_size_limit():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"n_axes"):
        posenc.axial_rope_frequencies(65536, 16384)
    assert time.perf_counter() - t0 < 1.0
    assert posenc.axial_rope_frequencies(8, 2).shape == (2, 4)


def test_a_wavelength_beyond_float64_is_refused_and_the_critical_dimension_still_counts():
    with pytest.raises(ValueError, match="base"):
        posenc.wavelengths(1024, 1.7e308)
    assert np.all(np.isfinite(posenc.wavelengths(1024, 1e300)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = posenc.critical_dimension(1024, 1.7e308, 10.0)
    # pairs with period 2 pi b^(2i/d) < 10, counted with 50-digit arithmetic
    with mpmath.workdps(50):
        b = mpmath.mpf(1.7e308)
        count = sum(1 for i in range(512) if 2 * mpmath.pi * b ** (mpmath.mpf(2 * i) / 1024) < 10)
    assert got == 2 * count and count > 0


def test_min_base_for_context_refuses_scans_it_cannot_finish():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="d_head = 2"):
        posenc.min_base_for_context(3, 2, steps_per_decade=10000)
    with pytest.raises(ValueError, match="context_length"):
        posenc.min_base_for_context(2**22, 128)
    with pytest.raises(ValueError, match="steps_per_decade"):
        posenc.min_base_for_context(1000, 128, steps_per_decade=10000)
    assert time.perf_counter() - t0 < 1.0
    # with d_head = 2, B(m) = cos(m) >= 0 for m in {0, 1}: the first grid base above start
    assert posenc.min_base_for_context(2, 2) == 10 ** (math.ceil(200 * math.log10(2)) / 200)


def test_taylor_terms_refuses_a_quadratic_amount_of_work():
    x = np.zeros((10**5, 1))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="x of shape"):
        posenc.taylor_terms(lambda a: 0.0, x, x)
    assert time.perf_counter() - t0 < 1.0


def test_scaling_messages_name_the_argument_at_fault():
    with pytest.raises(ValueError, match="long_factor"):
        posenc.rope_frequencies(
            8, scaling={**LONGROPE, "short_factor": [1.0] * 4, "long_factor": [1e-320] * 4}, seq_len=5000
        )
    dynamic = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 2}
    with pytest.raises(ValueError, match="rotary_dim"):
        posenc.apply_rope(np.ones((3, 8)), rotary_dim=2, scaling=dynamic)
    with pytest.raises(ValueError, match="rotary_dim/2"):
        posenc.apply_rope(
            np.ones((3, 8)),
            rotary_dim=4,
            scaling={**LONGROPE, "short_factor": [1.0] * 4, "long_factor": [1.0] * 4},
        )


@pytest.mark.parametrize(("std", "error"), [(-1.0, ValueError), ("abc", TypeError), (math.nan, ValueError)])
def test_std_is_checked_with_either_initialisation(std, error):
    for init in ("normal", "sinusoidal"):
        with pytest.raises(error, match="std"):
            posenc.LearnedPositionalEncoding(4, 4, init=init, std=std)


def test_p_rope_keeps_the_pairs_a_decimal_p_means():
    kept = posenc.p_rope_frequencies(200, 0.29)
    assert np.count_nonzero(kept) == 29  # 0.29 * 100 pairs, though the double 0.29 is below it
    assert np.count_nonzero(posenc.p_rope_frequencies(8, 0.5)) == 2


@pytest.mark.parametrize(
    "call",
    [
        lambda: posenc.sinusoidal_encoding(2, 2, dtype=None),
        lambda: posenc.iter_sinusoidal_blocks(2, 2, dtype=None),
        lambda: posenc.SinusoidalPositionalEncoding(2, 2, dtype=None),
    ],
)
def test_dtype_none_is_refused(call):
    with pytest.raises(TypeError, match="dtype"):
        call()


def test_an_empty_permutation_is_called_empty():
    with pytest.raises(ValueError, match="non-empty"):
        posenc.permutation_matrix([])
