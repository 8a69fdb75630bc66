"""The table kernel (posenc/_table.py) through sinusoidal_encoding: ``out=``, blocks, accuracy.

Expected values are independent of posenc: mpmath at 256 bits (tests/conftest.py) and the
straightforward ``sin(p * w)`` formula written out here in numpy.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from conftest import EPS, mp_omegas, mp_table
from hypothesis import given
from hypothesis import strategies as st

import posenc
from posenc.sinusoidal import iter_sinusoidal_blocks


def straightforward(positions, d_model, base=10000.0):
    """The textbook table: float64 angles p * w, then sin and cos of every entry."""
    with mpmath.workprec(113):
        w = np.array([float(v) for v in mp_omegas(d_model, base)])
    ang = np.asarray(positions, dtype=np.float64)[:, None] * w[None, :]
    out = np.empty((ang.shape[0], d_model))
    out[:, 0::2], out[:, 1::2] = np.sin(ang), np.cos(ang)
    return out


def mp_errors(table, positions, d_model):
    exact = mp_table(positions, d_model)
    return np.array(
        [
            [abs(float(mpmath.mpf(float(g)) - e)) for g, e in zip(row, ex, strict=True)]
            for row, ex in zip(table, exact, strict=True)
        ]
    )


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_out_buffer_identical_and_returned(layout, dtype):
    L, d = 1000, 48
    expected = posenc.sinusoidal_encoding(L, d, layout=layout, dtype=dtype)
    buf = np.full((L, d), 7.0, dtype=dtype)
    got = posenc.sinusoidal_encoding(L, d, layout=layout, dtype=dtype, out=buf)
    assert got is buf
    np.testing.assert_array_equal(buf, expected)


def test_out_buffer_validation():
    with pytest.raises(ValueError, match="out"):
        posenc.sinusoidal_encoding(10, 8, out=np.empty((10, 6)))
    with pytest.raises(ValueError, match="out"):
        posenc.sinusoidal_encoding(10, 8, out=np.empty((10, 8), dtype=np.float32))
    with pytest.raises(TypeError, match="out"):
        posenc.sinusoidal_encoding(10, 8, out=[[0.0] * 8] * 10)
    ro = np.empty((10, 8))
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="writable"):
        posenc.sinusoidal_encoding(10, 8, out=ro)


@pytest.mark.parametrize("block", [1, 7, 256, 300, 5000])
@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_blocks_identical_to_one_shot(block, layout):
    positions = np.arange(-700, 1900)
    whole = posenc.sinusoidal_encoding(positions, 32, layout=layout, dtype=np.float32)
    starts, parts = [], []
    for start, rows in iter_sinusoidal_blocks(positions, 32, block=block, layout=layout, dtype=np.float32):
        starts.append(start)
        parts.append(rows)
        assert rows.dtype == np.float32 and rows.shape[1] == 32
    assert starts == list(range(0, positions.size, block))
    np.testing.assert_array_equal(np.concatenate(parts), whole)


def test_blocks_validation():
    with pytest.raises(ValueError, match="block"):
        next(iter_sinusoidal_blocks(10, 8, block=0))
    with pytest.raises(ValueError, match="d_model"):
        next(iter_sinusoidal_blocks(10, 7))


@given(
    start=st.integers(-(2**40), 2**40),
    length=st.integers(1, 600),
    d_model=st.sampled_from([2, 4, 6, 16, 64]),
    seed=st.integers(0, 2**32 - 1),
)
def test_same_bits_for_a_position_whatever_the_call(start, length, d_model, seed):
    # A consecutive run, the same positions shuffled, and one row at a time agree exactly.
    positions = np.arange(start, start + length, dtype=np.int64)
    run = posenc.sinusoidal_encoding(positions, d_model)
    perm = np.random.default_rng(seed).permutation(length)
    np.testing.assert_array_equal(posenc.sinusoidal_encoding(positions[perm], d_model), run[perm])
    r = int(perm[0])
    np.testing.assert_array_equal(posenc.sinusoidal_encoding([int(positions[r])], d_model)[0], run[r])


def test_more_accurate_than_straightforward_at_large_positions():
    # Sampled rows of an L = 65536 table (and beyond): the textbook version's error grows
    # like |p| w 2^-53; posenc's stays at a few float64 rounding errors.
    d = 64
    positions = [0, 1, 255, 256, 257, 4095, 65535, 2**20 - 1, 2**20, 2**24 + 3, 2**30 + 12345]
    fast = posenc.sinusoidal_encoding(np.array(positions), d)
    err_fast = mp_errors(fast, positions, d)
    err_naive = mp_errors(straightforward(positions, d), positions, d)
    assert err_fast.max() <= 4 * EPS
    assert err_naive.max() > 100 * err_fast.max()
    # and no worse than the textbook table at small positions either
    small = list(range(0, 40))
    assert mp_errors(posenc.sinusoidal_encoding(40, d), small, d).max() <= max(
        4 * EPS, mp_errors(straightforward(small, d), small, d).max()
    )


def _within_one_ulp32(got: np.ndarray, exact_rows) -> None:
    for g_row, e_row in zip(got, exact_rows, strict=True):
        for g, e in zip(g_row, e_row, strict=True):
            cr = np.float32(float(e))  # float64 nearest, then float32: ties aside, the float32 nearest
            with mpmath.workprec(256):
                # correctly rounded float32 of e, from its two float32 neighbours
                lo = np.float32(cr) if mpmath.mpf(float(cr)) <= e else np.nextafter(cr, np.float32(-2))
                hi = np.nextafter(lo, np.float32(2))
                cr = lo if abs(mpmath.mpf(float(lo)) - e) <= abs(mpmath.mpf(float(hi)) - e) else hi
            assert g in (cr, np.nextafter(cr, np.float32(-2)), np.nextafter(cr, np.float32(2))), (g, cr)


def test_float32_within_one_ulp_up_to_2_20():
    d = 64
    rng = np.random.default_rng(3)
    positions = np.unique(np.concatenate([np.arange(2**20 - 40, 2**20 + 1), rng.integers(0, 2**20, 40)]))
    got = posenc.sinusoidal_encoding(positions, d, dtype=np.float32)
    _within_one_ulp32(got, mp_table(positions.tolist(), d))


def test_float32_small_values_keep_relative_accuracy():
    # Near a zero of sin or cos the float32 ulp is tiny; find such entries below 2^20 and
    # check them (they take the direct path, so their error is relative, not absolute).
    d = 1024
    w = np.array([float(v) for v in mp_omegas(d)])
    positions = np.arange(2**20 - 4096, 2**20)
    ang = positions[:, None] * w[None, :]
    near = np.abs(np.sin(ang)) < 2.0**-16
    rows, cols = np.nonzero(near)
    assert rows.size > 0
    got = posenc.sinusoidal_encoding(positions, d, dtype=np.float32)
    pos_sel = positions[rows[:40]].tolist()
    exact = mp_table(pos_sel, d)
    for k, (r, c) in enumerate(zip(rows[:40], cols[:40], strict=True)):
        _within_one_ulp32(got[r : r + 1, 2 * c : 2 * c + 1], [[exact[k][2 * c]]])


@pytest.fixture(
    params=["default", "tiny", "tiny-threads"], ids=["default-steps", "tiny-steps", "tiny-steps-threads"]
)
def steps(request, monkeypatch, num_threads):
    """Run with the default row step, with 5 pairs per step (a row or less per step), and
    with 5 pairs per step shared among 4 threads whatever the size."""
    import posenc._rotate as rotate
    import posenc._table as table

    if request.param != "default":
        monkeypatch.setattr(table, "CHUNK_PAIRS", 5)
    if request.param == "tiny-threads":
        monkeypatch.setattr(rotate, "THREAD_MIN_PAIRS", 0)
        num_threads(4)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_threads_give_the_bits_of_one_thread(monkeypatch, num_threads, started_threads, layout, dtype):
    # A large table is filled by two threads, each a contiguous run of row ranges with its
    # own scratch; the result must be the one-thread table bit for bit.
    import posenc._rotate as rotate
    import posenc._table as table

    monkeypatch.setattr(rotate, "THREAD_MIN_PAIRS", 10_000)
    monkeypatch.setattr(table, "CHUNK_PAIRS", 1 << 12)  # ranges of 128 rows: many for each thread
    positions = np.arange(-700, 2300)  # crosses position 0 and many 256-position blocks
    num_threads(2)
    threaded = posenc.sinusoidal_encoding(positions, 64, layout=layout, dtype=dtype)
    assert len(started_threads) == 1
    num_threads(1)
    started_threads.clear()
    one = posenc.sinusoidal_encoding(positions, 64, layout=layout, dtype=dtype)
    assert started_threads == []
    np.testing.assert_array_equal(threaded, one)


def _layout_columns(table: np.ndarray, layout: str) -> np.ndarray:
    """The table in the interleaved column order (sin w_0, cos w_0, sin w_1, ...)."""
    if layout == "interleaved":
        return table
    half = table.shape[1] // 2
    out = np.empty_like(table)
    out[:, 0::2], out[:, 1::2] = table[:, :half], table[:, half:]
    return out


@given(
    start=st.integers(-(2**45), 2**45),
    length=st.integers(1, 700),
    d_model=st.sampled_from([2, 6, 16, 40]),
    layout=st.sampled_from(["interleaved", "half"]),
    picks=st.lists(st.integers(0, 10**6), min_size=1, max_size=3),
)
def test_consecutive_table_against_mpmath(start, length, d_model, layout, picks):
    # float64 tables of consecutive positions anywhere up to 2^45: every sampled entry
    # within 4 * 2^-52 of the exact value (mpmath), in both layouts.
    positions = np.arange(start, start + length, dtype=np.int64)
    table = _layout_columns(posenc.sinusoidal_encoding(positions, d_model, layout=layout), layout)
    rows = sorted({0, length - 1, *(p % length for p in picks)})
    err = mp_errors(table[rows], positions[rows].tolist(), d_model)
    assert err.max() <= 4 * EPS


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_steps_and_blocks_cross_boundaries(steps, layout, dtype):
    # Rows on both sides of the 256-position block boundaries and of the row steps, with
    # negative positions: sampled rows against mpmath, and the same bits as one row at a time.
    positions = np.arange(-300, 530)
    table = posenc.sinusoidal_encoding(positions, 10, layout=layout, dtype=dtype)
    rows = [0, 43, 44, 45, 299, 300, 301, 555, 556, 829]
    got = _layout_columns(table[rows], layout)
    exact = mp_table(positions[rows].tolist(), 10)
    if dtype == np.float64:
        assert mp_errors(got, positions[rows].tolist(), 10).max() <= 4 * EPS
    else:
        _within_one_ulp32(got, exact)
    one_at_a_time = np.concatenate(
        [posenc.sinusoidal_encoding([int(p)], 10, layout=layout, dtype=dtype) for p in positions[rows]]
    )
    np.testing.assert_array_equal(one_at_a_time, table[rows])


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_out_may_be_a_strided_view(layout, dtype):
    expected = posenc.sinusoidal_encoding(np.arange(100, 400), 12, layout=layout, dtype=dtype)
    big = np.zeros((300, 24), dtype=dtype)
    view = big[:, ::2]
    got = posenc.sinusoidal_encoding(np.arange(100, 400), 12, layout=layout, dtype=dtype, out=view)
    assert got is view
    np.testing.assert_array_equal(view, expected)
    assert np.all(big[:, 1::2] == 0)


def test_gapped_and_fractional_positions_against_mpmath():
    # Not a consecutive run: integers with gaps, repeated, and non-integer positions.
    positions = [5.5, 7, 7, -1e6, 2**33 + 0.25, 1023, 1e-3, 256, 255]
    table = posenc.sinusoidal_encoding(np.array(positions), 16)
    assert mp_errors(table, positions, 16).max() <= 4 * EPS


def test_tiny_entries_are_recomputed_in_every_path():
    # An entry of magnitude <= 2^-20 is evaluated directly, whichever path computes its row:
    # find a position where sin(p w_i) is tiny (p near a multiple of pi / w_i), then check
    # a consecutive run around it, the row alone and a shuffled array give the same bits,
    # and the float32 entry is within one ulp of the correctly rounded value.
    d = 64
    w = np.array([float(v) for v in mp_omegas(d)])
    p = np.arange(0, 2**22, dtype=np.float64)
    k = np.argmin(np.abs(np.sin(p * w[3])))
    p_tiny = int(p[k])
    assert abs(np.sin(p_tiny * w[3])) < 2.0**-20
    run = np.arange(p_tiny - 300, p_tiny + 300)
    for dtype in (np.float64, np.float32):
        table = posenc.sinusoidal_encoding(run, d, dtype=dtype)
        row = posenc.sinusoidal_encoding([p_tiny], d, dtype=dtype)[0]
        np.testing.assert_array_equal(row, table[300])
        shuffled = posenc.sinusoidal_encoding(run[::-1], d, dtype=dtype)
        np.testing.assert_array_equal(shuffled[::-1], table)
    _within_one_ulp32(posenc.sinusoidal_encoding([p_tiny], d, dtype=np.float32), mp_table([p_tiny], d))


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_float32_table_is_the_float64_table_rounded(layout):
    # Including entries near zeros of sin and cos (recomputed directly in both dtypes).
    w = np.array([float(v) for v in mp_omegas(64)])
    p = np.arange(0, 2**22, dtype=np.float64)
    p_tiny = int(p[np.argmin(np.abs(np.cos(p * w[2])))])
    positions = np.arange(p_tiny - 2000, p_tiny + 1000)
    t64 = posenc.sinusoidal_encoding(positions, 64, layout=layout)
    assert np.sum(np.abs(t64) < 2.0**-20) > 0
    t32 = posenc.sinusoidal_encoding(positions, 64, layout=layout, dtype=np.float32)
    np.testing.assert_array_equal(t32, t64.astype(np.float32))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_small_entry_scan_agrees_with_magnitudes(dtype):
    # The table looks for entries below 2^-20 by reading integer views of the float bits
    # (posenc._table._below_tiny); compare with the magnitudes as Python floats, at and next
    # to the threshold, of both signs, zeros included, wherever the entry sits.
    from posenc._table import _below_tiny

    t = dtype(2.0**-20)
    around = [t, np.nextafter(t, dtype(0)), np.nextafter(t, dtype(1)), dtype(0), dtype(0.5), dtype(1)]
    for value in [s * a for a in around for s in (dtype(1), dtype(-1))]:
        expected = abs(float(value)) < 2.0**-20
        for filler in (dtype(1), dtype(-1), dtype(0.25)):
            row = np.full(7, filler, dtype=dtype)
            row[3] = value
            assert bool(_below_tiny(row)) == expected, (value, filler)
            two = np.stack([row, np.full(7, filler, dtype=dtype)])
            assert bool(_below_tiny(two[:, 1::2].copy())) == expected
            assert _below_tiny(two, axis=1).tolist() == [expected, False]
    assert not _below_tiny(np.array([0.5, -0.75, 1.0], dtype=dtype))


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_row_of_position_zero_is_exact(layout, dtype):
    # sin 0 = +0 and cos 0 = 1 in every column, wherever position 0 sits in the run (the
    # small-entry scan leaves that row out: its zeros are exact, not rounding residue).
    for positions in (np.arange(0, 700), np.arange(-300, 400), np.arange(-699, 1), [0], [5, 0, -5]):
        table = _layout_columns(posenc.sinusoidal_encoding(positions, 64, layout=layout, dtype=dtype), layout)
        row = table[list(np.asarray(positions)).index(0)]
        assert np.all(row[0::2] == 0) and not np.any(np.signbit(row[0::2]))
        assert np.all(row[1::2] == 1)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("first", [-300, 0, 15000, 16384])
def test_runs_from_any_start_give_the_bits_of_any_other_call(steps, layout, dtype, first):
    # A run that starts before, at or after position 0 or 16384 must give the bits of the
    # same positions in another order and of one row at a time; with tiny steps and four
    # threads each thread evaluates the start phases of its own blocks.
    positions = np.arange(first, first + 1500)
    run = posenc.sinusoidal_encoding(positions, 16, layout=layout, dtype=dtype)
    perm = np.random.default_rng(first & 0xFFFF).permutation(positions.size)
    np.testing.assert_array_equal(
        posenc.sinusoidal_encoding(positions[perm], 16, layout=layout, dtype=dtype), run[perm]
    )
    rows = [0, 255, 256, positions.size // 2, positions.size - 1]
    one_at_a_time = np.concatenate(
        [posenc.sinusoidal_encoding([int(positions[r])], 16, layout=layout, dtype=dtype) for r in rows]
    )
    np.testing.assert_array_equal(one_at_a_time, run[rows])


def test_tiny_entries_are_located_row_by_row_exactly():
    # posenc._table.fix_tiny finds the rows holding an entry below 2^-20 by integer
    # readings along each row, then the entries in them; compare with the magnitudes
    # entry by entry (zeros of both signs, the threshold and its neighbours, in a few rows).
    from posenc._table import TINY as _TINY
    from posenc._table import fix_tiny

    d = 8
    pos = np.arange(100.0, 106.0)
    rows = np.full((pos.size, d // 2), 0.5 + 0.75j)
    planted = {
        (0, 1): 2.0**-21,
        (2, 0): -0.0,
        (2, 7): -(2.0**-30),
        (3, 3): np.nextafter(_TINY, 0),
        (1, 5): -np.nextafter(_TINY, 0),
        (4, 4): _TINY,  # not below the threshold: left alone
        (5, 6): -_TINY,  # likewise
        (5, 2): 0.0,
    }
    vals = rows.view(np.float64)
    for (r, c), v in planted.items():
        vals[r, c] = v
    expected = sorted((r, c) for (r, c), v in planted.items() if abs(v) < _TINY)
    r, col = fix_tiny(rows, pos, d, 10000.0)
    assert sorted(zip(r.tolist(), col.tolist(), strict=True)) == expected
    # the located entries now hold sin/cos of p * w_i evaluated directly
    for rr, cc in expected:
        exact = mp_table([float(pos[rr])], d)[0][cc]
        assert abs(vals[rr, cc] - float(exact)) <= 2 * EPS


def test_kept_offsets_take_the_memory_stated():
    # For each of the last eight (d_model, base) pairs the offsets of a block are kept:
    # 256 rows of d_model / 2 complex128 values, 2 KiB per column, 8 MiB at d_model = 4096.
    from posenc._table import offsets

    d = 4096
    assert offsets(d, 10000.0).nbytes == 2048 * d == 8 * 2**20
    assert not offsets(d, 10000.0).flags.writeable
    assert offsets.cache_info().maxsize == 8


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_an_entry_below_tiny_gets_its_direct_value(steps, layout, dtype):
    # At d = 512 the entry (p = 984, column 359) is below 2^-20: the product of angle
    # addition is not its bits, the direct evaluation is (within 2 ulps of mpmath,
    # relative). Every table that holds it, a run from 0, a run around it or the row
    # alone, must give the directly evaluated value, bit for bit the same.
    from posenc._table import sincos_rows

    d, p, col = 512, 984, 359
    product = sincos_rows(np.array([float(p)]), d, 10000.0).view(np.float64)[0, col]
    exact = float(mp_table([p], d)[0][col])
    assert abs(exact) < 2.0**-20 and product != exact  # the entry needs its direct evaluation
    first = posenc.sinusoidal_encoding(1200, d, layout=layout, dtype=dtype)
    part = posenc.sinusoidal_encoding(np.arange(900, 1100), d, layout=layout, dtype=dtype)
    alone = posenc.sinusoidal_encoding([p], d, layout=layout, dtype=dtype)
    np.testing.assert_array_equal(part, first[900:1100])
    np.testing.assert_array_equal(alone[0], first[p])
    value = _layout_columns(first[p : p + 1].astype(np.float64), layout)[0, col]
    if dtype == np.float64:
        assert abs(value - exact) <= 2 * EPS * abs(exact)
    else:  # the direct value rounded once: within one ulp of the dtype at the exact value
        assert abs(value - exact) <= float(np.spacing(dtype(abs(exact))))
