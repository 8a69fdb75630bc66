r"""Self-checking helpers for the book's code exercises.

Each ``check_*`` function runs a student's function on many inputs and compares it with
the ``posenc`` reference. On success it returns a short string (``"correct on 57
inputs"``). On failure it raises :class:`ExerciseError` (an ``AssertionError``). Before
giving up with a generic message it *diagnoses* the failure: it computes the known wrong
variants of the exercise (the classic mistakes, e.g. the concatenated instead of the
interleaved layout, or the gradient of one batch element instead of the batch sum) and,
if the student's outputs agree with one of them on every input, names that mistake and
gives a hint. The mistake's short name is in ``ExerciseError.mistake``.

Checkers: :func:`check_sinusoidal_encoding` (the sinusoidal table, chapter 3),
:func:`check_relative_position_matrix` (the shift matrix :math:`M_k`, chapter 4),
:func:`check_learned_backward` (backward pass of a learned table, chapter 8),
:func:`check_rope` (rotary embedding, interleaved or half layout, chapter 9),
:func:`check_t5_bucket` (T5's relative-position buckets, chapter 10) and
:func:`check_alibi_slopes` (ALiBi head slopes, chapter 11).

``KNOWN_MISTAKES`` lists, for each checker, the mistakes it recognises. Importing this
module loads numpy and ``posenc`` only (no sympy, no matplotlib). A student function that
raises ``NotImplementedError`` (the stub of the student edition) propagates unchanged.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .alibi import alibi_slopes
from .relative import t5_relative_position_bucket
from .rope import apply_rope
from .sinusoidal import frequencies, relative_position_matrix, sinusoidal_encoding

__all__ = [
    "ExerciseError",
    "KNOWN_MISTAKES",
    "check_alibi_slopes",
    "check_learned_backward",
    "check_relative_position_matrix",
    "check_rope",
    "check_sinusoidal_encoding",
    "check_t5_bucket",
]


class ExerciseError(AssertionError):
    """A student's function disagrees with the reference.

    ``mistake`` is the short name of the recognised mistake (a key of the checker's entry
    in ``KNOWN_MISTAKES``, or a combination joined by ``" + "``), or ``None`` when the
    failure matches no known mistake.
    """

    def __init__(self, message: str, mistake: str | None = None) -> None:
        super().__init__(message)
        self.mistake = mistake


@dataclass(frozen=True)
class _Case:
    """One input: positional/keyword arguments for the student's function and the reference output."""

    args: tuple
    kwargs: dict
    expected: object
    tol: float
    label: str
    large: bool = False  # positions beyond float32's exact integers: skipped when matching a mistake


def _describe(case: _Case) -> str:
    return case.label


def _call(fn: Callable, case: _Case, name: str) -> object:
    try:
        return fn(*case.args, **case.kwargs)
    except NotImplementedError:
        raise
    except Exception as exc:  # the student's code failed: say where
        raise ExerciseError(
            f"{name} raised {type(exc).__name__}: {exc}\n  on input {_describe(case)}", mistake="exception"
        ) from exc


def _as_float_array(value: object) -> np.ndarray | None:
    try:
        arr = np.asarray(value)
    except Exception:
        return None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        return None
    return arr


def _close(got: np.ndarray | None, expected: np.ndarray, tol: float, *, exact: bool = False) -> bool:
    if got is None or got.shape != expected.shape:
        return False
    if exact:
        return bool(np.array_equal(got, expected))
    if not np.all(np.isfinite(got)):
        return False
    return bool(np.max(np.abs(got.astype(np.float64) - expected), initial=0.0) <= tol)


def _error(got: np.ndarray | None, expected: np.ndarray) -> str:
    if got is None:
        return "the result is not a numeric array"
    if got.shape != expected.shape:
        return f"the result has shape {got.shape}, expected {expected.shape}"
    if not np.all(np.isfinite(got)):
        return "the result contains NaN or infinity"
    diff = np.abs(got.astype(np.float64) - expected)
    where = np.unravel_index(int(np.argmax(diff)), diff.shape)
    return (
        f"largest difference {float(diff[where]):.3g} at index {tuple(int(i) for i in where)}: "
        f"got {got[where]!r}, expected {expected[where]!r}"
    )


@dataclass(frozen=True)
class _Variant:
    """A known mistake: ``compute(case)`` is the wrong output it produces on ``case``."""

    name: str
    hint: str
    compute: Callable[[_Case], np.ndarray]


def _run(
    name: str,
    fn: Callable,
    cases: Sequence[_Case],
    variants: Iterable[_Variant],
    *,
    exact: bool = False,
    extra_diagnosis: Callable[[list[np.ndarray | None], list[bool]], tuple[str, str] | None] | None = None,
) -> str:
    """Compare ``fn`` with the reference on ``cases``; diagnose and raise on a mismatch."""
    if not callable(fn):
        raise TypeError(f"expected a function, got {fn!r}")
    outputs = [_as_float_array(_call(fn, case, name)) for case in cases]
    ok = [
        _close(out, np.asarray(case.expected), case.tol, exact=exact)
        for out, case in zip(outputs, cases, strict=True)
    ]
    if all(ok):
        return f"correct on {len(cases)} inputs"
    # A wrong variant is matched on the moderate inputs with a looser tolerance: its angles
    # (e.g. p / w_i) can be far larger than the reference's, and so is their rounding error.
    for variant in variants:
        if all(
            _close(out, np.asarray(variant.compute(case)), max(case.tol, 1e-6), exact=exact)
            for out, case in zip(outputs, cases, strict=True)
            if not case.large
        ):
            raise ExerciseError(
                f"{name} is not correct: known mistake '{variant.name}'.\n  Hint: {variant.hint}",
                mistake=variant.name,
            )
    if extra_diagnosis is not None:
        found = extra_diagnosis(outputs, ok)
        if found is not None:
            mistake, hint = found
            raise ExerciseError(
                f"{name} is not correct: known mistake '{mistake}'.\n  Hint: {hint}", mistake=mistake
            )
    first = ok.index(False)
    case = cases[first]
    raise ExerciseError(
        f"{name} is wrong on {ok.count(False)} of {len(cases)} inputs (no known mistake matches).\n"
        f"  First failing input: {_describe(case)}\n  {_error(outputs[first], np.asarray(case.expected))}",
        mistake=None,
    )


