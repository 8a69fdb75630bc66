r"""Self-checking helpers for the book's code exercises.

Each ``check_*`` function runs a student's function on many inputs and compares it with
the ``posenc`` reference. On success it returns a short string (``"correct on 57
inputs"``). On failure it raises :class:`ExerciseError` (an ``AssertionError``) whose
message names the problem. The diagnosis goes in this order:

1. *The result is unusable*, checked on every call as it returns: the function raised
   (the exception's type and message, and the input), returned something that is not a
   numpy array (a list, a scalar, ``None``...), returned complex values (refused even when
   the real part is right), an array of a non-numeric dtype (object, bool, strings...),
   NaN or infinity, or numbers of the wrong kind (integers or float32 where float64 is
   expected, floats where bucket indices are expected). These are the names of
   ``RESULT_PROBLEMS``.
2. *A known mistake*: the checker computes the known wrong variants of the exercise (the
   classic mistakes, e.g. the concatenated instead of the interleaved layout, or the
   gradient of one batch element instead of the batch sum) and, if the student's outputs
   agree with one of them on every input, names that mistake and gives a hint.
3. *The wrong shape* (when no known mistake explains it): expected and actual shape.
4. Otherwise the first failing input and the largest difference.

The short name of the problem is in ``ExerciseError.mistake``.

Checkers: :func:`check_sinusoidal_encoding` (the sinusoidal table, chapter 3),
:func:`check_relative_position_matrix` (the shift matrix :math:`M_k`, chapter 4),
:func:`check_learned_backward` (backward pass of a learned table, chapter 8),
:func:`check_rope` (rotary embedding, interleaved or half layout, chapter 9),
:func:`check_t5_bucket` (T5's relative-position buckets, chapter 10) and
:func:`check_alibi_slopes` (ALiBi head slopes, chapter 11).

``KNOWN_MISTAKES`` lists, for each checker, the mistakes it recognises. It is built from
the table each checker reports from (a checker can only name a mistake of its table), so
the two cannot drift apart. A checker called with a bad argument of its own (e.g. not a
function) raises ``TypeError`` or ``ValueError`` naming the argument. Importing this
module loads numpy and ``posenc`` only (no sympy, no matplotlib). A student function that
raises ``NotImplementedError`` (the stub of the student edition) propagates unchanged.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .alibi import alibi_slopes
from .relative import t5_relative_position_bucket
from .rope import apply_rope
from .sinusoidal import frequencies, relative_position_matrix, sinusoidal_encoding

__all__ = [
    "ExerciseError",
    "KNOWN_MISTAKES",
    "RESULT_PROBLEMS",
    "check_alibi_slopes",
    "check_learned_backward",
    "check_relative_position_matrix",
    "check_rope",
    "check_sinusoidal_encoding",
    "check_t5_bucket",
]


class ExerciseError(AssertionError):
    """A student's function disagrees with the reference.

    ``mistake`` is the short name of the problem: a name in the checker's entry of
    ``KNOWN_MISTAKES`` (or a combination of them joined by ``" + "``), a name in
    ``RESULT_PROBLEMS`` when the result itself is unusable (the function raised, returned
    no array, complex values, NaN...), or ``None`` when the failure matches no known mistake.
    """

    def __init__(self, message: str, mistake: str | None = None) -> None:
        super().__init__(message)
        self.mistake = mistake


# Problems with the result itself, shared by every checker (``ExerciseError.mistake``).
RESULT_PROBLEMS: tuple[str, ...] = (
    "raised an exception",
    "not an array",
    "complex values",
    "wrong dtype",
    "NaN or infinity",
    "wrong shape",
    "different results for the same input",
)


@dataclass(frozen=True)
class _Mistake:
    """A known mistake: its short name and the hint shown to the student."""

    name: str
    hint: str


# checker name -> mistake key -> mistake; KNOWN_MISTAKES is built from this table
_MISTAKES: dict[str, dict[str, _Mistake]] = {}


def _mistakes(checker: str, **entries: tuple[str, str]) -> dict[str, _Mistake]:
    """Register the known mistakes of ``checker`` (key -> (name, hint)) and return them."""
    table = {key: _Mistake(name, hint) for key, (name, hint) in entries.items()}
    _MISTAKES[checker] = table
    return table


def _mistake_error(
    label: str, table: Mapping[str, _Mistake], keys: Sequence[str], fmt: Mapping[str, str] | None = None
) -> ExerciseError:
    """The error naming the known mistake(s) ``keys`` of ``table`` (a key not in it is a KeyError)."""
    found = [table[key] for key in keys]
    name = " + ".join(m.name for m in found)
    hints = []
    for m in found:
        hint = m.hint
        for field, value in (fmt or {}).items():
            hint = hint.replace("{" + field + "}", value)
        hints.append(hint)
    return ExerciseError(
        f"{label} is not correct: known mistake '{name}'." + "".join(f"\n  Hint: {h}" for h in hints),
        mistake=name,
    )


def _problem(message: str, problem: str) -> ExerciseError:
    assert problem in RESULT_PROBLEMS, problem
    return ExerciseError(message, mistake=problem)


@dataclass(frozen=True)
class _Case:
    """One input: positional/keyword arguments for the student's function and the reference output."""

    args: tuple
    kwargs: dict
    expected: object
    tol: float
    label: str
    large: bool = False  # positions beyond float32's exact integers: skipped when matching a mistake


