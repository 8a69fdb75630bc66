"""posenc: positional encodings for transformers, derived and executed.

Pure numpy functions (and two small classes for the stateful encodings). Importing the
package loads numpy only; mpmath is imported on first use of the frequency table.
"""

from . import reference
from .alibi import alibi_bias, alibi_bias_key_form, alibi_slopes
from .analysis import (
    EncodingStatistics,
    dot_product_distance,
    dot_product_profile,
    encoding_statistics,
    mean_dot_by_offset,
    toeplitz_deviation,
)
from .attention import attention, causal_mask, permutation_matrix, self_attention, softmax, taylor_terms
from .decay import (
    aliased_fraction,
    aliasing_onset,
    dot_product_sum,
    endpoint_correction,
    far_asymptote,
    far_envelope,
    integral_approximation,
    log_asymptote,
    mean_square_frequency,
    near_asymptote,
    noise_floor,
    oscillatory_integral,
)
from .functional import functional_equation_residual, wrap_angle
from .learned import LearnedPositionalEncoding, PositionReadout, fit_position_readout
from .mrope import apply_mrope, mrope_positions
from .naive import (
    binary_encoding,
    integer_encoding,
    is_bounded,
    is_defined_beyond,
    is_length_consistent,
    is_shift_consistent,
    is_unique,
    min_pairwise_distance,
    neighbour_distances,
    normalized_encoding,
    sine_encoding,
    stays_in_training_range,
)
from .probe import AttentionProbe, fit_probe, probe_accuracy
from .relative import (
    shaw_relative_logits,
    shaw_relative_positions,
    t5_bias,
    t5_bucket_thresholds,
    t5_relative_position_bucket,
)
from .rope import apply_rope, rope_decay_bound, rope_frequencies, rope_layout_permutation, rope_matrix
from .rope_nd import apply_rope_nd, axial_rope_frequencies
from .rotation import fit_linear_map, fit_shift_matrix, shift_matrix_angles
from .sinusoidal import (
    SinusoidalPositionalEncoding,
    frequencies,
    interleaved_to_split,
    iter_sinusoidal_blocks,
    relative_position_matrix,
    sinusoidal_encoding,
    wavelengths,
)
from .special import cosine_integral
from .tasks import copy_targets, copy_task

__version__ = "0.1.0"

__all__ = [
    "reference",
    "alibi_bias",
    "alibi_bias_key_form",
    "alibi_slopes",
    "EncodingStatistics",
    "LearnedPositionalEncoding",
    "PositionReadout",
    "SinusoidalPositionalEncoding",
    "attention",
    "binary_encoding",
    "causal_mask",
    "aliased_fraction",
    "aliasing_onset",
    "cosine_integral",
    "dot_product_sum",
    "endpoint_correction",
    "far_asymptote",
    "far_envelope",
    "integral_approximation",
    "log_asymptote",
    "mean_square_frequency",
    "near_asymptote",
    "noise_floor",
    "oscillatory_integral",
    "dot_product_distance",
    "dot_product_profile",
    "encoding_statistics",
    "fit_linear_map",
    "fit_shift_matrix",
    "fit_position_readout",
    "frequencies",
    "functional_equation_residual",
    "integer_encoding",
    "is_bounded",
    "is_defined_beyond",
    "is_length_consistent",
    "is_shift_consistent",
    "is_unique",
    "interleaved_to_split",
    "iter_sinusoidal_blocks",
    "mean_dot_by_offset",
    "min_pairwise_distance",
    "neighbour_distances",
    "normalized_encoding",
    "permutation_matrix",
    "self_attention",
    "relative_position_matrix",
    "shift_matrix_angles",
    "sine_encoding",
    "sinusoidal_encoding",
    "softmax",
    "stays_in_training_range",
    "taylor_terms",
    "toeplitz_deviation",
    "apply_rope",
    "apply_rope_nd",
    "axial_rope_frequencies",
    "apply_mrope",
    "mrope_positions",
    "rope_decay_bound",
    "rope_frequencies",
    "rope_layout_permutation",
    "rope_matrix",
    "wavelengths",
    "wrap_angle",
    "AttentionProbe",
    "copy_targets",
    "copy_task",
    "fit_probe",
    "probe_accuracy",
    "shaw_relative_logits",
    "shaw_relative_positions",
    "t5_bias",
    "t5_bucket_thresholds",
    "t5_relative_position_bucket",
]
