"""The input contract of the public API, one class of bad input at a time.

In the style of scikit-learn's common tests: each table below lists the public functions
(of ``posenc``, ``posenc.analysis`` and the exercise checkers) that take one kind of
argument, with a valid call, and each test applies one class of bad input to every site:
wrong type, bools for flags and counts, complex numbers, empty and non-finite arrays,
wrong shapes, unknown choices, huge sizes and integers beyond float64, results beyond
float64, work that would take minutes. Every one must raise ``ValueError``/``TypeError``
whose message names the argument, within one second of CPU time (``time.process_time``: on a
shared, busy machine, wall time also counts the wait for a core).
What is particular to one function is tested in that module's own file.
"""

from __future__ import annotations

import math
import time
import tracemalloc

import numpy as np
import pytest
from conftest import (
    public_functions,
    reference_table,
    refuses,
    refuses_call,
)
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import posenc
import posenc.exercises
from posenc._arrays import is_integer_dtype, is_real_dtype
from posenc.analysis import functional_equation_residual, random_attention_stack
from posenc.analysis.probe import AttentionProbe

LIMIT = 2**53

NAN, INF = float("nan"), float("inf")
Q, K, V = np.zeros((2, 3)), np.ones((4, 3)), np.ones((4, 2))
X3, W3 = np.ones((4, 3)), np.eye(3)


X4 = np.ones((3, 4))

PE6 = reference_table(range(8), 6, 4.0)

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}

DYNAMIC = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 64}


def _zeros_view(shape):
    """A zero array of a huge shape that takes no memory (a broadcast view)."""
    return np.broadcast_to(np.zeros(()), shape)


# Sites that take a position-like *array*: (callable of the bad array, argument name).
POSITION_ARRAY_SITES = [
    (lambda v: posenc.sinusoidal_encoding(v, 4), "positions"),
    (lambda v: list(posenc.iter_sinusoidal_blocks(v, 4)), "positions"),
    (lambda v: posenc.apply_rope(np.ones((len(v), 4)), v), "positions"),
    (lambda v: posenc.rope_decay_bound(4, distances=v), "distances"),
    (lambda v: posenc.analysis.dot_product_profile(v, 4), "offsets"),
]

# Sites that take a position-like *scalar*.
POSITION_SCALAR_SITES = [
    (lambda v: posenc.relative_position_matrix(4, v), "offset"),
    (lambda v: posenc.rope_matrix(4, v), "position"),
]


@settings(max_examples=20)
@given(
    big=st.floats(2.0**53 + 2, 1.7976931348623157e308) | st.integers(LIMIT + 1, 2**63 - 1),
    sign=st.sampled_from([1, -1]),
)
def test_positions_beyond_2_53_are_refused_everywhere(big, sign):
    v = sign * big
    for site, name in POSITION_ARRAY_SITES:
        refuses(ValueError, name, site, [0.0, v] if isinstance(v, float) else np.array([0, v]))
    for site, name in POSITION_SCALAR_SITES:
        refuses(ValueError, name, site, v)
    refuses(
        ValueError, "x", posenc.analysis.wrap_angle, [v * 1e3 if isinstance(v, float) else float(v) * 1e3]
    )
    if isinstance(v, int):
        refuses(ValueError, "m", posenc.analysis.functional_equation_residual, lambda p: p * 1.0, [v], [0])
        refuses(ValueError, "query_offset", posenc.shaw_relative_positions, 2, 2, 1, query_offset=v)
        refuses(ValueError, "query_offset", posenc.t5_bias, np.zeros((32, 1)), 2, 2, query_offset=v)
        refuses(ValueError, "max_distance", posenc.t5_bucket_thresholds, max_distance=v)


BAD_ARRAYS = {
    "complex": lambda shape: np.ones(shape) * (1 + 1j),
    "bool": lambda shape: np.ones(shape, dtype=bool),
    "string": lambda shape: np.full(shape, "a"),
    "object": lambda shape: np.full(shape, None, dtype=object),
}

# (callable of the bad array, argument name, shape of a well-formed value, kinds refused)
ARRAY_SITES = [
    (lambda v: posenc.sinusoidal_encoding(v, 4), "positions", (3,)),
    (lambda v: posenc.SinusoidalPositionalEncoding(4, 4).forward(v), "X", (2, 3, 4)),
    (lambda v: posenc.apply_rope(v), "x", (3, 4)),
    (lambda v: posenc.apply_rope(X4, v), "positions", (3,)),
    (lambda v: posenc.rope_decay_bound(4, distances=v), "distances", (3,)),
    (lambda v: posenc.t5_relative_position_bucket(v), "relative_position", (3,)),
    (lambda v: posenc.t5_bias(v, 2, 2, num_buckets=4), "bucket_table", (4, 2)),
    (lambda v: posenc.shaw_relative_logits(v, X4, np.ones((3, 4)), 1), "q", (3, 4)),
    (lambda v: posenc.shaw_relative_logits(X4, v, np.ones((3, 4)), 1), "k", (3, 4)),
    (lambda v: posenc.shaw_relative_logits(X4, X4, v, 1), "rel_key_embeddings", (3, 4)),
    (lambda v: posenc.analysis.fit_linear_map(v, X4), "source", (3, 4)),
    (lambda v: posenc.analysis.fit_linear_map(X4, v), "target", (3, 4)),
    (lambda v: posenc.analysis.fit_shift_matrix(v, 1), "pe", (5, 4)),
    (lambda v: posenc.analysis.shift_matrix_angles(v), "m", (4, 4)),
    (lambda v: posenc.analysis.wrap_angle(v), "x", (3,)),
    (lambda v: posenc.analysis.functional_equation_residual(lambda p: p * 1.0, v, 1), "m", (3,)),
    (lambda v: posenc.analysis.functional_equation_residual(lambda p: p * 1.0, 1, v), "n", (3,)),
    (lambda v: posenc.dot_product_distance(v), "pe", (3, 4)),
    (lambda v: posenc.encoding_statistics(v), "pe", (3, 4)),
    (lambda v: posenc.analysis.mean_dot_by_offset(v), "pe", (3, 4)),
    (lambda v: posenc.analysis.dot_product_profile(v, 4), "offsets", (3,)),
    (lambda v: posenc.analysis.toeplitz_deviation(v), "matrix", (3, 3)),
]

ARRAY_IDS = [f"{name}-{i}" for i, (_, name, _) in enumerate(ARRAY_SITES)]


@pytest.mark.parametrize("kind", sorted(BAD_ARRAYS))
@pytest.mark.parametrize(("site", "name", "shape"), ARRAY_SITES, ids=ARRAY_IDS)
def test_non_real_arrays_are_refused(site, name, shape, kind):
    refuses(TypeError, name, site, BAD_ARRAYS[kind](shape))


@pytest.mark.parametrize(("site", "name", "shape"), ARRAY_SITES, ids=ARRAY_IDS)
def test_complex_lists_are_refused(site, name, shape):
    refuses(TypeError, name, site, (np.ones(shape) * (1 + 2j)).tolist())


# Sites where an empty array has no meaning; t5_relative_position_bucket and wrap_angle
# (any shape, elementwise) return an empty result for an empty input.
EMPTY_SITES = [s for i, s in enumerate(ARRAY_SITES) if i not in (5, 14)]


@pytest.mark.parametrize(("site", "name", "shape"), EMPTY_SITES, ids=[f"{s[1]}" for s in EMPTY_SITES])
def test_empty_arrays_are_refused(site, name, shape):
    empty_shape = shape[:-1] + (0,)
    integer = name in ("m", "n", "relative_position")
    refuses(ValueError, name, site, np.zeros(empty_shape, dtype=np.int64 if integer else np.float64))


FLOAT_SITES = [s for s in ARRAY_SITES if s[1] not in ("relative_position", "m", "n")]


@pytest.mark.parametrize("bad", [NAN, INF, -INF])
@pytest.mark.parametrize(("site", "name", "shape"), FLOAT_SITES, ids=[s[1] for s in FLOAT_SITES])
def test_non_finite_arrays_are_refused(site, name, shape, bad):
    v = np.ones(shape)
    v.flat[0] = bad
    refuses(ValueError, name, site, v)


@pytest.mark.parametrize(
    ("site", "name"),
    [
        (lambda: posenc.relative_position_matrix(4, 1j), "offset"),
        (lambda: posenc.rope_matrix(4, 1 + 0j), "position"),
        (lambda: posenc.frequencies(4, base=10 + 0j), "base"),
        (lambda: posenc.rope_frequencies(4, {"rope_type": "linear", "factor": 2j}), "factor"),
        (lambda: posenc.analysis.wrap_angle(1.0, period=1j), "period"),
        (lambda: posenc.analysis.fit_linear_map(X4, X4, rcond=1j), "rcond"),
        (lambda: posenc.sinusoidal_encoding(1j, 4), "positions"),
        (lambda: posenc.t5_relative_position_bucket(1j), "relative_position"),
    ],
)
def test_complex_scalars_are_refused(site, name):
    refuses(TypeError, name, site)


def test_ragged_lists_are_refused_naming_the_argument():
    refuses(TypeError, "positions", posenc.sinusoidal_encoding, [[0, 1], [2]], 4)
    refuses(TypeError, "pe", posenc.dot_product_distance, [[0, 1], [2]])
    refuses(TypeError, "x", posenc.apply_rope, [[0, 1], [2, 3, 4, 5]])


HUGE = 2**40

SIZE_SITES = [
    (lambda: posenc.frequencies(2**17), "d_model"),
    (lambda: posenc.wavelengths(2**20), "d_model"),
    (lambda: posenc.layout_permutation(HUGE), "d"),
    (lambda: posenc.rope_frequencies(HUGE), "d_head"),
    (lambda: posenc.sinusoidal_encoding(HUGE, 4), "positions"),
    (lambda: posenc.sinusoidal_encoding(2**20, 2**10), "table"),
    (lambda: posenc.SinusoidalPositionalEncoding(2**20, 2**10), "max_len, d_model"),
    (lambda: posenc.iter_sinusoidal_blocks(2**20, 2**10, block=2**20), "block"),
    (lambda: posenc.relative_position_matrix(2**15, 1), "d_model"),
    (lambda: posenc.rope_matrix(2**15, 1), "d_head"),
    (lambda: posenc.rope_decay_bound(2**16, distances=2**20), "distances"),
    (lambda: posenc.apply_rope(_zeros_view((1, 2**18))), "d_head"),
    (lambda: posenc.alibi_slopes(HUGE), "n_heads"),
    (lambda: posenc.alibi_bias(8, 2**20), "q_len"),
    (lambda: posenc.alibi_bias_key_form(8, 2**10, 2**20), "k_len"),
    (lambda: posenc.t5_bucket_thresholds(num_buckets=2**20), "num_buckets"),
    (lambda: posenc.t5_relative_position_bucket(0, num_buckets=HUGE), "num_buckets"),
    (lambda: posenc.t5_bias(np.zeros((32, 2)), 2**20, 2**20), "q_len, k_len"),
    (lambda: posenc.shaw_relative_positions(2**20, 2**20, 3), "q_len, k_len"),
    (
        lambda: posenc.shaw_relative_logits(
            _zeros_view((2**15, 2)), _zeros_view((2**15, 2)), np.ones((3, 2)), 1
        ),
        "q_len, k_len",
    ),
    (
        lambda: posenc.analysis.fit_linear_map(_zeros_view((1, 2**15)), _zeros_view((1, 2**15))),
        "source.shape[1]",
    ),
    (lambda: posenc.analysis.fit_shift_matrix(_zeros_view((2, 2**15)), 1), "pe.shape[1]"),
    (lambda: posenc.dot_product_distance(_zeros_view((2**15, 2))), "pe.shape[0]"),
    (lambda: posenc.analysis.mean_dot_by_offset(_zeros_view((2**15, 2))), "pe.shape[0]"),
    (lambda: posenc.analysis.dot_product_profile(2**20, 2**10), "offsets"),
]


