"""Internal: shared by the posenc modules. Checks of scalar arguments and the documented limits.

Sizes, widths, integers, real numbers, positions given one at a time, choices among
strings, bools, seeds and float dtypes: every public function checks its scalar
arguments with these, so that bad input fails early with a message naming the argument
and what was expected, instead of producing a silently wrong array or a NaN. Array
arguments are converted and checked by ``posenc._arrays``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence

import numpy as np

# Documented limits, enforced by the helpers below (every public function of the encoding
# modules goes through them):
#
# * positions, distances and offsets: |p| <= 2**53, for floats as well as integers. Every
#   integer up to 2**53 is exact in float64 and the sinusoidal tables are exact to about
#   2^-51 there; beyond it consecutive integers collide and the exact-angle arithmetic
#   would overflow (1.5e308 gave NaN).
# * model and head widths (d_model, d_head): at most 2**16. The frequency table is built
#   with 113-bit mpmath powers, a few per pair: at the limit about 0.5 s for the
#   frequencies and 3 s for the first sinusoidal table. Tables are not cached; the
#   frequencies and the table kernel's block offsets are, per (d_model, base), so later
#   tables of that width skip that cost.
# * any array the package allocates for its result (or a same-sized intermediate): at most
#   2**28 entries (2 GiB in float64), refused before the allocation is attempted.
MAX_POSITION = 2**53
MAX_POSITION_TEXT = "2**53"
MAX_D_MODEL = 2**16
MAX_D_MODEL_TEXT = "2**16 = 65536"
MAX_ELEMENTS = 2**28
MAX_ELEMENTS_TEXT = "2**28 = 268435456 entries (2 GiB in float64)"


def is_int(value: object) -> bool:
    """Whether ``value`` is an integer scalar (any ``numbers.Integral``) other than a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _too_large(name: str, value: int, maximum: int, maximum_text: str | None) -> ValueError:
    limit = maximum_text if maximum_text is not None else str(maximum)
    return ValueError(f"{name} must be at most {limit}, got {value}")


