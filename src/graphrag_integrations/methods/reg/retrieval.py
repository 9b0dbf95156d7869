"""Retrieval results of ReG: the top-K triples and evidence chains as passages.

``chain_passages`` makes one passage per evidence chain (``h -> [r] -> t -> ...``), best
first; when there are fewer than ``k`` chains, the best top-K triples that no chain holds
follow, one passage each (``metadata["chained"]`` is ``False``), then - when the subgraph is
smaller still - KG triples outside it by zero-shot similarity (``outside_subgraph``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphrag_integrations.core.text.documents import content_id
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.methods.reg.candidates import render_triple
from graphrag_integrations.methods.reg.kg import Triple
from graphrag_integrations.methods.reg.linking import BRACKET
from graphrag_integrations.methods.reg.reorganisation import EvidenceChain
from graphrag_integrations.methods.reg.scope import FilteredKG
from graphrag_integrations.methods.reg.store import KGView
from graphrag_integrations.methods.reg.subgraph import Subgraph

__all__ = [
    "ScoredTriple",
    "chain_passages",
    "outside_subgraph",
    "top_triples",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScoredTriple:
    """A retrieved triple with its retriever score."""

    head: str
    relation: str
    tail: str
    score: float

    @property
    def triple(self) -> Triple:
        return (self.head, self.relation, self.tail)


def top_triples(view: KGView, sub: Subgraph, scores: Any, k: int) -> list[ScoredTriple]:
    """The ``k`` best-scored triples of ``sub`` (ties: subgraph order)."""
    order = np.argsort(-scores, kind="stable")[:k]
    return [ScoredTriple(*view.triple(int(sub.rows[i])), float(scores[i])) for i in order]


def chain_passages(
    index: Any,
    query: str,
    k: int,
    chains: list[EvidenceChain],
    top: list[ScoredTriple],
    anchors: list[str],
    view: KGView | None = None,
    kg: FilteredKG | None = None,
) -> list[RetrievedPassage]:
    """At most ``k`` passages of ``index`` (a ``RefinedSubgraphRetriever``) for ``query``
    (see the module docstring); ``view``: the one the chains' rows index (``None``: the
    index's whole-graph view); ``kg``: the KG of a filter's documents (the fill comes from
    it, and a passage names only its allowed documents)."""
    view = index.view if view is None else view
    provenance = index.store.triple_provenance if kg is None else kg.documents
    score_of = {t.triple: t.score for t in top}
    units: list[tuple[str, list[Triple], list[str], float, bool]] = [
        (
            chain.render(view),
            [view.triple(r) for r in chain.rows],
            [view.entities[t] for t in chain.targets],
            chain.score,
            True,
        )
        for chain in chains[:k]
    ]
    if len(units) < k:
        chained = {view.triple(r) for chain in chains for r in chain.rows}
        singles = [t for t in top if t.triple not in chained]
        if len(units) + len(singles) < k:
            whole = None if kg is None else kg.view
            singles += outside_subgraph(index, query, {t.triple for t in top}, k + 50, whole)
        for t in singles[: k - len(units)]:
            text = render_triple(t.triple)
            units.append((text, [t.triple], [], t.score, False))
            score_of.setdefault(t.triple, t.score)
    out: list[RetrievedPassage] = []
    for text, triples, targets, score, is_chain in units:
        sources = sorted({d for t in triples for d in provenance(t)})
        meta: dict[str, Any] = {
            **index.document_metadata.get(sources[0], {}),
            "triples": [list(t) for t in triples],
            "triple_scores": [score_of[t] for t in triples],
            "anchors": anchors,
            "targets": targets,
            "doc_ids": sources,
            "chained": is_chain,
        }
        passage = Passage(content_id("reg", text), text, sources[0], meta)
        explanation = {
            "method": "reg",
            "scorer": "trained" if index.scorer is not None else "untrained",
            **meta,
        }
        out.append(RetrievedPassage(passage, score, explanation))
    return out


def outside_subgraph(
    index: Any, query: str, seen: set[Triple], n: int, whole: KGView | None = None
) -> list[ScoredTriple]:
    """KG triples outside the query's subgraph, by zero-shot similarity (cosine of the
    query with relation, head and tail): what fills ``retrieve`` when the subgraph holds
    fewer than ``k`` results (``n`` of them; logged at debug level, counted). It reads every
    triple of ``whole`` (default: the whole KG, also when queries otherwise read
    neighbourhoods only)."""
    index.stats["filled_outside_subgraph"] += 1
    logger.debug("subgraph of %r too small for k; filling from the rest of the KG", query)
    # queries reading neighbourhoods build the whole view for this rare case, without keeping it
    view: KGView
    if whole is not None:
        view = whole
    else:
        view = index.view if index.neighbourhood is None else index.store.whole_view()
    q = np.asarray(index.embedder.embed([BRACKET.sub(r"\1", query)])[0], np.float32)
    ent = view.entity_vectors @ q
    rel = view.relation_vectors @ q
    scores = rel[view.rels] + ent[view.heads] + ent[view.tails]
    out = []
    for row in np.argsort(-scores, kind="stable"):
        t = view.triple(int(row))
        if t not in seen:
            out.append(ScoredTriple(*t, float(scores[row])))
        if len(out) >= n:
            break
    return out
