"""posenc.exercises: each checker accepts a correct implementation and names each known mistake.

Every student function below is written by hand here, in plain numpy (no posenc): the
correct ones independently of the reference, the wrong ones as a student would write them.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

import posenc.exercises as ex
from posenc.exercises import ExerciseError

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

    for check in (
        ex.check_sinusoidal_encoding,
        ex.check_relative_position_matrix,
        ex.check_learned_backward,
        ex.check_rope,
        ex.check_t5_bucket,
        ex.check_alibi_slopes,
    ):
        with pytest.raises(NotImplementedError, match="not yet implemented"):
            check(stub)


def test_other_exceptions_are_reported_with_the_input():
    def broken(positions, d_model, base=10000.0):
        raise KeyError("oops")

    with pytest.raises(ExerciseError, match="raised KeyError") as info:
        ex.check_sinusoidal_encoding(broken)
    assert "d_model=" in str(info.value)


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
        ({"layout": "split"}, ["concatenated (split) instead of interleaved"]),
        ({"op": "div"}, ["division instead of multiplication"]),
        ({"swap": True}, ["sin and cos swapped"]),
        ({"expo": "no2"}, ["missing factor 2"]),
        ({"expo": "column"}, ["column index instead of pair index"]),
        ({"layout": "split", "swap": True}, ["concatenated (split)", "sin and cos swapped"]),
        ({"op": "div", "expo": "no2"}, ["division instead of multiplication", "missing factor 2"]),
    ],
)
def test_sinusoidal_mistakes(options, words):
    def student(positions, d_model, base=10000.0):
        return sin_table(positions, d_model, base, **options)

    expect_mistake(ex.check_sinusoidal_encoding, student, *words)


def test_sinusoidal_float32_positions():
    def student(positions, d_model, base=10000.0):
        p = np.asarray(positions, dtype=np.float32)[:, None]
        w = (base ** (-np.arange(0, d_model, 2) / d_model)).astype(np.float32)
        out = np.zeros((p.shape[0], d_model), dtype=np.float32)
        out[:, ::2], out[:, 1::2] = np.sin(p * w), np.cos(p * w)
        return out

    expect_mistake(ex.check_sinusoidal_encoding, student, "float32 angles at large positions")


def test_sinusoidal_float32_positions_float64_result():
    def student(positions, d_model, base=10000.0):
        p = np.asarray(positions).astype(np.float32).astype(np.float64)
        return sin_table(p, d_model, base)

    expect_mistake(ex.check_sinusoidal_encoding, student, "float32 angles")


def test_sinusoidal_base_ignored():
    def student(positions, d_model, base=10000.0):
        return sin_table(positions, d_model, 10000.0)

    expect_mistake(ex.check_sinusoidal_encoding, student, "base argument ignored")


def test_sinusoidal_unknown_mistake_is_reported_generically():
    def student(positions, d_model, base=10000.0):
        out = sin_table(positions, d_model, base)
        out[:, -1] += 0.5
        return out

    with pytest.raises(ExerciseError, match="no known mistake matches") as info:
        ex.check_sinusoidal_encoding(student)
    assert info.value.mistake is None
    assert "largest difference" in str(info.value)


def test_sinusoidal_wrong_shape():
    def student(positions, d_model, base=10000.0):
        return sin_table(positions, d_model, base).T

    with pytest.raises(ExerciseError, match="shape"):
        ex.check_sinusoidal_encoding(student)


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


@pytest.mark.parametrize(
    "options, word",
    [
        ({"sign": -1.0}, "M_{-k} (transposed"),
        ({"layout": "split"}, "matrix for the split layout"),
        ({"op": "div"}, "division instead of multiplication"),
        ({"expo": "no2"}, "missing factor 2"),
    ],
)
def test_relative_matrix_mistakes(options, word):
    def student(d_model, offset, base=10000.0):
        return shift_matrix(d_model, offset, base, **options)

    expect_mistake(ex.check_relative_position_matrix, student, word)


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


# --------------------------------------------------------------------------------------
# learned backward
# --------------------------------------------------------------------------------------


def backward_correct(grad_output, max_len):
    B, L, d = grad_output.shape
    grad_E = np.zeros((max_len, d))
    for b in range(B):
        grad_E[:L] += grad_output[b]
    return np.array(grad_output, copy=True), grad_E


def test_backward_correct():
    assert ex.check_learned_backward(backward_correct).startswith("correct on ")


def test_backward_first_element():
    def student(grad_output, max_len):
        grad_E = np.zeros((max_len, grad_output.shape[2]))
        grad_E[: grad_output.shape[1]] = grad_output[0]
        return grad_output.copy(), grad_E

    err = expect_mistake(ex.check_learned_backward, student, "gradient of only the first batch element")
    assert "B = 1" in str(err)


def test_backward_loop_overwrites():
    def student(grad_output, max_len):
        grad_E = np.zeros((max_len, grad_output.shape[2]))
        for b in range(grad_output.shape[0]):
            grad_E[: grad_output.shape[1]] = grad_output[b]
        return grad_output.copy(), grad_E

    expect_mistake(ex.check_learned_backward, student, "last batch element")


def test_backward_mean():
    def student(grad_output, max_len):
        grad_E = np.zeros((max_len, grad_output.shape[2]))
        grad_E[: grad_output.shape[1]] = grad_output.mean(axis=0)
        return grad_output.copy(), grad_E

    expect_mistake(ex.check_learned_backward, student, "mean instead of sum")


def test_backward_only_used_rows():
    def student(grad_output, max_len):
        return grad_output.copy(), grad_output.sum(axis=0)

    expect_mistake(ex.check_learned_backward, student, "only L rows returned")


def test_backward_grad_x_summed():
    def student(grad_output, max_len):
        _, grad_E = backward_correct(grad_output, max_len)
        return grad_output.sum(axis=0), grad_E

    expect_mistake(ex.check_learned_backward, student, "grad_X summed over the batch")


def test_backward_accumulates():
    store = {}

    def student(grad_output, max_len):
        key = (max_len, grad_output.shape[2])
        store.setdefault(key, np.zeros(key))
        store[key][: grad_output.shape[1]] += grad_output.sum(axis=0)
        return grad_output.copy(), store[key].copy()

    expect_mistake(ex.check_learned_backward, student, "gradient accumulated across calls")


def test_backward_in_place():
    def student(grad_output, max_len):
        grad_E = np.zeros((max_len, grad_output.shape[2]))
        grad_output[0] = grad_output.sum(axis=0)  # "saves memory"
        grad_E[: grad_output.shape[1]] = grad_output[0]
        return grad_output, grad_E

    expect_mistake(ex.check_learned_backward, student, "grad_output modified in place")


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
    expect_mistake(ex.check_rope, lambda x, p, base=10000.0: rope(x, p, base, layout="half"), "half layout")
    err = expect_mistake(
        lambda fn: ex.check_rope(fn, layout="half"), rope, "interleaved layout instead of half", "rotate_half"
    )
    assert "layout confusion" in str(err)


@pytest.mark.parametrize(
    "options, word",
    [
        ({"sign": -1.0}, "rotation by -m*theta"),
        ({"op": "div"}, "division instead of multiplication"),
        ({"expo": "no2"}, "missing factor 2"),
        ({"dtype": np.float32}, "float32 angles at large positions"),
    ],
)
def test_rope_mistakes(options, word):
    expect_mistake(ex.check_rope, lambda x, p, base=10000.0: rope(x, p, base, **options), word)


def test_rope_positions_ignored():
    def student(x, positions, base=10000.0):
        return rope(x, np.arange(x.shape[-2]), base)

    expect_mistake(ex.check_rope, student, "positions argument ignored")


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
):
    rel = np.asarray(relative_position, dtype=np.int64)
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


def test_t5_sign_flipped():
    expect_mistake(ex.check_t5_bucket, lambda r, **kw: t5_exact(r, **kw, sign=-1), "query minus key")


def test_t5_naive_float64_log_at_ties():
    # num_buckets=20, max_distance=160: |r| = 10, 20, 80 are exact ties where float64 lands low
    assert not np.array_equal(t5_float([10, 20, 80], True, 20, 160), t5_exact([10, 20, 80], True, 20, 160))
    expect_mistake(ex.check_t5_bucket, t5_float, "floating-point", "exact tie")


def test_t5_float32_like_hugging_face():
    expect_mistake(ex.check_t5_bucket, lambda r, **kw: t5_float(r, **kw, dtype=np.float32), "floating-point")


@pytest.mark.parametrize(
    "options, word",
    [
        ({"rnd": np.round}, "round() instead of floor"),
        ({"rnd": np.ceil}, "ceil instead of floor"),
        ({"shift": 1}, "log buckets start one too high"),
        ({"clip": False}, "no clipping to the last bucket"),
        ({"causal_abs": True}, "|r| instead of max(-r, 0) in causal mode"),
    ],
)
def test_t5_off_by_one_mistakes(options, word):
    expect_mistake(ex.check_t5_bucket, lambda r, **kw: t5_float(r, **kw, **options), word)


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


def test_alibi_correct():
    assert ex.check_alibi_slopes(slopes_correct).startswith("correct on ")


def test_alibi_geometric_for_every_n():
    err = expect_mistake(
        ex.check_alibi_slopes, lambda n: np.array(slopes_power_of_two(n)), "non-power-of-two head count"
    )
    assert "odd-numbered" in str(err)


def test_alibi_round_up():
    def student(n):
        c = 2 ** math.ceil(math.log2(n))
        return np.array(slopes_power_of_two(c)[:n])

    expect_mistake(ex.check_alibi_slopes, student, "rounded up to a power of two")


def test_alibi_sorted():
    expect_mistake(ex.check_alibi_slopes, lambda n: np.sort(slopes_correct(n))[::-1], "wrong order")


def test_alibi_consecutive():
    def student(n):
        closest = 2 ** math.floor(math.log2(n))
        extra = slopes_power_of_two(2 * closest)[: n - closest]
        return np.array(slopes_power_of_two(closest) + extra)

    expect_mistake(ex.check_alibi_slopes, student, "consecutive instead of every other")


def test_alibi_duplicates():
    def student(n):
        closest = 2 ** math.floor(math.log2(n))
        extra = slopes_power_of_two(2 * closest)[1::2][: n - closest]
        return np.array(slopes_power_of_two(closest) + extra)

    expect_mistake(ex.check_alibi_slopes, student, "duplicate")


def test_alibi_off_by_one():
    def student(n):
        if math.log2(n).is_integer():
            return np.array(slopes_power_of_two(n, start=0))
        closest = 2 ** math.floor(math.log2(n))
        extra = slopes_power_of_two(2 * closest, start=0)[0::2][: n - closest]
        return np.array(slopes_power_of_two(closest, start=0) + extra)

    expect_mistake(ex.check_alibi_slopes, student, "off by one")


def test_known_mistakes_table_covers_every_checker():
    checkers = {name for name in ex.__all__ if name.startswith("check_")}
    assert set(ex.KNOWN_MISTAKES) == checkers
    assert all(len(v) >= 4 for v in ex.KNOWN_MISTAKES.values())
