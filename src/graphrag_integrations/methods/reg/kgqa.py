"""ReG on a KGQA benchmark: the evidence of one question, and :class:`KGQARetriever`, which
answers the harness's questions with the scorer trained for their hop count.

:func:`question_evidence` runs :meth:`RefinedSubgraphRetriever.evidence_chains` once and keeps
what the KGQA metrics need (:class:`KGQAEvidence`, the harness's
:class:`~graphrag_integrations.evaluation.metrics.KGQAEvidence` protocol): the top-K triples
(``AnsR@K`` = share of gold answers among their heads and tails), the best chain's end entity
(``Hit@1``), the number of chains, the estimated tokens (``ceil(chars / 4)``,
:func:`~graphrag_integrations.core.llm.protocol.estimate_tokens`) of the formatted chains and
of the same top-K triples as a flat list (one ``h -> [r] -> t`` line each), chain lengths and
the wall time.

A MetaQA question carries its topic entity and hop count in its metadata
(:meth:`~graphrag_integrations.evaluation.datasets.KGDataset.to_dataset`):
:meth:`KGQARetriever.kgqa_evidence` anchors the question there (a topic entity missing from
the KG is logged, counted and replaced by the entities linked in the text), uses the scorer of
that hop count (the default scorer for an unknown one), a subgraph of ``max(2, hops)`` hops
and, with ``RegQueryParams.length_from_hops`` (default), evidence chains of up to
``max(L, hops)`` relations (a 3-hop answer is three relations from the anchor; the paper's
L = 2 is the ``paper`` preset). ``retrieve`` (plain text queries) uses the default scorer.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_integrations.core.llm.protocol import estimate_tokens
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.methods.reg.candidates import render_triple
from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever
from graphrag_integrations.methods.reg.kg import Triple
from graphrag_integrations.methods.reg.scorer import TripleScorer

__all__ = ["KGQAEvidence", "KGQARetriever", "question_evidence"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class KGQAEvidence:
    """What ReG retrieved for one question (see the module docstring).

    Attributes
    ----------
    triples : list of Triple
        The top-K triples, best first.
    top_answer : str or None
        End entity of the best path of the best evidence chain (``None``: no chain).
    chains : int
        Number of evidence chains.
    tokens, flat_tokens : int
        Estimated tokens of the formatted chains (joined by newlines) and of the top-K
        triples as a flat list.
    chain_hops : tuple of int
        Relation-chain length of each evidence chain (its longest part).
    chain_triples : tuple of int
        Distinct triples in each evidence chain.
    anchors : tuple of str
        The entities the question was anchored at.
    seconds : float
        Wall time of ``evidence_chains`` (query embedding, subgraph, DDE, scoring,
        re-organisation).
    """

    triples: list[Triple]
    top_answer: str | None
    chains: int
    tokens: int
    flat_tokens: int
    chain_hops: tuple[int, ...]
    chain_triples: tuple[int, ...]
    anchors: tuple[str, ...]
    seconds: float


def question_evidence(
    index: RefinedSubgraphRetriever,
    text: str,
    *,
    topic_entities: Sequence[str] | None = None,
    K: int | None = None,
) -> KGQAEvidence:
    """Evidence of one question: ``index.evidence_chains`` once, summarised.

    Examples
    --------
    >>> from graphrag_integrations.testing import FakeEmbedder
    >>> index = RefinedSubgraphRetriever.from_triples(
    ...     [("Kismet", "directed_by", "William Dieterle"), ("Kismet", "release_year", "1944")],
    ...     embedding=FakeEmbedder())
    >>> ev = question_evidence(index, "who directed Kismet", topic_entities=["Kismet"], K=1)
    >>> len(ev.triples), ev.chains, ev.chain_hops, ev.flat_tokens == -(-len(
    ...     f"{ev.triples[0][0]} -> [{ev.triples[0][1]}] -> {ev.triples[0][2]}") // 4)
    (1, 1, (1,), True)
    """
    start = time.perf_counter()
    chains, top, anchors, view = index.evidence_in_view(text, topic_entities=topic_entities, K=K)
    seconds = time.perf_counter() - start
    triples = [t.triple for t in top]
    first = chains[0].targets[:1] if chains else []
    return KGQAEvidence(
        triples=triples,
        top_answer=view.entities[first[0]] if first else None,
        chains=len(chains),
        tokens=estimate_tokens("\n".join(c.render(view) for c in chains)) if chains else 0,
        flat_tokens=estimate_tokens("\n".join(map(render_triple, triples))) if triples else 0,
        chain_hops=tuple(max(len(p.chain) for p in c.parts) for c in chains),
        chain_triples=tuple(len(c.rows) for c in chains),
        anchors=tuple(anchors),
        seconds=seconds,
    )


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
    >>> ev = kgqa.kgqa_evidence(q, 10)
    >>> sorted(ev.triples)
    [('Kismet', 'directed_by', 'William Dieterle'), ('Kismet', 'release_year', '1944')]
    >>> ev.anchors, kgqa.stats["questions"], kgqa.stats["chains"] == ev.chains
    (('Kismet',), 1, True)
    """

    def __init__(self, index: RefinedSubgraphRetriever, scorers: Mapping[int, TripleScorer]):
        self.index = index
        self.default_scorer = index.scorer
        self.scorers = dict(scorers)
        self.base_params = index.query_params
        self.stats: dict[str, int] = {
            "questions": 0,
            "chains": 0,
            "tokens": 0,
            "topic_not_in_kg": 0,
        }

    def _use(self, hops: int | None) -> None:
        scorer = self.scorers.get(hops, self.default_scorer) if hops else self.default_scorer
        self.index.scorer = scorer
        base = self.base_params
        length = base.max_length
        if base.length_from_hops and hops:
            length = max(length, hops)
        self.index.query_params = dataclasses.replace(
            base, subgraph_hops=max(base.subgraph_hops, hops or 0), max_length=length
        )

    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """Evidence chains for a text query (default scorer)."""
        with self.index.rwlock.write():  # the scorer and subgraph depth are switched
            self._use(None)
            return self.index.retrieve(query, k)

    def kgqa_evidence(self, question: Any, k: int) -> KGQAEvidence:
        """Evidence for a KGQA question with the top ``k`` triples (see the module docstring)."""
        meta = getattr(question, "metadata", {}) or {}
        hops = meta.get("hops")
        topic = meta.get("topic_entity")
        if topic and not self.index.has_entity(topic):
            self.stats["topic_not_in_kg"] += 1
            logger.warning(
                "%s: topic entity %r is not in the KG; linking the text", question.id, topic
            )
            topic = None
        with self.index.rwlock.write():  # the scorer and subgraph depth are switched
            self._use(int(hops) if hops else None)
            evidence = question_evidence(
                self.index, question.text, topic_entities=[topic] if topic else None, K=k
            )
        self.stats["questions"] += 1
        self.stats["chains"] += evidence.chains
        self.stats["tokens"] += evidence.tokens
        return evidence
