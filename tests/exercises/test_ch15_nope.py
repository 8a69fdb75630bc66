"""Chapter 15's checkers: the right answer passes and each known mistake is named.

The student functions are written by hand in plain numpy (no posenc), the correct ones
independently of the reference, the wrong ones as a student would write them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import expect_mistake, mistake_of

import posenc.exercises as ex
from posenc import exercises
from posenc.exercises import ExerciseError
from posenc.exercises.ch15_nope import _nope_indices

CH15_CHECKERS = ("check_causal_prefix_mean", "check_attention_temperature", "check_nope_layers")


def prefix_mean(v):
    out = np.zeros_like(v, dtype=np.float64)
    for t in range(v.shape[-2]):  # a loop over the rows, as written by hand
        out[..., t, :] = v[..., : t + 1, :].sum(axis=-2) / (t + 1)
    return out


def temperature(p, F, a):
    return np.array([1.0 + a * math.log((int(q) + 1) // F + 1) for q in p], dtype=np.float64)


def nope_layers(n_layers, interval):
    return np.array([i for i in range(n_layers) if (i + 1) % interval == 0], dtype=np.int64)


CORRECT = {
    "check_causal_prefix_mean": prefix_mean,
    "check_attention_temperature": temperature,
    "check_nope_layers": nope_layers,
}

MISTAKE_EXAMPLES = {
    ("check_causal_prefix_mean", "no causal mask (mean of all tokens)"): lambda v: (
        np.zeros_like(v) + v.mean(axis=-2, keepdims=True)
    ),
    ("check_causal_prefix_mean", "prefix sum not divided"): lambda v: np.cumsum(v, axis=-2),
    ("check_causal_prefix_mean", "divided by the sequence length L"): lambda v: (
        np.cumsum(v, axis=-2) / v.shape[-2]
    ),
    ("check_causal_prefix_mean", "suffix mean (the mask the wrong way round)"): lambda v: prefix_mean(
        v[..., ::-1, :]
    )[..., ::-1, :],
    ("check_attention_temperature", "position p instead of p+1 in the floor"): lambda p, F, a: (
        1.0 + a * np.log(p // F + 1.0)
    ),
    ("check_attention_temperature", "no floor (a smooth logarithm)"): lambda p, F, a: (
        1.0 + a * np.log1p((p + 1) / F)
    ),
    ("check_attention_temperature", "logarithm in base 10 or 2"): lambda p, F, a: (
        1.0 + a * np.log10((p + 1) // F + 1.0)
    ),
    ("check_attention_temperature", "the leading 1 dropped (scale 0 at short positions)"): lambda p, F, a: (
        a * np.log1p((p + 1) // F)
    ),
    ("check_attention_temperature", "floor_scale or attn_scale ignored (Llama 4's defaults used)"): (
        lambda p, F, a: temperature(p, 8192, 0.1)
    ),
    ("check_nope_layers", "off by one: layers 0, k, 2k, ... (layer_idx % interval == 0)"): lambda n, k: (
        np.array([i for i in range(n) if i % k == 0])
    ),
    ("check_nope_layers", "1-based layer numbers"): lambda n, k: nope_layers(n, k) + 1,
    ("check_nope_layers", "the RoPE layers instead of the NoPE layers"): lambda n, k: np.array(
        [i for i in range(n) if (i + 1) % k != 0], dtype=np.int64
    ),
    ("check_nope_layers", "the 0/1 flags instead of the layer indices"): lambda n, k: np.array(
        [int((i + 1) % k != 0) for i in range(n)]
    ),
}


def test_registered():
    assert set(CH15_CHECKERS) <= set(ex.__all__)
    listed = {(c, name) for c in CH15_CHECKERS for name in ex.KNOWN_MISTAKES[c]}
    assert listed == set(MISTAKE_EXAMPLES)
    assert all(len(ex.KNOWN_MISTAKES[c]) >= 4 for c in CH15_CHECKERS)


@pytest.mark.parametrize("checker", CH15_CHECKERS)
def test_correct_passes(checker):
    assert getattr(ex, checker)(CORRECT[checker]).startswith("correct on ")


@pytest.mark.parametrize("checker, mistake", sorted(MISTAKE_EXAMPLES))
def test_mistake_is_named(checker, mistake):
    error = expect_mistake(
        getattr(ex, checker), MISTAKE_EXAMPLES[checker, mistake], f"known mistake '{mistake}'"
    )
    assert error.mistake == mistake


@pytest.mark.parametrize("checker", CH15_CHECKERS)
def test_unknown_error_and_problems(checker):
    correct = CORRECT[checker]
    with pytest.raises(ExerciseError) as info:  # a wrong answer that is no known mistake
        getattr(ex, checker)(lambda *a: np.asarray(correct(*a)) * 3 + 1)
    assert info.value.mistake is None and "no known mistake" in str(info.value)
    with pytest.raises(ExerciseError) as info:
        getattr(ex, checker)(lambda *a: correct(*a).tolist())
    assert info.value.mistake == "not an array"
    with pytest.raises(ExerciseError) as info:
        getattr(ex, checker)(lambda *a: (_ for _ in ()).throw(ZeroDivisionError("x")))
    assert info.value.mistake == "raised an exception"
    with pytest.raises(NotImplementedError):
        getattr(ex, checker)(lambda *a: (_ for _ in ()).throw(NotImplementedError("stub")))
    with pytest.raises(TypeError, match="fn"):
        getattr(ex, checker)(3)


def test_wrong_dtypes():
    with pytest.raises(ExerciseError) as info:
        ex.check_nope_layers(lambda n, k: nope_layers(n, k).astype(np.float64))
    assert info.value.mistake == "wrong dtype" and "integers" in str(info.value)
    with pytest.raises(ExerciseError) as info:
        ex.check_causal_prefix_mean(lambda v: prefix_mean(v).astype(np.float32))
    assert info.value.mistake == "wrong dtype"
    with pytest.raises(ExerciseError) as info:
        ex.check_attention_temperature(lambda p, F, a: temperature(p, F, a)[1:])
    assert info.value.mistake == "wrong shape"


def test_complex_nope_layers_are_called_complex():
    assert mistake_of(exercises.check_nope_layers, lambda n, k: _nope_indices(n, k) + 0j) == "complex values"