@pytest.mark.parametrize(("site", "name"), SIZE_SITES, ids=[n for _, n in SIZE_SITES])
def test_huge_sizes_are_refused_fast_naming_the_limit(site, name):
    start = time.process_time()
    with pytest.raises(ValueError) as info:
        site()
    assert time.process_time() - start < 1.0
    msg = str(info.value)
    assert name in msg, msg
    assert "2**" in msg, f"the limit is not stated: {msg}"


BOOL_FOR_INT_SITES = [
    (lambda b: posenc.frequencies(b), "d_model"),
    (lambda b: posenc.sinusoidal_encoding(4, b), "d_model"),
    (lambda b: posenc.sinusoidal_encoding(b, 4), "positions"),
    (lambda b: posenc.iter_sinusoidal_blocks(4, 4, block=b), "block"),
    (lambda b: posenc.SinusoidalPositionalEncoding(b, 4), "max_len"),
    (lambda b: posenc.relative_position_matrix(4, b), "offset"),
    (lambda b: posenc.rope_frequencies(b), "d_head"),
    (lambda b: posenc.rope_frequencies(8, scaling=DYNAMIC, seq_len=b), "seq_len"),
    (lambda b: posenc.rope_matrix(4, b), "position"),
    (lambda b: posenc.rope_decay_bound(4, distances=b), "distances"),
    (lambda b: posenc.alibi_slopes(b), "n_heads"),
    (lambda b: posenc.alibi_bias(2, b), "q_len"),
    (lambda b: posenc.alibi_bias(2, 2, b), "k_len"),
    (lambda b: posenc.t5_bucket_thresholds(num_buckets=b), "num_buckets"),
    (lambda b: posenc.t5_bucket_thresholds(max_distance=b), "max_distance"),
    (lambda b: posenc.t5_bias(np.zeros((32, 1)), 2, 2, query_offset=b), "query_offset"),
    (lambda b: posenc.shaw_relative_positions(2, 2, b), "max_relative_position"),
    (lambda b: posenc.shaw_relative_positions(2, 2, 1, query_offset=b), "query_offset"),
    (lambda b: posenc.analysis.fit_shift_matrix(PE6, b), "offset"),
    (lambda b: posenc.analysis.fit_linear_map(X4, X4, rcond=b), "rcond"),
    (lambda b: posenc.analysis.dot_product_profile(3, b), "d_model"),
    (lambda b: posenc.analysis.functional_equation_residual(lambda p: p * 1.0, b, 1), "m"),
]


@pytest.mark.parametrize("b", [True, False, np.bool_(True)])
@pytest.mark.parametrize(("site", "name"), BOOL_FOR_INT_SITES, ids=[n for _, n in BOOL_FOR_INT_SITES])
def test_bools_are_not_counts_or_offsets(site, name, b):
    refuses(TypeError, name, site, b)


FLAG_SITES = [
    (lambda f: posenc.alibi_bias(2, 3, causal=f), "causal"),
    (lambda f: posenc.alibi_bias_key_form(2, 3, causal=f), "causal"),
    (lambda f: posenc.t5_relative_position_bucket(1, bidirectional=f), "bidirectional"),
    (lambda f: posenc.t5_bucket_thresholds(bidirectional=f), "bidirectional"),
    (lambda f: posenc.t5_bias(np.zeros((32, 1)), 2, 2, bidirectional=f), "bidirectional"),
    (lambda f: posenc.rope_frequencies(8, return_attention_factor=f), "return_attention_factor"),
    (lambda f: posenc.rope_frequencies(8, scaling={**YARN, "truncate": f}), "truncate"),
]


@pytest.mark.parametrize("flag", ["False", "True", 0, 1, 0.0, np.int64(1), [True]])
@pytest.mark.parametrize(("site", "name"), FLAG_SITES, ids=[n for _, n in FLAG_SITES])
def test_flags_must_be_real_bools(site, name, flag):
    refuses(TypeError, name, site, flag)


@pytest.mark.parametrize(("site", "name"), FLAG_SITES, ids=[n for _, n in FLAG_SITES])
def test_flags_accept_numpy_bools(site, name):
    site(np.bool_(False))
    site(True)


OTHER_BAD = [
    (lambda: posenc.sinusoidal_encoding(4, 4, layout=np.array(["split"])), TypeError, "layout"),
    (lambda: posenc.apply_rope(X4, layout=["half"]), TypeError, "layout"),
    (lambda: posenc.layouts.check_layout(b"half"), TypeError, "layout"),
    (lambda: posenc.analysis.fit_shift_matrix(PE6, 1, structure=np.array([1, 2])), TypeError, "structure"),
    (lambda: posenc.alibi_bias_key_form(2, 2, convention=None), TypeError, "convention"),
    (lambda: posenc.sinusoidal_encoding(4, 4, dtype=np.int16), TypeError, "dtype"),
    (lambda: posenc.frequencies(4, base=1.0), ValueError, "base"),
    (lambda: posenc.rope_decay_bound(4, distances=[1.0], base=NAN), ValueError, "base"),
    (lambda: posenc.analysis.wrap_angle([1.0], period=0.0), ValueError, "period"),
    (lambda: posenc.analysis.fit_linear_map(X4, X4, rcond=-1.0), ValueError, "rcond"),
    (lambda: posenc.analysis.fit_linear_map(X4, X4, rcond="0"), TypeError, "rcond"),
    (lambda: posenc.analysis.fit_linear_map(X4, np.ones((2, 4))), ValueError, "rows"),
    (lambda: posenc.analysis.fit_shift_matrix(PE6, 8), ValueError, "offset"),
    (lambda: posenc.analysis.fit_shift_matrix(PE6, 1.0), TypeError, "offset"),
    (lambda: posenc.analysis.shift_matrix_angles(np.ones((3, 3))), ValueError, "m.shape"),
    (
        lambda: posenc.shaw_relative_logits(np.ones((2, 3, 4)), np.ones((3, 5, 4)), np.ones((3, 4)), 1),
        ValueError,
        "q and k",
    ),
    (lambda: posenc.shaw_relative_positions(2, 2, -1), ValueError, "max_relative_position"),
    (lambda: posenc.t5_relative_position_bucket([1.0, 2.0]), TypeError, "relative_position"),
    (lambda: posenc.t5_relative_position_bucket([2**70]), TypeError, "relative_position"),
    (lambda: posenc.analysis.functional_equation_residual(lambda p: p * np.inf, [1], [2]), ValueError, "phi"),
    (
        lambda: posenc.analysis.functional_equation_residual(
            lambda p: (p * 1.0) ** 2 * 1e300, [1], [2], period=1.0
        ),
        ValueError,
        "period",
    ),
    (lambda: posenc.analysis.functional_equation_residual(lambda p: p + 0j, [1], [2]), TypeError, "phi"),
    (lambda: posenc.apply_rope(np.full((2, 4), 6e4, dtype=np.float16), [0.7, 0.8]), ValueError, "x"),
    (lambda: posenc.apply_rope(X4, [0, 1]), ValueError, "positions"),
    (lambda: posenc.apply_rope(np.ones((3, 5))), ValueError, "d_head"),
    (lambda: posenc.dot_product_distance(np.full((2, 2), 1e200)), ValueError, "pe"),
    (lambda: posenc.encoding_statistics(np.full((2, 2), 1e200)), ValueError, "pe"),
    (lambda: posenc.analysis.toeplitz_deviation([[1e308, 0.0], [0.0, -1e308]]), ValueError, "matrix"),
    (lambda: posenc.analysis.toeplitz_deviation(np.ones((2, 3))), ValueError, "matrix"),
    (
        lambda: posenc.shaw_relative_logits(
            np.full((2, 4), 1e200), np.full((2, 4), 1e200), np.ones((3, 4)), 1
        ),
        ValueError,
        "overflow",
    ),
]


@pytest.mark.parametrize(
    ("site", "exc", "name"), OTHER_BAD, ids=[f"{n}-{i}" for i, (_, _, n) in enumerate(OTHER_BAD)]
)
def test_other_bad_arguments(site, exc, name):
    refuses(exc, name, site)


# relative_position_matrix's offset, rope_matrix's position and rcond take real numbers
INT_ONLY_SITES = [site for i, site in enumerate(BOOL_FOR_INT_SITES) if i not in (5, 8, 19)]

assert [BOOL_FOR_INT_SITES[i][1] for i in (5, 8, 19)] == ["offset", "position", "rcond"]


@settings(max_examples=25)
@given(
    bad=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=3),
        st.complex_numbers(),
        st.just(np.float64(4.0)),
    )
)
def test_non_integers_are_refused_where_an_int_is_meant(bad):
    for site, name in INT_ONLY_SITES:
        refuses(TypeError, name, site, bad)


# The modules whose public functions the site tables above exercise. Every public function
# defined in them, exported or not (``posenc.layouts.check_layout``), must be in REGISTRY
# below, as must every callable exported by ``posenc`` and ``posenc.analysis``.
MODULES = (
    "sinusoidal",
    "rope",
    "layouts",
    "alibi",
    "relative",
    "analysis.rotation",
    "analysis.functional",
    "analysis.statistics",
    "rope_nd",
    "mrope",
    "rounding",
)


def _fresh_pe():
    return posenc.LearnedPositionalEncoding(4, 3)


def _backward(grad):
    pe = _fresh_pe()
    pe.forward(np.zeros((1, 2, 3)))
    return pe.backward(grad)


def _probe(**kw):
    return AttentionProbe(kw.pop("method", "alibi"), vocab=4, **kw)


def _quadratic(X):
    return float(np.sum(np.asarray(X) ** 2))


def _fit_readout(**kw):
    args = {"train_len": 2, "steps": 1}
    args.update(kw)
    target = args.pop("target", [0.0, 1.0, 2.0, 3.0])
    return posenc.analysis.fit_position_readout(_fresh_pe(), target, **args)


