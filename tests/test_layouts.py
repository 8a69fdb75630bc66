"""The two layouts of a pair and the permutation between them (posenc.layouts).

``"interleaved"`` puts pair ``i`` at coordinates ``(2i, 2i+1)``, ``"half"`` at
``(i, i + d/2)``; ``"split"`` is accepted everywhere as a synonym of ``"half"``.
``layout_permutation(d)`` is the index array with ``x_half = x_interleaved[..., perm]``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import posenc
from posenc import apply_rope, layout_permutation
from posenc.exercises import check_rope

even_d = st.integers(1, 48).map(lambda h: 2 * h)


# ---------------------------------------------------------------------------------------
# the permutation
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "d,expected",
    [(2, [0, 1]), (4, [0, 2, 1, 3]), (6, [0, 2, 4, 1, 3, 5]), (8, [0, 2, 4, 6, 1, 3, 5, 7])],
)
def test_permutation_hand_derived(d, expected):
    assert layout_permutation(d).tolist() == expected


@pytest.mark.parametrize("d", [2, 10, 64, 130, 2**16])
def test_permutation_from_its_definition(d):
    # Pair i sits at (2i, 2i+1) interleaved and at (i, i + d/2) half: perm[i] = 2i and
    # perm[i + d/2] = 2i + 1, written as a loop over the pairs.
    expected = [0] * d
    for i in range(d // 2):
        expected[i] = 2 * i
        expected[i + d // 2] = 2 * i + 1
    perm = layout_permutation(d)
    assert perm.dtype.kind == "i"
    assert perm.tolist() == expected
    assert sorted(perm.tolist()) == list(range(d))


@pytest.mark.parametrize(
    "bad,exc,message",
    [
        (5, ValueError, "d must be even"),
        (0, ValueError, "d"),
        (-4, ValueError, "d"),
        (2**17, ValueError, "d"),
        (4.0, TypeError, "d"),
        (True, TypeError, "d"),
        ("8", TypeError, "d"),
        (None, TypeError, "d"),
    ],
)
def test_permutation_refuses_bad_d(bad, exc, message):
    with pytest.raises(exc, match=message):
        layout_permutation(bad)


@given(positions=st.lists(st.floats(-1e5, 1e5), min_size=1, max_size=5), d_model=even_d)
def test_sinusoidal_layouts_are_a_column_permutation(positions, d_model):
    inter = posenc.sinusoidal_encoding(np.array(positions), d_model, layout="interleaved")
    half = posenc.sinusoidal_encoding(np.array(positions), d_model, layout="half")
    perm = layout_permutation(d_model)
    np.testing.assert_array_equal(half, inter[:, perm])
    np.testing.assert_array_equal(inter, half[:, np.argsort(perm)])
    # Half layout: first half sines, second half cosines, of the same frequencies.
    h = d_model // 2
    np.testing.assert_array_equal(half[:, :h], inter[:, 0::2])
    np.testing.assert_array_equal(half[:, h:], inter[:, 1::2])


@given(
    d=st.sampled_from([2, 4, 8, 16, 64]),
    seed=st.integers(0, 2**32 - 1),
    offset=st.integers(-(10**6), 10**6),
)
def test_rope_layout_equivalence_through_permutation(d, seed, offset):
    rng = np.random.default_rng(seed)
    L, d_model = 5, 6
    perm = layout_permutation(d)
    x = rng.standard_normal((L, d))
    pos = np.arange(L) + offset
    np.testing.assert_allclose(
        apply_rope(x[:, perm], pos, layout="half"), apply_rope(x, pos)[:, perm], rtol=0, atol=0
    )
    # weights: permuting the columns of W_q and W_k leaves every score unchanged
    h = rng.standard_normal((L, d_model))
    wq, wk = rng.standard_normal((2, d_model, d))
    s_inter = apply_rope(h @ wq, pos) @ apply_rope(h @ wk, pos).T
    s_half = (
        apply_rope(h @ wq[:, perm], pos, layout="half") @ apply_rope(h @ wk[:, perm], pos, layout="half").T
    )
    np.testing.assert_allclose(s_half, s_inter, rtol=1e-12, atol=1e-12 * np.abs(s_inter).max())


# ---------------------------------------------------------------------------------------
# one vocabulary: "split" is "half" for every function that takes a layout
# ---------------------------------------------------------------------------------------

_RNG = np.random.default_rng(20261206)
_X = _RNG.standard_normal((2, 3, 8))
_POS = np.array([0.0, 5.0, -11.5])


def _fitted(layout: str) -> np.ndarray:
    pe = posenc.sinusoidal_encoding(12, 8, base=100.0, layout=layout)
    return posenc.analysis.fit_shift_matrix(pe, 2, structure="block", layout=layout)


def _angles(layout: str) -> np.ndarray:
    # the same matrix for both layouts, so only the pairing read by ``layout`` differs
    return posenc.analysis.shift_matrix_angles(posenc.relative_position_matrix(8, 3.0), layout=layout)


LAYOUT_TAKERS = {
    "sinusoidal_encoding": lambda lay: posenc.sinusoidal_encoding(_POS, 8, layout=lay),
    "iter_sinusoidal_blocks": lambda lay: np.concatenate(
        [rows for _, rows in posenc.iter_sinusoidal_blocks(7, 6, block=3, layout=lay)]
    ),
    "relative_position_matrix": lambda lay: posenc.relative_position_matrix(8, 3.0, layout=lay),
    "SinusoidalPositionalEncoding": lambda lay: posenc.SinusoidalPositionalEncoding(4, 8, layout=lay).forward(
        _X[:, :2]
    ),
    "apply_rope": lambda lay: apply_rope(_X, _POS, layout=lay),
    "apply_rope rotary_dim": lambda lay: apply_rope(_X, _POS, layout=lay, rotary_dim=4),
    "rotate_by_angles": lambda lay: posenc.rotate_by_angles(_X, [0.3, -1.0, 2.0, 0.5], layout=lay),
    "rope_matrix": lambda lay: posenc.rope_matrix(8, 3.0, layout=lay),
    "apply_rope_nd": lambda lay: posenc.apply_rope_nd(
        _X, np.stack([_POS, -_POS], axis=-1), posenc.axial_rope_frequencies(8), layout=lay
    ),
    "apply_mrope": lambda lay: posenc.apply_mrope(
        _X, np.array([[0, 1, 2], [0, 4, 4], [0, 1, 9]]), [2, 1, 1], layout=lay
    ),
    "fit_shift_matrix": _fitted,
    "shift_matrix_angles": _angles,
    "reference.rope": lambda lay: posenc.reference.rope(_X, _POS, layout=lay),
}


@pytest.mark.parametrize("name", list(LAYOUT_TAKERS))
def test_split_is_a_synonym_of_half(name):
    call = LAYOUT_TAKERS[name]
    half, split, inter = call("half"), call("split"), call("interleaved")
    np.testing.assert_array_equal(split, half)
    # and the half result is not the interleaved one, so the comparison above has teeth
    assert not np.array_equal(half, inter)


def test_check_rope_accepts_split_for_half():
    def half_rope(x, positions, base=10000.0):
        return posenc.reference.rope(x, positions, base, layout="half")

    assert check_rope(half_rope, layout="split") == check_rope(half_rope, layout="half")
    with pytest.raises(posenc.exercises.ExerciseError, match="half/interleaved layout confusion"):
        check_rope(half_rope, layout="interleaved")


def test_check_layout_returns_the_canonical_name():
    assert posenc.LAYOUTS == ("interleaved", "half")
    assert posenc.layouts.check_layout("interleaved") == "interleaved"
    assert posenc.layouts.check_layout("half") == "half"
    assert posenc.layouts.check_layout("split") == "half"


# ---------------------------------------------------------------------------------------
# unknown layouts
# ---------------------------------------------------------------------------------------


def test_unknown_layout_message_lists_the_names():
    expected = (
        "layout must be 'interleaved' or 'half' ('split' is accepted as a synonym of 'half'), got 'neox'"
    )
    with pytest.raises(ValueError) as info:
        apply_rope(_X, layout="neox")
    assert str(info.value) == expected


@pytest.mark.parametrize("name", list(LAYOUT_TAKERS))
@pytest.mark.parametrize(
    "bad,exc",
    [("neox", ValueError), ("Half", ValueError), ("SPLIT", ValueError), ("", ValueError)]
    + [(None, TypeError), (["half"], TypeError), (np.array(["half"]), TypeError)],
)
def test_every_layout_taker_refuses_an_unknown_layout(name, bad, exc):
    if name == "reference.rope":
        pytest.skip("the textbook form does not check its input")
    with pytest.raises(exc, match="layout must be"):
        LAYOUT_TAKERS[name](bad)