def _check_fn(checker: str, fn: object) -> None:
    if not callable(fn):
        raise TypeError(
            f"{checker}: the argument fn must be your function (a callable), got {type(fn).__name__} "
            f"{_short_repr(fn)}; pass the function itself (e.g. my_function), not the result of a call"
        )


def _short_repr(value: object, limit: int = 60) -> str:
    try:
        text = repr(value)
    except Exception:  # a broken __repr__
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _exception_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # a broken __str__
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _call(fn: Callable, args: tuple, kwargs: dict, label: str, where: str) -> object:
    """``fn(*args, **kwargs)``; any exception but ``NotImplementedError`` becomes an ExerciseError."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise
    except Exception as exc:  # the student's code failed: say how and where
        raise _problem(
            f"{label} raised {_exception_text(exc)}\n  on input {where}", "raised an exception"
        ) from exc


def _call_case(fn: Callable, case: _Case, label: str) -> object:
    """Call ``fn`` on copies of the case's arrays, so that the case survives a function writing to them."""
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in case.args)
    kwargs = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in case.kwargs.items()}
    return _call(fn, args, kwargs, label, case.label)


def _describe_type(value: object) -> str:
    if value is None:
        return "None (is a return statement missing?)"
    if isinstance(value, (list, tuple)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                shape = np.asarray(value).shape
        except Exception:  # ragged or not convertible
            return f"a {type(value).__name__} of length {len(value)}"
        return f"a {type(value).__name__} of length {len(value)} (shape {shape} as an array)"
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return f"a scalar of type {type(value).__name__} ({_short_repr(value)})"
    return f"an object of type {type(value).__name__}"


def _result_array(
    value: object, expected: np.ndarray, *, label: str, what: str, where: str, kind: str, tol: float
) -> np.ndarray:
    """Check that ``value`` is a usable result and return it as float64 (``kind="float"``) or int64.

    Raises the ExerciseError of the first problem found: not an ndarray, complex, a
    non-numeric dtype, NaN or infinity, then the wrong kind of number. The shape is checked
    later, after the known mistakes (some of which have another shape).
    """
    want = "float64" if kind == "float" else "integer (e.g. int64)"
    expect = f"expected a numpy array of shape {expected.shape} and dtype {want}"
    on = f"\n  on input {where}"
    if not isinstance(value, np.ndarray):
        extra = " (wrap it in np.asarray(...) before returning)" if isinstance(value, (list, tuple)) else ""
        raise _problem(f"{label}: {what} is {_describe_type(value)}; {expect}{extra}{on}", "not an array")
    dtype = value.dtype
    if np.issubdtype(dtype, np.complexfloating):
        with np.errstate(all="ignore"):
            imag = float(np.max(np.abs(value.imag), initial=0.0))
        part = (
            "its imaginary part is zero, but the result must be a real array"
            if imag == 0.0
            else f"imaginary parts up to {imag:.3g}"
        )
        raise _problem(
            f"{label}: {what} has complex values (dtype {dtype}; {part}); {expect}. Return a real "
            f"array (if you computed with complex numbers z, write z.real and z.imag into real "
            f"coordinates){on}",
            "complex values",
        )
    if dtype == np.bool_ or not (np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)):
        raise _problem(
            f"{label}: {what} has dtype {dtype}, which does not hold numbers; {expect}"
            + (" (an object array often comes from np.array of a ragged list)" if dtype.kind == "O" else "")
            + on,
            "wrong dtype",
        )
    if np.issubdtype(dtype, np.floating):
        finite = np.isfinite(value)
        if not np.all(finite):
            n_nan = int(np.count_nonzero(np.isnan(value)))
            n_inf = int(value.size - np.count_nonzero(finite) - n_nan)
            first = tuple(int(i) for i in np.argwhere(~finite)[0])
            raise _problem(
                f"{label}: {what} contains {n_nan} NaN and {n_inf} infinite values (the first at index "
                f"{first}); every value of the reference is finite{on}",
                "NaN or infinity",
            )
    if kind == "float":
        if np.issubdtype(dtype, np.integer):
            raise _problem(
                f"{label}: {what} has the integer dtype {dtype}; {expect}. An integer array truncates "
                f"every value written into it: create it with dtype=np.float64{on}",
                "wrong dtype",
            )
        if dtype.itemsize < 8:
            raise _problem(
                f"{label}: {what} has dtype {dtype}; {expect}. {dtype} keeps about "
                f"{np.finfo(dtype).precision} significant digits, too few for the check's tolerance "
                f"({tol:.1g}): compute and return float64{on}",
                "wrong dtype",
            )
        return np.asarray(value, dtype=np.float64)
    if not np.issubdtype(dtype, np.integer):
        raise _problem(
            f"{label}: {what} has dtype {dtype}; {expect}. Bucket indices index a table of "
            f"embeddings, so they are integers: convert with .astype(np.int64){on}",
            "wrong dtype",
        )
    return np.asarray(value, dtype=np.int64)


