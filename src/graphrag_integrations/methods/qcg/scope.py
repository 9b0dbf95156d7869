"""QCG-RAG under a metadata filter: the generated queries a filtered query may use.

A generated query belongs to the chunk it was generated from, so it is allowed with that chunk
(the :class:`~graphrag_integrations.core.retrieval.filter_scope.FilterScope` over the chunk
nodes). A filtered query picks its seeds ``Q_r`` among allowed queries only, walks the kNN
edges only through allowed queries, and ranks only allowed chunks on the chunk side, so no
question generated from another chunk is ever matched or shown. The kNN lists themselves
were built over every query of the index: a walk skips the neighbours of another chunk
instead of replacing them with the next allowed ones, and the chunk side's BM25 keeps the
corpus idf, so a filtered ranking may differ from an index of the matching chunks alone
(``corpus_wide_scores``).

:func:`query_mask` gives the allowed rows of the in-process query view (one boolean per
query, cached per filter and index version); with a database graph the allowed queries are
known from their ids (a query id names its chunk:
:func:`~graphrag_integrations.methods.qcg.store.query_chunk`) and the vector searches are
restricted in the vector layers (:mod:`~graphrag_integrations.methods.qcg.neighbourhood`).
"""

from __future__ import annotations

import numpy as np

from graphrag_integrations.core.index.filtered_reads import passage_scope
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.retrieval.filter_scope import FilterCache
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.methods.qcg.graph import QueryGraph
from graphrag_integrations.methods.qcg.retrieval import Mask
from graphrag_integrations.methods.qcg.store import CHUNK, QCGStore

__all__ = ["query_mask"]


def _new_cache(store: IndexStore, previous: FilterCache[Mask] | None) -> FilterCache[Mask]:
    return FilterCache()


def query_mask(store: QCGStore, graph: QueryGraph, where: MetadataFilter) -> Mask:
    """One boolean per query row of ``graph``: whether its chunk matches ``where``."""
    scope = passage_scope(store.store, CHUNK, where)

    def make() -> Mask:
        chunks = scope.passages
        return np.fromiter((c in chunks for c in graph.chunk_of), np.bool_, len(graph.chunk_of))

    return store.store.derived("qcg-filters", _new_cache).get(where, make)
