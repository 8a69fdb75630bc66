"""Benchmarks of posenc against the straightforward numpy formulations.

Run ``python -m posenc.bench`` (full, a few minutes) or ``python -m posenc.bench --quick``
(small sizes, seconds); ``--json PATH`` also writes the results and a description of the
machine to ``PATH``. Each row is one implementation at one size: the median wall time of a
few repeats (``time.perf_counter``), the peak memory allocated during one extra call
(``tracemalloc``, to which numpy reports its array allocations) and the time ratio to the
row's baseline. For the sinusoidal tables the max error against mpmath (at sampled
positions, all columns) is printed too. These are measurements, not tests: they depend on
the machine and on whatever else runs on it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import tracemalloc

import numpy as np

from .alibi import alibi_bias
from .relative import t5_bias
from .rope import apply_rope
from .sinusoidal import frequencies, iter_sinusoidal_blocks, sinusoidal_encoding


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
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        del result
    return statistics.median(times)


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


def _machine() -> dict:
    info = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
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
    """Run every benchmark; returns ``{"machine": ..., "rows": [...]}`` and prints a table."""
    repeats = 3
    rows: list[dict] = []

    def record(group, name, size, fn, baseline_time=None, repeats=repeats, error=None, peak=True):
        t = _median_time(fn, repeats)
        mem = _peak_bytes(fn) if peak else None
        row = {
            "group": group,
            "impl": name,
            "size": size,
            "seconds": t,
            "peak_bytes": mem,
            "ratio": (t / baseline_time) if baseline_time else 1.0,
        }
        if error is not None:
            row["max_abs_error"], row["max_err_ulp32"] = error
        rows.append(row)
        err = "" if error is None else f"  err {error[0]:.2e} ({error[1]:.3g} ulp32)"
        mem_txt = "-" if mem is None else f"{mem / 2**20:9.1f} MiB"
        log(f"{group:12s} {name:28s} {size:22s} {t * 1e3:10.1f} ms {mem_txt:>13s}  x{row['ratio']:6.2f}{err}")
        return t

    log(f"{'group':12s} {'implementation':28s} {'size':22s} {'time':>13s} {'peak memory':>13s}  ratio")
    # ---- sinusoidal tables -------------------------------------------------------------
    sizes = [(1024, 64), (4096, 256)] if quick else [(1024, 64), (16384, 512), (65536, 1024), (8192, 4096)]
    for length, d in sizes:
        size = f"L={length}, d={d}"
        sample = _sample_positions(length)
        variants = [
            ("straightforward float64", lambda length=length, d=d: straightforward_table(length, d)),
            ("float32 formula", lambda length=length, d=d: float32_formula_table(length, d)),
            ("posenc float64", lambda length=length, d=d: sinusoidal_encoding(length, d)),
            (
                "posenc float32",
                lambda length=length, d=d: sinusoidal_encoding(length, d, dtype=np.float32),
            ),
        ]
        base_t = None  # the first variant is the baseline of the others
        for name, make in variants:
            err = _mp_max_error(make()[sample], sample, d)
            t = record("sinusoidal", name, size, make, base_t, error=err)
            base_t = t if base_t is None else base_t
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
    f32 = float32_formula_table(1, d)  # warm
    del f32
    err = _mp_max_error(sinusoidal_encoding(np.array(sample), d, dtype=np.float32), sample, d)
    record("sinusoidal", "posenc float32 blocks", size, stream_posenc, base_t, repeats=1, error=err)
    # float32 formula at large positions (its error only; its table is not streamed)
    pos32 = np.array(sample, dtype=np.float32)[:, None]
    div = np.exp(np.arange(0, d, 2, dtype=np.float32) * np.float32(-np.log(10000.0) / d))
    tab32 = np.empty((len(sample), d), dtype=np.float32)
    tab32[:, 0::2], tab32[:, 1::2] = np.sin(pos32 * div), np.cos(pos32 * div)
    e32 = _mp_max_error(tab32, sample, d)
    rows.append(
        {
            "group": "sinusoidal",
            "impl": "float32 formula (error only)",
            "size": size,
            "seconds": None,
            "peak_bytes": None,
            "ratio": None,
            "max_abs_error": e32[0],
            "max_err_ulp32": e32[1],
        }
    )
    log(
        f"{'sinusoidal':12s} {'float32 formula (error only)':28s} {size:22s} {'':>30s}"
        f"          err {e32[0]:.2e} ({e32[1]:.3g} ulp32)"
    )

    # ---- RoPE ---------------------------------------------------------------------------
    shape = (2, 8, 512, 64) if quick else (8, 32, 4096, 128)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    size = "x" + "x".join(map(str, shape)) + " f32"
    length, d = shape[-2], shape[-1]
    ang = np.arange(length, dtype=np.float64)[:, None] * frequencies(d)[None, :]
    cos = np.concatenate([np.cos(ang)] * 2, axis=-1).astype(np.float32)
    sin = np.concatenate([np.sin(ang)] * 2, axis=-1).astype(np.float32)
    base_t = record("rope", "copy of x (floor)", size, lambda x=x: x.copy())
    record("rope", "x*cos + rotate_half(x)*sin", size, lambda x=x: straightforward_rope(x, cos, sin), base_t)
    record("rope", "posenc apply_rope half", size, lambda x=x: apply_rope(x, layout="half"), base_t)
    record("rope", "posenc apply_rope interleaved", size, lambda x=x: apply_rope(x), base_t)
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
    parser = argparse.ArgumentParser(prog="python -m posenc.bench", description=__doc__.split("\n\n")[0])
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
