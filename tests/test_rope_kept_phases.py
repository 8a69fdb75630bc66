"""RoPE's phases kept between calls (posenc._kept_phases): the same bits as computing them again.

Each test starts with nothing kept. A kept phase table is checked three ways: a second
call gives the bits of the first; a call with other positions of the same length (or
positions differing only in the sign of a zero) gets its own phases, checked against the
exact rotation in mpmath; and the bounds (size, number of entries, shape of positions)
decide what is kept.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from test_rope_kernel import assert_within, mp_rotation, pair_bound

import posenc._kept_phases as kept
from posenc import apply_rope


@pytest.fixture(autouse=True)
def nothing_kept():
    kept.forget_kept_phases()
    yield
    kept.forget_kept_phases()


@pytest.fixture
def phase_computations(monkeypatch) -> list[tuple[int, ...]]:
    """The shapes of the phase tables computed (not taken from the kept ones), in order."""
    shapes: list[tuple[int, ...]] = []
    real = kept.unit_phases

    def counting(angles, scale=1.0):
        shapes.append(angles.shape)
        return real(angles, scale)

    monkeypatch.setattr(kept, "unit_phases", counting)
    return shapes


def _x(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


CALLS = {
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


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(CALLS))
def test_a_repeated_call_uses_the_kept_phases_and_gives_the_same_bits(
    phase_computations, name, dtype, layout
):
    x = _x((2, 3, 12, 8), dtype=dtype)
    first = apply_rope(x, layout=layout, **CALLS[name])
    assert len(phase_computations) == 1 and kept.kept_phase_count() == 1
    second = apply_rope(x, layout=layout, **CALLS[name])
    assert len(phase_computations) == 1  # taken from the kept table, not computed again
    assert first.tobytes() == second.tobytes()


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_other_positions_of_the_same_length_get_their_own_phases(layout):
    x = _x((1, 5, 6))
    apply_rope(x, layout=layout)  # keeps the phases of positions 0..4
    for positions in ([1, 2, 3, 4, 5], [0, 1, 2, 3, 5], [0.0, 1.0, 2.0, 3.0, 4.5]):
        got = apply_rope(x, positions, layout=layout)
        assert_within(got, mp_rotation(x, positions, layout), pair_bound(x, layout))
    # the first positions again: still the rotation of positions 0..4
    assert_within(apply_rope(x, layout=layout), mp_rotation(x, range(5), layout), pair_bound(x, layout))


def test_a_zero_of_the_other_sign_is_another_position():
    # The pair (1, -0.0) at angle -0.0: sin(-0.0) = -0.0, and the second component
    # 1 * sin + (-0.0) * cos is -0.0; at angle +0.0 it is +0.0. Kept by value equality
    # (-0.0 == 0.0), the second call would return the first call's signed zero.
    x = np.array([[1.0, -0.0]])
    at_minus = apply_rope(x, [-0.0])
    at_plus = apply_rope(x, [0.0])
    assert np.signbit(at_minus[0, 1]) and not np.signbit(at_plus[0, 1])
    assert np.signbit(apply_rope(x, [-0.0])[0, 1])


def test_another_base_or_attention_factor_gets_its_own_phases(phase_computations):
    x = _x((4, 6))
    apply_rope(x)
    apply_rope(x, base=500.0)
    apply_rope(x, scaling={"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 4})
    assert len(phase_computations) == 3 and kept.kept_phase_count() == 3
    assert_within(
        apply_rope(x, base=500.0),
        mp_rotation(x, range(4), "interleaved", base=500.0),
        pair_bound(x, "interleaved"),
    )


def test_the_kept_table_is_read_only_and_never_the_result():
    x = _x((3, 4, 8))
    out = apply_rope(x)
    (phase,) = kept._kept.values()
    assert not phase.flags.writeable
    assert out.flags.writeable and not np.shares_memory(out, phase)
    expected = out.copy()
    out[...] = 0.0  # the caller may write into its result; the next call is unchanged
    assert apply_rope(x).tobytes() == expected.tobytes()


def test_what_is_kept_is_bounded(monkeypatch, phase_computations):
    monkeypatch.setattr(kept, "KEPT_PAIRS", 4 * 3)  # at most 4 positions of d = 6
    apply_rope(_x((5, 6)))  # 5 * 3 pairs: computed, not kept
    assert kept.kept_phase_count() == 0
    apply_rope(_x((2, 1, 4, 6)), np.arange(8).reshape(2, 1, 4))  # per-sequence ids: not kept
    assert kept.kept_phase_count() == 0
    for start in range(kept.KEPT_ENTRIES + 1):  # one more than is kept
        apply_rope(_x((4, 6)), np.arange(start, start + 4))
    assert kept.kept_phase_count() == kept.KEPT_ENTRIES
    computed = len(phase_computations)
    apply_rope(_x((4, 6)), np.arange(kept.KEPT_ENTRIES, kept.KEPT_ENTRIES + 4))  # the newest: kept
    assert len(phase_computations) == computed
    apply_rope(_x((4, 6)), np.arange(0, 4))  # the oldest was dropped: computed again
    assert len(phase_computations) == computed + 1


def test_forget_kept_phases_empties_them(phase_computations):
    x = _x((4, 6))
    first = apply_rope(x)
    kept.forget_kept_phases()
    assert kept.kept_phase_count() == 0
    assert apply_rope(x).tobytes() == first.tobytes()
    assert len(phase_computations) == 2


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


def test_kept_phases_as_the_readme_states():
    # README and api.md: the last four rows of positions, up to 2^19 pairs (8 MiB) each.
    assert kept.KEPT_ENTRIES == 4 and kept.KEPT_PAIRS == 2**19
    apply_rope(_x((1, 2**19 // 64, 128)))
    (phase,) = kept._kept.values()
    assert phase.size == 2**19 and phase.nbytes == 8 * 2**20
    apply_rope(_x((1, 2**19 // 64 + 1, 128)))  # one row more: not kept
    assert kept.kept_phase_count() == 1
