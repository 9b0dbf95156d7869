"""QCG retrieval steps 1-2 reading only what one query needs (database graph backends).

:func:`~graphrag_integrations.methods.qcg.retrieval.match_queries` reads the derived
:class:`~graphrag_integrations.methods.qcg.graph.QueryGraph`: every query node's vector,
chunk and kNN list, which with a database graph (FalkorDB) means reading the whole graph
into the query process. :func:`read_matches` gives the same matches from:

1. ``Q_r``: a nearest-neighbour search of the ``"queries"`` vector layer, widened until no
   query outside the hits can reach the ``n``-th score (the layer's cosines may differ
   from the exact ones in the last digits, hence a margin), then the exact ``s`` of the
   hits (the stored vectors, the same float32 product as the view) and
   :func:`~graphrag_integrations.methods.qcg.retrieval.select_queries` on them;
2. ``Q*``: one batched ``neighbors_many`` read of the ``similar`` edges per hop (``out``,
   plus ``in`` when the kNN graph is symmetric), the exact ``s`` of the new queries;
3. the chunk of each query of ``Q*``: one batched ``nodes_data`` read.

:func:`nearest_chunks` likewise gives the ``chunk_candidates`` without listing every chunk.

Nothing is cached across queries: the graph may change between them and a query's reads are
a few hundred nodes at most (``n * (k + 1) ** h``).
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import cast

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.index.filtered_reads import nearest_within
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.retrieval.filter_scope import FilterScope
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.methods.qcg.params import QCGQueryParams
from graphrag_integrations.methods.qcg.retrieval import MatchedQuery, select_queries
from graphrag_integrations.methods.qcg.store import CHUNK, QUERY, SIMILAR, QCGStore, query_chunk

#: What a filtered search may return: the allowed keys and a ``where`` on the layer's records
#: that they pass (a hint for a layer that is not in memory).
Allowed = tuple[Container[str], MetadataFilter | None]


class _QueriesOf:
    """The query ids of a scope's chunks, as a container (a query id names its chunk)."""

    def __init__(self, scope: FilterScope) -> None:
        self.scope = scope

    def __contains__(self, qid: object) -> bool:
        return isinstance(qid, str) and self.scope.allows(query_chunk(qid))


def _queries_of(scope: FilterScope) -> Allowed:
    return _QueriesOf(scope), scope.passage_hint("chunk_id")


__all__ = ["MARGIN", "nearest_chunks", "nearest_exact", "read_matches"]

Scores = npt.NDArray[np.float64]

#: Largest difference allowed between a vector layer's cosine and the exact one.
MARGIN = 1e-4


def exact_scores(store: QCGStore, ids: list[str], vector: FloatMatrix, epsilon: float) -> Scores:
    """``s = cos + epsilon`` of the queries ``ids`` (as
    :func:`~graphrag_integrations.methods.qcg.retrieval.query_scores` computes it)."""
    if not ids:
        return np.zeros((0,), dtype=np.float64)
    matrix = store.query_vectors(ids)
    raw = matrix @ vector.astype(matrix.dtype, copy=False)
    return np.asarray(np.round(raw.astype(np.float64), 6) + epsilon, dtype=np.float64)


def nearest_exact(
    store: QCGStore,
    kind: str,
    vector: FloatMatrix,
    count: int,
    score: Callable[[list[str]], Scores],
    floor: float = -np.inf,
    scope: Allowed | None = None,
) -> tuple[list[str], Scores]:
    """Keys (sorted) and exact scores of nearest-neighbour hits of layer ``kind``: every key
    that can be among the ``count`` best scoring at least ``floor``, ties included.

    The search is widened until the weakest hit's cosine plus :data:`MARGIN` is below
    ``floor`` or below the ``count``-th best exact cosine (``score(keys)``), so no key left
    out could pass or tie. ``scope``: ``(allowed keys, where on the records)`` of a filtered
    query (only allowed keys are searched).
    """
    layer = store.store.vectors.get(store.store.layer(kind))
    total = 0 if layer is None else len(layer)
    want = max(count, 1)
    while True:
        if scope is None:
            hits = store.store.nearest(kind, vector, want)
        else:
            hits = nearest_within(store.store, kind, vector, want, scope[0], scope[1])
        ids = sorted(key for key, _ in hits)
        exact: Scores = score(ids) if ids else np.zeros((0,), dtype=np.float64)
        if len(hits) >= total or not hits or (scope is not None and len(hits) < want):
            return ids, exact
        unseen = min(cos for _, cos in hits) + MARGIN  # best cosine a key left out can have
        passing = np.sort(exact[exact >= floor])[::-1]
        if unseen < floor or (passing.size >= count and unseen < passing[count - 1]):
            return ids, exact
        want = min(2 * want, total)


