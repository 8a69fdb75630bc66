"""posenc.analysis.layer_flops against multiply-adds counted one by one in explicit loops."""

from __future__ import annotations

import pytest
from conftest import refuses

import posenc


def count_madds(m: int, n: int, k: int) -> int:
    """Multiply-adds of an (m x n)(n x k) product, counted by running its triple loop."""
    return sum(1 for _ in range(m) for _ in range(n) for _ in range(k))


@pytest.mark.parametrize(("L", "d", "H"), [(1, 2, 1), (6, 4, 2), (5, 6, 3), (3, 8, 8), (7, 4, 1)])
def test_layer_flops_counts_the_matmuls_and_the_positional_methods(L, d, H):
    f = posenc.analysis.layer_flops(L, d, H)
    head = d // H
    assert f["QKVO projections"] == 4 * 2 * count_madds(L, d, d)
    assert f["scores Q K^T"] == H * 2 * count_madds(L, head, L)  # one (L x d/H)(d/H x L) per head
    assert f["weights x V"] == H * 2 * count_madds(L, L, head)  # weights (L x L) times V (L x d/H)
    assert f["FFN (4d hidden)"] == 2 * (count_madds(L, d, 4 * d) + count_madds(L, 4 * d, d))
    assert f["input PE addition (once)"] == sum(1 for _ in range(L) for _ in range(d))
    # RoPE: per pair 4 products and 2 sums, for the pairs of q and of k
    ops_per_pair = 4 + 2
    assert f["RoPE on q and k"] == sum(
        ops_per_pair for _ in ("q", "k") for _ in range(L) for _ in range(d // 2)
    )
    assert f["ALiBi / T5 score bias"] == sum(1 for _ in range(H) for _ in range(L) for _ in range(L))


def test_layer_flops_are_exact_integers_at_model_sizes():
    f = posenc.analysis.layer_flops(2**17, 2**14, 128)
    assert all(type(v) is int for v in f.values())
    assert f["FFN (4d hidden)"] == 16 * 2**17 * 2**28  # 2**49: exact, no float rounding


@pytest.mark.parametrize(
    ("args", "exc", "name"),
    [
        ((0, 4, 2), ValueError, "seq_len"),
        ((4, -4, 2), ValueError, "d_model"),
        ((4, 4, 0), ValueError, "n_heads"),
        ((4, 6, 4), ValueError, "n_heads"),
        ((4.0, 4, 2), TypeError, "seq_len"),
        ((4, True, 1), TypeError, "d_model"),
        ((4, 4, "2"), TypeError, "n_heads"),
    ],
)
def test_layer_flops_refuses_bad_sizes(args, exc, name):
    refuses(exc, name, posenc.analysis.layer_flops, *args)
