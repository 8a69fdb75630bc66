"""Chapter 16's checkers: the right answer passes, each known mistake is named.

The student functions are written by hand here in plain numpy (no posenc).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import mistake_of

import posenc.exercises as ex
from posenc import exercises
from posenc.exercises import ExerciseError
from posenc.exercises.ch16_rope_nd import _axes_variant

# --------------------------------------------------------------------------------------
# axial frequencies
# --------------------------------------------------------------------------------------


def axial(d_head, n_axes=2, base=10000.0, *, mistake=None):
    half = d_head // 2
    b = half // n_axes
    width = d_head // n_axes
    out = np.zeros((n_axes, half))
    for a in range(n_axes):
        for i in range(b):
            if mistake == "full_head":
                w = base ** (-2 * (a * b + i) / d_head)
            elif mistake == "full_head_first":
                w = base ** (-2 * i / d_head)
            elif mistake == "missing_2":
                w = base ** (-i / width)
            elif mistake == "base_ignored":
                w = 10000.0 ** (-2 * i / width)
            else:
                w = base ** (-2 * i / width)
            if mistake == "alternate":
                out[(i * n_axes + a) % n_axes, i * n_axes + a] = w
            else:
                out[a, a * b + i] = w
    return out


def test_axial_correct():
    assert ex.check_axial_frequencies(axial).startswith("correct on ")


@pytest.mark.parametrize(
    ("mistake", "words"),
    [
        ("full_head", "frequencies of a d_head-dimensional RoPE"),
        ("full_head_first", "first frequencies of a d_head-dimensional RoPE"),
        ("alternate", "alternate pair by pair"),
        ("missing_2", "missing factor 2"),
        ("base_ignored", "base argument ignored"),
    ],
)
def test_axial_mistakes(mistake, words):
    with pytest.raises(ExerciseError) as info:
        ex.check_axial_frequencies(lambda d, n=2, base=10000.0: axial(d, n, base, mistake=mistake))
    assert words in str(info.value) and "Hint:" in str(info.value)
    assert info.value.mistake in ex.KNOWN_MISTAKES["check_axial_frequencies"]


def test_axial_transposed_is_a_wrong_shape():
    with pytest.raises(ExerciseError) as info:
        ex.check_axial_frequencies(lambda d, n=2, base=10000.0: axial(d, n, base).T.copy())
    assert info.value.mistake == "wrong shape"


def test_axial_unknown_error_is_generic():
    with pytest.raises(ExerciseError) as info:
        ex.check_axial_frequencies(lambda d, n=2, base=10000.0: 2 * axial(d, n, base))
    assert info.value.mistake is None and "no known mistake" in str(info.value)


# --------------------------------------------------------------------------------------
# M-RoPE position ids
# --------------------------------------------------------------------------------------


def mrope_ids(segments, *, mistake=None):
    t_ids, h_ids, w_ids = [], [], []
    nxt, count = 0, 0
    for seg in segments:
        s = count if mistake == "count" else nxt
        if isinstance(seg, int):
            new = [(s + k,) * 3 for k in range(seg)]
        else:
            t, h, w = seg
            grid = np.indices((t, h, w)).reshape(3, -1).T
            if mistake == "hw_swap":
                grid = grid[:, [0, 2, 1]]
            off = 0 if mistake == "grid_from_zero" else s
            new = [tuple(int(v) + off for v in row) for row in grid]
        for a, b_, c in new:
            t_ids.append(a)
            h_ids.append(b_)
            w_ids.append(c)
        count += len(new)
        if new:
            nxt = max(max(x) for x in new) + (0 if mistake == "no_plus_one" else 1)
    return np.array([t_ids, h_ids, w_ids], dtype=np.int64)


def test_mrope_ids_example_of_the_docstring():
    ids = mrope_ids([2, (1, 2, 3), 2])
    assert ids.tolist() == [
        [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
        [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
        [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
    ]


def test_mrope_ids_correct():
    assert ex.check_mrope_positions(mrope_ids).startswith("correct on ")
    assert ex.check_mrope_positions(lambda s: mrope_ids(s).astype(np.int32)).startswith("correct on ")


@pytest.mark.parametrize(
    ("mistake", "words"),
    [
        ("count", "token count"),
        ("no_plus_one", "largest id instead of one past it"),
        ("grid_from_zero", "not offset by the start"),
        ("hw_swap", "height and width ids swapped"),
    ],
)
def test_mrope_ids_mistakes(mistake, words):
    with pytest.raises(ExerciseError) as info:
        ex.check_mrope_positions(lambda s: mrope_ids(s, mistake=mistake))
    assert words in str(info.value) and "Hint:" in str(info.value)
    assert info.value.mistake in ex.KNOWN_MISTAKES["check_mrope_positions"]


def test_mrope_ids_float_result_is_the_wrong_dtype():
    with pytest.raises(ExerciseError) as info:
        ex.check_mrope_positions(lambda s: mrope_ids(s).astype(np.float64))
    assert info.value.mistake == "wrong dtype"


# --------------------------------------------------------------------------------------
# M-RoPE channel -> axis
# --------------------------------------------------------------------------------------


def channel_axes(sections, d_head, *, mistake=None):
    half = d_head // 2
    bounds = np.cumsum(sections)
    out = np.empty(d_head, dtype=np.int64)
    for c in range(d_head):
        j = c // 2 if mistake == "interleaved" else c % half
        axis = int(np.searchsorted(bounds, j, side="left" if mistake == "boundary" else "right"))
        if mistake == "cut_index" and c >= half:
            axis += 3
        if mistake == "reversed_axes":
            axis = 2 - axis
        out[c] = axis
    return out


def test_channel_axes_qwen2_vl():
    axes = channel_axes([16, 24, 24], 128)
    assert (
        axes[:16].tolist() == [0] * 16
        and axes[16:40].tolist() == [1] * 24
        and axes[40:64].tolist() == [2] * 24
    )
    assert np.array_equal(axes[64:], axes[:64])


def test_channel_axes_correct():
    assert ex.check_mrope_channel_axes(channel_axes).startswith("correct on ")


@pytest.mark.parametrize(
    ("mistake", "words"),
    [
        ("interleaved", "interleaved layout's pairing"),
        ("cut_index", "instead of i mod 3"),
        ("boundary", "off by one at the section boundaries"),
        ("reversed_axes", "width, height, temporal"),
    ],
)
def test_channel_axes_mistakes(mistake, words):
    with pytest.raises(ExerciseError) as info:
        ex.check_mrope_channel_axes(lambda s, d: channel_axes(s, d, mistake=mistake))
    assert words in str(info.value) and "Hint:" in str(info.value)
    assert info.value.mistake in ex.KNOWN_MISTAKES["check_mrope_channel_axes"]


def test_channel_axes_half_only_is_a_wrong_shape():
    with pytest.raises(ExerciseError) as info:
        ex.check_mrope_channel_axes(lambda s, d: channel_axes(s, d)[: d // 2])
    assert info.value.mistake == "wrong shape"


@pytest.mark.parametrize(
    "name", ["check_axial_frequencies", "check_mrope_positions", "check_mrope_channel_axes"]
)
def test_not_implemented_propagates(name):
    def stub(*args, **kwargs):
        raise NotImplementedError("not yet implemented")

    with pytest.raises(NotImplementedError):
        getattr(ex, name)(stub)


def test_not_a_function_is_a_type_error():
    with pytest.raises(TypeError, match="fn must be your function"):
        ex.check_mrope_positions([1, 2, 3])


# --------------------------------------------------------------------------------------
# for the shared checker suite of tests/exercises/test_checkers.py (robustness, every mistake named)
# --------------------------------------------------------------------------------------

CORRECT_CH16 = {
    "check_axial_frequencies": axial,
    "check_mrope_positions": mrope_ids,
    "check_mrope_channel_axes": channel_axes,
}
INT_CHECKERS_CH16 = ("check_mrope_positions", "check_mrope_channel_axes")
MISTAKE_EXAMPLES_CH16 = {
    ("check_axial_frequencies", "frequencies of a d_head-dimensional RoPE"): (
        lambda d, n=2, base=10000.0: axial(d, n, base, mistake="full_head")
    ),
    ("check_axial_frequencies", "first frequencies of a d_head-dimensional RoPE in every block"): (
        lambda d, n=2, base=10000.0: axial(d, n, base, mistake="full_head_first")
    ),
    ("check_axial_frequencies", "axes alternate pair by pair instead of consecutive blocks"): (
        lambda d, n=2, base=10000.0: axial(d, n, base, mistake="alternate")
    ),
    ("check_axial_frequencies", "missing factor 2 in the exponent 2i/d"): (
        lambda d, n=2, base=10000.0: axial(d, n, base, mistake="missing_2")
    ),
    ("check_axial_frequencies", "base argument ignored"): (
        lambda d, n=2, base=10000.0: axial(d, n, base, mistake="base_ignored")
    ),
    ("check_mrope_positions", "ids continue from the token count"): lambda s: mrope_ids(s, mistake="count"),
    ("check_mrope_positions", "next segment starts at the largest id instead of one past it"): (
        lambda s: mrope_ids(s, mistake="no_plus_one")
    ),
    ("check_mrope_positions", "grid ids not offset by the start"): lambda s: mrope_ids(
        s, mistake="grid_from_zero"
    ),
    ("check_mrope_positions", "height and width ids swapped"): lambda s: mrope_ids(s, mistake="hw_swap"),
    ("check_mrope_channel_axes", "sections doubled and cut once (the interleaved layout's pairing)"): (
        lambda s, d: channel_axes(s, d, mistake="interleaved")
    ),
    ("check_mrope_channel_axes", "cut i of mrope_section*2 taken from axis i instead of i mod 3"): (
        lambda s, d: channel_axes(s, d, mistake="cut_index")
    ),
    ("check_mrope_channel_axes", "off by one at the section boundaries"): (
        lambda s, d: channel_axes(s, d, mistake="boundary")
    ),
    ("check_mrope_channel_axes", "sections in the order width, height, temporal"): (
        lambda s, d: channel_axes(s, d, mistake="reversed_axes")
    ),
}


def test_a_function_that_reverses_its_section_list_is_still_matched():
    def fn(section, d_head):
        result = _axes_variant(list(section), d_head, "reversed_axes")
        section.reverse()  # writes to the caller's list
        return result

    assert (
        mistake_of(exercises.check_mrope_channel_axes, fn) == "sections in the order width, height, temporal"
    )
