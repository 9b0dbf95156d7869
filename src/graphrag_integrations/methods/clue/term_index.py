"""The words of each chunk, kept on its graph node, and their index in a database graph.

Every chunk node carries the attribute ``terms`` (:data:`TERMS`): its distinct
:func:`~graphrag_integrations.methods.clue.statistics.tokenize` tokens separated by spaces
(:func:`chunk_terms`), written by :func:`~graphrag_integrations.methods.clue.store.add_units`
with any backend, so a graph reads the same whatever holds it. On a backend with
:class:`~graphrag_integrations.core.graph.term_search.TermSearch` (FalkorDB's full-text index),
:func:`ensure_term_index` indexes it, so that Q-Iter's top-up
(:mod:`~graphrag_integrations.methods.clue.top_up`) finds the chunks holding a query word
without reading the others. A graph written before the attribute existed gets it once, at
its next load or insert, streamed in batches (logged).

Examples
--------
>>> chunk_terms("The cat saw the other cat.")
'the cat saw other'
"""

from __future__ import annotations

import logging

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.graph.term_search import term_search, term_text
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.methods.clue.schema import CHUNK
from graphrag_integrations.methods.clue.statistics import tokenize

__all__ = ["TERMS", "chunk_terms", "ensure_term_index", "has_term_index"]

logger = logging.getLogger(__name__)

#: The chunk attribute holding the chunk's words.
TERMS = "terms"
#: Chunks read and written per round trip when an older graph gets its words.
BATCH = 512


def chunk_terms(text: str) -> str:
    """The :data:`TERMS` value of a chunk of ``text``."""
    return term_text(tokenize(text))


def has_term_index(store: IndexStore) -> bool:
    """Whether the store's graph answers term searches over the chunks' words."""
    search = term_search(store.graph)
    return search is not None and search.has_term_index(TERMS)


def ensure_term_index(store: IndexStore) -> bool:
    """Index the chunks' words if the graph backend can (``False``: it cannot).

    Chunks without the attribute (a graph written by an older version) get it first, a batch
    of :data:`BATCH` at a time.
    """
    search = term_search(store.graph)
    if search is None:
        return False
    if search.has_term_index(TERMS):
        return True
    missing = search.nodes_without(TERMS, CHUNK)
    if missing:
        logger.info("writing the words of %d chunks for the term index (once)", len(missing))
    graph = store.graph
    for batch in batches(missing, BATCH):
        texts = graph.nodes_data(batch)
        with store.writing():
            for name in batch:
                graph.add_node(name, CHUNK, (), **{TERMS: chunk_terms(texts[name]["text"])})
    search.index_terms(TERMS)
    return True
