"""KG-Translator under a metadata filter: the ParseKG of the matching passages only.

A hyperedge is a sentence of one passage, so it is allowed with that passage (the
:class:`~graphrag_integrations.core.retrieval.filter_scope.FilterScope` over the passage
nodes). A filtered query translates, traces and ranks on a :class:`SearchGraph` made of the
allowed passages alone: a :class:`~graphrag_integrations.methods.kgt.store.ParseKGView` of
their hyperedges (an entity's display name and label are the majority over its allowed
mentions), constraint indexes over it (the entity tries hold only entities with an allowed
hyperedge, an entity's relation index only its allowed hyperrelations), so the translator
can only decode clues the allowed passages contain, they trace only to allowed passages, and
the dense side of the fusion, the top-up and the evidence given to a decomposition LLM come
from allowed passages only. That is the graph an index of the matching passages would have,
so a filtered query answers as one (``corpus_wide_scores`` is false).

What a graph needs is read once per filter and graph generation (the last
:data:`~graphrag_integrations.core.retrieval.filter_scope.SCOPES_KEPT` filters): the passages'
metadata (no texts), then the allowed passages and their hyperedges in batched reads
(``neighbors_many`` + ``nodes_data``; with FalkorDB a few queries, the other passages never
read). The translator's response cache keys carry the filtered graph's fingerprint.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.filtered_reads import passage_records
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.retrieval.filter_scope import FilterCache, FilterScope
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.kgt.constraints import ConstraintIndexes
from graphrag_integrations.methods.kgt.store import (
    CONTAINS,
    PASSAGE,
    REL,
    ParseKGStore,
    ParseKGView,
)

__all__ = ["BATCH", "FilteredGraphs", "SearchGraph", "allowed_view"]

#: Nodes per batched read.
BATCH = 1000


@dataclass(frozen=True)
class SearchGraph:
    """What one query translates, traces and ranks on: the whole index (``scope`` ``None``)
    or the allowed part of it, with its constraint indexes and the key of its translations
    in the translator's response cache."""

    view: ParseKGView
    indexes: ConstraintIndexes
    cache_key: str
    scope: FilterScope | None = None


def allowed_view(store: ParseKGStore, scope: FilterScope) -> ParseKGView:
    """The :class:`ParseKGView` of ``scope``'s passages and their hyperedges."""
    graph: GraphBackend = store.index_store.graph
    ids = [node_id(PASSAGE, key) for key in sorted(scope.passages)]
    passages: dict[str, Passage] = {}
    rel_ids: list[str] = []
    for batch in batches(ids, BATCH):
        for node, d in graph.nodes_data(batch).items():
            key = node_key(node)
            passages[key] = Passage(key, d["text"], d["doc_id"], d["metadata"])
        contained = graph.neighbors_many(list(batch), CONTAINS, "out", REL)
        rel_ids += [r for node in batch for r in contained.get(node, ())]
    rels: list[tuple[str, dict[str, Any]]] = []
    for batch in batches(sorted(rel_ids), BATCH):
        rels += [(node_key(node), d) for node, d in graph.nodes_data(batch).items()]
    return ParseKGView.of(passages, rels, store.excluded_head_labels, store.generation)


class FilteredGraphs:
    """The :class:`SearchGraph` of the last filters, dropped when the ParseKG changes (its
    generation; lazy passage vectors added by queries do not change it)."""

    def __init__(self) -> None:
        self._generation = -1
        self._cache: FilterCache[SearchGraph] = FilterCache()
        self._lock = threading.Lock()

    def get(
        self,
        store: ParseKGStore,
        where: MetadataFilter,
        indexes: Callable[[ParseKGView], tuple[ConstraintIndexes, str]],
    ) -> SearchGraph:
        """The search graph of ``where``; ``indexes(view)`` makes the constraint indexes over
        a view and their cache key."""
        with self._lock:
            if store.generation != self._generation:
                self._generation, self._cache = store.generation, FilterCache()
            cache = self._cache

        def make() -> SearchGraph:
            scope = FilterScope.of(where, passage_records(store.index_store, PASSAGE))
            view = allowed_view(store, scope)
            return SearchGraph(view, *indexes(view), scope)

        return cache.get(where, make)
