r"""The checkers of chapter 19's exercises (the executed FAQ): layout conversion and partial rotary.

:func:`check_layout_rows` checks ``fn(n_heads, d_head)``, the row order that converts the
query or key projection of an interleaved-RoPE checkpoint (Meta's LLaMA) to the half layout
(``rotate_half``, Hugging Face), and names the known mistakes: one permutation of the whole
output axis instead of one per head, the inverse permutation (half to interleaved), no
permutation, only the first head permuted.

:func:`check_partial_rope_half` checks ``fn(x, positions, rotary_dim, base=10000.0)``, RoPE on
the first ``rotary_dim`` channels in the half layout (GPT-NeoX ``rotary_pct``), and names
the known mistakes: the full head's frequencies, the last channels rotated instead of the
first, the pass-through channels dropped, the interleaved pairing, the whole head rotated.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..layouts import layout_permutation
from ..rope import apply_rope
from ..sinusoidal import frequencies
from ._runner import Case, Variant, check_fn, register_mistakes, run_checker
from .ch14_frequencies import partial_rope_cases

_ROWS = register_mistakes(
    "check_layout_rows",
    global_perm=(
        "one permutation of the whole axis instead of one per head",
        "the half layout pairs (i, i + d_head/2) inside each head. Permute the d_head rows of each "
        "head on their own: rows[h*d_head + j] = h*d_head + perm[j].",
    ),
    inverse=(
        "inverse permutation (half to interleaved)",
        "new row i + d_head/2 of a head must hold old row 2i + 1 (and new row i old row 2i): "
        "W_new = W_old[rows], so rows[i] = 2i and rows[i + d_head/2] = 2i + 1 within a head.",
    ),
    identity=(
        "no permutation",
        "the half layout pairs other coordinates than the interleaved one: the rows must be "
        "reordered, or the checkpoint runs and gives wrong scores.",
    ),
    first_head=(
        "only the first head permuted",
        "every head has its own block of d_head rows; permute each of them.",
    ),
)

_PARTIAL = register_mistakes(
    "check_partial_rope_half",
    full_freqs=(
        "the full head's frequencies",
        "the rotated channels are a rotary_dim-dimensional RoPE: theta_i = base**(-2i/rotary_dim), "
        "not base**(-2i/d_head).",
    ),
    last=(
        "the last channels rotated instead of the first",
        "channels 0 .. rotary_dim-1 rotate; channels rotary_dim .. d_head-1 pass through.",
    ),
    dropped=(
        "pass-through channels dropped",
        "return all d_head channels: the channels from rotary_dim on are copied unchanged.",
    ),
    interleaved=(
        "interleaved pairing (2i, 2i+1)",
        "this exercise asks for the half layout: pair i is (i, i + rotary_dim/2) inside the rotated block.",
    ),
    whole_head=(
        "whole head rotated",
        "only the first rotary_dim channels rotate; rotating all d_head channels is plain RoPE.",
    ),
)


def _per_head(n_heads: int, perm: np.ndarray, heads: range | None = None) -> np.ndarray:
    d = perm.size
    heads = range(n_heads) if heads is None else heads
    rows = np.arange(n_heads * d)
    for h in heads:
        rows[h * d : (h + 1) * d] = h * d + perm
    return rows


def check_layout_rows(fn: Callable) -> str:
    r"""Check ``fn(n_heads, d_head)``: the rows that move an interleaved checkpoint to the half layout.

    The result must be an integer array ``rows`` of length ``n_heads * d_head`` such that
    ``W[rows]`` (``W`` a PyTorch-style ``(n_heads * d_head, d_model)`` query or key weight,
    output row ``h * d_head + j`` is coordinate ``j`` of head ``h``), used with the half
    layout, gives the scores of ``W`` with the interleaved layout: within head ``h``,
    ``rows[h*d + i] = h*d + 2i`` and ``rows[h*d + i + d/2] = h*d + 2i + 1``. Recognised
    mistakes: one permutation of the whole axis, the inverse permutation, no permutation,
    only the first head permuted.
    """
    specs = [(2, 4), (2, 8), (3, 8), (4, 16), (8, 64), (5, 12), (32, 128)]
    cases = [
        Case((h, d), {}, _per_head(h, layout_permutation(d)), 0.0, f"n_heads={h}, d_head={d}")
        for h, d in specs
    ]

    def inverse(case: Case) -> np.ndarray:
        h, d = case.args
        return _per_head(h, np.argsort(layout_permutation(d)))

    variants = [
        Variant(("global_perm",), lambda c: layout_permutation(c.args[0] * c.args[1])),
        Variant(("inverse",), inverse),
        Variant(("identity",), lambda c: np.arange(c.args[0] * c.args[1])),
        Variant(("first_head",), lambda c: _per_head(c.args[0], layout_permutation(c.args[1]), range(1))),
    ]
    return run_checker(
        "check_layout_rows",
        "your row order",
        fn,
        cases,
        _ROWS,
        variants,
        kind="int",
        exact=True,
        shape_doc=" = (n_heads * d_head,)",
    )


def _partial_variant(
    x: np.ndarray,
    positions: np.ndarray,
    rotary_dim: int,
    base: float,
    *,
    freq_width: int | None = None,
    last: bool = False,
    dropped: bool = False,
    layout: str = "half",
) -> np.ndarray:
    d = x.shape[-1]
    r = rotary_dim
    block = slice(d - r, d) if last else slice(0, r)
    theta = frequencies(r if freq_width is None else freq_width, base=base)[: r // 2]
    ang = np.asarray(positions, dtype=np.float64)[:, None] * theta
    cos, sin = np.cos(ang), np.sin(ang)
    part = x[..., block]
    if layout == "half":
        a, b = part[..., : r // 2], part[..., r // 2 :]
    else:
        a, b = part[..., 0::2], part[..., 1::2]
    turned = np.empty_like(part, dtype=np.float64)
    first, second = a * cos - b * sin, a * sin + b * cos
    if layout == "half":
        turned[..., : r // 2], turned[..., r // 2 :] = first, second
    else:
        turned[..., 0::2], turned[..., 1::2] = first, second
    if dropped:
        return turned
    out = np.array(x, dtype=np.float64)
    out[..., block] = turned
    return out


def check_partial_rope_half(fn: Callable) -> str:
    r"""Check ``fn(x, positions, rotary_dim, base=10000.0)``: RoPE on the first ``rotary_dim`` channels.

    ``x`` has shape ``(..., L, d_head)``, ``positions`` is a 1-D float64 array of length
    ``L`` and ``rotary_dim`` an even number at most ``d_head``. The result is a float64
    array of the shape of ``x``, compared with ``apply_rope(x, positions, rotary_dim=r, layout="half")``:
    channels ``0 .. rotary_dim-1`` are turned as a
    ``rotary_dim``-dimensional RoPE in the half layout (pair :math:`i` is
    :math:`(i, i + r/2)`, frequency :math:`\mathrm{base}^{-2i/r}`), the others are copied.
    Recognised mistakes: the full head's frequencies :math:`\mathrm{base}^{-2i/d}`, the last
    channels rotated instead of the first, the pass-through channels dropped, the
    interleaved pairing, the whole head rotated.
    """
    check_fn("check_partial_rope_half", fn)
    rng = np.random.default_rng(19)
    specs = [
        ((6, 16), 4, np.arange(6, dtype=np.float64), 10000.0),
        ((6, 16), 8, np.arange(6, dtype=np.float64), 10000.0),
        ((2, 5, 32), 8, np.arange(100, 105, dtype=np.float64), 10000.0),
        ((7, 96), 24, rng.uniform(0, 2048, size=7), 10000.0),  # GPT-NeoX-20B's head: rotary_pct 0.25
        ((4, 80), 32, rng.uniform(0, 2048, size=4), 10000.0),  # Phi-2's head: factor 0.4
        ((3, 4, 64), 16, np.array([3.0, 1.0, 4.0, 1.5]), 500.0),
        ((5, 12), 12, rng.uniform(-50, 50, size=5), 10000.0),  # rotary_dim = d_head: plain RoPE
    ]
    cases = partial_rope_cases(specs, rng, layout="half")

    def v(**kw):
        def compute(case: Case) -> np.ndarray:
            x, positions, r = case.args
            if kw.get("freq_width") == "d":
                kw2 = {**kw, "freq_width": x.shape[-1]}
            else:
                kw2 = kw
            return _partial_variant(x, positions, r, case.kwargs["base"], **kw2)

        return compute

    variants = [
        Variant(("full_freqs",), v(freq_width="d")),
        Variant(("last",), v(last=True)),
        Variant(("dropped",), v(dropped=True)),
        Variant(("interleaved",), v(layout="interleaved")),
        Variant(
            ("whole_head",),
            lambda c: apply_rope(c.args[0], c.args[1], base=c.kwargs["base"], layout="half"),
        ),
    ]
    return run_checker(
        "check_partial_rope_half",
        "your partial RoPE",
        fn,
        cases,
        _PARTIAL,
        variants,
        shape_doc=" = x.shape",
    )