def _close(
    got: np.ndarray, expected: object, tol: float, *, exact: bool = False, relative: bool = False
) -> bool:
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        return False
    if exact:
        return bool(np.array_equal(got, expected))
    with np.errstate(all="ignore"):
        diff = np.abs(got - expected)
        if relative:
            diff = diff / np.abs(expected)
        return bool(np.all(diff <= tol))  # False on NaN


def _wrong_shape(label: str, what: str, got: np.ndarray, expected: np.ndarray, shape_doc: str, where: str):
    return _problem(
        f"{label}: {what} has shape {got.shape}, expected {expected.shape}{shape_doc}\n  on input {where}",
        "wrong shape",
    )


def _error(got: np.ndarray, expected: np.ndarray, *, relative: bool = False) -> str:
    with np.errstate(all="ignore"):
        diff = np.abs(got - expected)
        if relative:
            diff = diff / np.abs(expected)
    where = np.unravel_index(int(np.argmax(diff)), diff.shape)
    return (
        f"largest {'relative ' if relative else ''}difference {float(diff[where]):.3g} at index "
        f"{tuple(int(i) for i in where)}: got {got[where].item()!r}, expected {expected[where].item()!r}"
    )


@dataclass(frozen=True)
class _Variant:
    """A known mistake (or combination): ``compute(case)`` is the wrong output it produces on ``case``."""

    keys: tuple[str, ...]
    compute: Callable[[_Case], np.ndarray]


def _run(
    checker: str,
    label: str,
    fn: Callable,
    cases: Sequence[_Case],
    table: Mapping[str, _Mistake],
    variants: Sequence[_Variant],
    *,
    kind: str = "float",
    exact: bool = False,
    relative: bool = False,
    variant_tol: float = 1e-6,
    shape_doc: str = "",
    fmt: Mapping[str, str] | None = None,
    extra_diagnosis: Callable[[list[np.ndarray]], tuple[str, ...] | None] | None = None,
) -> str:
    """Compare ``fn`` with the reference on ``cases``; diagnose and raise on a mismatch."""
    _check_fn(checker, fn)
    unknown = {key for variant in variants for key in variant.keys} - set(table)
    if unknown:  # a variant may only report a mistake of the checker's table
        raise RuntimeError(f"{checker}: variants report unregistered mistakes {sorted(unknown)}")
    outputs = []
    for case in cases:
        expected = np.asarray(case.expected)
        value = _call_case(fn, case, label)
        outputs.append(
            _result_array(
                value, expected, label=label, what="the result", where=case.label, kind=kind, tol=case.tol
            )
        )
    ok = [
        _close(out, case.expected, case.tol, exact=exact, relative=relative)
        for out, case in zip(outputs, cases, strict=True)
    ]
    if all(ok):
        return f"correct on {len(cases)} inputs"
    # A wrong variant is matched on the moderate inputs with a looser tolerance: its angles
    # (e.g. p / w_i) can be far larger than the reference's, and so is their rounding error.
    for variant in variants:
        if all(
            _close(out, variant.compute(case), max(case.tol, variant_tol), exact=exact, relative=relative)
            for out, case in zip(outputs, cases, strict=True)
            if not case.large
        ):
            raise _mistake_error(label, table, variant.keys, fmt)
    if extra_diagnosis is not None:
        keys = extra_diagnosis(outputs)
        if keys is not None:
            raise _mistake_error(label, table, keys, fmt)
    for out, case in zip(outputs, cases, strict=True):
        expected = np.asarray(case.expected)
        if out.shape != expected.shape:
            raise _wrong_shape(label, "the result", out, expected, shape_doc, case.label)
    first = ok.index(False)
    case = cases[first]
    raise ExerciseError(
        f"{label} is wrong on {ok.count(False)} of {len(cases)} inputs (no known mistake matches).\n"
        f"  First failing input: {case.label}\n  "
        f"{_error(outputs[first], np.asarray(case.expected), relative=relative)}",
        mistake=None,
    )


