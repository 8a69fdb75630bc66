"""posenc: positional encodings for transformers, derived and executed.

Pure numpy functions (and two small classes for the stateful encodings). Importing the
package loads numpy only; mpmath is imported on first use of the frequency table.
"""

from .analysis import EncodingStatistics, dot_product_distance, encoding_statistics, mean_dot_by_offset
from .attention import attention, causal_mask, softmax
from .learned import LearnedPositionalEncoding
from .naive import binary_encoding, integer_encoding, normalized_encoding
from .sinusoidal import (
    SinusoidalPositionalEncoding,
    frequencies,
    interleaved_to_split,
    relative_position_matrix,
    sinusoidal_encoding,
)

__version__ = "0.1.0"

__all__ = [
    "EncodingStatistics",
    "LearnedPositionalEncoding",
    "SinusoidalPositionalEncoding",
    "attention",
    "binary_encoding",
    "causal_mask",
    "dot_product_distance",
    "encoding_statistics",
    "frequencies",
    "integer_encoding",
    "interleaved_to_split",
    "mean_dot_by_offset",
    "normalized_encoding",
    "relative_position_matrix",
    "sinusoidal_encoding",
    "softmax",
]
