"""Benchmarks of posenc against the straightforward numpy formulations.

Run ``taskset -c 0 python scripts/bench.py`` (full, a few minutes, on one CPU: posenc starts
no thread unless asked, see ``posenc.set_num_threads``) or ``python scripts/bench.py --quick``
(small sizes, seconds); ``--json PATH`` also writes the results and a description of the
machine to ``PATH``. Each row is one implementation at one size: the median wall time of a
few repeats, or of a quarter of a second's worth for the smallest sizes
(``time.perf_counter``), the peak memory allocated during one extra call (``tracemalloc``,
to which numpy reports its array allocations) and the time ratio to the row's baseline.
For the sinusoidal tables the speedup over the straightforward float64
table (its time over this row's), the ratio to ``np.full`` of the same shape and dtype
(``vs fill``) and the max error against mpmath (at sampled positions, all columns) are
printed too; for RoPE the max error against an mpmath rotation, with new positions at
every call (an offset that changes, as while decoding).
Implementations compared with each other are timed in turn, round after round (after one
untimed round), so that background load falls on all of them alike. These are
measurements, not tests: they depend on the machine and on whatever else runs on it
(compare rows of one run, not runs).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import sys
import time
import tracemalloc

import numpy as np

from posenc import get_num_threads
from posenc.alibi import alibi_bias
from posenc.relative import t5_bias
from posenc.rope import apply_rope
from posenc.sinusoidal import frequencies, iter_sinusoidal_blocks, sinusoidal_encoding


def straightforward_table(length: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The textbook float64 table: angles ``p * w`` for every entry, then sin and cos of all."""
    angles = np.arange(length, dtype=np.float64)[:, None] * frequencies(d_model, base)[None, :]
    out = np.empty((length, d_model))
    out[:, 0::2] = np.sin(angles)
    out[:, 1::2] = np.cos(angles)
    return out


