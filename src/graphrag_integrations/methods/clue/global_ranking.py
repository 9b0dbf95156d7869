"""Clue-RAG's global ranking: personalized PageRank over the Clue-Index's own chunks and
entities, fused with Q-Iter's chunk ranking.

Q-Iter reaches the chunks its beam walks through (5-7 a question), so a gold chunk off every
kept path is found only by the top-up. The global ranking reaches every chunk: the graph
HippoRAG 2 (arXiv 2502.14802) walks, made of what the Clue-Index already holds (no extra
extraction or embedding at build time):

* nodes: the chunks and the entity nodes; edges: chunk - entity (weight 1) when a knowledge
  unit of the chunk mentions the entity, entity - entity (weight: the cosine) for every pair
  of entity vectors from ``ppr_synonym_threshold`` (both names of at least
  :data:`SYNONYM_MIN_CHARS` letters or digits);
* seeds (:func:`~graphrag_integrations.core.retrieval.ppr_seeds.query_seeds`, the ``ppr``
  baseline's mechanism): the entities of the knowledge units most similar to the question
  (the "facts"), the query entities linked to their nearest entity nodes and LinearRAG's
  activation from them, and every chunk with its cosine to the question times
  ``ppr_passage_node_weight``; the chunks Q-Iter reached add their min-max normalised
  Q-Iter score times ``ppr_reached_weight``;
* the walk: :func:`~graphrag_integrations.core.retrieval.pagerank.personalized_pagerank`.

The matrices are a derived view of the index's store (:class:`RankingGraph`, rebuilt on the
first query after a change, reusing the synonym edges of the names that stayed), built from
Q-Iter's flat :class:`~graphrag_integrations.methods.clue.graph.ClueGraph`: with a database
graph (FalkorDB) that is one read of the whole graph per index version. A filtered query
walks the subgraph of the allowed chunks and the entities they mention
(:meth:`~graphrag_integrations.core.retrieval.ppr_graph.PPRGraph.view`, cached per filter),
so no other chunk's entity carries mass.

:func:`fuse` merges the two rankings (reciprocal rank, see :data:`FUSIONS`);
:func:`keep_leader` puts Q-Iter's first chunk back first when its score is far ahead
(``ppr_keep_margin``: a single-hop question's own passage is not displaced by a chunk the
walk favours).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.retrieval.filter_scope import FilterCache, FilterScope
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.core.retrieval.pagerank import personalized_pagerank
from graphrag_integrations.core.retrieval.ppr_graph import (
    GraphView,
    PPRGraph,
    SynonymPairs,
    synonym_pairs,
)
from graphrag_integrations.core.retrieval.ppr_seeds import query_seeds
from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.methods.clue.graph import ClueGraph
from graphrag_integrations.methods.clue.params import ClueQueryParams
from graphrag_integrations.methods.clue.walk_scope import scope_passages, scoped_pagerank

__all__ = [
    "FUSIONS",
    "SYNONYM_MIN_CHARS",
    "GlobalRanking",
    "RankingGraph",
    "SeedSettings",
    "fuse",
    "keep_leader",
    "ranking_graph",
]

#: Entity names with fewer letters or digits get no synonym edge (HippoRAG 2: more than two).
SYNONYM_MIN_CHARS = 3
#: How :func:`fuse` merges Q-Iter's ranking with the global one.
FUSIONS = ("rrf",)

FloatVector = npt.NDArray[np.float64]
BoolVector = npt.NDArray[np.bool_]
Fusion = Literal["rrf"]


@dataclass(frozen=True)
class SeedSettings:
    """The ``ppr_*`` seed options of :class:`ClueQueryParams` under the names
    :class:`~graphrag_integrations.core.retrieval.ppr_seeds.SeedOptions` reads.

    Examples
    --------
    >>> SeedSettings.of(ClueQueryParams(ppr_fact_top_k=7)).fact_top_k
    7
    """

    fact_top_k: int
    fact_weight: float
    link_weight: float
    link_k: int
    link_threshold: float
    linking_top_k: int
    specificity: bool
    passage_seeds: int
    passage_node_weight: float
    activation_steps: int
    activation_threshold: float

    @classmethod
    def of(cls, params: ClueQueryParams) -> SeedSettings:
        """The seed settings of Q-Iter's query params."""
        return cls(
            params.ppr_fact_top_k,
            params.ppr_fact_weight,
            params.ppr_link_weight,
            params.ppr_link_k,
            params.ppr_link_threshold,
            params.ppr_linking_top_k,
            params.ppr_specificity,
            params.ppr_passage_seeds,
            params.ppr_passage_node_weight,
            params.ppr_activation_steps,
            params.ppr_activation_threshold,
        )