# --------------------------------------------------------------------------------------
# Sinusoidal encoding (chapter 3)
# --------------------------------------------------------------------------------------

_FLOAT32_ANGLES = (
    "float32 angles at large positions",
    "form the angles p * w_i in float64 (np.float64 positions and frequencies) and cast only the "
    "final result if you need float32; float32 has 24 bits, so above 2**24 the positions "
    "themselves are rounded and the angle error at p ~ 1e8 is several radians.",
)

_SIN = _mistakes(
    "check_sinusoidal_encoding",
    split=(
        "concatenated (split) instead of interleaved",
        "Vaswani et al. interleave the pairs: column 2i holds sin(p*w_i) and column 2i+1 holds "
        "cos(p*w_i). Putting all sines first and all cosines after them is the 'split' layout.",
    ),
    division=(
        "division instead of multiplication",
        "the angle is p * w_i with w_i = base**(-2i/d); dividing p by w_i (p / w_i = p * base**(2i/d)) "
        "makes the slow pairs the fastest ones.",
    ),
    swapped=(
        "sin and cos swapped",
        "the even column 2i holds the sine and the odd column 2i+1 the cosine (row 0 is 0, 1, 0, 1, ...).",
    ),
    missing_2=(
        "missing factor 2 in the exponent 2i/d",
        "w_i = base**(-2i/d) with i the pair index 0..d/2-1; base**(-i/d) only reaches base**(-1/2).",
    ),
    column_index=(
        "column index instead of pair index in the exponent",
        "both columns 2i and 2i+1 of pair i use the same frequency w_i = base**(-2i/d); using "
        "base**(-j/d) for column j gives the cosine a different frequency than its sine.",
    ),
    base_ignored=(
        "base argument ignored",
        "use the base you are given (e.g. base=500 or 1e6), not the constant 10000.",
    ),
    float32=_FLOAT32_ANGLES,
)


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
    omega_sin = frequencies(d, base=base) if exponent == "pair" else base ** (-expo_sin)
    omega_cos = frequencies(d, base=base) if exponent == "pair" else base ** (-expo_cos)
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

        variants.append(_Variant(tuple(names), compute))
    variants.append(_Variant(("base_ignored",), lambda case: sinusoidal_encoding(case.args[0], case.args[1])))
    return variants


def _float32_diagnosis(
    positions: Sequence[np.ndarray],
    cases: Sequence[_Case],
    outputs: list[np.ndarray],
    *,
    large: float = 2.0**24,
) -> tuple[str, ...] | None:
    """float32 angles: right to float32 accuracy at small positions, wrong at large ones."""
    any_large = large_bad = False
    for pos, case, out in zip(positions, cases, outputs, strict=True):
        expected = np.asarray(case.expected)
        if out.shape != expected.shape:
            return None
        top = float(np.max(np.abs(pos), initial=0.0))
        if top >= large:
            any_large = True
            large_bad = large_bad or not _close(out, expected, case.tol)
        elif not _close(out, expected, 1e-4 + 1e-6 * top):
            return None
    return ("float32",) if any_large and large_bad else None


def check_sinusoidal_encoding(fn: Callable) -> str:
    r"""Check ``fn(positions, d_model, base=10000.0)`` against :func:`~posenc.sinusoidal.sinusoidal_encoding`.

    ``positions`` is a 1-D float64 array, the result must be the interleaved float64
    ``(len(positions), d_model)`` table (column ``2i`` = :math:`\sin(p\omega_i)`, column
    ``2i+1`` = :math:`\cos(p\omega_i)`, :math:`\omega_i = \mathrm{base}^{-2i/d}`).
    Inputs: widths 2 to 512, bases 2**16, 10, 500, 1e6, negative and non-integer
    positions, and positions above :math:`2^{24}`. Tolerance ``1e-9 + 1e-14·max|p|``.

    Recognised mistakes (and any combination of the first five): concatenated (split)
    layout, division instead of multiplication, sin/cos swapped, missing factor 2 in
    ``2i/d``, column index ``j/d`` instead of pair index, the ``base`` argument ignored,
    float32 angles at large positions (with a float64 result; a float32 result is refused
    as the wrong dtype).
    """
    cases = _sinusoid_cases()
    return _run(
        "check_sinusoidal_encoding",
        "your sinusoidal encoding",
        fn,
        cases,
        _SIN,
        _sinusoid_variants(),
        shape_doc=" = (len(positions), d_model)",
        extra_diagnosis=lambda outputs: _float32_diagnosis([c.args[0] for c in cases], cases, outputs),
    )


# --------------------------------------------------------------------------------------
# Relative position matrix M_k (chapter 4)
# --------------------------------------------------------------------------------------

