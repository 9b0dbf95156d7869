"""Filtered reads of an :class:`~graphrag_integrations.core.index.store.IndexStore`: the scope
of a filter over the passage nodes, and nearest neighbours among allowed keys only.

* :func:`passage_scope` - the :class:`~graphrag_integrations.core.retrieval.filter_scope.
  FilterScope` of a filter over the passage nodes of one kind (their ``doc_id`` and ``metadata``
  attributes, read with :func:`~graphrag_integrations.core.graph.filter_reads.node_fields`:
  one query on FalkorDB, no texts), cached per store version for the last
  :data:`~graphrag_integrations.core.retrieval.filter_scope.SCOPES_KEPT` filters;
* :func:`nearest_within` - :meth:`IndexStore.nearest` restricted to a set of keys: exact over
  the allowed rows of an in-memory layer (their scores masked before ranking), else the
  layer's own filtered search (``hint``: the same restriction as a ``where`` on the records'
  metadata, which Chroma, FalkorDB and the framework stores apply natively) with a growing
  budget, keeping only allowed keys.

Examples
--------
>>> import numpy as np
>>> from graphrag_integrations.core.index.store import IndexStore
>>> from graphrag_integrations.core.retrieval.filters import parse_filter
>>> store = IndexStore("toy", {"chunk": "chunks"})
>>> for key, doc, lang in (("p1", "d1", "en"), ("p2", "d2", "fr")):
...     _ = store.add_node("chunk", key, (doc,), doc_id=doc, metadata={"lang": lang})
>>> store.add_vectors("chunk", {"p1": [1.0, 0.0], "p2": [0.8, 0.6]})
>>> scope = passage_scope(store, "chunk", parse_filter({"lang": "fr"}))
>>> sorted(scope.passages), nearest_within(store, "chunk", np.array([1.0, 0.0]), 1, scope.passages)
(['p2'], [('p2', 0.800000011920929)])
"""

from __future__ import annotations

import logging
from collections.abc import Container, Sized

import numpy as np

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.graph.filter_reads import node_fields
from graphrag_integrations.core.index.node_ids import node_key
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.retrieval.filter_scope import FilterScope, PassageRecord, ScopeCache
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.core.vector_store.memory import InMemoryVectorIndex
from graphrag_integrations.core.vector_store.validation import check_query_vector

__all__ = ["nearest_within", "passage_records", "passage_scope"]

logger = logging.getLogger(__name__)


def passage_records(store: IndexStore, kind: str) -> list[PassageRecord]:
    """``(key, doc_id, metadata)`` of every node of ``kind`` (passage nodes carrying the
    ``doc_id`` and ``metadata`` attributes), in insertion order."""
    return [
        (node_key(node), str(data["doc_id"]), dict(data["metadata"] or {}))
        for node, data in node_fields(store.graph, kind, ("doc_id", "metadata"))
    ]


def passage_scope(store: IndexStore, kind: str, where: MetadataFilter) -> FilterScope:
    """The scope of ``where`` over the passage nodes of ``kind`` (cached per store version)."""
    cache = store.derived(f"filter-scopes:{kind}", _new_cache)
    return cache.scope(where, lambda: passage_records(store, kind))


def _new_cache(store: IndexStore, previous: ScopeCache | None) -> ScopeCache:
    return ScopeCache()


def _with_ties(hits: list[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    """The first ``k`` of ``hits`` (best first) and every later hit tied with the ``k``-th."""
    if len(hits) <= k:
        return hits
    return [h for h in hits if h[1] >= hits[k - 1][1]]


def nearest_within(
    store: IndexStore,
    kind: str,
    vector: FloatMatrix,
    k: int,
    allowed: Container[str],
    hint: MetadataFilter | None = None,
) -> list[tuple[str, float]]:
    """The ``k`` nearest ``(key, cosine)`` of layer ``kind`` among ``allowed`` keys, best
    first, plus every allowed hit tied with the ``k``-th (as :meth:`IndexStore.nearest`);
    fewer when fewer keys are allowed.

    ``hint``: a ``where`` on the records' metadata that every allowed key passes (it narrows
    the search of a layer that is not in memory; ``allowed`` still decides).
    """
    index = store.vectors.get(store.layer(kind))
    if index is None or k <= 0 or not len(index):
        return []
    if isinstance(allowed, Sized) and not len(allowed):
        return []
    if not np.any(vector):
        logger.warning("zero %s query vector: no nearest neighbours", kind)
        return []
    if isinstance(index, InMemoryVectorIndex):
        ids = index.ids
        rows = np.flatnonzero(np.fromiter((i in allowed for i in ids), np.bool_, len(ids)))
        scores = index.matrix_view()[rows] @ check_query_vector(vector, index.dimension)
        best = top_k(scores, k)
        if not best:
            return []
        tied = np.flatnonzero(scores >= scores[best[-1]])  # the k best and their ties
        order = tied[np.lexsort((tied, -scores[tied].astype(np.float64)))]
        return [(ids[int(rows[i])], float(scores[i])) for i in order]
    size = len(index)
    want = min(k + 1, size)
    while True:
        found = index.query(vector, want, hint)
        kept = [(key, score) for key, score in found if key in allowed]
        exhausted = len(found) < want or want >= size
        if exhausted or (len(kept) > k and kept[-1][1] < kept[k - 1][1]):
            return _with_ties(kept, k)
        want = min(4 * want, size)
