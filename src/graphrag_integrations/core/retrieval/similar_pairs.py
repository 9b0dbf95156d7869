"""Pairs of rows whose cosine similarity reaches a threshold, found block by block (numpy).

What a graph builder needs for "synonym" or "semantic link" edges between embedded nodes: every
pair ``(i, j)`` of L2-normalised rows with ``a[i] @ b[j] >= threshold``, without holding the
full ``len(a) x len(b)`` similarity matrix (the rows of ``a`` are taken ``block`` at a time).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from graphrag_integrations.errors import InvalidArgumentError

__all__ = ["similar_pairs"]

IntVector = npt.NDArray[np.int64]
Vector = npt.NDArray[np.float32]


def similar_pairs(
    a: npt.NDArray[np.floating[Any]],
    b: npt.NDArray[np.floating[Any]],
    threshold: float,
    *,
    block: int = 1024,
) -> tuple[IntVector, IntVector, Vector]:
    """Every pair of rows ``(i, j)`` with ``a[i] @ b[j] >= threshold``.

    Parameters
    ----------
    a, b : numpy.ndarray, shapes (n, d) and (m, d)
        Row vectors (L2-normalised for cosine similarity).
    threshold : float
        Smallest similarity kept.
    block : int, default 1024
        Rows of ``a`` compared at once (memory ``block * m`` floats).

    Returns
    -------
    tuple of numpy.ndarray
        ``(rows, cols, similarities)``: row positions in ``a``, in ``b``, and their dot
        products, ordered by ``rows`` then ``cols``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    >>> rows, cols, sims = similar_pairs(a, a, 0.5)
    >>> list(zip(rows.tolist(), cols.tolist(), [round(float(s), 2) for s in sims]))
    [(0, 0, 1.0), (0, 1, 0.6), (1, 0, 0.6), (1, 1, 1.0)]
    """
    if block < 1:
        raise InvalidArgumentError(f"block must be >= 1, got {block}")
    left = np.asarray(a, dtype=np.float32)
    right = np.asarray(b, dtype=np.float32)
    if left.ndim != 2 or right.ndim != 2 or left.shape[1] != right.shape[1]:
        raise InvalidArgumentError(
            f"similar_pairs needs two matrices of one width, got {left.shape} and {right.shape}"
        )
    rows: list[IntVector] = []
    cols: list[IntVector] = []
    sims: list[Vector] = []
    for start in range(0, left.shape[0], block):
        scores = left[start : start + block] @ right.T
        r, c = np.nonzero(scores >= threshold)
        rows.append(r.astype(np.int64) + start)
        cols.append(c.astype(np.int64))
        sims.append(scores[r, c].astype(np.float32))
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), np.zeros(0, dtype=np.float32)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(sims)
