"""Extended Doc2Query-- (QCG-RAG §3.3 step 2): keep each chunk's top-alpha pairs.

Each generated pair is scored by ``s = cos(q (+) a, chunk)`` (L2-normalised embeddings, so a
dot product) and the ``ceil(alpha * pairs)`` best of the chunk are kept (at least one). This is
a per-chunk share, not a global threshold (``NOTES.md``). Ties keep the earlier pair.
"""

from __future__ import annotations

import math

import numpy as np

from graphrag_integrations.core.encoders.embeddings import FloatMatrix


def keep_count(n: int, alpha: float) -> int:
    """How many of ``n`` pairs ``alpha`` keeps: ``ceil(alpha * n)``, at least 1 when ``n > 0``.

    Examples
    --------
    >>> keep_count(20, 0.8), keep_count(3, 0.8), keep_count(1, 0.2), keep_count(0, 0.8)
    (16, 3, 1, 0)
    """
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    if n <= 0:
        return 0
    return max(1, min(n, math.ceil(alpha * n - 1e-9)))


def top_alpha(pair_vectors: FloatMatrix, chunk_vector: FloatMatrix, alpha: float) -> list[int]:
    """Indices of the pairs kept, in their original order.

    Parameters
    ----------
    pair_vectors : (n, d) array
        Normalised embeddings of ``q (+) a`` for the chunk's pairs.
    chunk_vector : (d,) array
        Normalised embedding of the chunk.
    alpha : float
        Share kept, in (0, 1].

    Examples
    --------
    >>> pairs = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    >>> top_alpha(pairs, np.array([1.0, 0.0], dtype=np.float32), 0.6)
    [0, 1]
    """
    scores = similarities(pair_vectors, chunk_vector)
    n = int(scores.shape[0])
    keep = keep_count(n, alpha)
    order = np.lexsort((np.arange(n), -scores))[:keep]
    return sorted(int(i) for i in order)


def similarities(pair_vectors: FloatMatrix, chunk_vector: FloatMatrix) -> FloatMatrix:
    """``cos(q (+) a, chunk)`` of every pair (float64, rounded to 1e-6 so ties are stable)."""
    if pair_vectors.shape[0] == 0:
        return np.zeros((0,), dtype=np.float64)
    raw = pair_vectors.astype(np.float64) @ chunk_vector.astype(np.float64)
    return np.round(raw, 6)
