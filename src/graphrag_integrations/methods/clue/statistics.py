"""Corpus statistics of a Clue-Index kept in its graph, updated at insert and delete.

The lexical half of Q-Iter's default scorer needs, for the knowledge units and for the chunks,
the number of rows, their total length in tokens and each term's document frequency
(:func:`tokenize`). The flat view
(:class:`~graphrag_integrations.methods.clue.graph.ClueGraph`) counts them over every row it
holds; a query that reads only a neighbourhood of a database graph
(:mod:`~graphrag_integrations.methods.clue.neighbourhood`) cannot, so they are kept in the
graph itself, exact and small (one count per distinct term):

* the node ``"stats:qiter"`` (:data:`STATS_NODE`) holds them as one JSON string attribute
  ``data`` (any backend stores a string) and has every indexed document in its provenance:
  it goes with the last document, so an index emptied by ``delete`` holds no node;
* a node ``"document:<doc id>"`` per document with ``has_chunk`` edges to its chunks, so
  ``delete`` finds what a document contributed with a few neighbourhood reads before the
  nodes go;
* :func:`add_statistics` (called by :func:`~graphrag_integrations.methods.clue.store.add_units`
  inside its batch) adds a batch, :func:`remove_documents` subtracts documents while it
  removes them. A graph without the node (written before it existed) gets it counted once,
  streaming the rows in batches, at its first insert or delete; a query on such a graph counts
  them too (logged) without writing them; loading such an index with a database graph writes
  the node (:func:`ensure_statistics`).

Equal to the flat view's figures: same token lists, integer sums (exact in ``float64``) and
the same idf formula (:meth:`CollectionStats.idf`).
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.clue.schema import (
    CHUNK,
    CONTAINS,
    DOCUMENT,
    ENTITY,
    HAS_CHUNK,
    STATS,
    UNIT,
)

__all__ = [
    "DOCUMENT",
    "HAS_CHUNK",
    "STATS",
    "STATS_NODE",
    "CollectionStats",
    "QIterStats",
    "add_statistics",
    "count_statistics",
    "ensure_statistics",
    "read_statistics",
    "remove_documents",
    "tokenize",
]

logger = logging.getLogger(__name__)

#: Node id of the statistics node.
STATS_NODE = node_id(STATS, "qiter")
#: Layout of the statistics node's ``data``.
STATS_FORMAT = 1
#: Nodes read per round trip when statistics are counted from the graph.
SCAN_BATCH = 512


_TOKEN = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens used by the lexical scorer (index and query side alike).

    Examples
    --------
    >>> tokenize("Who founded Nottingham Forest F.C.?")
    ['who', 'founded', 'nottingham', 'forest', 'f', 'c']
    """
    return _TOKEN.findall(text.casefold())