# --------------------------------------------------------------------------------------
# Sinusoidal encoding (chapter 3)
# --------------------------------------------------------------------------------------

_SIN_FLAGS = {
    "split": (
        "concatenated (split) instead of interleaved",
        "Vaswani et al. interleave the pairs: column 2i holds sin(p*w_i) and column 2i+1 holds "
        "cos(p*w_i). Putting all sines first and all cosines after them is the 'split' layout.",
    ),
    "division": (
        "division instead of multiplication",
        "the angle is p * w_i with w_i = base**(-2i/d); dividing p by w_i (p / w_i = p * base**(2i/d)) "
        "makes the slow pairs the fastest ones.",
    ),
    "swapped": (
        "sin and cos swapped",
        "the even column 2i holds the sine and the odd column 2i+1 the cosine (row 0 is 0, 1, 0, 1, ...).",
    ),
    "missing_2": (
        "missing factor 2 in the exponent 2i/d",
        "w_i = base**(-2i/d) with i the pair index 0..d/2-1; base**(-i/d) only reaches base**(-1/2).",
    ),
    "column_index": (
        "column index instead of pair index in the exponent",
        "both columns 2i and 2i+1 of pair i use the same frequency w_i = base**(-2i/d); using "
        "base**(-j/d) for column j gives the cosine a different frequency than its sine.",
    ),
    "base_ignored": (
        "base argument ignored",
        "use the base you are given (e.g. base=500 or 1e6), not the constant 10000.",
    ),
}


def _sinusoid_variant(
    positions: np.ndarray,
    d: int,
    base: float,
    *,
    split: bool = False,
    division: bool = False,
    swapped: bool = False,
    exponent: str = "pair",
) -> np.ndarray:
    pos = np.asarray(positions, dtype=np.float64)[:, None]
    half = d // 2
    if exponent == "pair":
        expo_sin = expo_cos = 2.0 * np.arange(half) / d
    elif exponent == "missing_2":
        expo_sin = expo_cos = np.arange(half) / d
    else:  # column index
        expo_sin, expo_cos = np.arange(0, d, 2) / d, np.arange(1, d, 2) / d
    omega_sin = frequencies(d, base) if exponent == "pair" else base ** (-expo_sin)
    omega_cos = frequencies(d, base) if exponent == "pair" else base ** (-expo_cos)
    if division:
        a_sin, a_cos = pos / omega_sin, pos / omega_cos
    else:
        a_sin, a_cos = pos * omega_sin, pos * omega_cos
    first, second = np.sin(a_sin), np.cos(a_cos)
    if swapped:
        first, second = np.cos(a_sin), np.sin(a_cos)
    out = np.empty((pos.shape[0], d))
    if split:
        out[:, :half], out[:, half:] = first, second
    else:
        out[:, 0::2], out[:, 1::2] = first, second
    return out


def _position_tol(positions: np.ndarray, scale: float = 1.0) -> float:
    # float64 angles computed with a naive base**x are a few ulp off in w_i, so the angle
    # error grows like |p| * 1e-15; allow that, and nothing like float32's 6e-8 * |p|.
    return 1e-9 + 1e-14 * scale * float(np.max(np.abs(positions), initial=0.0))


def _sinusoid_cases() -> list[_Case]:
    rng = np.random.default_rng(0)
    cases = []
    specs: list[tuple[np.ndarray, int, float]] = []
    for d in (2, 4, 6, 8, 16, 32, 64, 128, 512):
        specs.append((np.arange(50, dtype=np.float64), d, 10000.0))
    for d, base in ((8, 500.0), (16, 1e6), (64, 10.0), (32, 2.0**16)):
        specs.append((np.arange(40, dtype=np.float64), d, base))
    for d in (4, 16, 64):
        specs.append((rng.uniform(-1000.0, 1000.0, size=30), d, 10000.0))
        specs.append((np.sort(rng.integers(0, 5000, size=30)).astype(np.float64), d, 10000.0))
    # large positions: beyond float32's exact integers (2**24), where float32 angles are wrong
    for d in (8, 64):
        specs.append((np.array([123_456_789.0, 98_765_431.0, 2.0**27 + 3.0, 16_777_217.0]), d, 10000.0))
    for positions, d, base in specs:
        label = (
            f"positions={np.array2string(positions[:4], precision=3, separator=', ')}"
            f"{'...' if positions.size > 4 else ''} (len {positions.size}), d_model={d}, base={base:g}"
        )
        cases.append(
            _Case(
                args=(positions.copy(), d),
                kwargs={"base": base},
                expected=sinusoidal_encoding(positions, d, base=base),
                tol=_position_tol(positions),
                label=label,
                large=bool(np.max(np.abs(positions), initial=0.0) >= 2.0**20),
            )
        )
    return cases


