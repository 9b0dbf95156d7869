"""Q-Iter's neighbourhood view: a query reads only the part of the graph it reaches.

With a database graph backend the flat view
(:class:`~graphrag_integrations.methods.clue.graph.ClueGraph`: every chunk, unit and entity in
arrays) would copy the whole graph into the query process. A :class:`NeighbourhoodView`
instead starts from the query's seeds (the nearest entities and units of the vector indexes)
and reads per hop, with the backend's batched reads, only what the beam search touches:

* anchors -> their units: one ``neighbors_many(entities, "mentions", "in")`` per depth;
* those units' vectors: one ``get_embeddings`` per depth (the cosine against ``φ``);
* the units kept as candidates: one ``nodes_data`` (texts, for the path scorer and the
  canonical order) and two ``neighbors_many`` (their chunk and their entities, the next
  anchors);
* the final chunks: one ``nodes_data`` and one ``get_embeddings``.

What is read goes into a :class:`NeighbourhoodCache` shared by the queries of a retriever: an
LRU of at most ``capacity`` node records (default :data:`DEFAULT_CACHE_NODES`), dropped as a
whole when the index changes (a new store version). The collection statistics of the lexical
scorer come from the graph's statistics node
(:mod:`~graphrag_integrations.methods.clue.statistics`), read once per version. When the
search reached fewer than ``k`` chunks, the top-up reads two short candidate lists: the
chunks nearest the query (the chunk vector index) and those holding its rarer words (the
graph's term index, :mod:`~graphrag_integrations.methods.clue.top_up`). Nothing scans the
graph at query time except in defined cases, streamed in batches without filling the cache:
the graph order of the chunks (a list of chunk ids) when an exact tie must be broken by it,
and the top-up on a graph without a term index or with a re-ranker as scorer.

Same ids and scores as the flat view: the same vectors (from the store's vector indexes), the
same token counts, the same statistics, the same operations on equally shaped arrays, and ties
broken in the same graph order (a unit's order is its chunk's position, then its position in
the chunk: ``add_units`` adds units chunk by chunk; an entity's is its first mention).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.graph.backends import is_in_process
from graphrag_integrations.core.graph.term_search import term_search
from graphrag_integrations.core.index.filtered_reads import nearest_within
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.lru import LRUCache
from graphrag_integrations.core.retrieval.filter_scope import FilterScope
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.clue.statistics import (
    CollectionStats,
    QIterStats,
    read_statistics,
    tokenize,
)
from graphrag_integrations.methods.clue.store import CHUNK, CONTAINS, ENTITY, MENTIONS, UNIT
from graphrag_integrations.methods.clue.term_index import TERMS, has_term_index
from graphrag_integrations.methods.clue.view import IntRows, OrderKey

__all__ = [
    "DEFAULT_CACHE_NODES",
    "NeighbourhoodCache",
    "NeighbourhoodView",
    "whole_graph_backend",
]

#: Node records a :class:`NeighbourhoodCache` keeps by default (a few MiB).
DEFAULT_CACHE_NODES = 4096

R = TypeVar("R")


def whole_graph_backend(store: IndexStore) -> bool:
    """Whether the store's graph lives in this process (the networkx ``GraphStore`` or
    another in-process backend: :func:`~graphrag_integrations.core.graph.backends.is_in_process`):
    Q-Iter then uses the flat view; a database backend (FalkorDB) gets the neighbourhood view.

    Examples
    --------
    >>> from graphrag_integrations.methods.clue.store import clue_store
    >>> whole_graph_backend(clue_store("toy"))
    True
    """
    return is_in_process(type(store.graph))


class _Unit:
    __slots__ = ("bag", "chunk", "entities", "length", "text", "vector")

    def __init__(self) -> None:
        self.text: str | None = None
        self.bag: Counter[str] = Counter()
        self.length = 0
        self.chunk = ""
        self.entities: list[str] = []
        self.vector: FloatMatrix | None = None


class _Entity:
    __slots__ = ("units",)

    def __init__(self) -> None:
        self.units: list[str] | None = None


class _Chunk:
    __slots__ = ("bag", "length", "passage", "units", "vector")

    def __init__(self) -> None:
        self.passage: Passage | None = None
        self.bag: Counter[str] = Counter()
        self.length = 0
        self.units: list[str] | None = None
        self.vector: FloatMatrix | None = None


def _mismatch(kind: str, exc: KeyError) -> IndexMismatchError:
    key = node_key(str(exc.args[0])) if exc.args and ":" in str(exc.args[0]) else ""
    return IndexMismatchError(
        f"{kind} {key!r} is in the vector index but not in the graph; the vector index was "
        "changed outside the ClueIndex"
    )


class NeighbourhoodCache:
    """Node records read from one version of a store, at most ``capacity`` of them (LRU).

    Thread-safe: concurrent queries share it (reads run outside its lock; two queries may read
    the same record, with the same result). :attr:`reads` counts the backend calls by kind.

    Parameters
    ----------
    store : IndexStore
        The Clue-Index's store; the cache belongs to its current :attr:`IndexStore.version`.
    capacity : int
        Most node records kept (units, entities and chunks together).
    """

    def __init__(self, store: IndexStore, capacity: int = DEFAULT_CACHE_NODES) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.store = store
        self.version = store.version
        self.capacity = capacity
        self.reads: Counter[str] = Counter()
        self._lru: LRUCache[str, Any] = LRUCache(capacity)
        self._lock = threading.Lock()
        self._stats: QIterStats | None = None
        self._chunk_order: tuple[list[str], dict[str, int]] | None = None
        self._term_index: bool | None = None

    def __len__(self) -> int:
        return len(self._lru)

    @property
    def current(self) -> bool:
        """Whether the store has not changed since the cache was made."""
        return self.store.version == self.version

    def stats(self) -> QIterStats:
        """The graph's statistics node (read once)."""
        if self._stats is None:
            self.reads["stats"] += 1
            self._stats = read_statistics(self.store.graph)
        return self._stats

    def term_index(self) -> bool:
        """Whether the graph has the chunks' term index (asked once)."""
        if self._term_index is None:
            self.reads["term_index"] += 1
            self._term_index = has_term_index(self.store)
        return self._term_index

    def chunk_order(self) -> tuple[list[str], dict[str, int]]:
        """Chunk keys in graph order and their positions (read once, when first needed)."""
        if self._chunk_order is None:
            self.reads["chunk_order"] += 1
            keys = self.store.keys(CHUNK)
            self._chunk_order = (keys, {k: i for i, k in enumerate(keys)})
        return self._chunk_order

    def records(self, kind: str, keys: Sequence[str], make: Callable[[], R]) -> list[R]:
        """The records of ``keys`` (made empty when new), most recently used last."""
        out: list[R] = []
        with self._lock:
            for key in keys:
                name = node_id(kind, key)
                if name not in self._lru:
                    self._lru[name] = make()
                out.append(self._lru.use(name))
            self._lru.trim()
        return out

    # -- reads: fill the missing fields of records, a batched call per field --------------
    def fill_units(
        self, keys: Sequence[str], records: Sequence[_Unit], *, vectors: bool, data: bool
    ) -> None:
        graph = self.store.graph
        if vectors:
            todo = [i for i, r in enumerate(records) if r.vector is None]
            if todo:
                self.reads["unit_vectors"] += 1
                matrix = self.store.embeddings(UNIT, [keys[i] for i in todo])
                for j, i in enumerate(todo):
                    records[i].vector = np.array(matrix[j])
        if data:
            todo = [i for i, r in enumerate(records) if r.text is None]
            if not todo:
                return
            ids = list(dict.fromkeys(node_id(UNIT, keys[i]) for i in todo))
            self.reads["unit_data"] += 1
            try:
                nodes = graph.nodes_data(ids)
            except KeyError as exc:
                raise _mismatch(UNIT, exc) from None
            chunks = graph.neighbors_many(ids, CONTAINS, direction="in")
            mentions = graph.neighbors_many(ids, MENTIONS)
            for i in todo:
                name = node_id(UNIT, keys[i])
                record = records[i]
                tokens = tokenize(nodes[name]["text"])
                record.bag = Counter(tokens)
                record.length = len(tokens)
                record.chunk = node_key(chunks[name][0])
                record.entities = [node_key(e) for e in mentions[name]]
                record.text = nodes[name]["text"]

    def fill_entities(self, keys: Sequence[str], records: Sequence[_Entity]) -> None:
        todo = [i for i, r in enumerate(records) if r.units is None]
        if not todo:
            return
        ids = list(dict.fromkeys(node_id(ENTITY, keys[i]) for i in todo))
        self.reads["entity_units"] += 1
        try:
            linked = self.store.graph.neighbors_many(ids, MENTIONS, direction="in")
        except KeyError as exc:
            raise _mismatch(ENTITY, exc) from None
        for i in todo:
            records[i].units = [node_key(u) for u in linked[node_id(ENTITY, keys[i])]]

    def fill_chunks(
        self,
        keys: Sequence[str],
        records: Sequence[_Chunk],
        *,
        vectors: bool,
        data: bool,
        units: bool = False,
    ) -> None:
        graph = self.store.graph
        if vectors:
            todo = [i for i, r in enumerate(records) if r.vector is None]
            if todo:
                self.reads["chunk_vectors"] += 1
                matrix = self.store.embeddings(CHUNK, [keys[i] for i in todo])
                for j, i in enumerate(todo):
                    records[i].vector = np.array(matrix[j])
        if data:
            todo = [i for i, r in enumerate(records) if r.passage is None]
            if todo:
                self.reads["chunk_data"] += 1
                nodes = graph.nodes_data([node_id(CHUNK, keys[i]) for i in todo])
                for i in todo:
                    d = nodes[node_id(CHUNK, keys[i])]
                    tokens = tokenize(d["text"])
                    records[i].bag = Counter(tokens)
                    records[i].length = len(tokens)
                    records[i].passage = Passage(keys[i], d["text"], d["doc_id"], d["metadata"])
        if units:
            todo = [i for i, r in enumerate(records) if r.units is None]
            if todo:
                self.reads["chunk_units"] += 1
                ids = [node_id(CHUNK, keys[i]) for i in todo]
                contained = graph.neighbors_many(ids, CONTAINS)
                for i, name in zip(todo, ids, strict=True):
                    records[i].units = [node_key(u) for u in contained[name]]


