r"""Self-checking helpers for the book's code exercises.

Each ``check_*`` function runs a student's function on many inputs and compares it with
the ``posenc`` reference. On success it returns a short string (``"correct on 57
inputs"``). On failure it raises :class:`ExerciseError` (an ``AssertionError``) whose
message names the problem. The diagnosis goes in this order:

1. *The result is unusable*, checked on every call as it returns: the function raised
   (the exception's type and message, and the input), returned something that is not a
   numpy array (a list, a scalar, ``None``...), returned complex values (refused even when
   the real part is right), an array of a non-numeric dtype (object, bool, strings...),
   NaN or infinity, or numbers of the wrong kind (integers or float32 where float64 is
   expected, floats where bucket indices are expected). These are the names of
   ``RESULT_PROBLEMS``.
2. *A known mistake*: the checker computes the known wrong variants of the exercise (the
   classic mistakes, e.g. the concatenated instead of the interleaved layout, or the
   gradient of one batch element instead of the batch sum) and, if the student's outputs
   agree with one of them on every input, names that mistake and gives a hint.
3. *The wrong shape* (when no known mistake explains it): expected and actual shape.
4. Otherwise the first failing input and the largest difference.

The short name of the problem is in ``ExerciseError.mistake``.

Checkers: :func:`check_sinusoidal_encoding` (the sinusoidal table, chapter 3),
:func:`check_relative_position_matrix` (the shift matrix :math:`M_k`, chapter 4),
:func:`check_learned_backward` (backward pass of a learned table, chapter 8),
:func:`check_rope` (rotary embedding, interleaved or half layout, chapter 9),
:func:`check_t5_bucket` (T5's relative-position buckets, chapter 10) and
:func:`check_alibi_slopes` (ALiBi head slopes, chapter 11). Part V adds
:func:`check_partial_rope`, :func:`check_long_term_similarity` and
:func:`check_critical_dimension` (RoPE frequencies at work, chapter 14),
:func:`check_causal_prefix_mean`, :func:`check_attention_temperature` and
:func:`check_nope_layers` (position without an encoding, chapter 15),
:func:`check_axial_frequencies`, :func:`check_mrope_positions` and
:func:`check_mrope_channel_axes` (axial RoPE and Qwen2-VL's M-RoPE, chapter 16),
:func:`check_position_ids_from_mask`, :func:`check_packed_position_ids` and
:func:`check_rerotate_keys` (position ids and re-rotated cache keys, chapter 17),
:func:`check_kerple_bias` (KERPLE's log and power kernels, chapter 18) and
:func:`check_fire_distances` (FIRE's normalised distances, chapter 18),
:func:`check_layout_rows` and :func:`check_partial_rope_half` (the executed FAQ, chapter 19); the appendix on
real model configurations adds :func:`check_wavelengths` (RoPE wavelengths),
:func:`check_yarn_ratio` (YaRN's per-pair ratio) and :func:`check_mpt_alibi_slopes` (MPT's
ALiBi slopes).

Each checker is in the module of its chapter (``ch03_sinusoidal``, ``ch04_rotation``,
``ch08_learned``, ``ch09_rope``, ``ch10_relative``, ``ch11_alibi``, ``ch14_frequencies``, ``ch15_nope``,
``ch16_rope_nd``, ``ch17_inference``, ``ch18_bias``, ``ch19_faq``, ``chA_configs``) and they share
the internal modules ``_runner`` (the error, the diagnosis of a result, the run loop and
the mistake registry) and ``_angles`` (the tolerance, the float32 diagnosis and plain RoPE
of chapters 3, 9 and 17).

``KNOWN_MISTAKES`` lists, for each checker, the mistakes it recognises. It is built from
the table each chapter module registers and its checker reports from (a checker can only
name a mistake of its table), so the two cannot drift apart. A checker called with a bad
argument of its own (e.g. not a function) raises ``TypeError`` or ``ValueError`` naming
the argument. Importing this package loads numpy and ``posenc`` only (no sympy, no
matplotlib). A student function that raises ``NotImplementedError`` (the stub of the
student edition) propagates unchanged.
"""

from __future__ import annotations

from ._runner import MISTAKE_TABLES, RESULT_PROBLEMS, ExerciseError
from .ch03_sinusoidal import check_sinusoidal_encoding
from .ch04_rotation import check_relative_position_matrix
from .ch08_learned import check_learned_backward
from .ch09_rope import check_rope
from .ch10_relative import check_t5_bucket
from .ch11_alibi import check_alibi_slopes
from .ch14_frequencies import check_critical_dimension, check_long_term_similarity, check_partial_rope
from .ch15_nope import check_attention_temperature, check_causal_prefix_mean, check_nope_layers
from .ch16_rope_nd import check_axial_frequencies, check_mrope_channel_axes, check_mrope_positions
from .ch17_inference import check_packed_position_ids, check_position_ids_from_mask, check_rerotate_keys
from .ch18_bias import check_fire_distances, check_kerple_bias
from .ch19_faq import check_layout_rows, check_partial_rope_half
from .chA_configs import check_mpt_alibi_slopes, check_wavelengths, check_yarn_ratio

__all__ = [
    "ExerciseError",
    "KNOWN_MISTAKES",
    "RESULT_PROBLEMS",
    "check_alibi_slopes",
    "check_attention_temperature",
    "check_axial_frequencies",
    "check_causal_prefix_mean",
    "check_critical_dimension",
    "check_fire_distances",
    "check_kerple_bias",
    "check_layout_rows",
    "check_learned_backward",
    "check_long_term_similarity",
    "check_mpt_alibi_slopes",
    "check_mrope_channel_axes",
    "check_mrope_positions",
    "check_nope_layers",
    "check_packed_position_ids",
    "check_partial_rope",
    "check_partial_rope_half",
    "check_position_ids_from_mask",
    "check_relative_position_matrix",
    "check_rerotate_keys",
    "check_rope",
    "check_sinusoidal_encoding",
    "check_t5_bucket",
    "check_wavelengths",
    "check_yarn_ratio",
]


# For each checker, the names of the known mistakes it can report: built from the tables
# that the chapter modules register when imported above (in chapter order), the same tables
# their checkers report from.
KNOWN_MISTAKES: dict[str, tuple[str, ...]] = {
    checker: tuple(m.name for m in table.values()) for checker, table in MISTAKE_TABLES.items()
}
