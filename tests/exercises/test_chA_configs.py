"""The appendix's checkers: the right answer passes, each known mistake is named.

The student functions are written here in plain numpy (no posenc), as a student would; the
correct ones follow the formulas of the appendix, the wrong ones make one mistake each.
``tests/exercises/test_checkers.py`` also runs its robustness checks on these checkers with them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import expect_mistake, yarn_ramp

import posenc.exercises as ex
from posenc.exercises import ExerciseError


# --- wavelengths ---------------------------------------------------------------------
def wavelengths(d_head, base):
    return 2 * np.pi * base ** (2 * np.arange(d_head // 2) / d_head)


def wavelengths_no_2pi(d_head, base):
    return base ** (2 * np.arange(d_head // 2) / d_head)


def wavelengths_frequencies(d_head, base):
    return base ** (-2 * np.arange(d_head // 2) / d_head)


def wavelengths_missing_2(d_head, base):
    return 2 * np.pi * base ** (np.arange(d_head // 2) / d_head)


def wavelengths_base_ignored(d_head, base):
    return 2 * np.pi * 10000.0 ** (2 * np.arange(d_head // 2) / d_head)


# --- YaRN ratio ----------------------------------------------------------------------
def _ratio(d, base, factor, L0, beta_fast, beta_slow, rounding=True, flip=False, turn=2 * np.pi, mult=False):
    g = np.array(yarn_ramp(d, base, L0, beta_fast, beta_slow, truncate=rounding, turn=turn))
    if flip:
        g = 1 - g
    return (1 - g) + g * (factor if mult else 1 / factor)


def yarn_ratio(d_head, base, factor, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    return _ratio(d_head, base, factor, original_max_position_embeddings, beta_fast, beta_slow)


def yarn_no_truncation(d_head, base, factor, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    return _ratio(
        d_head, base, factor, original_max_position_embeddings, beta_fast, beta_slow, rounding=False
    )


def yarn_reversed(d_head, base, factor, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    return _ratio(d_head, base, factor, original_max_position_embeddings, beta_fast, beta_slow, flip=True)


def yarn_no_2pi(d_head, base, factor, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    return _ratio(d_head, base, factor, original_max_position_embeddings, beta_fast, beta_slow, turn=1.0)


def yarn_multiplied(d_head, base, factor, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0):
    return _ratio(d_head, base, factor, original_max_position_embeddings, beta_fast, beta_slow, mult=True)


# --- MPT slopes ----------------------------------------------------------------------
def mpt_slopes(n_heads, alibi_bias_max=8):
    # MPT's rule: the slopes of the next power of two C, even-numbered ones first, then odd ones
    C = 2 ** math.ceil(math.log2(n_heads))
    s = 2.0 ** (-np.arange(1, C + 1) * alibi_bias_max / C)
    return s if C == n_heads else np.concatenate([s[1::2], s[0::2]])[:n_heads]


def mpt_bias_max_ignored(n_heads, alibi_bias_max=8):
    return mpt_slopes(n_heads, 8)


def mpt_geometric(n_heads, alibi_bias_max=8):
    return 2.0 ** (-np.arange(1, n_heads + 1) * alibi_bias_max / n_heads)


def mpt_round_up(n_heads, alibi_bias_max=8):
    C = 2 ** math.ceil(math.log2(n_heads))
    return 2.0 ** (-np.arange(1, C + 1) * alibi_bias_max / C)[:n_heads]


def mpt_off_by_one(n_heads, alibi_bias_max=8):
    C = 2 ** math.ceil(math.log2(n_heads))
    s = 2.0 ** (-np.arange(0, C) * alibi_bias_max / C)
    return s if C == n_heads else np.concatenate([s[1::2], s[0::2]])[:n_heads]


CHA_CORRECT = {
    "check_wavelengths": wavelengths,
    "check_yarn_ratio": yarn_ratio,
    "check_mpt_alibi_slopes": mpt_slopes,
}
CHA_MISTAKES = {
    (
        "check_wavelengths",
        "missing 2*pi (a period in radians per unit angle, not in positions)",
    ): wavelengths_no_2pi,
    ("check_wavelengths", "frequencies instead of wavelengths"): wavelengths_frequencies,
    ("check_wavelengths", "missing factor 2 in the exponent 2i/d"): wavelengths_missing_2,
    ("check_wavelengths", "base argument ignored"): wavelengths_base_ignored,
    ("check_yarn_ratio", "ramp bounds not rounded (floor/ceil)"): yarn_no_truncation,
    ("check_yarn_ratio", "ramp reversed (fast pairs divided, slow pairs kept)"): yarn_reversed,
    ("check_yarn_ratio", "bounds without 2*pi (turn counts read as angles)"): yarn_no_2pi,
    ("check_yarn_ratio", "frequencies multiplied by the factor"): yarn_multiplied,
    ("check_mpt_alibi_slopes", "alibi_bias_max ignored (always 8)"): mpt_bias_max_ignored,
    ("check_mpt_alibi_slopes", "2^(-b*h/n) for a non-power-of-two head count"): mpt_geometric,
    ("check_mpt_alibi_slopes", "rounded up to a power of two and truncated"): mpt_round_up,
    ("check_mpt_alibi_slopes", "off by one: h starts at 0 (first slope 1)"): mpt_off_by_one,
}


@pytest.mark.parametrize("checker", sorted(CHA_CORRECT))
def test_the_right_answer_passes(checker):
    assert getattr(ex, checker)(CHA_CORRECT[checker]).startswith("correct on ")


@pytest.mark.parametrize(("checker", "mistake"), sorted(CHA_MISTAKES))
def test_each_known_mistake_is_named(checker, mistake):
    error = expect_mistake(getattr(ex, checker), CHA_MISTAKES[checker, mistake], f"known mistake '{mistake}'")
    assert error.mistake == mistake


def test_every_mistake_of_the_appendix_has_an_example():
    listed = {(c, name) for c in CHA_CORRECT for name in ex.KNOWN_MISTAKES[c]}
    assert listed == set(CHA_MISTAKES)


def test_mpt_slopes_are_press_slopes_to_the_power_b_over_8():
    # the identity the reference uses, checked on MPT's own rule written out above
    for n in (1, 3, 7, 12, 32, 56, 112):
        for b in (4, 8, 16):
            np.testing.assert_allclose(mpt_slopes(n, b), mpt_slopes(n, 8) ** (b / 8), rtol=1e-13)


def test_a_wrong_answer_without_a_known_mistake():
    with pytest.raises(ExerciseError) as info:
        ex.check_wavelengths(lambda d, b: wavelengths(d, b) * 1.01)
    assert info.value.mistake is None and "no known mistake matches" in str(info.value)