@dataclass(frozen=True)
class RankingGraph:
    """The chunk-entity graph of one store version and synonym threshold.

    Rows are those of the :class:`ClueGraph` it was built from: chunk rows are the passage
    rows, entity rows the entity rows, facts the knowledge units.
    """

    graph: PPRGraph
    synonyms: SynonymPairs
    passage_ids: list[str]
    filters: FilterCache[GraphView]

    @classmethod
    def build(
        cls, clue: ClueGraph, threshold: float, previous: RankingGraph | None = None
    ) -> RankingGraph:
        """The matrices of ``clue``; the synonym edges of names already in ``previous`` are
        kept (only the new names are compared with all), so an index grown by inserts has
        the edges of a fresh build."""
        names = clue.entity_names
        n, n_ent, n_units = len(clue.passage_ids), len(names), clue.n_units
        mentions = [clue.unit_entities[u] for u in range(n_units)]
        sizes = np.fromiter((m.size for m in mentions), dtype=np.int64, count=n_units)
        flat = np.concatenate(mentions) if n_units else np.zeros(0, dtype=np.int64)
        units = np.repeat(np.arange(n_units, dtype=np.int64), sizes)
        fact_entities = _binary(units, flat, (n_units, n_ent))
        incidence = _binary(clue.unit_passage[units], flat, (n, n_ent))
        vectors = clue.entity_matrix
        known: set[str] = set()
        kept: SynonymPairs = {}
        if previous is not None:
            rows = set(names)
            known = set(previous.graph.entity_names) & rows
            kept = {p: w for p, w in previous.synonyms.items() if p[0] in rows and p[1] in rows}
        new = [name for name in names if name not in known]
        by_name = {name: vectors[i] for i, name in enumerate(names)}
        kept.update(synonym_pairs(new, names, by_name, threshold, SYNONYM_MIN_CHARS))
        graph = PPRGraph.from_arrays(
            list(names),
            vectors,
            incidence,
            fact_entities,
            clue.unit_passage,
            clue.unit_matrix,
            kept,
        )
        return cls(graph, kept, list(clue.passage_ids), FilterCache())

    def view(self, where: MetadataFilter | None, scope: FilterScope | None) -> GraphView:
        """The whole graph (no filter), or the subgraph of the chunks ``scope`` allows
        (cached per filter)."""
        if where is None or scope is None:
            return self.graph.full

        def restricted() -> GraphView:
            keep = np.fromiter(
                (pid in scope.passages for pid in self.passage_ids),
                dtype=np.bool_,
                count=len(self.passage_ids),
            )
            return self.graph.view(keep)

        return self.filters.get(where, restricted)


def _binary(
    rows: npt.NDArray[np.int64], cols: npt.NDArray[np.int64], shape: tuple[int, int]
) -> sp.csr_matrix:
    """A 0/1 matrix with ones at ``(rows, cols)`` (repeated pairs count once)."""
    matrix = sp.csr_matrix(
        (np.ones(rows.size, dtype=np.float64), (rows, cols)), shape=shape, dtype=np.float64
    )
    matrix.sum_duplicates()
    matrix.data[:] = 1.0
    return matrix


def ranking_graph(store: IndexStore, clue: ClueGraph, threshold: float) -> RankingGraph:
    """The store's derived :class:`RankingGraph` at ``threshold`` (``clue``: its flat view of
    the same version)."""

    def build(_: IndexStore, previous: RankingGraph | None) -> RankingGraph:
        return RankingGraph.build(clue, threshold, previous)

    return store.derived(f"clue-ppr:{threshold:g}", build)


