"""Personalized PageRank on a sparse adjacency matrix (scipy), shared by the baselines and the
methods that spread relevance over a graph.

The walk follows the edges of a non-negative weighted adjacency matrix ``A`` (row ``i`` holds
the edges leaving node ``i``). With the row-stochastic transition matrix ``P`` (each row of
``A`` divided by its sum) and the restart distribution ``s`` (the seed weights, normalised to
sum 1), the personalized PageRank vector is the fixed point of

.. math:: r = (1 - d)\\, s + d\\, P^\\top r

where ``d`` is the damping factor (the probability of following an edge rather than jumping
back to a seed). A node with no outgoing edge (a dangling node) sends its mass back to the
seeds, so ``r`` always sums to 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ...errors import InvalidArgumentError

FloatVector = npt.NDArray[np.float64]


def transition_matrix(adjacency: sp.spmatrix | sp.sparray) -> sp.csr_matrix:
    """The transposed row-stochastic transition matrix ``P^T`` of a weighted adjacency matrix.

    Parameters
    ----------
    adjacency : scipy.sparse matrix, shape (n, n)
        Non-negative edge weights; row ``i`` holds the edges leaving node ``i``.

    Returns
    -------
    scipy.sparse.csr_matrix
        ``P^T`` with ``P[i, j] = A[i, j] / sum_j A[i, j]`` (rows of dangling nodes stay zero):
        what :func:`personalized_pagerank` multiplies by at each step. Compute it once per
        graph and reuse it for every query.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> t = transition_matrix(sp.csr_matrix([[0.0, 2.0], [1.0, 1.0]]))
    >>> t.toarray().tolist()
    [[0.0, 0.5], [1.0, 0.5]]
    """
    matrix = sp.csr_matrix(adjacency, dtype=np.float64)
    if matrix.shape[0] != matrix.shape[1]:
        raise InvalidArgumentError(f"adjacency must be square, got shape {matrix.shape}")
    if matrix.nnz and float(matrix.data.min()) < 0:
        raise InvalidArgumentError("adjacency weights must be non-negative")
    out_weight = np.asarray(matrix.sum(axis=1)).ravel()
    inverse = np.divide(1.0, out_weight, out=np.zeros_like(out_weight), where=out_weight > 0)
    return sp.csr_matrix(sp.diags(inverse) @ matrix).T.tocsr()


def personalized_pagerank(
    transition_t: sp.spmatrix | sp.sparray,
    seeds: npt.NDArray[np.floating[Any]],
    *,
    damping: float = 0.5,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> FloatVector:
    """Personalized PageRank scores by power iteration.

    Parameters
    ----------
    transition_t : scipy.sparse matrix, shape (n, n)
        The transposed transition matrix, from :func:`transition_matrix`.
    seeds : numpy.ndarray, shape (n,)
        Non-negative restart weights (any scale; normalised here). All zero gives all zero.
    damping : float, default 0.5
        Probability of following an edge at each step, in ``[0, 1)`` (HippoRAG 2 uses 0.5).
    tol : float, default 1e-8
        Stop once the L1 change of one step falls below it.
    max_iter : int, default 100
        At most this many steps.

    Returns
    -------
    numpy.ndarray, shape (n,)
        The stationary visiting probabilities, summing to 1 (0 everywhere without seeds).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> t = transition_matrix(sp.csr_matrix([[0, 1, 0], [1, 0, 1], [0, 1, 0]]))
    >>> r = personalized_pagerank(t, np.array([1.0, 0.0, 0.0]), damping=0.5)
    >>> [round(float(x), 3) for x in r]
    [0.583, 0.333, 0.083]
    """
    if not 0.0 <= damping < 1.0:
        raise InvalidArgumentError(f"damping must be in [0, 1), got {damping}")
    restart = np.asarray(seeds, dtype=np.float64).ravel()
    if restart.shape[0] != transition_t.shape[0]:
        raise InvalidArgumentError(
            f"seeds has {restart.shape[0]} entries for a graph of {transition_t.shape[0]} nodes"
        )
    if restart.size and float(restart.min()) < 0:
        raise InvalidArgumentError("seed weights must be non-negative")
    total = float(restart.sum())
    if total <= 0:
        return np.zeros_like(restart)
    restart /= total
    scores = restart.copy()
    for _ in range(max_iter):
        spread = damping * (transition_t @ scores)
        # mass that reached a dangling node (or was not spread) restarts at the seeds
        updated = spread + (1.0 - float(spread.sum())) * restart
        change = float(np.abs(updated - scores).sum())
        scores = updated
        if change < tol:
            break
    return np.asarray(scores, dtype=np.float64)
