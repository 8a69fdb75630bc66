r"""Rotary position embedding (RoPE, Su et al. 2021) and its context-extension variants.

For an even head width :math:`d` the inverse frequencies are
:math:`\theta_i = \mathrm{base}^{-2i/d}`, :math:`i = 0, \dots, d/2 - 1`. RoPE groups the
coordinates of a query or key vector into :math:`d/2` pairs, reads pair :math:`i` as the
complex number :math:`z_i = a_i + \mathrm{i}\,b_i`, and at position :math:`m` replaces it
by :math:`z_i\,e^{\mathrm{i} m\theta_i}`, that is

.. math::

    (a_i, b_i) \mapsto (a_i\cos m\theta_i - b_i\sin m\theta_i,\;
                        a_i\sin m\theta_i + b_i\cos m\theta_i).

Because :math:`\overline{e^{\mathrm{i}m\theta}}\,e^{\mathrm{i}n\theta} =
e^{\mathrm{i}(n-m)\theta}`, the real inner product of a rotated query and a rotated key,
:math:`\langle R_m q, R_n k\rangle = \langle q, R_{n-m} k\rangle`, depends on the positions
only through :math:`n - m`.

Two pairings exist in public code. ``"interleaved"`` pairs coordinates ``(2i, 2i+1)``
(RoFormer, GPT-J's ``rotate_every_two``, Meta's reference LLaMA ``apply_rotary_emb``,
which views the last axis as ``d/2`` complex numbers). ``"half"`` pairs ``(i, i + d/2)``
(GPT-NeoX and Hugging Face's Llama ``rotate_half``). They are the same map up to a fixed
permutation of the coordinates (:func:`~posenc.layouts.layout_permutation`).

``scaling`` dictionaries follow the keys of Hugging Face ``transformers``'
``rope_scaling`` / ``rope_parameters`` (``rope_type`` or the legacy ``type``): ``linear``
(position interpolation), ``dynamic`` (dynamic NTK-aware base change), ``yarn`` and
``llama3``. The formulas are re-derived here in float64; transformers evaluates the
same formulas in float32, so its tables agree with these to float32 rounding.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np

from ._arrays import as_positions, as_real_array, check_finite_result, check_token_shape
from ._rope_inputs import rotate_checked
from ._rotate import unit_phases
from ._validation import (
    MAX_POSITION,
    MAX_POSITION_TEXT,
    check_base,
    check_bool,
    check_position,
    check_positive_int,
    check_positive_real,
    check_size,
    check_width,
)
from .layouts import check_layout
from .rope_scaling import rope_type_of, scaled_frequencies
from .sinusoidal import frequencies


def rope_frequencies(
    d_head: int,
    base: float = 10000.0,
    scaling: Mapping | None = None,
    *,
    seq_len: int | None = None,
    return_attention_factor: bool = False,
) -> np.ndarray | tuple[np.ndarray, float]:
    r"""RoPE inverse frequencies :math:`\theta_i`, float64, length ``d_head // 2``.

    Without ``scaling``: :math:`\theta_i = \mathrm{base}^{-2i/d}` (the correctly rounded
    values of :func:`~posenc.sinusoidal.frequencies`). With ``scaling`` (a dict with ``rope_type`` or
    the legacy ``type``; other keys are ignored), :math:`s` = ``factor``,
    :math:`L_0` = ``original_max_position_embeddings``:

    ``linear``
        Position interpolation: :math:`\theta_i / s` (positions squeezed by :math:`s`).
    ``dynamic``
        Dynamic NTK-aware: with :math:`L = \max(\texttt{seq\_len}, L_0)` the base becomes
        :math:`\mathrm{base}' = \mathrm{base}\,(sL/L_0 - (s-1))^{d/(d-2)}` and
        :math:`\theta_i = \mathrm{base}'^{-2i/d}`. Needs ``seq_len`` (the current
        sequence length); for ``seq_len <= L_0`` nothing changes. (transformers takes
        :math:`L_0` from ``config.max_position_embeddings``; here it is a key:
        ``original_max_position_embeddings``, or ``max_position_embeddings`` when that is
        missing, as in a transformers-5 ``rope_parameters`` dict, which has only ``factor``.)
    ``yarn``
        NTK-by-parts: with :math:`r(\beta) = d\ln(L_0 / (2\pi\beta)) / (2\ln\mathrm{base})`
        (the pair index whose wavelength fits :math:`\beta` times into :math:`L_0`),
        ``low`` = :math:`\lfloor r(\beta_{fast})\rfloor`, ``high`` =
        :math:`\lceil r(\beta_{slow})\rceil` (no floor/ceil when ``truncate`` is False;
        both defaults as in current transformers: ``truncate=True``, ``beta_fast=32``,
        ``beta_slow=1``), clipped to ``[0, d-1]``, and the ramp
        :math:`\gamma_i = \mathrm{clip}((i - low)/(high - low), 0, 1)`:
        :math:`\theta_i' = (1-\gamma_i)\theta_i + \gamma_i\theta_i/s`. The attention factor
        is ``attention_factor`` if given, else :math:`0.1\ln s + 1` (1 for
        :math:`s \le 1`), or the ratio :math:`m(s, \texttt{mscale}) /
        m(s, \texttt{mscale\_all\_dim})` with :math:`m(s, \mu) = 0.1\mu\ln s + 1` when both
        are given. It multiplies both cos and sin, so attention logits scale by its square.
    ``llama3``
        With wavelengths :math:`\lambda_i = 2\pi/\theta_i`, :math:`\lambda_{lo} =
        L_0/\texttt{low\_freq\_factor}`, :math:`\lambda_{hi} = L_0/\texttt{high\_freq\_factor}`:
        :math:`\theta_i` kept when :math:`\lambda_i < \lambda_{hi}`, divided by :math:`s`
        when :math:`\lambda_i > \lambda_{lo}`, and in between
        :math:`(1-\sigma_i)\theta_i/s + \sigma_i\theta_i` with
        :math:`\sigma_i = (L_0/\lambda_i - \texttt{low\_freq\_factor}) /
        (\texttt{high\_freq\_factor} - \texttt{low\_freq\_factor})`.
        With ``high_freq_factor == low_freq_factor`` (Llama 4 Scout: both 1) there is no
        blend band: pairs with :math:`\lambda_i > \lambda_{lo}` are divided by :math:`s`,
        the others kept (Meta's ``apply_scaling``).
    ``longrope`` (Phi-3)
        :math:`\theta_i / e_i` with :math:`e` = ``long_factor`` when ``seq_len`` is given
        and :math:`> L_0`, else ``short_factor`` (each a list of ``d_head/2`` numbers), as
        transformers' ``_compute_longrope_parameters``. The attention factor is
        ``attention_factor`` if given, else 1 when :math:`s \le 1` and
        :math:`\sqrt{1 + \ln s / \ln L_0}` otherwise, where :math:`s` = ``factor`` if given,
        else ``max_position_embeddings`` / :math:`L_0` (transformers reads
        ``config.max_position_embeddings``; here it is a key of ``scaling``).
    ``default``
        No change (the type of a plain transformers-5 ``rope_parameters`` dict).

    A transformers-5 ``rope_parameters`` dict is read as it stands: its ``rope_theta``,
    when present, must equal ``base`` (``ValueError`` otherwise: pass the same value);
    ``partial_rotary_factor`` is not read here (``d_head`` is the number of rotated
    channels; :func:`apply_rope` checks it against ``rotary_dim``) and neither is
    ``mrope_section`` (:func:`~posenc.mrope.apply_mrope`).

    Returns the array, or ``(array, attention_factor)`` when ``return_attention_factor``
    (the factor is 1.0 except for ``yarn`` and ``longrope``).

    Accepted input (anything else raises ``TypeError``/``ValueError`` naming the argument
    or the ``scaling`` key): ``d_head`` a positive even ``int`` at most 2**16 (bools
    refused); ``base`` a finite real number greater than 1; ``scaling`` None or a mapping
    whose ``rope_type``/``type`` is one of the strings above. Every key a type reads is
    checked: ``factor``, ``low_freq_factor``, ``high_freq_factor``, ``attention_factor``
    finite real numbers > 0; ``original_max_position_embeddings`` a positive ``int`` at
    most 2**53; ``beta_fast``, ``beta_slow``, ``mscale``, ``mscale_all_dim`` finite real
    numbers > 0 (missing, None or 0 meaning the default, as transformers' ``or``) with
    ``beta_fast > beta_slow`` and ``original_max_position_embeddings / (2 pi beta)``
    finite and > 0 for both; the attention factor (given, or derived from ``factor``,
    ``mscale`` and ``mscale_all_dim``) in ``[2**-126, 2**127]``, float32's normal range;
    ``truncate`` a real bool (None meaning the default True);
    ``low_freq_factor < high_freq_factor``; ``short_factor``, ``long_factor`` lists (or
    1-D arrays) of ``d_head/2`` finite positive numbers; ``max_position_embeddings`` a
    positive ``int`` at most 2**53; ``longrope`` needs ``factor``,
    ``max_position_embeddings`` or ``attention_factor`` (and :math:`L_0 \ge 2` to derive
    the factor); ``rope_theta`` a finite real number equal to ``base``. Keys no type reads
    are ignored.
    ``seq_len`` None or a positive ``int`` at most 2**53 (checked whenever given);
    ``return_attention_factor`` a real bool. A ``dynamic`` base that overflows float64 is
    refused, as are frequencies that overflow (a tiny ``factor``).
    """
    d = check_width(d_head, "d_head")
    base = check_base(base)
    return_attention_factor = check_bool(return_attention_factor, "return_attention_factor")
    if seq_len is not None:
        seq_len = check_positive_int(seq_len, "seq_len", MAX_POSITION, MAX_POSITION_TEXT)
    inv = frequencies(d, base)
    inv, attention_factor = scaled_frequencies(inv, d, base, scaling, seq_len)
    check_finite_result(
        inv,
        "the scaled frequencies overflow float64: a scaling factor is too small "
        "(scaling['factor'], or longrope's scaling['short_factor'] / scaling['long_factor'])",
    )
    if return_attention_factor:
        return inv, float(attention_factor)
    return inv


def _positions(positions: object, target: tuple[int, ...]) -> np.ndarray:
    """float64 positions: ``(L,)`` for None, an int or a 1-D array, else broadcastable to ``target``."""
    length = target[-1]
    if positions is None:
        return np.arange(length, dtype=np.float64)
    if isinstance(positions, (numbers.Number, np.generic, np.ndarray)) and np.ndim(positions) == 0:
        pos = as_positions(positions)  # an int L means 0..L-1; other scalars are refused
    else:
        pos = as_positions(positions, "positions", allow_length=False, any_shape=True)
    if pos.ndim >= 2:
        check_token_shape(pos.shape, "positions", target)
    elif pos.size != length:
        raise ValueError(f"positions must have length {length} (x.shape[-2]), got {pos.size}")
    return pos


def _frequencies(
    d: int,
    pos: np.ndarray,
    base: float,
    scaling: Mapping | None,
    seq_len: int | None,
) -> tuple[np.ndarray, float]:
    """The frequencies and attention factor by which the positions ``pos`` are rotated."""
    if seq_len is None and scaling is not None and rope_type_of(scaling) in ("dynamic", "longrope"):
        # As transformers' dynamic and longrope updates: the current length is
        # max(position) + 1 (at most 2**53, which float64 cannot tell from 2**53 + 1).
        seq_len = min(max(int(math.floor(float(pos.max()))) + 1, 1), MAX_POSITION)
    return rope_frequencies(d, base, scaling, seq_len=seq_len, return_attention_factor=True)


def _rotary_dim(rotary_dim: object, d: int, scaling: Mapping | None) -> int:
    rot = d if rotary_dim is None else check_width(rotary_dim, "rotary_dim")
    if rot > d:
        raise ValueError(f"rotary_dim must be at most x.shape[-1] = {d} (d_head), got {rot}")
    factor = scaling.get("partial_rotary_factor") if isinstance(scaling, Mapping) else None
    if factor is not None:
        factor = check_positive_real(factor, "scaling['partial_rotary_factor']")
        if int(d * factor) != rot:
            raise ValueError(
                f"scaling['partial_rotary_factor'] = {factor} rotates int({d} * {factor}) = "
                f"{int(d * factor)} channels, but rotary_dim is {rotary_dim} ({rot} channels); "
                f"pass rotary_dim={int(d * factor)}"
            )
    return rot


def apply_rope(
    x: np.ndarray,
    positions: np.ndarray | None = None,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    scaling: Mapping | None = None,
    seq_len: int | None = None,
    rotary_dim: int | None = None,
) -> np.ndarray:
    r"""Rotate the pairs of ``x[..., L, d_head]`` by position-dependent angles.

    Row ``l`` (position :math:`m` = ``positions[l]``, default ``0..L-1``; any real 1-D
    array of length ``L``, e.g. offset positions while decoding; or per-sequence ids, an
    array whose shape broadcasts to ``x.shape[:-1]``, e.g. ``(B, 1, L)`` for ``x`` of shape
    ``(B, H, L, d)``, for left padding or packed sequences) has pair :math:`i`
    :math:`(a, b)` replaced by
    :math:`(a\cos m\theta_i - b\sin m\theta_i,\ a\sin m\theta_i + b\cos m\theta_i)`,
    i.e. :math:`(a + \mathrm{i}b)\,e^{\mathrm{i}m\theta_i}`, with :math:`\theta_i` from
    :func:`rope_frequencies`. ``layout="interleaved"`` pairs coordinates ``(2i, 2i+1)``,
    ``"half"`` pairs ``(i, i + d/2)``. With ``rotary_dim`` :math:`r` only channels
    ``0 .. r-1`` rotate (GPT-NeoX ``rotary_pct``, transformers ``partial_rotary_factor``),
    paired inside them by ``layout`` (``"half"``: ``(i, i + r/2)``) with the frequencies
    of an :math:`r`-dimensional RoPE, ``rope_frequencies(r, base, scaling)``; channels
    ``r .. d-1`` are copied unchanged.

    Angles :math:`m\theta_i` are formed in float64 from float64 positions; the arithmetic
    is float64 and only the result is cast back to the input's float dtype (integer input
    gives float64). Each pair is rotated by one complex128 product with the float64
    phase :math:`s\cos m\theta_i + \mathrm{i}\,s\sin m\theta_i` (the one kernel;
    :math:`s` the attention factor, 1 unless ``yarn`` or ``longrope``), so before that final rounding every
    component is within :math:`4 \cdot 2^{-52} s(|a| + |b|)` of the exact
    :math:`(a + \mathrm{i}b)\,s\,e^{\mathrm{i}\phi}`, :math:`\phi` the float64 angle
    (cos and sin within an ulp), and a pair gets the same bits whatever the layout, the
    input's strides or its float dtype. With ``scaling`` of type
    ``yarn`` or ``longrope`` both cos and sin are multiplied by the attention factor (so
    :math:`\langle q', k'\rangle` scales by its square). For ``dynamic`` and
    ``longrope`` the current length ``seq_len`` defaults to ``max(positions) + 1`` (over
    every sequence), as transformers' dynamic and longrope updates. Nothing is kept
    between calls, and no thread is started unless asked for (:func:`~posenc.set_num_threads`).

    Accepted input (anything else raises ``TypeError``/``ValueError`` naming the
    argument): ``x`` a non-empty real array-like (any integer or float dtype; bools,
    complex numbers, NaN and infinities refused) with at least 2 dimensions and a
    positive even last dimension at most 2**16; ``positions`` None, an ``int`` ``L``, a
    1-D array-like of ``L`` real positions, or a real array-like of 2 or more axes, at
    most ``x.ndim - 1``, whose last axis is ``L`` (the token axis is not broadcast) and
    whose other axes are 1 or equal to those of ``x.shape[:-1]``; positions have
    ``|m| <= 2**53`` (bools, complex numbers, NaN and infinities refused); ``base``,
    ``scaling``, ``seq_len`` as :func:`rope_frequencies`; ``layout`` ``"interleaved"`` or
    ``"half"``; ``rotary_dim`` None or a positive even ``int`` at most ``x.shape[-1]``
    (bools refused), equal to ``int(d_head * partial_rotary_factor)`` when ``scaling``
    holds that key. A result that
    overflows the output dtype (entries of ``x`` near its largest value, or a huge
    attention factor) is refused with ``ValueError`` instead of returning infinities.
    """
    # NaN and infinities in x are looked for in the result (they always reach it), which
    # the kernel checks tile by tile in cache instead of two more passes over memory.
    arr = as_real_array(x, "x", min_ndim=2, keep_float_dtype=True, finite=False)
    layout = check_layout(layout)
    d = check_width(arr.shape[-1], "x.shape[-1] (d_head)")
    rot = _rotary_dim(rotary_dim, d, scaling)
    pos = _positions(positions, arr.shape[:-1])
    inv, attention_factor = _frequencies(rot, pos, base, scaling, seq_len)
    return rotate_checked(arr, unit_phases(pos[..., None] * inv, attention_factor), layout, rot)


def rotate_by_angles(x: np.ndarray, angles: object, *, layout: str = "interleaved") -> np.ndarray:
    r"""Rotate pair :math:`i` of each vector of ``x[..., d]`` counter-clockwise by ``angles[..., i]``.

    The rotation of :func:`apply_rope` with the angles given instead of formed from
    positions: pair :math:`i` :math:`(a, b)` becomes
    :math:`(a\cos\phi_i - b\sin\phi_i,\ a\sin\phi_i + b\cos\phi_i)`, i.e.
    :math:`(a + \mathrm{i}b)\,e^{\mathrm{i}\phi_i}` (the matrix :math:`R(\phi_i)`), with the
    pairs ``(2i, 2i+1)`` for ``layout="interleaved"`` and ``(i, i + d/2)`` for ``"half"``.
    Use it to study angles made some other way, e.g. :math:`m\theta_i` formed in float32
    or bfloat16, or a phase :math:`\varphi_m` that is not linear in the position:
    ``rotate_by_angles(x, m * theta)`` equals ``apply_rope(x[None], [m])[0]`` whenever
    ``m * theta`` is the float64 product that :func:`apply_rope` forms.

    The angles are taken as given, widened to float64 exactly (float32 and float16 angles
    lose nothing); each pair is rotated by one complex128 product in the kernel of
    :func:`apply_rope`, and the result is rounded once to the input's float dtype (integer
    input gives float64).

    Accepted input (anything else raises ``TypeError``/``ValueError`` naming the
    argument): ``x`` a non-empty real array-like (integer or float dtype; bools, complex
    numbers, NaN and infinities refused) with at least 1 dimension and a positive even
    last dimension :math:`d` at most 2**16; ``angles`` a finite real array-like whose
    shape broadcasts to ``x.shape[:-1] + (d/2,)`` (one angle per pair: a 1-D array of
    ``d/2`` angles turns every vector alike); ``layout`` ``"interleaved"`` or ``"half"``.
    """
    arr = as_real_array(x, "x", min_ndim=1, keep_float_dtype=True, finite=False)
    layout = check_layout(layout)
    d = check_width(arr.shape[-1], "x.shape[-1] (d)")
    phi = as_real_array(angles, "angles")
    target = (*arr.shape[:-1], d // 2)
    try:
        phi = np.broadcast_to(phi, target)
    except ValueError:
        raise ValueError(
            f"angles must have a shape that broadcasts to x.shape[:-1] + (d/2,) = {target}, got {phi.shape}"
        ) from None
    rows = arr.reshape(-1, d)  # every vector is one row; its angles are the same row of phi
    out = rotate_checked(rows, unit_phases(np.ascontiguousarray(phi).reshape(-1, d // 2)), layout)
    return out.reshape(arr.shape)


def rope_matrix(
    d_head: int,
    position: float,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    scaling: Mapping | None = None,
    seq_len: int | None = None,
) -> np.ndarray:
    r"""The ``(d_head, d_head)`` matrix :math:`R_m` with ``apply_rope(x, [m]) == x @ R_m.T``.

    Interleaved: block-diagonal with blocks
    :math:`\begin{pmatrix}\cos m\theta_i & -\sin m\theta_i\\ \sin m\theta_i & \cos m\theta_i\end{pmatrix}`;
    half: the same blocks acting on coordinates ``(i, i + d/2)``. It is orthogonal
    (times the YaRN attention factor when ``scaling`` is yarn). Built by applying
    :func:`apply_rope` to the identity, so it is the same map by construction.

    ``d_head`` a positive even ``int`` with ``d_head**2 <= 2**28`` (so at most 16384);
    ``position`` a real number (int or float, bools refused) with ``|m| <= 2**53``; the
    keywords as :func:`apply_rope`. Anything else raises ``TypeError``/``ValueError``
    naming the argument.
    """
    d = check_width(d_head, "d_head")
    m = check_position(position, "position")
    check_size((d, d), "the matrix (d_head, d_head)")
    eye = np.eye(d)[:, None, :]  # d rows, each a length-1 "sequence"
    rotated = apply_rope(eye, [m], base=base, layout=layout, scaling=scaling, seq_len=seq_len)
    return rotated[:, 0, :].T


def rope_decay_bound(d_head: int, *, distances: object, base: float = 10000.0) -> np.ndarray:
    r"""RoFormer's long-term-decay factor :math:`\frac{1}{d/2}\sum_{j=1}^{d/2}|S_j|`.

    :math:`S_j = \sum_{k=0}^{j-1} e^{\mathrm{i} r \theta_k}` are the partial sums of the
    unit phases at relative distance :math:`r`. By Abel summation, for
    :math:`h_i = q_{[2i:2i+2]} k^*_{[2i:2i+2]}` (complex products),
    :math:`|\sum_i h_i e^{\mathrm{i}r\theta_i}| \le (\max_i |h_{i+1} - h_i|)\sum_j |S_j|`
    (with :math:`h_{d/2} = 0`). Returns one value per entry of ``distances`` (real).

    ``distances`` is keyword-only (``rope_decay_bound(128, distances=[0, 10])``): an
    ``int`` ``K`` (distances ``0..K-1``) or a non-empty 1-D array-like of real distances
    with ``|r| <= 2**53``, as ``positions`` of :func:`~posenc.sinusoidal.sinusoidal_encoding`.
    ``d_head`` a positive even ``int`` at most 2**16, ``base`` a finite real number
    greater than 1; ``len(distances) * d_head / 2`` at most 2**28 (the phases are formed
    at once). Anything else raises ``TypeError``/``ValueError`` naming the argument.
    The phases :math:`r\,\theta_i` are formed in float64, so each may be off by about
    :math:`|r|\,\theta_i\,2^{-53}` rad: negligible for the distances of a context, of
    order 1 near :math:`|r| = 2^{53}` (see :func:`~posenc.rope_budget.long_term_similarity`).
    """
    d = check_width(d_head, "d_head")
    r = as_positions(distances, "distances", per_position=d // 2, what="the phases (distances, d_head / 2)")
    base = check_base(base)
    theta = frequencies(d, base)
    partial = np.cumsum(np.exp(1j * r[:, None] * theta[None, :]), axis=1)
    return np.abs(partial).mean(axis=1)