def _fit_probe(**kw):
    args = {"train_len": 3, "steps": 1, "batch": 2, "d": 4, "vocab": 4}
    args.update(kw)
    return posenc.analysis.fit_probe(args.pop("method", "alibi"), **args)


def _encode_returning(table):
    return lambda length: table


# Real-valued array arguments: (id, argument name, a valid shape, call, wrong shapes, -inf allowed).
MODEL_ARRAY_SITES = [
    ("softmax", "scores", (2, 3), lambda a: posenc.softmax(a), [()], True),
    ("attention.q", "q", (2, 3), lambda a: posenc.attention(a, K, V), [(3,), (2, 4)], False),
    ("attention.k", "k", (4, 3), lambda a: posenc.attention(Q, a, V), [(3,), (4, 2)], False),
    ("attention.v", "v", (4, 2), lambda a: posenc.attention(Q, K, a), [(4,), (5, 2)], False),
    ("attention.bias", "bias", (2, 4), lambda a: posenc.attention(Q, K, V, bias=a), [(3, 3)], True),
    ("self_attention.x", "x", (4, 3), lambda a: posenc.self_attention(a, W3, W3, W3), [(3,), (4, 2)], False),
    (
        "self_attention.w_q",
        "w_q",
        (3, 3),
        lambda a: posenc.self_attention(X3, a, W3, W3),
        [(3,), (2, 3)],
        False,
    ),
    ("self_attention.w_k", "w_k", (3, 3), lambda a: posenc.self_attention(X3, W3, a, W3), [(2, 3)], False),
    ("self_attention.w_v", "w_v", (3, 3), lambda a: posenc.self_attention(X3, W3, W3, a), [(3, 3, 1)], False),
    (
        "taylor_terms.x",
        "x",
        (2, 2),
        lambda a: posenc.taylor_terms(_quadratic, a, np.ones((2, 2))),
        [(4,)],
        False,
    ),
    (
        "taylor_terms.p",
        "p",
        (2, 2),
        lambda a: posenc.taylor_terms(_quadratic, np.ones((2, 2)), a),
        [(2, 3)],
        False,
    ),
    ("forward", "X", (1, 2, 3), lambda a: _fresh_pe().forward(a), [(2, 3), (1, 2, 4), (1, 5, 3)], False),
    ("backward", "grad_output", (1, 2, 3), _backward, [(2, 3), (1, 3, 3)], False),
    (
        "PositionReadout",
        "weight",
        (3,),
        lambda a: posenc.analysis.PositionReadout(a, 0.0, []),
        [(3, 1)],
        False,
    ),
    (
        "predict",
        "Y",
        (2, 3),
        lambda a: posenc.analysis.PositionReadout(np.ones(3), 0.0, []).predict(a),
        [(2, 2), ()],
        False,
    ),
    ("fit_position_readout", "target", (4,), lambda a: _fit_readout(target=a), [(4, 1), (1,)], False),
    (
        "neighbour_distances",
        "pe",
        (3, 2),
        lambda a: posenc.analysis.neighbour_distances(a),
        [(3,), (1, 2)],
        False,
    ),
    (
        "min_pairwise_distance",
        "pe",
        (3, 2),
        lambda a: posenc.analysis.min_pairwise_distance(a),
        [(3,), (1, 2)],
        False,
    ),
    (
        "is_bounded",
        "encode",
        (3, 2),
        lambda a: posenc.analysis.is_bounded(_encode_returning(a), [3]),
        [(3,), (2, 2)],
        False,
    ),
    ("cosine_integral", "x", (3,), lambda a: posenc.analysis.cosine_integral(a), [], False),
    ("oscillatory_integral", "k", (3,), lambda a: posenc.analysis.oscillatory_integral(a), [], False),
    (
        "integral_approximation",
        "k",
        (2, 2),
        lambda a: posenc.analysis.integral_approximation(a, 4),
        [],
        False,
    ),
    ("dot_product_sum", "k", (3,), lambda a: posenc.analysis.dot_product_sum(a, 4), [], False),
    ("endpoint_correction", "k", (3,), lambda a: posenc.analysis.endpoint_correction(a), [], False),
    ("near_asymptote", "k", (3,), lambda a: posenc.analysis.near_asymptote(a, 4), [], False),
    ("log_asymptote", "k", (3,), lambda a: posenc.analysis.log_asymptote(a, 4), [], False),
    ("far_asymptote", "k", (3,), lambda a: posenc.analysis.far_asymptote(a, 4), [], False),
    ("far_envelope", "k", (3,), lambda a: posenc.analysis.far_envelope(a, 4), [], False),
    ("aliased_fraction", "k", (3,), lambda a: posenc.analysis.aliased_fraction(a, 4), [], False),
]

MODEL_ARRAY_IDS = [s[0] for s in MODEL_ARRAY_SITES]


@settings(max_examples=8)
@pytest.mark.parametrize(
    ("site", "name", "shape", "call", "wrong_shapes", "neg_inf_ok"), MODEL_ARRAY_SITES, ids=MODEL_ARRAY_IDS
)
@given(data=st.data())
def test_arrays_refuse_complex_nonfinite_empty_and_wrong_shapes(
    site, name, shape, call, wrong_shapes, neg_inf_ok, data
):
    n = math.prod(shape)
    good = np.array(data.draw(st.lists(st.floats(0.5, 2), min_size=n, max_size=n))).reshape(shape)
    call(good.tolist())  # valid, as a nested list
    # complex: the imaginary part would be dropped
    imag = data.draw(st.floats(0.1, 5))
    refuses_call(lambda: call(good + 1j * imag), TypeError, name)
    refuses_call(lambda: call(good.astype(complex)), TypeError, name)  # even with a zero imaginary part
    # bool and string arrays are not numbers
    refuses_call(lambda: call(good > 1), TypeError, name)
    refuses_call(lambda: call(good.astype(str)), TypeError, name)
    # NaN or infinity somewhere
    bad = good.copy()
    where = data.draw(st.integers(0, n - 1)) if n else 0
    value = data.draw(st.sampled_from([math.nan, math.inf] + ([] if neg_inf_ok else [-math.inf])))
    bad.flat[where] = value
    refuses_call(lambda: call(bad), ValueError, name)
    # empty
    empty_shape = shape[:-1] + (0,) if shape else (0,)
    refuses_call(lambda: call(np.zeros(empty_shape)), ValueError, name)
    refuses_call(lambda: call([]), ValueError, name)
    # ragged nested lists
    if len(shape) >= 2:
        refuses_call(lambda: call([[1.0, 2.0], [3.0]]), (TypeError, ValueError), name)
    for wrong in wrong_shapes:
        refuses_call(lambda wrong=wrong: call(np.ones(wrong)), ValueError, name)


TOKEN_SITES = [
    ("copy_targets", lambda t: posenc.analysis.copy_targets(t, 1)),
    ("weights", lambda t: _probe().weights(t)),
    ("predict", lambda t: _probe().predict(t)),
    ("loss_and_grads", lambda t: _probe().loss_and_grads(t, 1)),
]


@settings(max_examples=10)
@pytest.mark.parametrize(("site", "call"), TOKEN_SITES, ids=[s[0] for s in TOKEN_SITES])
@given(tokens=st.lists(st.lists(st.integers(0, 3), min_size=3, max_size=3), min_size=1, max_size=3))
def test_tokens_must_be_a_nonempty_2d_integer_array(site, call, tokens):
    arr = np.array(tokens)
    call(tokens)  # valid
    refuses_call(lambda: call(arr + 0j), TypeError, "tokens")
    refuses_call(lambda: call(arr.astype(float)), TypeError, "tokens")
    refuses_call(lambda: call(arr > 1), TypeError, "tokens")
    refuses_call(lambda: call(-1 - arr), ValueError, "tokens")
    refuses_call(lambda: call(np.zeros((1, 0), dtype=np.int64)), ValueError, "tokens")
    refuses_call(lambda: call(arr[0]), ValueError, "tokens")
    refuses_call(lambda: call(arr[None]), ValueError, "tokens")
    refuses_call(lambda: call(np.array([[2**62]], dtype=np.uint64)), ValueError, "tokens")
    if site != "copy_targets":
        refuses_call(lambda: call(arr + 4), ValueError, "vocab")


