"""Inputs that once slipped past the argument checks: each now refused, naming the argument.

Found by trying the public API as a hostile user would: numpy's timedelta64 (which numpy
files under ``np.integer``), ragged lists, extreme YaRN keys, a 2-D list of context lengths,
strings that SymPy would evaluate, infinite SymPy scores, sizes that cannot be allocated,
and exercise results that are masked or far too large.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
import sympy as sp

import posenc
import posenc.exercises
from posenc import symbolic
from posenc._arrays import is_integer_dtype, is_real_dtype
from posenc.analysis import functional_equation_residual, random_attention_stack

DURATIONS = np.array([1, 2], dtype="timedelta64[s]")
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}


def test_dtype_predicates_leave_out_durations_bools_and_complex_numbers():
    assert np.issubdtype(DURATIONS.dtype, np.integer)  # numpy's view, which the checks must not share
    assert not is_integer_dtype(DURATIONS.dtype) and not is_real_dtype(DURATIONS.dtype)
    for dtype in (np.int8, np.uint64, np.int64):
        assert is_integer_dtype(dtype) and is_real_dtype(dtype)
    for dtype in (np.float16, np.float32, np.float64):
        assert not is_integer_dtype(dtype) and is_real_dtype(dtype)
    for dtype in (np.bool_, np.complex128, object, "datetime64[s]", "U3"):
        assert not is_integer_dtype(dtype) and not is_real_dtype(dtype)


@pytest.mark.parametrize(
    "call, name",
    [
        pytest.param(lambda: posenc.sinusoidal_encoding(DURATIONS, 8), "positions", id="sinusoidal_encoding"),
        pytest.param(lambda: posenc.apply_rope(np.ones((2, 8)), DURATIONS), "positions", id="apply_rope"),
        pytest.param(lambda: posenc.softmax(DURATIONS), "scores", id="softmax"),
        pytest.param(lambda: posenc.permutation_matrix(DURATIONS), "perm", id="permutation_matrix"),
        pytest.param(lambda: posenc.apply_rope(DURATIONS.reshape(1, 2)), "x", id="apply_rope-x"),
    ],
)
def test_durations_are_not_numbers(call, name):
    with pytest.raises(TypeError, match=name):
        call()


@pytest.mark.parametrize(
    "call, name",
    [
        pytest.param(lambda r: posenc.xpos_scale(r, 8), "positions", id="xpos_scale"),
        pytest.param(lambda r: posenc.attention_temperature(r), "positions", id="attention_temperature"),
        pytest.param(lambda r: posenc.round_to_bfloat16(r), "x", id="round_to_bfloat16"),
        pytest.param(
            lambda r: posenc.rope_frequencies(
                4, scaling={**YARN, "rope_type": "longrope", "short_factor": r, "long_factor": [1.0, 1.0]}
            ),
            "short_factor",
            id="longrope-short_factor",
        ),
    ],
)
def test_ragged_lists_are_refused_naming_the_argument(call, name):
    with pytest.raises(TypeError, match=name):
        call([[1.0], [1.0, 2.0]])


@pytest.mark.parametrize("key, value", [("beta_fast", 1e308), ("beta_slow", 1e-308)])
def test_yarn_betas_beyond_the_formula_are_refused_naming_the_key(key, value):
    scaling = {**YARN, key: value, **({"beta_fast": 1e300} if key == "beta_slow" else {})}
    with pytest.raises(ValueError, match=f"scaling\\['{key}'\\]"):
        posenc.rope_frequencies(8, scaling=scaling)


@pytest.mark.parametrize(
    "extra, named",
    [
        ({"factor": 1e300, "mscale": 1e308, "mscale_all_dim": 1.0}, "mscale"),  # infinite factor
        ({"mscale": 1.0, "mscale_all_dim": 1e308}, "mscale_all_dim"),  # about 8e-308: zeros out
        ({"attention_factor": 1e300}, "attention_factor"),
    ],
)
def test_yarn_attention_factor_outside_float32s_range_is_refused(extra, named):
    with pytest.raises(ValueError, match=named):
        posenc.rope_frequencies(8, scaling={**YARN, **extra}, return_attention_factor=True)
    with pytest.raises(ValueError, match=named):  # not blamed on x, and never a table of zeros
        posenc.apply_rope(np.ones((2, 8)), scaling={**YARN, **extra})


def test_yarn_attention_factor_inside_the_range_is_the_formula():
    _, factor = posenc.rope_frequencies(8, scaling=YARN, return_attention_factor=True)
    assert factor == 0.1 * np.log(4.0) + 1.0
    extra = {"mscale": 1.0, "mscale_all_dim": 0.5}
    _, factor = posenc.rope_frequencies(8, scaling={**YARN, **extra}, return_attention_factor=True)
    assert factor == (0.1 * np.log(4.0) + 1.0) / (0.05 * np.log(4.0) + 1.0)


def test_min_base_for_context_refuses_a_table_of_lengths():
    with pytest.raises(ValueError, match="context_length"):
        posenc.min_base_for_context([[10, 20], [30, 40]], 8)
    with pytest.raises(ValueError, match="start"):
        posenc.min_base_for_context(100, 8, start=1e308)
    assert posenc.min_base_for_context([100, 100], 8).shape == (2,)


EVALUATED = "POSENC_TEST_STRING_WAS_EVALUATED"


@pytest.mark.parametrize(
    "call, name",
    [
        pytest.param(symbolic.rotation, "angle", id="rotation"),
        pytest.param(symbolic.vanishes, "expr", id="vanishes"),
        pytest.param(lambda s: symbolic.softmax_rows([[s, 1]]), "scores", id="softmax_rows"),
    ],
)
def test_symbolic_helpers_never_evaluate_a_string(call, name, monkeypatch):
    monkeypatch.delenv(EVALUATED, raising=False)
    code = f"__import__('os').environ.__setitem__('{EVALUATED}', '1') or 0"
    with pytest.raises(TypeError, match=name):
        call(code)
    assert EVALUATED not in os.environ
    with pytest.raises(TypeError, match=name):
        call(None)


def test_softmax_rows_refuses_infinite_scores_and_keeps_symbols():
    with pytest.raises(ValueError, match="scores"):
        symbolic.softmax_rows([[float("inf"), 1]])
    with pytest.raises(ValueError, match="scores"):
        symbolic.softmax_rows(sp.Matrix([[sp.oo, 0]]))
    for nan in (float("nan"), sp.nan):  # SymPy's NaN is neither finite nor infinite
        with pytest.raises(ValueError, match="scores"):
            symbolic.softmax_rows([[nan, 1]])
    a, b = sp.symbols("a b")
    row = symbolic.softmax_rows([[a, b]])
    assert sp.simplify(row[0] - 1 / (1 + sp.exp(b - a))) == 0


@pytest.mark.parametrize(
    "call, what",
    [
        pytest.param(
            lambda: functional_equation_residual(
                lambda m: 0.1 * m, np.arange(2**17)[:, None], np.arange(2**17)[None, :]
            ),
            "residual",
            id="functional_equation_residual",
        ),
        pytest.param(
            lambda: random_attention_stack(np.ones((1024, 512)), 2**10), "hidden states", id="stack"
        ),
        pytest.param(
            lambda: random_attention_stack(np.ones((2**15, 2)), 1), "attention weights", id="weights"
        ),
    ],
)
def test_arrays_beyond_the_size_limit_are_refused_before_allocating(call, what):
    start = time.process_time()
    with pytest.raises(ValueError, match=what):
        call()
    assert time.process_time() - start < 1.0


CHECKERS = [name for name in posenc.exercises.__all__ if name.startswith("check_")]


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize(
    "result, problem",
    [
        pytest.param(lambda: np.ma.masked_all((3,)), "masked array", id="masked"),
        pytest.param(lambda: np.broadcast_to(np.float64(0.0), (10**6, 10**6)), "entries", id="huge-float"),
        pytest.param(lambda: np.broadcast_to(np.int64(0), (10**6, 10**6)), "entries", id="huge-int"),
    ],
)
def test_checkers_name_a_masked_or_huge_result(checker, result, problem):
    with pytest.raises(posenc.exercises.ExerciseError, match=problem):
        if checker == "check_learned_backward":  # a student's backward returns two gradients
            getattr(posenc.exercises, checker)(lambda *args, **kwargs: (result(), result()))
        else:
            getattr(posenc.exercises, checker)(lambda *args, **kwargs: result())


def test_softmax_of_an_all_masked_slice_names_scores():
    with pytest.raises(ValueError, match="scores"):
        posenc.softmax([-np.inf, -np.inf])


def test_fit_linear_probe_overflow_names_features_and_targets():
    with pytest.raises(ValueError, match="features or targets"):
        posenc.analysis.fit_linear_probe([[5e-324], [1e-323], [0.0]], [1e300, 0.0, 1.0])


@pytest.mark.parametrize(
    "x, gain", [(np.full((4, 4), 1e308), 1.0), (np.ones((4, 4)), 1e308)], ids=["huge-x", "huge-gain"]
)
def test_random_attention_stack_overflow_names_x_and_gain(x, gain, recwarn):
    with pytest.raises(ValueError, match="x or gain"):
        random_attention_stack(x, 2, gain=gain)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_fit_position_readout_names_a_huge_target_and_refuses_hours_of_work():
    pe = posenc.LearnedPositionalEncoding(8, 4)
    with pytest.raises(ValueError, match="target"):
        posenc.analysis.fit_position_readout(pe, np.full(8, 1e308), train_len=8)
    big = posenc.LearnedPositionalEncoding(1024, 1024)
    start = time.process_time()
    with pytest.raises(ValueError, match="2\\*\\*28"):  # 4096 steps here would take over an hour
        posenc.analysis.fit_position_readout(
            big, np.arange(1024.0), train_len=1024, steps=4096, batch_size=16
        )
    assert time.process_time() - start < 1.0


def test_min_pairwise_distance_and_fit_probe_refuse_minutes_of_work_at_once():
    start = time.process_time()
    table = np.zeros((2**14 + 1, 2))  # 2**29 comparisons: minutes at 5-80 ns each
    with pytest.raises(ValueError, match="2\\*\\*28"):
        posenc.analysis.min_pairwise_distance(table)
    with pytest.raises(ValueError, match="2\\*\\*34"):  # 2**35: about half a minute
        posenc.analysis.fit_probe("alibi", train_len=64, steps=2**10, batch=2**7, vocab=16, d=48)
    assert time.process_time() - start < 1.0
    assert posenc.analysis.min_pairwise_distance(np.eye(2**7)) == np.sqrt(2)  # well inside the limit
