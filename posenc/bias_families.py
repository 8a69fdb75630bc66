r"""Relative-position biases beyond ALiBi: KERPLE's kernels and FIRE's learned function.

Like ALiBi (:mod:`posenc.alibi`), both add a bias :math:`b_h(i, j)` that depends on the
query and key positions to the attention scores of head :math:`h`, and both use the same
geometry as :func:`~posenc.alibi.alibi_bias`: the ``q_len`` queries are the last ``q_len`` of
``k_len`` positions (absolute query position :math:`i = i_{row} + k_{len} - q_{len}`),
and with ``causal=True`` the entries with :math:`j > i` are :math:`-\infty`.

* **KERPLE** (Chi, Fan, Ramadge and Rudnicky, NeurIPS 2022) replaces ALiBi's line
  :math:`-m_h\,|i-j|` by a conditionally positive definite kernel with two learned
  positive parameters per head: the logarithmic variant
  :math:`-r_1 \ln(1 + r_2\,|i-j|)` and the power variant :math:`-r_1 |i-j|^{r_2}`
  (:math:`0 < r_2 \le 2`). The power variant with :math:`r_2 = 1` *is* ALiBi with slope
  :math:`r_1` (:func:`kerple_bias`).
* **FIRE** (Li et al. 2023, "Functional Interpolation for Relative Positions Improves
  Long Context Transformers") learns the bias as a function :math:`f` (a small MLP) of a
  *normalised* distance, :math:`f\bigl(\psi(i-j)/\psi(\max(L, i))\bigr)` with
  :math:`\psi(x) = \ln(c x + 1)`: the input stays in :math:`[0, 1]` however long the
  sequence, which is what lets it extrapolate (:func:`fire_bias`).
"""

from __future__ import annotations

import numpy as np

from ._arrays import as_positive_vector, as_real_array, check_finite_result
from ._bias_positions import query_key_positions
from ._validation import (
    check_bool,
    check_callable,
    check_choice,
    check_positive_real,
    check_query_key_lengths,
    check_size,
)

__all__ = ["fire_bias", "kerple_bias"]

_KERPLE_KINDS = ("log", "power")


def kerple_bias(
    r1: object,
    r2: object,
    q_len: int,
    k_len: int | None = None,
    *,
    kind: str = "log",
    causal: bool = True,
) -> np.ndarray:
    r"""KERPLE bias tensor of shape ``(H, q_len, k_len)``, float64, ``H = len(r1) = len(r2)``.

    With :math:`\delta = \lvert i - j \rvert`, :math:`i` the absolute query position
    (:math:`i = i_{row} + k_{len} - q_{len}`, queries the last ``q_len`` of ``k_len``
    positions, as :func:`~posenc.alibi.alibi_bias`), entry :math:`(h, i_{row}, j)` is

    * ``kind="log"``: :math:`-r_{1,h} \ln(1 + r_{2,h}\,\delta)` (computed with ``log1p``);
    * ``kind="power"``: :math:`-r_{1,h}\, \delta^{\,r_{2,h}}`, which needs
      :math:`0 < r_{2,h} \le 2` (the kernel is conditionally positive definite only
      there). With :math:`r_2 = 1` this is ALiBi's :math:`-m_h\,\delta` with slopes
      :math:`m_h = r_{1,h}`.

    The diagonal :math:`\delta = 0` is +0.0 in both. With ``causal=True`` the entries
    :math:`j > i` are :math:`-\infty`; with ``causal=False`` the symmetric bias is
    returned everywhere (bidirectional attention). In the paper :math:`r_1, r_2` are
    learned per head and kept positive; here they are given.

    ``r1``, ``r2``: non-empty 1-D array-likes of the same length :math:`H` of finite real
    numbers > 0. ``q_len``, ``k_len``: positive ``int`` (bools refused), ``q_len <=
    k_len``, ``k_len`` defaults to ``q_len``. ``kind``: ``"log"`` or ``"power"``.
    ``causal``: a real bool. The tensor may hold at most 2**28 entries. Other input, and
    parameters so large that the bias leaves the float64 range, raise
    ``TypeError``/``ValueError`` naming the argument.
    """
    r1 = as_positive_vector(r1, "r1", per="head")
    r2 = as_positive_vector(r2, "r2", per="head")
    if r1.size != r2.size:
        raise ValueError(
            f"r1 and r2 must have one value per head each (the same length), got {r1.size} and {r2.size}"
        )
    kind = check_choice(kind, "kind", _KERPLE_KINDS)
    q, k = check_query_key_lengths(q_len, k_len)
    causal = check_bool(causal, "causal")
    if kind == "power" and float(r2.max()) > 2.0:
        raise ValueError(f'r2 must satisfy 0 < r2 <= 2 for kind="power", got {float(r2.max())!r}')
    check_size((r1.size, q, k), "the bias (len(r1), q_len, k_len)")
    i_abs, j = query_key_positions(q, k)
    delta = np.abs(i_abs - j).astype(np.float64)[None, :, :]
    with np.errstate(over="ignore"):
        if kind == "log":
            kernel = np.log1p(r2[:, None, None] * delta)
        else:
            kernel = delta ** r2[:, None, None]
        bias = 0.0 - r1[:, None, None] * kernel  # 0.0 - (+0.0) keeps the diagonal +0.0
    check_finite_result(
        bias,
        f"r1 and r2 are too large: the {kind} bias over distances up to {k - 1} exceeds the float64 range",
    )
    if causal:
        bias[:, j[0] > i_abs] = -np.inf
    return bias


