"""Chapter 17's exercise checkers accept a correct answer and name each known mistake.

The student functions are written here by hand in plain numpy (no posenc): the correct
ones by explicit loops or the formulas of the exercise, the wrong ones as a student would.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import expect_mistake

import posenc.exercises as ex
from posenc.exercises import ExerciseError

CH17 = ("check_position_ids_from_mask", "check_packed_position_ids", "check_rerotate_keys")


# --- position ids from a mask ----------------------------------------------------------


def ids_loop(mask):
    mask = np.asarray(mask)
    out = np.empty(mask.shape, dtype=np.int64)
    for index in np.ndindex(mask.shape[:-1]):
        count = 0
        for t, m in enumerate(mask[index]):
            count += int(m)
            out[index + (t,)] = count - 1 if m else 1
    return out


def ids_no_minus_one(mask):
    return np.where(mask == 1, np.cumsum(mask, axis=-1), 1)


def ids_pads_not_set(mask):
    return np.cumsum(mask, axis=-1) - 1


def ids_pads_zero(mask):
    return np.where(mask == 1, np.cumsum(mask, axis=-1) - 1, 0)


def ids_arange(mask):
    return np.where(mask == 1, np.broadcast_to(np.arange(mask.shape[-1]), mask.shape), 1)


def ids_batch_axis(mask):
    return np.where(mask == 1, np.cumsum(mask, axis=0) - 1, 1)


# --- packed ids ------------------------------------------------------------------------


def packed_loop(lengths):
    return np.array([t for n in lengths for t in range(n)], dtype=np.int64)


def packed_no_restart(lengths):
    return np.arange(int(np.sum(lengths)))


def packed_start_one(lengths):
    return np.concatenate([np.arange(1, n + 1) for n in lengths])


def packed_sequence_index(lengths):
    return np.repeat(np.arange(len(lengths)), lengths)


def packed_inclusive(lengths):
    return np.arange(int(np.sum(lengths))) - np.repeat(np.cumsum(lengths), lengths)


# --- re-rotated keys -------------------------------------------------------------------


def turn(keys, angle_of_pair, layout="interleaved"):
    """Turn each pair of keys[..., L, d] by angle_of_pair[L, d/2] (counter-clockwise)."""
    keys = np.asarray(keys, dtype=np.float64)
    d = keys.shape[-1]
    if layout == "interleaved":
        a, b = keys[..., 0::2], keys[..., 1::2]
    else:
        a, b = keys[..., : d // 2], keys[..., d // 2 :]
    c, s = np.cos(angle_of_pair), np.sin(angle_of_pair)
    out = np.empty_like(keys)
    first, second = a * c - b * s, a * s + b * c
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = first, second
    else:
        out[..., : d // 2], out[..., d // 2 :] = first, second
    return out


def make_rerotate(sign=-1.0, layout="interleaved", freq="right", use_base=True):
    def rerotate(keys, delta, base=10000.0):
        b = base if use_base else 10000.0
        d = keys.shape[-1]
        i = np.arange(d // 2)
        theta = {"right": b ** (-2 * i / d), "missing_2": b ** (-i / d)}[freq]
        shifts = np.broadcast_to(np.asarray(delta, dtype=np.float64), (keys.shape[-2],))
        angle = sign * shifts[:, None] * theta if freq != "division" else None
        if freq == "division":
            angle = sign * shifts[:, None] / (b ** (-2 * i / d))
        return turn(keys, angle, layout)

    return rerotate


def rerotate_complex(keys, delta, base=10000.0):
    d = keys.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    shifts = np.broadcast_to(np.asarray(delta, dtype=np.float64), (keys.shape[-2],))
    z = (keys[..., 0::2] + 1j * keys[..., 1::2]) * np.exp(-1j * shifts[:, None] * theta)
    out = np.empty_like(keys, dtype=np.float64)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def rerotate_division(keys, delta, base=10000.0):
    d = keys.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    shifts = np.broadcast_to(np.asarray(delta, dtype=np.float64), (keys.shape[-2],))
    return turn(keys, -shifts[:, None] / theta)


CORRECT = {
    "check_position_ids_from_mask": ids_loop,
    "check_packed_position_ids": packed_loop,
    "check_rerotate_keys": rerotate_complex,
}

MISTAKES = {
    ("check_position_ids_from_mask", "cumsum without -1 (ids start at 1)"): ids_no_minus_one,
    ("check_position_ids_from_mask", "pads not set to 1"): ids_pads_not_set,
    ("check_position_ids_from_mask", "pads set to 0 instead of 1"): ids_pads_zero,
    ("check_position_ids_from_mask", "ids count the pads (arange over the row)"): ids_arange,
    ("check_position_ids_from_mask", "cumsum along the batch axis"): ids_batch_axis,
    ("check_packed_position_ids", "ids do not restart (arange over the packed row)"): packed_no_restart,
    ("check_packed_position_ids", "ids start at 1"): packed_start_one,
    ("check_packed_position_ids", "sequence index instead of position"): packed_sequence_index,
    (
        "check_packed_position_ids",
        "start offsets include the sequence itself (inclusive cumsum)",
    ): packed_inclusive,
    ("check_rerotate_keys", "turned by +delta instead of -delta"): make_rerotate(sign=1.0),
    ("check_rerotate_keys", "keys returned unchanged (delta ignored)"): lambda keys, delta, base=1e4: (
        keys.copy()
    ),
    ("check_rerotate_keys", "half/interleaved layout confusion"): make_rerotate(layout="half"),
    ("check_rerotate_keys", "division instead of multiplication"): rerotate_division,
    ("check_rerotate_keys", "missing factor 2 in the exponent 2i/d"): make_rerotate(freq="missing_2"),
    ("check_rerotate_keys", "base argument ignored"): make_rerotate(use_base=False),
}


def test_every_known_mistake_has_an_example():
    listed = {(c, name) for c in CH17 for name in ex.KNOWN_MISTAKES[c]}
    assert listed == set(MISTAKES)
    assert all(c in ex.__all__ for c in CH17)


@pytest.mark.parametrize("checker", CH17)
def test_correct_answer_passes(checker):
    assert getattr(ex, checker)(CORRECT[checker]).startswith("correct on ")


@pytest.mark.parametrize("checker, mistake", sorted(MISTAKES))
def test_each_known_mistake_is_named(checker, mistake):
    error = expect_mistake(getattr(ex, checker), MISTAKES[checker, mistake], f"known mistake '{mistake}'")
    assert error.mistake == mistake


def test_both_mask_mistakes_together_are_named():
    with pytest.raises(ExerciseError) as info:
        ex.check_position_ids_from_mask(lambda mask: np.cumsum(mask, axis=-1))
    assert info.value.mistake == "cumsum without -1 (ids start at 1) + pads not set to 1"


@pytest.mark.parametrize("checker", CH17)
def test_unusable_results_are_named(checker):
    with pytest.raises(ExerciseError) as info:
        getattr(ex, checker)(lambda *args, **kwargs: [0, 1])
    assert info.value.mistake == "not an array"
    with pytest.raises(ExerciseError) as info:
        getattr(ex, checker)(lambda *args, **kwargs: 1 / 0)
    assert info.value.mistake == "raised an exception"


def test_float_ids_are_refused():
    with pytest.raises(ExerciseError) as info:
        ex.check_packed_position_ids(lambda lengths: packed_loop(lengths).astype(np.float64))
    assert info.value.mistake == "wrong dtype" and "position ids" in str(info.value)


def test_unknown_error_reports_the_first_failing_input():
    with pytest.raises(ExerciseError) as info:
        ex.check_rerotate_keys(lambda keys, delta, base=1e4: rerotate_complex(keys, delta, base) + 1e-3)
    assert info.value.mistake is None and "First failing input" in str(info.value)


@pytest.mark.parametrize("checker", CH17)
def test_not_a_function_and_stub(checker):
    with pytest.raises(TypeError, match="fn"):
        getattr(ex, checker)(3)

    def stub(*args, **kwargs):
        raise NotImplementedError("not yet implemented")

    with pytest.raises(NotImplementedError):
        getattr(ex, checker)(stub)