# Integer arguments (counts, lengths, widths, offsets): (id, name, call, valid value,
# too large (None: no upper limit), minimum, must be even).
COUNT_SITES = [
    ("softmax.axis", "axis", lambda v: posenc.softmax(np.ones((2, 2)), axis=v), -1, 2, -2, False),
    ("causal_mask.q_len", "q_len", lambda v: posenc.causal_mask(v, 4), 2, 10**30, 1, False),
    ("causal_mask.k_len", "k_len", lambda v: posenc.causal_mask(1, v), 2, 10**30, 1, False),
    ("integer_encoding", "length", lambda v: posenc.analysis.integer_encoding(v), 3, 2**40, 1, False),
    ("normalized_encoding", "length", lambda v: posenc.analysis.normalized_encoding(v), 3, 2**40, 1, False),
    ("binary_encoding.length", "length", lambda v: posenc.analysis.binary_encoding(v, 8), 3, 2**40, 1, False),
    ("binary_encoding.n_bits", "n_bits", lambda v: posenc.analysis.binary_encoding(2, v), 3, 10**9, 1, False),
    ("sine_encoding", "length", lambda v: posenc.analysis.sine_encoding(v), 3, 2**40, 1, False),
    ("Learned.max_len", "max_len", lambda v: posenc.LearnedPositionalEncoding(v, 2), 3, 2**40, 1, False),
    ("Learned.d_model", "d_model", lambda v: posenc.LearnedPositionalEncoding(2, v), 3, 2**40, 1, False),
    (
        "Learned.sinusoidal",
        "d_model",
        lambda v: posenc.LearnedPositionalEncoding(2, v, init="sinusoidal"),
        4,
        2**20,
        2,
        True,
    ),
    ("fit_position_readout.train_len", "train_len", lambda v: _fit_readout(train_len=v), 2, 10**30, 1, False),
    ("fit_position_readout.steps", "steps", lambda v: _fit_readout(steps=v), 1, 10**7, 1, False),
    (
        "fit_position_readout.batch_size",
        "batch_size",
        lambda v: _fit_readout(batch_size=v),
        2,
        2**40,
        1,
        False,
    ),
    ("copy_task.n_seq", "n_seq", lambda v: posenc.analysis.copy_task(v, 3, 4), 2, 2**40, 1, False),
    ("copy_task.length", "length", lambda v: posenc.analysis.copy_task(2, v, 4), 2, 2**40, 1, False),
    ("copy_task.vocab", "vocab", lambda v: posenc.analysis.copy_task(2, 3, v), 2, 2**60, 1, False),
    ("copy_targets.offset", "offset", lambda v: posenc.analysis.copy_targets([[1, 2]], v), 1, None, 0, False),
    ("AttentionProbe.max_len", "max_len", lambda v: _probe(max_len=v), 4, 2**40, 1, False),
    ("AttentionProbe.d", "d", lambda v: _probe(d=v), 4, 2**20, 2, True),
    ("AttentionProbe.vocab", "vocab", lambda v: AttentionProbe("alibi", vocab=v), 4, 2**15, 1, False),
    (
        "AttentionProbe.num_buckets",
        "num_buckets",
        lambda v: _probe(method="t5", num_buckets=v),
        32,
        2**20,
        1,
        False,
    ),
    (
        "AttentionProbe.max_distance",
        "max_distance",
        lambda v: _probe(method="t5", max_distance=v),
        128,
        2**40,
        1,
        False,
    ),
    ("position_scores", "length", lambda v: _probe().position_scores(v), 3, 2**15, 1, False),
    ("loss_and_grads.offset", "offset", lambda v: _probe().loss_and_grads([[1, 2, 3]], v), 1, 3, 0, False),
    ("fit_probe.train_len", "train_len", lambda v: _fit_probe(train_len=v), 3, 2**40, 2, False),
    ("fit_probe.offset", "offset", lambda v: _fit_probe(offset=v), 1, 3, 0, False),
    ("fit_probe.steps", "steps", lambda v: _fit_probe(steps=v), 1, 10**7, 1, False),
    ("fit_probe.batch", "batch", lambda v: _fit_probe(batch=v), 2, 2**40, 1, False),
    ("fit_probe.d", "d", lambda v: _fit_probe(d=v), 4, 2**20, 2, True),
    ("fit_probe.vocab", "vocab", lambda v: _fit_probe(vocab=v), 4, 2**15, 1, False),
    (
        "probe_accuracy.length",
        "length",
        lambda v: posenc.analysis.probe_accuracy(_probe(), v, 1, n_seq=2),
        3,
        2**40,
        2,
        False,
    ),
    (
        "probe_accuracy.offset",
        "offset",
        lambda v: posenc.analysis.probe_accuracy(_probe(), 3, v, n_seq=2),
        1,
        3,
        0,
        False,
    ),
    (
        "probe_accuracy.n_seq",
        "n_seq",
        lambda v: posenc.analysis.probe_accuracy(_probe(), 3, 1, n_seq=v),
        2,
        2**40,
        1,
        False,
    ),
    (
        "is_defined_beyond.train",
        "train_length",
        lambda v: posenc.analysis.is_defined_beyond(posenc.analysis.integer_encoding, v, 2**20),
        3,
        2**40,
        1,
        False,
    ),
    (
        "is_defined_beyond.test",
        "test_length",
        lambda v: posenc.analysis.is_defined_beyond(posenc.analysis.integer_encoding, 1, v),
        3,
        2**40,
        2,
        False,
    ),
    (
        "stays_in_training_range",
        "test_length",
        lambda v: posenc.analysis.stays_in_training_range(posenc.analysis.integer_encoding, 1, v),
        3,
        2**40,
        2,
        False,
    ),
    (
        "is_bounded.lengths",
        "lengths",
        lambda v: posenc.analysis.is_bounded(posenc.analysis.integer_encoding, [v]),
        3,
        2**40,
        1,
        False,
    ),
    (
        "is_shift_consistent.offsets",
        "offsets",
        lambda v: posenc.analysis.is_shift_consistent(posenc.analysis.integer_encoding, [3], offsets=[v]),
        1,
        2**40,
        1,
        False,
    ),
    (
        "dot_product_sum.d_model",
        "d_model",
        lambda v: posenc.analysis.dot_product_sum(1.0, v),
        4,
        2**20,
        2,
        True,
    ),
    (
        "integral_approximation.d_model",
        "d_model",
        lambda v: posenc.analysis.integral_approximation(1.0, v),
        4,
        2**20,
        2,
        True,
    ),
    (
        "mean_square_frequency",
        "d_model",
        lambda v: posenc.analysis.mean_square_frequency(v),
        4,
        10**400,
        2,
        True,
    ),
    (
        "near_asymptote.d_model",
        "d_model",
        lambda v: posenc.analysis.near_asymptote(1.0, v),
        4,
        10**400,
        2,
        True,
    ),
    (
        "log_asymptote.d_model",
        "d_model",
        lambda v: posenc.analysis.log_asymptote(2.0, v),
        4,
        10**400,
        2,
        True,
    ),
    (
        "far_asymptote.d_model",
        "d_model",
        lambda v: posenc.analysis.far_asymptote(2.0, v),
        4,
        10**400,
        2,
        True,
    ),
    ("far_envelope.d_model", "d_model", lambda v: posenc.analysis.far_envelope(2.0, v), 4, 10**400, 2, True),
    ("aliasing_onset", "d_model", lambda v: posenc.analysis.aliasing_onset(v), 4, 10**400, 2, True),
    (
        "aliased_fraction.d_model",
        "d_model",
        lambda v: posenc.analysis.aliased_fraction(2.0, v),
        4,
        10**400,
        2,
        True,
    ),
    ("noise_floor", "d_model", lambda v: posenc.analysis.noise_floor(v), 4, 10**400, 2, True),
]


@settings(max_examples=6)
@pytest.mark.parametrize(
    ("site", "name", "call", "valid", "too_large", "minimum", "even"),
    COUNT_SITES,
    ids=[s[0] for s in COUNT_SITES],
)
@given(
    bad_type=st.sampled_from([True, False, np.True_, 2.0, np.float64(3.0), "3", None, 2 + 0j, [2]]),
    below=st.integers(-(10**6), -1),
)
def test_counts_refuse_bools_floats_out_of_range_and_huge(
    site, name, call, valid, too_large, minimum, even, bad_type, below
):
    call(valid)
    call(np.int64(valid))  # numpy integers are integers
    assume(not (site == "causal_mask.k_len" and bad_type is None))  # None: the default, k_len = q_len
    refuses_call(lambda: call(bad_type), TypeError, name)
    refuses_call(lambda: call(minimum + below if minimum > -2 else minimum - 1 + below), ValueError, name)
    if too_large is not None:
        refuses_call(lambda: call(too_large), ValueError, name)
    if even:
        refuses_call(lambda: call(valid + 1), ValueError, name)


MODEL_FLAG_SITES = [
    ("attention.causal", "causal", lambda v: posenc.attention(Q, K, V, causal=v)),
    ("self_attention.causal", "causal", lambda v: posenc.self_attention(X3, W3, W3, W3, causal=v)),
    ("fit_position_readout.train_embedding", "train_embedding", lambda v: _fit_readout(train_embedding=v)),
]


@settings(max_examples=8)
@pytest.mark.parametrize(("site", "name", "call"), MODEL_FLAG_SITES, ids=[s[0] for s in MODEL_FLAG_SITES])
@given(bad=st.sampled_from(["False", "True", "", 0, 1, None, 1.0, np.array([True]), np.int64(1)]))
def test_model_flags_must_be_real_bools(site, name, call, bad):
    call(False)
    call(np.True_)
    refuses_call(lambda: call(bad), TypeError, name)


SEED_SITES = [
    ("LearnedPositionalEncoding", lambda s: posenc.LearnedPositionalEncoding(2, 2, seed=s)),
    ("fit_position_readout", lambda s: _fit_readout(seed=s)),
    ("AttentionProbe", lambda s: _probe(method="learned", seed=s)),
    ("fit_probe", lambda s: _fit_probe(seed=s)),
    ("copy_task", lambda s: posenc.analysis.copy_task(2, 2, 3, seed=s)),
    ("probe_accuracy", lambda s: posenc.analysis.probe_accuracy(_probe(), 3, 1, n_seq=2, seed=s)),
]


@settings(max_examples=8)
@pytest.mark.parametrize(("site", "call"), SEED_SITES, ids=[s[0] for s in SEED_SITES])
@given(
    negative=st.integers(-(2**70), -1), bad_type=st.sampled_from([1.5, 0.0, True, np.False_, "0", None, [1]])
)
def test_seeds_are_non_negative_integers(site, call, negative, bad_type):
    call(2**70)
    call(np.uint64(3))
    refuses_call(lambda: call(negative), ValueError, "seed")
    refuses_call(lambda: call(bad_type), TypeError, "seed")


# Real scalar arguments: (id, name, call, valid value, values refused with ValueError).
REAL_SITES = [
    ("attention.scale", "scale", lambda v: posenc.attention(Q, K, V, scale=v), 0.5, [math.nan, math.inf]),
    (
        "self_attention.scale",
        "scale",
        lambda v: posenc.self_attention(X3, W3, W3, W3, scale=v),
        2.0,
        [math.nan],
    ),
    (
        "taylor_terms.step",
        "step",
        lambda v: posenc.taylor_terms(_quadratic, Q, Q + 1, step=v),
        1e-3,
        [0.0, -1.0, math.nan, 1e300, 1e-300],
    ),
    (
        "Learned.std",
        "std",
        lambda v: posenc.LearnedPositionalEncoding(2, 2, std=v),
        0.5,
        [0.0, -1.0, math.inf, 1e301],
    ),
    (
        "PositionReadout.bias",
        "bias",
        lambda v: posenc.analysis.PositionReadout([1.0], v, []),
        0.5,
        [math.nan, -math.inf],
    ),
    ("fit_position_readout.lr", "lr", lambda v: _fit_readout(lr=v), 0.1, [0.0, -1.0, math.nan, math.inf]),
    (
        "fit_position_readout.content_std",
        "content_std",
        lambda v: _fit_readout(content_std=v),
        0.1,
        [-0.5, math.inf],
    ),
    (
        "sine_encoding.frequency",
        "frequency",
        lambda v: posenc.analysis.sine_encoding(3, frequency=v),
        2.0,
        [0.0, math.nan, 1e308, -1.7e308],
    ),
    ("AttentionProbe.slope", "slope", lambda v: _probe(slope=v), 0.5, [math.nan, math.inf]),
    ("fit_probe.lr", "lr", lambda v: _fit_probe(lr=v, steps=3), 0.1, [0.0, -2.0, math.inf, 1.7e308]),
    ("fit_probe.slope", "slope", lambda v: _fit_probe(slope=v), 0.1, [math.nan, 1e308]),
    (
        "is_bounded.bound",
        "bound",
        lambda v: posenc.analysis.is_bounded(posenc.analysis.integer_encoding, [2], bound=v),
        1.0,
        [-1.0, math.nan],
    ),
    (
        "is_length_consistent.atol",
        "atol",
        lambda v: posenc.analysis.is_length_consistent(posenc.analysis.integer_encoding, [2], atol=v),
        0.0,
        [-1e-3, math.inf],
    ),
    (
        "is_shift_consistent.rtol",
        "rtol",
        lambda v: posenc.analysis.is_shift_consistent(posenc.analysis.integer_encoding, [2], rtol=v),
        0.0,
        [-1.0, math.nan],
    ),
    (
        "stays_in_training_range.tol",
        "tol",
        lambda v: posenc.analysis.stays_in_training_range(posenc.analysis.integer_encoding, 2, 3, tol=v),
        0.0,
        [-1.0, math.nan],
    ),
    (
        "decay.base",
        "base",
        lambda v: posenc.analysis.dot_product_sum(1.0, 4, v),
        2.0,
        [1.0, 0.5, math.inf, -3.0],
    ),
    (
        "endpoint_correction.k",
        "k",
        lambda v: posenc.analysis.endpoint_correction(v),
        2.0**53,
        [2.0**53 + 2, 1e300, 1.5e308],
    ),
    ("far_asymptote.k", "k", lambda v: posenc.analysis.far_asymptote(v, 4), -(2.0**53), [1e300, 0.0]),
    ("near_asymptote.k", "k", lambda v: posenc.analysis.near_asymptote(v, 4), 1e150, [1e200, -1.5e308]),
    ("far_envelope.k", "k", lambda v: posenc.analysis.far_envelope(v, 4), 1e-300, [5e-324, 0.0]),
    ("cosine_integral.x", "x", lambda v: posenc.analysis.cosine_integral(v), 5e-324, [0.0, -1.0]),
]