class _Table:
    """Rows of one kind within a view: key <-> row, and the pinned record of each row."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.rows: dict[str, int] = {}
        self.records: list[Any] = []


class NeighbourhoodView:
    """The :class:`~graphrag_integrations.methods.clue.view.QIterView` of one query, read
    through ``cache`` (see the module docstring).

    Rows are handed out as the query reaches nodes; the records behind them stay pinned for
    the view's life, whatever the cache evicts meanwhile.
    """

    def __init__(self, cache: NeighbourhoodCache) -> None:
        self.cache = cache
        self.stats = cache.stats()
        self._units = _Table()
        self._entities = _Table()
        self._chunks = _Table()

    # -- rows -----------------------------------------------------------------------------
    def _intern(
        self,
        table: _Table,
        kind: str,
        keys: Sequence[str],
        make: Callable[[], Any],
        cached: bool = True,
    ) -> list[int]:
        new = [k for k in dict.fromkeys(keys) if k not in table.rows]
        if new:
            records = self.cache.records(kind, new, make) if cached else [make() for _ in new]
            for key, record in zip(new, records, strict=True):
                table.rows[key] = len(table.keys)
                table.keys.append(key)
                table.records.append(record)
        return [table.rows[k] for k in keys]

    def _unit_rows(self, keys: Sequence[str]) -> list[int]:
        return self._intern(self._units, UNIT, keys, _Unit)

    def _entity_rows(self, keys: Sequence[str]) -> list[int]:
        return self._intern(self._entities, ENTITY, keys, _Entity)

    def _chunk_rows(self, keys: Sequence[str], cached: bool = True) -> list[int]:
        return self._intern(self._chunks, CHUNK, keys, _Chunk, cached)

    def passage_rows(self, keys: Sequence[str]) -> list[int]:
        """Rows of the chunks with these passage ids (read when first used)."""
        return self._chunk_rows(keys)

    def _units_at(
        self, rows: Sequence[int], *, vectors: bool = False, data: bool = False
    ) -> list[_Unit]:
        t = self._units
        records = [t.records[r] for r in rows]
        self.cache.fill_units([t.keys[r] for r in rows], records, vectors=vectors, data=data)
        return records

    def _entity_at(self, row: int) -> _Entity:
        t = self._entities
        record: _Entity = t.records[row]
        if record.units is None:
            self.cache.fill_entities([t.keys[row]], [record])
        return record

    def _chunks_at(
        self, rows: Sequence[int], *, vectors: bool = False, data: bool = False, units: bool = False
    ) -> list[_Chunk]:
        t = self._chunks
        records = [t.records[r] for r in rows]
        self.cache.fill_chunks(
            [t.keys[r] for r in rows], records, vectors=vectors, data=data, units=units
        )
        return records

    # -- sizes and statistics -------------------------------------------------------------
    @property
    def has_passages(self) -> bool:
        return self.stats.chunks.size > 0

    @property
    def has_units(self) -> bool:
        return self.stats.units.size > 0

    @property
    def has_entities(self) -> bool:
        return self.stats.entities > 0

    @property
    def unit_terms(self) -> CollectionStats:
        return self.stats.units

    @property
    def passage_terms(self) -> CollectionStats:
        return self.stats.chunks

    # -- rows of vector-index hits and their graph order ----------------------------------
    def rows_of(self, kind: str, keys: Sequence[str]) -> list[int]:
        """Rows of ``keys``, nothing read yet (a key missing from the graph fails when its
        node is first read)."""
        return self._unit_rows(keys) if kind == UNIT else self._entity_rows(keys)

    def order_keys(self, kind: str, rows: Sequence[int]) -> list[OrderKey]:
        if kind == UNIT:
            return self._unit_order(rows)
        entities = [self._entity_at(r) for r in rows]
        firsts = self._unit_rows([e.units[0] for e in entities if e.units])
        order = dict(zip(firsts, self._unit_order(firsts), strict=True))
        keys: list[OrderKey] = []
        for row, entity in zip(rows, entities, strict=True):
            if not entity.units:  # mentioned by no unit: after every mentioned one
                keys.append((len(self.cache.chunk_order()[0]),))
                continue
            first = self._units.rows[entity.units[0]]
            mention = self._units.records[first].entities.index(self._entities.keys[row])
            keys.append((*order[first], mention))
        return keys

    def _unit_order(self, rows: Sequence[int]) -> list[OrderKey]:
        units = self._units_at(rows, data=True)
        chunk_rows = self._chunk_rows([u.chunk for u in units])
        chunks = self._chunks_at(chunk_rows, units=True)
        _, position = self.cache.chunk_order()
        return [
            (position[u.chunk], (c.units or []).index(self._units.keys[r]))
            for r, u, c in zip(rows, units, chunks, strict=True)
        ]

    def canonical_path(self, units: Sequence[int]) -> tuple[int, ...]:
        distinct = list(dict.fromkeys(units))
        texts = [self.unit_text(r) for r in distinct]
        if len(set(texts)) == len(texts):
            order: list[OrderKey] = [()] * len(distinct)
        else:  # equal texts: graph order, as the flat view
            order = self._unit_order(distinct)
        ranked = sorted(zip(texts, order, distinct, strict=True), key=lambda t: (t[0], t[1]))
        return tuple(r for _, _, r in ranked)

    # -- entities and units ---------------------------------------------------------------
    def prefetch_entities(self, rows: Sequence[int]) -> None:
        t = self._entities
        self.cache.fill_entities([t.keys[r] for r in rows], [t.records[r] for r in rows])

    def linked_units(self, entity: int) -> IntRows:
        units = self._entity_at(entity).units or []
        return np.array(self._unit_rows(units), dtype=np.int64)

    def entity_name(self, entity: int) -> str:
        return self._entities.keys[entity]

    def unit_key(self, unit: int) -> str:
        """The unit id of row ``unit``."""
        return self._units.keys[unit]

    def passage_key(self, row: int) -> str:
        """The passage id of chunk row ``row`` (nothing read)."""
        return self._chunks.keys[row]

    def prefetch_units(self, rows: Sequence[int], *, vectors: bool, data: bool) -> None:
        self._units_at(rows, vectors=vectors, data=data)

    def unit_vectors(self, rows: Sequence[int] | IntRows) -> FloatMatrix:
        records = self._units_at([int(r) for r in rows], vectors=True)
        if not records:
            return np.zeros((0, self.cache.store.dimension), dtype=np.float32)
        return np.stack([r.vector for r in records if r.vector is not None])

    def mentions(self, unit: int) -> list[int]:
        return self._entity_rows(self._units_at([unit], data=True)[0].entities)

    def chunk_of(self, unit: int) -> int:
        return self._chunk_rows([self._units_at([unit], data=True)[0].chunk])[0]

    def unit_text(self, unit: int) -> str:
        return self._units_at([unit], data=True)[0].text or ""

    def unit_bag(self, unit: int) -> tuple[Counter[str], int]:
        record = self._units_at([unit], data=True)[0]
        return record.bag, record.length

    # -- chunks ---------------------------------------------------------------------------
    def prefetch_passages(self, rows: Sequence[int]) -> None:
        self._chunks_at(rows, vectors=True, data=True)

    def passage_vectors(self, rows: Sequence[int]) -> FloatMatrix:
        records = self._chunks_at(rows, vectors=True)
        if not records:
            return np.zeros((0, self.cache.store.dimension), dtype=np.float32)
        return np.stack([r.vector for r in records if r.vector is not None])

    def passage_bag(self, row: int) -> tuple[Counter[str], int]:
        record = self._chunks_at([row], data=True)[0]
        return record.bag, record.length

    def passage(self, row: int) -> Passage:
        passage = self._chunks_at([row], data=True)[0].passage
        assert passage is not None  # filled by _chunks_at
        return passage

    # -- the top-up's candidates (methods.clue.top_up) ------------------------------------
    @property
    def can_search_terms(self) -> bool:
        return self.cache.term_index()

    def passages_with_term(self, term: str) -> list[int]:
        search = term_search(self.cache.store.graph)
        assert search is not None  # can_search_terms
        self.cache.reads["term_chunks"] += 1
        ids = search.nodes_with_term(TERMS, term, CHUNK)
        # not through the cache: the rows of a common word would flush what queries share
        return self._chunk_rows([node_key(i) for i in ids], cached=False)

    def nearest_passages(
        self, vector: FloatMatrix, m: int, allowed: FilterScope | None = None
    ) -> list[int]:
        """Rows of the ``m`` chunks nearest ``vector`` (among the ``allowed`` ones)."""
        self.cache.reads["chunk_nearest"] += 1
        store = self.cache.store
        if allowed is None:
            hits = store.nearest(CHUNK, vector, m)
        else:
            hint = allowed.document_hint()  # the chunk layer's records carry doc_id
            hits = nearest_within(store, CHUNK, vector, m, allowed.passages, hint)
        return self._chunk_rows([key for key, _ in hits], cached=False)

    def passage_order(self, rows: Sequence[int]) -> list[OrderKey]:
        _, position = self.cache.chunk_order()
        return [(position[self._chunks.keys[r]],) for r in rows]

    def unreached_passages(
        self, reached: set[int], batch: int, allowed: FilterScope | None = None
    ) -> Iterator[list[int]]:
        """Rows of every chunk (``allowed``: of every allowed chunk) not in ``reached``, in
        graph order, ``batch`` at a time."""
        self.cache.reads["chunk_scan"] += 1
        keys, _ = self.cache.chunk_order()
        skip = {self._chunks.keys[r] for r in reached}
        rest = [k for k in keys if k not in skip and (allowed is None or allowed.allows(k))]
        for start in range(0, len(rest), batch):
            # not through the cache: a full scan would flush what the queries share
            rows = self._chunk_rows(rest[start : start + batch], cached=False)
            self.prefetch_passages(rows)
            yield rows
