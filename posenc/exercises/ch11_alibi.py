r"""The checker of chapter 11's exercise: ALiBi's head slopes.

:func:`check_alibi_slopes` checks ``fn(n_heads)`` against :func:`~posenc.alibi.alibi_slopes`
(Press et al.'s slopes, in their order) and names the known mistakes: :math:`2^{-8h/n}` for
a head count that is not a power of two, rounding up to a power of two and truncating,
the right slopes sorted, consecutive instead of every other slope of the :math:`2N`-head
sequence, the even-numbered (duplicate) slopes appended, an off-by-one start.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..alibi import alibi_slopes
from ._runner import Case, Variant, register_mistakes, run_checker

_ALIBI = register_mistakes(
    "check_alibi_slopes",
    geometric=(
        "2^(-8h/n) for a non-power-of-two head count",
        "the geometric sequence 2**(-8h/n) is Press et al.'s rule only when n is a power of two. "
        "Otherwise take the N slopes of the largest power of two N < n and append the first n - N "
        "odd-numbered slopes 2**(-8h/(2N)), h = 1, 3, 5, ...",
    ),
    round_up=(
        "rounded up to a power of two and truncated",
        "taking the first n of the 2**(-8h/C) slopes for the next power of two C drops the gentlest "
        "slopes; the rule keeps all N slopes of the power of two below n and appends midpoints.",
    ),
    sorted=(
        "right slopes, wrong order (sorted)",
        "the rule's order is the N-head sequence first, then the appended midpoints (steepest first): "
        "do not sort; each head keeps its slope.",
    ),
    consecutive=(
        "consecutive instead of every other slope of the 2N-head sequence",
        "append 2**(-8h/(2N)) for the odd h = 1, 3, 5, ..., not h = 1, 2, 3, ...",
    ),
    duplicates=(
        "even-numbered (duplicate) slopes appended",
        "the even-numbered slopes of the 2N-head sequence, 2**(-8*2k/(2N)) = 2**(-8k/N), are the "
        "N-head slopes again; append the odd-numbered ones, h = 1, 3, 5, ...",
    ),
    off_by_one=(
        "off by one: h starts at 0 (first slope 1)",
        "the slopes are 2**(-8h/n) for h = 1..n: the first is 2**(-8/n), the last 2**(-8).",
    ),
)


def check_alibi_slopes(fn: Callable) -> str:
    r"""Check ``fn(n_heads)`` against :func:`~posenc.alibi.alibi_slopes` for ``n_heads = 1..64`` and more.

    The result must be a float64 array of the ``n_heads`` slopes in Press et al.'s order
    (relative tolerance ``1e-10``). Recognised mistakes: :math:`2^{-8h/n}` for every ``n``
    (wrong for non-powers of two), rounding ``n`` up to a power of two and truncating, the
    right slopes sorted (wrong order), consecutive instead of every other slope of the
    :math:`2N`-head sequence, the even-numbered (duplicate) slopes appended, an off-by-one
    start (:math:`2^{-8(h-1)/n}`, first slope 1).
    """
    ns = list(range(1, 65)) + [80, 96, 100, 128]
    cases = [Case((n,), {}, alibi_slopes(n), 1e-10, f"n_heads={n}") for n in ns]

    def geo(n: int, start: int = 1) -> np.ndarray:
        return 2.0 ** (-8.0 * np.arange(start, n + start) / n)

    def lower(n: int) -> int:
        return 1 << (n.bit_length() - 1)

    def upper(n: int) -> int:
        return 1 << ((n - 1).bit_length())

    def rule(n: int, tail: Callable[[int, int], np.ndarray]) -> np.ndarray:
        N = lower(n)
        return geo(N) if N == n else np.concatenate([geo(N), tail(N, n - N)])

    def off_by_one(n: int) -> np.ndarray:
        N = lower(n)
        head = geo(N, start=0)
        return head if N == n else np.concatenate([head, geo(2 * N, start=0)[0::2][: n - N]])

    variants = [
        Variant(("geometric",), lambda c: geo(c.args[0])),
        Variant(("round_up",), lambda c: geo(upper(c.args[0]))[: c.args[0]]),
        Variant(("sorted",), lambda c: np.sort(alibi_slopes(c.args[0]))[::-1]),
        Variant(("consecutive",), lambda c: rule(c.args[0], lambda N, k: geo(2 * N)[:k])),
        Variant(("duplicates",), lambda c: rule(c.args[0], lambda N, k: geo(2 * N)[1::2][:k])),
        Variant(("off_by_one",), lambda c: off_by_one(c.args[0])),
    ]
    return run_checker(
        "check_alibi_slopes",
        "your ALiBi slopes",
        fn,
        cases,
        _ALIBI,
        variants,
        relative=True,
        shape_doc=" = (n_heads,)",
    )