@settings(max_examples=6)
@pytest.mark.parametrize(
    ("site", "name", "call", "valid", "bad_values"), REAL_SITES, ids=[s[0] for s in REAL_SITES]
)
@given(bad_type=st.sampled_from([True, np.False_, "1.0", None, 1 + 1j, [1.0]]), data=st.data())
def test_reals_refuse_other_types_and_out_of_range_values(
    site, name, call, valid, bad_values, bad_type, data
):
    call(valid)
    assume(not (name == "scale" and bad_type is None))  # None: the default 1/sqrt(d)
    assume(not (name in ("k", "x") and isinstance(bad_type, list)))  # offsets may be arrays
    refuses_call(lambda: call(bad_type), TypeError, name)
    bad = data.draw(st.sampled_from(bad_values))
    refuses_call(lambda: call(bad), ValueError, name)


CHOICE_SITES = [
    ("normalized_encoding.mode", "mode", lambda v: posenc.analysis.normalized_encoding(3, mode=v)),
    ("Learned.init", "init", lambda v: posenc.LearnedPositionalEncoding(2, 2, init=v)),
    ("AttentionProbe.method", "method", lambda v: AttentionProbe(v)),
    ("fit_probe.method", "method", lambda v: _fit_probe(method=v)),
]


@settings(max_examples=6)
@pytest.mark.parametrize(("site", "name", "call"), CHOICE_SITES, ids=[s[0] for s in CHOICE_SITES])
@given(bad=st.sampled_from(["", "uniform", "Fraction", "ALIBI", 3, None, ("alibi",), np.array(["x", "y"])]))
def test_choices_refuse_unknown_values(site, name, call, bad):
    refuses_call(lambda: call(bad), (TypeError, ValueError), name)


# Sizes that would hang or exhaust memory are refused at once, naming an argument.
MODEL_HUGE = [
    ("binary_encoding n_bits", "n_bits", lambda: posenc.analysis.binary_encoding(4, 10**12)),
    ("binary_encoding table", "n_bits", lambda: posenc.analysis.binary_encoding(2**20, 2**9)),
    ("causal_mask", "q_len", lambda: posenc.causal_mask(2**15, 2**15)),
    ("permutation_matrix", "perm", lambda: posenc.permutation_matrix(np.arange(2**15)[::-1])),
    (
        "attention scores",
        "q",
        lambda: posenc.attention(np.zeros((2**15, 1)), np.zeros((2**15, 1)), np.zeros((2**15, 1))),
    ),
    ("Learned table", "max_len", lambda: posenc.LearnedPositionalEncoding(2**20, 2**10)),
    (
        "fit_position_readout work",
        "steps",
        lambda: posenc.analysis.fit_position_readout(
            posenc.LearnedPositionalEncoding(64, 64),
            np.zeros(64),
            train_len=64,
            steps=10**6,
            batch_size=2**10,
        ),
    ),
    ("copy_task", "n_seq", lambda: posenc.analysis.copy_task(2**20, 2**20, 5)),
    ("AttentionProbe vocab", "vocab", lambda: AttentionProbe("alibi", vocab=2**15)),
    ("AttentionProbe learned table", "max_len", lambda: AttentionProbe("learned", max_len=2**25, d=64)),
    ("position_scores", "length", lambda: _probe().position_scores(2**15)),
    ("weights", "n_seq", lambda: _probe().weights(np.zeros((2**12, 2**9), dtype=np.int64))),
    (
        "fit_probe work",
        "steps",
        lambda: posenc.analysis.fit_probe("alibi", train_len=512, steps=10**4, batch=64),
    ),
    ("probe_accuracy", "n_seq", lambda: posenc.analysis.probe_accuracy(_probe(), 2**10, 1, n_seq=2**10)),
    (
        "min_pairwise_distance",
        "pe",
        lambda: posenc.analysis.min_pairwise_distance(np.random.default_rng(0).random((2**17, 2))),
    ),
    (
        "lengths count",
        "lengths",
        lambda: posenc.analysis.is_bounded(posenc.analysis.integer_encoding, list(range(1, 2000))),
    ),
    ("dot_product_sum terms", "k", lambda: posenc.analysis.dot_product_sum(np.zeros(2**17), 2**16)),
    ("dot_product_sum width", "d_model", lambda: posenc.analysis.dot_product_sum(1.0, 2**40)),
]


@pytest.mark.parametrize(("site", "name", "call"), MODEL_HUGE, ids=[h[0] for h in MODEL_HUGE])
def test_huge_sizes_are_refused_at_once(site, name, call):
    refuses_call(call, ValueError, name)


# Values whose result lies beyond float64: a ValueError naming the culprit, never inf or NaN.
OVERFLOW = [
    ("attention q k", "q", lambda: posenc.attention([[1e200]], [[1e200]], [[1.0]])),
    (
        "attention bias",
        "bias",
        lambda: posenc.attention([[1e300]], [[1e8]], [[1.0]], scale=1.0, bias=[[1.7e308]]),
    ),
    ("self_attention", "w_q", lambda: posenc.self_attention([[1e200]], [[1e200]], [[1.0]], [[1.0]])),
    ("taylor_terms", "p", lambda: posenc.taylor_terms(_quadratic, [[1.0]], [[1e200]])),
    (
        "predict",
        "Y",
        lambda: posenc.analysis.PositionReadout([1e308, 1e308], 0.0, []).predict([[1e308, 1e308]]),
    ),
    ("fit_position_readout", "lr", lambda: _fit_readout(target=[1e100, 1e100, 0.0, 0.0], lr=1e10, steps=5)),
    (
        "neighbour_distances",
        "pe",
        lambda: posenc.analysis.neighbour_distances([[1.5e308, 1.5e308], [-1.5e308, -1.5e308]]),
    ),
    ("min_pairwise_distance", "pe", lambda: posenc.analysis.min_pairwise_distance([[1.5e308], [-1.5e308]])),
    (
        "is_shift_consistent",
        "encode",
        lambda: posenc.analysis.is_shift_consistent(
            _encode_returning(np.array([[1.5e308, 1.5e308], [-1.5e308, -1.5e308]])), [2]
        ),
    ),
    ("probe weights", "slope", lambda: AttentionProbe("alibi", slope=-1e308).weights([[0, 1, 2]])),
]


@pytest.mark.parametrize(("site", "name", "call"), OVERFLOW, ids=[o[0] for o in OVERFLOW])
def test_results_beyond_float64_are_refused(site, name, call):
    refuses_call(call, ValueError, name)


X_BHLD = np.ones((2, 3, 4, 8))  # (B, H, L, d)

LONG_ROPE = {
    "rope_type": "longrope",
    "short_factor": [1.0] * 4,
    "long_factor": [2.0] * 4,
    "original_max_position_embeddings": 16,
    "factor": 4.0,
}

