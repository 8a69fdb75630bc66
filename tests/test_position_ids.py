"""Tests of posenc.position_ids: position_ids_from_mask and packed_position_ids.

Expected ids are written out by hand for left- and right-padded rows, or counted with
explicit Python loops (a running count of real tokens; a counter that restarts for each
packed sequence). Invalid input must raise naming the argument within a second.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import refuses
from hypothesis import given
from hypothesis import strategies as st

import posenc


def loop_ids(row: list[int]) -> list[int]:
    """transformers' rule for one row, by a running count: real token -> count - 1, pad -> 1."""
    out, count = [], 0
    for m in row:
        count += m
        out.append(count - 1 if m else 1)
    return out


# ---------------------------------------------------------------------------------------
# position_ids_from_mask
# ---------------------------------------------------------------------------------------


def test_left_and_right_padding_by_hand():
    mask = [
        [0, 0, 1, 1, 1],  # left-padded (batched generation)
        [1, 1, 1, 0, 0],  # right-padded
        [1, 1, 1, 1, 1],  # no padding
        [0, 0, 0, 0, 1],  # one real token at the end
    ]
    want = [
        [1, 1, 0, 1, 2],
        [0, 1, 2, 1, 1],
        [0, 1, 2, 3, 4],
        [1, 1, 1, 1, 0],
    ]
    got = posenc.position_ids_from_mask(mask)
    assert got.dtype == np.int64 and got.shape == (4, 5)
    assert got.tolist() == want


def test_all_padding_row_is_all_ones():
    assert posenc.position_ids_from_mask([[0, 0, 0]]).tolist() == [[1, 1, 1]]


def test_hole_in_the_mask_by_hand():
    # a pad in the middle: the count of real tokens simply does not advance there
    assert posenc.position_ids_from_mask([1, 0, 1, 1, 0, 1]).tolist() == [0, 1, 1, 2, 1, 3]


def test_bools_and_integer_dtypes_agree():
    rows = [[False, True, True], [True, True, False]]
    want = [[1, 0, 1], [0, 1, 1]]
    assert posenc.position_ids_from_mask(rows).tolist() == want
    assert posenc.position_ids_from_mask(np.array(rows)).tolist() == want
    for dtype in (np.int8, np.uint8, np.int32, np.int64, np.uint64):
        assert posenc.position_ids_from_mask(np.array(rows, dtype=dtype)).tolist() == want
    assert posenc.position_ids_from_mask(tuple(tuple(int(v) for v in r) for r in rows)).tolist() == want


def test_leading_shape_kept():
    mask = np.array([[[0, 1, 1], [1, 1, 0]], [[1, 1, 1], [0, 0, 1]]])
    got = posenc.position_ids_from_mask(mask)
    assert got.shape == (2, 2, 3)
    assert got.tolist() == [[[1, 0, 1], [0, 1, 1]], [[0, 1, 2], [1, 1, 0]]]


@given(
    batch=st.integers(1, 4),
    length=st.integers(1, 20),
    data=st.data(),
)
def test_random_masks_against_the_running_count(batch, length, data):
    rows = [data.draw(st.lists(st.integers(0, 1), min_size=length, max_size=length)) for _ in range(batch)]
    got = posenc.position_ids_from_mask(rows)
    assert got.tolist() == [loop_ids(r) for r in rows]


@given(batch=st.integers(1, 4), data=st.data())
def test_left_padded_real_tokens_count_from_zero(batch, data):
    # left padding as generate builds it: n_pad pads then n_real tokens numbered 0..n_real-1
    length = 12
    for _ in range(batch):
        n_pad = data.draw(st.integers(0, length - 1))
        row = [0] * n_pad + [1] * (length - n_pad)
        got = posenc.position_ids_from_mask(row).tolist()
        assert got[n_pad:] == list(range(length - n_pad))
        assert got[:n_pad] == [1] * n_pad


@pytest.mark.parametrize(
    ("bad", "exc"),
    [
        ([[0.0, 1.0]], TypeError),  # floats
        ([[0, 2]], ValueError),  # not 0/1
        ([[1, -1]], ValueError),
        ([["1", "0"]], TypeError),
        ([[1 + 0j]], TypeError),
        ([[1, 0], [1]], TypeError),  # ragged
        ([2**70, 1], TypeError),  # object dtype
        (1, TypeError),  # scalar
        (True, TypeError),
        (np.array(1), ValueError),  # 0-D
        (np.zeros((3, 0), dtype=int), ValueError),  # empty sequence axis
        (None, TypeError),
    ],
)
def test_mask_refusals(bad, exc):
    refuses(exc, "attention_mask", posenc.position_ids_from_mask, bad)


def test_mask_over_the_size_limit_refused_fast():
    huge = np.broadcast_to(np.ones(1, dtype=np.int8), (2**15, 2**14 + 1))  # a view: no memory
    refuses(ValueError, "attention_mask", posenc.position_ids_from_mask, huge)


# ---------------------------------------------------------------------------------------
# packed_position_ids
# ---------------------------------------------------------------------------------------


def test_packed_by_hand():
    got = posenc.packed_position_ids([3, 1, 2])
    assert got.dtype == np.int64
    assert got.tolist() == [0, 1, 2, 0, 0, 1]
    assert posenc.packed_position_ids([1]).tolist() == [0]
    assert posenc.packed_position_ids((4,)).tolist() == [0, 1, 2, 3]
    assert posenc.packed_position_ids(np.array([2, 2], dtype=np.uint8)).tolist() == [0, 1, 0, 1]


@given(lengths=st.lists(st.integers(1, 30), min_size=1, max_size=10))
def test_packed_against_a_restarting_counter(lengths):
    want = []
    for n in lengths:
        t = 0
        while t < n:
            want.append(t)
            t += 1
    got = posenc.packed_position_ids(lengths)
    assert got.tolist() == want
    assert got.shape == (sum(lengths),)


@pytest.mark.parametrize(
    ("bad", "exc"),
    [
        ([], ValueError),
        ([3, 0], ValueError),
        ([2, -1], ValueError),
        ([2.0, 3.0], TypeError),
        ([True, 2], TypeError),
        (np.array([True]), TypeError),
        (["3"], TypeError),
        ([[1, 2]], ValueError),  # 2-D
        (3, TypeError),  # a scalar: wrap it
        (3.0, TypeError),
        ([2**70], TypeError),
        ([2**28 + 1], ValueError),
        ([2**27, 2**27, 1], ValueError),  # total over 2**28, refused before allocating
        (None, TypeError),
    ],
)
def test_packed_refusals(bad, exc):
    refuses(exc, "lengths", posenc.packed_position_ids, bad)


def test_an_empty_mask_list_is_called_empty():
    with pytest.raises(ValueError, match="non-empty last axis"):
        posenc.position_ids_from_mask([])
