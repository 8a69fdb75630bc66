r"""The two coordinate layouts of a (sin, cos) or rotary pair, and the permutation between them.

A vector of even width :math:`d` holds :math:`d/2` pairs. ``"interleaved"`` puts pair
:math:`i` at coordinates :math:`(2i, 2i+1)` (Vaswani et al.'s sinusoidal table, RoFormer,
Meta's LLaMA); ``"half"`` puts it at :math:`(i, i + d/2)`, so the first half of the vector
holds the first member of every pair and the second half the second member (GPT-NeoX,
Hugging Face's ``rotate_half``). ``"split"`` is accepted everywhere as a synonym of
``"half"`` (an older name of the same pairing, kept so that code written with it works).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_width

LAYOUTS = ("interleaved", "half")
_SYNONYMS = {"split": "half"}
_EXPECTED = "'interleaved' or 'half' ('split' is accepted as a synonym of 'half')"


def check_layout(layout: object, name: str = "layout") -> str:
    """The canonical name of ``layout``: ``"interleaved"``, or ``"half"`` for ``"half"`` and ``"split"``.

    Raises ``TypeError`` naming ``name`` when ``layout`` is not a string and ``ValueError``
    when it is a string other than ``"interleaved"``, ``"half"`` or ``"split"`` (names are
    case-sensitive).
    """
    if not isinstance(layout, str):
        raise TypeError(f"{name} must be a string, {_EXPECTED}, got {type(layout).__name__}")
    canonical = _SYNONYMS.get(layout, layout)
    if canonical not in LAYOUTS:
        raise ValueError(f"{name} must be {_EXPECTED}, got {layout!r}")
    return canonical


def layout_permutation(d: int) -> np.ndarray:
    r"""The index array ``perm`` with ``x_half = x_interleaved[..., perm]``.

    Pair :math:`i` sits at :math:`(2i, 2i+1)` in the interleaved layout and at
    :math:`(i, i + d/2)` in the half layout, so for :math:`0 \le i < d/2`

    .. math:: \mathrm{perm}[i] = 2i, \qquad \mathrm{perm}[i + d/2] = 2i + 1,

    that is ``perm = [0, 2, 4, ..., d-2, 1, 3, 5, ..., d-1]``. For a sinusoidal table
    the half-layout table is ``table_interleaved[:, perm]``; for RoPE,
    ``apply_rope(x[..., perm], layout="half") == apply_rope(x, layout="interleaved")[..., perm]``,
    and a projection ``q = x @ W_q`` moves to the half layout by permuting its columns,
    ``W_q[:, perm]`` (the rows of a PyTorch ``nn.Linear.weight``), with every attention
    score unchanged because a permutation preserves inner products. The inverse,
    half to interleaved, is ``np.argsort(perm)``.

    ``d``: a positive even ``int`` at most 2**16 (bools refused); anything else raises
    ``TypeError``/``ValueError`` naming ``d``.
    """
    d = check_width(d, "d")
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
