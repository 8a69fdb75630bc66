"""Shared settings and independent reference computations for the posenc tests.

Every expected value in this suite comes from a computation that does not call posenc:
mpmath at 256 bits (far more than float64's 53), closed forms, or small hand-derived
cases. The helpers below are that independent reference.
"""

from __future__ import annotations

import cmath
import math
import time
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

# Deterministic and quick: the same examples on every run, no example database on disk.
settings.register_profile("posenc", derandomize=True, max_examples=60, deadline=None, database=None)
settings.load_profile("posenc")

MP_PREC = 256
EPS = 2.0**-52  # float64 machine epsilon (one ulp at 1.0)


def mpf_exact(x: object) -> mpmath.mpf:
    """Exact mpmath copy of a Python/numpy int or float (no rounding)."""
    if isinstance(x, (int, np.integer)):
        return mpmath.mpf(int(x))
    return mpmath.mpf(float(x))


def mp_omegas(d_model: int, base: float = 10000.0) -> list[mpmath.mpf]:
    """ω_i = base^(-2i/d) at 256 bits, i = 0..d/2-1 (the real numbers, not float64)."""
    with mpmath.workprec(MP_PREC):
        b = mpf_exact(base)
        return [mpmath.power(b, mpmath.mpf(-2 * i) / d_model) for i in range(d_model // 2)]


def mp_table(positions, d_model: int, base: float = 10000.0, layout: str = "interleaved") -> list[list]:
    """The exact sinusoidal table (mpmath numbers) for the given positions."""
    omegas = mp_omegas(d_model, base)
    rows = []
    with mpmath.workprec(MP_PREC):
        for p in positions:
            pm = mpf_exact(p)
            s = [mpmath.sin(pm * w) for w in omegas]
            c = [mpmath.cos(pm * w) for w in omegas]
            if layout == "interleaved":
                rows.append([v for pair in zip(s, c, strict=True) for v in pair])
            elif layout in ("half", "split"):  # "split" is a synonym of "half"
                rows.append(s + c)
            else:  # pragma: no cover - test helper misuse
                raise AssertionError(layout)
    return rows


def rounded_omegas(d_model: int, base: float = 10000.0) -> list[float]:
    """omega_i = base**(-2i/d), i = 0..d/2-1, at 256 bits, rounded once to float64."""
    return [float(w) for w in mp_omegas(d_model, base)]


def mp_cos_sum(k: float, d_model: int, base: float = 10000.0) -> float:
    """sum_i cos(k * omega_i) over the exact frequencies, at 256 bits, rounded once to float64."""
    with mpmath.workprec(256):
        kk = mpmath.mpf(k)
        return float(mpmath.fsum(mpmath.cos(kk * w) for w in mp_omegas(d_model, base)))


def llama3_frequencies(d, base, factor, low_ff, high_ff, orig) -> list[float]:
    """transformers' Llama 3 scaling of the inverse frequencies, written with ``math``."""
    out = []
    for w in rounded_omegas(d, base):
        wavelen = 2 * math.pi / w
        if wavelen < orig / high_ff:
            out.append(w)
        elif wavelen > orig / low_ff:
            out.append(w / factor)
        else:
            s = (orig / wavelen - low_ff) / (high_ff - low_ff)
            out.append((1 - s) * w / factor + s * w)
    return out


def yarn_ramp(
    d: int,
    base: float,
    orig: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    *,
    truncate: bool = True,
    turn: float = 2 * math.pi,
) -> list[float]:
    """YaRN's ramp γ_i over the pairs i = 0..d/2-1, as transformers' ``_compute_yarn_parameters``.

    Pair i makes orig·ω_i/turn turns in the original context; it does exactly β turns at
    i(β) = d·ln(orig / (turn·β)) / (2 ln base). The ramp runs from lo = i(beta_fast) to
    hi = i(beta_slow) (floor and ceil when ``truncate``), clipped to [0, d-1] and kept
    apart by 0.001: γ_i = clip((i - lo) / (hi - lo), 0, 1). Pairs with γ = 0 keep ω_i,
    pairs with γ = 1 take ω_i / factor.
    """

    def pair_for(rotations: float) -> float:
        return d * math.log(orig / (rotations * turn)) / (2 * math.log(base))

    lo, hi = pair_for(beta_fast), pair_for(beta_slow)
    if truncate:
        lo, hi = math.floor(lo), math.ceil(hi)
    lo, hi = max(lo, 0), min(hi, d - 1)
    if lo == hi:
        hi += 0.001
    return [min(max((i - lo) / (hi - lo), 0.0), 1.0) for i in range(d // 2)]


def yarn_frequencies(
    d: int,
    base: float,
    factor: float,
    orig: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> list[float]:
    """YaRN inverse frequencies ω_i (1 - γ_i) + (ω_i / factor) γ_i, γ from :func:`yarn_ramp`."""
    ramp = yarn_ramp(d, base, orig, beta_fast, beta_slow, truncate=truncate)
    return [w * (1 - g) + w / factor * g for w, g in zip(rounded_omegas(d, base), ramp, strict=True)]


def exact_t5_bucket(
    rel: int, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> int:
    """T5 bucket of one relative position, from the definition, in exact rational arithmetic."""
    half = num_buckets // 2 if bidirectional else num_buckets
    offset = half if (bidirectional and rel > 0) else 0
    n = abs(rel) if bidirectional else max(-rel, 0)
    m = half // 2
    s = half - m
    if n < m:
        return offset + n
    ratio, target = Fraction(max_distance, m), Fraction(n, m) ** s
    t = 0
    while t + 1 <= s - 1 and ratio ** (t + 1) <= target:  # largest t with (D/m)^t <= (n/m)^s
        t += 1
    return offset + m + t


def reference_table(positions, d_model: int, base: float = 10000.0, layout: str = "interleaved"):
    """:func:`mp_table` rounded to the nearest float64."""
    return np.array([[float(v) for v in row] for row in mp_table(positions, d_model, base, layout)])


def column_omegas(d_model: int, base: float = 10000.0, layout: str = "interleaved") -> np.ndarray:
    """The frequency that drives each column, as float64 (only used to size tolerances)."""
    w = np.array([float(v) for v in mp_omegas(d_model, base)])
    return np.repeat(w, 2) if layout == "interleaved" else np.concatenate([w, w])


def angle_tolerance(positions, d_model: int, base: float = 10000.0, layout: str = "interleaved"):
    """Entrywise error bound of a float64 table against the exact values.

    The angle is formed in float64 as fl(p * fl(ω)): ω is rounded (relative error
    ≤ 2^-53) and so is the product (≤ 2^-53), so the computed angle is off by at most
    |p|·ω·(2^-52 + 2^-106). sin and cos are 1-Lipschitz, so that is also the error it
    causes in the value; libm/SIMD sin/cos add ≤ a few ulp (≤ 2^-52 each) and the final
    rounding of the reference to float64 another 2^-53. Bound used:
    |p|·ω·2^-52·(1 + 2^-40) + 4·2^-52.
    """
    p = np.abs(np.array([float(x) for x in positions]))[:, None]
    return p * column_omegas(d_model, base, layout)[None, :] * EPS * (1 + 2.0**-40) + 4 * EPS


def ulp32(x: float) -> float:
    """One float32 ulp at |x| (spacing of float32 numbers there)."""
    return float(np.spacing(np.float32(abs(x))))


def hand_softmax(row) -> list[float]:
    """Softmax of one row written out with math.exp (no numpy), -inf giving weight 0."""
    finite = [s for s in row if s != -math.inf]
    top = max(finite)
    e = [0.0 if s == -math.inf else math.exp(s - top) for s in row]
    total = math.fsum(e)
    return [v / total for v in e]


def reference_shift_matrix(d_model: int, offset: float, base: float = 10000.0) -> np.ndarray:
    """M_k built from mpmath cos/sin of k·ω_i (interleaved layout), rounded to float64.

    Block i acts on (sin pω_i, cos pω_i): [[cos kω_i, sin kω_i], [-sin kω_i, cos kω_i]]
    (the angle-addition formulas sin(a+b) = sin a cos b + cos a sin b and
    cos(a+b) = cos a cos b - sin a sin b).
    """
    m = np.zeros((d_model, d_model))
    with mpmath.workprec(MP_PREC):
        k = mpf_exact(offset)
        for i, w in enumerate(mp_omegas(d_model, base)):
            c, s = float(mpmath.cos(k * w)), float(mpmath.sin(k * w))
            m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, s], [-s, c]]
    return m


RNG_SEED = 20240609  # the seed of the RoPE tests' random inputs


def ref_rope_complex(x: np.ndarray, positions, thetas, layout: str = "interleaved", scale: float = 1.0):
    """Rotate every pair by complex multiplication in mpmath (thetas given as floats)."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    half = d // 2
    out = np.empty_like(x)
    with mpmath.workprec(MP_PREC):
        for row, m in enumerate(positions):
            for i, th in enumerate(thetas):
                j, k = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + half)
                z = mpmath.mpc(float(x[row, j]), float(x[row, k]))
                w = z * mpmath.expj(mpmath.mpf(float(m)) * mpmath.mpf(th)) * scale
                out[row, j], out[row, k] = float(w.real), float(w.imag)
    return out


def angle_atol(positions, xmax: float) -> float:
    """Bound on the float64 error: the angle m*theta is off by <= |m| 2^-52, plus round-off."""
    return (float(np.max(np.abs(positions))) * 2 * EPS + 16 * EPS) * xmax * 2


def pair_index(d: int, layout: str) -> list[tuple[int, int]]:
    half = d // 2
    return [(2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + half) for i in range(half)]


def loop_rotate(x, angle, layout: str, rot: int | None = None, scale: float = 1.0) -> np.ndarray:
    """Rotate pair j of row (n, tok) of x[..., L, d] by angle(n, tok, j) with Python complex numbers.

    ``n`` is the tuple of leading indices; only the first ``rot`` channels rotate (paired
    inside them by ``layout``), the others are copied.
    """
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    rot = d if rot is None else rot
    out = x.copy()
    for n in np.ndindex(x.shape[:-2]):
        for tok in range(x.shape[-2]):
            for j, (p, q) in enumerate(pair_index(rot, layout)):
                z = complex(x[n + (tok, p)], x[n + (tok, q)]) * cmath.exp(1j * angle(n, tok, j)) * scale
                out[n + (tok, p)], out[n + (tok, q)] = z.real, z.imag
    return out


def assert_rotation_close(got, ref, x, scale: float = 1.0, slack: float = 8.0) -> None:
    """|got - ref| <= slack * eps * (|a| + |b|) * scale, per entry (rounding of two float64 rotations)."""
    bound = slack * EPS * (np.abs(np.asarray(x, dtype=np.float64)).max(initial=0.0) * 2 + 1e-300) * scale
    assert np.all(np.abs(np.asarray(got, dtype=np.float64) - ref) <= bound), float(np.max(np.abs(got - ref)))


def refuses(exc, name: str, fn, *args, **kwargs) -> None:
    """``fn(*args, **kwargs)`` raises ``exc`` whose message names ``name``, in under one second
    of CPU time (CPU, not wall time: on a shared, busy machine waiting for a core is not work)."""
    start = time.process_time()
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    elapsed = time.process_time() - start
    assert name in str(info.value), f"message {str(info.value)!r} does not name {name!r}"
    assert elapsed < 1.0, f"refusing took {elapsed:.2f} s"


def refuses_call(call, exc, name: str) -> None:
    """``call()`` raises ``exc`` naming ``name`` as a whole word, in under one second of CPU time."""
    import re

    start = time.process_time()
    with pytest.raises(exc) as info:
        call()
    elapsed = time.process_time() - start
    message = str(info.value)
    assert re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message), (name, message)
    assert elapsed < 1.0, (name, elapsed)  # refused at once, not after a long computation


def mistake_of(check, fn) -> str | None:
    """The known mistake (or result problem) an exercise checker reports for ``fn``."""
    from posenc.exercises import ExerciseError

    with pytest.raises(ExerciseError) as info:
        check(fn)
    return info.value.mistake


def expect_mistake(check, fn, *words: str) -> Exception:
    """``check(fn)`` must raise an ExerciseError whose message contains every word."""
    from posenc.exercises import ExerciseError

    with pytest.raises(ExerciseError) as info:
        check(fn)
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in message:\n{message}"
    assert "Hint:" in message
    assert info.value.mistake is not None
    return info.value


def expect_problem(check, fn, problem: str, *words: str) -> Exception:
    """``check(fn)`` must report the result problem ``problem``, without a warning of its own."""
    from posenc.exercises import ExerciseError

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ExerciseError) as info:
            check(fn)
    message = str(info.value)
    assert info.value.mistake == problem, message
    for word in words:
        assert word in message, f"{word!r} not in message:\n{message}"
    assert "Traceback" not in message
    return info.value


def draw_array(draw, shape: tuple[int, ...], dtype) -> np.ndarray:
    """A hypothesis-drawn array: any value of an integer dtype, floats in [-8, 8] otherwise."""
    size = math.prod(shape)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        vals = draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=size, max_size=size))
        return np.array(vals, dtype=dtype).reshape(shape)
    width = 16 if dtype == np.float16 else 64
    vals = draw(st.lists(st.floats(-8, 8, width=width), min_size=size, max_size=size))
    return np.array(vals, dtype=dtype).reshape(shape)


def public_functions(*module_names: str) -> set[str]:
    """Names of the callables defined (not imported) in the given ``posenc.<name>`` modules."""
    import importlib

    names = set()
    for mod_name in module_names:
        mod = importlib.import_module(f"posenc.{mod_name}")
        for name, obj in vars(mod).items():
            if not name.startswith("_") and callable(obj) and getattr(obj, "__module__", "") == mod.__name__:
                names.add(name)
    return names


@pytest.fixture
def num_threads():
    """``num_threads(n)`` sets ``posenc.set_num_threads(n)`` for the test; restored after it."""
    import posenc

    previous = posenc.get_num_threads()
    yield posenc.set_num_threads
    posenc.set_num_threads(previous)


@pytest.fixture
def started_threads(monkeypatch) -> list[str]:
    """The names of the threads posenc's kernels start during the test, in order."""
    import posenc._rotate as rotate

    names: list[str] = []
    real_thread = rotate.threading.Thread

    class CountingThread(real_thread):
        def start(self) -> None:
            names.append(self.name)
            super().start()

    monkeypatch.setattr(rotate.threading, "Thread", CountingThread)
    return names