@dataclass(frozen=True)
class GlobalRanking:
    """One query's personalized PageRank mass per chunk row (0 outside the view).

    ``seeded`` is ``False`` when no entity got a seed (then the ranking is the chunks' cosine
    to the question, HippoRAG 2's fallback, and :func:`fuse` ignores it); ``entity_mass``: the
    walk's mass per entity of the ranking graph (empty when not seeded).
    """

    mass: FloatVector
    seeded: bool
    seed_entities: list[str]
    entity_mass: FloatVector = field(default_factory=lambda: np.zeros(0, dtype=np.float64))

    @classmethod
    def of(
        cls,
        ranking: RankingGraph,
        view: GraphView,
        params: ClueQueryParams,
        question: FloatMatrix,
        mentions: FloatMatrix,
        chunk_vectors: FloatMatrix,
        reached: Mapping[int, float] | None = None,
    ) -> GlobalRanking:
        """The walk of one query: ``question`` (its vector), ``mentions`` (a vector per
        query entity), the chunks' vectors (rows of the graph) and Q-Iter's score of the
        chunks it reached (by row; min-max normalised, times ``ppr_reached_weight``, they
        add to the chunk seeds)."""
        graph = ranking.graph
        dense = np.asarray(chunk_vectors @ question, dtype=np.float64)
        facts = np.asarray(graph.fact_vectors @ question, dtype=np.float64)
        seeds = query_seeds(graph, view, SeedSettings.of(params), dense, facts, mentions)
        if not seeds.entities.any():
            return cls(np.where(view.passages, dense, 0.0), False, [])
        chunks = seeds.passages
        rows = np.fromiter(reached or (), dtype=np.int64, count=len(reached or ()))
        if reached and params.ppr_reached_weight > 0:
            scores = np.fromiter(reached.values(), dtype=np.float64, count=len(reached))
            low, high = float(scores.min()), float(scores.max())
            share = (scores - low) / (high - low) if high > low else np.ones_like(scores)
            chunks = chunks.copy()
            chunks[rows] += params.ppr_reached_weight * share * view.passages[rows]
        restart = np.concatenate([chunks, seeds.entities])
        if params.ppr_scope_hops > 0:  # methods.clue.walk_scope: the seeds' neighbourhood only
            if params.ppr_passage_seeds > 0:
                rows = np.concatenate([rows, np.flatnonzero(seeds.passages)])
            keep = scope_passages(graph, view, seeds.entities, rows, params.ppr_scope_hops)
            mass = scoped_pagerank(graph, view, keep, restart, params.ppr_damping)
        else:
            mass = personalized_pagerank(view.transition, restart, damping=params.ppr_damping)
        named = [graph.entity_names[e] for e in top_k(seeds.entities, 5) if seeds.entities[e] > 0]
        chunk_mass = np.where(view.passages, mass[: graph.n_passages], 0.0)
        return cls(chunk_mass, True, named, mass[graph.n_passages :])

    def top(self, k: int) -> list[int]:
        """The ``k`` chunk rows of most mass, best first (no mass: none)."""
        rows = np.flatnonzero(self.mass > 0)
        return [int(rows[i]) for i in top_k(self.mass[rows], k)]


def fuse(
    qiter: Sequence[int], global_rows: Sequence[int], weight: float, rrf_k: float, k: int
) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion of Q-Iter's chunk ranking (``qiter``, best first) and the
    global one (``global_rows``, best first): a chunk scores ``1 / (rrf_k + rank)`` from
    Q-Iter plus ``weight / (rrf_k + rank)`` from the global ranking (ranks from 1; absent
    from a ranking: nothing from it). Returns the ``k`` best ``(row, score)``, ties in
    Q-Iter's order, then the global one's.

    Examples
    --------
    >>> [row for row, _ in fuse([1, 2, 3], [3, 4], 1.0, 1.0, 3)]
    [3, 1, 2]
    >>> [row for row, _ in fuse([1, 2, 3], [3, 4], 0.0, 1.0, 3)]
    [1, 2, 3]
    """
    scores: dict[int, float] = {}
    for rank, row in enumerate(qiter, start=1):
        scores[row] = scores.get(row, 0.0) + 1.0 / (rrf_k + rank)
    for rank, row in enumerate(global_rows, start=1):
        scores[row] = scores.get(row, 0.0) + weight / (rrf_k + rank)
    order = list(scores)  # insertion order: Q-Iter's, then the global ranking's
    ranked = sorted(range(len(order)), key=lambda i: (-scores[order[i]], i))
    return [(order[i], scores[order[i]]) for i in ranked[:k]]


def keep_leader(
    fused: Sequence[tuple[int, float]],
    qiter: Sequence[int],
    scores: Mapping[int, float],
    margin: float | None,
) -> list[tuple[int, float]]:
    """The fused ranking with Q-Iter's first chunk first when its Q-Iter score leads Q-Iter's
    second by at least ``margin`` (``scores``: Q-Iter's score by row; the kept chunk takes
    the best fused score). Otherwise (``margin`` ``None``, fewer than two Q-Iter chunks, a
    smaller lead) ``fused`` as is; the length stays that of ``fused`` (a chunk moved up from
    outside pushes the last out).

    Examples
    --------
    >>> keep_leader([(7, 0.6), (1, 0.5)], [1, 2], {1: 0.9, 2: 0.5}, 0.1)
    [(1, 0.6), (7, 0.6)]
    >>> keep_leader([(7, 0.6), (1, 0.5)], [1, 2], {1: 0.9, 2: 0.85}, 0.1)
    [(7, 0.6), (1, 0.5)]
    """
    if margin is None or len(qiter) < 2 or not fused:
        return list(fused)
    first = qiter[0]
    if fused[0][0] == first or scores[first] - scores[qiter[1]] < margin:
        return list(fused)
    rest = [(row, score) for row, score in fused if row != first]
    return [(first, fused[0][1]), *rest][: len(fused)]