def fire_bias(
    f: object,
    q_len: int,
    k_len: int | None = None,
    *,
    c: float = 1.0,
    threshold: float = 1.0,
    causal: bool = True,
) -> np.ndarray:
    r"""FIRE bias :math:`f\bigl(\psi(i - j)/\psi(\max(L, i))\bigr)`, float64, shape of ``f``'s output.

    :math:`\psi(x) = \ln(c\,x + 1)` (``log1p(c * x)``), :math:`L` = ``threshold`` and
    :math:`i` the absolute query position, :math:`i = i_{row} + k_{len} - q_{len}` (the
    queries are the last ``q_len`` of ``k_len`` positions, as
    :func:`~posenc.alibi.alibi_bias`). ``f`` is called once, with the float64 array ``u`` of
    shape ``(q_len, k_len)``,

    .. math:: u_{i_{row}, j} = \frac{\psi(\lvert i - j \rvert)}{\psi(\max(L, i))} ,

    and its return value, of shape ``(q_len, k_len)`` or ``(H, q_len, k_len)``, is the
    bias (converted to float64). For the keys a causal query sees, :math:`0 \le j \le i`
    and :math:`u = \psi(i - j)/\psi(\max(L, i)) \in [0, 1]` (:math:`\psi` increases and
    :math:`i - j \le \max(L, i)`), with the farthest key at 1 once :math:`i \ge L`: the
    progressive interpolation that keeps :math:`f`'s input bounded at any length.

    Masked entries: ``u`` holds :math:`\psi(\lvert i - j\rvert)/\psi(\max(L, i))` at
    *every* entry, including :math:`j > i`, so ``f`` sees the same array whether or not
    ``causal`` is set (as the common PyTorch implementations of FIRE do: they take
    ``log(abs(c * rel_distance) + 1)`` for all pairs and mask afterwards); with
    ``causal=True`` the entries :math:`j > i` of the result are then set to
    :math:`-\infty`, whatever ``f`` returned there. With ``causal=False`` nothing is
    masked and :math:`f` sees the distance without its sign, as in ALiBi's bidirectional
    form. In the paper :math:`c` and :math:`L` are learned (implementations add a small
    epsilon to the denominator); here both are given and must be positive, which keeps
    :math:`\psi(\max(L, i)) \ge \ln(cL + 1) > 0`.

    ``f``: a callable taking one array and returning an array-like of real numbers of one
    of the two shapes, all finite (else ``TypeError``/``ValueError`` naming ``f``;
    exceptions raised inside ``f`` propagate). ``q_len``, ``k_len``: positive ``int``,
    ``q_len <= k_len``; ``c``, ``threshold``: finite real numbers > 0; ``causal``: a real
    bool. ``u`` may hold at most 2**28 entries, and so may the result.
    """
    check_callable(f, "f", "(e.g. a small MLP's forward)")
    q, k = check_query_key_lengths(q_len, k_len)
    c = check_positive_real(c, "c")
    threshold = check_positive_real(threshold, "threshold")
    causal = check_bool(causal, "causal")
    check_size((q, k), "the distances (q_len, k_len)")
    i_abs, j = query_key_positions(q, k)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        numerator = np.log1p(c * np.abs(i_abs - j).astype(np.float64))
        denominator = np.log1p(c * np.maximum(float(threshold), i_abs.astype(np.float64)))
        u = numerator / denominator
    check_finite_result(
        u,
        f"c={c!r}, threshold={threshold!r} give normalised distances psi(|i-j|)/psi(max(threshold, i)) "
        "beyond the float64 range (c * distance overflows, or ln(c * threshold + 1) is too small)",
    )
    out = f(u)
    shape = np.shape(out) if isinstance(out, np.ndarray) else None
    if shape is not None:  # an array's size is known before its float64 copy is made
        check_size(shape, "the value returned by f")
    try:
        result = as_real_array(out, "the value returned by f")
    except TypeError as exc:
        raise TypeError(f"f must return an array of real numbers: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"f must return a non-empty array of finite real numbers: {exc}") from None
    if result.shape != (q, k) and not (result.ndim == 3 and result.shape[1:] == (q, k)):
        raise ValueError(
            f"f must return shape (q_len, k_len) = {(q, k)} or (H, q_len, k_len), got {result.shape}"
        )
    check_size(result.shape, "the value returned by f")
    if causal:  # result is a fresh float64 array (as_real_array converts with a copy)
        result[..., j[0] > i_abs] = -np.inf
    return result
