"""posenc.rope_scaling: the ``rope_type`` variants of rope_frequencies and apply_rope.

linear, dynamic (NTK), yarn, llama3 and longrope, against transformers' formulas written
out again with ``math`` (the YaRN ramp and the Llama 3 bands from tests/conftest.py), hand
cases, and a transformers-5 ``rope_parameters`` dict; every key of a scaling dict is
checked and the messages name the key at fault.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import (
    EPS,
    RNG_SEED,
    angle_atol,
    assert_rotation_close,
    llama3_frequencies,
    loop_rotate,
    ref_rope_complex,
    refuses,
    rounded_omegas,
    yarn_frequencies,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc
import posenc.exercises
from posenc import (
    apply_rope,
    rope_frequencies,
)

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


def hf_linear(d, base, factor):
    return [w / factor for w in rounded_omegas(d, base)]


def hf_dynamic(d, base, factor, orig, seq_len):
    length = seq_len if seq_len > orig else orig
    new_base = base * ((factor * length / orig) - (factor - 1)) ** (d / (d - 2))
    return rounded_omegas(d, new_base)


def test_linear_scaling_divides_by_factor():
    got = rope_frequencies(16, 10000.0, {"rope_type": "linear", "factor": 4.0})
    np.testing.assert_allclose(got, hf_linear(16, 10000.0, 4.0), rtol=1e-15)
    legacy = rope_frequencies(16, 10000.0, {"type": "linear", "factor": 4.0})
    assert np.array_equal(got, legacy)


def test_dynamic_ntk_hand_case_and_reference():
    # d = 4: exponent d/(d-2) = 2. factor 2, orig 100, seq_len 300:
    # base' = 10000 * (2*300/100 - 1)**2 = 10000 * 25 = 250000; theta_1 = 250000**(-1/2) = 0.002.
    sc = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 100}
    np.testing.assert_allclose(rope_frequencies(4, 10000.0, sc, seq_len=300), [1.0, 0.002], rtol=1e-14)
    for seq_len in (1, 50, 100, 101, 1000, 12345):
        got = rope_frequencies(32, 10000.0, sc, seq_len=seq_len)
        np.testing.assert_allclose(got, hf_dynamic(32, 10000.0, 2.0, 100, seq_len), rtol=1e-13)
    # seq_len at or below the original length: the unscaled frequencies
    assert np.array_equal(rope_frequencies(32, 10000.0, sc, seq_len=100), rope_frequencies(32))


def test_yarn_hand_ramp():
    # d = 16, base 1e4, orig 2048: correction(32) = 2.016.. -> 2, correction(1) = 5.026.. -> 6,
    # ramp over pairs i = 0..7: (i - 2) / 4 clipped = 0, 0, 0, 1/4, 1/2, 3/4, 1, 1.
    d, base, factor = 16, 10000.0, 4.0
    sc = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": 2048}
    got, att = rope_frequencies(d, base, sc, return_attention_factor=True)
    w = np.array(rounded_omegas(d, base))
    ramp = np.array([0, 0, 0, 0.25, 0.5, 0.75, 1, 1])
    np.testing.assert_allclose(got, w * (1 - ramp) + w / factor * ramp, rtol=1e-15)
    np.testing.assert_allclose(got, yarn_frequencies(d, base, factor, 2048), rtol=1e-15)
    assert att == pytest.approx(0.1 * math.log(4.0) + 1.0, rel=1e-15)
    # without the return flag, only the array
    assert np.array_equal(rope_frequencies(d, base, sc), got)


@pytest.mark.parametrize(
    "d,base,factor,orig,bf,bs,trunc",
    [
        (128, 10000.0, 4.0, 4096, 32, 1, True),
        (128, 10000.0, 4.0, 4096, 32, 1, False),
        (64, 1e6, 16.0, 32768, 16, 2, True),
        (8, 10000.0, 2.0, 16, 32, 1, True),  # correction range clipped at 0
    ],
)
def test_yarn_matches_reference(d, base, factor, orig, bf, bs, trunc):
    sc = {
        "rope_type": "yarn",
        "factor": factor,
        "original_max_position_embeddings": orig,
        "beta_fast": bf,
        "beta_slow": bs,
        "truncate": trunc,
    }
    np.testing.assert_allclose(
        rope_frequencies(d, base, sc), yarn_frequencies(d, base, factor, orig, bf, bs, trunc), rtol=1e-14
    )


def test_yarn_attention_factor_variants():
    base_sc = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}
    _, att = rope_frequencies(64, 10000.0, {**base_sc, "attention_factor": 1.5}, return_attention_factor=True)
    assert att == 1.5
    _, att = rope_frequencies(
        64, 10000.0, {**base_sc, "mscale": 0.707, "mscale_all_dim": 1.0}, return_attention_factor=True
    )
    expected = (0.1 * 0.707 * math.log(8.0) + 1) / (0.1 * 1.0 * math.log(8.0) + 1)
    assert att == pytest.approx(expected, rel=1e-15)
    # equal mscale and mscale_all_dim cancel exactly (DeepSeek-style configs)
    _, att = rope_frequencies(
        64, 10000.0, {**base_sc, "mscale": 1.0, "mscale_all_dim": 1.0}, return_attention_factor=True
    )
    assert att == 1.0
    _, att = rope_frequencies(64, 10000.0, {**base_sc, "factor": 0.5}, return_attention_factor=True)
    assert att == 1.0  # factor <= 1: no temperature
    for sc in (None, {"rope_type": "linear", "factor": 2.0}):
        assert rope_frequencies(64, 10000.0, sc, return_attention_factor=True)[1] == 1.0


def test_llama3_matches_reference_and_regions():
    d, base, factor, lo, hi, orig = 128, 500000.0, 8.0, 1.0, 4.0, 8192
    sc = {
        "rope_type": "llama3",
        "factor": factor,
        "low_freq_factor": lo,
        "high_freq_factor": hi,
        "original_max_position_embeddings": orig,
    }
    got = rope_frequencies(d, base, sc)
    np.testing.assert_allclose(got, llama3_frequencies(d, base, factor, lo, hi, orig), rtol=1e-15)
    w = np.array(rounded_omegas(d, base))
    wavelen = 2 * math.pi / w
    short, long_ = wavelen < orig / hi, wavelen > orig / lo
    assert short.sum() > 0 and long_.sum() > 0 and (~short & ~long_).sum() > 0
    assert np.array_equal(got[short], w[short])  # high frequencies untouched
    np.testing.assert_allclose(got[long_], w[long_] / factor, rtol=1e-15)
    mid = ~short & ~long_
    assert np.all((got[mid] < w[mid]) & (got[mid] > w[mid] / factor))


def test_dynamic_apply_default_seq_len_is_max_position_plus_one():
    rng = np.random.default_rng(RNG_SEED + 6)
    x = rng.standard_normal((3, 8))
    sc = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 16}
    pos = np.array([100, 200, 299])
    theta = hf_dynamic(8, 10000.0, 2.0, 16, 300)
    np.testing.assert_allclose(
        apply_rope(x, pos, scaling=sc),
        ref_rope_complex(x, pos, theta),
        atol=angle_atol(pos, 3 * np.abs(x).max()),
    )
    # within the original length: plain RoPE
    np.testing.assert_allclose(apply_rope(x, [0, 1, 2], scaling=sc), apply_rope(x), atol=0)
    # an explicit seq_len wins
    theta_big = hf_dynamic(8, 10000.0, 2.0, 16, 1000)
    np.testing.assert_allclose(
        apply_rope(x, pos, scaling=sc, seq_len=1000),
        ref_rope_complex(x, pos, theta_big),
        atol=angle_atol(pos, 3 * np.abs(x).max()),
    )


def test_dynamic_errors():
    sc = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 8}
    with pytest.raises(ValueError, match="seq_len"):
        rope_frequencies(8, scaling=sc, seq_len=0)
    with pytest.raises(ValueError, match="d_head >= 4"):
        rope_frequencies(2, scaling=sc, seq_len=100)
    with pytest.raises(ValueError, match="factor"):
        rope_frequencies(8, scaling={**sc, "factor": 0}, seq_len=100)


LONG = {
    "rope_type": "longrope",
    "short_factor": [1.0, 2.0],
    "long_factor": [4.0, 8.0],
    "original_max_position_embeddings": 16,
    "max_position_embeddings": 64,
}


def test_longrope_hand_case():
    # d = 4, base 100: theta = (1, 0.1). s = 64 / 16 = 4 (no factor key), L0 = 16:
    # attention factor sqrt(1 + ln 4 / ln 16) = sqrt(1 + 1/2) = sqrt(1.5).
    att = math.sqrt(1.5)
    for seq_len, expected in [(None, [1.0, 0.05]), (16, [1.0, 0.05]), (17, [0.25, 0.0125])]:
        inv, a = rope_frequencies(4, 100.0, LONG, seq_len=seq_len, return_attention_factor=True)
        np.testing.assert_allclose(inv, expected, rtol=2 * EPS)
        assert a == pytest.approx(att, rel=2 * EPS)
    # an explicit factor wins over max_position_embeddings (as transformers' `if factor is None`)
    _, a = rope_frequencies(4, 100.0, {**LONG, "factor": 16.0}, return_attention_factor=True)
    assert a == pytest.approx(math.sqrt(2.0), rel=2 * EPS)  # 1 + ln 16 / ln 16
    # s <= 1: attention factor 1; an explicit attention_factor is used as it is
    _, a = rope_frequencies(4, 100.0, {**LONG, "max_position_embeddings": 16}, return_attention_factor=True)
    assert a == 1.0
    _, a = rope_frequencies(4, 100.0, {**LONG, "attention_factor": 0.75}, return_attention_factor=True)
    assert a == 0.75


@given(d=st.sampled_from([2, 8, 32]), seed=st.integers(0, 2**32 - 1), seq_len=st.integers(1, 10**6))
def test_longrope_matches_the_transformers_formula(d, seed, seq_len):
    rng = np.random.default_rng(seed)
    short, long = rng.uniform(0.5, 3.0, d // 2).tolist(), rng.uniform(1.0, 40.0, d // 2).tolist()
    orig, factor = 4096, float(rng.uniform(0.5, 64.0))
    sc = {"rope_type": "longrope", "short_factor": short, "long_factor": long}
    sc |= {"original_max_position_embeddings": orig, "factor": factor}
    inv, att = rope_frequencies(d, 10000.0, sc, seq_len=seq_len, return_attention_factor=True)
    ext = long if seq_len > orig else short
    expected = [w / e for w, e in zip(rounded_omegas(d), ext, strict=True)]
    np.testing.assert_allclose(inv, expected, rtol=2 * EPS)
    expected_att = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(orig))
    assert att == pytest.approx(expected_att, rel=4 * EPS)


@pytest.mark.parametrize("top", [15, 16])  # max position 15: short factors; 16 -> seq_len 17: long
def test_apply_rope_longrope_picks_factors_from_the_positions_and_scales(top):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4))
    pos = np.array([[0, 5, top], [1, 2, 3]])[:, :]  # per-sequence ids, max over both rows
    ext = [4.0, 8.0] if top == 16 else [1.0, 2.0]
    theta = [w / e for w, e in zip(rounded_omegas(4, 100.0), ext, strict=True)]
    got = apply_rope(x, pos, base=100.0, layout="half", scaling=LONG)
    ref = loop_rotate(
        x, lambda n, tok, j: float(np.float64(pos[n + (tok,)]) * theta[j]), "half", scale=math.sqrt(1.5)
    )
    assert_rotation_close(got, ref, x, scale=1.5)


def test_transformers5_rope_parameters_dicts_as_they_stand():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 8))
    phi3 = {
        "rope_type": "longrope",
        "rope_theta": 10000.0,
        "partial_rotary_factor": 0.5,
        "short_factor": [1.0, 1.5],
        "long_factor": [2.0, 3.0],
        "original_max_position_embeddings": 4096,
        "factor": 32.0,
    }
    got = apply_rope(x, [0, 7, 9], layout="half", scaling=phi3, rotary_dim=4)
    theta = [w / e for w, e in zip(rounded_omegas(4), [1.0, 1.5], strict=True)]
    att = math.sqrt(1 + math.log(32.0) / math.log(4096))
    ref = loop_rotate(x, lambda n, tok, j: [0, 7, 9][tok] * theta[j], "half", rot=4, scale=att)
    assert_rotation_close(got, ref, x, scale=att)
    plain = {"rope_type": "default", "rope_theta": 500000.0}
    got = apply_rope(x, [0, 7, 9], base=500000.0, scaling=plain)
    ref = loop_rotate(x, lambda n, tok, j: [0, 7, 9][tok] * rounded_omegas(8, 500000.0)[j], "interleaved")
    assert_rotation_close(got, ref, x)
