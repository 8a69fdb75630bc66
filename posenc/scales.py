r"""Position-dependent scale factors on queries and keys: Llama 4's temperature and xPos.

Two encodings change the *length* of queries and keys with position instead of (or on
top of) their direction:

* **Attention temperature** (Llama 4; transformers' source cites arXiv:2501.19399).
  The layers of Llama 4 that use no positional encoding at all (NoPE layers) multiply
  the query at position :math:`p` by

  .. math:: \tau(p) = 1 + a \,\ln\!\Bigl(\Bigl\lfloor \frac{p + 1}{F} \Bigr\rfloor + 1\Bigr),

  with :math:`F` = ``floor_scale`` = 8192 and :math:`a` = ``attn_scale`` = 0.1: 1 for the
  first :math:`F - 1` positions, then growing like :math:`a \ln(p/F)`, which sharpens the
  softmax as the number of keys grows (:func:`attention_temperature`).
* **xPos** (Sun et al. 2022, "A Length-Extrapolatable Transformer"). On top of RoPE's
  rotation, pair :math:`j` of the query at position :math:`p` is multiplied and pair
  :math:`j` of the key at position :math:`p` divided by
  :math:`\zeta_j^{p/\gamma_s}` with :math:`\zeta_j = (2j/d + \gamma)/(1 + \gamma) < 1`
  and :math:`\gamma_s` = ``scale_base``; the score of query :math:`m` and key :math:`n`
  then carries :math:`\zeta_j^{(m-n)/\gamma_s}`, a decay with the offset only
  (:func:`xpos_scale`).
"""

from __future__ import annotations

import math

import numpy as np

from ._arrays import as_positions, check_finite_result
from ._validation import (
    MAX_ELEMENTS,
    MAX_ELEMENTS_TEXT,
    check_finite_real,
    check_positive_int,
    check_positive_real,
    check_size,
    check_width,
    is_int,
)

__all__ = ["attention_temperature", "xpos_scale"]

# ln of the largest float64: exp(E) and exp(-E) are both finite and non-zero for |E| below it.
_LOG_MAX = math.log(np.finfo(np.float64).max)