_REL = _mistakes(
    "check_relative_position_matrix",
    transposed=(
        "M_{-k} (transposed: sine sign flipped)",
        "M_k maps the pair (sin p*w, cos p*w) to (sin (p+k)w, cos (p+k)w) = "
        "(cos kw * sin pw + sin kw * cos pw, -sin kw * sin pw + cos kw * cos pw): the +sin is in the "
        "first row. The textbook rotation [[c, -s], [s, c]] acts on (cos, sin) pairs, and the "
        "transpose is the map for row vectors (PE[p] @ M).",
    ),
    split=(
        "matrix for the split layout",
        "the exercise uses the interleaved layout: pair i occupies columns 2i and 2i+1, so the "
        "2x2 blocks sit on the diagonal; the split layout pairs columns i and i + d/2.",
    ),
    division=("division instead of multiplication", "block i rotates by the angle k * w_i, not k / w_i."),
    missing_2=(
        "missing factor 2 in the exponent 2i/d",
        "w_i = base**(-2i/d) for the pair index i = 0..d/2-1.",
    ),
    base_ignored=("base argument ignored", "use the base you are given, not the constant 10000."),
    no_offset=(
        "matrix does not depend on the offset",
        "M_k rotates the pair i by the angle k * w_i, so it changes with the offset k: only M_0 is the "
        "identity. Use the offset argument in every block.",
    ),
)


