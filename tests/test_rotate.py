"""The rotation kernel (posenc/_rotate.py) through apply_rope, against independent oracles.

The oracles never call posenc: the inverse frequencies are mpmath's base**(-2i/d) rounded
once to float64 (tests/conftest.py), the angle is formed in float64 as ``m * theta_i`` (the
documented input of cos and sin), and the rotation is evaluated either exactly in mpmath
or with the textbook float64 formula ``(a cos - b sin, a sin + b cos)`` written out here.

Error model of the kernel: cos and sin of the float64 angle in float64 (within an ulp
each), then a complex product in float64 (two or three roundings per component), so
every component is within ``4 * 2^-52 * (|a| + |b|)`` of the exact rotation by the float64
angle (times the attention factor), before the final rounding to the output dtype.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from conftest import EPS, MP_PREC, pair_index, rounded_omegas
from hypothesis import given
from hypothesis import strategies as st

import posenc._rotate
from posenc import apply_rope, layout_permutation


def mp_rotation(x: np.ndarray, positions, layout: str, scale: float = 1.0, base: float = 10000.0):
    """Exact rotation (mpmath) of float64(x) by the float64 angles fl(m * theta_i), times scale."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    th = np.array(rounded_omegas(d, base))
    x3 = x.reshape(-1, *x.shape[-2:])
    out = np.empty(x3.shape, dtype=object)
    with mpmath.workprec(MP_PREC):
        for row, m in enumerate(positions):
            phases = [mpmath.expj(mpmath.mpf(float(np.float64(m) * t))) * mpmath.mpf(scale) for t in th]
            for n in range(x3.shape[0]):
                for (j, k), w in zip(pair_index(d, layout), phases, strict=True):
                    z = mpmath.mpc(float(x3[n, row, j]), float(x3[n, row, k])) * w
                    out[n, row, j], out[n, row, k] = z.real, z.imag
    return out.reshape(x.shape)


