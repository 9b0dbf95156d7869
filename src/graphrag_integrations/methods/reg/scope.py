"""ReG under a metadata filter: the KG of the matching documents only.

A triple carries the documents it came from (its provenance). A filtered query is answered on
:class:`FilteredKG`: the ``KGView`` of the triples an allowed document contributed, exactly the
view an index built from the matching documents alone would have (same entities, relations,
vectors and sorted order), so anchors, the subgraph, its features, the scores, the evidence
chains and the fill from outside the subgraph all come from them, and a chain names only its
allowed documents (its metadata is that of the first). An entity both tenants name is one
node: it is kept with the allowed triples, the others' triples never enter the view.

What a filter is evaluated on: the text passages the triples were extracted from (their
metadata plus ``doc_id`` and ``passage_id``), the recorded metadata of documents without one,
and the bare ``doc_id`` of documents that exist only as triples (``insert_triples``). The
allowed triples are read with
:func:`~graphrag_integrations.core.graph.filter_reads.edges_of_documents`: on FalkorDB one
query over the indexed provenance lists, so the other documents' triples are never read.
Both are kept per filter (the last
:data:`~graphrag_integrations.core.retrieval.filter_scope.SCOPES_KEPT`) until the index
changes.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from graphrag_integrations.core.graph.filter_reads import edges_of_documents, provenance_documents
from graphrag_integrations.core.index.node_ids import node_key
from graphrag_integrations.core.retrieval.filter_scope import (
    FilterCache,
    FilterScope,
    PassageRecord,
)
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.core.types import Passage, Triple
from graphrag_integrations.methods.reg.linking import link_table
from graphrag_integrations.methods.reg.store import ENTITY, RELATION, KGView, RegStore

__all__ = ["FilteredKG", "FilteredKGs", "reg_records"]


class _Texts(Protocol):
    """What :func:`reg_records` reads of a ``RefinedSubgraphRetriever``."""

    store: RegStore
    document_metadata: dict[str, dict[str, Any]]

    @property
    def passages(self) -> list[Passage]: ...


def reg_records(index: _Texts) -> list[PassageRecord]:
    """What a filter is evaluated on (see the module docstring)."""
    records: list[PassageRecord] = [(p.id, p.doc_id, p.metadata) for p in index.passages]
    covered = {doc for _, doc, _ in records}
    for doc, metadata in index.document_metadata.items():
        if doc not in covered:
            records.append((doc, doc, metadata))
            covered.add(doc)
    graph = index.store.index_store.graph
    records += [(doc, doc, {}) for doc in sorted(provenance_documents(graph) - covered)]
    return records


@dataclass(frozen=True)
class FilteredKG:
    """The KG of a filter's documents: its view, link table and each triple's allowed
    documents."""

    scope: FilterScope
    view: KGView
    table: dict[tuple[str, ...], list[int]]
    provenance: Mapping[Triple, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, store: RegStore, scope: FilterScope) -> FilteredKG:
        """The view of the triples ``scope``'s documents contributed (sorted, as
        ``RegStore.view`` sorts the whole KG's)."""
        index_store = store.index_store
        provenance: dict[Triple, list[str]] = {}
        for (u, v, key), docs in edges_of_documents(index_store.graph, scope.documents):
            provenance[(node_key(u), key, node_key(v))] = scope.kept_documents(docs)
        triples = sorted(provenance)
        entities = sorted({x for h, _, t in triples for x in (h, t)})
        relations = sorted({r for _, r, _ in triples})
        dim = index_store.dimension
        none = np.zeros((0, dim), np.float32)
        view = KGView.over(
            triples,
            entities,
            relations,
            index_store.embeddings(ENTITY, entities) if entities else none,
            index_store.embeddings(RELATION, relations) if relations else none,
        )
        return cls(scope, view, link_table(entities), provenance)

    def documents(self, triple: Triple) -> list[str]:
        """The allowed documents of ``triple``, sorted."""
        return self.provenance[triple]


class FilteredKGs:
    """The :class:`FilteredKG` of the last filters, dropped when the index changes (the KG's
    version or its text documents)."""

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self._cache: FilterCache[FilteredKG] = FilterCache()
        self._lock = threading.Lock()

    def get(self, index: _Texts, texts_version: int, where: MetadataFilter) -> FilteredKG:
        """The filtered KG of ``where`` over ``index`` as it is now."""
        key = (index.store.index_store.version, texts_version)
        with self._lock:
            if key != self._key:
                self._key, self._cache = key, FilterCache()
            cache = self._cache

        def make() -> FilteredKG:
            return FilteredKG.of(index.store, FilterScope.of(where, reg_records(index)))

        return cache.get(where, make)
