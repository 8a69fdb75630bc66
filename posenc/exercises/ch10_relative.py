r"""The checker of chapter 10's exercise: T5's relative-position buckets.

:func:`check_t5_bucket` checks ``fn(relative_position, bidirectional=True,
num_buckets=32, max_distance=128)`` against
:func:`~posenc.relative.t5_relative_position_bucket` (exact integer buckets) and names the
known mistakes: query minus key (sign flipped), a floating-point log one bucket low at an
exact tie (float64), a float32 log one bucket off near a boundary (either way), rounding
or ceil instead of the floor, log buckets starting one too high, no clipping to the last
bucket, ``|r|`` instead of ``max(-r, 0)`` in causal mode.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..relative import t5_relative_position_bucket
from ._runner import Case, Variant, register_mistakes, run_checker

_T5 = register_mistakes(
    "check_t5_bucket",
    sign=(
        "query minus key (sign flipped)",
        "relative_position is key_pos - query_pos (T5's memory_position - context_position): a key "
        "after the query has r > 0 and gets the upper half of the buckets in bidirectional mode; in "
        "causal mode the distance looked up is max(-r, 0).",
    ),
    float_tie=(
        "floating-point log at an exact tie (one bucket low)",
        "at distances where m*(D/m)**(t/s) is an integer (e.g. num_buckets=20, max_distance=160, "
        "|r| = 10, 20, 80) the quotient s*log(n/m)/log(D/m) is exactly t, but evaluated in floating "
        "point it can come out as t - 1e-16 and floor() drops a bucket. Compare integers instead: "
        "t is the largest integer with D**t * m**(s-t) <= n**s.",
    ),
    float32=(
        "floating-point (float32) log, one bucket off near a boundary",
        "the float32 formula of the public implementations rounds the quotient s*log(n/m)/log(D/m), "
        "and where it lies within float32 rounding of an integer, tie or not, floor() lands on the "
        "wrong side: one bucket high just below a boundary (causal, 83 buckets, max distance 1000, "
        "r = -796: 80 instead of 79) or one bucket low just above one. Compare integers "
        "(n**s >= D**t * m**(s-t)) instead.",
    ),
    round=(
        "round() instead of floor (off-by-one buckets)",
        "the log bucket index is the floor of s*log(n/m)/log(D/m), not the nearest integer.",
    ),
    ceil=(
        "ceil instead of floor (off-by-one buckets)",
        "the log bucket index is the floor of s*log(n/m)/log(D/m).",
    ),
    log_shift=(
        "log buckets start one too high (off by one)",
        "distance n = m is the first logarithmic bucket, bucket m itself (t = 0), not m + 1.",
    ),
    no_clip=(
        "no clipping to the last bucket",
        "every distance >= max_distance shares the last bucket h - 1: take min(., h - 1).",
    ),
    causal_abs=(
        "|r| instead of max(-r, 0) in causal mode",
        "with bidirectional=False only keys before the query (r < 0) get distance buckets; every key "
        "at or after the query shares bucket 0.",
    ),
)


def _t5_float(
    rel: np.ndarray,
    bidirectional: bool,
    num_buckets: int,
    max_distance: int,
    *,
    dtype: type = np.float64,
    sign: int = 1,
    rounding: str = "floor",
    causal_abs: bool = False,
    log_shift: int = 0,
    clip: bool = True,
) -> np.ndarray:
    """T5's bucket formula evaluated in floating point, with optional deliberate mistakes."""
    rel = sign * np.asarray(rel, dtype=np.int64)
    half = num_buckets // 2 if bidirectional else num_buckets
    m = half // 2
    if bidirectional:
        offset = np.where(rel > 0, half, 0)
        n = np.abs(rel)
    else:
        offset = np.zeros_like(rel)
        n = np.abs(rel) if causal_abs else np.maximum(-rel, 0)
    with np.errstate(divide="ignore"):
        q = (np.log(n.astype(dtype) / dtype(m)) / dtype(math.log(max_distance / m))) * dtype(half - m)
    q = np.where(n < m, 0, q)
    t = {"floor": np.floor, "round": np.round, "ceil": np.ceil}[rounding](q).astype(np.int64) + log_shift
    large = m + t
    if clip:
        large = np.minimum(large, half - 1)
    return offset + np.where(n < m, n, large)


def check_t5_bucket(fn: Callable) -> str:
    r"""Check ``fn(relative_position, bidirectional=True, num_buckets=32, max_distance=128)``.

    ``relative_position`` is an int64 array ``key_pos - query_pos``; the result must be an
    integer array equal to :func:`~posenc.relative.t5_relative_position_bucket` (a float
    array is refused: bucket indices index a table). Inputs: the defaults in both modes,
    ``(20, 160)`` bidirectional (exact ties at ``|r| = 10, 20, 80``), ``(83, 1000)`` causal
    (float32 one bucket high at ``|r| = 796``), ``(103, 395)`` causal (float32 one bucket
    low at ``|r| = 351``) and other
    configurations, each on every ``r`` in ``[-2D, 2D]``.

    Recognised mistakes: query minus key (sign flipped), floating-point log landing one
    bucket low at an exact tie (naive float64), a float32 log one bucket off near a bucket
    boundary (high or low, tie or not), both of the first two,
    rounding instead of the floor, log buckets starting one too high (off by one), no
    clipping to the last bucket, ``|r|`` instead of ``max(-r, 0)`` in causal mode.
    """
    configs = [
        (True, 32, 128),
        (False, 32, 128),
        (True, 20, 160),
        (False, 20, 1000),
        (True, 64, 256),
        (False, 8, 20),
        (True, 12, 50),
        (False, 83, 1000),  # float32 one bucket high at |r| = 796 (no tie)
        (False, 103, 395),  # float32 one bucket low at |r| = 351 (no tie)
    ]
    cases = []
    for bidi, nb, md in configs:
        rel = np.arange(-2 * md, 2 * md + 1, dtype=np.int64)
        kw = {"bidirectional": bidi, "num_buckets": nb, "max_distance": md}
        cases.append(
            Case(
                (rel,),
                kw,
                t5_relative_position_bucket(rel, **kw),
                0.0,
                f"relative_position = -{2 * md}..{2 * md}, bidirectional={bidi}, "
                f"num_buckets={nb}, max_distance={md}",
            )
        )

    def v(**opts):
        return lambda case: _t5_float(
            case.args[0],
            case.kwargs["bidirectional"],
            case.kwargs["num_buckets"],
            case.kwargs["max_distance"],
            **opts,
        )

    def exact(sign: int) -> Callable[[Case], np.ndarray]:
        return lambda case: t5_relative_position_bucket(sign * case.args[0], **case.kwargs)

    variants = [
        Variant(("sign",), exact(-1)),
        Variant(("float_tie",), v()),
        Variant(("float32",), v(dtype=np.float32)),
        Variant(("round",), v(rounding="round")),
        Variant(("ceil",), v(rounding="ceil")),
        Variant(("log_shift",), v(log_shift=1)),
        Variant(("no_clip",), v(clip=False)),
        Variant(("causal_abs",), v(causal_abs=True)),
        Variant(("sign", "float_tie"), v(sign=-1)),
    ]
    return run_checker(
        "check_t5_bucket",
        "your T5 bucket function",
        fn,
        cases,
        _T5,
        variants,
        kind="int",
        exact=True,
        shape_doc=" = relative_position.shape",
    )
