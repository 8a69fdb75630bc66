"""``dynamic`` takes L0 from ``max_position_embeddings`` when ``original_max_position_embeddings`` is missing.

transformers 5 validates a ``dynamic`` ``rope_parameters`` dict with only ``factor``
required and reads L0 from ``config.max_position_embeddings``. The expected frequencies are
recomputed here from the NTK formula, independently of posenc.
"""

import math

import numpy as np
import pytest
from conftest import (
    EPS,
    llama3_frequencies,
    refuses,
    rounded_omegas,
    yarn_frequencies,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
import posenc.exercises

NAN, INF = float("nan"), float("inf")


def ntk(d: int, base: float, factor: float, length: int, orig: int) -> np.ndarray:
    new_base = base * (factor * max(length, orig) / orig - (factor - 1)) ** (d / (d - 2))
    return np.array([new_base ** (-2 * i / d) for i in range(d // 2)])


@pytest.mark.parametrize("seq_len", [100, 4096, 5000, 16384])
def test_dynamic_rope_parameters_without_original_length(seq_len):
    params = {"rope_type": "dynamic", "factor": 4.0, "rope_theta": 10000.0, "max_position_embeddings": 4096}
    got = posenc.rope_frequencies(64, 10000.0, params, seq_len=seq_len)
    np.testing.assert_allclose(got, ntk(64, 10000.0, 4.0, seq_len, 4096), rtol=1e-13)


def test_original_length_wins_over_max_position_embeddings():
    params = {
        "rope_type": "dynamic",
        "factor": 2.0,
        "original_max_position_embeddings": 1024,
        "max_position_embeddings": 4096,
    }
    got = posenc.rope_frequencies(32, 10000.0, params, seq_len=3000)
    np.testing.assert_allclose(got, ntk(32, 10000.0, 2.0, 3000, 1024), rtol=1e-13)
    assert not math.isclose(got[-1], ntk(32, 10000.0, 2.0, 3000, 4096)[-1], rel_tol=1e-6)


def test_dynamic_without_any_length_is_refused():
    with pytest.raises(ValueError, match="max_position_embeddings"):
        posenc.rope_frequencies(32, 10000.0, {"rope_type": "dynamic", "factor": 2.0}, seq_len=100)


@pytest.mark.parametrize(
    ("bad", "exc"), [(64.0, TypeError), (0, ValueError), (-5, ValueError), ("64", TypeError)]
)
def test_bad_max_position_embeddings_is_refused(bad, exc):
    params = {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": bad}
    with pytest.raises(exc, match=r"scaling\['max_position_embeddings'\]"):
        posenc.rope_frequencies(32, 10000.0, params, seq_len=100)


LIMIT = 2**53

bases = st.sampled_from([10000.0, 100.0, 2.5, 500000.0, 10000])


def yarn_reference(d, base, factor, orig, beta_fast=32.0, beta_slow=1.0, truncate=True, extra=None):
    """transformers' YaRN inverse frequencies and attention factor, written with math."""
    extra = extra or {}
    out = yarn_frequencies(d, base, factor, orig, beta_fast, beta_slow, truncate)

    def temperature(s, mu=1.0):
        return 1.0 if s <= 1 else 0.1 * mu * math.log(s) + 1.0

    if extra.get("attention_factor") is not None:
        att = extra["attention_factor"]
    elif extra.get("mscale") and extra.get("mscale_all_dim"):
        att = temperature(factor, extra["mscale"]) / temperature(factor, extra["mscale_all_dim"])
    else:
        att = temperature(factor)
    return out, att


@settings(max_examples=40)
@given(
    d=st.sampled_from([4, 8, 16, 64]),
    base=bases,
    factor=st.floats(1.0, 64.0),
    orig=st.integers(16, 8192),
    data=st.data(),
)
def test_rope_frequencies_match_the_scaling_formulas(d, base, factor, orig, data):
    rope_type = data.draw(st.sampled_from(["default", "linear", "dynamic", "yarn", "llama3"]))
    scaling = {"rope_type": rope_type, "factor": factor, "original_max_position_embeddings": orig}
    seq_len = None
    att_expected = 1.0
    if rope_type == "default":
        expected = rounded_omegas(d, base)
    elif rope_type == "linear":
        expected = [w / factor for w in rounded_omegas(d, base)]
    elif rope_type == "dynamic":
        seq_len = data.draw(st.integers(1, 4 * orig))
        length = max(seq_len, orig)
        new_base = base * ((factor * length / orig) - (factor - 1)) ** (d / (d - 2))
        expected = rounded_omegas(d, new_base)
    elif rope_type == "yarn":
        extra = data.draw(
            st.sampled_from(
                [{}, {"attention_factor": 1.25}, {"mscale": 0.707, "mscale_all_dim": 1.0}, {"mscale": 1}]
            )
        )
        truncate = data.draw(st.booleans())
        scaling.update(extra, truncate=truncate, beta_fast=16, beta_slow=np.float32(2.0))
        expected, att_expected = yarn_reference(d, base, factor, orig, 16, 2.0, truncate, extra)
    else:
        scaling.update(low_freq_factor=1, high_freq_factor=np.float64(4.0))
        expected = llama3_frequencies(d, base, factor, 1, 4.0, orig)
    inv, att = posenc.rope_frequencies(
        d, base, scaling if rope_type != "default" else None, seq_len=seq_len, return_attention_factor=True
    )
    np.testing.assert_allclose(inv, expected, rtol=4 * EPS, atol=0)
    assert att == pytest.approx(att_expected, rel=4 * EPS)


YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}

LLAMA3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 64,
}

DYNAMIC = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 64}

BAD_REALS = [
    (NAN, ValueError),
    (INF, ValueError),
    (-INF, ValueError),
    (-1.0, ValueError),
    (0.0 + 0j, TypeError),
    ("1", TypeError),
    (True, TypeError),
    ([1.0], TypeError),
]

SCALING_KEYS = [
    (YARN, "factor"),
    (YARN, "original_max_position_embeddings"),
    (YARN, "beta_fast"),
    (YARN, "beta_slow"),
    (YARN, "mscale"),
    (YARN, "mscale_all_dim"),
    (YARN, "attention_factor"),
    (LLAMA3, "factor"),
    (LLAMA3, "low_freq_factor"),
    (LLAMA3, "high_freq_factor"),
    (LLAMA3, "original_max_position_embeddings"),
    (DYNAMIC, "factor"),
    (DYNAMIC, "original_max_position_embeddings"),
    ({"rope_type": "linear", "factor": 2.0}, "factor"),
]


@pytest.mark.parametrize(("bad", "exc"), BAD_REALS, ids=[repr(b) for b, _ in BAD_REALS])
@pytest.mark.parametrize(
    ("scaling", "key"), SCALING_KEYS, ids=[f"{s['rope_type']}-{k}" for s, k in SCALING_KEYS]
)
def test_every_scaling_key_is_checked(scaling, key, bad, exc):
    if key == "original_max_position_embeddings":
        exc = TypeError  # an int is expected: every float, string or bool is the wrong type
    refuses(exc, f"scaling['{key}']", posenc.rope_frequencies, 8, 10000.0, {**scaling, key: bad}, seq_len=100)


@pytest.mark.parametrize(
    ("scaling", "exc", "name"),
    [
        ({**YARN, "original_max_position_embeddings": 64.0}, TypeError, "original_max_position_embeddings"),
        ({**YARN, "original_max_position_embeddings": 2**60}, ValueError, "original_max_position_embeddings"),
        ({**YARN, "beta_fast": 1.0, "beta_slow": 2.0}, ValueError, "beta_fast"),
        ({**LLAMA3, "low_freq_factor": 4.0, "high_freq_factor": 1.0}, ValueError, "high_freq_factor"),
        ({"rope_type": 1}, ValueError, "rope_type"),
        ({"rope_type": ["yarn"]}, ValueError, "rope_type"),
        ({"type": "linear", "rope_type": "yarn", "factor": 2.0}, ValueError, "rope_type"),
        ({"rope_type": "linear", "factor": 1e-310}, ValueError, "factor"),
        ("linear", TypeError, "scaling"),
        ({**DYNAMIC, "factor": 1e300}, ValueError, "factor"),
    ],
)
def test_scaling_dict_errors(scaling, exc, name):
    refuses(exc, name, posenc.rope_frequencies, 8, 10000.0, scaling, seq_len=2**50)


def test_dynamic_scaling_at_the_position_limit_is_finite():
    x = np.ones((2, 8))
    got = posenc.apply_rope(x, [0, LIMIT], scaling=DYNAMIC)
    np.testing.assert_allclose(np.hypot(got[:, 0::2], got[:, 1::2]), math.sqrt(2), rtol=8 * EPS)


YARN_4096 = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}


@pytest.mark.parametrize("key, value", [("beta_fast", 1e308), ("beta_slow", 1e-308)])
def test_yarn_betas_beyond_the_formula_are_refused_naming_the_key(key, value):
    scaling = {**YARN_4096, key: value, **({"beta_fast": 1e300} if key == "beta_slow" else {})}
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
        posenc.rope_frequencies(8, scaling={**YARN_4096, **extra}, return_attention_factor=True)
    with pytest.raises(ValueError, match=named):  # not blamed on x, and never a table of zeros
        posenc.apply_rope(np.ones((2, 8)), scaling={**YARN_4096, **extra})


def test_yarn_attention_factor_inside_the_range_is_the_formula():
    _, factor = posenc.rope_frequencies(8, scaling=YARN_4096, return_attention_factor=True)
    assert factor == 0.1 * np.log(4.0) + 1.0
    extra = {"mscale": 1.0, "mscale_all_dim": 0.5}
    _, factor = posenc.rope_frequencies(8, scaling={**YARN_4096, **extra}, return_attention_factor=True)
    assert factor == (0.1 * np.log(4.0) + 1.0) / (0.05 * np.log(4.0) + 1.0)


LONGROPE = {"rope_type": "longrope", "original_max_position_embeddings": 4096, "factor": 2.0}


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


SCOUT = {
    "rope_type": "llama3",
    "factor": 16.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 1.0,
    "original_max_position_embeddings": 8192,
}


@pytest.mark.parametrize("d_head", [64, 128])
def test_equal_factors_give_a_step_at_the_original_length(d_head):
    base = 500000.0
    plain = np.array([base ** (-2 * i / d_head) for i in range(d_head // 2)])
    wavelength = 2 * math.pi / plain
    expected = np.where(wavelength > 8192, plain / 16.0, plain)
    got = posenc.rope_frequencies(d_head, base, SCOUT)
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    ratio = got / plain
    assert set(np.round(ratio, 12)) == {1.0, 1 / 16}  # no pair in between
    assert np.all(np.diff(ratio) <= 0)


def test_high_below_low_is_still_refused():
    bad = {**SCOUT, "low_freq_factor": 2.0}
    with pytest.raises(ValueError, match="high_freq_factor > low_freq_factor"):
        posenc.rope_frequencies(64, 500000.0, bad)
