"""ReG on a KGQA benchmark: :class:`KGQARetriever` answers the harness's questions with the
scorer trained for their hop count.

A MetaQA question carries its topic entity and hop count in its metadata
(:meth:`~graphrag_integrations.evaluation.datasets.KGDataset.to_dataset`): ``rank_answers``
anchors the question there, uses the scorer of that hop count (the default scorer for an
unknown one) and a subgraph of ``max(2, hops)`` hops. The ranked answers are the end entity of
the best evidence chain, then every entity of the top-K triples in triple-rank order (anchors
left out; a topic entity missing from the KG is logged, counted and replaced by the
entities linked in the text), so the harness's ``Hit@1`` is the top chain's answer and
``AnsR@k`` the share of gold answers among the first ``k`` of these entities. ``retrieve``
(plain text queries) uses the default scorer. :attr:`KGQARetriever.stats` sums chains and
tokens (chars / 4) of the evidence per answered question.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever
from graphrag_integrations.methods.reg.retriever import TripleScorer

__all__ = ["KGQARetriever"]

logger = logging.getLogger(__name__)


class KGQARetriever:
    """A :class:`RefinedSubgraphRetriever` plus one scorer per hop count.

    Parameters
    ----------
    index : RefinedSubgraphRetriever
        The KG index (its own ``scorer`` is the default).
    scorers : mapping of int to TripleScorer
        Scorer per hop count.

    Examples
    --------
    >>> from graphrag_integrations.evaluation.datasets import Question
    >>> from graphrag_integrations.testing import FakeEmbedder
    >>> index = RefinedSubgraphRetriever.from_triples(
    ...     [("Kismet", "directed_by", "William Dieterle"), ("Kismet", "release_year", "1944")],
    ...     embedding=FakeEmbedder())
    >>> kgqa = KGQARetriever(index, {})
    >>> q = Question("q", "who directed Kismet", ["William Dieterle"], [],
    ...              {"topic_entity": "Kismet", "hops": 1})
    >>> sorted(kgqa.rank_answers(q, 10))
    ['1944', 'William Dieterle']
    >>> kgqa.stats["questions"]
    1
    """

    def __init__(self, index: RefinedSubgraphRetriever, scorers: Mapping[int, TripleScorer]):
        self.index = index
        self.default_scorer = index.scorer
        self.scorers = dict(scorers)
        self.base_params = index.retriever_params
        self.stats: dict[str, int] = {
            "questions": 0,
            "chains": 0,
            "tokens": 0,
            "topic_not_in_kg": 0,
        }

    def _use(self, hops: int | None) -> None:
        scorer = self.scorers.get(hops, self.default_scorer) if hops else self.default_scorer
        self.index.scorer = scorer
        want = max(self.base_params.subgraph_hops, hops or 0)
        self.index.retriever_params = dataclasses.replace(self.base_params, subgraph_hops=want)

    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """Evidence chains for a text query (default scorer)."""
        with self.index.rwlock.write():  # the scorer and subgraph depth are switched
            self._use(None)
            return self.index.retrieve(query, k)

    def rank_answers(self, question: Any, k: int) -> list[str]:
        """Up to ``k`` answer entities, best first (see the module docstring)."""
        meta = getattr(question, "metadata", {}) or {}
        hops = meta.get("hops")
        topic = meta.get("topic_entity")
        if topic and topic not in self.index.view.entity_row:
            self.stats["topic_not_in_kg"] += 1
            logger.warning(
                "%s: topic entity %r is not in the KG; linking the text", question.id, topic
            )
            topic = None
        with self.index.rwlock.write():  # the scorer and subgraph depth are switched
            self._use(int(hops) if hops else None)
            chains, top, anchors = self.index.evidence_chains(
                question.text, topic_entities=[topic] if topic else None
            )
        view = self.index.view
        self.stats["questions"] += 1
        self.stats["chains"] += len(chains)
        self.stats["tokens"] += sum(-(-len(c.render(view)) // 4) for c in chains)
        first = [view.entities[t] for t in chains[0].targets[:1]] if chains else []
        ranked = first + [e for t in top for e in (t.head, t.tail)]
        skip = set(anchors)
        return [e for e in dict.fromkeys(ranked) if e not in skip][:k]