def textbook(x: np.ndarray, positions, layout: str, base: float = 10000.0) -> np.ndarray:
    """(a cos - b sin, a sin + b cos) in float64 numpy, angles fl(m * theta_i)."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    half = d // 2
    ang = np.asarray(positions, dtype=np.float64)[:, None] * np.array(rounded_omegas(d, base))[None, :]
    c, s = np.cos(ang), np.sin(ang)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x[..., :half], x[..., half:]
    out = np.empty_like(x)
    first, second = a * c - b * s, a * s + b * c
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = first, second
    else:
        out[..., :half], out[..., half:] = first, second
    return out


def pair_bound(x: np.ndarray, layout: str, scale: float = 1.0) -> np.ndarray:
    """4 * 2^-52 * (|a| + |b|) * scale, broadcast to both components of each pair."""
    x = np.abs(np.asarray(x, dtype=np.float64))
    bound = np.empty_like(x)
    for j, k in pair_index(x.shape[-1], layout):
        bound[..., j] = bound[..., k] = 4 * EPS * (x[..., j] + x[..., k]) * scale
    return bound


def assert_within(got: np.ndarray, exact: np.ndarray, bound: np.ndarray) -> None:
    """|got - exact| <= bound (+ half an ulp of got's dtype at exact for a narrower dtype)."""
    with mpmath.workprec(MP_PREC):
        err = np.vectorize(lambda g, e: float(abs(mpmath.mpf(float(g)) - e)), otypes=[float])(got, exact)
    allowed = bound.copy()
    if got.dtype != np.float64:
        allowed += half_ulp(got, np.vectorize(float, otypes=[float])(exact))
    assert np.all(err <= allowed), float(np.max(err - allowed))


def half_ulp(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Half an ulp of ``got.dtype`` at the larger of |got| and |ref| (the final rounding)."""
    mag = np.maximum(np.abs(got.astype(np.float64)), np.abs(ref))
    return 0.5 * np.spacing(mag.astype(got.dtype)).astype(np.float64)


@pytest.fixture(
    params=["default", "tiny", "tiny-threads"], ids=["default-tiles", "tiny-tiles", "tiny-tiles-threads"]
)
def tiles(request, monkeypatch, num_threads):
    """Run with the default tile size, with 3 pairs per tile (many tiles, partial ones), and
    with 3 pairs per tile shared among 4 threads whatever the size."""
    if request.param != "default":
        monkeypatch.setattr(posenc._rotate, "TILE_PAIRS", 3)
    if request.param == "tiny-threads":
        monkeypatch.setattr(posenc._rotate, "THREAD_MIN_PAIRS", 0)
        num_threads(4)
    return request.param


layouts = st.sampled_from(["interleaved", "half"])
dtypes = st.sampled_from([np.float64, np.float32])


@st.composite
def rope_inputs(draw):
    lead = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    length = draw(st.integers(1, 6))
    d = 2 * draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((*lead, length, d)) * 10.0 ** draw(st.integers(-3, 3))
    kind = draw(st.sampled_from(["none", "int", "float", "huge"]))
    if kind == "none":
        positions = None
    elif kind == "int":
        positions = rng.integers(-5000, 5000, size=length)
    elif kind == "float":
        positions = rng.uniform(-1e4, 1e4, size=length)
    else:
        positions = rng.integers(2**40, 2**41, size=length)
    return x, positions


@given(data=rope_inputs(), layout=layouts, dtype=dtypes)
def test_apply_rope_against_mpmath(data, layout, dtype):
    x, positions = data
    xd = x.astype(dtype)
    pos = np.arange(x.shape[-2]) if positions is None else positions
    got = apply_rope(xd, positions, layout=layout)
    assert got.dtype == dtype and got.shape == x.shape
    assert_within(got, mp_rotation(xd, pos, layout), pair_bound(xd, layout))


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tiles_against_mpmath(tiles, layout, dtype):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 2, 7, 10)).astype(dtype)
    pos = rng.integers(-(10**6), 10**6, size=7)
    got = apply_rope(x, pos, layout=layout)
    assert_within(got, mp_rotation(x, pos, layout), pair_bound(x, layout))


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_yarn_attention_factor_against_mpmath(layout):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 5, 8))
    pos = np.array([0, 1, 700, 4095, 123456])
    scaling = {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 64,
        "attention_factor": 1.5,
    }
    got = apply_rope(x, pos, layout=layout, scaling=scaling)
    # The yarn frequencies of this set-up, by the transformers formula: with factor 4,
    # beta_fast 32, beta_slow 1, base 1e4, L0 = 64 and d = 8 the correction range is
    # floor(8 ln(64 / (64 pi)) / (2 ln 1e4)) = floor(-0.50) -> 0 and
    # ceil(8 ln(64 / (2 pi)) / (2 ln 1e4)) = ceil(1.008) = 2, so the ramp is (i - 0) / 2
    # clipped to [0, 1], and theta' = theta (1 - ramp) + (theta / 4) ramp.
    th = np.array(rounded_omegas(8))
    ramp = np.clip(np.arange(4) / 2.0, 0.0, 1.0)
    th_yarn = th * (1.0 - ramp) + (th / 4.0) * ramp
    exact = np.empty(x.shape, dtype=object)
    with mpmath.workprec(MP_PREC):
        for row, m in enumerate(pos):
            for (j, k), t in zip(pair_index(8, layout), th_yarn, strict=True):
                w = mpmath.expj(mpmath.mpf(float(np.float64(m) * t))) * mpmath.mpf(1.5)
                for n in range(2):
                    z = mpmath.mpc(float(x[n, row, j]), float(x[n, row, k])) * w
                    exact[n, row, j], exact[n, row, k] = z.real, z.imag
    assert_within(got, exact, pair_bound(x, layout, 1.5) * 1.5)


@given(
    seed=st.integers(0, 2**32 - 1),
    layout=layouts,
    dtype=dtypes,
    lead=st.lists(st.integers(1, 4), min_size=0, max_size=2),
    length=st.integers(1, 40),
    half=st.integers(1, 40),
)
def test_apply_rope_against_textbook_float64(seed, layout, dtype, lead, length, half):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((*lead, length, 2 * half)).astype(dtype)
    pos = rng.integers(-(2**20), 2**20, size=length)
    got = apply_rope(x, pos, layout=layout)
    ref = textbook(x, pos, layout)
    # both within 4 eps (|a| + |b|) of the exact rotation by the same float64 angle
    allowed = 2 * pair_bound(x, layout)
    if dtype == np.float32:
        allowed += half_ulp(got, ref)
    assert np.all(np.abs(got.astype(np.float64) - ref) <= allowed)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("view", ["strided-rows", "transposed-heads", "reversed-last", "offset-last"])
def test_non_contiguous_input_same_as_contiguous_copy_and_textbook(tiles, layout, dtype, view):
    rng = np.random.default_rng(13)
    big = rng.standard_normal((4, 12, 18)).astype(dtype)
    x = {
        "strided-rows": big[:, ::2, :16],
        "transposed-heads": big[:, :8, :16].transpose(1, 0, 2)[:, :, None, :].swapaxes(1, 2),
        "reversed-last": big[:, :5, ::-1][..., :16],
        "offset-last": big[:, :5, 1:17],
    }[view]
    assert not x.flags.c_contiguous
    pos = rng.integers(-1000, 1000, size=x.shape[-2])
    got = apply_rope(x, pos, layout=layout)
    np.testing.assert_array_equal(got, apply_rope(np.ascontiguousarray(x), pos, layout=layout))
    ref = textbook(x, pos, layout)
    allowed = 2 * pair_bound(x, layout)
    if dtype == np.float32:
        allowed += half_ulp(got, ref)
    assert np.all(np.abs(got.astype(np.float64) - ref) <= allowed)


@given(seed=st.integers(0, 2**32 - 1), dtype=dtypes, half=st.integers(1, 9), length=st.integers(1, 5))
def test_layouts_and_dtypes_give_the_same_bits(seed, dtype, half, length):
    # The same pair gets the same bits whatever the layout, the tiling or the input dtype
    # (float32 input is widened exactly, so its result is the float64 result rounded once).
    rng = np.random.default_rng(seed)
    d = 2 * half
    x = rng.standard_normal((2, length, d)).astype(dtype)
    pos = rng.integers(-(10**9), 10**9, size=length)
    perm = layout_permutation(d)
    inter = apply_rope(x, pos)
    np.testing.assert_array_equal(apply_rope(x[..., perm], pos, layout="half"), inter[..., perm])
    np.testing.assert_array_equal(apply_rope(x.astype(np.float64), pos).astype(dtype), inter)
    one_row = np.stack([apply_rope(x[:, r : r + 1], pos[r : r + 1])[:, 0] for r in range(length)], axis=1)
    np.testing.assert_array_equal(one_row, inter)


def test_float16_and_integer_input():
    rng = np.random.default_rng(14)
    x = rng.standard_normal((3, 6)).astype(np.float16)
    got = apply_rope(x, [5, 6, 7], layout="half")
    assert got.dtype == np.float16
    ref = textbook(x, [5, 6, 7], "half")
    assert np.all(np.abs(got.astype(np.float64) - ref) <= half_ulp(got, ref) + 2 * pair_bound(x, "half"))
    xi = np.arange(12).reshape(2, 6)
    gi = apply_rope(xi, [3, 4])
    assert gi.dtype == np.float64
    assert np.all(np.abs(gi - textbook(xi, [3, 4], "interleaved")) <= 2 * pair_bound(xi, "interleaved"))


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_is_refused(tiles, layout, bad):
    x = np.ones((2, 9, 8))
    x[1, 7, 3] = bad
    with pytest.raises(ValueError, match="x must be finite"):
        apply_rope(x, layout=layout)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_threads_give_the_bits_of_one_thread(monkeypatch, num_threads, started_threads, layout, dtype):
    # Above THREAD_MIN_PAIRS, with set_num_threads(2), the tiles are shared between two
    # threads; the result must be the one-thread result bit for bit.
    rng = np.random.default_rng(15)
    x = rng.standard_normal((3, 6, 300, 64)).astype(dtype)  # 172,800 pairs
    pos = rng.integers(-(10**6), 10**6, size=300)
    monkeypatch.setattr(posenc._rotate, "THREAD_MIN_PAIRS", 100_000)
    monkeypatch.setattr(posenc._rotate, "TILE_PAIRS", 5000)  # many tiles for each thread
    num_threads(2)
    threaded = apply_rope(x, pos, layout=layout)
    assert len(started_threads) == 1  # one thread besides the caller
    num_threads(1)
    started_threads.clear()
    one = apply_rope(x, pos, layout=layout)
    assert started_threads == []
    np.testing.assert_array_equal(threaded, one)


def test_overflowing_result_is_refused():
    big = np.finfo(np.float32).max
    x = np.full((1, 2, 2), big, dtype=np.float32)
    # position 1: cos 1 and sin 1 are both positive, so a sin + b cos > max(float32)
    with pytest.raises(ValueError, match="overflow"):
        apply_rope(x, [0, 1])


def test_shared_work_ends_before_the_caller_returns_even_when_it_raises(num_threads):
    # posenc._rotate.in_threads runs the first run in this thread and the others in threads
    # of the call; when the first raises, the others must still have ended before the error
    # reaches the caller (they may be writing into the caller's array).
    import threading
    import time

    from posenc._rotate import THREAD_MIN_PAIRS, in_threads

    num_threads(2)
    ended = threading.Event()

    def work(run):
        if run == [0]:
            raise RuntimeError("first call fails")
        time.sleep(0.2)
        ended.set()
        return run

    with pytest.raises(RuntimeError, match="first call fails"):
        in_threads(work, [0, 1], THREAD_MIN_PAIRS)
    assert ended.is_set()
    num_threads(3)
    assert in_threads(lambda run: [k * k for k in run], [2, 3, 4], THREAD_MIN_PAIRS) == [[4], [9], [16]]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_tile_finiteness_check_agrees_with_isfinite(dtype):
    # posenc._rotate._tile_finite answers from a sum when it is finite and from max and min
    # otherwise; compare with np.isfinite entry by entry: finite tiles (one whose sum
    # overflows), an infinity of either sign or a NaN anywhere, both infinities together,
    # on contiguous tiles and on strided views of them.
    from posenc._rotate import _tile_finite

    big = np.finfo(dtype).max
    base = np.random.default_rng(3).standard_normal((4, 50, 8)).astype(dtype)
    cases = [base, np.full(base.shape, big, dtype=dtype), np.full(base.shape, -big, dtype=dtype)]
    for bad in (np.inf, -np.inf, np.nan):
        for where in [(0, 0, 0), (3, 49, 7), (2, 17, 5), (1, 30, 2)]:
            tile = base.copy()
            tile[where] = bad
            cases.append(tile)
    both = base.copy()
    both[0, 0, 0], both[3, 3, 3] = np.inf, -np.inf
    cases.append(both)
    for tile in cases:
        for view in (tile, tile[:, ::2], tile[1:3]):
            with np.errstate(over="ignore", invalid="ignore"):
                assert _tile_finite(view) == bool(np.all(np.isfinite(view)))


def test_shared_runs_cover_every_tile_once_in_order(num_threads):
    # posenc._rotate.in_threads cuts the tiles into one contiguous run per thread: every
    # tile is in exactly one run, in order; below THREAD_MIN_PAIRS pairs, or with one
    # thread, there is one run of every tile, computed in the calling thread.
    import threading

    import posenc._rotate as rotate

    caller = threading.get_ident()
    tiles = list(range(100))

    def work(run):
        assert run == list(range(run[0], run[-1] + 1))
        return run, threading.get_ident() == caller

    num_threads(3)
    results = rotate.in_threads(work, tiles, pairs=rotate.THREAD_MIN_PAIRS)
    assert len(results) == 3
    assert [t for run, _ in results for t in run] == tiles
    assert [in_caller for _, in_caller in results] == [True, False, False]
    assert rotate.in_threads(work, tiles, pairs=rotate.THREAD_MIN_PAIRS - 1) == [(tiles, True)]
    num_threads(1)
    assert rotate.in_threads(work, tiles, pairs=10 * rotate.THREAD_MIN_PAIRS) == [(tiles, True)]