ROPE_ND_BAD = [
    # apply_rope: rotary_dim
    (lambda: posenc.apply_rope(X_BHLD, rotary_dim=3), ValueError, "rotary_dim"),
    (lambda: posenc.apply_rope(X_BHLD, rotary_dim=10), ValueError, "rotary_dim"),
    (lambda: posenc.apply_rope(X_BHLD, rotary_dim=0), ValueError, "rotary_dim"),
    (lambda: posenc.apply_rope(X_BHLD, rotary_dim=-2), ValueError, "rotary_dim"),
    (lambda: posenc.apply_rope(X_BHLD, rotary_dim=True), TypeError, "rotary_dim"),
    (lambda: posenc.apply_rope(X_BHLD, rotary_dim=4.0), TypeError, "rotary_dim"),
    (lambda: posenc.apply_rope(X_BHLD, rotary_dim="4"), TypeError, "rotary_dim"),
    (lambda: posenc.apply_rope(X_BHLD, rotary_dim=2**20), ValueError, "rotary_dim"),
    (
        lambda: posenc.apply_rope(X_BHLD, scaling={"rope_type": "default", "partial_rotary_factor": 0.5}),
        ValueError,
        "partial_rotary_factor",
    ),
    (
        lambda: posenc.apply_rope(X_BHLD, scaling={"rope_type": "default", "partial_rotary_factor": NAN}),
        ValueError,
        "partial_rotary_factor",
    ),
    # apply_rope: per-sequence positions
    (lambda: posenc.apply_rope(X_BHLD, np.zeros((2, 2, 4))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.zeros((2, 1, 5))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.zeros((2, 1, 1))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.zeros((1, 2, 3, 4))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.zeros((1,))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.full((2, 1, 4), NAN)), ValueError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.full((2, 1, 4), INF)), ValueError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.full((2, 1, 4), 2**60)), ValueError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.full((2, 1, 4), 2.0**60)), ValueError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.ones((2, 1, 4), dtype=bool)), TypeError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.ones((2, 1, 4)) * 1j), TypeError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, [[0, 1, 2, 3], [0, 1]]), TypeError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.zeros((2, 1, 0))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X_BHLD, np.full((2, 1, 4), "a")), TypeError, "positions"),
    # rope_frequencies: longrope and rope_theta
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "short_factor": [1.0] * 3}),
        ValueError,
        "short_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "long_factor": [1.0] * 5}),
        ValueError,
        "long_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "long_factor": [1, 1, 0, 1]}),
        ValueError,
        "long_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "long_factor": [1, -1, 1, 1]}),
        ValueError,
        "long_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "short_factor": [1, NAN, 1, 1]}),
        ValueError,
        "short_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "short_factor": [True] * 4}),
        TypeError,
        "short_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "short_factor": ["1"] * 4}),
        TypeError,
        "short_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "short_factor": 1.0}),
        TypeError,
        "short_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "short_factor": "1111"}),
        TypeError,
        "short_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "short_factor": [[1.0] * 4]}),
        ValueError,
        "short_factor",
    ),
    (lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "factor": None}), ValueError, "factor"),
    (lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "factor": -2.0}), ValueError, "factor"),
    (lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "factor": True}), TypeError, "factor"),
    (
        lambda: posenc.rope_frequencies(
            8, scaling={**LONG_ROPE, "factor": None, "max_position_embeddings": 64.0}
        ),
        TypeError,
        "max_position_embeddings",
    ),
    (
        lambda: posenc.rope_frequencies(
            8, scaling={**LONG_ROPE, "factor": None, "max_position_embeddings": -64}
        ),
        ValueError,
        "max_position_embeddings",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "original_max_position_embeddings": 1}),
        ValueError,
        "original_max_position_embeddings",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "original_max_position_embeddings": 16.0}),
        TypeError,
        "original_max_position_embeddings",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "attention_factor": -1.0}),
        ValueError,
        "attention_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "attention_factor": INF}),
        ValueError,
        "attention_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG_ROPE, "attention_factor": "2"}),
        TypeError,
        "attention_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, 10000.0, {**LONG_ROPE, "rope_theta": 500000.0}),
        ValueError,
        "rope_theta",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={"rope_type": "default", "rope_theta": "1e4"}),
        TypeError,
        "rope_theta",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={"rope_type": "default", "rope_theta": NAN}),
        ValueError,
        "rope_theta",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={"rope_type": "default", "rope_theta": 1.0}),
        ValueError,
        "rope_theta",
    ),
    (
        lambda: posenc.apply_rope(X_BHLD, base=10.0, scaling={"rope_type": "default", "rope_theta": 1e4}),
        ValueError,
        "rope_theta",
    ),
    # apply_rope_nd
    (lambda: posenc.apply_rope_nd(X_BHLD, np.zeros((4, 3)), np.ones((2, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X_BHLD, np.zeros((5, 2)), np.ones((2, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X_BHLD, np.zeros((2, 2, 4, 2)), np.ones((2, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X_BHLD, np.zeros(4), np.ones((1, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X_BHLD, np.full((4, 2), NAN), np.ones((2, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X_BHLD, np.full((4, 2), 2**54), np.ones((2, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X_BHLD, np.ones((4, 2), dtype=bool), np.ones((2, 4))), TypeError, "coords"),
    (lambda: posenc.apply_rope_nd(X_BHLD, np.zeros((4, 2)), np.ones((2, 3))), ValueError, "freqs"),
    (lambda: posenc.apply_rope_nd(X_BHLD, np.zeros((4, 2)), np.ones(4)), ValueError, "freqs"),
    (lambda: posenc.apply_rope_nd(X_BHLD, np.zeros((4, 2)), np.ones((0, 4))), ValueError, "freqs"),
    (lambda: posenc.apply_rope_nd(X_BHLD, np.zeros((4, 2)), np.full((2, 4), INF)), ValueError, "freqs"),
    (lambda: posenc.apply_rope_nd(X_BHLD, np.zeros((4, 2)), np.ones((2, 4)) * 1j), TypeError, "freqs"),
    (
        lambda: posenc.apply_rope_nd(X_BHLD, np.full((4, 2), 2**53), np.full((2, 4), 1e300)),
        ValueError,
        "coords",
    ),
    (
        lambda: posenc.apply_rope_nd(X_BHLD, np.zeros((4, 1)), np.ones((1, 4)), layout="neox"),
        ValueError,
        "layout",
    ),
    (lambda: posenc.apply_rope_nd(np.ones((4, 7)), np.zeros((4, 1)), np.ones((1, 3))), ValueError, "d_head"),
    (lambda: posenc.apply_rope_nd(np.ones(8), np.zeros((1, 1)), np.ones((1, 4))), ValueError, "x"),
    (lambda: posenc.apply_rope_nd(np.full((4, 8), NAN), np.zeros((4, 1)), np.ones((1, 4))), ValueError, "x"),
    # axial_rope_frequencies
    (lambda: posenc.axial_rope_frequencies(8, 3), ValueError, "n_axes"),
    (lambda: posenc.axial_rope_frequencies(12, 4), ValueError, "n_axes"),
    (lambda: posenc.axial_rope_frequencies(8, 0), ValueError, "n_axes"),
    (lambda: posenc.axial_rope_frequencies(8, True), TypeError, "n_axes"),
    (lambda: posenc.axial_rope_frequencies(8, 2.0), TypeError, "n_axes"),
    (lambda: posenc.axial_rope_frequencies(7, 1), ValueError, "d_head"),
    (lambda: posenc.axial_rope_frequencies(True, 1), TypeError, "d_head"),
    (lambda: posenc.axial_rope_frequencies(2**40, 2), ValueError, "d_head"),
    (lambda: posenc.axial_rope_frequencies(8, 2, base=1.0), ValueError, "base"),
    # apply_mrope
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 4)), [1, 1, 1]), ValueError, "mrope_section"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 4)), [2, 2]), ValueError, "mrope_section"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 4)), [1, 1, 1, 1]), ValueError, "mrope_section"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 4)), [5, -1, 0]), ValueError, "mrope_section"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 4)), [True, 2, 1]), TypeError, "mrope_section"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 4)), [2.0, 1, 1]), TypeError, "mrope_section"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 4)), "211"), TypeError, "mrope_section"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 4)), 4), TypeError, "mrope_section"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((2, 4)), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros(4), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 5)), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 2, 2, 4)), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X_BHLD, np.full((3, 4), NAN), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X_BHLD, np.full((3, 4), 2**60), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X_BHLD, np.ones((3, 4), dtype=bool), [2, 1, 1]), TypeError, "positions"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 4)), [2, 1, 1], base=0.5), ValueError, "base"),
    (lambda: posenc.apply_mrope(X_BHLD, np.zeros((3, 4)), [2, 1, 1], layout=None), TypeError, "layout"),
    (lambda: posenc.apply_mrope(X_BHLD * 1j, np.zeros((3, 4)), [2, 1, 1]), TypeError, "x"),
    # mrope_positions
    (lambda: posenc.mrope_positions([-1]), ValueError, "segments[0]"),
    (lambda: posenc.mrope_positions([2, True]), TypeError, "segments[1]"),
    (lambda: posenc.mrope_positions([2.0]), TypeError, "segments[0]"),
    (lambda: posenc.mrope_positions([(1, 2)]), ValueError, "segments[0]"),
    (lambda: posenc.mrope_positions([(0, 2, 2)]), ValueError, "segments[0][0]"),
    (lambda: posenc.mrope_positions([(1, -2, 2)]), ValueError, "segments[0][1]"),
    (lambda: posenc.mrope_positions([(1, 2, 2.0)]), TypeError, "segments[0][2]"),
    (lambda: posenc.mrope_positions([(1, 2, False)]), TypeError, "segments[0][2]"),
    (lambda: posenc.mrope_positions(["ab"]), TypeError, "segments[0]"),
    (lambda: posenc.mrope_positions([None]), TypeError, "segments[0]"),
    (lambda: posenc.mrope_positions("abc"), TypeError, "segments"),
    (lambda: posenc.mrope_positions(5), TypeError, "segments"),
    (lambda: posenc.mrope_positions([]), ValueError, "segments"),
    (lambda: posenc.mrope_positions([0, 0]), ValueError, "segments"),
    (lambda: posenc.mrope_positions([(2**20, 2**20, 2**20)]), ValueError, "segments"),
    (lambda: posenc.mrope_positions([2**40]), ValueError, "segments"),
]


@pytest.mark.parametrize(
    ("site", "exc", "name"), ROPE_ND_BAD, ids=[f"{n}-{i}" for i, (_, _, n) in enumerate(ROPE_ND_BAD)]
)
def test_bad_input_is_refused_naming_the_argument(site, exc, name):
    refuses(exc, name, site)


DURATIONS = np.array([1, 2], dtype="timedelta64[s]")

YARN_4096 = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}


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
                4,
                scaling={**YARN_4096, "rope_type": "longrope", "short_factor": r, "long_factor": [1.0, 1.0]},
            ),
            "short_factor",
            id="longrope-short_factor",
        ),
    ],
)
def test_ragged_lists_are_refused_by_every_array_argument(call, name):
    with pytest.raises(TypeError, match=name):
        call([[1.0], [1.0, 2.0]])


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


def test_min_pairwise_distance_and_fit_probe_refuse_minutes_of_work_at_once():
    start = time.process_time()
    table = np.zeros((2**14 + 1, 2))  # 2**29 comparisons: minutes at 5-80 ns each
    with pytest.raises(ValueError, match="2\\*\\*28"):
        posenc.analysis.min_pairwise_distance(table)
    with pytest.raises(ValueError, match="2\\*\\*34"):  # 2**35: about half a minute
        posenc.analysis.fit_probe("alibi", train_len=64, steps=2**10, batch=2**7, vocab=16, d=48)
    assert time.process_time() - start < 1.0
    assert posenc.analysis.min_pairwise_distance(np.eye(2**7)) == np.sqrt(2)  # well inside the limit


HUGE_INT = 10**400  # a Python int: float(HUGE_INT) raises OverflowError

LONGROPE = {"rope_type": "longrope", "original_max_position_embeddings": 4096, "factor": 2.0}


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: posenc.frequencies(8, base=HUGE_INT), "base"),
        (lambda: posenc.wavelengths(8, HUGE_INT), "base"),
        (lambda: posenc.sinusoidal_encoding(4, 8, base=HUGE_INT), "base"),
        (lambda: posenc.apply_rope(np.ones((2, 8)), base=HUGE_INT), "base"),
        (lambda: posenc.rope_frequencies(8, scaling={"rope_type": "linear", "factor": HUGE_INT}), "factor"),
        (lambda: posenc.rope_frequencies(8, scaling={**LONGROPE, "factor": HUGE_INT}), "factor"),
        (lambda: posenc.p_rope_frequencies(8, HUGE_INT), "p"),
        (lambda: posenc.critical_dimension(8, 1e4, HUGE_INT), "train_length"),
        (lambda: posenc.min_base_for_context(8, 8, start=HUGE_INT), "start"),
        (lambda: posenc.attention_temperature([0], floor_scale=HUGE_INT), "floor_scale"),
        (lambda: posenc.xpos_scale([0], 8, gamma=HUGE_INT), "gamma"),
        (lambda: posenc.LearnedPositionalEncoding(4, 4, std=HUGE_INT), "std"),
        (lambda: posenc.taylor_terms(lambda x: 0.0, np.ones((2, 2)), np.ones((2, 2)), step=HUGE_INT), "step"),
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


# ---------------------------------------------------------------------------------------
# Every public function, one valid call each, and the shared classes of bad input
# ---------------------------------------------------------------------------------------
# The tables above list, per class of bad input, the functions that take such an argument.
# This registry turns it around, as scikit-learn's common tests do: it names every public
# callable of posenc and posenc.analysis with one valid call and the kind of each argument
# it checks, and every class of bad input of that kind is applied to every such argument.
_TABLE = np.arange(1.0, 49.0).reshape(8, 6) / 7  # a real (L, d) table, rows distinct
_X = np.ones((4, 8))
_LEARNED = posenc.LearnedPositionalEncoding(6, 4)