def float32_formula_table(length: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The common float32 version: positions and ``exp(-2i ln(base)/d)`` in float32."""
    pos = np.arange(length, dtype=np.float32)[:, None]
    div = np.exp(np.arange(0, d_model, 2, dtype=np.float32) * np.float32(-np.log(base) / d_model))
    angles = pos * div[None, :]
    out = np.empty((length, d_model), dtype=np.float32)
    out[:, 0::2] = np.sin(angles)
    out[:, 1::2] = np.cos(angles)
    return out


def rotate_half(x: np.ndarray) -> np.ndarray:
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def straightforward_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """``x * cos + rotate_half(x) * sin`` with (L, d) tables, the "half" pairing."""
    return x * cos + rotate_half(x) * sin


def _median_time(fn, repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        del result
    return statistics.median(times)


MIN_ROUND_SECONDS = 0.25  # small sizes: as many rounds as fit in this (at least ``repeats``)
MAX_ROUNDS = 301


def _round_robin(fns: dict, repeats: int) -> dict:
    """Median wall time of each function, timed in turn (``repeats`` rounds after one untimed
    round, or more where the rounds are short: as many as take about ``MIN_ROUND_SECONDS``,
    up to ``MAX_ROUNDS``).

    Taking turns exposes every implementation to the same background load, so the ratios
    between them are steadier than those of separate timing loops on a shared machine.
    The untimed round takes what only a first call pays (imports, the frequencies that
    posenc computes once per width with mpmath, Python's specialisation of the code, the
    heap's growth), which a median of a few rounds would otherwise carry for the smallest
    sizes.
    """
    t0 = time.perf_counter()
    for fn in fns.values():
        fn()
    first_round = time.perf_counter() - t0
    # Sizes whose round takes well under a millisecond get more rounds (the first round, which
    # pays the first calls, overestimates a round): a median of 7 calls of 40 us each was
    # once 2.5 times off on a freshly started machine.
    rounds = max(repeats, min(MAX_ROUNDS, int(MIN_ROUND_SECONDS / max(first_round, 1e-9))))
    times: dict = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            result = fn()
            times[name].append(time.perf_counter() - t0)
            del result
    return {name: statistics.median(ts) for name, ts in times.items()}


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del result
    return int(peak)


def _mp_max_error(table_rows: np.ndarray, positions: list[int], d_model: int, base: float = 10000.0):
    """Max |table - exact| over the given rows (interleaved), and in float32 ulps of the exact value."""
    import mpmath

    worst_abs, worst_ulp32 = 0.0, 0.0
    with mpmath.workprec(160):
        b = mpmath.mpf(base)
        omegas = [mpmath.power(b, mpmath.mpf(-2 * i) / d_model) for i in range(d_model // 2)]
        for row, p in zip(table_rows, positions, strict=True):
            for i, w in enumerate(omegas):
                for col, exact in ((2 * i, mpmath.sin(p * w)), (2 * i + 1, mpmath.cos(p * w))):
                    err = abs(mpmath.mpf(float(row[col])) - exact)
                    worst_abs = max(worst_abs, float(err))
                    ulp = float(np.spacing(np.float32(abs(float(exact)))))
                    worst_ulp32 = max(worst_ulp32, float(err) / ulp)
    return worst_abs, worst_ulp32


def _sample_positions(length: int) -> list[int]:
    picks = {0, 1, length // 3, length // 2 + 1, length - 2, length - 1}
    return sorted(p for p in picks if 0 <= p < length)


def _rope_mp_error(x: np.ndarray, got: np.ndarray, layout: str, samples) -> tuple[float, float]:
    """Max |got - exact| over sampled (head, row) pairs, and in ulps of ``got.dtype`` at the pair's norm.

    The exact value is the rotation, in 160-bit mpmath, of the pairs of ``x`` by the angle
    ``fl(m * theta_i)`` that :func:`~posenc.rope.apply_rope` forms in float64 (its
    documented input to cos and sin), with ``theta_i`` the float64 inverse frequencies.
    """
    import mpmath

    d = x.shape[-1]
    half = d // 2
    theta = frequencies(d)
    x3, g3 = x.reshape(-1, *x.shape[-2:]), got.reshape(-1, *x.shape[-2:])
    worst_abs, worst_ulp = 0.0, 0.0
    with mpmath.workprec(160):
        for head, row in samples:
            xr, gr = x3[head, row], g3[head, row]
            for i in range(half):
                j, k = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + half)
                w = mpmath.expj(mpmath.mpf(float(np.float64(row) * theta[i])))
                z = mpmath.mpc(float(xr[j]), float(xr[k])) * w
                ulp = float(np.spacing(got.dtype.type(float(abs(z)))))
                for col, exact in ((j, z.real), (k, z.imag)):
                    err = float(abs(mpmath.mpf(float(gr[col])) - exact))
                    worst_abs = max(worst_abs, err)
                    worst_ulp = max(worst_ulp, err / ulp)
    return worst_abs, worst_ulp


def _machine() -> dict:
    info = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        # the CPUs this run may use (taskset) and the threads posenc may start
        "cpus_allowed": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "posenc_threads": get_num_threads(),
    }
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as fh:
            kib = int(fh.readline().split()[1])
            info["memory_gib"] = round(kib / 2**20, 1)
    except OSError:  # pragma: no cover - not Linux
        pass
    return info


def run(quick: bool = False, log=print) -> dict:
    """Run every benchmark; returns ``{"machine": ..., "quick": ..., "rows": [...]}`` and prints a table.

    Every row has ``group``, ``impl``, ``size``, ``seconds`` (median wall time), ``peak_bytes``
    and ``ratio`` (time over the group's baseline: the straightforward float64 table, a
    copy of ``x`` of the same dtype, ``np.full``). Table rows add ``ratio_fill`` (time over
    ``np.full`` of the same shape and dtype), ``speedup`` (straightforward time over this
    one), ``max_abs_error`` and ``max_err_ulp32``; RoPE rows add ``max_abs_error`` and
    ``max_err_ulp`` (in ulps of the output dtype at the norm of the pair, which the
    rotation keeps).
    """
    repeats = 3 if quick else 7
    rope_repeats = 3 if quick else 11
    rows: list[dict] = []

    def emit(
        group, name, size, seconds, *, ratio, peak=None, error=None, error_key="max_err_ulp32", extra=None
    ):
        row = {
            "group": group,
            "impl": name,
            "size": size,
            "seconds": seconds,
            "peak_bytes": peak,
            "ratio": ratio,
        }
        row.update(extra or {})
        if error is not None:
            row["max_abs_error"], row[error_key] = error
        rows.append(row)
        t_txt = "" if seconds is None else f"{seconds * 1e3:10.1f} ms"
        mem_txt = "" if peak is None else f"{peak / 2**20:8.1f} MiB"
        ratio_txt = "" if ratio is None else f"x{ratio:6.2f}"
        fill_txt = f"fill x{row['ratio_fill']:5.2f}" if row.get("ratio_fill") is not None else ""
        speed_txt = f"{row['speedup']:5.1f}x" if row.get("speedup") is not None else ""
        err = "" if error is None else f"err {error[0]:.2e} ({error[1]:.3g} {error_key[8:]})"
        log(
            f"{group:10s} {name:30s} {size:25s} {t_txt:>13s} {mem_txt:>12s} "
            f"{ratio_txt:>8s} {speed_txt:>7s} {fill_txt:>11s}  {err}"
        )

    def record(group, name, size, fn, baseline_time=None, repeats=repeats, error=None):
        t = _median_time(fn, repeats)
        emit(
            group,
            name,
            size,
            t,
            ratio=(t / baseline_time) if baseline_time else 1.0,
            peak=_peak_bytes(fn),
            error=error,
        )
        return t

    log(
        f"{'group':10s} {'implementation':30s} {'size':25s} {'time':>13s} {'peak memory':>12s} "
        f"{'ratio':>8s} {'speedup':>7s} {'vs fill':>11s}  max error (vs mpmath)"
    )
    # ---- sinusoidal tables -------------------------------------------------------------
    # ratio: over the straightforward float64 table; vs fill: over np.full of the same
    # shape and dtype (the cost of writing the table's memory once).
    sizes = [(1024, 64), (4096, 256)] if quick else [(1024, 64), (16384, 512), (65536, 1024), (8192, 4096)]
    for length, d in sizes:
        size = f"L={length}, d={d}"
        sample = _sample_positions(length)
        shape = (length, d)
        variants = {
            "fill float64 (floor)": (lambda shape=shape: np.full(shape, 0.5), None),
            "straightforward float64": (
                lambda length=length, d=d: straightforward_table(length, d),
                np.float64,
            ),
            "float32 formula": (lambda length=length, d=d: float32_formula_table(length, d), np.float32),
            "posenc float64": (lambda length=length, d=d: sinusoidal_encoding(length, d), np.float64),
            "posenc float32": (
                lambda length=length, d=d: sinusoidal_encoding(length, d, dtype=np.float32),
                np.float32,
            ),
            "fill float32 (floor)": (lambda shape=shape: np.full(shape, 0.5, dtype=np.float32), None),
        }
        times = _round_robin({name: fn for name, (fn, _) in variants.items()}, repeats)
        t_straight = times["straightforward float64"]
        fills = {np.float64: times["fill float64 (floor)"], np.float32: times["fill float32 (floor)"]}
        for name, (fn, dt) in variants.items():
            t = times[name]
            extra = {"speedup": t_straight / t}
            if dt is not None:
                extra["ratio_fill"] = t / fills[dt]
            err = None if dt is None else _mp_max_error(fn()[sample], sample, d)
            emit(
                "sinusoidal",
                name,
                size,
                t,
                ratio=t / t_straight,
                peak=_peak_bytes(fn),
                error=err,
                extra=extra,
            )
    # a table too large to hold in float64 (2^20 x 1024 = 8 GiB): streamed in row blocks
    length, d = (2**14, 1024) if quick else (2**20, 1024)
    size = f"L={length}, d={d} (stream)"
    block = 4096

    def stream_straight():
        for a in range(0, length, block):
            ang = np.arange(a, min(length, a + block), dtype=np.float64)[:, None] * frequencies(d)[None, :]
            rows_ = np.empty((ang.shape[0], d), dtype=np.float32)
            rows_[:, 0::2], rows_[:, 1::2] = np.sin(ang), np.cos(ang)

    def stream_posenc():
        for _start, _rows in iter_sinusoidal_blocks(length, d, block=block, dtype=np.float32):
            pass

    sample = _sample_positions(length)
    ang = np.array(sample, dtype=np.float64)[:, None] * frequencies(d)[None, :]
    tab = np.empty((len(sample), d), dtype=np.float32)
    tab[:, 0::2], tab[:, 1::2] = np.sin(ang), np.cos(ang)
    base_t = record(
        "sinusoidal",
        "straightforward -> float32",
        size,
        stream_straight,
        repeats=1,
        error=_mp_max_error(tab, sample, d),
    )
    err = _mp_max_error(sinusoidal_encoding(np.array(sample), d, dtype=np.float32), sample, d)
    record("sinusoidal", "posenc float32 blocks", size, stream_posenc, base_t, repeats=1, error=err)
    # float32 formula at large positions (its error only; its table is not streamed)
    pos32 = np.array(sample, dtype=np.float32)[:, None]
    div = np.exp(np.arange(0, d, 2, dtype=np.float32) * np.float32(-np.log(10000.0) / d))
    tab32 = np.empty((len(sample), d), dtype=np.float32)
    tab32[:, 0::2], tab32[:, 1::2] = np.sin(pos32 * div), np.cos(pos32 * div)
    emit(
        "sinusoidal",
        "float32 formula (error only)",
        size,
        None,
        ratio=None,
        error=_mp_max_error(tab32, sample, d),
    )

    # ---- RoPE ---------------------------------------------------------------------------
    # ratio: over a copy of x of the same dtype (reading and writing that much memory).
    # Every call of apply_rope gets new positions (an offset that grows by one per call),
    # so it computes its cos and sin each time; the straightforward version reuses tables
    # made once. Errors are measured at positions 0..L-1.
    # float64 input has half the heads, so that x is 512 MiB in both dtypes (the
    # straightforward version's temporaries then stay within a few GiB).
    full = (2, 8, 512, 64) if quick else (8, 32, 4096, 128)
    length, d = full[-2], full[-1]
    ang = np.arange(length, dtype=np.float64)[:, None] * frequencies(d)[None, :]
    for dt, tag in ((np.float32, "f32"), (np.float64, "f64")):
        shape = full if dt == np.float32 else (full[0] // 2, *full[1:])
        lead = int(np.prod(shape[:-2]))
        samples = [(0, 0), (lead // 2, length // 2 + 1), (lead - 1, length - 1)]
        x = np.random.default_rng(0).standard_normal(shape).astype(dt)
        size = "x" + "x".join(map(str, shape)) + " " + tag
        cos = np.concatenate([np.cos(ang)] * 2, axis=-1).astype(dt)
        sin = np.concatenate([np.sin(ang)] * 2, axis=-1).astype(dt)
        offset = itertools.count(1)
        variants = {
            "copy of x (floor)": (lambda x=x: x.copy(), None),
            "x*cos + rotate_half(x)*sin": (lambda x=x, c=cos, s=sin: straightforward_rope(x, c, s), "half"),
            "posenc apply_rope half": (
                lambda x=x, o=offset: apply_rope(x, np.arange(length) + next(o), layout="half"),
                "half",
            ),
            "posenc apply_rope interleaved": (
                lambda x=x, o=offset: apply_rope(x, np.arange(length) + next(o)),
                "interleaved",
            ),
        }
        at_zero = {  # the same calls at positions 0..L-1, for the error
            "x*cos + rotate_half(x)*sin": variants["x*cos + rotate_half(x)*sin"][0],
            "posenc apply_rope half": lambda x=x: apply_rope(x, layout="half"),
            "posenc apply_rope interleaved": lambda x=x: apply_rope(x),
        }
        # More rounds than elsewhere: on the shared 2-core machine single rounds of these
        # 512 MiB calls are sometimes several times slower (seen: a copy at 290-360 ms against
        # 37-40 ms, with the kernel's time spent on memory), and the median of 11 outlasts
        # more of them than that of 7.
        times = _round_robin({name: fn for name, (fn, _) in variants.items()}, rope_repeats)
        t_copy = times["copy of x (floor)"]
        for name, (fn, layout) in variants.items():
            err = None if layout is None else _rope_mp_error(x, at_zero[name](), layout, samples)
            emit(
                "rope",
                name,
                size,
                times[name],
                ratio=times[name] / t_copy,
                peak=_peak_bytes(fn),
                error=err,
                error_key="max_err_ulp",
            )
        del x

    # ---- bias tables ----------------------------------------------------------------------
    heads, length = (8, 256) if quick else (16, 2048)
    size = f"H={heads}, L={length}"
    base_t = record("bias", "np.full (floor)", size, lambda: np.full((heads, length, length), -1.0))
    record("bias", "posenc alibi_bias", size, lambda: alibi_bias(heads, length), base_t)
    table = np.random.default_rng(1).standard_normal((32, heads))
    record("bias", "posenc t5_bias", size, lambda: t5_bias(table, length, length), base_t)
    return {"machine": _machine(), "quick": quick, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/bench.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (seconds)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    results = run(quick=args.quick)
    results["wall_seconds"] = time.perf_counter() - t0
    print(
        f"total wall time {results['wall_seconds']:.1f} s "
        f"on {results['machine'].get('cpu', platform.machine())}"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
            fh.write("\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