class _Unit(Protocol):
    """What the statistics read of a ``store.KnowledgeUnit``."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def passage_id(self) -> str: ...

    @property
    def entities(self) -> tuple[str, ...]: ...


@dataclass
class CollectionStats:
    """Row count, total length and document frequencies of one collection (units or chunks).

    Examples
    --------
    >>> stats = CollectionStats()
    >>> stats.add("a b a")
    >>> stats.add("b c")
    >>> stats.size, stats.avg_length, stats.df["b"]
    (2, 2.5, 2)
    >>> stats.remove("b c")
    >>> stats.size, sorted(stats.df.items())
    (1, [('a', 1), ('b', 1)])
    """

    size: int = 0
    length: int = 0
    df: Counter[str] = field(default_factory=Counter)

    @property
    def avg_length(self) -> float:
        """Mean row length (0 when empty), as ``TermStats.avg_length``."""
        return float(self.length) / self.size if self.size else 0.0

    def idf(self, term: str) -> float:
        """BM25 idf, the formula of ``TermStats.idf``."""
        n = self.size
        d = self.df.get(term, 0)
        return float(np.log(1.0 + (n - d + 0.5) / (d + 0.5)))

    def add(self, text: str) -> None:
        tokens = tokenize(text)
        self.size += 1
        self.length += len(tokens)
        self.df.update(set(tokens))

    def remove(self, text: str) -> None:
        tokens = tokenize(text)
        self.size -= 1
        self.length -= len(tokens)
        self.df.subtract(set(tokens))
        for term in set(tokens):
            if self.df[term] <= 0:
                del self.df[term]

    def as_dict(self) -> dict[str, Any]:
        return {"size": self.size, "length": self.length, "df": dict(self.df)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CollectionStats:
        return cls(int(data["size"]), int(data["length"]), Counter(data["df"]))


@dataclass
class QIterStats:
    """The statistics of a Clue-Index: units, chunks and the number of entity nodes.

    Examples
    --------
    >>> stats = QIterStats()
    >>> stats.units.add("Paris: Paris is big.")
    >>> QIterStats.from_json(stats.to_json()) == stats
    True
    """

    units: CollectionStats = field(default_factory=CollectionStats)
    chunks: CollectionStats = field(default_factory=CollectionStats)
    entities: int = 0

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": STATS_FORMAT,
                "units": self.units.as_dict(),
                "chunks": self.chunks.as_dict(),
                "entities": self.entities,
            },
            ensure_ascii=False,
            separators=(",", ":"),
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> QIterStats:
        data = json.loads(text)
        if data.get("format") != STATS_FORMAT:
            raise ValueError(f"unknown Q-Iter statistics format {data.get('format')!r}")
        return cls(
            CollectionStats.from_dict(data["units"]),
            CollectionStats.from_dict(data["chunks"]),
            int(data["entities"]),
        )


def count_statistics(graph: GraphBackend) -> tuple[QIterStats, list[str]]:
    """The statistics counted from every unit and chunk of ``graph`` (read in batches) and
    the ids of its documents."""
    stats = QIterStats()
    documents: dict[str, None] = {}
    for batch in batches(graph.nodes(UNIT), SCAN_BATCH):
        for data in graph.nodes_data(batch).values():
            stats.units.add(data["text"])
    for batch in batches(graph.nodes(CHUNK), SCAN_BATCH):
        for data in graph.nodes_data(batch).values():
            stats.chunks.add(data["text"])
            documents.setdefault(data["doc_id"], None)
    stats.entities = len(graph.nodes(ENTITY))
    return stats, list(documents)


def read_statistics(graph: GraphBackend) -> QIterStats:
    """The statistics stored in ``graph``; counted from its rows when it has none (logged)."""
    if STATS_NODE in graph:
        return QIterStats.from_json(graph.nodes_data([STATS_NODE])[STATS_NODE]["data"])
    if len(graph):
        logger.info("this Clue graph holds no statistics node: counting them from its rows")
    return count_statistics(graph)[0]


def _stored(graph: GraphBackend) -> tuple[QIterStats, list[str]]:
    """The statistics before a change, and the documents to add to the node's provenance
    (all of them when the node is missing and was counted)."""
    if STATS_NODE in graph or not len(graph):
        return read_statistics(graph), []
    logger.info("adding the statistics node to a Clue graph written without it")
    return count_statistics(graph)


def ensure_statistics(store: IndexStore) -> None:
    """Write the statistics node into a graph that has rows but no node (written before it
    existed; counted once, streaming the rows), so that queries read it instead of counting."""
    graph = store.graph
    if STATS_NODE not in graph and len(graph):
        with store.writing():
            stats, documents = _stored(graph)
            _write(store, stats, documents)


def _write(store: IndexStore, stats: QIterStats, documents: Iterable[str]) -> None:
    key = node_key(STATS_NODE)
    store.add_node(STATS, key, tuple(documents), data=stats.to_json())


def add_statistics(store: IndexStore, passages: Sequence[Passage], units: Sequence[_Unit]) -> None:
    """Add a batch (before its nodes are added; the caller makes the document nodes): chunks
    already in the graph, and their units, are not counted twice."""
    stats, documents = _stored(store.graph)
    new_chunks = {p.id: p for p in passages if not store.has(CHUNK, p.id)}
    for p in new_chunks.values():
        stats.chunks.add(p.text)
    for u in units:  # a unit is new with its chunk (its id hashes the chunk id)
        if u.passage_id in new_chunks:
            stats.units.add(u.text)
    names = {n for u in units for n in u.entities}
    stats.entities += sum(1 for n in names if not store.has(ENTITY, n))
    _write(store, stats, dict.fromkeys([*documents, *(p.doc_id for p in passages)]))


def _document_chunks(graph: GraphBackend, doc_id: str) -> list[str]:
    """Chunk node ids of a document: its document node's edges, else a scan of the chunks."""
    doc = node_id(DOCUMENT, doc_id)
    if doc in graph:
        linked = graph.neighbors(doc, HAS_CHUNK)
        if linked:  # none: a write stopped before its edges (scan, as without the node)
            return linked
    found: list[str] = []
    for batch in batches(graph.nodes(CHUNK), SCAN_BATCH):
        found += [n for n, d in graph.nodes_data(batch).items() if d.get("doc_id") == doc_id]
    return found


def remove_documents(store: IndexStore, doc_ids: Iterable[str]) -> dict[str, dict[str, list[str]]]:
    """:meth:`IndexStore.remove_document` of each document, keeping the statistics node up to
    date with one read and one write (its JSON grows with the vocabulary: written per
    document, it was most of a delete's time)."""
    out: dict[str, dict[str, list[str]]] = {}
    with store.writing():
        graph = store.graph
        stats, documents = _stored(graph)
        partial = False  # a document half-written (a write that stopped): count afresh
        for doc_id in dict.fromkeys(doc_ids):
            chunks = _document_chunks(graph, doc_id)
            units = [u for us in graph.neighbors_many(chunks, CONTAINS).values() for u in us]
            texts = {n: d["text"] for n, d in graph.nodes_data([*chunks, *units]).items()}
            removed = out[doc_id] = store.remove_document(doc_id)
            documents = [d for d in documents if d != doc_id]
            gone = [node_id(CHUNK, k) for k in removed.get(CHUNK, [])]
            gone_units = [node_id(UNIT, k) for k in removed.get(UNIT, [])]
            if partial or any(n not in texts for n in (*gone, *gone_units)):
                partial = True
                continue
            for node in gone:
                stats.chunks.remove(texts[node])
            for node in gone_units:
                stats.units.remove(texts[node])
            stats.entities -= len(removed.get(ENTITY, []))
        if partial:
            logger.info("counting the statistics afresh after removing a half-written document")
            stats, documents = count_statistics(graph)
        # nothing removed (unknown documents), or the index is empty now (the node went with
        # the last document and was not counted from rows): nothing to write
        if any(out.values()) and (STATS_NODE in graph or documents):
            _write(store, stats, documents)
    return out