def _encoder(length: int) -> np.ndarray:
    return np.arange(float(length))[:, None]


def _phi(p: np.ndarray) -> np.ndarray:
    return np.asarray(p, dtype=float)


def _quadratic_form(x: np.ndarray) -> float:
    return float(np.sum(np.asarray(x) ** 2))


def _fire_f(u: np.ndarray) -> np.ndarray:
    return -np.asarray(u)


# name -> (callable, valid keyword arguments, {argument: kind}); kinds: "array" (real values
# of a fixed rank), "values" (real values of any shape), "count", "positive", "nonnegative"
# (integers), "real" (a finite real scalar), "flag" (a bool), "choice" (one of some strings)
REGISTRY: dict[str, tuple] = {
    "check_layout": (posenc.layouts.check_layout, {"layout": "half"}, {"layout": "choice"}),
    "EncodingStatistics": (
        posenc.EncodingStatistics,
        {"norms": [1.0], "dim_mean": [0.0], "dim_var": [1.0], "min": -1.0, "max": 1.0},
        {"norms": "array", "dim_mean": "array", "dim_var": "array", "min": "real", "max": "real"},
    ),
    "LearnedPositionalEncoding": (
        posenc.LearnedPositionalEncoding,
        {"max_len": 4, "d_model": 4},
        {"max_len": "count", "d_model": "count", "init": "choice", "std": "real"},
    ),
    "SinusoidalPositionalEncoding": (
        posenc.SinusoidalPositionalEncoding,
        {"max_len": 4, "d_model": 4},
        {"max_len": "count", "d_model": "count", "base": "real", "layout": "choice"},
    ),
    "alibi_bias": (
        posenc.alibi_bias,
        {"n_heads": 2, "q_len": 3},
        {"n_heads": "count", "q_len": "count", "k_len": "count", "causal": "flag"},
    ),
    "alibi_bias_key_form": (
        posenc.alibi_bias_key_form,
        {"n_heads": 2, "q_len": 3},
        {"n_heads": "count", "q_len": "count", "k_len": "count", "convention": "choice", "causal": "flag"},
    ),
    "alibi_slopes": (posenc.alibi_slopes, {"n_heads": 4}, {"n_heads": "count"}),
    "apply_mrope": (
        posenc.apply_mrope,
        {"x": np.ones((3, 8)), "positions": np.zeros((3, 3)), "mrope_section": (2, 1, 1)},
        {"x": "array", "positions": "array", "base": "real", "layout": "choice"},
    ),
    "apply_rope": (
        posenc.apply_rope,
        {"x": _X, "positions": np.arange(4)},
        {"x": "array", "positions": "array", "base": "real", "layout": "choice", "seq_len": "count"},
    ),
    "apply_rope_nd": (
        posenc.apply_rope_nd,
        {"x": _X, "coords": np.zeros((4, 2)), "freqs": np.ones((2, 4))},
        {"x": "array", "coords": "array", "freqs": "array", "layout": "choice"},
    ),
    "critical_dimension": (
        posenc.critical_dimension,
        {"d_head": 64, "base": 10000.0, "train_length": 4096.0},
        {"d_head": "count", "base": "real", "train_length": "real"},
    ),
    "long_term_similarity": (
        posenc.long_term_similarity,
        {"distances": [1, 2], "d_head": 8},
        {"distances": "array", "d_head": "count", "base": "real"},
    ),
    "min_base_for_context": (
        posenc.min_base_for_context,
        {"context_length": 64, "d_head": 8},
        {"d_head": "count", "steps_per_decade": "count", "start": "real"},
    ),
    "p_rope_frequencies": (
        posenc.p_rope_frequencies,
        {"d_head": 8, "p": 0.5},
        {"d_head": "count", "p": "real", "base": "real"},
    ),
    "axial_rope_frequencies": (
        posenc.axial_rope_frequencies,
        {"d_head": 8},
        {"d_head": "count", "n_axes": "count", "base": "real"},
    ),
    "mrope_positions": (posenc.mrope_positions, {"segments": [2, (1, 2, 2)]}, {}),
    "attention_temperature": (
        posenc.attention_temperature,
        {"positions": [0, 1, 2]},
        {"positions": "values", "floor_scale": "real", "attn_scale": "real"},
    ),
    "cope_positions": (posenc.cope_positions, {"gates": [[0.5, 1.0], [0.2, 0.7]]}, {"gates": "values"}),
    "fire_bias": (
        posenc.fire_bias,
        {"f": _fire_f, "q_len": 3},
        {"q_len": "count", "k_len": "count", "c": "real", "threshold": "real", "causal": "flag"},
    ),
    "kerple_bias": (
        posenc.kerple_bias,
        {"r1": [1.0], "r2": [0.5], "q_len": 3},
        {
            "r1": "array",
            "r2": "array",
            "q_len": "count",
            "k_len": "count",
            "kind": "choice",
            "causal": "flag",
        },
    ),
    "packed_position_ids": (posenc.packed_position_ids, {"lengths": [2, 3]}, {}),
    "position_ids_from_mask": (posenc.position_ids_from_mask, {"attention_mask": [[0, 1, 1]]}, {}),
    "round_to_bfloat16": (
        posenc.round_to_bfloat16,
        {"x": np.array([1.0, 2.5], dtype=np.float32)},
        {"x": "array"},
    ),
    "xpos_scale": (
        posenc.xpos_scale,
        {"positions": [0, 1], "d_head": 8},
        {"positions": "values", "d_head": "count", "gamma": "real", "scale_base": "real"},
    ),
    "attention": (
        posenc.attention,
        {"q": np.ones((2, 3)), "k": np.ones((4, 3)), "v": np.ones((4, 2))},
        {"q": "array", "k": "array", "v": "array", "causal": "flag", "scale": "real"},
    ),
    "causal_mask": (posenc.causal_mask, {"q_len": 2}, {"q_len": "count", "k_len": "count"}),
    "dot_product_distance": (posenc.dot_product_distance, {"pe": _TABLE}, {"pe": "array"}),
    "encoding_statistics": (posenc.encoding_statistics, {"pe": _TABLE}, {"pe": "array"}),
    "frequencies": (posenc.frequencies, {"d_model": 8}, {"d_model": "count", "base": "real"}),
    "get_num_threads": (posenc.get_num_threads, {}, {}),
    "iter_sinusoidal_blocks": (
        lambda **kw: list(posenc.iter_sinusoidal_blocks(**kw)),
        {"positions": 5, "d_model": 4, "block": 2},
        {"d_model": "count", "block": "positive", "base": "real", "layout": "choice"},
    ),
    "layout_permutation": (posenc.layout_permutation, {"d": 8}, {"d": "count"}),
    "permutation_matrix": (posenc.permutation_matrix, {"perm": [1, 0, 2]}, {}),
    "relative_position_matrix": (
        posenc.relative_position_matrix,
        {"d_model": 4, "offset": 2},
        {"d_model": "count", "offset": "real", "base": "real", "layout": "choice"},
    ),
    "rope_decay_bound": (
        posenc.rope_decay_bound,
        {"d_head": 8, "distances": [1, 2]},
        {"d_head": "count", "distances": "array", "base": "real"},
    ),
    "rope_frequencies": (
        posenc.rope_frequencies,
        {"d_head": 8},
        {"d_head": "count", "base": "real", "return_attention_factor": "flag"},
    ),
    "rope_matrix": (
        posenc.rope_matrix,
        {"d_head": 4, "position": 3},
        {"d_head": "count", "position": "real", "base": "real", "layout": "choice"},
    ),
    "rotate_by_angles": (
        posenc.rotate_by_angles,
        {"x": _X, "angles": np.zeros((4, 4))},
        {"x": "array", "angles": "array", "layout": "choice"},
    ),
    "self_attention": (
        posenc.self_attention,
        {"x": np.ones((4, 3)), "w_q": np.eye(3), "w_k": np.eye(3), "w_v": np.eye(3)},
        {"x": "array", "w_q": "array", "w_k": "array", "w_v": "array", "causal": "flag", "scale": "real"},
    ),
    "set_num_threads": (posenc.set_num_threads, {"n": 1}, {"n": "count"}),
    "shaw_relative_logits": (
        posenc.shaw_relative_logits,
        {
            "q": np.ones((2, 4)),
            "k": np.ones((3, 4)),
            "rel_key_embeddings": np.ones((5, 4)),
            "max_relative_position": 2,
        },
        {"q": "array", "k": "array", "rel_key_embeddings": "array", "max_relative_position": "nonnegative"},
    ),
    "shaw_relative_positions": (
        posenc.shaw_relative_positions,
        {"q_len": 2, "k_len": 3, "max_relative_position": 2},
        {"q_len": "count", "k_len": "count", "max_relative_position": "nonnegative"},
    ),
    "sinusoidal_encoding": (
        posenc.sinusoidal_encoding,
        {"positions": 4, "d_model": 6},
        {"positions": "array", "d_model": "count", "base": "real", "layout": "choice"},
    ),
    "softmax": (posenc.softmax, {"scores": np.ones((2, 3))}, {"scores": "values"}),
    "t5_bias": (
        posenc.t5_bias,
        {"bucket_table": np.ones((32, 2)), "q_len": 2, "k_len": 3},
        {
            "bucket_table": "array",
            "q_len": "count",
            "k_len": "count",
            "bidirectional": "flag",
            "num_buckets": "count",
        },
    ),
    "t5_bucket_thresholds": (
        posenc.t5_bucket_thresholds,
        {},
        {"bidirectional": "flag", "num_buckets": "count", "max_distance": "count"},
    ),
    "t5_relative_position_bucket": (
        posenc.t5_relative_position_bucket,
        {"relative_position": [-3, 0, 5]},
        {"bidirectional": "flag", "num_buckets": "count", "max_distance": "count"},
    ),
    "taylor_terms": (
        posenc.taylor_terms,
        {"f": _quadratic_form, "x": np.ones((2, 2)), "p": np.ones((2, 2))},
        {"x": "array", "p": "array", "step": "real"},
    ),
    "wavelengths": (posenc.wavelengths, {"d_model": 8}, {"d_model": "count", "base": "real"}),
    "round_up": (posenc.rounding.round_up, {"value": 1.5}, {"value": "real", "digits": "count"}),
    "round_down": (posenc.rounding.round_down, {"value": 1.5}, {"value": "real", "digits": "count"}),
    "at_most": (posenc.rounding.at_most, {"value": 1.5}, {"value": "real", "digits": "count"}),
    "at_least": (posenc.rounding.at_least, {"value": 1.5}, {"value": "real", "digits": "count"}),
    "AttentionProbe": (
        posenc.analysis.AttentionProbe,
        {"method": "alibi", "max_len": 4, "d": 4, "vocab": 4},
        {"method": "choice", "max_len": "count", "d": "count", "vocab": "count", "slope": "real"},
    ),
    "PositionReadout": (
        posenc.analysis.PositionReadout,
        {"weight": [1.0, 0.0], "bias": 0.0, "losses": []},
        {"weight": "array", "bias": "real"},
    ),
    "aliased_fraction": (
        posenc.analysis.aliased_fraction,
        {"k": [1.0, 2.0], "d_model": 8},
        {"k": "values", "d_model": "count", "base": "real"},
    ),
    "aliasing_onset": (posenc.analysis.aliasing_onset, {"d_model": 8}, {"d_model": "count", "base": "real"}),
    "binary_encoding": (
        posenc.analysis.binary_encoding,
        {"length": 4, "n_bits": 3},
        {"length": "count", "n_bits": "count"},
    ),
    "copy_targets": (posenc.analysis.copy_targets, {"tokens": [[1, 2, 3]], "offset": 1}, {}),
    "copy_task": (
        posenc.analysis.copy_task,
        {"n_seq": 2, "length": 3, "vocab": 4},
        {"n_seq": "count", "length": "count", "vocab": "count"},
    ),
    "cosine_integral": (posenc.analysis.cosine_integral, {"x": [1.0, 2.0]}, {"x": "values"}),
    "dot_product_profile": (
        posenc.analysis.dot_product_profile,
        {"offsets": [0, 1], "d_model": 8},
        {"offsets": "array", "d_model": "count", "base": "real"},
    ),
    "dot_product_sum": (
        posenc.analysis.dot_product_sum,
        {"k": [0.0, 1.0], "d_model": 8},
        {"k": "values", "d_model": "count", "base": "real"},
    ),
    "endpoint_correction": (
        posenc.analysis.endpoint_correction,
        {"k": [1.0, 2.0]},
        {"k": "values", "base": "real"},
    ),
    "far_asymptote": (
        posenc.analysis.far_asymptote,
        {"k": [1.0, 2.0], "d_model": 8},
        {"k": "values", "d_model": "count", "base": "real"},
    ),
    "far_envelope": (
        posenc.analysis.far_envelope,
        {"k": [1.0, 2.0], "d_model": 8},
        {"k": "values", "d_model": "count", "base": "real"},
    ),
    "fit_linear_map": (
        posenc.analysis.fit_linear_map,
        {"source": np.eye(3), "target": np.eye(3)},
        {"source": "array", "target": "array"},
    ),
    "fit_linear_probe": (
        posenc.analysis.fit_linear_probe,
        {"features": np.arange(8.0).reshape(4, 2) ** 2, "targets": [0.0, 1.0, 2.0, 3.0]},
        {"features": "array", "targets": "array", "ridge": "real"},
    ),
    "fit_position_readout": (
        posenc.analysis.fit_position_readout,
        {"pe": _LEARNED, "target": [0.0, 1.0, 2.0], "train_len": 2, "steps": 1},
        {"target": "array", "train_len": "count", "steps": "count", "lr": "real"},
    ),
    "fit_probe": (
        posenc.analysis.fit_probe,
        {"method": "alibi", "train_len": 3, "steps": 1, "batch": 2, "d": 4, "vocab": 4},
        {
            "method": "choice",
            "train_len": "count",
            "steps": "count",
            "batch": "count",
            "d": "count",
            "lr": "real",
        },
    ),
    "fit_shift_matrix": (
        posenc.analysis.fit_shift_matrix,
        {"pe": _TABLE, "offset": 1},
        {"pe": "array", "structure": "choice", "layout": "choice"},
    ),
    "functional_equation_residual": (
        posenc.analysis.functional_equation_residual,
        {"phi": _phi, "m": [1], "n": [2]},
        {"m": "values", "n": "values", "period": "real"},
    ),
    "integer_encoding": (posenc.analysis.integer_encoding, {"length": 4}, {"length": "count"}),
    "integral_approximation": (
        posenc.analysis.integral_approximation,
        {"k": [1.0, 2.0], "d_model": 8},
        {"k": "values", "d_model": "count", "base": "real"},
    ),
    "is_bounded": (posenc.analysis.is_bounded, {"encode": _encoder, "lengths": [2, 3]}, {"bound": "real"}),
    "is_defined_beyond": (
        posenc.analysis.is_defined_beyond,
        {"encode": _encoder, "train_length": 2, "test_length": 4},
        {"train_length": "count", "test_length": "count"},
    ),
    "is_length_consistent": (
        posenc.analysis.is_length_consistent,
        {"encode": _encoder, "lengths": [2, 3]},
        {"atol": "real"},
    ),
    "is_shift_consistent": (
        posenc.analysis.is_shift_consistent,
        {"encode": _encoder, "lengths": [2, 3]},
        {"rtol": "real"},
    ),
    "is_unique": (posenc.analysis.is_unique, {"encode": _encoder, "lengths": [2, 3]}, {}),
    "layer_flops": (
        posenc.analysis.layer_flops,
        {"seq_len": 4, "d_model": 8, "n_heads": 2},
        {"seq_len": "positive", "d_model": "positive", "n_heads": "positive"},
    ),
    "log_asymptote": (
        posenc.analysis.log_asymptote,
        {"k": [1.0, 2.0], "d_model": 8},
        {"k": "values", "d_model": "count", "base": "real"},
    ),
    "mean_dot_by_offset": (posenc.analysis.mean_dot_by_offset, {"pe": _TABLE}, {"pe": "array"}),
    "mean_square_frequency": (
        posenc.analysis.mean_square_frequency,
        {"d_model": 8},
        {"d_model": "count", "base": "real"},
    ),
    "min_pairwise_distance": (posenc.analysis.min_pairwise_distance, {"pe": _TABLE}, {"pe": "array"}),
    "near_asymptote": (
        posenc.analysis.near_asymptote,
        {"k": [1.0, 2.0], "d_model": 8},
        {"k": "values", "d_model": "count", "base": "real"},
    ),
    "neighbour_distances": (posenc.analysis.neighbour_distances, {"pe": _TABLE}, {"pe": "array"}),
    "noise_floor": (posenc.analysis.noise_floor, {"d_model": 8}, {"d_model": "count"}),
    "normalized_encoding": (
        posenc.analysis.normalized_encoding,
        {"length": 4},
        {"length": "count", "mode": "choice"},
    ),
    "oscillatory_integral": (
        posenc.analysis.oscillatory_integral,
        {"k": [1.0, 2.0]},
        {"k": "values", "base": "real"},
    ),
    "probe_accuracy": (
        posenc.analysis.probe_accuracy,
        {
            "probe": posenc.analysis.AttentionProbe("alibi", max_len=4, d=4, vocab=4),
            "length": 4,
            "offset": 1,
            "n_seq": 2,
        },
        {"length": "count", "n_seq": "count"},
    ),
    "random_attention_stack": (
        posenc.analysis.random_attention_stack,
        {"x": _X, "n_layers": 1},
        {"x": "array", "n_layers": "count", "causal": "flag", "gain": "real"},
    ),
    "shift_matrix_angles": (
        posenc.analysis.shift_matrix_angles,
        {"m": np.eye(4)},
        {"m": "array", "layout": "choice"},
    ),
    "sine_encoding": (
        posenc.analysis.sine_encoding,
        {"length": 4},
        {"length": "count", "frequency": "real"},
    ),
    "stays_in_training_range": (
        posenc.analysis.stays_in_training_range,
        {"encode": _encoder, "train_length": 2, "test_length": 4},
        {"train_length": "count", "test_length": "count", "tol": "real"},
    ),
    "toeplitz_deviation": (posenc.analysis.toeplitz_deviation, {"matrix": np.eye(3)}, {"matrix": "array"}),
    "wrap_angle": (posenc.analysis.wrap_angle, {"x": [1.0, 7.0]}, {"x": "values", "period": "real"}),
}


