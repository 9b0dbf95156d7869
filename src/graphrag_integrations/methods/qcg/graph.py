"""The query layer of the QCG (§3.3 step 3): ``E_intra = {(q, q') | q' in KNN(q, k)}``.

Similarities are cosines of the node vectors computed in float64 and rounded to 1e-6; ties are
broken by query id, so a query's neighbour list depends only on the set of queries, never on
insertion order. That is what lets :func:`repair_knn` keep the graph equal to a rebuild after
an insert or a delete while recomputing only the lists that can change:

* a new query gets its list from scratch;
* an old query whose list lost a neighbour (delete) is recomputed;
* an old query for which some new query is at least as similar as its current k-th
  neighbour, or whose list is short of ``k``, is recomputed (insert).

:class:`QueryGraph` is the derived, read-only view retrieval uses (rows in id order, the
vector matrix, the chunk of each query, the out- and in-neighbour rows); it is rebuilt from the
store after each mutation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.encoders.embeddings import FloatMatrix

#: Rows per block when computing similarities (bounds memory at about block * N * 8 bytes).
BLOCK = 512
_DECIMALS = 6


def similarity_block(a: FloatMatrix, b: FloatMatrix) -> FloatMatrix:
    """Rounded float64 cosines of normalised rows ``a`` against ``b``.

    Examples
    --------
    >>> similarity_block(np.eye(2, dtype=np.float32), np.eye(2, dtype=np.float32)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return np.round(a.astype(np.float64) @ b.astype(np.float64).T, _DECIMALS)


def knn_lists(
    ids: Sequence[str], matrix: FloatMatrix, k: int, rows: Sequence[int] | None = None
) -> dict[str, list[str]]:
    """``KNN(q, k)`` of the queries at ``rows`` (default all), best first.

    Parameters
    ----------
    ids : sequence of str
        Query ids, sorted (row ``i`` of ``matrix`` is ``ids[i]``).
    matrix : (N, d) array
        Normalised node vectors.
    k : int
        Neighbours per query (fewer when the graph is smaller).

    Examples
    --------
    >>> m = np.array([[1, 0], [0.9, 0.1], [0, 1]], dtype=np.float32)
    >>> m /= np.linalg.norm(m, axis=1, keepdims=True)
    >>> knn_lists(["a", "b", "c"], m, 1)
    {'a': ['b'], 'b': ['a'], 'c': ['b']}
    """
    n = len(ids)
    todo = list(range(n)) if rows is None else list(rows)
    out: dict[str, list[str]] = {}
    if k <= 0 or n <= 1:
        return {ids[r]: [] for r in todo}
    kk = min(k, n - 1)
    order_key = np.arange(n)
    for block in batches(todo, BLOCK):
        sims = similarity_block(matrix[block], matrix)
        sims[np.arange(len(block)), block] = -np.inf  # no self-loop
        for i, row in enumerate(block):
            s = sims[i]
            cand = np.argpartition(-s, kk - 1)[:kk] if kk < n - 1 else np.flatnonzero(s > -np.inf)
            threshold = s[cand].min()
            cand = np.flatnonzero(s >= threshold)
            best = cand[np.lexsort((order_key[cand], -s[cand]))][:kk]
            out[ids[row]] = [ids[int(j)] for j in best]
    return out


def repair_knn(
    ids: Sequence[str],
    matrix: FloatMatrix,
    k: int,
    current: Mapping[str, Sequence[str]],
    added: set[str],
    removed: set[str],
) -> dict[str, list[str]]:
    """The neighbour lists that change after adding ``added`` / removing ``removed``.

    Parameters
    ----------
    ids, matrix
        The queries after the change (sorted ids, their vectors).
    current : mapping
        Neighbour lists before the change (of the queries that existed).
    added, removed : set of str
        Query ids added / removed by the change.

    Returns
    -------
    dict
        Query id -> its new list, for every query whose list must be (re)written; equal to
        :func:`knn_lists` on the whole graph for those, and the other lists are unchanged.
    """
    row = {q: i for i, q in enumerate(ids)}
    affected = {q for q in added if q in row}
    kk = min(k, len(ids) - 1)
    for q, nbrs in current.items():
        if q in row and (removed.intersection(nbrs) or len(nbrs) < kk):
            affected.add(q)
    new_rows = [row[q] for q in added if q in row]
    old = [q for q in ids if q not in affected and q not in added]
    if new_rows and old and kk > 0:
        for block in batches(old, BLOCK):
            rows = [row[q] for q in block]
            best_new = similarity_block(matrix[rows], matrix[new_rows]).max(axis=1)
            last = [row[current[q][-1]] if current.get(q) else None for q in block]
            for q, r, lr, b in zip(block, rows, last, best_new, strict=True):
                if lr is None:
                    affected.add(q)
                    continue
                kth = similarity_block(matrix[[r]], matrix[[lr]])[0, 0]
                if b >= kth - 1e-6:
                    affected.add(q)
    return knn_lists(ids, matrix, k, sorted(row[q] for q in affected))


@dataclass
class QueryGraph:
    """Derived arrays of the query layer (rebuilt after each mutation; do not mutate).

    Attributes
    ----------
    ids : list of str
        Query ids, sorted; row ``i`` is ``ids[i]``.
    matrix : (N, d) float32
        Node vectors.
    chunk_of : list of str
        Chunk (passage) id of each row.
    out_rows, in_rows : list of arrays
        kNN neighbours of each row (``q -> q'``) and the rows pointing at it.
    """

    ids: list[str] = field(default_factory=list)
    matrix: FloatMatrix = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    chunk_of: list[str] = field(default_factory=list)
    out_rows: list[list[int]] = field(default_factory=list)
    in_rows: list[list[int]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def build(
        cls,
        ids: Sequence[str],
        matrix: FloatMatrix,
        chunk_of: Sequence[str],
        neighbors: Mapping[str, Sequence[str]],
    ) -> QueryGraph:
        """Arrays from sorted ids, their vectors, chunks and kNN lists."""
        row = {q: i for i, q in enumerate(ids)}
        out_rows = [[row[n] for n in neighbors.get(q, ()) if n in row] for q in ids]
        in_rows: list[list[int]] = [[] for _ in ids]
        for i, nbrs in enumerate(out_rows):
            for j in nbrs:
                in_rows[j].append(i)
        return cls(list(ids), matrix, list(chunk_of), out_rows, in_rows)
