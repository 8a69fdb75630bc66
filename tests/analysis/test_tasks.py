"""posenc.analysis.tasks: the copy task and its targets, against the generator and indexing they document."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import posenc


@given(
    n_seq=st.integers(1, 4), length=st.integers(1, 6), vocab=st.integers(1, 2**53), seed=st.integers(0, 2**70)
)
def test_copy_task_is_the_documented_generator(n_seq, length, vocab, seed):
    got = posenc.analysis.copy_task(n_seq, length, vocab, seed=seed)
    want = np.random.default_rng(seed).integers(0, vocab, size=(n_seq, length), dtype=np.int64)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64 and 0 <= got.min() and got.max() < vocab


@given(
    tokens=st.lists(st.lists(st.integers(0, 2**53), min_size=3, max_size=3), min_size=1, max_size=3),
    offset=st.integers(0, 10**30),
)
def test_copy_targets_by_hand(tokens, offset):
    got = posenc.analysis.copy_targets(tokens, offset)
    for b, row in enumerate(tokens):
        for i in range(3):
            assert got[b, i] == (row[i - offset] if i >= offset else -1)
