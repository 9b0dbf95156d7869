"""ReG's queries reading only the neighbourhood of their anchors (database graph backends).

The whole-graph :class:`~graphrag_integrations.methods.reg.store.KGView` holds every triple
and entity of the KG in arrays: with a database graph (FalkorDB) that is the whole graph
read into the query process. :class:`NeighbourhoodReads` answers a query from:

1. **Anchors** (:meth:`NeighbourhoodReads.link`): the entity names of the store's entity
   vector layer (its ids when it is in memory, else one listing of the entity node ids -
   no edge is read), sorted as the view sorts them, and the unchanged
   :func:`~graphrag_integrations.methods.reg.linking.named_entities` on them; the nearest
   entity fallback from a nearest search of that layer, re-scored with the stored vectors.
2. **The subgraph** (:meth:`NeighbourhoodReads.subgraph`): the unchanged expansion of
   :func:`~graphrag_integrations.methods.reg.subgraph.expand`, fed per hop by one batched
   count of the frontier's triples
   (:func:`~graphrag_integrations.core.graph.neighbourhood_reads.edge_counts`, so a hub's triples
   are never read unless it is an anchor) and two batched reads of the triples of the
   entities it expands
   (:func:`~graphrag_integrations.core.graph.neighbourhood_reads.incident_edges`).
3. **A query-local view** over just those triples: a ``KGView`` whose entities (sorted) are
   the subgraph's, whose triples (sorted) are the subgraph's, and whose relation table is the
   whole KG's (sorted relation names and their vectors, read once per store version), so
   :func:`~graphrag_integrations.methods.reg.scorer.features`, the scorer, the
   re-organisation and the rendering run unchanged on it. The sorted orders keep the relative
   order of the whole-graph view, so the results are the same: same anchors, triples, scores
   and chains.

What is read per entity (its triple count, its outgoing and incoming triples) is kept in a
:class:`~graphrag_integrations.core.lru.VersionedLRU` of at most
:data:`DEFAULT_CACHE_ENTITIES` entities, emptied when the index changes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.graph.neighbourhood_reads import edge_counts, incident_edges
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.lru import VersionedLRU
from graphrag_integrations.core.vector_store.memory import InMemoryVectorIndex
from graphrag_integrations.methods.reg.kg import Triple
from graphrag_integrations.methods.reg.linking import link_table
from graphrag_integrations.methods.reg.store import ENTITY, RELATION, KGView, RegStore
from graphrag_integrations.methods.reg.subgraph import Subgraph, expand, subgraph_of

__all__ = ["DEFAULT_CACHE_ENTITIES", "EntityNames", "NeighbourhoodReads"]

#: Most entities whose triples a :class:`NeighbourhoodReads` keeps between queries.
DEFAULT_CACHE_ENTITIES = 20_000
#: Nearest entities re-scored exactly for the nearest-entity fallback.
NEAREST_CANDIDATES = 16
NAMES = "kg_entity_names"
RELATIONS = "kg_relations"


@dataclass
class _Entity:
    """What is read of one entity: its triple count, then (when expanded) its triples."""

    degree: int
    out: list[Triple] | None = None
    into: list[Triple] | None = None


@dataclass(frozen=True)
class EntityNames:
    """The KG's entity names, sorted, with the linker's table over them."""

    names: list[str]
    known: frozenset[str]
    table: dict[tuple[str, ...], list[int]]


@dataclass(frozen=True)
class _Relations:
    names: list[str]
    row: dict[str, int]
    vectors: FloatMatrix


def _layer_keys(store: IndexStore, kind: str) -> list[str]:
    """The keys of ``kind``: the in-memory vector layer's ids, else the graph's node ids."""
    layer = store.vectors.get(store.layer(kind))
    if isinstance(layer, InMemoryVectorIndex):
        return list(layer.ids)
    return [node_key(n) for n in store.graph.nodes(kind)]


def _entity_names(store: IndexStore, previous: EntityNames | None = None) -> EntityNames:
    names = sorted(_layer_keys(store, ENTITY))
    return EntityNames(names, frozenset(names), link_table(names))


def _relations(store: IndexStore, previous: _Relations | None = None) -> _Relations:
    names = sorted(_layer_keys(store, RELATION))
    vectors = store.embeddings(RELATION, names)
    return _Relations(names, {r: i for i, r in enumerate(names)}, np.asarray(vectors, np.float32))


class NeighbourhoodReads:
    """Per-query reads of a :class:`RegStore`'s KG (see the module docstring); shared by the
    queries of an index (thread-safe)."""

    def __init__(self, store: RegStore, capacity: int = DEFAULT_CACHE_ENTITIES) -> None:
        self.store = store
        self.cache: VersionedLRU[_Entity] = VersionedLRU(capacity)
        self._lock = threading.Lock()
        #: Backend calls by kind (``counts``, ``edges``).
        self.reads = {"counts": 0, "edges": 0}

    # -- anchors ----------------------------------------------------------------------------
    def names(self) -> EntityNames:
        """The entity names and their link table (read once per store version)."""
        return self.store.index_store.derived(NAMES, _entity_names)

    def nearest_entity(self, vector: FloatMatrix) -> str | None:
        """The entity of largest ``vector . embedding`` (ties: the first name in sorted
        order), from the :data:`NEAREST_CANDIDATES` nearest of the entity layer."""
        index_store = self.store.index_store
        hits = sorted(key for key, _ in index_store.nearest(ENTITY, vector, NEAREST_CANDIDATES))
        if not hits:
            return None
        scores = index_store.embeddings(ENTITY, hits) @ np.asarray(vector, np.float32)
        return hits[int(np.argmax(scores))]

    # -- subgraph ---------------------------------------------------------------------------
    def _entities(self, names: list[str], triples: bool) -> dict[str, _Entity]:
        """The records of ``names`` with their counts (and triples when ``triples``), reading
        what the cache lacks in one batched call per kind."""
        graph = self.store.index_store.graph
        records = self.cache.get(names)
        fresh: dict[str, _Entity] = {}
        missing = [n for n in names if n not in records]
        if missing:
            self.reads["counts"] += 1
            counts = edge_counts(graph, [node_id(ENTITY, n) for n in missing])
            for n in missing:
                fresh[n] = records[n] = _Entity(sum(counts[node_id(ENTITY, n)]))
        if triples:
            todo = [n for n in names if records[n].out is None]
            if todo:
                self.reads["edges"] += 1
                ids = [node_id(ENTITY, n) for n in todo]
                leaving = incident_edges(graph, ids, "out")
                entering = incident_edges(graph, ids, "in")
                for n, i in zip(todo, ids, strict=True):
                    rec = records[n]
                    rec.out = sorted((node_key(u), k, node_key(v)) for u, v, k in leaving[i])
                    rec.into = sorted((node_key(u), k, node_key(v)) for u, v, k in entering[i])
                    fresh[n] = rec
        if fresh:
            self.cache.put(fresh)
        return records

    def subgraph(
        self, anchors: Sequence[str], *, hops: int, max_degree: int, max_triples: int
    ) -> tuple[KGView, Subgraph]:
        """The query-local view and the bounded subgraph of ``anchors`` in it (the same
        triples, in the same order, as
        :func:`~graphrag_integrations.methods.reg.subgraph.extract_subgraph` on the whole
        view)."""
        index_store = self.store.index_store
        self.cache.check(index_store.version)
        known: dict[str, _Entity] = {}

        def prefetch(frontier: list[str], anchor_set: set[str]) -> None:
            known.update(self._entities(frontier, False))
            wide = [n for n in frontier if n in anchor_set or known[n].degree <= max_degree]
            known.update(self._entities(wide, True))

        def incident(name: str) -> Iterator[tuple[Triple, str, str]]:
            rec = known[name]
            for t in (*(rec.out or ()), *(rec.into or ())):
                yield t, t[0], t[2]

        triples, truncated = expand(
            list(dict.fromkeys(anchors)),
            hops=hops,
            max_degree=max_degree,
            max_triples=max_triples,
            degree=lambda n: known[n].degree,
            incident=incident,
            prefetch=prefetch,
        )
        view = self.local_view(sorted(triples), anchors)
        return view, subgraph_of(
            view, range(view.n_triples), [view.entity_row[a] for a in anchors], truncated
        )

    def local_view(self, triples: Sequence[Triple], anchors: Sequence[str]) -> KGView:
        """A ``KGView`` of ``triples`` (sorted) and ``anchors`` with the KG's relation table."""
        index_store = self.store.index_store
        relations = index_store.derived(RELATIONS, _relations)
        entities = sorted({x for h, _, t in triples for x in (h, t)} | set(anchors))
        return KGView.over(
            triples,
            entities,
            relations.names,
            index_store.embeddings(ENTITY, entities),
            relations.vectors,
            relation_row=relations.row,
        )
