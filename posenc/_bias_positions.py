"""Internal: shared by ``posenc.alibi`` and ``posenc.bias_families``. Where the queries sit among the keys.

The distance biases (ALiBi, KERPLE, FIRE) place ``q_len`` queries as the last ``q_len`` of
``k_len`` positions, as when decoding with a key/value cache: query row ``i`` has the
absolute position ``i_abs = i + k_len - q_len``.
"""

from __future__ import annotations

import numpy as np


def query_key_positions(q: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(i_abs, j)``: int64 columns ``(q, 1)`` and rows ``(1, k)``, queries the last ``q`` of ``k``."""
    i_abs = np.arange(q, dtype=np.int64)[:, None] + (k - q)
    j = np.arange(k, dtype=np.int64)[None, :]
    return i_abs, j
