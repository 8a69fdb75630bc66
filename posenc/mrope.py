r"""Multimodal RoPE (M-RoPE) of Qwen2-VL: text, images and video in one rotary scheme.

Each token carries three position ids, temporal, height and width. The ``d_head/2``
pairs of the half layout are cut into three consecutive sections of
``mrope_section = (s_t, s_h, s_w)`` pairs (``s_t + s_h + s_w = d_head/2``; Qwen2-VL-7B
uses ``(16, 24, 24)`` with ``d_head = 128``); pair :math:`j` keeps its 1-D RoPE frequency
:math:`\theta_j = \mathrm{base}^{-2j/d}` but turns by the id of the axis whose section
holds :math:`j`. transformers builds this by concatenating, along the last axis, the
``cos``/``sin`` tables of the three axes cut at ``mrope_section * 2`` (the half-layout
tables repeat their ``d/2`` columns twice), and taking cut :math:`i` from axis
:math:`i \bmod 3` (``apply_multimodal_rotary_pos_emb`` in transformers 4.x, the rotary
embedding's ``recomposition_frequencies`` in 5.x): both halves of a pair get the same axis.

Text tokens have equal ids on the three axes, so for text M-RoPE is 1-D RoPE.
:func:`mrope_positions` builds the ids of one sequence as Qwen2-VL's ``get_rope_index``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._arrays import as_positions, as_real_array, check_token_shape
from ._validation import (
    check_base,
    check_int,
    check_int_sequence,
    check_positive_int,
    check_size,
    check_width,
    is_int,
)
from .layouts import check_layout
from .rope_nd import apply_rope_nd
from .sinusoidal import frequencies


def _sections(mrope_section: object, half: int) -> tuple[int, int, int]:
    """The three pair counts (temporal, height, width), which must sum to ``half`` = d_head/2."""
    counts = check_int_sequence(
        mrope_section, "mrope_section", minimum=0, what="3 pair counts (temporal, height, width)"
    )
    if len(counts) != 3:
        raise ValueError(f"mrope_section must have 3 entries (temporal, height, width), got {len(counts)}")
    if sum(counts) != half:
        raise ValueError(
            f"mrope_section must sum to d_head/2 = {half} (the number of pairs), "
            f"got {counts} (sum {sum(counts)})"
        )
    return counts[0], counts[1], counts[2]


def apply_mrope(
    x: np.ndarray,
    positions: np.ndarray,
    mrope_section: Sequence[int],
    *,
    base: float = 10000.0,
    layout: str = "half",
) -> np.ndarray:
    r"""Qwen2-VL's M-RoPE: pair :math:`j` turns by the id of the axis whose section holds it.

    ``x[..., L, d_head]`` holds queries or keys, ``positions`` of shape ``(3, ..., L)`` the
    temporal, height and width ids of each token (from :func:`mrope_positions`, or
    ``(3, B, 1, L)`` for ``x`` of shape ``(B, H, L, d)``), ``mrope_section`` the pair counts
    :math:`(s_t, s_h, s_w)`. With :math:`\theta_j = \mathrm{base}^{-2j/d}` (as
    :func:`~posenc.rope.rope_frequencies`) and :math:`a(j)` = 0 for :math:`j < s_t`, 1 for
    :math:`s_t \le j < s_t + s_h`, 2 otherwise, pair :math:`j` of token :math:`l` (in the
    ``"half"`` layout coordinates ``(j, j + d/2)``, as transformers; ``"interleaved"``
    ``(2j, 2j+1)``) is multiplied by :math:`e^{\mathrm{i}\,p_{a(j),l}\theta_j}`. It is
    :func:`~posenc.rope_nd.apply_rope_nd` with ``freqs[a, j]`` = :math:`\theta_j` when
    :math:`a = a(j)`, else 0, so the angles are exactly the float64 products
    :math:`p\theta_j` of 1-D RoPE, and equal ids on the three axes give 1-D RoPE.

    Accepted input (anything else raises ``TypeError``/``ValueError`` naming the
    argument): ``x`` as in :func:`~posenc.rope.apply_rope`; ``positions`` a real array-like
    (finite, ``|p| <= 2**53``) with first axis 3 whose remaining shape broadcasts to
    ``x.shape[:-1]`` with its last axis ``L``; ``mrope_section`` a list, tuple or 1-D
    array of 3 non-negative ``int`` (bools refused) summing to ``d_head/2``; ``base`` a
    finite real number greater than 1; ``layout`` ``"half"`` or ``"interleaved"``.
    """
    arr = as_real_array(x, "x", min_ndim=2, keep_float_dtype=True, finite=False)
    layout = check_layout(layout)
    base = check_base(base)
    d = check_width(arr.shape[-1], "x.shape[-1] (d_head)")
    s_t, s_h, _ = _sections(mrope_section, d // 2)
    pos = as_positions(positions, "positions", allow_length=False, any_shape=True)
    if pos.ndim < 2 or pos.shape[0] != 3:
        raise ValueError(
            f"positions must have shape (3, ..., L) (temporal, height, width ids), got {pos.shape}"
        )
    check_token_shape(pos.shape[1:], "positions[0]", arr.shape[:-1])
    theta = frequencies(d, base)
    freqs = np.zeros((3, d // 2), dtype=np.float64)
    for a, (lo, hi) in enumerate(((0, s_t), (s_t, s_t + s_h), (s_t + s_h, d // 2))):
        freqs[a, lo:hi] = theta[lo:hi]
    return apply_rope_nd(arr, np.moveaxis(pos, 0, -1), freqs, layout=layout)


def _segment(item: object, index: int) -> int | tuple[int, int, int]:
    name = f"segments[{index}]"
    if is_int(item):
        return check_int(item, name, minimum=0)
    if isinstance(item, (tuple, list)):
        if len(item) != 3:
            raise ValueError(f"{name} must be a text length n or a grid (t, h, w), got {len(item)} numbers")
        t, h, w = (check_positive_int(v, f"{name}[{k}]") for k, v in enumerate(item))
        return t, h, w
    raise TypeError(
        f"{name} must be an int (a number of text tokens) or a tuple (t, h, w) of positive ints "
        f"(a vision grid after spatial merging), got {item!r}"
    )


def mrope_positions(segments: Sequence[int | tuple[int, int, int]]) -> np.ndarray:
    r"""M-RoPE position ids ``(3, N)``, int64, of one unpadded text-and-vision sequence.

    ``segments`` lists the sequence in order: an ``int`` :math:`n` is :math:`n` text
    tokens, a tuple ``(t, h, w)`` a vision grid of :math:`t h w` tokens (frames, rows and
    columns of patches *after* spatial merging, i.e. ``image_grid_thw`` divided by
    ``spatial_merge_size`` on ``h`` and ``w``) in row-major order (``t`` slowest, ``w``
    fastest). With :math:`s` = the largest id so far plus 1 (0 at the start):

    * text token :math:`k` of a segment gets :math:`(s + k, s + k, s + k)`;
    * the grid token :math:`(t_i, h_i, w_i)` gets :math:`(s + t_i, s + h_i, s + w_i)`, so
      the next segment starts at :math:`s + \max(t, h, w)`.

    This is the rule of Qwen2-VL's ``get_rope_index`` as transformers 4.x writes it
    (``st_idx = llm_pos_ids_list[-1].max() + 1``; the temporal id of Qwen2-VL is the
    frame index; release 5.2 still has it). From release 5.3, transformers advances by
    :math:`\max(h, w)` after a grid instead (``get_rope_index`` with
    ``get_vision_position_ids``), which differs from this for a video with more frames
    than rows and columns (:math:`t > \max(h, w)`), followed by more tokens; images
    (:math:`t = 1`) agree. Example: ``[2, (1, 2, 3), 2]``
    gives temporal ids ``0 1 2 2 2 2 2 2 5 6``, height ``0 1 2 2 2 3 3 3 5 6``, width
    ``0 1 2 3 4 2 3 4 5 6``.

    Accepted input (anything else raises ``TypeError``/``ValueError`` naming the item):
    ``segments`` a non-empty list or tuple of items, each a non-negative ``int`` or a
    tuple/list of three positive ``int`` (bools refused), with at least one token in
    all and at most 2**28 / 3 tokens.
    """
    if isinstance(segments, (str, bytes)) or not isinstance(segments, (list, tuple)):
        raise TypeError(
            f"segments must be a list of text lengths n and vision grids (t, h, w), got {segments!r}"
        )
    items = [_segment(item, i) for i, item in enumerate(segments)]
    total = sum(item if isinstance(item, int) else item[0] * item[1] * item[2] for item in items)
    if total == 0:
        raise ValueError("segments must hold at least one token")
    check_size((3, total), "the position ids (3, number of tokens in segments)")
    out = np.empty((3, total), dtype=np.int64)
    start = col = 0
    for item in items:
        if isinstance(item, int):
            out[:, col : col + item] = np.arange(start, start + item, dtype=np.int64)
            start, col = start + item, col + item
            continue
        t, h, w = item
        grid = np.indices((t, h, w), dtype=np.int64).reshape(3, -1)
        out[:, col : col + t * h * w] = grid + start
        start, col = start + max(t, h, w), col + t * h * w
    return out