def _sinusoid_variants() -> list[_Variant]:
    variants = []
    # every combination of the structural mistakes, fewest mistakes first
    flags = ("split", "division", "swapped")
    combos = []
    for exponent in ("pair", "missing_2", "column_index"):
        for chosen in itertools.product((False, True), repeat=3):
            names = [f for f, on in zip(flags, chosen, strict=True) if on] + (
                [exponent] if exponent != "pair" else []
            )
            if names:
                combos.append((len(names), exponent, chosen, names))
    combos.sort(key=lambda c: c[0])
    for _, exponent, chosen, names in combos:
        kw = dict(zip(flags, chosen, strict=True))

        def compute(case: _Case, kw=kw, exponent=exponent) -> np.ndarray:
            positions, d = case.args
            return _sinusoid_variant(positions, d, case.kwargs["base"], exponent=exponent, **kw)

        variants.append(
            _Variant(
                " + ".join(_SIN_FLAGS[n][0] for n in names),
                " ".join(_SIN_FLAGS[n][1] for n in names),
                compute,
            )
        )
    variants.append(
        _Variant(
            _SIN_FLAGS["base_ignored"][0],
            _SIN_FLAGS["base_ignored"][1],
            lambda case: sinusoidal_encoding(case.args[0], case.args[1]),
        )
    )
    return variants


def _float32_diagnosis(
    cases: Sequence[_Case], outputs: list[np.ndarray | None], ok: list[bool], *, large: float = 2.0**24
) -> tuple[str, str] | None:
    """float32 angles: right to float32 accuracy at small positions, wrong at large ones."""
    small_ok, large_bad, any_large = True, False, False
    for case, out, good in zip(cases, outputs, ok, strict=True):
        positions = np.asarray(case.kwargs.get("positions", case.args[0] if case.args else None))
        expected = np.asarray(case.expected)
        if out is None or out.shape != expected.shape:
            return None
        is_large = positions is not None and positions.size and float(np.max(np.abs(positions))) >= large
        if is_large:
            any_large = True
            large_bad = large_bad or not good
        elif not _close(out, expected, 1e-4 + 1e-6 * float(np.max(np.abs(positions), initial=0.0))):
            small_ok = False
    if small_ok and any_large and (large_bad or any(o is not None and o.dtype.itemsize < 8 for o in outputs)):
        return (
            "float32 angles at large positions",
            "form the angles p * w_i in float64 (np.float64 positions and frequencies) and cast only the "
            "final result if you need float32; float32 has 24 bits, so above 2**24 the positions "
            "themselves are rounded and the angle error at p ~ 1e8 is several radians.",
        )
    return None


def check_sinusoidal_encoding(fn: Callable) -> str:
    r"""Check ``fn(positions, d_model, base=10000.0)`` against :func:`~posenc.sinusoidal.sinusoidal_encoding`.

    ``positions`` is a 1-D float64 array, the result must be the interleaved
    ``(len(positions), d_model)`` table (column ``2i`` = :math:`\sin(p\omega_i)`, column
    ``2i+1`` = :math:`\cos(p\omega_i)`, :math:`\omega_i = \mathrm{base}^{-2i/d}`).
    Inputs: widths 2 to 512, bases 2**16, 10, 500, 1e6, negative and non-integer
    positions, and positions above :math:`2^{24}`. Tolerance ``1e-9 + 1e-14·max|p|``.

    Recognised mistakes (and any combination of the first five): concatenated (split)
    layout, division instead of multiplication, sin/cos swapped, missing factor 2 in
    ``2i/d``, column index ``j/d`` instead of pair index, the ``base`` argument ignored,
    float32 angles at large positions.
    """
    cases = _sinusoid_cases()
    return _run(
        "your sinusoidal encoding",
        fn,
        cases,
        _sinusoid_variants(),
        extra_diagnosis=lambda outputs, ok: _float32_diagnosis(cases, outputs, ok),
    )


# --------------------------------------------------------------------------------------
# Relative position matrix M_k (chapter 4)
# --------------------------------------------------------------------------------------