def _block_matrix(d: int, angles: np.ndarray, *, sign: float = 1.0) -> np.ndarray:
    c, s = np.cos(angles), sign * np.sin(angles)
    m = np.zeros((d, d))
    idx = np.arange(d // 2)
    m[2 * idx, 2 * idx] = c
    m[2 * idx, 2 * idx + 1] = s
    m[2 * idx + 1, 2 * idx] = -s
    m[2 * idx + 1, 2 * idx + 1] = c
    return m


def _offset_ignored(cases: Sequence[_Case], outputs: list[np.ndarray]) -> tuple[str, ...] | None:
    """Every width gives the same matrix for all its offsets (which the reference does not)."""
    groups: dict[tuple, list[np.ndarray]] = {}
    for case, out in zip(cases, outputs, strict=True):
        groups.setdefault((case.args[0], case.kwargs["base"]), []).append(out)
    several = [outs for outs in groups.values() if len(outs) > 1]
    if several and all(all(_close(o, outs[0], 1e-12) for o in outs[1:]) for outs in several):
        return ("no_offset",)
    return None


def check_relative_position_matrix(fn: Callable) -> str:
    r"""Check ``fn(d_model, offset, base=10000.0)`` against the reference shift matrix.

    The reference is :func:`~posenc.sinusoidal.relative_position_matrix`.

    The result must be the float64 ``(d_model, d_model)`` matrix :math:`M_k` with
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
        omega = base ** (-np.arange(d // 2) / d) if missing_2 else frequencies(d, base=base)
        return k / omega if division else k * omega

    variants = [
        _Variant(("transposed",), lambda case: _block_matrix(case.args[0], angles(case), sign=-1.0)),
        _Variant(
            ("split",),
            lambda case: relative_position_matrix(
                case.args[0], case.args[1], base=case.kwargs["base"], layout="split"
            ),
        ),
        _Variant(("division",), lambda case: _block_matrix(case.args[0], angles(case, division=True))),
        _Variant(("missing_2",), lambda case: _block_matrix(case.args[0], angles(case, missing_2=True))),
        _Variant(("base_ignored",), lambda case: relative_position_matrix(case.args[0], case.args[1])),
    ]
    return _run(
        "check_relative_position_matrix",
        "your relative position matrix",
        fn,
        cases,
        _REL,
        variants,
        shape_doc=" = (d_model, d_model)",
        extra_diagnosis=lambda outputs: _offset_ignored(cases, outputs),
    )


# --------------------------------------------------------------------------------------
# Learned embedding backward pass (chapter 8)
# --------------------------------------------------------------------------------------

_LEARNED = _mistakes(
    "check_learned_backward",
    first=(
        "gradient of only the first batch element",
        "row p of E is used by all B sequences, so its gradient is the sum over the batch, "
        "grad_output.sum(axis=0), not grad_output[0]. A test with B = 1 cannot see this.",
    ),
    last=(
        "gradient of only the last batch element",
        "the loop over the batch overwrites instead of adding: sum over the batch axis.",
    ),
    mean=(
        "mean instead of sum over the batch",
        "the loss already contains whatever averaging it wants; the chain rule sums the "
        "contributions of the B sequences, it does not average them.",
    ),
    rows=(
        "only L rows returned",
        "grad_E has the shape of the whole table, (max_len, d); the rows p >= L were not used and "
        "their gradient is zero.",
    ),
    grad_x_summed=(
        "grad_X summed over the batch",
        "only grad_E is summed over the batch; every sequence has its own X. Y = X + E[:L] so "
        "dL/dX = dL/dY: return grad_output itself (a copy), shape (B, L, d).",
    ),
    accumulated=(
        "gradient accumulated across calls",
        "the same grad_output gave a grad_E that grows by the same amount at every call; recompute "
        "grad_E from zeros in every call instead of adding to a stored array.",
    ),
    in_place=(
        "grad_output modified in place",
        "the upstream gradient belongs to the caller; build grad_E in a new array "
        "(np.zeros((max_len, d))) and return a copy of grad_output as grad_X.",
    ),
)


def check_learned_backward(fn: Callable) -> str:
    r"""Check ``fn(grad_output, max_len) -> (grad_X, grad_E)`` for :math:`Y = X + E_{:L}`.

    ``grad_output`` has shape ``(B, L, d)``; the reference is ``grad_X = grad_output`` and
    ``grad_E`` of shape ``(max_len, d)`` with rows ``:L`` the batch **sum** of
    ``grad_output`` and rows ``L:`` zero (as :meth:`~posenc.learned.LearnedPositionalEncoding.backward`),
    both float64 arrays, returned as a tuple. Inputs: ``B`` from 1 to 6, ``L`` up to
    ``max_len``. Each input is passed twice (three times if the results differ), to catch
    state kept between calls, and ``grad_output`` must not be modified.

    Recognised mistakes: gradient of the first (or last) batch element only, mean instead
    of sum over the batch, only ``L`` rows
    returned (rows ``L:`` missing), ``grad_X`` summed over the batch, gradient accumulated
    across calls, ``grad_output`` modified in place.
    """
    checker = "check_learned_backward"
    _check_fn(checker, fn)
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

    label = "your backward"

    def call(case: _Case) -> tuple[np.ndarray, np.ndarray]:
        g, max_len = case.args
        given = g.copy()
        out = _call(fn, (given, max_len), {}, label, case.label)
        if not np.array_equal(given, g):
            raise _mistake_error(label, _LEARNED, ("in_place",))
        if not (isinstance(out, tuple) and len(out) == 2):
            raise _problem(
                f"{label} must return a tuple (grad_X, grad_E) of two numpy arrays, got "
                f"{_describe_type(out)}\n  on input {case.label}",
                "not an array",
            )
        return tuple(
            _result_array(
                value, expected, label=label, what=what, where=case.label, kind="float", tol=case.tol
            )
            for value, expected, what in zip(out, case.expected, ("grad_X", "grad_E"), strict=True)
        )

    results = []
    for case in cases:
        first = call(case)
        second = call(case)
        if second[1].shape == first[1].shape and not _close(second[1], first[1], 1e-12):
            third = call(case)
            step = second[1] - first[1]
            if third[1].shape == first[1].shape and _close(third[1] - second[1], step, 1e-9):
                raise _mistake_error(label, _LEARNED, ("accumulated",))
            raise _problem(
                f"{label} returned a different grad_E when called again with the same grad_output "
                f"(largest change {float(np.max(np.abs(step))):.3g}); the gradient must depend on the "
                f"arguments only, not on random numbers or state kept between calls\n  on input {case.label}",
                "different results for the same input",
            )
        results.append(first)

    def all_close(index: int, target: Callable[[_Case], np.ndarray]) -> bool:
        return all(_close(r[index], target(c), 1e-12) for r, c in zip(results, cases, strict=True))

    if all_close(0, lambda c: c.expected[0]) and all_close(1, lambda c: c.expected[1]):
        return f"correct on {len(cases)} inputs"

    def padded(rows: Callable[[np.ndarray], np.ndarray]) -> Callable[[_Case], np.ndarray]:
        def target(case: _Case) -> np.ndarray:
            g, max_len = case.args
            out = np.zeros((max_len, g.shape[2]))
            out[: g.shape[1]] = rows(g)
            return out

        return target

    for key, rows in (
        ("first", lambda g: g[0]),
        ("last", lambda g: g[-1]),
        ("mean", lambda g: g.mean(axis=0)),
    ):
        if all_close(1, padded(rows)):
            raise _mistake_error(label, _LEARNED, (key,))
    if all_close(1, lambda c: c.args[0].sum(axis=0)):
        raise _mistake_error(label, _LEARNED, ("rows",))
    grad_e_right = all_close(1, lambda c: c.expected[1])
    if grad_e_right and all_close(0, lambda c: c.args[0].sum(axis=0)):
        raise _mistake_error(label, _LEARNED, ("grad_x_summed",))
    shape_docs = (" = grad_output.shape", " = (max_len, d)")
    for r, c in zip(results, cases, strict=True):
        for index, what in enumerate(("grad_X", "grad_E")):
            if r[index].shape != c.expected[index].shape:
                raise _wrong_shape(label, what, r[index], c.expected[index], shape_docs[index], c.label)
    index = 0 if grad_e_right else 1
    which = ("grad_X", "grad_E")[index]
    wrong = [
        i
        for i, (r, c) in enumerate(zip(results, cases, strict=True))
        if not _close(r[index], c.expected[index], 1e-12)
    ]
    r, c = results[wrong[0]], cases[wrong[0]]
    note = (
        "grad_E is right on every input, grad_X is not: Y = X + E[:L] so dL/dX = dL/dY, i.e. grad_output.\n  "
        if grad_e_right
        else ""
    )
    raise ExerciseError(
        f"{label} is wrong (no known mistake matches): {which} is wrong on {len(wrong)} of {len(cases)} "
        f"inputs.\n  {note}First failing input: {c.label}\n  {which}: {_error(r[index], c.expected[index])}",
        mistake=None,
    )


# --------------------------------------------------------------------------------------
# RoPE (chapter 9)
# --------------------------------------------------------------------------------------

_ROPE = _mistakes(
    "check_rope",
    layout=(
        "half/interleaved layout confusion",
        "this exercise asks for the {layout} layout, and your function pairs the coordinates as in the "
        "{other} layout. Interleaved (RoFormer, Meta LLaMA) pairs coordinates (2i, 2i+1); half (GPT-NeoX, "
        "Hugging Face rotate_half) pairs (i, i + d/2). Both are RoPE, but a checkpoint trained with one "
        "layout is wrong under the other.",
    ),
    sign=(
        "rotation by -m*theta (sine sign flipped)",
        "the pair (a, b) becomes (a cos - b sin, a sin + b cos), i.e. (a + ib) * exp(i m theta).",
    ),
    positions=(
        "positions argument ignored",
        "rotate row l by the angle positions[l] * theta_i, not l * theta_i: positions may be offset "
        "(decoding with a cache) or arbitrary.",
    ),
    division=("division instead of multiplication", "the angle is m * theta_i, not m / theta_i."),
    missing_2=(
        "missing factor 2 in the exponent 2i/d",
        "theta_i = base**(-2i/d) for the pair index i = 0..d/2-1.",
    ),
    base_ignored=("base argument ignored", "use the base you are given, not the constant 10000."),
    float32=_FLOAT32_ANGLES,
)


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
    theta = base ** (-np.arange(d // 2) / d) if missing_2 else frequencies(d, base=base)
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
    1-D float64 array of length ``L``; the result is a float64 array of the shape of ``x``
    in which pair :math:`i` is rotated by :math:`m\theta_i` counter-clockwise,
    :math:`(a, b) \mapsto (a\cos - b\sin, a\sin + b\cos)`. ``layout`` is the layout the
    exercise asks for: ``"interleaved"`` pairs ``(2i, 2i+1)``, ``"half"`` pairs
    ``(i, i + d/2)``.

    Recognised mistakes: the other layout (half vs interleaved confusion), rotation by
    :math:`-m\theta_i` (sine sign flipped), both of these, the ``positions`` argument ignored
    (always ``0..L-1``), division instead of multiplication, missing factor 2 in ``2i/d``,
    the ``base`` argument ignored, float32 angles at large positions.
    """
    _check_fn("check_rope", fn)
    if not isinstance(layout, str) or layout not in ("interleaved", "half"):
        raise (ValueError if isinstance(layout, str) else TypeError)(
            f"check_rope: the argument layout must be 'interleaved' or 'half', got {_short_repr(layout)}"
        )
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
        _Variant(("layout",), v(layout=other)),
        _Variant(
            ("sign",),
            lambda case: apply_rope(case.args[0], -case.args[1], base=case.kwargs["base"], layout=layout),
        ),
        _Variant(
            ("layout", "sign"),
            lambda case: apply_rope(case.args[0], -case.args[1], base=case.kwargs["base"], layout=other),
        ),
        _Variant(
            ("positions",),
            lambda case: apply_rope(case.args[0], None, base=case.kwargs["base"], layout=layout),
        ),
        _Variant(("division",), v(division=True)),
        _Variant(("missing_2",), v(missing_2=True)),
        _Variant(("base_ignored",), lambda case: apply_rope(case.args[0], case.args[1], layout=layout)),
    ]
    return _run(
        "check_rope",
        f"your RoPE ({layout})",
        fn,
        cases,
        _ROPE,
        variants,
        shape_doc=" = x.shape",
        fmt={"layout": layout, "other": other},
        extra_diagnosis=lambda outputs: _float32_diagnosis([c.args[1] for c in cases], cases, outputs),
    )


