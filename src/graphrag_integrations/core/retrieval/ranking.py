"""Ranking helpers shared by the vector indexes, the baselines and the methods (numpy only)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


def top_k(scores: npt.NDArray[np.floating[Any]], k: int) -> list[int]:
    """Indices of the ``k`` largest ``scores``, best first (ties: lower index first).

    Parameters
    ----------
    scores : numpy.ndarray
        One score per candidate (1-D, float).
    k : int
        How many indices to return; ``k <= 0`` gives ``[]``, ``k > len(scores)`` all of them.

    Returns
    -------
    list of int
        Positions in ``scores``, highest score first; equal scores keep their index order, so
        the result does not depend on ``numpy``'s partition algorithm.

    Examples
    --------
    >>> import numpy as np
    >>> top_k(np.array([0.1, 0.9, 0.5, 0.9], dtype=np.float32), 3)
    [1, 3, 2]
    """
    n = int(scores.shape[0])
    if k <= 0 or n == 0:
        return []
    k = min(k, n)
    cand = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
    # include every index tied with the k-th score so the tie-break is deterministic
    threshold = scores[cand].min()
    cand = np.flatnonzero(scores >= threshold)
    order = np.lexsort((cand, -scores[cand].astype(np.float64)))
    return [int(i) for i in cand[order][:k]]
