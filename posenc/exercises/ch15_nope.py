r"""The checkers of chapter 15's exercises: position without an encoding.

* :func:`check_causal_prefix_mean`: ``fn(values)`` must return the output of causal
  attention with equal scores, :math:`o_t = \frac{1}{t+1}\sum_{j \le t} v_j`. Known
  mistakes: no causal mask (the mean of all tokens), the prefix sum not divided, divided by
  the sequence length, the suffix mean (mask the wrong way round).
* :func:`check_attention_temperature`: ``fn(positions, floor_scale, attn_scale)`` must
  return Llama 4's query scale :math:`1 + a\ln(\lfloor (p+1)/F\rfloor + 1)`
  (:func:`~posenc.scales.attention_temperature`). Known mistakes: :math:`p` instead of
  :math:`p + 1`, no floor, a logarithm in another base, the :math:`1 +` dropped, the
  arguments ignored.
* :func:`check_nope_layers`: ``fn(n_layers, interval)`` must return the 0-based indices of
  the layers *without* RoPE of a Llama 4 / SmolLM3 schedule (transformers' default
  ``no_rope_layers[i] = int((i + 1) % interval != 0)``, 0 marking a NoPE layer), as an
  integer array. Known mistakes: off by one (layers :math:`0, k, 2k, \dots`), 1-based layer
  numbers, the RoPE layers instead, the 0/1 flags instead of indices.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._arrays import is_integer_dtype
from ..scales import attention_temperature
from ._runner import (
    Case,
    ExerciseError,
    Variant,
    call_case,
    check_fn,
    check_plain_array,
    mistake_error,
    register_mistakes,
    result_problem,
    run_checker,
    wrong_shape_error,
)

_PREFIX = register_mistakes(
    "check_causal_prefix_mean",
    no_mask=(
        "no causal mask (mean of all tokens)",
        "token t may only see the tokens 0..t: without the mask every row is the same mean, "
        "and the output cannot depend on the position (chapter 1's permutation equivariance).",
    ),
    no_division=(
        "prefix sum not divided",
        "equal scores give equal weights 1/(t+1) on the t+1 visible tokens: divide the prefix sum by t + 1.",
    ),
    by_length=(
        "divided by the sequence length L",
        "row t averages its t + 1 visible tokens, not all L of them: divide by t + 1.",
    ),
    suffix=(
        "suffix mean (the mask the wrong way round)",
        "a causal query at t sees the keys j <= t (the past), not j >= t.",
    ),
)

_TEMPERATURE = register_mistakes(
    "check_attention_temperature",
    p_not_p1=(
        "position p instead of p+1 in the floor",
        "Llama 4 takes floor((p + 1) / floor_scale): the first step comes at p = floor_scale - 1, "
        "not at p = floor_scale.",
    ),
    no_floor=(
        "no floor (a smooth logarithm)",
        "the scale is constant on blocks of floor_scale positions: floor((p + 1) / floor_scale) "
        "before the logarithm.",
    ),
    log_base=(
        "logarithm in base 10 or 2",
        "the scale uses the natural logarithm, log1p(floor((p + 1) / floor_scale)).",
    ),
    no_one=(
        "the leading 1 dropped (scale 0 at short positions)",
        "the query is multiplied by 1 + attn_scale * log(...): 1, not 0, for the first floor_scale - 1 "
        "positions, which keeps short contexts unchanged.",
    ),
    arguments=(
        "floor_scale or attn_scale ignored (Llama 4's defaults used)",
        "use the floor_scale and attn_scale you are given; 8192 and 0.1 are only Llama 4's values.",
    ),
)

_LAYERS = register_mistakes(
    "check_nope_layers",
    off_by_one=(
        "off by one: layers 0, k, 2k, ... (layer_idx % interval == 0)",
        "transformers marks layer i as NoPE when (i + 1) % interval == 0: with 0-based indices and "
        "interval 4 the NoPE layers are 3, 7, 11, ..., the last of every block of four, never layer 0.",
    ),
    one_based=(
        "1-based layer numbers",
        "return 0-based indices (the layer_idx of transformers): interval 4 gives 3, 7, 11, ..., "
        "not 4, 8, 12.",
    ),
    rope_layers=(
        "the RoPE layers instead of the NoPE layers",
        "no_rope_layers[i] == 1 means the layer APPLIES RoPE (use_rope); the NoPE layers are the zeros.",
    ),
    flags=(
        "the 0/1 flags instead of the layer indices",
        "the exercise asks for the indices of the NoPE layers, e.g. np.flatnonzero(flags == 0), not the "
        "no_rope_layers list itself.",
    ),
)


def check_causal_prefix_mean(fn: Callable) -> str:
    r"""Check ``fn(values)`` against the causal prefix mean :math:`o_t = \frac{1}{t+1}\sum_{j\le t} v_j`.

    ``values`` has shape ``(..., L, d)`` (float64); the result must have the same shape and
    dtype (absolute tolerance ``1e-12``). Recognised mistakes: no causal mask, the prefix sum
    not divided, divided by ``L``, the suffix mean.
    """
    rng = np.random.default_rng(15)
    shapes = [(1, 1), (5, 1), (6, 3), (17, 4), (2, 9, 5), (3, 2, 12, 2), (64, 8)]
    cases = []
    for shape in shapes:
        v = rng.standard_normal(shape)
        if shape[-2] > 1:
            v[..., 0, 0] = 1.0  # a BOS marker in the first token's coordinate 0
            v[..., 1:, 0] = 0.0
        cases.append(Case((v,), {}, _prefix_mean(v), 1e-12, f"values of shape {shape}"))

    variants = [
        Variant(
            ("no_mask",), lambda c: np.broadcast_to(c.args[0].mean(axis=-2, keepdims=True), c.args[0].shape)
        ),
        Variant(("no_division",), lambda c: np.cumsum(c.args[0], axis=-2)),
        Variant(("by_length",), lambda c: np.cumsum(c.args[0], axis=-2) / c.args[0].shape[-2]),
        Variant(
            ("suffix",),
            lambda c: np.flip(_prefix_mean(np.flip(c.args[0], axis=-2)), axis=-2),
        ),
    ]
    return run_checker(
        "check_causal_prefix_mean",
        "your causal prefix mean",
        fn,
        cases,
        _PREFIX,
        variants,
        variant_tol=1e-10,
        shape_doc=" (the shape of values)",
    )


def _prefix_mean(v: np.ndarray) -> np.ndarray:
    counts = np.arange(1, v.shape[-2] + 1, dtype=np.float64)[:, None]
    return np.cumsum(v, axis=-2) / counts


def check_attention_temperature(fn: Callable) -> str:
    r"""Check ``fn(positions, floor_scale, attn_scale)`` against :func:`~posenc.scales.attention_temperature`.

    ``positions`` is a 1-D int64 array, ``floor_scale`` a positive integer and
    ``attn_scale`` a float, passed by position. The result must be a float64 array of the
    shape of ``positions`` (absolute tolerance ``1e-12``). Recognised mistakes:
    :math:`\lfloor p/F\rfloor` instead of :math:`\lfloor (p+1)/F\rfloor`, no floor, a
    logarithm in base 10 or 2, the :math:`1 +` dropped, the arguments ignored.
    """
    settings = [(8192, 0.1), (8192, 0.1), (16, 0.25), (100, 0.5), (3, 1.0)]
    cases = []
    for n, (F, a) in enumerate(settings):
        if n == 0:
            p = np.array(
                [0, 1, F - 2, F - 1, F, 2 * F - 2, 2 * F - 1, 10 * F, 131071, 1048575], dtype=np.int64
            )
        elif n == 1:
            p = np.arange(0, 40 * F, 997, dtype=np.int64)
        else:
            p = np.arange(0, 7 * F + 3, dtype=np.int64)
        expected = attention_temperature(p, floor_scale=F, attn_scale=a)
        cases.append(
            Case((p, F, a), {}, expected, 1e-12, f"positions {_span(p)}, floor_scale={F}, attn_scale={a}")
        )

    def formula(c: Case, *, shift: int = 1, floor: bool = True, log=np.log, one: float = 1.0, defaults=False):
        p, F, a = c.args
        if defaults:
            F, a = 8192, 0.1
        r = (p + shift) / F
        return log((np.floor(r) if floor else r) + 1.0) * a + one

    variants = [
        Variant(("p_not_p1",), lambda c: formula(c, shift=0)),
        Variant(("no_floor",), lambda c: formula(c, floor=False)),
        Variant(("log_base",), lambda c: formula(c, log=np.log10)),
        Variant(("log_base",), lambda c: formula(c, log=np.log2)),
        Variant(("no_one",), lambda c: formula(c, one=0.0)),
        Variant(("arguments",), lambda c: formula(c, defaults=True)),
    ]
    return run_checker(
        "check_attention_temperature",
        "your attention temperature",
        fn,
        cases,
        _TEMPERATURE,
        variants,
        variant_tol=1e-10,
        shape_doc=" (the shape of positions)",
    )


def _span(p: np.ndarray) -> str:
    return f"{int(p[0])}..{int(p[-1])} ({p.size} values)"


def _nope_indices(n_layers: int, interval: int) -> np.ndarray:
    flags = [int((i + 1) % interval != 0) for i in range(n_layers)]  # transformers' default
    return np.array([i for i, f in enumerate(flags) if f == 0], dtype=np.int64)


def check_nope_layers(fn: Callable) -> str:
    r"""Check ``fn(n_layers, interval)``: the 0-based indices of the layers without RoPE.

    The reference is transformers' default schedule of Llama 4 and SmolLM3,
    ``no_rope_layers[i] = int((i + 1) % interval != 0)`` (``1``: the layer applies RoPE,
    ``0``: it does not). The result must be an integer numpy array of the NoPE indices in
    increasing order (empty when ``interval > n_layers``). Recognised mistakes: layers
    ``0, k, 2k, ...``, 1-based numbers, the RoPE layers, the flags instead of indices.
    """
    check_fn("check_nope_layers", fn)
    label = "your NoPE layer indices"
    settings = [(48, 4), (36, 4), (16, 4), (10, 3), (12, 2), (5, 5), (9, 1), (7, 8), (3, 1)]
    cases = [Case((n, k), {}, _nope_indices(n, k), 0.0, f"n_layers={n}, interval={k}") for n, k in settings]
    variants = [
        Variant(("off_by_one",), lambda c: np.arange(0, c.args[0], c.args[1])),
        Variant(("one_based",), lambda c: _nope_indices(*c.args) + 1),
        Variant(("rope_layers",), lambda c: np.setdiff1d(np.arange(c.args[0]), _nope_indices(*c.args))),
        Variant(("flags",), lambda c: (np.arange(1, c.args[0] + 1) % c.args[1] != 0).astype(np.int64)),
    ]
    outputs = []
    for case in cases:
        value = call_case(fn, case, label)
        where = f"\n  on input {case.label}"
        expect = f"expected a numpy array of shape {case.expected.shape} and an integer dtype (e.g. int64)"
        check_plain_array(value, case.expected, label=label, what="the result", expect=expect, on=where)
        if np.issubdtype(value.dtype, np.complexfloating):
            raise result_problem(
                f"{label}: the result has complex values (dtype {value.dtype}); {expect}. Layer "
                f"indices are integers: return a real integer array{where}",
                "complex values",
            )
        if value.dtype == np.bool_ or not is_integer_dtype(value.dtype):
            raise result_problem(
                f"{label}: the result has dtype {value.dtype}; {expect}. Layer indices index the list "
                f"of layers, so they are integers: convert with .astype(np.int64){where}",
                "wrong dtype",
            )
        outputs.append(value.astype(np.int64))
    same = [
        out.shape == case.expected.shape and np.array_equal(out, case.expected)
        for out, case in zip(outputs, cases, strict=True)
    ]
    if all(same):
        return f"correct on {len(cases)} inputs"
    for variant in variants:
        if all(np.array_equal(out, variant.compute(case)) for out, case in zip(outputs, cases, strict=True)):
            raise mistake_error(label, _LAYERS, variant.keys)
    for out, case in zip(outputs, cases, strict=True):
        if out.shape != case.expected.shape:
            raise wrong_shape_error(
                label, "the result", out, case.expected, " (one entry per NoPE layer)", case.label
            )
    first = same.index(False)
    raise ExerciseError(
        f"{label} is wrong on {same.count(False)} of {len(cases)} inputs (no known mistake matches).\n"
        f"  First failing input: {cases[first].label}\n  got {outputs[first].tolist()}, "
        f"expected {cases[first].expected.tolist()}",
        mistake=None,
    )