# --------------------------------------------------------------------------------------
# T5 buckets (chapter 10)
# --------------------------------------------------------------------------------------

_T5 = _mistakes(
    "check_t5_bucket",
    sign=(
        "query minus key (sign flipped)",
        "relative_position is key_pos - query_pos (T5's memory_position - context_position): a key "
        "after the query has r > 0 and gets the upper half of the buckets in bidirectional mode; in "
        "causal mode the distance looked up is max(-r, 0).",
    ),
    float_tie=(
        "floating-point log at an exact tie (one bucket low)",
        "at distances where m*(D/m)**(t/s) is an integer (e.g. num_buckets=20, max_distance=160, "
        "|r| = 10, 20, 80) the quotient s*log(n/m)/log(D/m) is exactly t, but evaluated in floating "
        "point it can come out as t - 1e-16 and floor() drops a bucket. Compare integers instead: "
        "t is the largest integer with D**t * m**(s-t) <= n**s.",
    ),
    float32_tie=(
        "floating-point (float32) log at an exact tie",
        "the float32 formula of the public implementations truncates a quotient within rounding of "
        "an integer to the wrong side; compare integers (n**s >= D**t * m**(s-t)) instead.",
    ),
    round=(
        "round() instead of floor (off-by-one buckets)",
        "the log bucket index is the floor of s*log(n/m)/log(D/m), not the nearest integer.",
    ),
    ceil=(
        "ceil instead of floor (off-by-one buckets)",
        "the log bucket index is the floor of s*log(n/m)/log(D/m).",
    ),
    log_shift=(
        "log buckets start one too high (off by one)",
        "distance n = m is the first logarithmic bucket, bucket m itself (t = 0), not m + 1.",
    ),
    no_clip=(
        "no clipping to the last bucket",
        "every distance >= max_distance shares the last bucket h - 1: take min(., h - 1).",
    ),
    causal_abs=(
        "|r| instead of max(-r, 0) in causal mode",
        "with bidirectional=False only keys before the query (r < 0) get distance buckets; every key "
        "at or after the query shares bucket 0.",
    ),
)


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

    ``relative_position`` is an int64 array ``key_pos - query_pos``; the result must be an
    integer array equal to :func:`~posenc.relative.t5_relative_position_bucket` (a float
    array is refused: bucket indices index a table). Inputs: the defaults in both modes,
    ``(20, 160)`` bidirectional (exact ties at ``|r| = 10, 20, 80``), ``(83, 1000)`` causal
    (float32 rounds up at ``|r| = 796``) and other
    configurations, each on every ``r`` in ``[-2D, 2D]``.

    Recognised mistakes: query minus key (sign flipped), floating-point log landing one
    bucket low at an exact tie (naive float64 or float32 evaluation), both of the first two,
    rounding instead of the floor, log buckets starting one too high (off by one), no
    clipping to the last bucket, ``|r|`` instead of ``max(-r, 0)`` in causal mode.
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
        _Variant(("sign",), exact(-1)),
        _Variant(("float_tie",), v()),
        _Variant(("float32_tie",), v(dtype=np.float32)),
        _Variant(("round",), v(rounding="round")),
        _Variant(("ceil",), v(rounding="ceil")),
        _Variant(("log_shift",), v(log_shift=1)),
        _Variant(("no_clip",), v(clip=False)),
        _Variant(("causal_abs",), v(causal_abs=True)),
        _Variant(("sign", "float_tie"), v(sign=-1)),
    ]
    return _run(
        "check_t5_bucket",
        "your T5 bucket function",
        fn,
        cases,
        _T5,
        variants,
        kind="int",
        exact=True,
        shape_doc=" = relative_position.shape",
    )


