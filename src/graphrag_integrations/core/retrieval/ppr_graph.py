"""A passage-entity graph as sparse matrices (scipy), and its synonym edges: what a
personalized-PageRank ranking walks (the ``ppr`` baseline's graph, and Clue-RAG's global
ranking over its own chunks and entities).

Nodes are the passages (rows ``0 .. n-1``, corpus order) then the entities (``n .. n+E-1``).
Edges are undirected: passage - entity (weight 1) for every entity a passage mentions, and
entity - entity (weight: the cosine) for every synonym pair (HippoRAG 2's graph without the
triple edges, which need OpenIE). :class:`PPRGraph` is a derived view of an index's state,
rebuilt after a mutation; :meth:`PPRGraph.view` restricts it to the passages a metadata filter
keeps (and the entities they mention), so a filtered walk never crosses another passage.

Examples
--------
>>> import numpy as np
>>> ents = [PassageEntities(("paris", "france"), (("paris", "france"),)),
...         PassageEntities(("rome",), (("rome",),))]
>>> vecs = {"paris": np.array([1.0, 0.0]), "france": np.array([0.0, 1.0]),
...         "rome": np.array([0.6, 0.8])}
>>> g = PPRGraph.build(ents, vecs, np.zeros((2, 2), dtype=np.float32), {})
>>> g.entity_names, g.adjacency.toarray()[0].tolist()
(['paris', 'france', 'rome'], [0.0, 0.0, 1.0, 1.0, 0.0])
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.retrieval.pagerank import transition_matrix
from graphrag_integrations.core.retrieval.similar_pairs import similar_pairs

__all__ = [
    "GraphView",
    "PPRGraph",
    "PassageEntities",
    "SynonymPairs",
    "binary_matrix",
    "synonym_pairs",
]

#: Synonym edges: ``(name, name) -> cosine`` with the two names in sorted order.
SynonymPairs = dict[tuple[str, str], float]
BoolVector = npt.NDArray[np.bool_]

_ALNUM = re.compile(r"[^\w]|_", re.UNICODE)


@dataclass(frozen=True)
class PassageEntities:
    """The entities of one passage: all of them (first mention order) and each fact's.

    Examples
    --------
    >>> PassageEntities(("paris", "france"), (("paris", "france"),)).names
    ('paris', 'france')
    """

    names: tuple[str, ...]
    facts: tuple[tuple[str, ...], ...] = ()


def _long_enough(name: str, min_chars: int) -> bool:
    return len(_ALNUM.sub("", name)) >= min_chars


def synonym_pairs(
    new: Sequence[str],
    names: Sequence[str],
    vectors: Mapping[str, FloatMatrix],
    threshold: float,
    min_chars: int,
) -> SynonymPairs:
    """The synonym edges between the ``new`` names and all ``names`` (``new`` among them).

    Two distinct names are synonyms when the cosine of their vectors is at least
    ``threshold`` and both have at least ``min_chars`` letters or digits (HippoRAG 2: 0.8,
    more than two). The result does not depend on the order names were added in, so an
    index grown by inserts has the edges of a fresh build.

    Examples
    --------
    >>> import numpy as np
    >>> vecs = {"usa": np.array([1.0, 0.0]), "u.s.a": np.array([0.96, 0.28]),
    ...         "us": np.array([1.0, 0.0])}
    >>> synonym_pairs(["u.s.a"], ["usa", "u.s.a", "us"], vecs, 0.8, 3)
    {('u.s.a', 'usa'): 0.96}
    """
    left = [n for n in dict.fromkeys(new) if _long_enough(n, min_chars)]
    right = [n for n in dict.fromkeys(names) if _long_enough(n, min_chars)]
    if not left or not right:
        return {}
    rows, cols, sims = similar_pairs(
        np.stack([vectors[n] for n in left]), np.stack([vectors[n] for n in right]), threshold
    )
    pairs: SynonymPairs = {}
    for r, c, s in zip(rows.tolist(), cols.tolist(), sims.tolist(), strict=True):
        a, b = left[r], right[c]
        if a != b:
            pairs[(a, b) if a < b else (b, a)] = round(float(s), 6)
    return pairs


@dataclass(frozen=True)
class GraphView:
    """The graph a query walks: all of it, or the part a filter keeps.

    Attributes
    ----------
    passages, entities, facts : numpy.ndarray of bool
        Which passages, entities (mentioned by a kept passage) and facts (of a kept passage)
        are in the view.
    occurrences : numpy.ndarray of float
        Per entity, the kept passages it occurs in.
    transition : scipy.sparse.csr_matrix
        ``P^T`` of the kept subgraph (see
        :func:`~graphrag_integrations.core.retrieval.pagerank.transition_matrix`).
    """

    passages: BoolVector
    entities: BoolVector
    facts: BoolVector
    occurrences: npt.NDArray[np.float64]
    transition: sp.csr_matrix


@dataclass(frozen=True)
class PPRGraph:
    """Sparse matrices of the passage-entity graph (see the module docstring).

    Attributes
    ----------
    entity_names : list of str
        Entity of each entity row (first mention order).
    entity_vectors : numpy.ndarray, shape (E, d)
        Their name vectors.
    incidence : scipy.sparse.csr_matrix, shape (n, E)
        1 where a passage mentions an entity.
    fact_entities : scipy.sparse.csr_matrix, shape (S, E)
        1 where a fact (sentence) mentions an entity.
    fact_passages : numpy.ndarray of int, shape (S,)
        The passage row of each fact.
    fact_vectors : numpy.ndarray, shape (S, d)
        The fact vectors (passage order).
    adjacency : scipy.sparse.csr_matrix, shape (n + E, n + E)
        Symmetric edge weights.
    """

    entity_names: list[str]
    entity_vectors: FloatMatrix
    incidence: sp.csr_matrix
    fact_entities: sp.csr_matrix
    fact_passages: npt.NDArray[np.int64]
    fact_vectors: FloatMatrix
    adjacency: sp.csr_matrix
    full: GraphView

    @property
    def n_passages(self) -> int:
        """Passage rows."""
        return int(self.incidence.shape[0])

    @property
    def entity_rows(self) -> dict[str, int]:
        """Entity name -> entity row."""
        return {name: i for i, name in enumerate(self.entity_names)}

    @classmethod
    def build(
        cls,
        entities: Sequence[PassageEntities],
        entity_vectors: Mapping[str, FloatMatrix],
        fact_vectors: FloatMatrix,
        synonyms: Mapping[tuple[str, str], float],
    ) -> PPRGraph:
        """The matrices of an index's state: per passage its entities, the name vectors, the
        fact vectors (passage order) and the synonym pairs."""
        names = list(dict.fromkeys(n for e in entities for n in e.names))
        rows = {name: i for i, name in enumerate(names)}
        n, n_ent = len(entities), len(names)
        facts = [fact for e in entities for fact in e.facts]
        fact_entities = binary_matrix(
            ((f, rows[name]) for f, fact in enumerate(facts) for name in fact),
            (len(facts), n_ent),
        )
        fact_passages = np.fromiter(
            (i for i, e in enumerate(entities) for _ in e.facts), dtype=np.int64, count=len(facts)
        )
        incidence = binary_matrix(
            ((i, rows[name]) for i, e in enumerate(entities) for name in e.names), (n, n_ent)
        )
        dim = fact_vectors.shape[1] if fact_vectors.ndim == 2 else 0
        vectors = (
            np.stack([np.asarray(entity_vectors[name], dtype=np.float32) for name in names])
            if names
            else np.zeros((0, dim), dtype=np.float32)
        )
        return cls.from_arrays(
            names, vectors, incidence, fact_entities, fact_passages, fact_vectors, synonyms
        )

    @classmethod
    def from_arrays(
        cls,
        entity_names: list[str],
        entity_vectors: FloatMatrix,
        incidence: sp.csr_matrix,
        fact_entities: sp.csr_matrix,
        fact_passages: npt.NDArray[np.int64],
        fact_vectors: FloatMatrix,
        synonyms: Mapping[tuple[str, str], float],
    ) -> PPRGraph:
        """The graph of rows already laid out: entity names and vectors (rows), the 0/1
        passage-entity ``incidence`` (passages x entities), the fact rows (facts x entities)
        with the passage of each fact and their vectors, and the synonym pairs by name.

        Examples
        --------
        >>> import numpy as np, scipy.sparse as sp
        >>> one = sp.csr_matrix(np.ones((1, 1)))
        >>> g = PPRGraph.from_arrays(["a"], np.ones((1, 2), np.float32), one, one,
        ...                          np.zeros(1, np.int64), np.ones((1, 2), np.float32), {})
        >>> g.n_passages, g.adjacency.toarray().tolist()
        (1, [[0.0, 1.0], [1.0, 0.0]])
        """
        rows = {name: i for i, name in enumerate(entity_names)}
        n, n_ent = incidence.shape
        adjacency = _adjacency(
            incidence,
            [(rows[a], rows[b], w) for (a, b), w in synonyms.items() if a in rows and b in rows],
        )
        everything = GraphView(
            np.ones(n, dtype=np.bool_),
            np.ones(n_ent, dtype=np.bool_),
            np.ones(fact_entities.shape[0], dtype=np.bool_),
            np.asarray(incidence.sum(axis=0), dtype=np.float64).ravel(),
            transition_matrix(adjacency),
        )
        return cls(
            entity_names,
            np.asarray(entity_vectors, dtype=np.float32),
            sp.csr_matrix(incidence, dtype=np.float64),
            sp.csr_matrix(fact_entities, dtype=np.float64),
            np.asarray(fact_passages, dtype=np.int64),
            np.asarray(fact_vectors, dtype=np.float32),
            adjacency,
            everything,
        )

    def view(self, passages: BoolVector | None = None) -> GraphView:
        """The whole graph (``None``), or the subgraph of the ``passages`` kept and the
        entities they mention (a fresh index of those passages has the same graph)."""
        if passages is None:
            return self.full
        keep = np.asarray(passages, dtype=np.bool_)
        occurrences = np.asarray(
            self.incidence.T @ keep.astype(np.float64), dtype=np.float64
        ).ravel()
        entities = occurrences > 0
        nodes = np.concatenate([keep, entities]).astype(np.float64)
        mask = sp.diags(nodes)
        restricted = sp.csr_matrix(mask @ self.adjacency @ mask)
        restricted.eliminate_zeros()
        return GraphView(
            keep,
            entities,
            keep[self.fact_passages] if self.fact_passages.size else np.zeros(0, dtype=np.bool_),
            occurrences,
            transition_matrix(restricted),
        )


def _adjacency(
    incidence: sp.csr_matrix, synonyms: Sequence[tuple[int, int, float]]
) -> sp.csr_matrix:
    """The symmetric adjacency of passages (``incidence`` rows) and entities (its columns)
    with the ``(entity, entity, weight)`` synonym edges."""
    n, n_ent = incidence.shape
    links = incidence.tocoo()
    rows = [links.row, np.array([a for a, _, _ in synonyms], dtype=np.int64) + n]
    cols = [links.col + n, np.array([b for _, b, _ in synonyms], dtype=np.int64) + n]
    data = [links.data, np.array([w for _, _, w in synonyms], dtype=np.float64)]
    size = n + n_ent
    upper = sp.csr_matrix(
        (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(size, size)
    )
    return sp.csr_matrix(upper + upper.T)


def binary_matrix(pairs: Iterable[tuple[int, int]], shape: tuple[int, int]) -> sp.csr_matrix:
    """A 0/1 sparse matrix with ones at ``pairs`` (each pair once)."""
    coords = np.array(list(pairs), dtype=np.int64).reshape(-1, 2)
    data = np.ones(coords.shape[0], dtype=np.float64)
    return sp.csr_matrix((data, (coords[:, 0], coords[:, 1])), shape=shape)