def seed_queries(
    store: QCGStore, vector: FloatMatrix, params: QCGQueryParams, scope: FilterScope | None = None
) -> dict[str, float]:
    """``Q_r`` (query id -> ``s``, best first): :func:`select_queries` over every query node
    (of ``scope``'s chunks), computed on the hits of :func:`nearest_exact`."""

    def cosine(ids: list[str]) -> Scores:
        return exact_scores(store, ids, vector, 0.0)

    floor = params.gamma - params.epsilon
    allowed = None if scope is None else _queries_of(scope)
    ids, cos = nearest_exact(store, QUERY, vector, params.n, cosine, floor, allowed)
    s = cos + params.epsilon
    return {
        ids[r]: float(s[r]) for r in select_queries(cast(FloatMatrix, s), params.gamma, params.n)
    }


def nearest_chunks(
    store: QCGStore, vector: FloatMatrix, c: int, scope: FilterScope | None = None
) -> list[str]:
    """The ``c`` chunks (of ``scope``) most similar to ``vector`` (rounded cosine, ties: lower
    chunk id), as the index ranks every chunk, from nearest-neighbour hits of the
    ``"chunks"`` layer."""

    def score(ids: list[str]) -> Scores:
        raw = np.asarray(store.chunk_vectors(ids) @ vector, np.float64)
        return np.asarray(np.round(raw, 6), dtype=np.float64)

    allowed: Allowed | None = None
    if scope is not None:
        allowed = (scope.passages, scope.document_hint())
    ids, cos = nearest_exact(store, CHUNK, vector, c, score, scope=allowed)
    order = np.lexsort((np.arange(len(ids)), -cos))[:c]
    return [ids[i] for i in order]


def expand_ids(
    store: QCGStore, seeds: list[str], h: int, symmetric: bool, scope: FilterScope | None = None
) -> dict[str, int]:
    """Query id -> smallest hop, as :func:`~graphrag_integrations.methods.qcg.retrieval.expand`
    but one batched read of the ``similar`` edges per hop (``scope``: only through the
    queries of its chunks)."""
    graph = store.graph_store
    hops = dict.fromkeys(seeds, 0)
    frontier = [node_id(QUERY, q) for q in seeds]
    for depth in range(1, h + 1):
        if not frontier:
            break
        out = graph.neighbors_many(frontier, SIMILAR, "out")
        into = graph.neighbors_many(frontier, SIMILAR, "in") if symmetric else {}
        nxt: list[str] = []
        for node in frontier:
            for nbr in out.get(node, []) + into.get(node, []):
                key = node_key(nbr)
                if key not in hops and (scope is None or scope.allows(query_chunk(key))):
                    hops[key] = depth
                    nxt.append(nbr)
        frontier = nxt
    return hops


def read_matches(
    store: QCGStore,
    vector: FloatMatrix,
    params: QCGQueryParams,
    *,
    symmetric: bool = False,
    scope: FilterScope | None = None,
) -> dict[str, list[MatchedQuery]]:
    """Steps 1-2 as :func:`~graphrag_integrations.methods.qcg.retrieval.match_queries`,
    reading the neighbourhood of the query only (rows are ``-1``: there is no view;
    ``scope``: a filtered query's, whose seeds and walk use the queries of its chunks only)."""
    seeds = seed_queries(store, vector, params, scope)
    hops = expand_ids(store, list(seeds), params.h, symmetric, scope)
    new = [q for q in hops if q not in seeds]
    s = dict(seeds)
    s.update(zip(new, exact_scores(store, new, vector, params.epsilon).tolist(), strict=True))
    data = store.graph_store.nodes_data([node_id(QUERY, q) for q in hops])
    by_chunk: dict[str, list[MatchedQuery]] = {}
    for qid, hop in hops.items():
        chunk = str(data[node_id(QUERY, qid)]["chunk"])
        by_chunk.setdefault(chunk, []).append(MatchedQuery(-1, hop, float(s[qid]), qid))
    return by_chunk
