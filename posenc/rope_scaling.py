r"""The context-extension variants of RoPE's frequencies (Hugging Face ``rope_scaling``).

Each ``rope_type`` rescales the inverse frequencies :math:`\theta_i` of
:func:`~posenc.rope.rope_frequencies` (which documents every formula and key): ``linear``,
``dynamic``, ``yarn``, ``llama3`` and ``longrope`` (Phi-3), and ``default`` (no change).
:func:`scaled_frequencies` reads and checks the keys of a ``scaling`` dict and applies its
type; a transformers-5 ``rope_parameters`` dict is read as it stands (its ``rope_theta``
must equal the ``base`` passed).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ._arrays import as_array, as_positive_vector
from ._validation import (
    MAX_POSITION,
    MAX_POSITION_TEXT,
    check_base,
    check_bool,
    check_finite_real,
    check_positive_int,
    check_positive_real,
)
from .sinusoidal import frequencies

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3", "longrope")
_REQUIRED_KEYS = {
    "default": (),
    "linear": ("factor",),
    "dynamic": ("factor",),  # and L0: original_max_position_embeddings or max_position_embeddings
    "yarn": ("factor", "original_max_position_embeddings"),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
    "longrope": ("short_factor", "long_factor", "original_max_position_embeddings"),
}


def rope_type_of(scaling: Mapping) -> str:
    if not isinstance(scaling, Mapping):
        raise TypeError(
            f"scaling must be None or a dict like {{'rope_type': 'linear', ...}}, got {scaling!r}"
        )
    new, legacy = scaling.get("rope_type"), scaling.get("type")
    if new is not None and legacy is not None and new != legacy:
        raise ValueError(f"scaling has rope_type={new!r} and type={legacy!r}; they must agree")
    rope_type = new if new is not None else legacy
    if rope_type is None:
        raise ValueError("scaling must have the key 'rope_type' (or the legacy key 'type')")
    if not isinstance(rope_type, str) or rope_type not in ROPE_TYPES:
        raise ValueError(f"unknown rope_type {rope_type!r}; expected one of {ROPE_TYPES}")
    for key in _REQUIRED_KEYS[rope_type]:
        if scaling.get(key) is None:
            raise ValueError(f"rope_type {rope_type!r} needs the key {key!r} in scaling")
    return str(rope_type)


def _key(key: str) -> str:
    return f"scaling[{key!r}]"


def _factor(scaling: Mapping) -> float:
    return check_positive_real(scaling["factor"], _key("factor"))


def _original_length(scaling: Mapping) -> int:
    key = "original_max_position_embeddings"
    return check_positive_int(scaling[key], _key(key), MAX_POSITION, MAX_POSITION_TEXT)


def _dynamic_length(scaling: Mapping) -> int:
    """L0 of ``dynamic``: ``original_max_position_embeddings``, else ``max_position_embeddings``.

    transformers 5 validates a ``dynamic`` ``rope_parameters`` dict with only ``factor``
    required and takes L0 from ``config.max_position_embeddings``; here that is a key.
    """
    if scaling.get("original_max_position_embeddings") is not None:
        return _original_length(scaling)
    key = "max_position_embeddings"
    if scaling.get(key) is None:
        raise ValueError(
            "rope_type 'dynamic' needs the length L0: scaling['original_max_position_embeddings'] or "
            "scaling['max_position_embeddings'] (the config's, which transformers 5 uses when the "
            "rope_parameters dict has no original_max_position_embeddings)"
        )
    return check_positive_int(scaling[key], _key(key), MAX_POSITION, MAX_POSITION_TEXT)


def _optional_positive(scaling: Mapping, key: str, default: float | None) -> float | None:
    """A positive finite real under ``key``; missing, None or 0 give ``default`` (transformers' ``or``)."""
    value = scaling.get(key)
    if value is None:
        return default
    value = check_finite_real(value, _key(key))
    if value == 0.0:
        return default
    return check_positive_real(value, _key(key))


# The YaRN attention factors accepted: float32's normal range (a rotation of float32 values
# by a factor outside it overflows or underflows whatever the values).
ATTENTION_FACTOR_RANGE = (2.0**-126, 2.0**127)


def _check_attention_factor(value: float, source: str) -> None:
    """Refuse an attention factor outside ``ATTENTION_FACTOR_RANGE``, naming the keys it came from."""
    if not ATTENTION_FACTOR_RANGE[0] <= value <= ATTENTION_FACTOR_RANGE[1]:
        raise ValueError(
            f"the attention factor {source} is {value!r}, outside [2**-126, 2**127] (float32's "
            "normal range, where rotated values neither overflow nor lose their digits)"
        )


def _yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    # YaRN's attention temperature: 1 for scale <= 1, else 0.1 * mscale * ln(scale) + 1.
    return 1.0 if scale <= 1.0 else 0.1 * mscale * math.log(scale) + 1.0


def _yarn(inv: np.ndarray, d: int, base: float, scaling: Mapping) -> tuple[np.ndarray, float]:
    factor = _factor(scaling)
    orig = _original_length(scaling)
    # A missing *or zero/None* value falls back to the default, as transformers' ``or``.
    beta_fast = _optional_positive(scaling, "beta_fast", 32.0)
    beta_slow = _optional_positive(scaling, "beta_slow", 1.0)
    if beta_fast <= beta_slow:
        raise ValueError(
            f"scaling needs beta_fast > beta_slow (scaling['beta_fast'] > scaling['beta_slow']), "
            f"got {beta_fast} and {beta_slow}"
        )
    truncate = scaling.get("truncate")
    truncate = True if truncate is None else check_bool(truncate, _key("truncate"))

    attention_factor = _optional_positive(scaling, "attention_factor", None)
    mscale = _optional_positive(scaling, "mscale", None)
    mscale_all_dim = _optional_positive(scaling, "mscale_all_dim", None)
    if attention_factor is None:
        if mscale is not None and mscale_all_dim is not None:
            attention_factor = _yarn_mscale(factor, mscale) / _yarn_mscale(factor, mscale_all_dim)
            source = (
                f"from scaling['factor'] = {factor!r}, scaling['mscale'] = {mscale!r} and "
                f"scaling['mscale_all_dim'] = {mscale_all_dim!r}"
            )
        else:
            attention_factor = _yarn_mscale(factor)
            source = f"from scaling['factor'] = {factor!r}"
    else:
        source = "scaling['attention_factor']"
    _check_attention_factor(attention_factor, source)

    def pair_index(rotations: float, key: str) -> float:
        # The (real) pair index whose wavelength 2*pi*base**(2i/d) fits `rotations` times
        # into the original context: solve orig / wavelength = rotations for i.
        ratio = orig / (rotations * 2 * math.pi)
        if not 0.0 < ratio < math.inf:
            raise ValueError(
                f"{_key(key)} = {rotations!r} is out of range: original_max_position_embeddings / "
                f"({key} * 2 pi) must be a positive finite number, got {ratio!r}"
            )
        return d * math.log(ratio) / (2 * math.log(base))

    low, high = pair_index(beta_fast, "beta_fast"), pair_index(beta_slow, "beta_slow")
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(d // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    # ramp = 0: keep the original frequency (extrapolate); ramp = 1: divide by factor.
    return inv * (1.0 - ramp) + (inv / factor) * ramp, float(attention_factor)


def _llama3(inv: np.ndarray, scaling: Mapping) -> np.ndarray:
    factor = _factor(scaling)
    low_ff = check_positive_real(scaling["low_freq_factor"], _key("low_freq_factor"))
    high_ff = check_positive_real(scaling["high_freq_factor"], _key("high_freq_factor"))
    if high_ff < low_ff:
        raise ValueError(
            f"scaling needs high_freq_factor > low_freq_factor (or equal: a step, no blend band), "
            f"got {high_ff} and {low_ff}"
        )
    orig = _original_length(scaling)
    low_freq_wavelen, high_freq_wavelen = orig / low_ff, orig / high_ff
    wavelen = 2 * math.pi / inv
    out = np.where(wavelen > low_freq_wavelen, inv / factor, inv)
    if high_ff == low_ff:
        # Llama 4 Scout (both factors 1): no blend band, a step at the wavelength L0/low_freq_factor
        return out
    smooth = (orig / wavelen - low_ff) / (high_ff - low_ff)
    smoothed = (1.0 - smooth) * out / factor + smooth * out
    medium = (wavelen >= high_freq_wavelen) & (wavelen <= low_freq_wavelen)
    return np.where(medium, smoothed, out)


def _factor_list(scaling: Mapping, key: str, half: int) -> np.ndarray:
    """``scaling[key]``: ``half`` finite positive reals (a list, tuple or 1-D array)."""
    if isinstance(scaling[key], (str, bytes)) or as_array(scaling[key], _key(key)).ndim == 0:
        raise TypeError(f"{_key(key)} must be a list of {half} positive numbers, got {scaling[key]!r}")
    values = as_positive_vector(scaling[key], _key(key), per="pair")
    if values.size != half:
        raise ValueError(
            f"{_key(key)} must have {half} entries, one per rotated pair (d_head/2, or rotary_dim/2 "
            f"when given), got {values.size}"
        )
    return values


def _longrope(inv: np.ndarray, scaling: Mapping, seq_len: int | None) -> tuple[np.ndarray, float]:
    orig = _original_length(scaling)
    short = _factor_list(scaling, "short_factor", inv.size)
    long = _factor_list(scaling, "long_factor", inv.size)
    # transformers: factor if given, else max_position_embeddings / original_max_position_embeddings.
    factor = None
    if scaling.get("max_position_embeddings") is not None:
        key = "max_position_embeddings"
        longest = check_positive_int(scaling[key], _key(key), MAX_POSITION, MAX_POSITION_TEXT)
        factor = longest / orig
    if scaling.get("factor") is not None:
        factor = _factor(scaling)
    attention_factor = scaling.get("attention_factor")
    if attention_factor is not None:
        attention_factor = check_positive_real(attention_factor, _key("attention_factor"))
        _check_attention_factor(attention_factor, "scaling['attention_factor']")
    elif factor is None:
        raise ValueError(
            "rope_type 'longrope' needs scaling['factor'] or scaling['max_position_embeddings'] (the "
            "config's, giving factor = max_position_embeddings / original_max_position_embeddings) "
            "to derive the attention factor, or an explicit scaling['attention_factor']"
        )
    elif factor <= 1.0:
        attention_factor = 1.0
    elif orig == 1:
        raise ValueError(
            "rope_type 'longrope': the attention factor sqrt(1 + ln(factor) / ln(L0)) needs "
            "scaling['original_max_position_embeddings'] = L0 >= 2, got 1"
        )
    else:
        attention_factor = math.sqrt(1.0 + math.log(factor) / math.log(orig))
    ext = long if seq_len is not None and seq_len > orig else short
    return inv / ext, float(attention_factor)


def _check_theta(scaling: Mapping, base: float) -> None:
    theta = scaling.get("rope_theta")
    if theta is None:
        return
    try:
        theta = check_base(theta)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"scaling['rope_theta']: {exc}") from None
    if theta != base:
        raise ValueError(
            f"scaling['rope_theta'] = {theta!r} differs from base = {base!r}; "
            f"pass base={theta!r} (the same value) with this scaling dict"
        )


def scaled_frequencies(
    inv: np.ndarray, d: int, base: float, scaling: Mapping | None, seq_len: int | None
) -> tuple[np.ndarray, float]:
    """``(frequencies, attention_factor)`` after the ``scaling`` dict's type (checked here)."""
    attention_factor = 1.0
    rope_type = "default" if scaling is None else rope_type_of(scaling)
    if scaling is not None:
        _check_theta(scaling, base)
    # A tiny factor overflows inv / factor: the result is checked below, so no warning.
    with np.errstate(over="ignore", invalid="ignore"):
        if rope_type == "linear":
            inv = inv / _factor(scaling)
        elif rope_type == "dynamic":
            factor = _factor(scaling)
            orig = _dynamic_length(scaling)
            if seq_len is None:
                raise ValueError("rope_type 'dynamic' needs seq_len (the current sequence length)")
            if d < 4:
                raise ValueError(
                    f"rope_type 'dynamic' needs d_head >= 4, or rotary_dim >= 4 when given (the rotated "
                    f"width d, exponent d/(d-2)), got d = {d}"
                )
            length = max(seq_len, orig)
            try:
                new_base = base * ((factor * length / orig) - (factor - 1.0)) ** (d / (d - 2))
            except OverflowError:
                new_base = math.inf
            if not math.isfinite(new_base):
                raise ValueError(
                    "rope_type 'dynamic': the new base base * (factor * seq_len / "
                    "original_max_position_embeddings - factor + 1) ** (d/(d-2)) overflows float64; "
                    f"reduce scaling['factor'] or seq_len (got factor={factor}, seq_len={seq_len}, "
                    f"base={base})"
                )
            inv = frequencies(d, new_base)
        elif rope_type == "yarn":
            inv, attention_factor = _yarn(inv, d, base, scaling)
        elif rope_type == "llama3":
            inv = _llama3(inv, scaling)
        elif rope_type == "longrope":
            inv, attention_factor = _longrope(inv, scaling, seq_len)
    return inv, attention_factor