def _block_matrix(d: int, angles: np.ndarray, *, sign: float = 1.0) -> np.ndarray:
    c, s = np.cos(angles), sign * np.sin(angles)
    m = np.zeros((d, d))
    idx = np.arange(d // 2)
    m[2 * idx, 2 * idx] = c
    m[2 * idx, 2 * idx + 1] = s
    m[2 * idx + 1, 2 * idx] = -s
    m[2 * idx + 1, 2 * idx + 1] = c
    return m


def check_relative_position_matrix(fn: Callable) -> str:
    r"""Check ``fn(d_model, offset, base=10000.0)`` against the reference shift matrix.

    The reference is :func:`~posenc.sinusoidal.relative_position_matrix`.

    The result must be the ``(d_model, d_model)`` matrix :math:`M_k` with
    :math:`PE_{p+k} = M_k PE_p` in the interleaved layout. Inputs: widths 2 to 128, integer,
    negative, fractional and large offsets, several bases.

    Recognised mistakes: :math:`M_{-k} = M_k^\top` (sine sign flipped, or the matrix for
    row vectors), the matrix of the split layout, division instead of multiplication,
    missing factor 2 in ``2i/d``, the ``base`` argument ignored, the identity / a matrix
    that does not depend on the offset.
    """
    cases = []
    for d in (2, 4, 8, 16, 64, 128):
        for k in (1, 2, 5, -3, 0.5, 37, 1000):
            cases.append(
                _Case(
                    (d, k),
                    {"base": 10000.0},
                    relative_position_matrix(d, k),
                    1e-9 + 1e-14 * abs(k),
                    f"d_model={d}, offset={k}, base=10000",
                )
            )
    for d, base in ((8, 500.0), (16, 1e6)):
        cases.append(
            _Case(
                (d, 3),
                {"base": base},
                relative_position_matrix(d, 3, base=base),
                1e-9,
                f"d_model={d}, offset=3, base={base:g}",
            )
        )

    def angles(case: _Case, *, division: bool = False, missing_2: bool = False) -> np.ndarray:
        d, k = case.args
        base = case.kwargs["base"]
        omega = base ** (-np.arange(d // 2) / d) if missing_2 else frequencies(d, base)
        return k / omega if division else k * omega

    variants = [
        _Variant(
            "M_{-k} (transposed: sine sign flipped)",
            "M_k maps the pair (sin p*w, cos p*w) to (sin (p+k)w, cos (p+k)w) = "
            "(cos kw * sin pw + sin kw * cos pw, -sin kw * sin pw + cos kw * cos pw): the +sin is in the "
            "first row. The textbook rotation [[c, -s], [s, c]] acts on (cos, sin) pairs, and the "
            "transpose is the map for row vectors (PE[p] @ M).",
            lambda case: _block_matrix(case.args[0], angles(case), sign=-1.0),
        ),
        _Variant(
            "matrix for the split layout",
            "the exercise uses the interleaved layout: pair i occupies columns 2i and 2i+1, so the "
            "2x2 blocks sit on the diagonal; the split layout pairs columns i and i + d/2.",
            lambda case: relative_position_matrix(
                case.args[0], case.args[1], base=case.kwargs["base"], layout="split"
            ),
        ),
        _Variant(
            "division instead of multiplication",
            "block i rotates by the angle k * w_i, not k / w_i.",
            lambda case: _block_matrix(case.args[0], angles(case, division=True)),
        ),
        _Variant(
            "missing factor 2 in the exponent 2i/d",
            "w_i = base**(-2i/d) for the pair index i = 0..d/2-1.",
            lambda case: _block_matrix(case.args[0], angles(case, missing_2=True)),
        ),
        _Variant(
            "base argument ignored",
            "use the base you are given, not the constant 10000.",
            lambda case: relative_position_matrix(case.args[0], case.args[1]),
        ),
    ]
    return _run("your relative position matrix", fn, cases, variants)


# --------------------------------------------------------------------------------------
# Learned embedding backward pass (chapter 8)
# --------------------------------------------------------------------------------------


def check_learned_backward(fn: Callable) -> str:
    r"""Check ``fn(grad_output, max_len) -> (grad_X, grad_E)`` for :math:`Y = X + E_{:L}`.

    ``grad_output`` has shape ``(B, L, d)``; the reference is ``grad_X = grad_output`` and
    ``grad_E`` of shape ``(max_len, d)`` with rows ``:L`` the batch **sum** of
    ``grad_output`` and rows ``L:`` zero (as :meth:`~posenc.learned.LearnedPositionalEncoding.backward`).
    Inputs: ``B`` from 1 to 6, ``L`` up to ``max_len``. Each input is passed twice, to
    catch state kept between calls, and ``grad_output`` must not be modified.

    Recognised mistakes: gradient of the first (or last) batch element only, mean instead
    of sum over the batch, only ``L`` rows
    returned (rows ``L:`` missing), ``grad_X`` summed over the batch, gradient accumulated
    across calls, ``grad_output`` modified in place.
    """
    rng = np.random.default_rng(8)
    specs = [
        (1, 5, 8, 3),
        (2, 5, 8, 3),
        (3, 4, 4, 2),
        (4, 7, 10, 5),
        (6, 3, 3, 1),
        (2, 1, 6, 4),
        (5, 16, 32, 8),
    ]
    specs += [
        (int(rng.integers(2, 6)), int(L), int(L + rng.integers(0, 5)), int(rng.integers(1, 7)))
        for L in rng.integers(1, 12, size=8)
    ]
    cases = []
    for B, L, max_len, d in specs:
        g = rng.normal(size=(B, L, d))
        grad_E = np.zeros((max_len, d))
        grad_E[:L] = g.sum(axis=0)
        cases.append(
            _Case(
                (g, max_len),
                {},
                (g.copy(), grad_E),
                1e-12,
                f"grad_output of shape {(B, L, d)}, max_len={max_len}",
            )
        )

    name = "your backward"
    results = []
    for case in cases:
        g = case.args[0]
        before = g.copy()
        out = _call(fn, case, name)
        if not np.array_equal(g, before):
            raise ExerciseError(
                f"{name} is not correct: known mistake 'grad_output modified in place'.\n"
                "  Hint: the upstream gradient belongs to the caller; build grad_E in a new array "
                "(np.zeros((max_len, d))) and return a copy of grad_output as grad_X.",
                mistake="grad_output modified in place",
            )
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ExerciseError(
                f"{name} must return a pair (grad_X, grad_E), got {type(out).__name__}\n"
                f"  on input {case.label}",
                mistake="wrong return value",
            )
        again = _call(fn, _Case((before.copy(), case.args[1]), {}, None, 0.0, case.label), name)
        if isinstance(again, tuple) and len(again) == 2:
            first_e, second_e = _as_float_array(out[1]), _as_float_array(again[1])
            if first_e is not None and second_e is not None and first_e.shape == second_e.shape:
                if not np.allclose(first_e, second_e, atol=1e-12) and np.abs(before).max() > 0:
                    raise ExerciseError(
                        f"{name} is not correct: known mistake 'gradient accumulated across calls'.\n"
                        "  Hint: the same grad_output gave a different grad_E on the second call; "
                        "recompute grad_E from zeros in every call instead of adding to a stored array.",
                        mistake="gradient accumulated across calls",
                    )
        results.append((_as_float_array(out[0]), _as_float_array(out[1])))

    def ok_pair(res: tuple, expected: tuple) -> bool:
        return _close(res[0], expected[0], 1e-12) and _close(res[1], expected[1], 1e-12)

    if all(ok_pair(r, c.expected) for r, c in zip(results, cases, strict=True)):
        return f"correct on {len(cases)} inputs"

    def grad_e(rows: Callable[[np.ndarray], np.ndarray], case: _Case, full: bool = True) -> np.ndarray:
        g, max_len = case.args
        r = rows(g)
        if not full:
            return r
        out = np.zeros((max_len, g.shape[2]))
        out[: r.shape[0]] = r
        return out

    e_variants = [
        (
            "gradient of only the first batch element",
            lambda g: g[0],
            "row p of E is used by all B sequences, so its gradient is the sum over the batch, "
            "grad_output.sum(axis=0), not grad_output[0]. A test with B = 1 cannot see this.",
        ),
        (
            "gradient of only the last batch element",
            lambda g: g[-1],
            "the loop over the batch overwrites instead of adding: sum over the batch axis.",
        ),
        (
            "mean instead of sum over the batch",
            lambda g: g.mean(axis=0),
            "the loss already contains whatever averaging it wants; the chain rule sums the "
            "contributions of the B sequences, it does not average them.",
        ),
    ]
    for mistake, rows, hint in e_variants:
        if all(_close(r[1], grad_e(rows, c), 1e-12) for r, c in zip(results, cases, strict=True)):
            raise ExerciseError(
                f"{name} is not correct: known mistake '{mistake}'.\n  Hint: {hint}", mistake=mistake
            )
    if all(_close(r[1], c.args[0].sum(axis=0), 1e-12) for r, c in zip(results, cases, strict=True)):
        mistake = "only L rows returned"
        raise ExerciseError(
            f"{name} is not correct: known mistake '{mistake}'.\n  Hint: grad_E has the shape of the "
            "whole table, (max_len, d); the rows p >= L were not used and their gradient is zero.",
            mistake=mistake,
        )
    if all(_close(r[1], c.expected[1], 1e-12) for r, c in zip(results, cases, strict=True)):
        mistake = "grad_X wrong"
        hint = "Y = X + E[:L] so dL/dX = dL/dY: return grad_output itself (a copy), shape (B, L, d)."
        if all(_close(r[0], c.args[0].sum(axis=0), 1e-12) for r, c in zip(results, cases, strict=True)):
            mistake = "grad_X summed over the batch"
            hint = "only grad_E is summed over the batch; every sequence has its own X, " + hint
        raise ExerciseError(
            f"{name} is not correct: known mistake '{mistake}'.\n  Hint: {hint}", mistake=mistake
        )
    first = next(i for i, (r, c) in enumerate(zip(results, cases, strict=True)) if not ok_pair(r, c.expected))
    r, c = results[first], cases[first]
    which = "grad_X" if not _close(r[0], c.expected[0], 1e-12) else "grad_E"
    idx = 0 if which == "grad_X" else 1
    raise ExerciseError(
        f"{name} is wrong (no known mistake matches).\n  First failing input: {c.label}\n"
        f"  {which}: {_error(r[idx], c.expected[idx])}",
        mistake=None,
    )


# --------------------------------------------------------------------------------------
# RoPE (chapter 9)
# --------------------------------------------------------------------------------------


def _rope_variant(
    x: np.ndarray,
    positions: np.ndarray,
    base: float,
    layout: str,
    *,
    division: bool = False,
    missing_2: bool = False,
) -> np.ndarray:
    d = x.shape[-1]
    theta = base ** (-np.arange(d // 2) / d) if missing_2 else frequencies(d, base)
    pos = np.asarray(positions, dtype=np.float64)[:, None]
    ang = pos / theta if division else pos * theta
    cos, sin = np.cos(ang), np.sin(ang)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x[..., : d // 2], x[..., d // 2 :]
    out = np.empty_like(x, dtype=np.float64)
    first, second = a * cos - b * sin, a * sin + b * cos
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = first, second
    else:
        out[..., : d // 2], out[..., d // 2 :] = first, second
    return out


def check_rope(fn: Callable, layout: str = "interleaved") -> str:
    r"""Check ``fn(x, positions, base=10000.0)`` against :func:`~posenc.rope.apply_rope` with ``layout``.

    ``x`` has shape ``(..., L, d_head)`` (2-D and 3-D inputs are used), ``positions`` is a
    1-D float64 array of length ``L``; pair :math:`i` is rotated by :math:`m\theta_i`
    counter-clockwise, :math:`(a, b) \mapsto (a\cos - b\sin, a\sin + b\cos)`. ``layout``
    is the layout the exercise asks for: ``"interleaved"`` pairs ``(2i, 2i+1)``,
    ``"half"`` pairs ``(i, i + d/2)``.

    Recognised mistakes: the other layout (half vs interleaved confusion), rotation by
    :math:`-m\theta_i` (sine sign flipped), the ``positions`` argument ignored (always
    ``0..L-1``), division instead of multiplication, missing factor 2 in ``2i/d``, the
    ``base`` argument ignored, float32 angles at large positions.
    """
    if layout not in ("interleaved", "half"):
        raise ValueError(f"layout must be 'interleaved' or 'half', got {layout!r}")
    other = "half" if layout == "interleaved" else "interleaved"
    rng = np.random.default_rng(9)
    cases = []
    specs = []
    for d in (2, 4, 8, 16, 64):
        specs.append(((7, d), np.arange(7, dtype=np.float64), 10000.0))
        specs.append(((3, 5, d), np.arange(10, 15, dtype=np.float64), 10000.0))
        specs.append(((6, d), rng.uniform(-500, 500, size=6), 10000.0))
    for d, base in ((16, 500.0), (32, 1e6)):
        specs.append(((2, 4, d), np.array([3.0, 1.0, 4.0, 1.5]), base))
    for d in (8, 64):
        specs.append(((4, d), np.array([123_456_789.0, 98_765_431.0, 2.0**27 + 3.0, 16_777_217.0]), 10000.0))
    for shape, positions, base in specs:
        x = rng.standard_normal(shape)
        cases.append(
            _Case(
                (x, positions.copy()),
                {"base": base},
                apply_rope(x, positions, base=base, layout=layout),
                _position_tol(positions, scale=4.0),
                f"x of shape {shape}, positions={np.array2string(positions[:4], precision=3, separator=', ')}"
                f"{'...' if positions.size > 4 else ''}, base={base:g}",
                large=bool(np.max(np.abs(positions), initial=0.0) >= 2.0**20),
            )
        )

    def v(**kw):
        def compute(case: _Case) -> np.ndarray:
            x, positions = case.args
            return _rope_variant(
                x,
                positions,
                case.kwargs["base"],
                kw.get("layout", layout),
                division=kw.get("division", False),
                missing_2=kw.get("missing_2", False),
            )

        return compute

    variants = [
        _Variant(
            f"{other} layout instead of {layout} (RoPE layout confusion)",
            "interleaved (RoFormer, Meta LLaMA) pairs coordinates (2i, 2i+1); half (GPT-NeoX, Hugging Face "
            "rotate_half) pairs (i, i + d/2). Both are RoPE, but a checkpoint trained with one layout is "
            f"wrong under the other. This exercise asks for the {layout} layout.",
            v(layout=other),
        ),
        _Variant(
            "rotation by -m*theta (sine sign flipped)",
            "the pair (a, b) becomes (a cos - b sin, a sin + b cos), i.e. (a + ib) * exp(i m theta).",
            lambda case: apply_rope(case.args[0], -case.args[1], base=case.kwargs["base"], layout=layout),
        ),
        _Variant(
            f"{other} layout and rotation by -m*theta",
            f"use the {layout} pairing and rotate counter-clockwise: (a cos - b sin, a sin + b cos).",
            lambda case: apply_rope(case.args[0], -case.args[1], base=case.kwargs["base"], layout=other),
        ),
        _Variant(
            "positions argument ignored",
            "rotate row l by the angle positions[l] * theta_i, not l * theta_i: positions may be offset "
            "(decoding with a cache) or arbitrary.",
            lambda case: apply_rope(case.args[0], None, base=case.kwargs["base"], layout=layout),
        ),
        _Variant(
            "division instead of multiplication",
            "the angle is m * theta_i, not m / theta_i.",
            v(division=True),
        ),
        _Variant(
            "missing factor 2 in the exponent 2i/d",
            "theta_i = base**(-2i/d) for the pair index i = 0..d/2-1.",
            v(missing_2=True),
        ),
        _Variant(
            "base argument ignored",
            "use the base you are given, not the constant 10000.",
            lambda case: apply_rope(case.args[0], case.args[1], layout=layout),
        ),
    ]
    return _run(
        f"your RoPE ({layout})",
        fn,
        cases,
        variants,
        extra_diagnosis=lambda outputs, ok: _float32_diagnosis(
            [_Case(c.args[1:], {}, c.expected, c.tol, c.label) for c in cases], outputs, ok
        ),
    )


# --------------------------------------------------------------------------------------
# T5 buckets (chapter 10)
# --------------------------------------------------------------------------------------


def _t5_float(
    rel: np.ndarray,
    bidirectional: bool,
    num_buckets: int,
    max_distance: int,
    *,
    dtype: type = np.float64,
    sign: int = 1,
    rounding: str = "floor",
    causal_abs: bool = False,
    log_shift: int = 0,
    clip: bool = True,
) -> np.ndarray:
    """T5's bucket formula evaluated in floating point, with optional deliberate mistakes."""
    rel = sign * np.asarray(rel, dtype=np.int64)
    half = num_buckets // 2 if bidirectional else num_buckets
    m = half // 2
    if bidirectional:
        offset = np.where(rel > 0, half, 0)
        n = np.abs(rel)
    else:
        offset = np.zeros_like(rel)
        n = np.abs(rel) if causal_abs else np.maximum(-rel, 0)
    with np.errstate(divide="ignore"):
        q = (np.log(n.astype(dtype) / dtype(m)) / dtype(math.log(max_distance / m))) * dtype(half - m)
    q = np.where(n < m, 0, q)
    t = {"floor": np.floor, "round": np.round, "ceil": np.ceil}[rounding](q).astype(np.int64) + log_shift
    large = m + t
    if clip:
        large = np.minimum(large, half - 1)
    return offset + np.where(n < m, n, large)


def check_t5_bucket(fn: Callable) -> str:
    r"""Check ``fn(relative_position, bidirectional=True, num_buckets=32, max_distance=128)``.

    ``relative_position`` is an int64 array ``key_pos - query_pos``; the result must equal
    :func:`~posenc.relative.t5_relative_position_bucket` exactly. Inputs: the defaults in both modes,
    ``(20, 160)`` bidirectional (exact ties at ``|r| = 10, 20, 80``), ``(83, 1000)`` causal
    (float32 rounds up at ``|r| = 796``) and other
    configurations, each on every ``r`` in ``[-2D, 2D]``.

    Recognised mistakes: query minus key (sign flipped), floating-point log landing one
    bucket low at an exact tie (naive float64 or float32 evaluation), rounding instead of
    the floor, log buckets starting one too high (off by one), no clipping to the last
    bucket, ``|r|`` instead of ``max(-r, 0)`` in causal mode.
    """
    configs = [
        (True, 32, 128),
        (False, 32, 128),
        (True, 20, 160),
        (False, 20, 1000),
        (True, 64, 256),
        (False, 8, 20),
        (True, 12, 50),
        (False, 83, 1000),  # float32 rounds up at |r| = 796
    ]
    cases = []
    for bidi, nb, md in configs:
        rel = np.arange(-2 * md, 2 * md + 1, dtype=np.int64)
        kw = {"bidirectional": bidi, "num_buckets": nb, "max_distance": md}
        cases.append(
            _Case(
                (rel,),
                kw,
                t5_relative_position_bucket(rel, **kw),
                0.0,
                f"relative_position = -{2 * md}..{2 * md}, bidirectional={bidi}, "
                f"num_buckets={nb}, max_distance={md}",
            )
        )

    def v(**opts):
        return lambda case: _t5_float(
            case.args[0],
            case.kwargs["bidirectional"],
            case.kwargs["num_buckets"],
            case.kwargs["max_distance"],
            **opts,
        )

    def exact(sign: int) -> Callable[[_Case], np.ndarray]:
        return lambda case: t5_relative_position_bucket(sign * case.args[0], **case.kwargs)

    variants = [
        _Variant(
            "query minus key (sign flipped)",
            "relative_position is key_pos - query_pos (T5's memory_position - context_position): a key "
            "after the query has r > 0 and gets the upper half of the buckets in bidirectional mode; in "
            "causal mode the distance looked up is max(-r, 0).",
            exact(-1),
        ),
        _Variant(
            "floating-point log at an exact tie (one bucket low)",
            "at distances where m*(D/m)**(t/s) is an integer (e.g. num_buckets=20, max_distance=160, "
            "|r| = 10, 20, 80) the quotient s*log(n/m)/log(D/m) is exactly t, but evaluated in floating "
            "point it can come out as t - 1e-16 and floor() drops a bucket. Compare integers instead: "
            "t is the largest integer with D**t * m**(s-t) <= n**s.",
            v(),
        ),
        _Variant(
            "floating-point (float32) log at an exact tie",
            "the float32 formula of the public implementations truncates a quotient within rounding of "
            "an integer to the wrong side; compare integers (n**s >= D**t * m**(s-t)) instead.",
            v(dtype=np.float32),
        ),
        _Variant(
            "round() instead of floor (off-by-one buckets)",
            "the log bucket index is the floor of s*log(n/m)/log(D/m), not the nearest integer.",
            v(rounding="round"),
        ),
        _Variant(
            "ceil instead of floor (off-by-one buckets)",
            "the log bucket index is the floor of s*log(n/m)/log(D/m).",
            v(rounding="ceil"),
        ),
        _Variant(
            "log buckets start one too high (off by one)",
            "distance n = m is the first logarithmic bucket, bucket m itself (t = 0), not m + 1.",
            v(log_shift=1),
        ),
        _Variant(
            "no clipping to the last bucket",
            "every distance >= max_distance shares the last bucket h - 1: take min(., h - 1).",
            v(clip=False),
        ),
        _Variant(
            "|r| instead of max(-r, 0) in causal mode",
            "with bidirectional=False only keys before the query (r < 0) get distance buckets; every key "
            "at or after the query shares bucket 0.",
            v(causal_abs=True),
        ),
        _Variant(
            "query minus key and floating-point log",
            "two mistakes: r = key - query, and compare integers instead of a floating-point log.",
            v(sign=-1),
        ),
    ]
    return _run("your T5 bucket function", fn, cases, variants, exact=True)


# --------------------------------------------------------------------------------------
# ALiBi slopes (chapter 11)
# --------------------------------------------------------------------------------------


def check_alibi_slopes(fn: Callable) -> str:
    r"""Check ``fn(n_heads)`` against :func:`~posenc.alibi.alibi_slopes` for ``n_heads = 1..64`` and more.

    The result must be the ``n_heads`` slopes in Press et al.'s order (relative tolerance
    ``1e-12``). Recognised mistakes: :math:`2^{-8h/n}` for every ``n`` (wrong for
    non-powers of two), rounding ``n`` up to a power of two and truncating, the right
    slopes sorted (wrong order), consecutive instead of every other slope of the
    :math:`2N`-head sequence, the even-numbered (duplicate) slopes appended, an off-by-one
    start (:math:`2^{-8(h-1)/n}`, first slope 1).
    """
    ns = list(range(1, 65)) + [80, 96, 100, 128]
    cases = [_Case((n,), {}, alibi_slopes(n), 0.0, f"n_heads={n}") for n in ns]
    # relative tolerance: compare log2 slopes instead
    cases = [_Case(c.args, c.kwargs, c.expected, 1e-12, c.label) for c in cases]

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
        _Variant(
            "2^(-8h/n) for a non-power-of-two head count",
            "the geometric sequence 2**(-8h/n) is Press et al.'s rule only when n is a power of two. "
            "Otherwise take the N slopes of the largest power of two N < n and append the first n - N "
            "odd-numbered slopes 2**(-8h/(2N)), h = 1, 3, 5, ...",
            lambda c: geo(c.args[0]),
        ),
        _Variant(
            "rounded up to a power of two and truncated",
            "taking the first n of the 2**(-8h/C) slopes for the next power of two C drops the gentlest "
            "slopes; the rule keeps all N slopes of the power of two below n and appends midpoints.",
            lambda c: geo(upper(c.args[0]))[: c.args[0]],
        ),
        _Variant(
            "right slopes, wrong order (sorted)",
            "the rule's order is the N-head sequence first, then the appended midpoints (steepest first): "
            "do not sort; each head keeps its slope.",
            lambda c: np.sort(alibi_slopes(c.args[0]))[::-1],
        ),
        _Variant(
            "consecutive instead of every other slope of the 2N-head sequence",
            "append 2**(-8h/(2N)) for the odd h = 1, 3, 5, ..., not h = 1, 2, 3, ...",
            lambda c: rule(c.args[0], lambda N, k: geo(2 * N)[:k]),
        ),
        _Variant(
            "even-numbered (duplicate) slopes appended",
            "the even-numbered slopes of the 2N-head sequence, 2**(-8*2k/(2N)) = 2**(-8k/N), are the "
            "N-head slopes again; append the odd-numbered ones, h = 1, 3, 5, ...",
            lambda c: rule(c.args[0], lambda N, k: geo(2 * N)[1::2][:k]),
        ),
        _Variant(
            "off by one: h starts at 0 (first slope 1)",
            "the slopes are 2**(-8h/n) for h = 1..n: the first is 2**(-8/n), the last 2**(-8).",
            lambda c: off_by_one(c.args[0]),
        ),
    ]

    # compare in log2 space so that the tolerance is relative
    def log_fn(n: int) -> np.ndarray:
        out = _as_float_array(_call(fn, _Case((n,), {}, None, 0.0, f"n_heads={n}"), "your ALiBi slopes"))
        if out is None or out.shape != (n,) or np.any(~np.isfinite(out)) or np.any(out <= 0):
            return out if out is not None else np.array([])
        return np.log2(out.astype(np.float64))

    log_cases = [_Case(c.args, {}, np.log2(c.expected), 1e-10, c.label) for c in cases]
    log_variants = [_Variant(v.name, v.hint, lambda c, v=v: np.log2(v.compute(c))) for v in variants]
    return _run("your ALiBi slopes", log_fn, log_cases, log_variants)


KNOWN_MISTAKES: dict[str, tuple[str, ...]] = {
    "check_sinusoidal_encoding": tuple(v[0] for v in _SIN_FLAGS.values())
    + ("float32 angles at large positions",),
    "check_relative_position_matrix": (
        "M_{-k} (transposed: sine sign flipped)",
        "matrix for the split layout",
        "division instead of multiplication",
        "missing factor 2 in the exponent 2i/d",
        "base argument ignored",
    ),
    "check_learned_backward": (
        "gradient of only the first batch element",
        "gradient of only the last batch element",
        "mean instead of sum over the batch",
        "only L rows returned",
        "grad_X summed over the batch",
        "gradient accumulated across calls",
        "grad_output modified in place",
    ),
    "check_rope": (
        "half/interleaved layout confusion",
        "rotation by -m*theta (sine sign flipped)",
        "positions argument ignored",
        "division instead of multiplication",
        "missing factor 2 in the exponent 2i/d",
        "base argument ignored",
        "float32 angles at large positions",
    ),
    "check_t5_bucket": (
        "query minus key (sign flipped)",
        "floating-point log at an exact tie (one bucket low)",
        "round() instead of floor (off-by-one buckets)",
        "ceil instead of floor (off-by-one buckets)",
        "log buckets start one too high (off by one)",
        "no clipping to the last bucket",
        "|r| instead of max(-r, 0) in causal mode",
    ),
    "check_alibi_slopes": (
        "2^(-8h/n) for a non-power-of-two head count",
        "rounded up to a power of two and truncated",
        "right slopes, wrong order (sorted)",
        "consecutive instead of every other slope of the 2N-head sequence",
        "even-numbered (duplicate) slopes appended",
        "off by one: h starts at 0 (first slope 1)",
    ),
}