def _bad_arrays(valid, fixed_rank: bool) -> list[tuple[str, object]]:
    """Complex, non-finite and string versions of a valid array argument (and one with two
    extra axes when its rank is fixed)."""
    good = np.asarray(valid, dtype=np.float64)
    nan = good.copy()
    nan.flat[0] = math.nan
    return [
        ("complex", good + 1j),
        ("nan", nan),
        ("string", "abc"),
    ] + ([("extra_axis", good[..., None, None])] if fixed_rank else [])


BAD_BY_KIND = {
    # sizes that must be positive and bounded (2**80 would allocate or loop for ever)
    "count": [
        ("zero", 0),
        ("negative", -1),
        ("float", 2.5),
        ("bool", True),
        ("string", "4"),
        ("huge", 2**80),
    ],
    # sizes that only count (a block length, the sizes of an operation count): no bound
    "positive": [("zero", 0), ("negative", -1), ("float", 2.5), ("bool", True), ("string", "4")],
    # a clipping distance, where 0 is meaningful
    "nonnegative": [("negative", -1), ("float", 2.5), ("bool", True), ("string", "4"), ("huge", 2**80)],
    "real": [("nan", math.nan), ("inf", math.inf), ("string", "1.0"), ("complex", 1 + 1j)],
    "flag": [("string", "True"), ("int", 1)],
    "choice": [("unknown", "no-such-choice"), ("bytes", b"x")],
}


def _cases() -> list:
    cases = []
    for name, (_, kwargs, kinds) in REGISTRY.items():
        for arg, kind in kinds.items():
            if kind in ("array", "values"):
                bad_values = _bad_arrays(kwargs[arg], fixed_rank=kind == "array")
            else:
                bad_values = BAD_BY_KIND[kind]
            for label, bad in bad_values:
                cases.append(pytest.param(name, arg, bad, id=f"{name}-{arg}-{label}"))
    return cases


def test_the_registry_names_every_public_callable():
    import inspect

    public = {n for n in posenc.__all__ if callable(getattr(posenc, n))}
    public |= {n for n in posenc.analysis.__all__ if callable(getattr(posenc.analysis, n))}
    public |= public_functions(*MODULES)
    assert set(REGISTRY) == public, f"missing: {public - set(REGISTRY)}; stale: {set(REGISTRY) - public}"
    assert public_functions("rope_nd", "mrope") <= set(posenc.__all__)
    for name in REGISTRY:
        fn = (
            getattr(posenc, name, None)
            or getattr(posenc.analysis, name, None)
            or getattr(posenc.layouts, name, None)
            or getattr(posenc.rounding, name)
        )
        assert inspect.getdoc(fn), f"{name} has no docstring"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_public_callable_accepts_its_valid_call(name):
    fn, kwargs, _ = REGISTRY[name]
    fn(**kwargs)


@pytest.mark.parametrize(("name", "arg", "bad"), _cases())
def test_every_public_callable_refuses_each_class_of_bad_input(name, arg, bad):
    fn, kwargs, _ = REGISTRY[name]
    refuses_call(lambda: fn(**{**kwargs, arg: bad}), (TypeError, ValueError), arg)