def attention_temperature(
    positions: object, *, floor_scale: float = 8192, attn_scale: float = 0.1
) -> np.ndarray:
    r"""Llama 4's query scale :math:`\ln(\lfloor (p+1)/F \rfloor + 1)\cdot a + 1`, float64.

    :math:`F` is ``floor_scale`` and :math:`a` ``attn_scale``; the defaults are Llama 4's
    (``Llama4TextConfig``: ``floor_scale=8192``, ``attn_scale=0.1``). The result has the
    shape of ``positions``; a model multiplies the query vector at position :math:`p` by
    it. It equals 1 for :math:`0 \le p < F - 1` and steps up each time :math:`p + 1`
    reaches a multiple of :math:`F`.

    In Hugging Face transformers (checked in 5.24: ``Llama4TextAttention.forward`` in
    ``models/llama4/modeling_llama4.py``) this is
    ``torch.log1p(torch.floor((positions.float() + 1.0) / self.floor_scale)) * self.attn_scale + 1.0``,
    applied only when ``attn_temperature_tuning`` is set and only in the layers without
    RoPE, with ``positions`` the cache positions ``arange(L) + past_seen_tokens``. There
    the positions are float32, so beyond :math:`2^{24}` transformers' floor can differ
    from this float64 one.

    Here the floor is exact: for integer positions and an integer-valued ``floor_scale``
    it is an integer floor division; otherwise ``numpy.floor_divide`` (fmod-based, exact
    for the float64 numbers :math:`p + 1` and :math:`F`). The logarithm is ``log1p``.

    ``positions``: an ``int`` ``L`` (meaning ``0..L-1``) or a non-empty array-like of any
    shape of finite positions :math:`0 \le p \le 2^{53}`. ``floor_scale``: a finite real
    number > 0; ``attn_scale``: a finite real number. Bools, complex numbers, strings, NaN,
    infinities, negative positions and results beyond the float64 range raise
    ``TypeError``/``ValueError`` naming the argument.
    """
    p = as_positions(positions, "positions", any_shape=True)
    floor_scale = check_positive_real(floor_scale, "floor_scale")
    attn_scale = check_finite_real(attn_scale, "attn_scale")
    if float(p.min()) < 0.0:
        raise ValueError(f"positions must be >= 0 (token indices), got {float(p.min())!r}")
    integral = floor_scale.is_integer() and floor_scale <= 2.0**62 and bool(np.all(p == np.floor(p)))
    if integral:
        # p <= 2**53 and F <= 2**62 are integers: p + 1 fits in int64 and // is the exact floor
        steps = ((p.astype(np.int64) + 1) // int(floor_scale)).astype(np.float64)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            steps = np.floor_divide(p + 1.0, floor_scale)
        check_finite_result(
            steps,
            f"floor_scale={floor_scale!r} is too small: (positions + 1) / floor_scale exceeds the "
            "float64 range",
        )
    with np.errstate(over="ignore"):
        out = np.log1p(steps) * attn_scale + 1.0
    return check_finite_result(
        out, f"attn_scale={attn_scale!r} is too large: the temperature exceeds the float64 range"
    )


def _log_zeta(d_head: int, gamma: float) -> np.ndarray:
    r""":math:`\ln \zeta_j` for :math:`j = 0..d/2-1`, each to a few ulp.

    Where :math:`\zeta_j \ge 1/2`: ``log1p((2j - d) / d / (1 + gamma))``, since
    :math:`\zeta_j - 1 = (2j/d - 1)/(1 + \gamma)` has the exact integer numerator
    :math:`2j - d` (accurate when :math:`\zeta_j` is close to 1). Where
    :math:`\zeta_j < 1/2`: ``log(2j/d + gamma) - log1p(gamma)`` (accurate when
    :math:`\gamma` is so small that :math:`1 + \gamma` rounds to 1).
    """
    j = np.arange(d_head // 2, dtype=np.float64)
    zeta_minus_one = (2.0 * j - d_head) / d_head / (1.0 + gamma)
    small = zeta_minus_one < -0.5
    near_one = np.log1p(np.maximum(zeta_minus_one, -0.5))
    far = np.log(2.0 * j / d_head + gamma) - np.log1p(gamma)
    return np.where(small, far, near_one)


def xpos_scale(positions: object, d_head: int, *, gamma: float = 0.4, scale_base: float = 512) -> np.ndarray:
    r"""xPos scale factors :math:`\zeta_j^{\,p/\gamma_s}`, shape ``positions.shape + (d_head/2,)``, float64.

    Entry :math:`(\dots, l, j)` is :math:`\zeta_j^{\,p_l/\gamma_s}` with

    .. math:: \zeta_j = \frac{2j/d + \gamma}{1 + \gamma}, \qquad j = 0, \dots, d/2 - 1,

    :math:`d` = ``d_head``, :math:`\gamma` = ``gamma`` and :math:`\gamma_s` =
    ``scale_base`` (Sun et al. 2022; torchscale's ``XPOS`` module writes
    :math:`\zeta_j` as ``(arange(0, d, 2) + 0.4 d) / (1.4 d)``). Queries multiply pair
    :math:`j` (both of its channels) by the factor, keys divide by it, so the rotated
    score of query :math:`m` and key :math:`n` is scaled by
    :math:`\zeta_j^{(m - n)/\gamma_s}`: below 1 and decaying for :math:`m > n`, fastest
    for the high-frequency pairs (small :math:`j`). torchscale feeds *centred* positions
    (a run starting at ``-(n // 2)``-ish, ``min_pos = -(length + offset) // 2``) to keep
    the factors near 1; pass such positions to reproduce it.

    The factor is computed as :math:`\exp\bigl((p/\gamma_s)\,\ln\zeta_j\bigr)` with
    :math:`\ln\zeta_j = \operatorname{log1p}\bigl((2j - d)/d/(1+\gamma)\bigr)`, so the
    relative error is a few ulp times :math:`1 + \lvert p \ln\zeta_j / \gamma_s \rvert`.
    Because every :math:`\zeta_j < 1`, large positive positions drive the factor towards
    0 and negative ones towards infinity. A factor whose value or reciprocal (what keys
    use) leaves the float64 range, i.e. :math:`\lvert p \ln \zeta_j/\gamma_s\rvert > \ln
    (1.8\cdot 10^{308}) \approx 709.78`, is refused with a ``ValueError`` naming
    ``positions`` and the largest allowed :math:`|p|` (about 290 000 with the defaults),
    instead of returning 0 or infinity.

    ``positions``: an ``int`` ``L`` (``0..L-1``) or a non-empty array-like of any shape of
    finite positions, :math:`|p| \le 2^{53}`, negative allowed. ``d_head``: a positive
    even ``int`` at most 2**16. ``gamma`` and ``scale_base``: finite real numbers > 0.
    The result may hold at most 2**28 entries. Other input raises
    ``TypeError``/``ValueError`` naming the argument.
    """
    d = check_width(d_head, "d_head")
    if is_int(positions):
        # an int L: every check below runs before arange(L) is formed
        length = check_positive_int(positions, "positions", MAX_ELEMENTS, MAX_ELEMENTS_TEXT)
        check_size((length, d // 2), "the scale (positions, d_head/2)")
        p, p_max = None, float(length - 1)
    else:
        p = as_positions(positions, "positions", any_shape=True)
        check_size((*p.shape, d // 2), "the scale (positions.shape + (d_head/2,))")
        p_max = float(np.max(np.abs(p)))
    gamma = check_positive_real(gamma, "gamma")
    scale_base = check_positive_real(scale_base, "scale_base")
    log_zeta = _log_zeta(d, gamma)
    steepest = float(np.max(np.abs(log_zeta)))  # |ln zeta_0| = ln(1 + 1/gamma)
    with np.errstate(over="ignore"):
        extreme = p_max / scale_base * steepest
    if not extreme <= _LOG_MAX:
        limit = _LOG_MAX * scale_base / steepest
        raise ValueError(
            f"positions up to |p| = {p_max!r} give xPos factors zeta_j**(p/scale_base) or their "
            f"reciprocals beyond the float64 range (exponent {extreme:.6g} > {_LOG_MAX:.6g}); with "
            f"d_head={d}, gamma={gamma!r}, scale_base={scale_base!r} positions must satisfy "
            f"|p| <= {limit:.6g}"
        )
    if p is None:
        p = np.arange(length, dtype=np.float64)
    exponent = (p / scale_base)[..., None] * log_zeta
    return np.exp(exponent)
