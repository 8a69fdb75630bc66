"""The input contract of the Part V RoPE additions: invalid input is refused, naming the argument.

Every site below must raise ``TypeError``/``ValueError`` whose message names the argument
(or the ``scaling`` key, or the ``segments`` item), in under one second. The valid half of
the contract (agreement with independent oracles) is in tests/test_rope_nd.py; here a few
valid inputs at the edges (limits, containers, dtypes) are checked against loops too.
Modules covered: rope_nd, mrope (and the new arguments of rope.apply_rope).
"""

from __future__ import annotations

import cmath

import numpy as np
import pytest
from conftest import EPS, public_functions, refuses, rounded_omegas

import posenc

NAN, INF = float("nan"), float("inf")
X = np.ones((2, 3, 4, 8))  # (B, H, L, d)
LONG = {
    "rope_type": "longrope",
    "short_factor": [1.0] * 4,
    "long_factor": [2.0] * 4,
    "original_max_position_embeddings": 16,
    "factor": 4.0,
}


BAD = [
    # apply_rope: rotary_dim
    (lambda: posenc.apply_rope(X, rotary_dim=3), ValueError, "rotary_dim"),
    (lambda: posenc.apply_rope(X, rotary_dim=10), ValueError, "rotary_dim"),
    (lambda: posenc.apply_rope(X, rotary_dim=0), ValueError, "rotary_dim"),
    (lambda: posenc.apply_rope(X, rotary_dim=-2), ValueError, "rotary_dim"),
    (lambda: posenc.apply_rope(X, rotary_dim=True), TypeError, "rotary_dim"),
    (lambda: posenc.apply_rope(X, rotary_dim=4.0), TypeError, "rotary_dim"),
    (lambda: posenc.apply_rope(X, rotary_dim="4"), TypeError, "rotary_dim"),
    (lambda: posenc.apply_rope(X, rotary_dim=2**20), ValueError, "rotary_dim"),
    (
        lambda: posenc.apply_rope(X, scaling={"rope_type": "default", "partial_rotary_factor": 0.5}),
        ValueError,
        "partial_rotary_factor",
    ),
    (
        lambda: posenc.apply_rope(X, scaling={"rope_type": "default", "partial_rotary_factor": NAN}),
        ValueError,
        "partial_rotary_factor",
    ),
    # apply_rope: per-sequence positions
    (lambda: posenc.apply_rope(X, np.zeros((2, 2, 4))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X, np.zeros((2, 1, 5))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X, np.zeros((2, 1, 1))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X, np.zeros((1, 2, 3, 4))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X, np.zeros((1,))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X, np.full((2, 1, 4), NAN)), ValueError, "positions"),
    (lambda: posenc.apply_rope(X, np.full((2, 1, 4), INF)), ValueError, "positions"),
    (lambda: posenc.apply_rope(X, np.full((2, 1, 4), 2**60)), ValueError, "positions"),
    (lambda: posenc.apply_rope(X, np.full((2, 1, 4), 2.0**60)), ValueError, "positions"),
    (lambda: posenc.apply_rope(X, np.ones((2, 1, 4), dtype=bool)), TypeError, "positions"),
    (lambda: posenc.apply_rope(X, np.ones((2, 1, 4)) * 1j), TypeError, "positions"),
    (lambda: posenc.apply_rope(X, [[0, 1, 2, 3], [0, 1]]), TypeError, "positions"),
    (lambda: posenc.apply_rope(X, np.zeros((2, 1, 0))), ValueError, "positions"),
    (lambda: posenc.apply_rope(X, np.full((2, 1, 4), "a")), TypeError, "positions"),
    # rope_frequencies: longrope and rope_theta
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "short_factor": [1.0] * 3}),
        ValueError,
        "short_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "long_factor": [1.0] * 5}),
        ValueError,
        "long_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "long_factor": [1, 1, 0, 1]}),
        ValueError,
        "long_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "long_factor": [1, -1, 1, 1]}),
        ValueError,
        "long_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "short_factor": [1, NAN, 1, 1]}),
        ValueError,
        "short_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "short_factor": [True] * 4}),
        TypeError,
        "short_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "short_factor": ["1"] * 4}),
        TypeError,
        "short_factor",
    ),
    (lambda: posenc.rope_frequencies(8, scaling={**LONG, "short_factor": 1.0}), TypeError, "short_factor"),
    (lambda: posenc.rope_frequencies(8, scaling={**LONG, "short_factor": "1111"}), TypeError, "short_factor"),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "short_factor": [[1.0] * 4]}),
        ValueError,
        "short_factor",
    ),
    (lambda: posenc.rope_frequencies(8, scaling={**LONG, "factor": None}), ValueError, "factor"),
    (lambda: posenc.rope_frequencies(8, scaling={**LONG, "factor": -2.0}), ValueError, "factor"),
    (lambda: posenc.rope_frequencies(8, scaling={**LONG, "factor": True}), TypeError, "factor"),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "factor": None, "max_position_embeddings": 64.0}),
        TypeError,
        "max_position_embeddings",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "factor": None, "max_position_embeddings": -64}),
        ValueError,
        "max_position_embeddings",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "original_max_position_embeddings": 1}),
        ValueError,
        "original_max_position_embeddings",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "original_max_position_embeddings": 16.0}),
        TypeError,
        "original_max_position_embeddings",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "attention_factor": -1.0}),
        ValueError,
        "attention_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "attention_factor": INF}),
        ValueError,
        "attention_factor",
    ),
    (
        lambda: posenc.rope_frequencies(8, scaling={**LONG, "attention_factor": "2"}),
        TypeError,
        "attention_factor",
    ),
    (lambda: posenc.rope_frequencies(8, 10000.0, {**LONG, "rope_theta": 500000.0}), ValueError, "rope_theta"),
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
        lambda: posenc.apply_rope(X, base=10.0, scaling={"rope_type": "default", "rope_theta": 1e4}),
        ValueError,
        "rope_theta",
    ),
    # apply_rope_nd
    (lambda: posenc.apply_rope_nd(X, np.zeros((4, 3)), np.ones((2, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X, np.zeros((5, 2)), np.ones((2, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X, np.zeros((2, 2, 4, 2)), np.ones((2, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X, np.zeros(4), np.ones((1, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X, np.full((4, 2), NAN), np.ones((2, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X, np.full((4, 2), 2**54), np.ones((2, 4))), ValueError, "coords"),
    (lambda: posenc.apply_rope_nd(X, np.ones((4, 2), dtype=bool), np.ones((2, 4))), TypeError, "coords"),
    (lambda: posenc.apply_rope_nd(X, np.zeros((4, 2)), np.ones((2, 3))), ValueError, "freqs"),
    (lambda: posenc.apply_rope_nd(X, np.zeros((4, 2)), np.ones(4)), ValueError, "freqs"),
    (lambda: posenc.apply_rope_nd(X, np.zeros((4, 2)), np.ones((0, 4))), ValueError, "freqs"),
    (lambda: posenc.apply_rope_nd(X, np.zeros((4, 2)), np.full((2, 4), INF)), ValueError, "freqs"),
    (lambda: posenc.apply_rope_nd(X, np.zeros((4, 2)), np.ones((2, 4)) * 1j), TypeError, "freqs"),
    (lambda: posenc.apply_rope_nd(X, np.full((4, 2), 2**53), np.full((2, 4), 1e300)), ValueError, "coords"),
    (
        lambda: posenc.apply_rope_nd(X, np.zeros((4, 1)), np.ones((1, 4)), layout="split"),
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
    (lambda: posenc.apply_mrope(X, np.zeros((3, 4)), [1, 1, 1]), ValueError, "mrope_section"),
    (lambda: posenc.apply_mrope(X, np.zeros((3, 4)), [2, 2]), ValueError, "mrope_section"),
    (lambda: posenc.apply_mrope(X, np.zeros((3, 4)), [1, 1, 1, 1]), ValueError, "mrope_section"),
    (lambda: posenc.apply_mrope(X, np.zeros((3, 4)), [5, -1, 0]), ValueError, "mrope_section"),
    (lambda: posenc.apply_mrope(X, np.zeros((3, 4)), [True, 2, 1]), TypeError, "mrope_section"),
    (lambda: posenc.apply_mrope(X, np.zeros((3, 4)), [2.0, 1, 1]), TypeError, "mrope_section"),
    (lambda: posenc.apply_mrope(X, np.zeros((3, 4)), "211"), TypeError, "mrope_section"),
    (lambda: posenc.apply_mrope(X, np.zeros((3, 4)), 4), TypeError, "mrope_section"),
    (lambda: posenc.apply_mrope(X, np.zeros((2, 4)), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X, np.zeros(4), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X, np.zeros((3, 5)), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X, np.zeros((3, 2, 2, 4)), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X, np.full((3, 4), NAN), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X, np.full((3, 4), 2**60), [2, 1, 1]), ValueError, "positions"),
    (lambda: posenc.apply_mrope(X, np.ones((3, 4), dtype=bool), [2, 1, 1]), TypeError, "positions"),
    (lambda: posenc.apply_mrope(X, np.zeros((3, 4)), [2, 1, 1], base=0.5), ValueError, "base"),
    (lambda: posenc.apply_mrope(X, np.zeros((3, 4)), [2, 1, 1], layout=None), TypeError, "layout"),
    (lambda: posenc.apply_mrope(X * 1j, np.zeros((3, 4)), [2, 1, 1]), TypeError, "x"),
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


@pytest.mark.parametrize(("site", "exc", "name"), BAD, ids=[f"{n}-{i}" for i, (_, _, n) in enumerate(BAD)])
def test_bad_input_is_refused_naming_the_argument(site, exc, name):
    refuses(exc, name, site)


def test_huge_mrope_grid_names_the_limit():
    with pytest.raises(ValueError, match=r"2\*\*28"):
        posenc.mrope_positions([(2**20, 2**20, 2**20)])


# ---------------------------------------------------------------------------------------
# valid input at the edges, against loops
# ---------------------------------------------------------------------------------------


def test_positions_at_2_53_and_containers_are_accepted():
    x = np.arange(16.0).reshape(1, 2, 8) / 7
    ids = [[0, 2**53]]  # a nested list of ints, shape (1, 2) for x of shape (1, 2, 8)
    theta = rounded_omegas(8)
    got = posenc.apply_rope(x, ids)
    for tok, m in enumerate((0, 2**53)):
        for i, w in enumerate(theta):
            z = complex(x[0, tok, 2 * i], x[0, tok, 2 * i + 1]) * cmath.exp(1j * float(np.float64(m) * w))
            assert abs(got[0, tok, 2 * i] - z.real) <= 16 * EPS * 4
            assert abs(got[0, tok, 2 * i + 1] - z.imag) <= 16 * EPS * 4


def test_float32_input_keeps_its_dtype_with_rotary_dim_and_nd():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    out = posenc.apply_rope(x, np.zeros((2, 3), dtype=np.int64), rotary_dim=4)
    assert out.dtype == np.float32 and np.array_equal(out, x)  # position 0 rotates by nothing
    out = posenc.apply_rope_nd(x, np.zeros((3, 2)), posenc.axial_rope_frequencies(8))
    assert out.dtype == np.float32 and np.array_equal(out, x)
    out = posenc.apply_mrope(x, np.zeros((3, 3), dtype=np.int32), (2, 1, 1))
    assert out.dtype == np.float32 and np.array_equal(out, x)


def test_mrope_section_accepts_tuples_arrays_and_zeros():
    x = np.ones((1, 8))
    for section in ([4, 0, 0], (0, 0, 4), np.array([1, 2, 1])):
        got = posenc.apply_mrope(x, [[3], [5], [7]], section)
        axis_of = [a for a, n in enumerate(section) for _ in range(int(n))]
        for j, w in enumerate(rounded_omegas(8)):
            z = complex(1.0, 1.0) * cmath.exp(1j * [3, 5, 7][axis_of[j]] * w)
            assert abs(got[0, j] - z.real) <= 8 * EPS and abs(got[0, j + 4] - z.imag) <= 8 * EPS


def test_pass_through_channels_are_checked_for_nan():
    x = np.ones((2, 8))
    x[1, 6] = NAN
    refuses(ValueError, "x", posenc.apply_rope, x, rotary_dim=4)


MODULES = ("rope_nd", "mrope")
COVERED = {"apply_rope_nd", "axial_rope_frequencies", "apply_mrope", "mrope_positions"}


def test_every_public_function_of_the_modules_is_covered_here():
    import inspect

    public = public_functions(*MODULES)
    assert public == COVERED, f"not covered: {public - COVERED}; stale: {COVERED - public}"
    assert all(inspect.getdoc(getattr(posenc, name)) for name in COVERED)
    assert COVERED <= set(posenc.__all__)
