"""Q-Iter's flat, derived view of the Clue-Index: chunks -> knowledge units -> entities.

The source of truth is the index's core
:class:`~graphrag_integrations.core.index.store.IndexStore` (graph backend + vector layers,
schema in :mod:`~graphrag_integrations.methods.clue.store`). :class:`ClueGraph` turns it into
arrays tuned for the beam search: one row per chunk / unit / entity, the L2-normalised
vectors stacked into matrices, the two edge sets (chunk-unit ``E_C`` and unit-entity
``E_E``) as index lists in both directions, and the term statistics the lexical half of the
default path scorer needs. It is the store's derived view ``"qiter"``
(:meth:`IndexStore.derived`), rebuilt after a mutation without re-embedding anything.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import SupportsIndex

import numpy as np
import numpy.typing as npt
from scipy import sparse

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.heap import release_free_heap
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.types import Passage
from graphrag_integrations.core.vector_store.memory import InMemoryVectorIndex
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.clue.statistics import tokenize
from graphrag_integrations.methods.clue.store import (
    CHUNK,
    CONTAINS,
    ENTITY,
    MENTIONS,
    UNIT,
    KnowledgeUnit,
)

__all__ = ["ClueGraph", "KnowledgeUnit", "RaggedRows", "RowCounts", "TermStats", "tokenize"]


class RowCounts:
    """Term counts of each row of a collection, computed from its text when asked.

    Holding a ``Counter`` per unit and chunk costs ~1 KiB a row (~45 MiB on 8k passages);
    the scorers only read the counts of the few hundred rows a query touches, so they are
    tokenized on demand (the most recent ones cached). Same counts as ``Counter(tokenize(t))``.

    Examples
    --------
    >>> counts = RowCounts(["a b a", "c"])
    >>> counts[0], len(counts)
    (Counter({'a': 2, 'b': 1}), 2)
    """

    def __init__(self, texts: Sequence[str], cache_rows: int = 256) -> None:
        self._texts = texts
        self._count = lru_cache(maxsize=cache_rows)(self._tokenize)

    def _tokenize(self, row: int) -> Counter[str]:
        return Counter(tokenize(self._texts[row]))

    def __getitem__(self, row: SupportsIndex) -> Counter[str]:
        return self._count(operator.index(row))

    def __len__(self) -> int:
        return len(self._texts)


class RaggedRows:
    """Rows of ``int64`` indexes of different lengths, stored flat (one array + offsets).

    A list of small arrays costs ~120 bytes of header a row; here a row is a read-only view
    made when asked for.

    Examples
    --------
    >>> rows = RaggedRows([[2, 0], [], [1]])
    >>> len(rows), rows[0].tolist(), rows[1].tolist(), [r.tolist() for r in rows][2]
    (3, [2, 0], [], [1])
    """

    def __init__(self, rows: Sequence[Sequence[int]]) -> None:
        self._offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=self._offsets[1:])
        self._data = np.fromiter(
            (i for r in rows for i in r), dtype=np.int64, count=int(self._offsets[-1])
        )
        self._data.flags.writeable = False

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, row: SupportsIndex) -> npt.NDArray[np.int64]:
        i = operator.index(row)
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"row {i} out of range for {n} rows")
        i %= n
        return self._data[self._offsets[i] : self._offsets[i + 1]]

    def __iter__(self) -> Iterator[npt.NDArray[np.int64]]:
        return (self[i] for i in range(len(self)))


@dataclass
class TermStats:
    """Bag-of-words statistics of one collection (units or chunks) for BM25.

    :meth:`from_texts` also keeps every row's term counts as a sparse matrix (rows x
    :attr:`vocabulary`), so :meth:`term_counts` reads the counts of a few query terms for
    thousands of rows in one slice.
    """

    counts: list[Counter[str]] | RowCounts = field(default_factory=list)
    lengths: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    df: Counter[str] = field(default_factory=Counter)
    vocabulary: dict[str, int] | None = None
    matrix: sparse.csr_array | None = None

    def term_counts(self, rows: Sequence[int] | None, terms: Sequence[str]) -> np.ndarray:
        """Counts of ``terms`` (columns) in ``rows`` (default: every row), as floats.

        Examples
        --------
        >>> stats = TermStats.from_texts(["a b a", "b c"])
        >>> stats.term_counts([1, 0], ["a", "c", "z"]).tolist()
        [[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]]
        """
        n = self.size if rows is None else len(rows)
        out = np.zeros((n, len(terms)), dtype=np.float64)
        if self.matrix is None or self.vocabulary is None:
            for i, row in enumerate(range(n) if rows is None else rows):
                bag = self.counts[row]
                out[i] = [bag.get(t, 0) for t in terms]
            return out
        known = [(j, self.vocabulary[t]) for j, t in enumerate(terms) if t in self.vocabulary]
        if not (known and n):
            return out
        if rows is None:
            out[:, [j for j, _ in known]] = self.matrix[:, [c for _, c in known]].toarray()
            return out
        # a few rows: gather their stored entries directly (scipy's fancy indexing costs
        # about 0.5 ms a call, several times what these few hundred entries need)
        m = self.matrix
        picked = np.asarray(rows, dtype=np.int64)
        starts, ends = m.indptr[picked], m.indptr[picked + 1]
        sizes = ends - starts
        owner = np.repeat(np.arange(n), sizes)
        offsets = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        where = np.repeat(starts, sizes) + offsets
        wanted = np.array([c for _, c in known], dtype=m.indices.dtype)
        order = np.argsort(wanted)
        cols = m.indices[where]
        pos = np.searchsorted(wanted[order], cols)
        hit = (pos < len(wanted)) & (wanted[order][np.minimum(pos, len(wanted) - 1)] == cols)
        target = np.array([j for j, _ in known], dtype=np.int64)[order]
        out[owner[hit], target[pos[hit]]] = m.data[where[hit]]
        return out

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]]) -> TermStats:
        counts = [Counter(toks) for toks in token_lists]
        df: Counter[str] = Counter()
        for c in counts:
            df.update(c.keys())
        lengths = np.array([sum(c.values()) for c in counts], dtype=np.float64)
        return cls(counts, lengths, df)

    @classmethod
    def from_texts(cls, texts: Sequence[str]) -> TermStats:
        """Statistics of ``texts`` (tokenized by :func:`tokenize`) with on-demand row counts.

        Examples
        --------
        >>> stats = TermStats.from_texts(["a b a", "b c"])
        >>> stats.counts[0] == TermStats.build([["a", "b", "a"]]).counts[0]
        True
        >>> stats.lengths.tolist(), stats.df["b"]
        ([3.0, 2.0], 2)
        """
        df: Counter[str] = Counter()
        lengths = np.zeros(len(texts), dtype=np.float64)
        vocabulary: dict[str, int] = {}
        indptr = np.zeros(len(texts) + 1, dtype=np.int64)
        columns: list[int] = []
        values: list[int] = []
        for i, text in enumerate(texts):
            tokens = tokenize(text)
            lengths[i] = len(tokens)
            bag = Counter(tokens)
            df.update(bag.keys())
            for term, count in bag.items():
                columns.append(vocabulary.setdefault(term, len(vocabulary)))
                values.append(count)
            indptr[i + 1] = len(columns)
        matrix = sparse.csr_array(
            (
                np.asarray(values, dtype=np.float32),
                np.asarray(columns, dtype=np.int32),
                indptr,
            ),
            shape=(len(texts), len(vocabulary)),
        )
        return cls(RowCounts(texts), lengths, df, vocabulary, matrix)

    @property
    def size(self) -> int:
        return len(self.counts)

    @property
    def avg_length(self) -> float:
        return float(self.lengths.mean()) if self.lengths.size else 0.0

    def idf(self, term: str) -> float:
        """BM25 idf with the usual +1 inside the log (never negative)."""
        n = self.size
        d = self.df.get(term, 0)
        return float(np.log(1.0 + (n - d + 0.5) / (d + 0.5)))


class ClueGraph:
    """Q-Iter's flat view of a Clue :class:`~graphrag_integrations.core.index.store.IndexStore`.

    A derived, immutable-after-build cache (:meth:`build`): rows of chunks / units / entities,
    the two edge sets as index arrays in both directions, the vectors stacked into matrices
    and the BM25 term statistics. Rows follow the graph's insertion order (chunks, units) and
    entity rows follow their first mention among the units, so the layout after ``insert`` +
    ``delete`` is exactly the layout of a graph built without the deleted document. It reads
    the graph only through the :class:`~graphrag_integrations.core.graph.protocol.GraphBackend`
    protocol.

    Examples
    --------
    >>> from graphrag_integrations.methods.clue.store import clue_store
    >>> g = ClueGraph.build(clue_store("toy"))
    >>> g.n_units, g.n_entities
    (0, 0)
    """

    def __init__(self) -> None:
        self.version = -1  # the store's version this view was built from
        self.passages: dict[str, Passage] = {}
        self.units: list[KnowledgeUnit] = []
        self.entity_labels: dict[str, str] = {}
        self.dimension = 0
        self.passage_ids: list[str] = []
        self.unit_ids: list[str] = []
        self.entity_names: list[str] = []
        self.passage_row: dict[str, int] = {}
        self.unit_row: dict[str, int] = {}
        self.entity_row: dict[str, int] = {}
        self.unit_passage = np.zeros(0, dtype=np.int64)
        self.unit_entities = RaggedRows([])
        self.entity_units = RaggedRows([])
        self.passage_matrix: FloatMatrix = np.zeros((0, 0), dtype=np.float32)
        self.unit_matrix: FloatMatrix = np.zeros((0, 0), dtype=np.float32)
        self.entity_matrix: FloatMatrix = np.zeros((0, 0), dtype=np.float32)
        self.unit_terms = TermStats.build([])
        self.passage_terms = TermStats.build([])

    # -- sizes ----------------------------------------------------------------------------
    @property
    def n_units(self) -> int:
        return len(self.units)

    @property
    def n_entities(self) -> int:
        return len(self.entity_names)

    # -- the QIterView protocol (view.py): rows are this view's rows ----------------------
    @property
    def has_passages(self) -> bool:
        return bool(self.passages)

    @property
    def has_units(self) -> bool:
        return bool(self.units)

    @property
    def has_entities(self) -> bool:
        return bool(self.entity_names)

    def rows_of(self, kind: str, keys: Sequence[str]) -> list[int]:
        rows: Mapping[str, int] = self.unit_row if kind == UNIT else self.entity_row
        missing = [key for key in keys if key not in rows]
        if missing:
            raise IndexMismatchError(
                f"{kind} {missing[0]!r} is in the vector index but not in the graph; the "
                "vector index was changed outside the ClueIndex"
            )
        return [rows[key] for key in keys]

    def order_keys(self, kind: str, rows: Sequence[int]) -> list[tuple[int, ...]]:
        return [(int(r),) for r in rows]

    def canonical_path(self, units: Sequence[int]) -> tuple[int, ...]:
        return tuple(sorted(set(units), key=lambda r: (self.units[r].text, r)))

    def prefetch_entities(self, rows: Sequence[int]) -> None:
        """Nothing to read: every row is in memory."""

    def linked_units(self, entity: int) -> npt.NDArray[np.int64]:
        return self.entity_units[entity]

    def entity_name(self, entity: int) -> str:
        return self.entity_names[entity]

    def prefetch_units(self, rows: Sequence[int], *, vectors: bool, data: bool) -> None:
        """Nothing to read: every row is in memory."""

    def unit_vectors(self, rows: Sequence[int] | npt.NDArray[np.int64]) -> FloatMatrix:
        return self.unit_matrix[rows]

    def mentions(self, unit: int) -> list[int]:
        return self.unit_entities[unit].tolist()  # type: ignore[no-any-return]

    def chunk_of(self, unit: int) -> int:
        return int(self.unit_passage[unit])

    def unit_text(self, unit: int) -> str:
        return self.units[unit].text

    def unit_bag(self, unit: int) -> tuple[Counter[str], int]:
        return self.unit_terms.counts[unit], int(self.unit_terms.lengths[unit])

    def prefetch_passages(self, rows: Sequence[int]) -> None:
        """Nothing to read: every row is in memory."""

    def passage_vectors(self, rows: Sequence[int]) -> FloatMatrix:
        return self.passage_matrix[list(rows)]

    def passage_bag(self, row: int) -> tuple[Counter[str], int]:
        return self.passage_terms.counts[row], int(self.passage_terms.lengths[row])

    def unit_term_counts(
        self, rows: Sequence[int], terms: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Counts of ``terms`` in the units ``rows`` and their lengths (one sparse slice)."""
        return self.unit_terms.term_counts(rows, terms), self.unit_terms.lengths[list(rows)]

    def passage_term_counts(
        self, rows: Sequence[int] | None, terms: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Counts of ``terms`` in the chunks ``rows`` (``None``: all) and their lengths."""
        lengths = self.passage_terms.lengths
        return (
            self.passage_terms.term_counts(rows, terms),
            lengths if rows is None else lengths[list(rows)],
        )

    def passage(self, row: int) -> Passage:
        return self.passages[self.passage_ids[row]]

    def unreached_passages(self, reached: set[int], batch: int) -> Iterator[list[int]]:
        rest = [r for r in range(len(self.passage_ids)) if r not in reached]
        for start in range(0, len(rest), batch):
            yield rest[start : start + batch]

    # -- building -------------------------------------------------------------------------
    @classmethod
    def build(cls, store: IndexStore, previous: ClueGraph | None = None) -> ClueGraph:
        """A new view of ``store`` (the ``build`` of ``store.derived("qiter", ...)``).

        Passages and vectors of ``previous`` are reused, except those of ids removed since it
        was built (an ``upsert`` adds new content under a document's old chunk ids); only the
        vectors of new ids are read from the store's vector indexes (a round trip per layer,
        cheap even for a remote backend).
        """
        old = previous or cls()
        graph = store.graph
        new = cls()
        new.version = store.version
        stale = {kind: store.removed_since(old.version, kind) for kind in (CHUNK, UNIT, ENTITY)}
        keys = store.keys(CHUNK)
        unread = [
            node_id(CHUNK, key) for key in keys if key in stale[CHUNK] or key not in old.passages
        ]
        read = graph.nodes_data(unread)  # one round trip for a database graph
        passages: dict[str, Passage] = {}
        for key in keys:
            cached = None if key in stale[CHUNK] else old.passages.get(key)
            if cached is None:
                data = read[node_id(CHUNK, key)]
                cached = Passage(key, data["text"], data["doc_id"], data["metadata"])
            passages[key] = cached
        # one str object per key: node_key slices a new string per call (a chunk id is read
        # once per unit, an entity name once per mention)
        # seeded with the in-memory vector layers' ids: the view keeps no strings of its own
        shared: dict[str, str] = {}
        for index in store.vectors.values():
            if isinstance(index, InMemoryVectorIndex):
                shared.update((key, key) for key in index.ids)
        passages = {shared.setdefault(key, key): p for key, p in passages.items()}

        def key_of(node: str) -> str:
            key = node_key(node)
            return shared.setdefault(key, key)

        units: list[KnowledgeUnit] = []
        unit_nodes = graph.nodes(UNIT)
        unit_data = graph.nodes_data(unit_nodes)
        chunk_of = graph.neighbors_many(unit_nodes, CONTAINS, direction="in")
        mentioned = graph.neighbors_many(unit_nodes, MENTIONS)
        for node in unit_nodes:
            chunk = chunk_of[node]
            if not chunk or node_key(chunk[0]) not in passages:
                # a unit of a chunk written after the chunks were listed: another process
                # writes the shared graph (a reader answers from its own documents only,
                # :mod:`~graphrag_integrations.core.index.snapshot`); the view is the graph as
                # of its chunk list
                continue
            data = unit_data[node]
            units.append(
                KnowledgeUnit(
                    id=key_of(node),
                    text=data["text"],
                    passage_id=key_of(chunk[0]),
                    doc_id=data["doc_id"],
                    entities=tuple(key_of(e) for e in mentioned[node]),
                    source=data["source"],
                )
            )
        new.dimension = store.dimension
        new.passages = passages
        new.units = units
        new.passage_ids = list(passages)
        new.passage_row = {pid: i for i, pid in enumerate(new.passage_ids)}
        new.unit_ids = [u.id for u in units]
        new.unit_row = {uid: i for i, uid in enumerate(new.unit_ids)}
        new.unit_passage = np.array([new.passage_row[u.passage_id] for u in units], dtype=np.int64)
        names: dict[str, int] = {}
        for u in units:
            for name in u.entities:
                names.setdefault(name, len(names))
        new.entity_names = list(names)
        new.entity_row = names
        labels = {
            n: label
            for n in names
            if (label := None if n in stale[ENTITY] else old.entity_labels.get(n)) is not None
        }
        unlabelled = graph.nodes_data(node_id(ENTITY, n) for n in names if n not in labels)
        new.entity_labels = {
            n: labels[n] if n in labels else unlabelled[node_id(ENTITY, n)]["label"] for n in names
        }
        entity_units: list[list[int]] = [[] for _ in names]
        unit_entities: list[list[int]] = []
        for i, u in enumerate(units):
            rows = [names[n] for n in u.entities]
            for r in rows:
                entity_units[r].append(i)
            unit_entities.append(rows)
        new.unit_entities = RaggedRows(unit_entities)
        new.entity_units = RaggedRows(entity_units)
        new.passage_matrix = new._gather(
            store, CHUNK, new.passage_ids, old.passage_row, old.passage_matrix, stale[CHUNK]
        )
        new.unit_matrix = new._gather(
            store, UNIT, new.unit_ids, old.unit_row, old.unit_matrix, stale[UNIT]
        )
        new.entity_matrix = new._gather(
            store, ENTITY, new.entity_names, old.entity_row, old.entity_matrix, stale[ENTITY]
        )
        new.unit_terms = TermStats.from_texts([u.text for u in units])
        new.passage_terms = TermStats.from_texts([passages[p].text for p in new.passage_ids])
        release_free_heap()  # the build's temporaries (token lists, edge lists)
        return new

    def _gather(
        self,
        store: IndexStore,
        kind: str,
        keys: list[str],
        old_row: dict[str, int],
        old_matrix: FloatMatrix,
        stale: set[str],
    ) -> FloatMatrix:
        """Matrix of ``keys``: the store's own in-memory matrix when it holds exactly these
        rows (a read-only view shared with the store, no copy), else cached rows where known
        and not ``stale``, and the rest read from the store."""
        shared = store.shared_embeddings(kind, keys)
        if shared is not None:
            return shared
        out = np.zeros((len(keys), self.dimension), dtype=np.float32)
        new = [i for i, k in enumerate(keys) if k not in old_row or k in stale]
        cached = [i for i, k in enumerate(keys) if k in old_row and k not in stale]
        if cached:
            out[cached] = old_matrix[[old_row[keys[i]] for i in cached]]
        if new:
            out[new] = store.embeddings(kind, [keys[i] for i in new])
        return out
