r"""Position ids for batches that are not one plain sequence: padded and packed batches.

A model that adds or rotates by *position* needs, for every token, the index of that token
inside its own sequence. Two layouts break the naive ``arange(L)``:

* **Padding.** Sequences of different lengths share one ``(B, L)`` array; the shorter ones
  are filled with pad tokens, on the right (training) or on the left (batched
  generation, so that every sequence ends at the last column). The attention mask marks
  real tokens with 1 and pads with 0. A real token's position is the number of real
  tokens before it: :math:`p_t = \sum_{s \le t} m_s - 1`. :func:`position_ids_from_mask`
  computes exactly this, as Hugging Face transformers does when it generates.
* **Packing.** Several short sequences are concatenated into one row with no padding at
  all (and attention kept inside each sequence); each sequence starts again at position 0.
  :func:`packed_position_ids` gives the concatenation of ``arange(n)`` over the lengths.

Both return int64 arrays: ids are indices, and the encoding functions (``apply_rope``,
``sinusoidal_encoding``, ...) convert them to float64 themselves.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._arrays import as_array, is_integer_dtype
from ._validation import MAX_ELEMENTS, MAX_ELEMENTS_TEXT, check_size

__all__ = ["packed_position_ids", "position_ids_from_mask"]


def position_ids_from_mask(attention_mask: object) -> np.ndarray:
    r"""Position ids of a padded batch from its attention mask, shape ``attention_mask.shape``, int64.

    For a mask :math:`m_t \in \{0, 1\}` along the last axis (1 a real token, 0 a pad),
    the id at slot :math:`t` is

    .. math:: p_t = \Bigl(\sum_{s=0}^{t} m_s\Bigr) - 1 \quad \text{if } m_t = 1,
              \qquad p_t = 1 \quad \text{if } m_t = 0 ,

    so the real tokens of every row are numbered ``0, 1, 2, ...`` whether the row is
    padded on the left (``[0, 0, 1, 1, 1]`` gives ``[1, 1, 0, 1, 2]``) or on the right
    (``[1, 1, 1, 0, 0]`` gives ``[0, 1, 2, 1, 1]``). A row of pads only is all 1.

    This is what Hugging Face transformers computes when ``generate`` is given an
    attention mask and no position ids: ``attention_mask.long().cumsum(-1) - 1`` followed
    by ``position_ids.masked_fill_(attention_mask == 0, 1)`` (transformers 4.46,
    ``GenerationMixin.prepare_inputs_for_generation`` in ``generation/utils.py``).
    transformers 5 builds the same cumulative sum in
    ``GenerationMixin._prepare_position_ids_for_generation`` but fills the padded slots
    with 0 (checked in 5.24; some models, e.g. IDEFICS, still fill with 1). The value in
    a padded slot never matters, since the mask removes those tokens from attention; the
    real tokens' ids are the same in both versions.

    ``attention_mask``: an array-like of at least one dimension (any leading shape, the
    sequence on the last axis, that axis non-empty) holding bools or integers equal to 0
    or 1. Floats, complex numbers, strings and other integer values raise
    ``TypeError``/``ValueError`` naming ``attention_mask``; so does a mask with more than
    2**28 entries.
    """
    if isinstance(attention_mask, (bool, np.bool_, numbers.Number)):
        raise TypeError(
            "attention_mask must be an array of 0/1 values with the sequence on the last axis, "
            f"got the scalar {attention_mask!r}"
        )
    mask = as_array(attention_mask, "attention_mask")
    if mask.size == 0 and isinstance(attention_mask, (list, tuple)):
        mask = mask.astype(np.int64)  # numpy reads [] as float64: report the empty axis instead
    if mask.dtype != np.bool_ and (mask.dtype == object or not is_integer_dtype(mask.dtype)):
        raise TypeError(f"attention_mask must hold bools or the integers 0 and 1, got dtype {mask.dtype}")
    if mask.ndim == 0:
        raise ValueError("attention_mask must have at least one dimension (the sequence), got a 0-D array")
    if mask.shape[-1] == 0:
        raise ValueError(f"attention_mask must have a non-empty last axis, got shape {mask.shape}")
    check_size(mask.shape, "attention_mask")
    if mask.dtype != np.bool_:
        if mask.size and (int(mask.min()) < 0 or int(mask.max()) > 1):
            raise ValueError(
                "attention_mask must hold only 0 (padding) and 1 (a real token), "
                f"got values from {int(mask.min())} to {int(mask.max())}"
            )
        mask = mask.astype(np.bool_)
    ids = np.cumsum(mask, axis=-1, dtype=np.int64) - 1
    ids[~mask] = 1
    return ids


def packed_position_ids(lengths: object) -> np.ndarray:
    r"""Position ids of sequences packed into one row: ``concat(arange(n) for n in lengths)``, int64.

    For lengths :math:`n_1, \dots, n_S` the result has :math:`N = \sum_s n_s` entries; the
    token at offset :math:`t` of sequence :math:`s` gets id :math:`t`, so every sequence
    starts again at 0 (``[3, 1, 2]`` gives ``[0, 1, 2, 0, 0, 1]``). These are the
    ``position_ids`` that packed training (e.g. transformers'
    ``DataCollatorWithFlattening``) passes alongside the concatenated tokens; attention
    must also be kept inside each sequence, which position ids alone do not do.

    ``lengths``: a non-empty 1-D array-like (list, tuple or integer array) of positive
    integers; bools, floats (even ``3.0``), zero or negative lengths, and a total
    :math:`N` above 2**28 raise ``TypeError``/``ValueError`` naming ``lengths``, before
    anything of size :math:`N` is allocated.
    """
    if isinstance(lengths, (bool, np.bool_, numbers.Number)):
        raise TypeError(
            f"lengths must be a 1-D array-like of positive integers, got the scalar {lengths!r}; "
            "wrap a single length in a list"
        )
    arr = as_array(lengths, "lengths")
    if arr.size == 0:
        raise ValueError("lengths must not be empty")
    if isinstance(lengths, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in lengths):
        raise TypeError("lengths must hold positive integers, got a bool")  # [True, 2] becomes int
    if arr.dtype == np.bool_ or arr.dtype == object or not is_integer_dtype(arr.dtype):
        raise TypeError(f"lengths must hold positive integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"lengths must be 1-D, got shape {arr.shape}")
    if int(arr.min()) <= 0:
        raise ValueError(f"lengths must all be positive integers, got {int(arr.min())}")
    if int(arr.max()) > MAX_ELEMENTS:
        raise ValueError(f"lengths must each be at most {MAX_ELEMENTS_TEXT}, got {int(arr.max())}")
    sizes = arr.astype(np.int64)
    total = int(sizes.sum())  # at most 2**28 values of at most 2**28 each: no int64 overflow
    if total > MAX_ELEMENTS:
        raise ValueError(f"lengths must sum to at most {MAX_ELEMENTS_TEXT}, got a total of {total}")
    starts = np.cumsum(sizes) - sizes
    return np.arange(total, dtype=np.int64) - np.repeat(starts, sizes)
