"""posenc.exercises: each checker accepts a correct implementation and names each known mistake.

Every student function below is written by hand here, in plain numpy (no posenc): the
correct ones independently of the reference, the wrong ones as a student would write them.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import mistake_of

import posenc
import posenc.exercises
import posenc.exercises as ex
from posenc import exercises
from posenc.exercises import ExerciseError

from .test_ch16_rope_nd import CORRECT_CH16, INT_CHECKERS_CH16, MISTAKE_EXAMPLES_CH16
from .test_chA_configs import CHA_CORRECT, CHA_MISTAKES

CHECKERS = (
    "check_sinusoidal_encoding",
    "check_relative_position_matrix",
    "check_learned_backward",
    "check_rope",
    "check_t5_bucket",
    "check_alibi_slopes",
    *CORRECT_CH16,
    *CHA_CORRECT,
)

# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def expect_mistake(check, fn, *words: str) -> ExerciseError:
    """``check(fn)`` must raise an ExerciseError whose message contains every word."""
    with pytest.raises(ExerciseError) as info:
        check(fn)
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in message:\n{message}"
    assert "Hint:" in message
    assert info.value.mistake is not None
    return info.value


def expect_problem(check, fn, problem: str, *words: str) -> ExerciseError:
    """``check(fn)`` must report the result problem ``problem``, without a warning of its own."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ExerciseError) as info:
            check(fn)
    message = str(info.value)
    assert info.value.mistake == problem, message
    for word in words:
        assert word in message, f"{word!r} not in message:\n{message}"
    assert "Traceback" not in message
    return info.value


