"""The Clue-Index multi-partite graph: chunks -> knowledge units -> entities.

Held as flat arrays tuned for Q-Iter: one row per chunk / unit / entity, the cached
L2-normalised vectors stacked into matrices, the two edge sets (chunk-unit ``E_C`` and
unit-entity ``E_E``) as index lists in both directions, and the term statistics the lexical
half of the default path scorer needs. Vectors are kept per id, so a mutation rebuilds the
matrices without re-embedding anything, and the layout after ``insert`` + ``delete`` is exactly
the layout of a graph built without the deleted document (rows follow insertion order, entity
rows follow their first mention among the remaining units).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from graphrag_integrations.core.embeddings import FloatMatrix
from graphrag_integrations.core.types import Passage

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
    """The three node layers, the two edge sets and the cached vectors.

    Examples
    --------
    >>> g = ClueGraph()
    >>> g.n_units
    0
    """

    def __init__(self) -> None:
        self.passages: dict[str, Passage] = {}
        self.units: list[KnowledgeUnit] = []
        self.unit_vectors: dict[str, FloatMatrix] = {}
        self.entity_vectors: dict[str, FloatMatrix] = {}
        self.passage_vectors: dict[str, FloatMatrix] = {}
        self.entity_labels: dict[str, str] = {}
        self.dimension = 0
        self._rebuild()

    # -- sizes ----------------------------------------------------------------------------
    @property
    def n_units(self) -> int:
        return len(self.units)

    @property
    def n_entities(self) -> int:
        return len(self.entity_names)

    # -- mutation -------------------------------------------------------------------------
    def add(
        self,
        passages: Sequence[Passage],
        units: Sequence[KnowledgeUnit],
        *,
        passage_vectors: dict[str, FloatMatrix],
        unit_vectors: dict[str, FloatMatrix],
        entity_vectors: dict[str, FloatMatrix],
        entity_labels: dict[str, str],
    ) -> None:
        """Append chunks and their units; vectors for every new id must be supplied."""
        for p in passages:
            self.passages[p.id] = p
        self.units.extend(units)
        self.passage_vectors.update(passage_vectors)
        self.unit_vectors.update(unit_vectors)
        for name, vec in entity_vectors.items():
            self.entity_vectors.setdefault(name, vec)
        for name, label in entity_labels.items():
            self.entity_labels.setdefault(name, label)
        self._rebuild()

    def remove_doc(self, doc_id: str) -> int:
        """Drop every chunk, unit and orphaned entity of ``doc_id``; returns chunks removed."""
        gone = [pid for pid, p in self.passages.items() if p.doc_id == doc_id]
        for pid in gone:
            del self.passages[pid]
            self.passage_vectors.pop(pid, None)
        kept = [u for u in self.units if u.doc_id != doc_id]
        for u in self.units:
            if u.doc_id == doc_id:
                self.unit_vectors.pop(u.id, None)
        self.units = kept
        self._rebuild()
        alive = set(self.entity_names)
        for name in [n for n in self.entity_vectors if n not in alive]:
            del self.entity_vectors[name]
            self.entity_labels.pop(name, None)
        return len(gone)

    def _rebuild(self) -> None:
        """Recompute rows, adjacency, matrices and term statistics from the id-keyed data."""
        self.passage_ids: list[str] = list(self.passages)
        self.passage_row = {pid: i for i, pid in enumerate(self.passage_ids)}
        self.unit_ids = [u.id for u in self.units]
        self.unit_row = {uid: i for i, uid in enumerate(self.unit_ids)}
        self.unit_passage = np.array(
            [self.passage_row[u.passage_id] for u in self.units], dtype=np.int64
        )
        names: dict[str, int] = {}
        for u in self.units:
            for name in u.entities:
                names.setdefault(name, len(names))
        self.entity_names: list[str] = list(names)
        self.entity_row = names
        entity_units: list[list[int]] = [[] for _ in names]
        self.unit_entities: list[np.ndarray] = []
        for i, u in enumerate(self.units):
            rows = [names[n] for n in dict.fromkeys(u.entities)]
            for r in rows:
                entity_units[r].append(i)
            self.unit_entities.append(np.array(rows, dtype=np.int64))
        self.entity_units = [np.array(r, dtype=np.int64) for r in entity_units]
        self.unit_matrix = self._stack([self.unit_vectors[u] for u in self.unit_ids])
        self.entity_matrix = self._stack([self.entity_vectors[n] for n in self.entity_names])
        self.passage_matrix = self._stack([self.passage_vectors[p] for p in self.passage_ids])
        self.unit_terms = TermStats.build(tokenize(u.text) for u in self.units)
        self.passage_terms = TermStats.build(
            tokenize(self.passages[p].text) for p in self.passage_ids
        )

    def _stack(self, vecs: list[FloatMatrix]) -> FloatMatrix:
        if vecs:
            self.dimension = int(vecs[0].shape[0])
            return np.vstack(vecs).astype(np.float32, copy=False)
        return np.zeros((0, self.dimension), dtype=np.float32)
