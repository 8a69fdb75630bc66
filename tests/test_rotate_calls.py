"""Repeated and concurrent calls of apply_rope: nothing is kept between them.

Each call rotates by its own positions, frequencies and attention factor, checked against
the exact rotation in mpmath (tests/test_rotate.py), and the same call gives the same bits.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from test_rotate import assert_within, mp_rotation, pair_bound

from posenc import apply_rope

REPEATED_CALLS = {
    "default positions": {},
    "offset positions": {"positions": np.arange(7, 7 + 12)},
    "fractional positions": {"positions": np.linspace(-3.5, 40.25, 12)},
    "dynamic NTK, length from the positions": {
        "positions": np.arange(100, 112),
        "scaling": {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 64},
    },
    "yarn attention factor": {
        "scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8}
    },
    "partial rotary": {"rotary_dim": 4},
}


def _x(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(REPEATED_CALLS))
def test_a_repeated_call_gives_the_same_bits(name, dtype, layout):
    x = _x((2, 3, 12, 8), dtype=dtype)
    first = apply_rope(x, layout=layout, **REPEATED_CALLS[name])
    second = apply_rope(x, layout=layout, **REPEATED_CALLS[name])
    assert first.tobytes() == second.tobytes()


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_other_positions_of_the_same_length_get_their_own_phases(layout):
    x = _x((1, 5, 6))
    apply_rope(x, layout=layout)
    for positions in ([1, 2, 3, 4, 5], [0, 1, 2, 3, 5], [0.0, 1.0, 2.0, 3.0, 4.5]):
        got = apply_rope(x, positions, layout=layout)
        assert_within(got, mp_rotation(x, positions, layout), pair_bound(x, layout))
    # the first positions again: still the rotation of positions 0..4
    assert_within(apply_rope(x, layout=layout), mp_rotation(x, range(5), layout), pair_bound(x, layout))


def test_a_zero_of_the_other_sign_is_another_position():
    # The pair (1, -0.0) at angle -0.0: sin(-0.0) = -0.0, and the second component
    # 1 * sin + (-0.0) * cos is -0.0; at angle +0.0 it is +0.0.
    x = np.array([[1.0, -0.0]])
    at_minus = apply_rope(x, [-0.0])
    at_plus = apply_rope(x, [0.0])
    assert np.signbit(at_minus[0, 1]) and not np.signbit(at_plus[0, 1])
    assert np.signbit(apply_rope(x, [-0.0])[0, 1])


def test_another_base_or_attention_factor_gets_its_own_phases():
    x = _x((4, 6))
    apply_rope(x)
    apply_rope(x, scaling={"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 4})
    assert_within(
        apply_rope(x, base=500.0),
        mp_rotation(x, range(4), "interleaved", base=500.0),
        pair_bound(x, "interleaved"),
    )


def test_the_result_is_the_callers_own():
    x = _x((3, 4, 8))
    out = apply_rope(x)
    assert out.flags.writeable
    expected = out.copy()
    out[...] = 0.0  # the caller may write into its result; the next call is unchanged
    assert apply_rope(x).tobytes() == expected.tobytes()


def test_concurrent_calls_each_get_their_own_positions():
    x = _x((2, 6, 8))
    starts = list(range(8))
    expected = {s: mp_rotation(x, range(s, s + 6), "half") for s in starts}
    errors: list[BaseException] = []

    def work(s: int) -> None:
        try:
            for _ in range(20):
                got = apply_rope(x, np.arange(s, s + 6), layout="half")
                assert_within(got, expected[s], pair_bound(x, "half"))
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in starts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
