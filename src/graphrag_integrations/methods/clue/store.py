"""The Clue-Index's schema on the core :class:`~graphrag_integrations.core.index.store.IndexStore`.

The multi-partite graph of the paper, in the store's graph backend:

* nodes of kind ``chunk`` (attributes ``text``, ``doc_id``, ``metadata`` and ``terms``, its
  words: :mod:`~graphrag_integrations.methods.clue.term_index`), ``unit``
  (``text``, ``doc_id``, ``source``) and ``entity`` (``name``, ``label``), with ids
  ``"chunk:<passage id>"``, ``"unit:<unit id>"`` and ``"entity:<normalised name>"``
  (:func:`~graphrag_integrations.core.index.node_ids.node_id`);
* edges ``contains`` (chunk -> unit, ``E_C``) and ``mentions`` (unit -> entity, ``E_E``,
  added in the unit's mention order);
* provenance = the document id on every node and edge, so ``delete(doc_id)`` is
  :meth:`IndexStore.remove_document`: an entity mentioned by another document keeps that
  document in its provenance and survives;
* a ``document`` node per document (``has_chunk`` edges to its chunks) and the node
  ``stats:qiter`` holding the term statistics Q-Iter's scorer needs
  (:mod:`~graphrag_integrations.methods.clue.statistics`), updated by :func:`add_units` and
  by the index's ``delete``.

Each kind has a vector layer (:data:`LAYERS`: ``"chunks"``, ``"units"``, ``"entities"``),
keyed by passage id, unit id and entity name; chunk and unit vectors carry ``doc_id`` (and a
unit its ``chunk_id``) as metadata (:func:`clue_metadata`). This module holds only what is
Clue-specific: the schema, :class:`KnowledgeUnit` and :func:`add_units` (the batch add); it
re-exports ``ChromaVectors``, ``node_id``... of the core module for existing imports.
Q-Iter's flat arrays (``graph.ClueGraph``) are a derived view of the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.index.store_base import VectorIndexFactory, in_memory_vectors
from graphrag_integrations.core.types import Passage
from graphrag_integrations.core.vector_store.chroma_collections import ChromaVectors
from graphrag_integrations.methods.clue.schema import (
    CHUNK,
    CONTAINS,
    DOCUMENT,
    ENTITY,
    HAS_CHUNK,
    LAYERS,
    MENTIONS,
    UNIT,
)
from graphrag_integrations.methods.clue.statistics import add_statistics
from graphrag_integrations.methods.clue.term_index import TERMS, chunk_terms, ensure_term_index

__all__ = [
    "CHUNK",
    "CONTAINS",
    "ENTITY",
    "LAYERS",
    "MENTIONS",
    "UNIT",
    "ChromaVectors",
    "KnowledgeUnit",
    "VectorIndexFactory",
    "add_units",
    "clue_metadata",
    "clue_store",
    "in_memory_vectors",
    "node_id",
    "node_key",
    "unit_chunk",
]


@dataclass(frozen=True, slots=True)
class KnowledgeUnit:
    """A knowledge-unit node.

    Parameters
    ----------
    id : str
        Stable id (content hash of passage id and position).
    text : str
        The unit text as embedded and scored (sentence, optionally prefixed by its title).
    passage_id : str
        The chunk it came from (edge in ``E_C``).
    doc_id : str
        Source document id (for ``delete``).
    entities : tuple of str
        Normalised names of the entities it mentions (edges in ``E_E``).
    source : str
        ``"sentence"`` (spaCy split) or ``"llm"`` (LLM extraction).
    """

    id: str
    text: str
    passage_id: str
    doc_id: str
    entities: tuple[str, ...]
    source: str = "sentence"


def unit_chunk(graph: GraphBackend, unit: str) -> str:
    """Node id of the chunk containing the unit node ``unit``."""
    return graph.neighbors(unit, CONTAINS, direction="in")[0]


def clue_metadata(graph: GraphBackend, kind: str, key: str) -> dict[str, Any] | None:
    """Vector metadata of a Clue node: ``doc_id`` for chunks, ``doc_id`` and ``chunk_id``
    for units, none for entities (shared by several documents)."""
    if kind == CHUNK:
        return {"doc_id": graph.node(node_id(CHUNK, key))["doc_id"]}
    if kind == UNIT:
        unit = node_id(UNIT, key)
        return {
            "doc_id": graph.node(unit)["doc_id"],
            "chunk_id": node_key(unit_chunk(graph, unit)),
        }
    return None


def clue_store(
    model_name: str,
    factory: VectorIndexFactory | None = None,
    graph: type[GraphBackend] | None = None,
) -> IndexStore:
    """An empty store with the Clue layers and metadata.

    Examples
    --------
    >>> store = clue_store("toy")
    >>> len(store.graph), sorted(store.layers.values())
    (0, ['chunks', 'entities', 'units'])
    """
    return IndexStore(model_name, LAYERS, factory=factory, graph=graph, metadata=clue_metadata)


def add_units(
    store: IndexStore,
    passages: Sequence[Passage],
    units: Sequence[KnowledgeUnit],
    *,
    chunk_vectors: Mapping[str, FloatMatrix],
    unit_vectors: Mapping[str, FloatMatrix],
    entity_vectors: Mapping[str, FloatMatrix],
    entity_labels: Mapping[str, str],
) -> None:
    """Add chunks, their knowledge units and the entities these mention, in one batch.

    Vectors must be given for every new chunk, unit and entity (entities already in the
    graph keep their vector and label and only gain provenance).
    """
    ensure_term_index(store)
    with store.writing():
        add_statistics(store, passages, units)
        for p in passages:
            chunk = store.add_node(
                CHUNK,
                p.id,
                (p.doc_id,),
                text=p.text,
                doc_id=p.doc_id,
                metadata=dict(p.metadata),
                **{TERMS: chunk_terms(p.text)},
            )
            document = store.add_node(DOCUMENT, p.doc_id, (p.doc_id,))
            store.add_edge(document, chunk, HAS_CHUNK, (p.doc_id,))
        for u in units:
            prov = (u.doc_id,)
            unit = store.add_node(UNIT, u.id, prov, text=u.text, doc_id=u.doc_id, source=u.source)
            store.add_edge(node_id(CHUNK, u.passage_id), unit, CONTAINS, prov)
            for name in u.entities:
                if store.has(ENTITY, name):
                    entity = store.add_node(ENTITY, name, prov)
                else:
                    entity = store.add_node(
                        ENTITY, name, prov, name=name, label=entity_labels[name]
                    )
                store.add_edge(unit, entity, MENTIONS, prov)
        store.add_vectors(CHUNK, chunk_vectors)
        store.add_vectors(UNIT, unit_vectors)
        store.add_vectors(ENTITY, entity_vectors)
