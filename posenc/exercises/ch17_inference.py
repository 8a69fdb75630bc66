r"""The checkers of chapter 17's exercises: position ids and re-rotated cache keys.

:func:`check_position_ids_from_mask` checks ``fn(attention_mask)`` against
:func:`~posenc.position_ids.position_ids_from_mask`; :func:`check_packed_position_ids`
checks ``fn(lengths)`` against :func:`~posenc.position_ids.packed_position_ids`;
:func:`check_rerotate_keys` checks ``fn(keys, delta, base=10000.0)``, which moves keys
cached after RoPE (interleaved) from position :math:`n` to :math:`n - \Delta`, against
``apply_rope(keys, -delta)``. Each names its known mistakes (listed in its docstring).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..position_ids import packed_position_ids, position_ids_from_mask
from ..rope import apply_rope
from ._angles import position_tol, rope_variant
from ._runner import Case, Variant, check_fn, frequency_mistakes, register_mistakes, run_checker

_MASK = register_mistakes(
    "check_position_ids_from_mask",
    no_minus_one=(
        "cumsum without -1 (ids start at 1)",
        "the first real token has position 0: the id is cumsum(mask) - 1, the number of real tokens "
        "before the slot.",
    ),
    pads_not_set=(
        "pads not set to 1",
        "after cumsum(mask) - 1 the padded slots hold -1 (left padding) or repeat the last id (right "
        "padding); set them to 1, as transformers' generate does (the value is never used, but the "
        "contract fixes it).",
    ),
    pads_zero=(
        "pads set to 0 instead of 1",
        "transformers 5 fills padded slots with 0, transformers 4 with 1; posenc.position_ids_from_mask "
        "follows 4 (1), and so does this exercise.",
    ),
    arange=(
        "ids count the pads (arange over the row)",
        "a real token's id is the number of real tokens before it, not its column index: with left "
        "padding, arange gives every real token an id shifted by the number of pads.",
    ),
    batch_axis=(
        "cumsum along the batch axis",
        "count along the last axis (the sequence), axis=-1, not along the rows of the batch.",
    ),
)

_PACKED = register_mistakes(
    "check_packed_position_ids",
    no_restart=(
        "ids do not restart (arange over the packed row)",
        "each packed sequence starts again at position 0: concatenate arange(n) for every length n.",
    ),
    start_one=(
        "ids start at 1",
        "positions start at 0 in every sequence, as arange(n) does.",
    ),
    sequence_index=(
        "sequence index instead of position",
        "the id of a token is its offset inside its own sequence, not the number of the sequence it "
        "belongs to.",
    ),
    inclusive_starts=(
        "start offsets include the sequence itself (inclusive cumsum)",
        "sequence s starts at the sum of the lengths before it: subtract cumsum(lengths) - lengths "
        "(an exclusive cumulative sum), not cumsum(lengths).",
    ),
)

_REROTATE = register_mistakes(
    "check_rerotate_keys",
    sign=(
        "turned by +delta instead of -delta",
        "a key cached at position n moves to n - delta: turn each pair by -delta * theta_i, "
        "(a, b) -> (a cos + b sin, -a sin + b cos) with cos, sin of delta * theta_i.",
    ),
    unchanged=(
        "keys returned unchanged (delta ignored)",
        "the cached keys carry the rotation of their old positions; they must be turned by "
        "-delta * theta_i to sit at their new positions.",
    ),
    layout=(
        "half/interleaved layout confusion",
        "this exercise pairs coordinates (2i, 2i+1) (interleaved); your function pairs (i, i + d/2).",
    ),
    **frequency_mistakes("delta", "theta_i"),
)


def _mask_cases() -> list[np.ndarray]:
    rng = np.random.default_rng(17)
    masks = [
        np.array([[0, 0, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]]),
        np.array([1, 1, 1, 0]),
        np.array([[0, 0, 0], [1, 1, 1]]),
    ]
    for batch, length in ((3, 9), (5, 16)):
        n_real = rng.integers(1, length + 1, size=batch)
        left = np.arange(length)[None, :] >= (length - n_real)[:, None]
        right = np.arange(length)[None, :] < n_real[:, None]
        masks += [left.astype(np.int64), right.astype(np.int64)]
    masks.append(np.stack([masks[-2], masks[-1]]))  # (2, B, L)
    return masks


def check_position_ids_from_mask(fn: Callable) -> str:
    r"""Check ``fn(attention_mask)`` against :func:`~posenc.position_ids.position_ids_from_mask`.

    ``attention_mask`` is an int64 array of 0 (pad) and 1 (real token), sequence on the
    last axis, 1-D to 3-D, left- and right-padded rows and rows of pads only. The result
    must be an integer array of the same shape: ``cumsum(mask, axis=-1) - 1`` at real
    tokens and 1 at pads.

    Recognised mistakes: cumsum without -1 (ids start at 1), pads not set to 1, both of
    these, pads set to 0 instead of 1, ids counting the pads (arange over the row),
    cumsum along the batch axis.
    """
    check_fn("check_position_ids_from_mask", fn)
    masks = _mask_cases()
    cases = [
        Case((m,), {}, position_ids_from_mask(m), 0.0, f"attention_mask={np.array2string(m, separator=', ')}")
        for m in masks
    ]

    def raw(case: Case, axis: int = -1) -> np.ndarray:
        return np.cumsum(case.args[0], axis=axis)

    def fill(ids: np.ndarray, mask: np.ndarray, value: int) -> np.ndarray:
        return np.where(mask == 1, ids, value)

    variants = [
        Variant(("no_minus_one",), lambda c: fill(raw(c), c.args[0], 1)),
        Variant(("pads_not_set",), lambda c: raw(c) - 1),
        Variant(("no_minus_one", "pads_not_set"), raw),
        Variant(("pads_zero",), lambda c: fill(raw(c) - 1, c.args[0], 0)),
        Variant(
            ("arange",),
            lambda c: fill(np.broadcast_to(np.arange(c.args[0].shape[-1]), c.args[0].shape), c.args[0], 1),
        ),
        Variant(("batch_axis",), lambda c: fill(raw(c, axis=0) - 1, c.args[0], 1)),
    ]
    return run_checker(
        "check_position_ids_from_mask",
        "your position ids",
        fn,
        cases,
        _MASK,
        variants,
        kind="int",
        exact=True,
        shape_doc=" = attention_mask.shape",
    )


def check_packed_position_ids(fn: Callable) -> str:
    r"""Check ``fn(lengths)`` against :func:`~posenc.position_ids.packed_position_ids`.

    ``lengths`` is a 1-D int64 array of positive sequence lengths; the result must be an
    integer array of length ``lengths.sum()``, ``arange(n)`` for each length, concatenated.

    Recognised mistakes: ids that do not restart (``arange`` over the packed row), ids
    starting at 1, the sequence index instead of the position, start offsets taken from an
    inclusive cumulative sum.
    """
    check_fn("check_packed_position_ids", fn)
    rng = np.random.default_rng(18)
    specs = [[3, 1, 2], [4, 7, 2, 9], [1, 1, 1], [6, 5], [2, 3]]
    specs += [rng.integers(1, 12, size=n).tolist() for n in (4, 7)]
    cases = []
    for spec in specs:
        lengths = np.array(spec, dtype=np.int64)
        cases.append(Case((lengths,), {}, packed_position_ids(lengths), 0.0, f"lengths={spec}"))

    def per_sequence(case: Case, make: Callable[[int, int], np.ndarray]) -> np.ndarray:
        return np.concatenate([make(s, int(n)) for s, n in enumerate(case.args[0])])

    def inclusive(case: Case) -> np.ndarray:
        lengths = case.args[0]
        return np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths), lengths)

    variants = [
        Variant(("no_restart",), lambda c: np.arange(c.args[0].sum())),
        Variant(("start_one",), lambda c: per_sequence(c, lambda s, n: np.arange(1, n + 1))),
        Variant(("sequence_index",), lambda c: per_sequence(c, lambda s, n: np.full(n, s))),
        Variant(("inclusive_starts",), inclusive),
    ]
    return run_checker(
        "check_packed_position_ids",
        "your packed position ids",
        fn,
        cases,
        _PACKED,
        variants,
        kind="int",
        exact=True,
        shape_doc=" = (lengths.sum(),)",
    )


def check_rerotate_keys(fn: Callable) -> str:
    r"""Check ``fn(keys, delta, base=10000.0)``: cached RoPE keys moved back by ``delta`` positions.

    ``keys`` has shape ``(..., L, d_head)`` and holds keys already turned by RoPE
    (interleaved pairs ``(2i, 2i+1)``) at their old positions; ``delta`` is a non-negative
    int or a 1-D int64 array of length ``L`` (one shift per key). The result must be the
    float64 array ``apply_rope(keys, -delta)``: every pair turned by
    :math:`-\Delta\theta_i`, so that a key encoded at :math:`n` becomes the key encoded at
    :math:`n - \Delta`.

    Recognised mistakes: turning by :math:`+\Delta` instead of :math:`-\Delta`, the keys
    returned unchanged, the half layout instead of the interleaved one, division instead of
    multiplication, missing factor 2 in ``2i/d``, the ``base`` argument ignored.
    """
    check_fn("check_rerotate_keys", fn)
    rng = np.random.default_rng(19)
    cases = []
    specs = [((6, 8), 1, 10000.0), ((6, 8), 5, 10000.0), ((2, 5, 16), 3, 10000.0), ((4, 64), 1000, 10000.0)]
    specs += [((5, 16), np.array([0, 0, 2, 2, 2]), 10000.0), ((3, 8), 7, 500.0), ((2, 3, 32), 11, 1e6)]
    for shape, delta, base in specs:
        keys = rng.standard_normal(shape)
        length = shape[-2]
        shifts = np.broadcast_to(np.asarray(delta, dtype=np.float64), (length,)).copy()
        arg = delta.copy() if isinstance(delta, np.ndarray) else delta
        cases.append(
            Case(
                (keys, arg),
                {"base": base},
                apply_rope(keys, -shifts, base=base),
                position_tol(shifts, scale=4.0),
                f"keys of shape {shape}, delta={np.array2string(np.asarray(delta), separator=', ')}, "
                f"base={base:g}",
            )
        )

    def v(sign: float = -1.0, **kw: object) -> Callable[[Case], np.ndarray]:
        def compute(case: Case) -> np.ndarray:
            keys, delta = case.args
            shifts = np.broadcast_to(np.asarray(delta, dtype=np.float64), (keys.shape[-2],))
            return rope_variant(keys, sign * shifts, case.kwargs["base"], **kw)  # type: ignore[arg-type]

        return compute

    def ignored_base(case: Case) -> np.ndarray:
        keys, delta = case.args
        return rope_variant(
            keys, -np.broadcast_to(np.asarray(delta, float), (keys.shape[-2],)), 10000.0, "interleaved"
        )

    variants = [
        Variant(("sign",), v(1.0, layout="interleaved")),
        Variant(("unchanged",), lambda c: np.asarray(c.args[0], dtype=np.float64)),
        Variant(("layout",), v(layout="half")),
        Variant(("division",), v(layout="interleaved", division=True)),
        Variant(("missing_2",), v(layout="interleaved", missing_2=True)),
        Variant(("base_ignored",), ignored_base),
    ]
    return run_checker(
        "check_rerotate_keys",
        "your re-rotated keys",
        fn,
        cases,
        _REROTATE,
        variants,
        shape_doc=" = keys.shape",
    )
