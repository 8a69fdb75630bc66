r"""The checkers of chapter 16's exercises: axial frequencies, M-RoPE ids and M-RoPE sections.

:func:`check_axial_frequencies` checks ``fn(d_head, n_axes=2, base=10000.0)`` against
:func:`~posenc.rope_nd.axial_rope_frequencies`; :func:`check_mrope_positions` checks
``fn(segments)`` against :func:`~posenc.mrope.mrope_positions`;
:func:`check_mrope_channel_axes` checks ``fn(mrope_section, d_head)``, the axis (0
temporal, 1 height, 2 width) that turns each of the ``d_head`` channels of a head in the
half layout, against the axis of each pair that :func:`~posenc.mrope.apply_mrope` uses.
Each names the known mistakes of its exercise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..mrope import mrope_positions
from ..rope_nd import axial_rope_frequencies
from ..sinusoidal import frequencies
from ._runner import Case, Variant, frequency_mistakes, register_mistakes, run_checker

_shared = frequency_mistakes("c_a", "theta_i")

_AXIAL = register_mistakes(
    "check_axial_frequencies",
    full_head=(
        "frequencies of a d_head-dimensional RoPE",
        "each axis owns d_head/n_axes channels, so its block holds the frequencies of a "
        "(d_head/n_axes)-dimensional RoPE, base**(-2i/(d_head/n_axes)), not a slice of the full head's "
        "base**(-2j/d_head): with the slice one axis gets only fast pairs and the other only slow ones.",
    ),
    full_head_first=(
        "first frequencies of a d_head-dimensional RoPE in every block",
        "the block of each axis is a complete RoPE of width d_head/n_axes, from 1 down to about "
        "1/base; the first d_head/(2 n_axes) frequencies of the full head stop far above 1/base.",
    ),
    alternate=(
        "axes alternate pair by pair instead of consecutive blocks",
        "the pairs split into n_axes consecutive blocks: pairs 0..b-1 turn with axis 0, pairs b..2b-1 "
        "with axis 1, and so on (b = d_head/(2 n_axes)), not pair j with axis j mod n_axes.",
    ),
    missing_2=_shared["missing_2"],
    base_ignored=_shared["base_ignored"],
)


def _axial_variant(d: int, n: int, base: float, kind: str) -> np.ndarray:
    half = d // 2
    b = half // n
    out = np.zeros((n, half))
    if kind == "full_head":
        full = frequencies(d, base)
        for a in range(n):
            out[a, a * b : (a + 1) * b] = full[a * b : (a + 1) * b]
    elif kind == "full_head_first":
        full = frequencies(d, base)
        for a in range(n):
            out[a, a * b : (a + 1) * b] = full[:b]
    elif kind == "alternate":
        inner = frequencies(2 * b, base)
        for j in range(half):
            out[j % n, j] = inner[j // n]
    elif kind == "missing_2":
        inner = base ** (-np.arange(b) / (2 * b))
        for a in range(n):
            out[a, a * b : (a + 1) * b] = inner
    else:  # pragma: no cover - the variants below name only the kinds above
        raise ValueError(kind)
    return out


def check_axial_frequencies(fn: Callable) -> str:
    r"""Check ``fn(d_head, n_axes=2, base=10000.0)`` against :func:`~posenc.rope_nd.axial_rope_frequencies`.

    The result is a float64 array of shape ``(n_axes, d_head/2)``: with
    :math:`b = d_{head}/(2 n_{axes})`, row :math:`a` holds, in columns :math:`ab` to
    :math:`ab + b - 1`, the frequencies :math:`\mathrm{base}^{-2i/(d_{head}/n_{axes})}`,
    :math:`i = 0, \dots, b-1`, of a :math:`(d_{head}/n_{axes})`-dimensional RoPE, and zeros
    elsewhere.

    Recognised mistakes: the frequencies of a ``d_head``-dimensional RoPE (sliced per block,
    or its first ``b`` in every block), axes alternating pair by pair, the missing factor 2
    in the exponent, the ``base`` argument ignored.
    """
    specs = [(8, 2, 10000.0), (16, 2, 10000.0), (64, 2, 10000.0), (128, 2, 10000.0), (12, 3, 10000.0)]
    specs += [(48, 3, 10000.0), (32, 4, 10000.0), (16, 2, 100.0), (64, 2, 100.0), (24, 2, 500.0)]
    cases = [
        Case(
            (d, n),
            {"base": base},
            axial_rope_frequencies(d, n, base=base),
            1e-12,
            f"d_head={d}, n_axes={n}, base={base:g}",
        )
        for d, n, base in specs
    ]

    def v(kind: str) -> Callable[[Case], np.ndarray]:
        return lambda case: _axial_variant(case.args[0], case.args[1], case.kwargs["base"], kind)

    variants = [
        Variant(("full_head",), v("full_head")),
        Variant(("full_head_first",), v("full_head_first")),
        Variant(("alternate",), v("alternate")),
        Variant(("missing_2",), v("missing_2")),
        Variant(
            ("base_ignored",),
            lambda case: axial_rope_frequencies(case.args[0], case.args[1]),
        ),
    ]
    return run_checker(
        "check_axial_frequencies",
        "your axial frequencies",
        fn,
        cases,
        _AXIAL,
        variants,
        shape_doc=" = (n_axes, d_head/2)",
    )


_MROPE_IDS = register_mistakes(
    "check_mrope_positions",
    count=(
        "ids continue from the token count",
        "a segment starts at the largest id so far + 1, not at the number of tokens so far: an image "
        "of t*h*w tokens advances the ids by max(t, h, w) only, which is what keeps M-RoPE's ids small.",
    ),
    no_plus_one=(
        "next segment starts at the largest id instead of one past it",
        "the first token after a segment must not share an id with its last token: start at max + 1.",
    ),
    grid_from_zero=(
        "grid ids not offset by the start",
        "a grid that starts at s gets (s + t_idx, s + h_idx, s + w_idx) on the three axes, not "
        "(t_idx, h_idx, w_idx).",
    ),
    hw_swap=(
        "height and width ids swapped",
        "row-major order: within a frame the width index runs fastest; the height id is the row, "
        "the width id the column.",
    ),
)


def _mrope_variant(segments: list, kind: str) -> np.ndarray:
    cols: list[tuple[int, int, int]] = []
    start, count = 0, 0
    for item in segments:
        s = count if kind == "count" else start
        if isinstance(item, int):
            ids = [(s + k, s + k, s + k) for k in range(item)]
        else:
            t, h, w = item
            off = 0 if kind == "grid_from_zero" else s
            ids = []
            for ti in range(t):
                for hi in range(h):
                    for wi in range(w):
                        r, c = (wi, hi) if kind == "hw_swap" else (hi, wi)
                        ids.append((off + ti, off + r, off + c))
        cols += ids
        count += len(ids)
        if ids:
            top = max(max(col) for col in ids)
            start = top if kind == "no_plus_one" else top + 1
    return np.array(cols, dtype=np.int64).T.reshape(3, -1)


def check_mrope_positions(fn: Callable) -> str:
    r"""Check ``fn(segments)`` against :func:`~posenc.mrope.mrope_positions` (Qwen2-VL's ``get_rope_index``).

    ``segments`` is a list of ints (runs of text tokens) and tuples ``(t, h, w)`` (vision
    grids after spatial merging, row-major); the result is an integer array of shape
    ``(3, N)``: the temporal, height and width ids of the ``N`` tokens. Text continues from
    the largest id so far + 1 on all three axes; a grid starting at :math:`s` gets
    :math:`(s + t_{idx}, s + h_{idx}, s + w_{idx})`.

    Recognised mistakes: ids continuing from the token count, the next segment starting at
    the largest id instead of the largest id + 1, grid ids not offset by the start, height
    and width swapped.
    """
    specs = [
        [6],
        [2, (1, 2, 3), 2],
        [3, (1, 4, 4), 5],
        [(1, 3, 2)],
        [(1, 2, 2), (1, 3, 3)],
        [4, (2, 3, 3), 1],
        [1, (1, 1, 6), 3, (1, 5, 2), 2],
        [5, (1, 2, 5), 0, 3],
        [2, (3, 2, 2), 4],
    ]
    cases = [Case((list(seg),), {}, mrope_positions(seg), 0.0, f"segments={seg!r}") for seg in specs]

    def v(kind: str) -> Callable[[Case], np.ndarray]:
        return lambda case: _mrope_variant(case.args[0], kind)

    variants = [Variant((key,), v(key)) for key in ("count", "no_plus_one", "grid_from_zero", "hw_swap")]
    return run_checker(
        "check_mrope_positions",
        "your M-RoPE position ids",
        fn,
        cases,
        _MROPE_IDS,
        variants,
        kind="int",
        exact=True,
        shape_doc=" = (3, number of tokens)",
    )


_MROPE_AXES = register_mistakes(
    "check_mrope_channel_axes",
    interleaved=(
        "sections doubled and cut once (the interleaved layout's pairing)",
        "in the half layout channel c belongs to pair c mod d_head/2, so the sections repeat in the "
        "second half of the channels; cutting the channels once at 2*s_t, 2*(s_t + s_h) pairs channel c "
        "with pair c // 2, the interleaved layout.",
    ),
    cut_index=(
        "cut i of mrope_section*2 taken from axis i instead of i mod 3",
        "the cos/sin tables are cut at mrope_section * 2 = [s_t, s_h, s_w, s_t, s_h, s_w] channels and "
        "cut i comes from axis i mod 3: there are only three axes.",
    ),
    boundary=(
        "off by one at the section boundaries",
        "pair j turns with the temporal id for j < s_t, with the height id for s_t <= j < s_t + s_h: pair "
        "s_t is the first pair of the height section, not the last of the temporal one (in numpy, "
        "np.searchsorted(np.cumsum(mrope_section), j, side='right')).",
    ),
    reversed_axes=(
        "sections in the order width, height, temporal",
        "the first s_t pairs turn with the temporal id, the next s_h with the height id, the last s_w "
        "with the width id.",
    ),
)


def _pair_axes(sections: list[int]) -> np.ndarray:
    return np.repeat(np.arange(3, dtype=np.int64), sections)


def _axes_variant(sections: list[int], d: int, kind: str) -> np.ndarray:
    if kind == "interleaved":
        return np.repeat(np.arange(3, dtype=np.int64), [2 * s for s in sections])
    if kind == "cut_index":
        return np.repeat(np.arange(6, dtype=np.int64), sections * 2)
    if kind == "boundary":
        pairs = np.searchsorted(np.cumsum(sections), np.arange(d // 2), side="left")
        return np.tile(np.minimum(pairs, 2).astype(np.int64), 2)
    return np.tile(2 - _pair_axes(sections), 2)  # reversed_axes


def check_mrope_channel_axes(fn: Callable) -> str:
    r"""Check ``fn(mrope_section, d_head)``: the axis of each channel of a head under M-RoPE, half layout.

    The result is an integer array of length ``d_head`` whose entry ``c`` is the axis
    (0 temporal, 1 height, 2 width) whose id turns channel ``c``. In the half layout channel
    :math:`c` belongs to pair :math:`c \bmod d_{head}/2`, and pair :math:`j` turns with axis 0
    for :math:`j < s_t`, 1 for :math:`s_t \le j < s_t + s_h`, 2 otherwise
    (:func:`~posenc.mrope.apply_mrope`).

    Recognised mistakes: the sections doubled and cut once (the interleaved layout's
    pairing), cut :math:`i` of ``mrope_section * 2`` taken from axis :math:`i` instead of
    :math:`i \bmod 3`, an off-by-one at the section boundaries, the sections in reversed
    axis order.
    """
    specs = [([16, 24, 24], 128), ([2, 3, 3], 16), ([1, 1, 1], 6), ([4, 2, 2], 16), ([1, 3, 4], 16)]
    specs += [([8, 12, 12], 64), ([3, 1, 2], 12)]
    cases = [
        Case(
            (list(sec), d),
            {},
            np.tile(_pair_axes(sec), 2),
            0.0,
            f"mrope_section={sec}, d_head={d}",
        )
        for sec, d in specs
    ]

    def v(kind: str) -> Callable[[Case], np.ndarray]:
        return lambda case: _axes_variant(case.args[0], case.args[1], kind)

    variants = [Variant((key,), v(key)) for key in ("interleaved", "cut_index", "boundary", "reversed_axes")]
    return run_checker(
        "check_mrope_channel_axes",
        "your channel-to-axis table",
        fn,
        cases,
        _MROPE_AXES,
        variants,
        kind="int",
        exact=True,
        shape_doc=" = (d_head,)",
    )
