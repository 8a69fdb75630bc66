"""posenc: positional encodings for transformers, derived and executed.

Three layers. The top level holds the encodings (sinusoidal, learned, RoPE, relative
biases, ALiBi) and attention, plus the two statistics of the API contract
(``dot_product_distance``, ``encoding_statistics``). ``posenc.analysis`` holds what the
chapters measure encodings with (decay, naive requirements, the functional equation,
probes, readouts); ``posenc.exercises`` holds the exercise checkers. ``posenc.reference``
is the textbook form of each encoding that the chapters show, and ``posenc.symbolic``
the SymPy helpers of their proofs.

Pure numpy functions (and small classes for the stateful encodings). Importing the
package loads numpy only; mpmath is imported on first use of the frequency table, SymPy
on first use of ``posenc.symbolic``.
"""

from . import analysis, plotting, reference, rounding, symbolic
from ._rotate import get_num_threads, set_num_threads
from .alibi import alibi_bias, alibi_bias_key_form, alibi_slopes
from .analysis.statistics import EncodingStatistics, dot_product_distance, encoding_statistics
from .attention import attention, causal_mask, permutation_matrix, self_attention, softmax, taylor_terms
from .bfloat16 import round_to_bfloat16
from .bias_families import fire_bias, kerple_bias
from .cope import cope_positions
from .layouts import LAYOUTS, layout_permutation
from .learned import LearnedPositionalEncoding
from .mrope import apply_mrope, mrope_positions
from .position_ids import packed_position_ids, position_ids_from_mask
from .relative import (
    shaw_relative_logits,
    shaw_relative_positions,
    t5_bias,
    t5_bucket_thresholds,
    t5_relative_position_bucket,
)
from .rope import (
    apply_rope,
    rope_decay_bound,
    rope_frequencies,
    rope_matrix,
    rotate_by_angles,
)
from .rope_budget import critical_dimension, long_term_similarity, min_base_for_context, p_rope_frequencies
from .rope_nd import apply_rope_nd, axial_rope_frequencies
from .scales import attention_temperature, xpos_scale
from .sinusoidal import (
    SinusoidalPositionalEncoding,
    frequencies,
    iter_sinusoidal_blocks,
    relative_position_matrix,
    sinusoidal_encoding,
    wavelengths,
)

__version__ = "0.1.0"

__all__ = [
    "analysis",
    "plotting",
    "reference",
    "rounding",
    "symbolic",
    "LAYOUTS",
    "EncodingStatistics",
    "LearnedPositionalEncoding",
    "SinusoidalPositionalEncoding",
    "alibi_bias",
    "alibi_bias_key_form",
    "alibi_slopes",
    "apply_mrope",
    "apply_rope",
    "apply_rope_nd",
    "critical_dimension",
    "long_term_similarity",
    "min_base_for_context",
    "p_rope_frequencies",
    "axial_rope_frequencies",
    "mrope_positions",
    "attention_temperature",
    "cope_positions",
    "fire_bias",
    "kerple_bias",
    "packed_position_ids",
    "position_ids_from_mask",
    "round_to_bfloat16",
    "xpos_scale",
    "attention",
    "causal_mask",
    "dot_product_distance",
    "encoding_statistics",
    "frequencies",
    "get_num_threads",
    "iter_sinusoidal_blocks",
    "layout_permutation",
    "permutation_matrix",
    "relative_position_matrix",
    "rope_decay_bound",
    "rope_frequencies",
    "rope_matrix",
    "rotate_by_angles",
    "self_attention",
    "set_num_threads",
    "shaw_relative_logits",
    "shaw_relative_positions",
    "sinusoidal_encoding",
    "softmax",
    "t5_bias",
    "t5_bucket_thresholds",
    "t5_relative_position_bucket",
    "taylor_terms",
    "wavelengths",
]
