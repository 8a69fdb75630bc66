"""Chapter 19's checkers: the right answer passes and every known mistake is named.

The student functions are written by hand here in plain numpy (no posenc): the correct ones
independently of the reference, the wrong ones as a student would write them.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import expect_mistake

import posenc.exercises as ex
from posenc.exercises import ExerciseError

# ---------------------------------------------------------------- layout rows


def rows_correct(n_heads, d_head):
    # transformers' conversion script: view each head as (d/2, 2), swap the last two axes
    return np.arange(n_heads * d_head).reshape(n_heads, d_head // 2, 2).transpose(0, 2, 1).reshape(-1)


def rows_loop(n_heads, d_head):
    rows = []
    for h in range(n_heads):
        rows += [h * d_head + 2 * i for i in range(d_head // 2)]
        rows += [h * d_head + 2 * i + 1 for i in range(d_head // 2)]
    return np.array(rows, dtype=np.int64)


def rows_global(n_heads, d_head):
    n = n_heads * d_head
    return np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)])


def rows_inverse(n_heads, d_head):
    # the reshape the other way round: (2, d/2) transposed, i.e. half -> interleaved
    return np.arange(n_heads * d_head).reshape(n_heads, 2, d_head // 2).transpose(0, 2, 1).reshape(-1)


def rows_identity(n_heads, d_head):
    return np.arange(n_heads * d_head)


def rows_first_head(n_heads, d_head):
    rows = np.arange(n_heads * d_head)
    rows[:d_head] = np.concatenate([np.arange(0, d_head, 2), np.arange(1, d_head, 2)])
    return rows


# ---------------------------------------------------------------- partial rotary


def partial_correct(
    x, positions, rotary_dim, base=10000.0, *, width=None, where="first", layout="half", keep=True
):
    x = np.asarray(x, dtype=np.float64)
    d, r = x.shape[-1], rotary_dim
    w = r if width is None else d
    theta = base ** (-np.arange(0, r, 2) / w)
    ang = np.asarray(positions, dtype=np.float64)[:, None] * theta
    block = slice(0, r) if where == "first" else slice(d - r, d)
    p = x[..., block]
    if layout == "half":
        a, b = p[..., : r // 2], p[..., r // 2 :]
    else:
        a, b = p[..., 0::2], p[..., 1::2]
    first, second = a * np.cos(ang) - b * np.sin(ang), a * np.sin(ang) + b * np.cos(ang)
    turned = (
        np.concatenate([first, second], axis=-1)
        if layout == "half"
        else np.stack([first, second], -1).reshape(p.shape)
    )
    if not keep:
        return turned
    out = x.copy()
    out[..., block] = turned
    return out


def partial_complex(x, positions, rotary_dim, base=10000.0):
    # the same with complex numbers, written differently
    x = np.asarray(x, dtype=np.float64)
    r = rotary_dim
    z = x[..., : r // 2] + 1j * x[..., r // 2 : r]
    z = z * np.exp(1j * np.outer(positions, base ** (-2 * np.arange(r // 2) / r)))
    return np.concatenate([z.real, z.imag, x[..., r:]], axis=-1)


def partial_full_freqs(x, positions, rotary_dim, base=10000.0):
    return partial_correct(x, positions, rotary_dim, base, width="d")


def partial_last(x, positions, rotary_dim, base=10000.0):
    return partial_correct(x, positions, rotary_dim, base, where="last")


def partial_dropped(x, positions, rotary_dim, base=10000.0):
    return partial_correct(x, positions, rotary_dim, base, keep=False)


def partial_interleaved(x, positions, rotary_dim, base=10000.0):
    return partial_correct(x, positions, rotary_dim, base, layout="interleaved")


def partial_whole(x, positions, rotary_dim, base=10000.0):
    return partial_correct(x, positions, np.asarray(x).shape[-1], base)


def test_correct_answers_pass():
    assert ex.check_layout_rows(rows_correct).startswith("correct on ")
    assert ex.check_layout_rows(rows_loop).startswith("correct on ")
    assert ex.check_partial_rope_half(partial_correct).startswith("correct on ")
    assert ex.check_partial_rope_half(partial_complex).startswith("correct on ")


EXAMPLES = {
    ("check_layout_rows", "one permutation of the whole axis instead of one per head"): rows_global,
    ("check_layout_rows", "inverse permutation (half to interleaved)"): rows_inverse,
    ("check_layout_rows", "no permutation"): rows_identity,
    ("check_layout_rows", "only the first head permuted"): rows_first_head,
    ("check_partial_rope_half", "the full head's frequencies"): partial_full_freqs,
    ("check_partial_rope_half", "the last channels rotated instead of the first"): partial_last,
    ("check_partial_rope_half", "pass-through channels dropped"): partial_dropped,
    ("check_partial_rope_half", "interleaved pairing (2i, 2i+1)"): partial_interleaved,
    ("check_partial_rope_half", "whole head rotated"): partial_whole,
}


def test_every_known_mistake_has_an_example():
    listed = {
        (checker, name)
        for checker in ("check_layout_rows", "check_partial_rope_half")
        for name in ex.KNOWN_MISTAKES[checker]
    }
    assert listed == set(EXAMPLES)


@pytest.mark.parametrize("checker, mistake", sorted(EXAMPLES))
def test_every_known_mistake_is_named(checker, mistake):
    error = expect_mistake(getattr(ex, checker), EXAMPLES[checker, mistake], f"known mistake '{mistake}'")
    assert error.mistake == mistake


def test_unknown_errors_and_bad_results():
    def off(n_heads, d_head):
        rows = rows_correct(n_heads, d_head)
        rows[[0, 1]] = rows[[1, 0]]
        return rows

    with pytest.raises(ExerciseError) as info:
        ex.check_layout_rows(off)
    assert info.value.mistake is None
    with pytest.raises(ExerciseError) as info:
        ex.check_layout_rows(lambda h, d: rows_correct(h, d).astype(np.float64))
    assert info.value.mistake == "wrong dtype"
    with pytest.raises(ExerciseError) as info:
        ex.check_partial_rope_half(lambda *a, **k: partial_correct(*a, **k).astype(np.float32))
    assert info.value.mistake == "wrong dtype"
    with pytest.raises(ExerciseError) as info:
        ex.check_partial_rope_half(lambda *a, **k: partial_correct(*a, **k) * 1.01)
    assert info.value.mistake is None


@pytest.mark.parametrize("checker", ["check_layout_rows", "check_partial_rope_half"])
def test_a_non_callable_is_refused(checker):
    with pytest.raises(TypeError, match=rf"{checker}: the argument fn must be your function"):
        getattr(ex, checker)(np.zeros(3))