def check_positive_int(
    value: object, name: str, maximum: int | None = None, maximum_text: str | None = None
) -> int:
    """Return ``value`` as an ``int`` if it is a positive integer (bools refused), else raise.

    With ``maximum``, values above it raise ``ValueError`` naming ``name`` and the limit
    (``maximum_text`` is how the limit is written in the message, e.g. ``"2**16"``).
    """
    if type(value) is not int and not is_int(value):
        raise TypeError(f"{name} must be a positive integer, got {value!r} of type {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    if maximum is not None and value > maximum:
        raise _too_large(name, int(value), maximum, maximum_text)
    return int(value)


def check_even_int(
    value: object, name: str, maximum: int | None = None, maximum_text: str | None = None
) -> int:
    """Return ``value`` as an ``int`` if it is a positive even integer, else raise.

    ``maximum``/``maximum_text`` as in :func:`check_positive_int`.
    """
    value = check_positive_int(value, name, maximum, maximum_text)
    if value % 2:
        raise ValueError(f"{name} must be even (sin/cos come in pairs), got {value}")
    return value


def check_width(value: object, name: str) -> int:
    """A model or head width: a positive even integer at most ``MAX_D_MODEL`` (2**16)."""
    return check_even_int(value, name, MAX_D_MODEL, MAX_D_MODEL_TEXT)


def check_int(
    value: object,
    name: str,
    minimum: int | None = None,
    maximum: int | None = None,
    maximum_text: str | None = None,
) -> int:
    """Return ``value`` as an ``int`` if it is an integer (bools refused) in ``[minimum, maximum]``."""
    if not is_int(value):
        raise TypeError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise _too_large(name, value, maximum, maximum_text)
    return value


def check_length(value: object, name: str) -> int:
    """A length or count of array entries: a positive integer at most ``MAX_ELEMENTS`` (2**28).

    Returns ``value`` as an ``int``. Bools, floats (even ``3.0``), strings and other
    non-integers raise ``TypeError``; zero, negative values and values above 2**28 raise
    ``ValueError``; both messages name ``name``.
    """
    return check_positive_int(value, name, MAX_ELEMENTS, MAX_ELEMENTS_TEXT)


def check_query_key_lengths(q_len: object, k_len: object = None) -> tuple[int, int]:
    """``(q_len, k_len)`` as ``int`` for queries that are the last ``q_len`` of ``k_len`` positions.

    Each length as :func:`check_length` (a positive integer at most 2**28, bools refused),
    named ``q_len`` or ``k_len`` in the message; ``k_len=None`` means ``k_len = q_len``.
    ``q_len > k_len`` raises ``ValueError`` naming both (there are not that many keys to
    be the last of).
    """
    q = check_length(q_len, "q_len")
    k = q if k_len is None else check_length(k_len, "k_len")
    if q > k:
        raise ValueError(
            f"q_len must not exceed k_len (queries are the last q_len of k_len positions), "
            f"got q_len={q}, k_len={k}"
        )
    return q, k


def check_offset_int(value: object, name: str) -> int:
    """An integer offset or position with ``|value| <= MAX_POSITION`` (2**53)."""
    value = check_int(value, name)
    if abs(value) > MAX_POSITION:
        raise ValueError(f"{name} must have magnitude at most {MAX_POSITION_TEXT}, got {value}")
    return value


def check_int_sequence(
    value: object,
    name: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    maximum_text: str | None = None,
    max_entries: int | None = None,
    what: str = "integers",
) -> list[int]:
    """Return ``value``, a non-empty sequence of integers, as a list of ``int``.

    Accepted: a list, tuple or 1-D numpy array with at least one and at most
    ``max_entries`` entries, each an integer (bools refused) in ``[minimum, maximum]`` as
    :func:`check_int`. A string, bytes, a scalar, a set, an iterator or anything else that
    is not a sequence raises ``TypeError`` (the message says it wants a sequence of
    ``what``); an array of another dimension, an empty sequence or one longer than
    ``max_entries`` raises ``ValueError``; all name ``name``. An entry that is not an
    integer raises ``TypeError``, one out of range ``ValueError``, naming ``name[i]``.
    """
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {value.shape}")
        value = list(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list, tuple or 1-D array of {what}, got {value!r}")
    if len(value) == 0:
        raise ValueError(f"{name} must not be empty")
    if max_entries is not None and len(value) > max_entries:
        raise ValueError(f"{name} must have at most {max_entries} entries, got {len(value)}")
    return [check_int(v, f"{name}[{i}]", minimum, maximum, maximum_text) for i, v in enumerate(value)]


def check_sequence(value: object, name: str, what: str) -> list:
    """Return ``value``, a non-empty list or tuple, as a list (its entries are not checked).

    A string, bytes, a set, a dict, an iterator, a scalar or anything else that is not a
    list or tuple raises ``TypeError`` (the message says it wants a list or tuple of
    ``what``); an empty one raises ``ValueError``; both name ``name``.
    """
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be a list or tuple of {what}, got {value!r}")
    if len(value) == 0:
        raise ValueError(f"{name} must not be empty")
    return list(value)


def check_lengths(value: object, name: str, *, max_entries: int | None = None) -> list[int]:
    """A non-empty sequence of lengths, each as :func:`check_length`, as a list of ``int``.

    A list, tuple or 1-D integer array of at most ``max_entries`` positive integers, each
    at most 2**28 (bools and floats refused); other input raises ``TypeError`` or
    ``ValueError`` as :func:`check_int_sequence`, naming ``name`` or the entry ``name[i]``.
    """
    return check_int_sequence(
        value,
        name,
        minimum=1,
        maximum=MAX_ELEMENTS,
        maximum_text=MAX_ELEMENTS_TEXT,
        max_entries=max_entries,
        what="positive integers",
    )


def check_callable(value: object, name: str, what: str) -> Callable:
    """Return ``value`` if it is callable, else raise ``TypeError`` naming ``name``.

    ``what`` describes the expected call in the message, which reads
    ``"{name} must be a callable {what}, got {type}"``, e.g. ``what="on integer arrays"``.
    """
    if not callable(value):
        raise TypeError(f"{name} must be a callable {what}, got {type(value).__name__}")
    return value


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` if it is a real bool (``bool`` or ``numpy.bool_``); ``'False'``, 0, 1 raise."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r} of type {type(value).__name__}")
    return bool(value)


def check_choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of the strings ``choices``.

    Raises ``TypeError`` naming ``name`` when ``value`` is not a string, ``ValueError`` when
    it is a string not among ``choices``.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {choices}, got {value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_size(shape: tuple[int, ...], what: str) -> None:
    """Refuse, before allocating, an array of ``shape`` with more than ``MAX_ELEMENTS`` entries.

    ``what`` names the array and the arguments that set its size, e.g.
    ``"the table (positions, d_model)"``.
    """
    total = 1
    for n in shape:
        total *= int(n)
    if total > MAX_ELEMENTS:
        raise ValueError(
            f"{what} would have shape {tuple(int(n) for n in shape)}, {total} entries; "
            f"the limit is {MAX_ELEMENTS_TEXT}"
        )


def _as_float(value: numbers.Real, name: str) -> float:
    """``float(value)``, with a Python int beyond float64's range (10**400) refused by name."""
    try:
        return float(value)
    except OverflowError:
        raise ValueError(
            f"{name} must be a finite real number, got an integer too large for float64 (beyond 1.8e308)"
        ) from None


def check_base(base: object) -> float:
    """Return ``base`` as a float if it is a finite real number greater than 1."""
    if type(base) is not float and (isinstance(base, (bool, np.bool_)) or not isinstance(base, numbers.Real)):
        raise TypeError(f"base must be a real number greater than 1, got {base!r}")
    base = _as_float(base, "base")
    if not math.isfinite(base) or base <= 1.0:
        raise ValueError(f"base must be a finite number greater than 1, got {base}")
    return base


def check_finite_real(value: object, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number."""
    if type(value) is not float and (
        isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real)
    ):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = _as_float(value, name)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_positive_real(value: object, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number greater than 0."""
    value = check_finite_real(value, name)
    if value <= 0.0:
        raise ValueError(f"{name} must be a finite positive number, got {value}")
    return value


def check_nonnegative_real(value: object, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number >= 0."""
    value = check_finite_real(value, name)
    if value < 0.0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def check_position(value: object, name: str) -> float:
    """Return a scalar position, distance or offset as a float: finite, ``|value| <= 2**53``."""
    if is_int(value) and abs(value) > MAX_POSITION:
        # compared exactly: float(2**53 + 1) would round down to the limit
        raise ValueError(f"{name} must have magnitude at most {MAX_POSITION_TEXT}, got {value}")
    value = check_finite_real(value, name)
    if abs(value) > MAX_POSITION:
        raise ValueError(f"{name} must have magnitude at most {MAX_POSITION_TEXT}, got {value}")
    return value


_FLOAT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.float16))


def check_float_dtype(dtype: object) -> np.dtype:
    """Return ``dtype`` as a numpy floating dtype (float16, float32 or float64).

    ``None`` is refused although ``np.dtype(None)`` is float64: the documented choices are
    the three dtypes, and a ``None`` here is more often a missing value than a wish for
    float64.
    """
    if dtype is None:
        raise TypeError("dtype must be float16, float32 or float64, got None")
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"dtype must be a numpy floating dtype, got {dtype!r}") from exc
    if dt not in _FLOAT_DTYPES:
        raise TypeError(f"dtype must be float16, float32 or float64, got {dt}")
    return dt


def check_seed(value: object, name: str = "seed") -> int:
    """A random seed: a non-negative integer (bools, floats, strings refused), as ``int``."""
    if not is_int(value):
        raise TypeError(
            f"{name} must be a non-negative integer, got {value!r} of type {type(value).__name__}"
        )
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return int(value)
