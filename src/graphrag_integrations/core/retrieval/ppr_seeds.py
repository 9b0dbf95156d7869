"""The restart distribution of a personalized-PageRank ranking: entity seeds and passage
seeds (numpy), shared by the ``ppr`` baseline and Clue-RAG's global ranking.

HippoRAG 2 (arXiv 2502.14802) seeds its walk with the phrases of the top facts (each phrase
weighted by the facts' score over the number of passages it occurs in, the top
``linking_top_k`` phrases kept) and every passage node with its min-max normalised dense
score times a small weight (0.05). Here a fact is a sentence and its phrases are its spaCy
entities; query entities linked to entity nodes by embedding add seeds (HippoRAG's own query
NER linking), and LinearRAG's (arXiv 2510.10114) entity activation can spread them through
the query's most similar sentences first. Every function works on a
:class:`~graphrag_integrations.core.retrieval.ppr_graph.GraphView`, so a filtered query only sees
kept passages, facts and entities.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.retrieval.ppr_graph import GraphView, PPRGraph
from graphrag_integrations.core.retrieval.ranking import top_k

__all__ = [
    "SeedOptions",
    "Seeds",
    "activate",
    "fact_seeds",
    "link_seeds",
    "passage_seeds",
    "query_seeds",
]

FloatVector = npt.NDArray[np.float64]


class SeedOptions(Protocol):
    """The seed settings :func:`query_seeds` reads (the ``ppr`` baseline's query params have
    these fields; see :class:`~graphrag_integrations.baselines.ppr_params.PPRQueryParams`).

    Entity seeds: ``fact_weight`` times the fact seeds of the top ``fact_top_k`` facts plus
    ``link_weight`` times the query-entity links (``link_k`` nearest entity nodes from a
    cosine of ``link_threshold``) and the LinearRAG activation of ``activation_steps`` steps
    above ``activation_threshold``; the top ``linking_top_k`` kept (``0``: all), divided by
    their passage count when ``specificity``. Passage seeds: ``passage_node_weight`` times the
    min-max normalised dense scores (of the top ``passage_seeds``; ``0``: all).
    """

    @property
    def fact_top_k(self) -> int: ...
    @property
    def fact_weight(self) -> float: ...
    @property
    def link_weight(self) -> float: ...
    @property
    def link_k(self) -> int: ...
    @property
    def link_threshold(self) -> float: ...
    @property
    def linking_top_k(self) -> int: ...
    @property
    def specificity(self) -> bool: ...
    @property
    def passage_seeds(self) -> int: ...
    @property
    def passage_node_weight(self) -> float: ...
    @property
    def activation_steps(self) -> int: ...
    @property
    def activation_threshold(self) -> float: ...


def _minmax(values: FloatVector, keep: npt.NDArray[np.bool_]) -> FloatVector:
    """``values`` mapped onto ``[0, 1]`` over the kept positions (others 0; constant: 0)."""
    out = np.zeros(values.shape, dtype=np.float64)
    if not keep.any():
        return out
    lo, hi = float(values[keep].min()), float(values[keep].max())
    if hi > lo:
        out[keep] = (values[keep] - lo) / (hi - lo)
    return out


def fact_seeds(graph: PPRGraph, view: GraphView, fact_scores: FloatVector, top: int) -> FloatVector:
    """Per entity, the mean share of the top ``top`` kept facts it is in.

    A fact's share is its min-max normalised score over the kept facts divided by its number
    of entities. A HippoRAG 2 fact (a triple) has two phrases, so there the share is the
    fact score up to a constant; dividing keeps a sentence with many entities from seeding
    more mass than a sentence with two.

    Examples
    --------
    >>> import numpy as np
    >>> from graphrag_integrations.core.retrieval.ppr_graph import PassageEntities
    >>> ents = [PassageEntities(("a", "b"), (("a",), ("a", "b")))]
    >>> vecs = {"a": np.ones(2), "b": np.ones(2)}
    >>> g = PPRGraph.build(ents, vecs, np.zeros((2, 2), dtype=np.float32), {})
    >>> fact_seeds(g, g.full, np.array([0.2, 0.6]), 2).tolist()
    [0.25, 0.5]
    """
    weights = np.zeros(len(graph.entity_names), dtype=np.float64)
    if top <= 0 or not view.facts.any():
        return weights
    normalised = _minmax(fact_scores, view.facts)
    rows = np.flatnonzero(view.facts)
    best = rows[top_k(fact_scores[rows], top)]
    chosen = graph.fact_entities[best]
    sizes = np.diff(chosen.indptr).astype(np.float64)
    shares = np.divide(normalised[best], sizes, out=np.zeros_like(sizes), where=sizes > 0)
    totals = np.asarray(chosen.T @ shares, dtype=np.float64).ravel()
    counts = np.asarray(chosen.sum(axis=0), dtype=np.float64).ravel()
    np.divide(totals, counts, out=weights, where=counts > 0)
    return weights


def link_seeds(
    graph: PPRGraph, view: GraphView, mentions: FloatMatrix, k: int, threshold: float
) -> FloatVector:
    """Per entity, the best cosine of a query-entity vector that links to it: each mention
    links to its ``k`` nearest kept entity nodes with a cosine of at least ``threshold``
    (an exact name match has cosine 1)."""
    weights = np.zeros(len(graph.entity_names), dtype=np.float64)
    if mentions.shape[0] == 0 or not view.entities.any():
        return weights
    # ``(E @ M^T)^T`` is ``M @ E^T`` (the same dot products), about twice as fast with the
    # entity matrix stored by rows
    sims = np.array((graph.entity_vectors @ mentions.T).T, dtype=np.float64, order="C")
    sims[:, ~view.entities] = -np.inf  # entities outside the view never link
    for mention in sims:
        for j in top_k(mention, k):
            if mention[j] >= threshold:
                weights[j] = max(weights[j], float(mention[j]))
    return weights


def activate(
    graph: PPRGraph,
    view: GraphView,
    seeds: FloatVector,
    fact_similarity: FloatVector,
    steps: int,
    threshold: float,
) -> FloatVector:
    """LinearRAG's entity activation: the scores it adds to the entities beyond ``seeds``.

    At each of ``steps`` steps, every active entity with a score of at least ``threshold``
    takes its kept fact (sentence) most similar to the query that no entity used yet; each
    entity of that fact gets ``score * similarity`` (added, when at least ``threshold``) and
    is active at the next step. The loop runs over the active entities only (a handful).
    """
    added = np.zeros_like(seeds)
    if steps <= 0:
        return added
    by_entity = graph.fact_entities.T.tocsr()
    used = ~view.facts.copy()
    frontier = {int(e): float(seeds[e]) for e in np.flatnonzero(seeds)}
    for _ in range(steps):
        spread: dict[int, float] = {}
        for entity, score in frontier.items():
            if score < threshold:
                continue
            facts = by_entity.indices[by_entity.indptr[entity] : by_entity.indptr[entity + 1]]
            facts = facts[~used[facts]]
            if facts.size == 0:
                continue
            best = int(facts[int(np.argmax(fact_similarity[facts]))])
            used[best] = True
            reached = float(score * fact_similarity[best])
            if reached < threshold:
                continue
            row = graph.fact_entities
            for other in row.indices[row.indptr[best] : row.indptr[best + 1]].tolist():
                added[other] += reached
                spread[other] = reached
        if not spread:
            break
        frontier = spread
    return added


def passage_seeds(
    dense: FloatVector, keep: npt.NDArray[np.bool_], top: int, weight: float
) -> FloatVector:
    """HippoRAG 2's passage node weights: ``weight`` times the min-max normalised dense
    score of each kept passage (of the ``top`` best only when ``top > 0``).

    Examples
    --------
    >>> import numpy as np
    >>> passage_seeds(np.array([0.2, 0.6, 0.4]), np.ones(3, dtype=bool), 2, 0.1).round(3).tolist()
    [0.0, 0.1, 0.05]
    """
    seeds = _minmax(dense, keep) * weight
    if top > 0:
        rows = np.flatnonzero(keep)
        chosen = np.zeros(dense.shape, dtype=np.bool_)
        chosen[rows[top_k(dense[rows], top)]] = True
        seeds[~chosen] = 0.0
    return seeds


@dataclass
class Seeds:
    """A query's restart weights: per entity row and per passage row, and the entities linked
    to query mentions (for the explanation)."""

    entities: FloatVector
    passages: FloatVector
    linked: FloatVector


def query_seeds(
    graph: PPRGraph,
    view: GraphView,
    params: SeedOptions,
    dense: FloatVector,
    fact_similarity: FloatVector,
    mentions: FloatMatrix,
) -> Seeds:
    """Entity and passage seeds of one query (see :class:`SeedOptions`)."""
    linked = np.zeros(len(graph.entity_names), dtype=np.float64)
    if params.link_weight > 0 or params.activation_steps > 0:
        linked = link_seeds(graph, view, mentions, params.link_k, params.link_threshold)
    activated = activate(
        graph,
        view,
        linked,
        fact_similarity,
        params.activation_steps,
        params.activation_threshold,
    )
    weights = params.link_weight * (linked + activated)
    if params.fact_weight > 0:
        weights = weights + params.fact_weight * fact_seeds(
            graph, view, fact_similarity, params.fact_top_k
        )
    weights[~view.entities] = 0.0
    if params.linking_top_k > 0 and np.count_nonzero(weights) > params.linking_top_k:
        cut = np.zeros_like(weights)
        best = top_k(weights, params.linking_top_k)
        cut[best] = weights[best]
        weights = cut
    if params.specificity:
        np.divide(weights, view.occurrences, out=weights, where=view.occurrences > 0)
    return Seeds(
        weights,
        passage_seeds(dense, view.passages, params.passage_seeds, params.passage_node_weight),
        linked,
    )
