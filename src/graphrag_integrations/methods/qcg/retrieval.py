"""Query-centric graph retrieval (QCG-RAG §3.4 steps 1-3).

1. ``s(q_u, q) = cos(q_u, q) + epsilon`` for every query node; ``Q_r`` = the ``n`` most
   similar among those with ``s >= gamma`` (ties: lower query id first);
2. ``Q* = Q_r`` plus every query reachable in at most ``h`` kNN hops (out-edges ``q -> q'``;
   in-edges too when the graph is symmetric); each query keeps the smallest hop it was reached
   at (0 = retrieved directly);
3. each chunk linked to a query of ``Q*`` scores the mean ``s`` of its queries in ``Q*``
   (the paper averages the cosine; adding ``epsilon`` does not change the order), optionally
   fused with its own cosine (``chunk_weight``, a deviation; 0 = paper); with
   ``chunk_candidates = c > 0`` (a deviation; 0 = paper) the ``c`` chunks most similar to
   the user query join the candidates, one without a query in ``Q*`` scoring its own
   ``cos + epsilon``; the top ``K`` are returned, ties by chunk id.

Scores are float32 cosines rounded to 1e-6, so the order never depends on the row layout.

Steps 1-2 read a :class:`QueryGraph` (every query node, in process) here; with a database
graph backend the index reads only the neighbourhood a query needs instead
(:mod:`graphrag_integrations.methods.qcg.neighbourhood`) and both feed :func:`rank_matches`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.methods.qcg.graph import QueryGraph
from graphrag_integrations.methods.qcg.params import QCGQueryParams

#: One boolean per query row: those a filtered query may use.
Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class MatchedQuery:
    """A generated query of ``Q*``: its row, the hop it was reached at, its ``s`` and its id.

    ``row`` is the query's row in the :class:`QueryGraph` (``-1`` when the query was read
    from a database graph without that view); ``id`` orders ties (rows are in id order).
    """

    row: int
    hop: int
    s: float
    id: str = ""


@dataclass(frozen=True)
class ChunkHit:
    """A ranked chunk: id, score, and the matched queries behind it (hop, then ``s``)."""

    chunk_id: str
    score: float
    query_score: float
    queries: tuple[MatchedQuery, ...]


def query_scores(graph: QueryGraph, vector: FloatMatrix, epsilon: float) -> FloatMatrix:
    """``s = cos + epsilon`` of every query node (float64, rounded to 1e-6)."""
    raw = graph.matrix @ vector.astype(graph.matrix.dtype, copy=False)
    return np.round(raw.astype(np.float64), 6) + epsilon


def select_queries(s: FloatMatrix, gamma: float, n: int) -> list[int]:
    """Rows of ``Q_r``: at most ``n`` with ``s >= gamma``, most similar first.

    Examples
    --------
    >>> select_queries(np.array([1.2, 1.9, 0.5, 1.9]), gamma=1.0, n=2)
    [1, 3]
    """
    passing = np.flatnonzero(s >= gamma)
    if passing.size > n:
        part = passing[np.argpartition(-s[passing], n - 1)[:n]]
        cut = s[part].min()
        passing = passing[s[passing] >= cut]
    order = np.lexsort((passing, -s[passing]))
    return [int(r) for r in passing[order][:n]]


def expand(
    graph: QueryGraph, seeds: list[int], h: int, symmetric: bool, allowed: Mask | None = None
) -> dict[int, int]:
    """Row -> smallest hop for ``Q*`` (seeds at hop 0, then ``h`` rounds of kNN neighbours;
    ``allowed``: only through the rows it marks).

    Examples
    --------
    >>> g = QueryGraph(["a", "b", "c"], np.eye(3, dtype=np.float32), ["x", "y", "z"],
    ...                [[1], [2], []], [[], [0], [1]])
    >>> expand(g, [0], 1, False), expand(g, [0], 2, False), expand(g, [2], 1, True)
    ({0: 0, 1: 1}, {0: 0, 1: 1, 2: 2}, {2: 0, 1: 1})
    """
    hops = {r: 0 for r in seeds}
    frontier = list(seeds)
    for depth in range(1, h + 1):
        nxt: list[int] = []
        for r in frontier:
            nbrs = graph.out_rows[r] + graph.in_rows[r] if symmetric else graph.out_rows[r]
            for j in nbrs:
                if j not in hops and (allowed is None or allowed[j]):
                    hops[j] = depth
                    nxt.append(j)
        if not nxt:
            break
        frontier = nxt
    return hops


def rank_chunks(
    graph: QueryGraph,
    vector: FloatMatrix,
    params: QCGQueryParams,
    k: int,
    *,
    symmetric: bool = False,
    chunk_cosine: Callable[[list[str]], FloatMatrix] | None = None,
    top_chunks: Callable[[int], list[str]] | None = None,
    allowed: Mask | None = None,
) -> list[ChunkHit]:
    """Steps 1-3 for one user-query vector; the top ``k`` chunks, best first.

    ``chunk_cosine(chunk ids) -> cosines`` is needed when ``params.chunk_weight > 0`` or
    ``params.chunk_candidates > 0``; ``top_chunks(c) -> chunk ids`` (the ``c`` chunks most
    similar to the query) when ``params.chunk_candidates > 0``; ``allowed``: the query rows
    a filtered query may use (see :func:`match_queries`).
    """
    if k <= 0:
        return []
    return rank_matches(
        match_queries(graph, vector, params, symmetric=symmetric, allowed=allowed),
        params,
        k,
        chunk_cosine=chunk_cosine,
        top_chunks=top_chunks,
    )


def match_queries(
    graph: QueryGraph,
    vector: FloatMatrix,
    params: QCGQueryParams,
    *,
    symmetric: bool = False,
    allowed: Mask | None = None,
) -> dict[str, list[MatchedQuery]]:
    """Steps 1-2: chunk id -> the queries of ``Q*`` linked to it (in :func:`expand` order).

    ``allowed`` (one boolean per query row): a filtered query's seeds are allowed queries
    and its kNN walk passes only through them; the others never reach ``Q*``.
    """
    by_chunk: dict[str, list[MatchedQuery]] = {}
    if len(graph):  # no query node at all: only chunk candidates (if on) can be returned
        s = query_scores(graph, vector, params.epsilon)
        if allowed is not None:
            s = np.where(allowed, s, -np.inf)  # below any gamma: never a seed
        seeds = select_queries(s, params.gamma, params.n)
        hops = expand(graph, seeds, params.h, symmetric, allowed)
        for row, hop in hops.items():
            match = MatchedQuery(row, hop, float(s[row]), graph.ids[row])
            by_chunk.setdefault(graph.chunk_of[row], []).append(match)
    return by_chunk


def rank_matches(
    by_chunk: dict[str, list[MatchedQuery]],
    params: QCGQueryParams,
    k: int,
    *,
    chunk_cosine: Callable[[list[str]], FloatMatrix] | None = None,
    top_chunks: Callable[[int], list[str]] | None = None,
) -> list[ChunkHit]:
    """Step 3 over the matches of :func:`match_queries` (or a neighbourhood read); the top
    ``k`` chunks, best first (``chunk_cosine`` / ``top_chunks`` as in :func:`rank_chunks`)."""
    if k <= 0:
        return []
    by_chunk = {cid: list(matches) for cid, matches in by_chunk.items()}
    w, c = params.chunk_weight, params.chunk_candidates
    if c > 0:
        if top_chunks is None:
            raise ValueError("chunk_candidates > 0 needs the chunk vectors")
        for chunk_id in top_chunks(c):
            by_chunk.setdefault(chunk_id, [])
    if not by_chunk:
        return []
    chunk_ids = sorted(by_chunk)
    own: np.ndarray[Any, np.dtype[np.float64]] = np.zeros(len(chunk_ids), dtype=np.float64)
    if w > 0 or c > 0:
        if chunk_cosine is None:
            raise ValueError("chunk_weight / chunk_candidates > 0 need the chunk vectors")
        cosines = np.asarray(chunk_cosine(chunk_ids), dtype=np.float64)
        own = np.round(cosines, 6) + np.float64(params.epsilon)
    mean_s = np.array(
        [
            np.mean([m.s for m in by_chunk[cid]]) if by_chunk[cid] else own[i]
            for i, cid in enumerate(chunk_ids)
        ],
        dtype=np.float64,
    )
    scores = (1.0 - w) * mean_s + w * own if w > 0 else mean_s
    order = np.lexsort((np.arange(len(chunk_ids)), -np.round(scores, 9)))[:k]
    return [
        ChunkHit(
            chunk_ids[i],
            float(scores[i]),
            float(mean_s[i]),
            tuple(sorted(by_chunk[chunk_ids[i]], key=lambda m: (m.hop, -m.s, m.id))),
        )
        for i in order
    ]
