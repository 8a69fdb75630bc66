"""posenc.analysis: the tools the chapters use to study encodings, beside the encodings themselves.

The top level of ``posenc`` holds the encodings and attention; this layer holds what the
book measures them with: dot products and statistics of a table (``statistics``), the
decay of the sinusoidal dot product and the cosine integral (``decay``, ``special``), the
naive encodings and the requirements of chapter 2 (``naive``), the functional equation of
chapter 6 (``functional``), the least-squares recovery of the shift matrix
(``rotation``), the position readout of chapter 8 (``readout``) and the attention probe
with its copy task (``probe``, ``tasks``) and the random attention stack without
positional encoding with its linear probe of chapter 15 (``nope``), and the operation counts
of a layer of chapter 13 (``cost``). Every name is importable from here, e.g.
``posenc.analysis.dot_product_sum``.
"""

from .cost import layer_flops
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
from .nope import fit_linear_probe, random_attention_stack
from .probe import METHODS, AttentionProbe, fit_probe, probe_accuracy
from .readout import PositionReadout, fit_position_readout
from .rotation import fit_linear_map, fit_shift_matrix, shift_matrix_angles
from .special import cosine_integral
from .statistics import (
    EncodingStatistics,
    dot_product_distance,
    dot_product_profile,
    encoding_statistics,
    mean_dot_by_offset,
    toeplitz_deviation,
)
from .tasks import copy_targets, copy_task

__all__ = [
    "METHODS",
    "AttentionProbe",
    "EncodingStatistics",
    "PositionReadout",
    "aliased_fraction",
    "aliasing_onset",
    "binary_encoding",
    "copy_targets",
    "copy_task",
    "cosine_integral",
    "dot_product_distance",
    "dot_product_profile",
    "dot_product_sum",
    "encoding_statistics",
    "endpoint_correction",
    "far_asymptote",
    "far_envelope",
    "fit_linear_map",
    "fit_linear_probe",
    "fit_position_readout",
    "fit_probe",
    "fit_shift_matrix",
    "functional_equation_residual",
    "integer_encoding",
    "integral_approximation",
    "is_bounded",
    "is_defined_beyond",
    "is_length_consistent",
    "is_shift_consistent",
    "is_unique",
    "layer_flops",
    "log_asymptote",
    "mean_dot_by_offset",
    "mean_square_frequency",
    "min_pairwise_distance",
    "near_asymptote",
    "neighbour_distances",
    "noise_floor",
    "normalized_encoding",
    "oscillatory_integral",
    "probe_accuracy",
    "random_attention_stack",
    "shift_matrix_angles",
    "sine_encoding",
    "stays_in_training_range",
    "toeplitz_deviation",
    "wrap_angle",
]