# --------------------------------------------------------------------------------------
# ALiBi slopes (chapter 11)
# --------------------------------------------------------------------------------------

_ALIBI = _mistakes(
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
    cases = [_Case((n,), {}, alibi_slopes(n), 1e-10, f"n_heads={n}") for n in ns]

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
        _Variant(("geometric",), lambda c: geo(c.args[0])),
        _Variant(("round_up",), lambda c: geo(upper(c.args[0]))[: c.args[0]]),
        _Variant(("sorted",), lambda c: np.sort(alibi_slopes(c.args[0]))[::-1]),
        _Variant(("consecutive",), lambda c: rule(c.args[0], lambda N, k: geo(2 * N)[:k])),
        _Variant(("duplicates",), lambda c: rule(c.args[0], lambda N, k: geo(2 * N)[1::2][:k])),
        _Variant(("off_by_one",), lambda c: off_by_one(c.args[0])),
    ]
    return _run(
        "check_alibi_slopes",
        "your ALiBi slopes",
        fn,
        cases,
        _ALIBI,
        variants,
        relative=True,
        shape_doc=" = (n_heads,)",
    )


# For each checker, the names of the known mistakes it can report (built from the tables above).
KNOWN_MISTAKES: dict[str, tuple[str, ...]] = {
    checker: tuple(m.name for m in table.values()) for checker, table in _MISTAKES.items()
}
