"""posenc: positional encodings for transformers, derived and executed.

Pure numpy functions (and two small classes for the stateful encodings). Importing the
package loads numpy only; mpmath is imported on first use of the frequency table.
"""

from .analysis import (
    EncodingStatistics,
    dot_product_distance,
    dot_product_profile,
    encoding_statistics,
    mean_dot_by_offset,
    toeplitz_deviation,
)
from .attention import attention, causal_mask, permutation_matrix, self_attention, softmax, taylor_terms
from .learned import LearnedPositionalEncoding, PositionReadout, fit_position_readout
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
from .rotation import fit_linear_map, fit_shift_matrix, shift_matrix_angles
from .sinusoidal import (
    SinusoidalPositionalEncoding,
    frequencies,
    interleaved_to_split,
    relative_position_matrix,
    sinusoidal_encoding,
    wavelengths,
)

__version__ = "0.1.0"

__all__ = [
    "EncodingStatistics",
    "LearnedPositionalEncoding",
    "PositionReadout",
    "SinusoidalPositionalEncoding",
    "attention",
    "binary_encoding",
    "causal_mask",
    "dot_product_distance",
    "dot_product_profile",
    "encoding_statistics",
    "fit_linear_map",
    "fit_shift_matrix",
    "fit_position_readout",
    "frequencies",
    "integer_encoding",
    "is_bounded",
    "is_defined_beyond",
    "is_length_consistent",
    "is_shift_consistent",
    "is_unique",
    "interleaved_to_split",
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
    "wavelengths",
]
