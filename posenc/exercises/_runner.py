"""Internal: shared by every exercise checker. The error, the diagnosis of a result, the run loop.

:class:`ExerciseError` and ``RESULT_PROBLEMS`` (the problems with a result itself, both
exported by ``posenc.exercises``), the registry of the known mistakes of each checker
(``register_mistakes``, from whose ``MISTAKE_TABLES`` the package builds
``KNOWN_MISTAKES``), the diagnosis of an unusable result (the function raised,
returned something that is not a numpy array, complex values, a non-numeric dtype, NaN or
infinity, the wrong kind of number, the wrong shape) and ``run_checker``, which compares a
student's function with the reference on every input and names the problem, the known
mistake, or the first failing input and the largest difference. The other names are for
the checker modules, not part of the public API.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .._arrays import is_integer_dtype, is_real_dtype


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
class Mistake:
    """A known mistake: its short name and the hint shown to the student."""

    name: str
    hint: str


# checker name -> mistake key -> mistake; KNOWN_MISTAKES is built from this table
MISTAKE_TABLES: dict[str, dict[str, Mistake]] = {}


def frequency_mistakes(angle: str, freq: str) -> dict[str, tuple[str, str]]:
    """The mistakes shared by the checkers of rotation-based encodings, worded with their symbols.

    ``angle`` is the position symbol (``"k"``, ``"m"``) and ``freq`` the frequency
    (``"w_i"``, ``"theta_i"``): the rotation angle is ``angle * freq``.
    """
    return {
        "division": (
            "division instead of multiplication",
            f"the angle is {angle} * {freq}, not {angle} / {freq}.",
        ),
        "missing_2": (
            "missing factor 2 in the exponent 2i/d",
            f"{freq} = base**(-2i/d) for the pair index i = 0..d/2-1.",
        ),
        "base_ignored": ("base argument ignored", "use the base you are given, not the constant 10000."),
    }


def register_mistakes(checker: str, **entries: tuple[str, str]) -> dict[str, Mistake]:
    """Register the known mistakes of ``checker`` (key -> (name, hint)) and return them."""
    table = {key: Mistake(name, hint) for key, (name, hint) in entries.items()}
    MISTAKE_TABLES[checker] = table
    return table


def mistake_error(
    label: str, table: Mapping[str, Mistake], keys: Sequence[str], fmt: Mapping[str, str] | None = None
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


def result_problem(message: str, problem: str) -> ExerciseError:
    assert problem in RESULT_PROBLEMS, problem
    return ExerciseError(message, mistake=problem)


@dataclass(frozen=True)
class Case:
    """One input: positional/keyword arguments for the student's function and the reference output."""

    args: tuple
    kwargs: dict
    expected: object
    tol: float
    label: str
    large: bool = False  # positions beyond float32's exact integers: skipped when matching a mistake


def check_fn(checker: str, fn: object) -> None:
    if not callable(fn):
        raise TypeError(
            f"{checker}: the argument fn must be your function (a callable), got {type(fn).__name__} "
            f"{short_repr(fn)}; pass the function itself (e.g. my_function), not the result of a call"
        )


def short_repr(value: object, limit: int = 60) -> str:
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


def call_student(fn: Callable, args: tuple, kwargs: dict, label: str, where: str) -> object:
    """``fn(*args, **kwargs)``; any exception but ``NotImplementedError`` becomes an ExerciseError."""
    try:
        return fn(*args, **kwargs)
    except (NotImplementedError, ExerciseError):  # a checker's own wrapper may diagnose the result
        raise
    except Exception as exc:  # the student's code failed: say how and where
        raise result_problem(
            f"{label} raised {_exception_text(exc)}\n  on input {where}", "raised an exception"
        ) from exc


def call_case(fn: Callable, case: Case, label: str) -> object:
    """Call ``fn`` on copies of the case's arrays and lists, so that the case survives a function
    writing to them (an ``mrope_section`` list reversed in place, say)."""
    args = tuple(_fresh(a) for a in case.args)
    kwargs = {k: _fresh(v) for k, v in case.kwargs.items()}
    return call_student(fn, args, kwargs, label, case.label)