def test_import_is_light():
    code = (
        "import sys, posenc.exercises; print(sorted(m for m in ('sympy', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_error_is_an_assertion_error():
    assert issubclass(ExerciseError, AssertionError)


def test_not_implemented_propagates():
    def stub(*args, **kwargs):
        raise NotImplementedError("Exercise 3.4 is not yet implemented")

    for name in CHECKERS:
        with pytest.raises(NotImplementedError, match="not yet implemented"):
            getattr(ex, name)(stub)


# --------------------------------------------------------------------------------------
# sinusoidal encoding
# --------------------------------------------------------------------------------------


def sin_table(positions, d_model, base=10000.0, *, layout="interleaved", op="mul", swap=False, expo="pair"):
    p = np.asarray(positions, dtype=np.float64)[:, None]
    if expo == "pair":
        w_sin = w_cos = np.exp(-np.log(base) * np.arange(0, d_model, 2) / d_model)
    elif expo == "no2":
        w_sin = w_cos = base ** (-np.arange(d_model // 2) / d_model)
    else:
        w_sin, w_cos = (
            base ** (-np.arange(0, d_model, 2) / d_model),
            base ** (-np.arange(1, d_model, 2) / d_model),
        )
    a_sin = p / w_sin if op == "div" else p * w_sin
    a_cos = p / w_cos if op == "div" else p * w_cos
    s, c = np.sin(a_sin), np.cos(a_cos)
    if swap:
        s, c = np.cos(a_sin), np.sin(a_cos)
    if layout == "split":
        return np.concatenate([s, c], axis=1)
    out = np.zeros((p.shape[0], d_model))
    out[:, ::2], out[:, 1::2] = s, c
    return out


def sin_float32_angles(positions, d_model, base=10000.0):
    """float32 positions and angles, float64 result."""
    p = np.asarray(positions).astype(np.float32)[:, None]
    w = (base ** (-np.arange(0, d_model, 2) / d_model)).astype(np.float32)
    out = np.zeros((p.shape[0], d_model))
    out[:, ::2], out[:, 1::2] = np.sin(p * w), np.cos(p * w)
    return out


def test_sinusoidal_correct():
    assert ex.check_sinusoidal_encoding(sin_table).startswith("correct on ")


def test_sinusoidal_correct_with_plain_power():
    def power_form(positions, d_model, base=10000.0):
        i = np.arange(d_model // 2)
        angles = np.outer(np.asarray(positions, dtype=float), 1.0 / base ** (2 * i / d_model))
        return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(len(positions), d_model)

    assert "correct on" in ex.check_sinusoidal_encoding(power_form)


@pytest.mark.parametrize(
    "options, words",
    [
        ({"layout": "split", "swap": True}, ["concatenated (split)", "sin and cos swapped"]),
        ({"op": "div", "expo": "no2"}, ["division instead of multiplication", "missing factor 2"]),
        (
            {"layout": "split", "op": "div", "swap": True, "expo": "column"},
            ["concatenated (split)", "division", "sin and cos swapped", "column index"],
        ),
    ],
)
def test_sinusoidal_combined_mistakes(options, words):
    def student(positions, d_model, base=10000.0):
        return sin_table(positions, d_model, base, **options)

    err = expect_mistake(ex.check_sinusoidal_encoding, student, *words)
    assert err.mistake.count(" + ") == len(words) - 1
    assert str(err).count("Hint:") == len(words)


def test_sinusoidal_float32_result_is_the_wrong_dtype():
    def student(positions, d_model, base=10000.0):
        return sin_float32_angles(positions, d_model, base).astype(np.float32)

    expect_problem(ex.check_sinusoidal_encoding, student, "wrong dtype", "float32", "float64")


def test_sinusoidal_float32_of_a_float64_table_is_the_wrong_dtype():
    # right angles, cast at the end: not a float32-angle mistake, the result is too coarse
    def student(positions, d_model, base=10000.0):
        return sin_table(positions, d_model, base).astype(np.float32)

    err = expect_problem(ex.check_sinusoidal_encoding, student, "wrong dtype", "float32")
    assert "angles" not in str(err)


def test_sinusoidal_float32_positions_float64_result():
    def student(positions, d_model, base=10000.0):
        p = np.asarray(positions).astype(np.float32).astype(np.float64)
        return sin_table(p, d_model, base)

    expect_mistake(ex.check_sinusoidal_encoding, student, "float32 angles")


def test_sinusoidal_unknown_mistake_is_reported_generically():
    def student(positions, d_model, base=10000.0):
        out = sin_table(positions, d_model, base)
        out[:, -1] += 0.5
        return out

    with pytest.raises(ExerciseError, match="no known mistake matches") as info:
        ex.check_sinusoidal_encoding(student)
    assert info.value.mistake is None
    assert "largest difference 0.5 " in str(info.value)


def shapes_in(message: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (got, expected) shapes of a wrong-shape message."""
    found = re.search(r"has shape \(([\d, ]*)\), expected \(([\d, ]*)\)", message)
    assert found, message
    return tuple(tuple(int(n) for n in group.replace(" ", "").split(",") if n) for group in found.groups())


def test_sinusoidal_transposed_is_a_wrong_shape():
    def student(positions, d_model, base=10000.0):
        return sin_table(positions, d_model, base).T

    err = expect_problem(ex.check_sinusoidal_encoding, student, "wrong shape", "(len(positions), d_model)")
    got, expected = shapes_in(str(err))
    assert got == expected[::-1] and got != expected


# --------------------------------------------------------------------------------------
# relative position matrix
# --------------------------------------------------------------------------------------


def shift_matrix(d_model, offset, base=10000.0, *, sign=1.0, layout="interleaved", op="mul", expo="pair"):
    i = np.arange(d_model // 2)
    w = base ** (-(2 * i if expo == "pair" else i) / d_model)
    a = offset / w if op == "div" else offset * w
    m = np.zeros((d_model, d_model))
    for j, (c, s) in enumerate(zip(np.cos(a), sign * np.sin(a), strict=True)):
        m[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [[c, s], [-s, c]]
    if layout == "split":
        perm = np.r_[0:d_model:2, 1:d_model:2]
        m = m[np.ix_(perm, perm)]
    return m


def test_relative_matrix_correct():
    assert ex.check_relative_position_matrix(shift_matrix).startswith("correct on ")


def test_relative_matrix_textbook_rotation_is_transposed():
    def student(d_model, offset, base=10000.0):
        blocks = []
        for w in base ** (-np.arange(0, d_model, 2) / d_model):
            c, s = math.cos(offset * w), math.sin(offset * w)
            blocks.append(np.array([[c, -s], [s, c]]))  # rotation of (x, y), applied to (sin, cos)
        out = np.zeros((d_model, d_model))
        for j, b in enumerate(blocks):
            out[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = b
        return out

    expect_mistake(ex.check_relative_position_matrix, student, "transposed")


def test_relative_matrix_fixed_offset_does_not_depend_on_the_offset():
    expect_mistake(
        ex.check_relative_position_matrix,
        lambda d_model, offset, base=10000.0: shift_matrix(d_model, 1, base),
        "does not depend on the offset",
    )


# --------------------------------------------------------------------------------------
# learned backward
# --------------------------------------------------------------------------------------


def backward_correct(grad_output, max_len):
    B, L, d = grad_output.shape
    grad_E = np.zeros((max_len, d))
    for b in range(B):
        grad_E[:L] += grad_output[b]
    return np.array(grad_output, copy=True), grad_E


def backward_first(grad_output, max_len):
    grad_E = np.zeros((max_len, grad_output.shape[2]))
    grad_E[: grad_output.shape[1]] = grad_output[0]
    return grad_output.copy(), grad_E


def backward_loop_overwrites(grad_output, max_len):
    grad_E = np.zeros((max_len, grad_output.shape[2]))
    for b in range(grad_output.shape[0]):
        grad_E[: grad_output.shape[1]] = grad_output[b]
    return grad_output.copy(), grad_E


def backward_mean(grad_output, max_len):
    grad_E = np.zeros((max_len, grad_output.shape[2]))
    grad_E[: grad_output.shape[1]] = grad_output.mean(axis=0)
    return grad_output.copy(), grad_E


def backward_only_used_rows(grad_output, max_len):
    return grad_output.copy(), grad_output.sum(axis=0)


def backward_grad_x_summed(grad_output, max_len):
    _, grad_E = backward_correct(grad_output, max_len)
    return grad_output.sum(axis=0), grad_E


def make_backward_accumulating():
    store = {}

    def student(grad_output, max_len):
        key = (max_len, grad_output.shape[2])
        store.setdefault(key, np.zeros(key))
        store[key][: grad_output.shape[1]] += grad_output.sum(axis=0)
        return grad_output.copy(), store[key].copy()

    return student


def backward_in_place(grad_output, max_len):
    grad_E = np.zeros((max_len, grad_output.shape[2]))
    grad_output[0] = grad_output.sum(axis=0)  # "saves memory"
    grad_E[: grad_output.shape[1]] = grad_output[0]
    return grad_output, grad_E


def test_backward_correct():
    assert ex.check_learned_backward(backward_correct).startswith("correct on ")


def test_backward_first_element_hint_mentions_batch_of_one():
    err = expect_mistake(
        ex.check_learned_backward, backward_first, "gradient of only the first batch element"
    )
    assert "B = 1" in str(err)


def test_backward_wrong_grad_x_is_not_a_known_mistake():
    def student(grad_output, max_len):
        _, grad_E = backward_correct(grad_output, max_len)
        return -grad_output, grad_E

    with pytest.raises(ExerciseError, match="grad_E is right on every input") as info:
        ex.check_learned_backward(student)
    assert info.value.mistake is None
    assert "grad_X: largest difference" in str(info.value)


def test_backward_nan_gradient_is_not_called_accumulation():
    # NaN != NaN: the result of the second call "differs" from the first one
    def student(grad_output, max_len):
        grad_X, grad_E = backward_correct(grad_output, max_len)
        grad_E[0, 0] = np.nan
        return grad_X, grad_E

    err = expect_problem(ex.check_learned_backward, student, "NaN or infinity", "grad_E", "1 NaN")
    assert "accumulated" not in str(err)


def test_backward_random_result_is_not_called_accumulation():
    rng = np.random.default_rng(0)

    def student(grad_output, max_len):
        grad_X, grad_E = backward_correct(grad_output, max_len)
        return grad_X, grad_E + rng.normal(scale=1e-3, size=grad_E.shape)

    expect_problem(ex.check_learned_backward, student, "different results for the same input", "grad_E")


def test_backward_list_pair_is_refused():
    expect_problem(
        ex.check_learned_backward,
        lambda g, max_len: list(backward_correct(g, max_len)),
        "not an array",
        "tuple (grad_X, grad_E)",
        "a list of length 2",
    )


def test_backward_grad_x_problems_name_grad_x():
    def student(grad_output, max_len):
        grad_X, grad_E = backward_correct(grad_output, max_len)
        return grad_X + 0j, grad_E

    expect_problem(ex.check_learned_backward, student, "complex values", "grad_X")


def test_backward_grad_e_with_a_wrong_shape():
    def student(grad_output, max_len):
        grad_X, grad_E = backward_correct(grad_output, max_len)
        return grad_X, grad_E.T

    err = expect_problem(ex.check_learned_backward, student, "wrong shape", "grad_E", "(max_len, d)")
    got, expected = shapes_in(str(err))
    assert got == expected[::-1]


# --------------------------------------------------------------------------------------
# RoPE
# --------------------------------------------------------------------------------------


def rope(
    x, positions, base=10000.0, *, layout="interleaved", sign=1.0, op="mul", expo="pair", dtype=np.float64
):
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    i = np.arange(d // 2)
    theta = (base ** (-(2 * i if expo == "pair" else i) / d)).astype(dtype)
    p = np.asarray(positions).astype(dtype)[:, None]
    ang = p / theta if op == "div" else p * theta
    c, s = np.cos(ang).astype(np.float64), sign * np.sin(ang).astype(np.float64)
    if layout == "interleaved":
        z = (x[..., 0::2] + 1j * x[..., 1::2]) * (c + 1j * s)
        out = np.empty_like(x)
        out[..., 0::2], out[..., 1::2] = z.real, z.imag
        return out
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=-1)


def test_rope_correct_interleaved_and_half():
    assert ex.check_rope(rope).startswith("correct on ")
    assert ex.check_rope(
        lambda x, p, base=10000.0: rope(x, p, base, layout="half"), layout="half"
    ).startswith("correct on ")


def test_rope_layout_confusion_both_ways():
    err = expect_mistake(
        ex.check_rope,
        lambda x, p, base=10000.0: rope(x, p, base, layout="half"),
        "asks for the interleaved layout",
        "as in the half layout",
    )
    assert err.mistake == "half/interleaved layout confusion"
    err = expect_mistake(
        lambda fn: ex.check_rope(fn, layout="half"),
        rope,
        "asks for the half layout",
        "as in the interleaved layout",
        "rotate_half",
    )
    assert err.mistake == "half/interleaved layout confusion"


def test_rope_layout_confusion_and_sign():
    err = expect_mistake(
        ex.check_rope, lambda x, p, base=10000.0: rope(x, p, base, layout="half", sign=-1.0), "(a cos - b sin"
    )
    assert err.mistake == "half/interleaved layout confusion + rotation by -m*theta (sine sign flipped)"


def test_rope_student_writing_into_its_input_does_not_confuse_the_checker():
    def student(x, positions, base=10000.0):
        out = rope(x, positions, base, sign=-1.0)
        positions *= -1.0  # scribbles on its argument after using it
        return out

    expect_mistake(ex.check_rope, student, "rotation by -m*theta")


# --------------------------------------------------------------------------------------
# T5 buckets
# --------------------------------------------------------------------------------------


def t5_exact(relative_position, bidirectional=True, num_buckets=32, max_distance=128, *, sign=1):
    rel = sign * np.asarray(relative_position, dtype=np.int64)
    h = num_buckets // 2 if bidirectional else num_buckets
    m, s = h // 2, h - h // 2
    out = np.empty(rel.shape, dtype=np.int64)
    for idx, r in np.ndenumerate(rel):
        r = int(r)
        offset = h if (bidirectional and r > 0) else 0
        n = abs(r) if bidirectional else max(-r, 0)
        if n < m:
            out[idx] = offset + n
            continue
        t = 0
        while t + 1 < s and max_distance ** (t + 1) * m ** (s - t - 1) <= n**s:
            t += 1
        out[idx] = offset + m + t
    return out


def t5_float(
    relative_position,
    bidirectional=True,
    num_buckets=32,
    max_distance=128,
    *,
    dtype=np.float64,
    rnd=np.floor,
    shift=0,
    clip=True,
    causal_abs=False,
    sign=1,
):
    rel = sign * np.asarray(relative_position, dtype=np.int64)
    h = num_buckets // 2 if bidirectional else num_buckets
    m = h // 2
    offset = np.where(rel > 0, h, 0) if bidirectional else 0
    n = np.abs(rel) if (bidirectional or causal_abs) else np.maximum(-rel, 0)
    nf = np.maximum(n, 1).astype(dtype)
    large = (
        m
        + shift
        + rnd(np.log(nf / dtype(m)) / dtype(math.log(max_distance / m)) * dtype(h - m)).astype(np.int64)
    )
    if clip:
        large = np.minimum(large, h - 1)
    return offset + np.where(n < m, n, large)


def test_t5_correct():
    assert ex.check_t5_bucket(t5_exact).startswith("correct on ")


def test_t5_correct_int32():
    assert ex.check_t5_bucket(lambda r, **kw: t5_exact(r, **kw).astype(np.int32)).startswith("correct on ")


def test_t5_naive_float64_log_at_ties():
    # num_buckets=20, max_distance=160: |r| = 10, 20, 80 are exact ties where float64 lands low
    assert not np.array_equal(t5_float([10, 20, 80], True, 20, 160), t5_exact([10, 20, 80], True, 20, 160))
    expect_mistake(ex.check_t5_bucket, t5_float, "floating-point", "exact tie")


def test_t5_sign_and_float_log():
    err = expect_mistake(ex.check_t5_bucket, lambda r, **kw: t5_float(r, **kw, sign=-1), "query minus key")
    assert (
        err.mistake == "query minus key (sign flipped) + floating-point log at an exact tie (one bucket low)"
    )


# --------------------------------------------------------------------------------------
# ALiBi slopes
# --------------------------------------------------------------------------------------


def slopes_power_of_two(n, start=1):
    first = 2.0 ** (-8.0 / n)
    return [first ** (h) for h in range(start, n + start)]


def slopes_correct(n):
    if math.log2(n).is_integer():
        return np.array(slopes_power_of_two(n))
    closest = 2 ** math.floor(math.log2(n))
    extra = slopes_power_of_two(2 * closest)[0::2][: n - closest]
    return np.array(slopes_power_of_two(closest) + extra)


def slopes_round_up(n):
    c = 2 ** math.ceil(math.log2(n))
    return np.array(slopes_power_of_two(c)[:n])


def slopes_consecutive(n):
    closest = 2 ** math.floor(math.log2(n))
    extra = slopes_power_of_two(2 * closest)[: n - closest]
    return np.array(slopes_power_of_two(closest) + extra)


def slopes_duplicates(n):
    closest = 2 ** math.floor(math.log2(n))
    extra = slopes_power_of_two(2 * closest)[1::2][: n - closest]
    return np.array(slopes_power_of_two(closest) + extra)


def slopes_off_by_one(n):
    if math.log2(n).is_integer():
        return np.array(slopes_power_of_two(n, start=0))
    closest = 2 ** math.floor(math.log2(n))
    extra = slopes_power_of_two(2 * closest, start=0)[0::2][: n - closest]
    return np.array(slopes_power_of_two(closest, start=0) + extra)


def test_alibi_correct():
    assert ex.check_alibi_slopes(slopes_correct).startswith("correct on ")


def test_alibi_geometric_hint():
    err = expect_mistake(
        ex.check_alibi_slopes, lambda n: np.array(slopes_power_of_two(n)), "non-power-of-two head count"
    )
    assert "odd-numbered" in str(err)


def test_alibi_relative_error_is_reported():
    def student(n):
        out = slopes_correct(n)
        out[-1] *= 1.0 + 1e-7
        return out

    with pytest.raises(ExerciseError, match="largest relative difference 1e-07") as info:
        ex.check_alibi_slopes(student)
    assert info.value.mistake is None


# --------------------------------------------------------------------------------------
# Every known mistake, written as a wrong implementation, is named by its checker
# --------------------------------------------------------------------------------------


def _sin(**options):
    return lambda positions, d_model, base=10000.0: sin_table(positions, d_model, base, **options)


def _shift(**options):
    return lambda d_model, offset, base=10000.0: shift_matrix(d_model, offset, base, **options)


def _rope(**options):
    return lambda x, positions, base=10000.0: rope(x, positions, base, **options)


def _t5(**options):
    return lambda r, **kw: t5_float(r, **kw, **options)


# (checker, mistake name) -> (the student's function, or a factory for a stateful one; checker kwargs)
MISTAKE_EXAMPLES = {
    ("check_sinusoidal_encoding", "concatenated (split) instead of interleaved"): _sin(layout="split"),
    ("check_sinusoidal_encoding", "division instead of multiplication"): _sin(op="div"),
    ("check_sinusoidal_encoding", "sin and cos swapped"): _sin(swap=True),
    ("check_sinusoidal_encoding", "missing factor 2 in the exponent 2i/d"): _sin(expo="no2"),
    ("check_sinusoidal_encoding", "column index instead of pair index in the exponent"): _sin(expo="column"),
    ("check_sinusoidal_encoding", "base argument ignored"): (
        lambda positions, d_model, base=10000.0: sin_table(positions, d_model, 10000.0)
    ),
    ("check_sinusoidal_encoding", "float32 angles at large positions"): sin_float32_angles,
    ("check_relative_position_matrix", "M_{-k} (transposed: sine sign flipped)"): _shift(sign=-1.0),
    ("check_relative_position_matrix", "matrix for the split layout"): _shift(layout="split"),
    ("check_relative_position_matrix", "division instead of multiplication"): _shift(op="div"),
    ("check_relative_position_matrix", "missing factor 2 in the exponent 2i/d"): _shift(expo="no2"),
    ("check_relative_position_matrix", "base argument ignored"): (
        lambda d_model, offset, base=10000.0: shift_matrix(d_model, offset, 10000.0)
    ),
    ("check_relative_position_matrix", "matrix does not depend on the offset"): (
        lambda d_model, offset, base=10000.0: np.eye(d_model)
    ),
    ("check_learned_backward", "gradient of only the first batch element"): backward_first,
    ("check_learned_backward", "gradient of only the last batch element"): backward_loop_overwrites,
    ("check_learned_backward", "mean instead of sum over the batch"): backward_mean,
    ("check_learned_backward", "only L rows returned"): backward_only_used_rows,
    ("check_learned_backward", "grad_X summed over the batch"): backward_grad_x_summed,
    ("check_learned_backward", "gradient accumulated across calls"): make_backward_accumulating,
    ("check_learned_backward", "grad_output modified in place"): backward_in_place,
    ("check_rope", "half/interleaved layout confusion"): _rope(layout="half"),
    ("check_rope", "rotation by -m*theta (sine sign flipped)"): _rope(sign=-1.0),
    ("check_rope", "positions argument ignored"): (
        lambda x, positions, base=10000.0: rope(x, np.arange(x.shape[-2]), base)
    ),
    ("check_rope", "division instead of multiplication"): _rope(op="div"),
    ("check_rope", "missing factor 2 in the exponent 2i/d"): _rope(expo="no2"),
    ("check_rope", "base argument ignored"): lambda x, positions, base=10000.0: rope(x, positions, 10000.0),
    ("check_rope", "float32 angles at large positions"): _rope(dtype=np.float32),
    ("check_t5_bucket", "query minus key (sign flipped)"): lambda r, **kw: t5_exact(r, **kw, sign=-1),
    ("check_t5_bucket", "floating-point log at an exact tie (one bucket low)"): t5_float,
    ("check_t5_bucket", "floating-point (float32) log, one bucket off near a boundary"): _t5(
        dtype=np.float32
    ),
    ("check_t5_bucket", "round() instead of floor (off-by-one buckets)"): _t5(rnd=np.round),
    ("check_t5_bucket", "ceil instead of floor (off-by-one buckets)"): _t5(rnd=np.ceil),
    ("check_t5_bucket", "log buckets start one too high (off by one)"): _t5(shift=1),
    ("check_t5_bucket", "no clipping to the last bucket"): _t5(clip=False),
    ("check_t5_bucket", "|r| instead of max(-r, 0) in causal mode"): _t5(causal_abs=True),
    ("check_alibi_slopes", "2^(-8h/n) for a non-power-of-two head count"): (
        lambda n: np.array(slopes_power_of_two(n))
    ),
    ("check_alibi_slopes", "rounded up to a power of two and truncated"): slopes_round_up,
    ("check_alibi_slopes", "right slopes, wrong order (sorted)"): lambda n: np.sort(slopes_correct(n))[::-1],
    ("check_alibi_slopes", "consecutive instead of every other slope of the 2N-head sequence"): (
        slopes_consecutive
    ),
    ("check_alibi_slopes", "even-numbered (duplicate) slopes appended"): slopes_duplicates,
    ("check_alibi_slopes", "off by one: h starts at 0 (first slope 1)"): slopes_off_by_one,
    **MISTAKE_EXAMPLES_CH16,
    **CHA_MISTAKES,
}
STATEFUL = {make_backward_accumulating}


def test_every_known_mistake_has_an_example():
    # the checkers of Part V chapters are tested in tests/exercises/test_<module>.py
    listed = {
        (checker, name)
        for checker, names in ex.KNOWN_MISTAKES.items()
        for name in names
        if checker in CHECKERS
    }
    assert listed == set(MISTAKE_EXAMPLES)


@pytest.mark.parametrize("checker, mistake", sorted(MISTAKE_EXAMPLES))
def test_every_known_mistake_is_named(checker, mistake):
    student = MISTAKE_EXAMPLES[checker, mistake]
    if student in STATEFUL:
        student = student()
    err = expect_mistake(getattr(ex, checker), student, f"known mistake '{mistake}'")
    assert err.mistake == mistake


def test_known_mistakes_table_covers_every_checker():
    checkers = {name for name in ex.__all__ if name.startswith("check_")}
    assert set(ex.KNOWN_MISTAKES) == checkers >= set(CHECKERS)
    for name in checkers - set(CHECKERS):  # a later chapter's checker: tested in its own file
        module = getattr(ex, name).__module__.rsplit(".", 1)[-1]
        assert (Path(__file__).parent / f"test_{module}.py").is_file(), name
    assert all(len(v) >= 4 for v in ex.KNOWN_MISTAKES.values())
    for names in ex.KNOWN_MISTAKES.values():
        assert len(set(names)) == len(names)
        assert not set(names) & set(ex.RESULT_PROBLEMS)
        assert not any(" + " in name for name in names)  # " + " joins a combination


# --------------------------------------------------------------------------------------
# Robustness: a broken result is named precisely, for every checker
# --------------------------------------------------------------------------------------

# checker -> a correct student function
CORRECT = {
    "check_sinusoidal_encoding": sin_table,
    "check_relative_position_matrix": shift_matrix,
    "check_learned_backward": backward_correct,
    "check_rope": rope,
    "check_t5_bucket": t5_exact,
    "check_alibi_slopes": slopes_correct,
    **CORRECT_CH16,
    **CHA_CORRECT,
}


def spoiled(checker, change):
    """The correct function of ``checker`` with ``change`` applied to its (array) result."""
    correct = CORRECT[checker]
    if checker == "check_learned_backward":

        def student(grad_output, max_len):
            grad_X, grad_E = correct(grad_output, max_len)
            return grad_X, change(grad_E)

        return student
    return lambda *args, **kwargs: change(correct(*args, **kwargs))


def with_nan(a):
    a = np.array(a, dtype=np.float64)
    a.flat[a.size // 2] = np.nan
    return a


def with_inf(a):
    a = np.array(a, dtype=np.float64)
    a.flat[0] = -np.inf
    return a


def test_correct_functions_pass_unchanged():
    for checker in CORRECT:
        assert getattr(ex, checker)(spoiled(checker, lambda a: a)).startswith("correct on ")


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_function_that_raises(checker):
    def student(*args, **kwargs):
        raise ZeroDivisionError("float division by zero")

    err = expect_problem(
        getattr(ex, checker),
        student,
        "raised an exception",
        "raised ZeroDivisionError: float division by zero",
    )
    assert "on input" in str(err)
    assert isinstance(err.__cause__, ZeroDivisionError)


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_function_that_raises_on_some_inputs(checker):
    calls = []

    def student(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyError("third")
        return CORRECT[checker](*args, **kwargs)

    expect_problem(getattr(ex, checker), student, "raised an exception", "raised KeyError: 'third'")


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_list(checker):
    err = expect_problem(
        getattr(ex, checker), spoiled(checker, lambda a: np.asarray(a).tolist()), "not an array", "np.asarray"
    )
    found = re.search(
        r"a list of length (\d+) \(shape \(([\d, ]*)\) as an array\); "
        r"expected a numpy array of shape \(([\d, ]*)\)",
        str(err),
    )
    assert found, str(err)
    length, got, expected = found.groups()
    assert got == expected and got.startswith(length)  # the right values, only not an array


@pytest.mark.parametrize("checker", CHECKERS)
def test_none(checker):
    expect_problem(getattr(ex, checker), spoiled(checker, lambda a: None), "not an array", "None", "return")


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_scalar(checker):
    expect_problem(
        getattr(ex, checker), spoiled(checker, lambda a: np.asarray(a).flat[0]), "not an array", "a scalar"
    )


@pytest.mark.parametrize("checker", CHECKERS)
def test_an_extra_axis(checker):
    err = expect_problem(getattr(ex, checker), spoiled(checker, lambda a: a[..., None]), "wrong shape")
    got, expected = shapes_in(str(err))
    assert got == (*expected, 1)


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_missing_row(checker):
    err = expect_problem(getattr(ex, checker), spoiled(checker, lambda a: a[1:]), "wrong shape")
    got, expected = shapes_in(str(err))
    assert got == (expected[0] - 1, *expected[1:])


FLOAT_CHECKERS = [c for c in CHECKERS if c != "check_t5_bucket" and c not in INT_CHECKERS_CH16]


@pytest.mark.parametrize("checker", FLOAT_CHECKERS)
def test_an_integer_array(checker):
    expect_problem(
        getattr(ex, checker),
        spoiled(checker, lambda a: a.astype(np.int64)),
        "wrong dtype",
        "int64",
        "float64",
    )


@pytest.mark.parametrize("checker", FLOAT_CHECKERS)
def test_a_float32_array(checker):
    expect_problem(
        getattr(ex, checker),
        spoiled(checker, lambda a: a.astype(np.float32)),
        "wrong dtype",
        "float32",
        "float64",
    )


def test_t5_float_buckets_are_the_wrong_dtype():
    expect_problem(
        ex.check_t5_bucket,
        spoiled("check_t5_bucket", lambda a: a.astype(np.float64)),
        "wrong dtype",
        "float64",
        "integer",
    )


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_bool_array(checker):
    expect_problem(getattr(ex, checker), spoiled(checker, lambda a: a > 0), "wrong dtype", "bool")


@pytest.mark.parametrize("checker", CHECKERS)
def test_an_object_array(checker):
    expect_problem(
        getattr(ex, checker), spoiled(checker, lambda a: a.astype(object)), "wrong dtype", "object"
    )


@pytest.mark.parametrize("checker", CHECKERS)
def test_nan(checker):
    expect_problem(
        getattr(ex, checker), spoiled(checker, with_nan), "NaN or infinity", "1 NaN and 0 infinite"
    )


@pytest.mark.parametrize("checker", CHECKERS)
def test_infinity(checker):
    err = expect_problem(
        getattr(ex, checker), spoiled(checker, with_inf), "NaN or infinity", "0 NaN and 1 infinite"
    )
    assert re.search(r"at index \(0(, 0)*,?\)", str(err))


@pytest.mark.parametrize("checker", CHECKERS)
def test_complex_with_the_right_real_part(checker):
    expect_problem(
        getattr(ex, checker),
        spoiled(checker, lambda a: a + 0j),
        "complex values",
        "complex128",
        "imaginary part is zero",
    )


@pytest.mark.parametrize("checker", CHECKERS)
def test_complex_with_an_imaginary_part(checker):
    expect_problem(
        getattr(ex, checker),
        spoiled(checker, lambda a: a + 0.25j),
        "complex values",
        "imaginary parts up to 0.25",
    )


# --------------------------------------------------------------------------------------
# The checkers' own arguments
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("value", [None, 3, np.zeros((4, 8)), "my_function"])
def test_a_non_callable_fn_is_refused(checker, value):
    with pytest.raises(TypeError, match=rf"{checker}: the argument fn must be your function \(a callable\)"):
        getattr(ex, checker)(value)


def test_rope_layout_argument():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "check_rope: the argument layout must be 'interleaved' or 'half' "
            "('split' is accepted as a synonym of 'half'), got 'neox'"
        ),
    ):
        ex.check_rope(rope, layout="neox")
    with pytest.raises(TypeError, match="the argument layout"):
        ex.check_rope(rope, layout=np.array(["half", "half"]))


ALL_CHECKERS = [name for name in posenc.exercises.__all__ if name.startswith("check_")]


@pytest.mark.parametrize("checker", ALL_CHECKERS)
@pytest.mark.parametrize(
    "result, problem",
    [
        pytest.param(lambda: np.ma.masked_all((3,)), "masked array", id="masked"),
        pytest.param(lambda: np.broadcast_to(np.float64(0.0), (10**6, 10**6)), "entries", id="huge-float"),
        pytest.param(lambda: np.broadcast_to(np.int64(0), (10**6, 10**6)), "entries", id="huge-int"),
    ],
)
def test_checkers_name_a_masked_or_huge_result(checker, result, problem):
    with pytest.raises(posenc.exercises.ExerciseError, match=problem):
        if checker == "check_learned_backward":  # a student's backward returns two gradients
            getattr(posenc.exercises, checker)(lambda *args, **kwargs: (result(), result()))
        else:
            getattr(posenc.exercises, checker)(lambda *args, **kwargs: result())


def test_a_backward_that_returns_its_own_accumulator_is_named():
    store: dict = {}

    def backward(g, max_len):
        acc = store.setdefault((g.shape[2], max_len), np.zeros((max_len, g.shape[2])))
        acc[: g.shape[1]] += g.sum(axis=0)
        return g.copy(), acc  # the accumulator itself, no copy

    assert mistake_of(exercises.check_learned_backward, backward) == "gradient accumulated across calls"
