r"""The checkers of chapter 18's exercises: KERPLE's kernels and FIRE's normalised distance.

:func:`check_kerple_bias` checks ``fn(r1, r2, L)`` (the bidirectional KERPLE bias
``(H, L, L)``, log or power kernel) against :func:`~posenc.bias_families.kerple_bias` and
names the known mistakes: the logarithmic kernel without the ``1 +`` (``ln(r2 |i-j|)``,
infinite on the diagonal), the sign flipped, ``r1`` and ``r2`` swapped, the exponent
ignored (ALiBi's line ``-r1 |i-j|`` reused), the exponent applied to ``r1 |i-j|``, a
base-10 logarithm. :func:`check_fire_distances` checks ``fn(q_len, k_len, c,
threshold)`` (FIRE's normalised distances) against :func:`~posenc.bias_families.fire_bias`
and names: normalising by the key position instead of the query position, by the query's
row instead of its absolute position, by the sequence length (no progressive
interpolation), no logarithm, ``c`` ignored.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from .._arrays import is_real_dtype
from ..alibi import alibi_slopes
from ..bias_families import fire_bias, kerple_bias
from ._runner import (
    Case,
    Variant,
    call_case,
    check_fn,
    mistake_error,
    register_mistakes,
    run_checker,
    short_repr,
)

_KERPLE = register_mistakes(
    "check_kerple_bias",
    no_one_plus=(
        "log kernel without the 1+",
        "the logarithmic kernel is -r1 * ln(1 + r2 |i-j|). Without the 1 it is infinite at |i-j| = 0 "
        "(the diagonal) and positive for r2 |i-j| < 1: a query would be pushed towards far keys. "
        "np.log1p(r2 * d) computes ln(1 + r2 d) accurately.",
    ),
    sign=(
        "sign flipped (a reward for distance)",
        "the kernel is subtracted: -r1 * k(|i-j|) with r1 > 0, so far keys get a more negative score. "
        "ALiBi's slopes are positive numbers m_h and its bias is -m_h |i-j|: reuse m_h as r1 with the minus.",
    ),
    swapped=(
        "r1 and r2 swapped",
        "r1 multiplies the kernel (the scale, ALiBi's slope) and r2 is inside it (the exponent of the power "
        "kernel, the rate of the log kernel).",
    ),
    line=(
        "exponent ignored (ALiBi's line reused)",
        "the power kernel is -r1 |i-j|**r2; -r1 |i-j| is only its special case r2 = 1 "
        "(ALiBi with slopes r1).",
    ),
    power_of_product=(
        "exponent applied to r1 |i-j|",
        "the exponent acts on the distance only: -r1 * |i-j|**r2, not -(r1 |i-j|)**r2.",
    ),
    log10=(
        "base-10 logarithm",
        "KERPLE's logarithm is the natural one: np.log1p(r2 * d) (or np.log(1 + r2 * d)), not np.log10.",
    ),
)

_FIRE = register_mistakes(
    "check_fire_distances",
    key_position=(
        "normalised by the key position instead of the query position",
        "FIRE divides psi(i - j) by psi(max(L, i)) with i the QUERY position: the query sees all keys "
        "0..i, so its farthest key lands at 1. Dividing by psi(max(L, j)) makes the normaliser change "
        "along the row.",
    ),
    row_index=(
        "query row index instead of the absolute query position",
        "the queries are the last q_len of k_len positions: row a is position i = a + k_len - q_len "
        "(as when decoding with a cache), both in |i - j| and in max(L, i).",
    ),
    sequence_length=(
        "normalised by the sequence length (no progressive interpolation)",
        "the normaliser is psi(max(L, i)) for each query i, not one constant for the whole sequence: "
        "each query's own farthest key is mapped to 1.",
    ),
    no_log=(
        "no logarithm (psi(x) = x)",
        "FIRE's psi is psi(x) = ln(c x + 1) (np.log1p(c * x)), applied to both the distance and the "
        "normaliser.",
    ),
    c_ignored=(
        "c argument ignored",
        "use the c you are given inside psi(x) = ln(c x + 1), not c = 1.",
    ),
)


def _distances(n: int) -> np.ndarray:
    idx = np.arange(n)
    return np.abs(idx[:, None] - idx[None, :]).astype(np.float64)


def _kerple_kernel(r1: np.ndarray, r2: np.ndarray, n: int, kernel: Callable) -> np.ndarray:
    d = _distances(n)[None]
    return kernel(r1[:, None, None], r2[:, None, None], d)


def check_kerple_bias(fn: Callable, kind: str = "log") -> str:
    r"""Check ``fn(r1, r2, L)``, the bidirectional KERPLE bias ``(H, L, L)``, of kind ``"log"``/``"power"``.

    ``r1``, ``r2`` are float64 arrays of ``H`` positive numbers (one per head); the result
    must be a float64 array equal to ``posenc.kerple_bias(r1, r2, L, kind=kind,
    causal=False)``: :math:`-r_1 \ln(1 + r_2\lvert i-j\rvert)` (log) or
    :math:`-r_1 \lvert i-j\rvert^{r_2}` (power), to ``1e-10`` relative to the size of the
    entries. The power cases include ALiBi's slopes with :math:`r_2 = 1`.

    Recognised mistakes: the log kernel without the ``1 +`` (checked off the diagonal, where
    it is finite), the sign flipped, ``r1`` and ``r2`` swapped, the exponent ignored
    (ALiBi's line), the exponent applied to ``r1 |i-j|``, a base-10 logarithm.
    """
    check_fn("check_kerple_bias", fn)
    if not isinstance(kind, str) or kind not in ("log", "power"):
        raise (ValueError if isinstance(kind, str) else TypeError)(
            f"check_kerple_bias: the argument kind must be 'log' or 'power', got {short_repr(kind)}"
        )
    specs = [
        (np.array([1.0]), np.array([1.0]), 5),
        (np.array([0.5, 2.0]), np.array([0.3, 1.5]), 7),
        (np.array([1.7, 0.2, 0.9]), np.array([1.9, 0.6, 1.2]), 6),
        (alibi_slopes(8), np.full(8, 0.7), 9),
        (np.array([3.0, 0.25]), np.array([0.5, 2.0]), 12),
    ]
    if kind == "power":
        specs.append((alibi_slopes(4), np.ones(4), 10))  # ALiBi as the power kernel at r2 = 1
    cases = []
    for r1, r2, n in specs:
        expected = kerple_bias(r1, r2, n, kind=kind, causal=False)
        scale = float(np.abs(expected).max()) or 1.0
        r1_text, r2_text = (np.array2string(a, precision=4, separator=", ") for a in (r1, r2))
        label = f"r1={r1_text}, r2={r2_text}, L={n}"
        cases.append(Case((r1.copy(), r2.copy(), n), {}, expected, 1e-10 * scale, label))

    def variant(kernel: Callable) -> Callable[[Case], np.ndarray]:
        return lambda case: _kerple_kernel(case.args[0], case.args[1], case.args[2], kernel)

    if kind == "log":
        if _matches_without_one_plus(fn, cases):
            raise mistake_error("your KERPLE bias (log)", _KERPLE, ("no_one_plus",))
        variants = [
            Variant(("sign",), variant(lambda a, b, d: a * np.log1p(b * d))),
            Variant(("swapped",), variant(lambda a, b, d: -b * np.log1p(a * d))),
            Variant(("log10",), variant(lambda a, b, d: -a * np.log10(1.0 + b * d))),
            Variant(("line",), variant(lambda a, b, d: -a * d)),
        ]
    else:
        variants = [
            Variant(("sign",), variant(lambda a, b, d: a * d**b)),
            Variant(("swapped",), variant(lambda a, b, d: -b * d**a)),
            Variant(("line",), variant(lambda a, b, d: -a * d)),
            Variant(("line", "sign"), variant(lambda a, b, d: a * d)),
            Variant(("power_of_product",), variant(lambda a, b, d: -((a * d) ** b))),
        ]
    return run_checker(
        "check_kerple_bias",
        f"your KERPLE bias ({kind})",
        fn,
        cases,
        _KERPLE,
        variants,
        variant_tol=1e-8,
        shape_doc=" = (len(r1), L, L)",
    )


def _matches_without_one_plus(fn: Callable, cases: list[Case]) -> bool:
    """True if ``fn`` gives -r1 ln(r2 |i-j|) off the diagonal on every case (any diagonal)."""
    for case in cases:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                out = call_case(fn, case, "your KERPLE bias (log)")
            except Exception:  # the run proper reports it
                return False
            if not isinstance(out, np.ndarray) or out.shape != case.expected.shape:
                return False
            if not is_real_dtype(out.dtype):
                return False
            r1, r2, n = case.args
            wrong = _kerple_kernel(r1, r2, n, lambda a, b, d: -a * np.log(b * d))
            off = ~np.eye(n, dtype=bool)
            got = np.asarray(out, dtype=np.float64)[:, off]
            if not np.allclose(got, wrong[:, off], rtol=1e-8, atol=1e-12):
                return False
    return True


def check_fire_distances(fn: Callable) -> str:
    r"""Check ``fn(q_len, k_len, c, threshold)``: FIRE's normalised distances, shape ``(q_len, k_len)``.

    Entry ``[a, j]`` must be :math:`\psi(\lvert i - j\rvert)/\psi(\max(L, i))` with
    :math:`\psi(x) = \ln(c x + 1)`, :math:`L` = ``threshold`` and :math:`i = a + k_{len} -
    q_{len}` the absolute position of query row :math:`a` (the queries are the last
    ``q_len`` of ``k_len`` positions), at every entry (no mask): what
    ``posenc.fire_bias(lambda u: u, q_len, k_len, c=c, threshold=threshold,
    causal=False)`` returns, to ``1e-12``.

    Recognised mistakes: normalising by the key position :math:`\max(L, j)`, by the query's
    row instead of its absolute position, by the sequence length (one normaliser for all
    queries), no logarithm (:math:`\psi(x) = x`), ``c`` ignored.
    """
    specs = [
        (6, 6, 1.0, 1.0),
        (8, 8, 0.5, 3.0),
        (4, 9, 2.0, 2.0),
        (5, 12, 0.1, 4.0),
        (1, 7, 1.0, 2.5),
        (9, 9, 3.0, 1.5),
    ]
    cases = []
    for q, k, c, thr in specs:
        expected = fire_bias(lambda u: u, q, k, c=c, threshold=thr, causal=False)
        cases.append(
            Case((q, k, c, thr), {}, expected, 1e-12, f"q_len={q}, k_len={k}, c={c}, threshold={thr}")
        )

    def grid(case: Case) -> tuple[np.ndarray, np.ndarray]:
        q, k = case.args[0], case.args[1]
        i = np.arange(q)[:, None] + (k - q)
        j = np.arange(k)[None, :]
        return i.astype(np.float64), j.astype(np.float64)

    def v(*, norm: str = "query", psi_log: bool = True, row: bool = False, c_one: bool = False):
        def compute(case: Case) -> np.ndarray:
            q, k, c, thr = case.args
            c = 1.0 if c_one else c
            i, j = grid(case)
            if row:
                i = i - (k - q)

            def psi(x):
                return np.log1p(c * x) if psi_log else x

            num = psi(np.abs(i - j))
            if norm == "query":
                den = psi(np.maximum(thr, i))
            elif norm == "key":
                den = psi(np.maximum(thr, j))
            else:
                den = psi(np.maximum(thr, float(k - 1)))
            return np.broadcast_to(num / den, (q, k)).copy()

        return compute

    variants = [
        Variant(("key_position",), v(norm="key")),
        Variant(("row_index",), v(row=True)),
        Variant(("sequence_length",), v(norm="length")),
        Variant(("no_log",), v(psi_log=False)),
        Variant(("c_ignored",), v(c_one=True)),
    ]
    return run_checker(
        "check_fire_distances",
        "your FIRE distances",
        fn,
        cases,
        _FIRE,
        variants,
        shape_doc=" = (q_len, k_len)",
    )
