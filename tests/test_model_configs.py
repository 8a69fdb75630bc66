"""The appendix's data file, chapters/data/model_configs.json: its schema and every configuration in it.

Every value carries its source and the kind of that source: the released checkpoint's own file,
the paper, the model card or the authors' code; a ``transformers`` class default may be named in
addition (``also``), never alone. Every RoPE configuration runs through
``posenc.rope_frequencies`` (finite, positive, d/2 values, decreasing where the scheme
keeps the order), the plain frequencies are compared with an independent recomputation in
mpmath, the transformers-5 ``rope_parameters`` form gives the same frequencies as the
legacy ``rope_scaling`` form, and the ALiBi head counts run through ``alibi_slopes``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import mpmath
import numpy as np
import pytest

import posenc

DATA = Path(__file__).resolve().parent.parent / "chapters" / "data" / "model_configs.json"
MODELS = json.loads(DATA.read_text())["models"]
BY_ID = {m["id"]: m for m in MODELS}
ENCODINGS = {"learned", "t5-bias", "alibi", "rope"}
REQUIRED = {  # the models of issue 15 whose values could be read from an allowed source
    "gpt2", "bert-base", "t5-small", "bloom-176b", "mpt-7b", "gpt-neox-20b", "llama-2-7b",
    "llama-3.1-8b", "llama-4-scout", "mistral-7b", "qwen2.5-7b", "deepseek-v3", "gemma-2-9b", "gemma-3-4b",
}  # fmt: skip
LEFT_OUT = {"falcon-7b", "qwen2-vl", "phi-3-mini-128k"}  # only transformers class defaults held their values
KINDS = {"checkpoint-file", "paper", "model-card", "authors-code"}
LIBRARY = ("transformers", "Config default", "Config.", "modeling_", "default_theta")


def value(model: dict, key: str):
    return model["values"][key]["value"]


def rope_settings(model: dict) -> list[tuple[int, float, dict | None]]:
    """(rotated dimensions, base, scaling) of each kind of RoPE layer, read from the values."""
    vals = {k: v["value"] for k, v in model["values"].items()}
    if "qk_rope_head_dim" in vals:
        d = vals["qk_rope_head_dim"]
    elif "head_dim" in vals:
        d = vals["head_dim"]
    elif "dim" in vals:
        d = vals["dim"] // vals["n_heads"]
    elif "hidden_size" in vals:
        d = vals["hidden_size"] // vals["num_attention_heads"]
    else:
        return []  # no head width read from an allowed source (Qwen2.5, Mistral, Llama 4 Scout)
    d = int(round(d * vals.get("rotary_pct", 1.0)))
    scaling = vals.get("rope_scaling")
    if "rope_factor" in vals:  # DeepSeek's reference names, in the transformers schema
        scaling = {
            "rope_type": "yarn",
            "factor": vals["rope_factor"],
            "original_max_position_embeddings": vals["original_seq_len"],
            "beta_fast": vals["beta_fast"],
            "beta_slow": vals["beta_slow"],
            "mscale": vals["mscale"],
            "mscale_all_dim": vals["mscale"],
        }
    if "rope_theta_global" in vals:  # Gemma: global and local layers
        return [
            (d, vals["rope_theta_global"], vals.get("rope_scaling_global")),
            (d, vals["rope_theta_local"], None),
        ]
    return [(d, vals["rope_theta"], scaling)]


ROPE = [(m["id"], d, base, sc) for m in MODELS if m["encoding"] == "rope" for d, base, sc in rope_settings(m)]


def source_problem(entry: dict) -> str | None:
    """Why ``entry`` (one value of the data file) lacks an allowed source, or None when it has one."""
    allowed = {"value", "kind", "source", "also", "caveat"}
    if set(entry) - allowed or not {"value", "kind", "source"} <= set(entry):
        return f"keys {sorted(entry)}"
    if "caveat" in entry and not ("not read here" in entry["caveat"] and len(entry["caveat"]) >= 40):
        return "a caveat must say which file overrides the value and that it was not read"
    if entry["kind"] not in KINDS:
        return f"kind {entry['kind']!r} is not one of {sorted(KINDS)}"
    source = entry["source"]
    if not isinstance(source, str) or len(source) < 20:
        return "no precise source"
    if any(t in source for t in LIBRARY):
        return "a library default in 'source' (it may only be named in 'also')"
    if entry["kind"] in ("authors-code", "checkpoint-file", "model-card") and not re.search(
        r"@ [0-9a-f]{7}", source
    ):
        return "no repository revision ('owner/name @ commit')"
    if entry["kind"] == "paper" and not re.search(r"\b(section|Table) [0-9]", source):
        return "a paper without its section or table"
    if entry["kind"] in ("authors-code", "checkpoint-file") and not re.search(
        r"\.(py|json|ya?ml|md|gin)\b", source
    ):
        return "no file"
    return None


def test_schema_every_value_has_an_allowed_source():
    assert {m["id"] for m in MODELS} == REQUIRED
    assert len(BY_ID) == len(MODELS)  # ids are unique
    for m in MODELS:
        assert set(m) == {"id", "name", "encoding", "values"}, m["id"]
        assert m["encoding"] in ENCODINGS and m["values"], m["id"]
        for key, entry in m["values"].items():
            assert source_problem(entry) is None, (m["id"], key, source_problem(entry))
    left = json.loads(DATA.read_text())["left_out"]
    assert LEFT_OUT <= set(left) and not LEFT_OUT & set(BY_ID)
    for model_id, keys in left.items():  # a key that left is not also in the table
        assert keys and not set(keys) & set(BY_ID.get(model_id, {"values": {}})["values"]), model_id


@pytest.mark.parametrize(
    "entry",
    [
        {"value": 131072, "source": "transformers 5.24.0: MistralConfig default max_position_embeddings"},
        {"value": 131072, "kind": "library-default", "source": "transformers 5.24.0: MistralConfig default"},
        {
            "value": 4096,
            "kind": "authors-code",
            "source": "transformers 5.24.0: MistralConfig default sliding_window",
        },
        {
            "value": 4096,
            "kind": "authors-code",
            "source": "mistralai/mistral-src, mistral/model.py somewhere",
        },
        {"value": 4096, "kind": "paper"},
        {"value": 768, "kind": "paper", "source": "Radford et al. 2019, the GPT-2 paper, somewhere"},
        {
            "value": 4096,
            "kind": "authors-code",
            "source": "meta-llama/llama @ 689c7f2, llama/model.py, ModelArgs dim",
            "caveat": "a default",
        },
    ],
)
def test_a_value_without_an_allowed_source_is_refused(entry):
    assert source_problem(entry) is not None


def test_rope_models_all_have_settings_except_the_unverified_head_width():
    missing = [m["id"] for m in MODELS if m["encoding"] == "rope" and not rope_settings(m)]
    assert missing == ["llama-4-scout", "mistral-7b", "qwen2.5-7b"]
    assert len(ROPE) == 8  # Gemma 2 and 3: a global and a local layer each


@pytest.mark.parametrize(("model", "d", "base", "scaling"), ROPE, ids=[f"{r[0]}-{r[2]:g}" for r in ROPE])
def test_every_rope_configuration_runs(model, d, base, scaling):
    assert d % 2 == 0 and d >= 2
    inv = posenc.rope_frequencies(d, base, scaling)
    assert inv.shape == (d // 2,) and inv.dtype == np.float64
    assert np.all(np.isfinite(inv)) and np.all(inv > 0)
    assert np.all(np.diff(inv) < 0)  # default, linear, yarn and llama3 keep the order of the pairs
    with mpmath.workdps(40):  # the plain frequencies, independently
        plain = np.array([float(mpmath.mpf(base) ** (-mpmath.mpf(2 * i) / d)) for i in range(d // 2)])
    np.testing.assert_allclose(posenc.rope_frequencies(d, base), plain, rtol=1e-15)
    if scaling is not None:
        ratio = inv / plain
        s = scaling["factor"]
        assert np.all(ratio <= 1 + 1e-15) and np.all(ratio >= 1 / s - 1e-15)
        if scaling["rope_type"] == "linear":  # every pair divided by the factor
            np.testing.assert_allclose(ratio, 1 / s, rtol=1e-15)
        else:  # the fastest pair kept, the slowest divided
            assert ratio[0] == pytest.approx(1.0) and ratio[-1] == pytest.approx(1 / s)
        # the transformers-5 form: rope_theta inside, rope_type for type
        params = {k: v for k, v in scaling.items() if k != "type"}
        params.update(rope_type=scaling.get("rope_type", scaling.get("type")), rope_theta=base)
        np.testing.assert_array_equal(posenc.rope_frequencies(d, base, params), inv)
        with pytest.raises(ValueError, match="rope_theta"):
            posenc.rope_frequencies(d, base * 2, params)


def test_qwen25_yarn_block_in_both_schemas():
    # no verified head width or base: run its scaling block on a stand-in head, both key spellings
    sc = value(BY_ID["qwen2.5-7b"], "rope_scaling")
    legacy = posenc.rope_frequencies(128, 10000.0, sc, return_attention_factor=True)
    params = {"rope_type": "yarn", "rope_theta": 10000.0, **{k: v for k, v in sc.items() if k != "type"}}
    new = posenc.rope_frequencies(128, 10000.0, params, return_attention_factor=True)
    np.testing.assert_array_equal(legacy[0], new[0])
    assert legacy[1] == new[1] == pytest.approx(0.1 * math.log(sc["factor"]) + 1)


def test_deepseek_attention_factor_moves_to_the_softmax_scale():
    (d, base, sc), = rope_settings(BY_ID["deepseek-v3"])  # fmt: skip
    _, a = posenc.rope_frequencies(d, base, sc, return_attention_factor=True)
    assert a == 1.0  # mscale == mscale_all_dim: cos and sin are not scaled
    plain = {k: v for k, v in sc.items() if k not in ("mscale", "mscale_all_dim")}
    _, a_plain = posenc.rope_frequencies(d, base, plain, return_attention_factor=True)
    assert a_plain == pytest.approx(0.1 * math.log(40.0) + 1.0)


@pytest.mark.parametrize("model", ["bloom-176b", "mpt-7b"])
def test_alibi_configurations(model):
    m = BY_ID[model]
    n = value(m, "n_head") if "n_head" in m["values"] else value(m, "n_heads")
    slopes = posenc.alibi_slopes(n)
    assert slopes.shape == (n,) and np.all(np.isfinite(slopes)) and np.all(slopes > 0)
    N = 2 ** int(math.floor(math.log2(n)))  # Press et al.'s rule, written out
    expected = [2.0 ** (-8 * h / N) for h in range(1, N + 1)] + [
        2.0 ** (-8 * h / (2 * N)) for h in range(1, 2 * (n - N), 2)
    ]
    np.testing.assert_allclose(slopes, expected, rtol=1e-14)
    if model == "mpt-7b":
        assert value(m, "alibi") is True and value(m, "alibi_bias_max") == 8


def test_other_positional_settings():
    g3 = BY_ID["gemma-3-4b"]
    assert value(g3, "rope_theta_local") < value(g3, "rope_theta_global")
    assert value(g3, "sliding_window") < value(BY_ID["gemma-2-9b"], "sliding_window")
    t5 = BY_ID["t5-small"]
    buckets = posenc.t5_relative_position_bucket(
        np.arange(-300, 301),
        num_buckets=value(t5, "relative_attention_num_buckets"),
        max_distance=value(t5, "relative_attention_max_distance"),
    )
    assert buckets.min() == 0 and buckets.max() == value(t5, "relative_attention_num_buckets") - 1


# the values read from a default that the released checkpoint's own file replaces (expert read, item 3-4)
CAVEATED = {
    ("gpt2", "n_ctx"), ("gpt2", "n_embd"), ("gpt2", "n_head"),
    ("llama-2-7b", "dim"), ("llama-2-7b", "n_heads"),
    ("llama-4-scout", "rope_theta"), ("llama-4-scout", "floor_scale"), ("llama-4-scout", "attn_scale"),
    ("mpt-7b", "n_heads"), ("mpt-7b", "d_model"), ("mpt-7b", "max_seq_len"), ("mpt-7b", "alibi_bias_max"),
}  # fmt: skip


def test_code_defaults_that_a_loader_overrides_carry_a_caveat():
    caveated = {(m["id"], k) for m in MODELS for k, e in m["values"].items() if "caveat" in e}
    assert caveated == CAVEATED
    overridden = ("gpt2", "llama-2-7b", "llama-4-scout")  # loaders that rebuild the arguments from a file
    for m in MODELS:
        for key, entry in m["values"].items():
            src = entry["source"]
            code_default = "default_hparams()" in src or (
                "ModelArgs " in src and "ModelArgs.validate" not in src
            )
            if (code_default and m["id"] in overridden) or "yamls/pretrain" in src:
                assert "caveat" in entry, (m["id"], key)
    # where a paper holds the value, the paper is the kind
    assert {k for k, e in BY_ID["gpt2"]["values"].items() if e["kind"] == "paper"} == {"n_ctx", "n_embd"}
    assert {k for k, e in BY_ID["llama-2-7b"]["values"].items() if e["kind"] == "paper"} == {"dim", "n_heads"}
