r"""Operation counts of one transformer layer and of each place a position signal enters it.

Chapter 13 compares what a positional method costs with the layer it sits in. Counting a
multiply-add as 2 floating-point operations (FLOPs), a product of an :math:`m\times n` and
an :math:`n\times k` matrix costs :math:`2mnk`. For sequence length :math:`L`, width
:math:`d`, :math:`H` heads of width :math:`d/H` and a feed-forward network (FFN) of hidden
width :math:`4d`, one layer costs

* the Q, K, V and O projections, four :math:`(L\times d)(d\times d)` products: :math:`8Ld^2`;
* the scores :math:`QK^\top`, per head :math:`(L\times d/H)(d/H\times L)`: :math:`2L^2d` in all;
* the weights times the values, the same shapes transposed: :math:`2L^2d`;
* the FFN, :math:`(L\times d)(d\times 4d)` and :math:`(L\times 4d)(4d\times d)`: :math:`16Ld^2`;

and the positional methods add :math:`Ld` additions once per model (an input encoding),
:math:`6Ld` per layer for RoPE on the queries and keys (each pair :math:`(a, b)` becomes
:math:`(a\cos - b\sin,\ a\sin + b\cos)`: 4 products and 2 sums, 3 operations per entry of
:math:`\mathbf{q}` and of :math:`\mathbf{k}`), and :math:`HL^2` per layer for a score bias
(ALiBi, T5).
"""

from __future__ import annotations

from .._validation import check_positive_int

__all__ = ["layer_flops"]


def layer_flops(seq_len: int, d_model: int, n_heads: int) -> dict[str, int]:
    r"""FLOPs of one layer's parts and of each positional method, as exact Python integers.

    Keys: ``"QKVO projections"`` :math:`8Ld^2`, ``"scores Q K^T"`` :math:`2L^2d`,
    ``"weights x V"`` :math:`2L^2d`, ``"FFN (4d hidden)"`` :math:`16Ld^2`,
    ``"input PE addition (once)"`` :math:`Ld`, ``"RoPE on q and k"`` :math:`6Ld` and
    ``"ALiBi / T5 score bias"`` :math:`HL^2` (module docstring: where each count comes from).

    ``seq_len`` :math:`L`, ``d_model`` :math:`d` and ``n_heads`` :math:`H` are positive
    integers (bools refused) with :math:`H` dividing :math:`d`; anything else raises
    ``TypeError``/``ValueError`` naming the argument.
    """
    L = check_positive_int(seq_len, "seq_len")
    d = check_positive_int(d_model, "d_model")
    H = check_positive_int(n_heads, "n_heads")
    if d % H:
        raise ValueError(f"n_heads must divide d_model (heads of width d_model/n_heads), got {H} and {d}")
    return {
        "QKVO projections": 8 * L * d * d,
        "scores Q K^T": 2 * L * L * d,
        "weights x V": 2 * L * L * d,
        "FFN (4d hidden)": 16 * L * d * d,
        "input PE addition (once)": L * d,
        "RoPE on q and k": 6 * L * d,
        "ALiBi / T5 score bias": H * L * L,
    }
