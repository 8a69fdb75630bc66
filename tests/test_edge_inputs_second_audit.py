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
from conftest import exact_t5_bucket

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
    ("call", "name"),
    [
        (lambda: posenc.sinusoidal_encoding(2**28, 2**16), r"the table \(positions, d_model\)"),
        (lambda: posenc.iter_sinusoidal_blocks(2**28, 4, block=2**27), r"one block \(block, d_model\)"),
        (lambda: posenc.rope_decay_bound(4, distances=2**28), r"the phases \(distances"),
        (lambda: posenc.long_term_similarity(2**28, 4), r"the angles \(distances"),
        (lambda: posenc.xpos_scale(2**26, 8), "positions up to"),
    ],
)
def test_an_int_length_is_refused_before_its_positions_are_formed(call, name):
    # arange(2**26) alone is 512 MiB; numpy reports its allocations to tracemalloc
    peak = _refused_within_a_mebibyte(call, name)
    assert peak < 2**20, peak


def test_an_array_of_positions_is_still_size_checked():
    with pytest.raises(ValueError, match=r"the table \(positions, d_model\)"):
        posenc.sinusoidal_encoding(np.zeros(2**13), 2**16)  # 2**29 entries
    with pytest.raises(ValueError, match=r"the angles \(distances"):
        posenc.long_term_similarity(np.zeros(2**14), 2**16)


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


def test_alibi_refuses_a_huge_head_count_before_forming_slopes():
    t0 = time.perf_counter()
    for call in (
        lambda: posenc.alibi_bias(2**28, 2),
        lambda: posenc.alibi_bias_key_form(2**26 + 1, 2),
        lambda: posenc.alibi_slopes(2**20 + 1),
    ):
        with pytest.raises(ValueError, match="n_heads"):
            call()
    assert time.perf_counter() - t0 < 1.0
    # Press et al.'s rule at the new limit: a power of two, 2**(-8h/n)
    slopes = posenc.alibi_slopes(2**20)
    assert slopes.size == 2**20 and abs(slopes[0] / 2.0 ** (-8 / 2**20) - 1) < 1e-15 and slopes[-1] == 2.0**-8


@pytest.mark.parametrize(("dtype", "max_distance"), [(np.uint8, 300), (np.uint16, 70000), (np.uint32, 2**33)])
def test_t5_buckets_of_unsigned_distances_beyond_their_dtype(dtype, max_distance):
    r = np.array([1, 5, 200], dtype=dtype)
    got = posenc.t5_relative_position_bucket(r, max_distance=max_distance)
    want = [exact_t5_bucket(int(v), max_distance=max_distance) for v in r]  # exact rational definition
    assert got.dtype == np.int64 and got.tolist() == want


def test_t5_bucket_shapes_of_a_scalar_and_an_empty_list():
    scalar = posenc.t5_relative_position_bucket(5)
    assert isinstance(scalar, np.ndarray) and scalar.shape == () and scalar.dtype == np.int64
    empty = posenc.t5_relative_position_bucket([])
    assert empty.shape == (0,) and empty.dtype == np.int64


def test_t5_bias_refuses_more_queries_than_keys_at_the_end():
    with pytest.raises(ValueError, match="q_len must be at most k_len"):
        posenc.t5_bias(np.zeros((32, 1)), 3, 2, query_offset=None)


def test_fire_bias_refuses_a_huge_result_of_f_before_copying_it():
    huge = np.broadcast_to(np.float64(0.0), (2**30, 3, 3))
    with pytest.raises(ValueError, match="returned by f"):
        posenc.fire_bias(lambda u: huge, 3)


def test_attention_names_q_and_k_for_a_causal_mismatch():
    with pytest.raises(ValueError, match="q must not have more positions than k"):
        posenc.attention(np.zeros((3, 2)), np.zeros((2, 2)), np.zeros((2, 1)), causal=True)


def test_an_empty_mask_list_is_called_empty():
    with pytest.raises(ValueError, match="non-empty last axis"):
        posenc.position_ids_from_mask([])