def _fresh(value: object) -> object:
    """A copy of a numpy array or (deeply) of a list or dict; other values as they are."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, dict)):
        return copy.deepcopy(value)
    return value


def describe_type(value: object) -> str:
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
        return f"a scalar of type {type(value).__name__} ({short_repr(value)})"
    return f"an object of type {type(value).__name__}"


def check_plain_array(
    value: object, expected: np.ndarray, *, label: str, what: str, expect: str, on: str
) -> None:
    """Raise the ExerciseError for a result that is not a plain numpy array of a plausible size.

    A list, a masked array (whose entries may have no value) and an array far larger than
    the reference (e.g. ``np.broadcast_to`` of a huge shape, which any pass over its
    entries could not hold in memory) are named before anything reads the entries.
    """
    if not isinstance(value, np.ndarray):
        extra = " (wrap it in np.asarray(...) before returning)" if isinstance(value, (list, tuple)) else ""
        raise result_problem(
            f"{label}: {what} is {describe_type(value)}; {expect}{extra}{on}", "not an array"
        )
    if isinstance(value, np.ma.MaskedArray):
        raise result_problem(
            f"{label}: {what} is a masked array; {expect}. Return a plain array (e.g. "
            f"value.filled(...) once every entry has a value){on}",
            "not an array",
        )
    if value.size > max(16 * expected.size, 1 << 20):
        raise result_problem(
            f"{label}: {what} has shape {value.shape} ({value.size} entries); {expect}{on}", "wrong shape"
        )


def result_array(
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
    check_plain_array(value, expected, label=label, what=what, expect=expect, on=on)
    dtype = value.dtype
    if np.issubdtype(dtype, np.complexfloating):
        with np.errstate(all="ignore"):
            imag = float(np.max(np.abs(value.imag), initial=0.0))
        part = (
            "its imaginary part is zero, but the result must be a real array"
            if imag == 0.0
            else f"imaginary parts up to {imag:.3g}"
        )
        raise result_problem(
            f"{label}: {what} has complex values (dtype {dtype}; {part}); {expect}. Return a real "
            f"array (if you computed with complex numbers z, write z.real and z.imag into real "
            f"coordinates){on}",
            "complex values",
        )
    if not is_real_dtype(dtype):
        raise result_problem(
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
            raise result_problem(
                f"{label}: {what} contains {n_nan} NaN and {n_inf} infinite values (the first at index "
                f"{first}); every value of the reference is finite{on}",
                "NaN or infinity",
            )
    if kind == "float":
        if is_integer_dtype(dtype):
            raise result_problem(
                f"{label}: {what} has the integer dtype {dtype}; {expect}. An integer array truncates "
                f"every value written into it: create it with dtype=np.float64{on}",
                "wrong dtype",
            )
        if dtype.itemsize < 8:
            raise result_problem(
                f"{label}: {what} has dtype {dtype}; {expect}. {dtype} keeps about "
                f"{np.finfo(dtype).precision} significant digits, too few for the check's tolerance "
                f"({tol:.1g}): compute and return float64{on}",
                "wrong dtype",
            )
        return np.asarray(value, dtype=np.float64)
    if not is_integer_dtype(dtype):
        raise result_problem(
            f"{label}: {what} has dtype {dtype}; {expect}. Indices (buckets, position "
            f"ids) select rows of tables, so they are integers: convert with .astype(np.int64){on}",
            "wrong dtype",
        )
    return np.asarray(value, dtype=np.int64)


def is_close(
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


def wrong_shape_error(
    label: str, what: str, got: np.ndarray, expected: np.ndarray, shape_doc: str, where: str
):
    return result_problem(
        f"{label}: {what} has shape {got.shape}, expected {expected.shape}{shape_doc}\n  on input {where}",
        "wrong shape",
    )


def largest_difference(got: np.ndarray, expected: np.ndarray, *, relative: bool = False) -> str:
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
class Variant:
    """A known mistake (or combination): ``compute(case)`` is the wrong output it produces on ``case``."""

    keys: tuple[str, ...]
    compute: Callable[[Case], np.ndarray]


def run_checker(
    checker: str,
    label: str,
    fn: Callable,
    cases: Sequence[Case],
    table: Mapping[str, Mistake],
    variants: Sequence[Variant],
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
    check_fn(checker, fn)
    unknown = {key for variant in variants for key in variant.keys} - set(table)
    if unknown:  # a variant may only report a mistake of the checker's table
        raise RuntimeError(f"{checker}: variants report unregistered mistakes {sorted(unknown)}")
    outputs = []
    for case in cases:
        expected = np.asarray(case.expected)
        value = call_case(fn, case, label)
        outputs.append(
            result_array(
                value, expected, label=label, what="the result", where=case.label, kind=kind, tol=case.tol
            )
        )
    ok = [
        is_close(out, case.expected, case.tol, exact=exact, relative=relative)
        for out, case in zip(outputs, cases, strict=True)
    ]
    if all(ok):
        return f"correct on {len(cases)} inputs"
    # A wrong variant is matched on the moderate inputs with a looser tolerance: its angles
    # (e.g. p / w_i) can be far larger than the reference's, and so is their rounding error.
    for variant in variants:
        if all(
            is_close(out, variant.compute(case), max(case.tol, variant_tol), exact=exact, relative=relative)
            for out, case in zip(outputs, cases, strict=True)
            if not case.large
        ):
            raise mistake_error(label, table, variant.keys, fmt)
    if extra_diagnosis is not None:
        keys = extra_diagnosis(outputs)
        if keys is not None:
            raise mistake_error(label, table, keys, fmt)
    for out, case in zip(outputs, cases, strict=True):
        expected = np.asarray(case.expected)
        if out.shape != expected.shape:
            raise wrong_shape_error(label, "the result", out, expected, shape_doc, case.label)
    first = ok.index(False)
    case = cases[first]
    raise ExerciseError(
        f"{label} is wrong on {ok.count(False)} of {len(cases)} inputs (no known mistake matches).\n"
        f"  First failing input: {case.label}\n  "
        f"{largest_difference(outputs[first], np.asarray(case.expected), relative=relative)}",
        mistake=None,
    )
