"""Q-Iter's top-up without a scan: the best chunks the search did not reach, found exactly
from two short candidate lists.

When the beam search reaches fewer than ``k`` chunks, Q-Iter adds the best-scoring others
(:meth:`~graphrag_integrations.methods.clue.qiter.QIter._fill`). Scoring every chunk is
cheap in the flat view but, with a database graph, reads every chunk's vector and text from
the server. The default scorer (:class:`~graphrag_integrations.methods.clue.scoring.
FusedScorer`) is ``(1 - w) * cos + w * lex`` with ``lex`` the BM25 of the query terms divided
by its supremum ``Σ idf(t) · (k1 + 1)``: each query term ``t`` a chunk holds adds less than
``idf(t) / Σ idf`` to ``lex``. So a chunk outside

* the ``m`` chunks nearest the query by cosine (the chunk vector index), and
* the chunks holding one of the fetched query terms ``F`` (the graph's term index,
  :mod:`~graphrag_integrations.methods.clue.term_index`),

scores at most ``B = (1 - w) * cos_m + w * Σ_{t ∉ F} idf(t) / Σ_t idf(t)``, ``cos_m`` the
lowest cosine of the ``m`` nearest. :func:`top_up` scores the candidates of both lists
exactly and stops as soon as ``need`` of them score above ``B`` (plus :data:`MARGIN`);
otherwise it fetches the rarest term not yet fetched if at most ``m`` chunks hold it, else
doubles ``m``. It ends with the same chunks, scores and order (exact ties in graph order) as
scoring all of them, given an exact nearest-neighbour search (the in-memory vector layer; an
approximate one - HNSW - is as good as its recall). Words the term index cannot answer
(:func:`~graphrag_integrations.core.graph.term_search.searchable`) stay in the bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.graph.term_search import searchable
from graphrag_integrations.methods.clue.scoring import FusedScorer, Query
from graphrag_integrations.methods.clue.statistics import CollectionStats
from graphrag_integrations.methods.clue.view import OrderKey

__all__ = ["MARGIN", "TopUpView", "top_up"]

#: Slack on the bound for the float32 rounding of scores (and of the store's cosines).
MARGIN = 1e-5
#: Nearest chunks asked for first, beyond those the search reached.
FIRST_NEAREST = 16


@runtime_checkable
class TopUpView(Protocol):
    """What :func:`top_up` reads besides the scorer's rows (met by
    :class:`~graphrag_integrations.methods.clue.neighbourhood.NeighbourhoodView`)."""

    @property
    def passage_terms(self) -> CollectionStats: ...

    @property
    def can_search_terms(self) -> bool:
        """Whether :meth:`passages_with_term` answers (the graph has a term index)."""
        ...

    def passages_with_term(self, term: str) -> list[int]:
        """Rows of every chunk holding the searchable word ``term`` (maybe more)."""
        ...

    def nearest_passages(self, vector: FloatMatrix, m: int) -> list[int]:
        """Rows of the ``m`` chunks nearest ``vector`` by cosine, best first."""
        ...

    def prefetch_passages(self, rows: Sequence[int]) -> None: ...

    def passage_vectors(self, rows: Sequence[int]) -> FloatMatrix: ...

    def passage_order(self, rows: Sequence[int]) -> list[OrderKey]:
        """Keys sorting chunk rows in graph order."""
        ...


class _Candidates:
    """Exact scores of the chunks read so far (the reached ones excluded)."""

    def __init__(self, view: TopUpView, scorer: FusedScorer, query: Query, reached: set[int]):
        self.view, self.scorer, self.query = view, scorer, query
        self.skip = set(reached)
        self.scores: dict[int, float] = {}

    def add(self, rows: Sequence[int]) -> None:
        new = [r for r in dict.fromkeys(rows) if r not in self.skip and r not in self.scores]
        if new:
            self.view.prefetch_passages(new)
            for row, score in zip(new, self.scorer.score_passages(self.query, new), strict=True):
                self.scores[row] = float(score)

    def threshold(self, need: int) -> float:
        """The ``need``-th best score (``-inf`` with fewer candidates)."""
        if len(self.scores) < need:
            return -math.inf
        return float(np.partition(np.fromiter(self.scores.values(), float), -need)[-need])

    def best(self, need: int) -> list[tuple[int, float]]:
        """The ``need`` best, highest first; exact ties in graph order."""
        rows = list(self.scores)
        scores = [np.float32(self.scores[r]) for r in rows]
        tied = len(set(scores)) < len(scores)
        order = self.view.passage_order(rows) if tied else [()] * len(rows)
        ranked = sorted(zip(scores, order, rows, strict=True), key=lambda t: (-t[0], t[1]))
        return [(row, float(score)) for score, _, row in ranked[:need]]


def top_up(
    view: TopUpView, scorer: FusedScorer, query: Query, reached: set[int], need: int
) -> list[tuple[int, float]] | None:
    """The ``need`` best chunks not in ``reached`` with their scores, best first, or
    ``None`` when the view cannot search terms (the caller scans).

    See the module docstring for the bound and why the result equals a full scan's.
    """
    if need <= 0:
        return []
    if not view.can_search_terms:
        return None
    stats = view.passage_terms
    w = scorer.lexical_weight
    terms = list(dict.fromkeys(query.tokens))
    idf = {t: stats.idf(t) for t in terms}
    total_idf = sum(idf.values())
    # terms no chunk holds add nothing; the others leave the bound once fetched
    left = {t for t in terms if stats.df.get(t, 0) > 0}
    rarest = sorted((t for t in left if searchable(t)), key=lambda t: (stats.df[t], t))
    candidates = _Candidates(view, scorer, query, reached)
    m = len(reached) + max(need, FIRST_NEAREST)
    while True:
        nearest = view.nearest_passages(query.vector, m)
        candidates.add(nearest)
        if len(nearest) < m:  # the whole collection: every chunk is a candidate
            break
        cos_m = float((view.passage_vectors(nearest) @ query.vector).min())
        while True:
            lexical = sum(idf[t] for t in left) / total_idf if total_idf > 0 else 0.0
            if candidates.threshold(need) > (1.0 - w) * cos_m + w * lexical + MARGIN:
                return candidates.best(need)
            if not (rarest and stats.df[rarest[0]] <= m):
                break
            term = rarest.pop(0)  # the rarest word not fetched, held by at most m chunks
            candidates.add(view.passages_with_term(term))
            left.discard(term)
        m *= 2
    return candidates.best(need)
