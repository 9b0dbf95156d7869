"""Q-Iter's flat, derived view of the Clue-Index: chunks -> knowledge units -> entities.

The source of truth is :class:`~graphrag_integrations.methods.clue.stores.ClueStore` (core
``GraphStore`` + core vector indexes). :class:`ClueGraph` turns it into arrays tuned for the
beam search: one row per chunk / unit / entity, the L2-normalised vectors stacked into
matrices, the two edge sets (chunk-unit ``E_C`` and unit-entity ``E_E``) as index lists in
both directions, and the term statistics the lexical half of the default path scorer needs.
It is rebuilt after every mutation without re-embedding anything.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from graphrag_integrations.core.embeddings import FloatMatrix
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.clue.stores import CHUNK, ENTITY, UNIT, node_id, node_key

if TYPE_CHECKING:
    from graphrag_integrations.methods.clue.stores import ClueStore

_TOKEN = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens used by the lexical scorer (index and query side alike).

    Examples
    --------
    >>> tokenize("Who founded Nottingham Forest F.C.?")
    ['who', 'founded', 'nottingham', 'forest', 'f', 'c']
    """
    return _TOKEN.findall(text.casefold())


@dataclass(frozen=True)
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


@dataclass
class TermStats:
    """Bag-of-words statistics of one collection (units or chunks) for BM25."""

    counts: list[Counter[str]] = field(default_factory=list)
    lengths: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    df: Counter[str] = field(default_factory=Counter)

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]]) -> TermStats:
        counts = [Counter(toks) for toks in token_lists]
        df: Counter[str] = Counter()
        for c in counts:
            df.update(c.keys())
        lengths = np.array([sum(c.values()) for c in counts], dtype=np.float64)
        return cls(counts, lengths, df)

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
    """Q-Iter's flat view of a :class:`~graphrag_integrations.methods.clue.stores.ClueStore`.

    A derived, rebuildable cache (:meth:`refresh`): rows of chunks / units / entities, the
    two edge sets as index arrays in both directions, the vectors stacked into matrices and
    the BM25 term statistics. Rows follow the graph's insertion order (chunks, units) and
    entity rows follow their first mention among the units, so the layout after ``insert`` +
    ``delete`` is exactly the layout of a graph built without the deleted document.

    Examples
    --------
    >>> g = ClueGraph()
    >>> g.n_units
    0
    """

    def __init__(self) -> None:
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
        self.unit_entities: list[np.ndarray] = []
        self.entity_units: list[np.ndarray] = []
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

    # -- rebuilding -----------------------------------------------------------------------
    def refresh(self, store: ClueStore) -> None:
        """Recompute every row, array and statistic from ``store``.

        Vectors already cached are reused; only those of new ids are read from the store's
        vector indexes (a round trip per layer, cheap even for a remote backend).
        """
        nx_graph = store.graph_store.graph
        nodes = nx_graph.nodes
        previous = self.passages
        passages: dict[str, Passage] = {}
        units: list[KnowledgeUnit] = []
        for node, kind in nodes(data="type"):
            if kind == CHUNK:
                key = node_key(node)
                data = nodes[node]
                passages[key] = previous.get(key) or Passage(
                    key, data["text"], data["doc_id"], data["metadata"]
                )
            elif kind == UNIT:
                data = nodes[node]
                units.append(
                    KnowledgeUnit(
                        id=node_key(node),
                        text=data["text"],
                        passage_id=node_key(next(iter(nx_graph.pred[node]))),
                        doc_id=data["doc_id"],
                        entities=tuple(node_key(e) for e in nx_graph.succ[node]),
                        source=data["source"],
                    )
                )
        old_vectors = {
            CHUNK: (self.passage_row, self.passage_matrix),
            UNIT: (self.unit_row, self.unit_matrix),
            ENTITY: (self.entity_row, self.entity_matrix),
        }
        self.dimension = store.dimension
        self.passages = passages
        self.units = units
        self.passage_ids = list(passages)
        self.passage_row = {pid: i for i, pid in enumerate(self.passage_ids)}
        self.unit_ids = [u.id for u in units]
        self.unit_row = {uid: i for i, uid in enumerate(self.unit_ids)}
        self.unit_passage = np.array(
            [self.passage_row[u.passage_id] for u in units], dtype=np.int64
        )
        names: dict[str, int] = {}
        for u in units:
            for name in u.entities:
                names.setdefault(name, len(names))
        self.entity_names = list(names)
        self.entity_row = names
        self.entity_labels = {n: nodes[node_id(ENTITY, n)]["label"] for n in names}
        entity_units: list[list[int]] = [[] for _ in names]
        self.unit_entities = []
        for i, u in enumerate(units):
            rows = [names[n] for n in u.entities]
            for r in rows:
                entity_units[r].append(i)
            self.unit_entities.append(np.array(rows, dtype=np.int64))
        self.entity_units = [np.array(r, dtype=np.int64) for r in entity_units]
        self.passage_matrix = self._gather(store, CHUNK, self.passage_ids, *old_vectors[CHUNK])
        self.unit_matrix = self._gather(store, UNIT, self.unit_ids, *old_vectors[UNIT])
        self.entity_matrix = self._gather(store, ENTITY, self.entity_names, *old_vectors[ENTITY])
        self.unit_terms = TermStats.build(tokenize(u.text) for u in units)
        self.passage_terms = TermStats.build(tokenize(passages[p].text) for p in self.passage_ids)

    def _gather(
        self,
        store: ClueStore,
        kind: str,
        keys: list[str],
        old_row: dict[str, int],
        old_matrix: FloatMatrix,
    ) -> FloatMatrix:
        """Matrix of ``keys``: cached rows where known, the rest read from the store."""
        out = np.zeros((len(keys), self.dimension), dtype=np.float32)
        new = [i for i, k in enumerate(keys) if k not in old_row]
        cached = [i for i, k in enumerate(keys) if k in old_row]
        if cached:
            out[cached] = old_matrix[[old_row[keys[i]] for i in cached]]
        if new:
            out[new] = store.embeddings(kind, [keys[i] for i in new])
        return out
