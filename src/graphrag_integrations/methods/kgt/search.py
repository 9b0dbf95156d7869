"""One KG-Translator query: translate, trace, rank (paper §3.3-3.4), on a search graph.

:func:`search` runs the rounds of a query on a
:class:`~graphrag_integrations.methods.kgt.scope.SearchGraph` - the whole index, or under a
metadata filter the ParseKG of the allowed passages alone
(:mod:`~graphrag_integrations.methods.kgt.scope`): the translator decodes clues under its
constraint indexes, the clues are traced to its passages and ranked by the embedder;
``fusion="rrf"`` fuses them with the dense ranking (:func:`fused`), the product top-up fills
up with the nearest untraced passages (:func:`top_up`), both drawn from the same passages
(:func:`dense_ranking`). Each result's explanation lists the clues (entity, relation span,
direction, hyperedge sentence) that reached it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

import numpy as np

from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix
from graphrag_integrations.core.retrieval.filter_scope import FilterScope
from graphrag_integrations.core.text.nlp import SpacyNLP
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.methods.kgt.params import KGTQueryParams
from graphrag_integrations.methods.kgt.retrieval import (
    decomposition_prompt,
    parse_next_query,
    trace_clues,
)
from graphrag_integrations.methods.kgt.scope import SearchGraph
from graphrag_integrations.methods.kgt.store import ParseKGStore, ParseKGView, read_many
from graphrag_integrations.methods.kgt.translation import Translator

__all__ = ["dense_ranking", "fused", "next_query", "search", "top_up"]

logger = logging.getLogger(__name__)


class SearchIndex(Protocol):
    """What a query reads of ``ParseKGTranslatorRetriever``."""

    method: ClassVar[str]
    embedder: Embedder
    parser: SpacyNLP
    decomposer: Any
    store: ParseKGStore
    counters: Any

    @property
    def query_params(self) -> KGTQueryParams: ...

    @property
    def view(self) -> ParseKGView: ...

    @property
    def client(self) -> Any: ...

    @property
    def translator_label(self) -> str: ...

    def _passage_vectors(self, ids: Sequence[str]) -> FloatMatrix: ...


def next_query(llm: Any, question: str, evidence: Sequence[str], used: Sequence[str]) -> str | None:
    """Ask the decomposition LLM for the next search query (prompt 3); ``None`` to stop.

    The one decomposition LLM call (``llm.complete(prompt)``: core ``LLM`` or ``LLMClient``).
    """
    reply = llm.complete(decomposition_prompt(question, evidence, used))
    text = reply if isinstance(reply, str) else reply.text
    return parse_next_query(text)


def search(index: SearchIndex, question: str, k: int, graph: SearchGraph) -> list[RetrievedPassage]:
    """Translate, trace, rank on ``graph``; up to ``k`` passages (fewer without top-up)."""
    params = index.query_params
    translator = Translator(
        index.client, graph.indexes, params, nlp=index.parser, cache_key=graph.cache_key
    )
    view = graph.view
    used = [question]
    current = question
    best: dict[str, tuple[float, int]] = {}
    evidence: dict[str, list[dict[str, Any]]] = {}
    rounds: list[dict[str, Any]] = []
    for step in range(params.max_steps):
        result = translator.translate(current)
        index.counters.update({f"dropped_{v}": n for v, n in result.dropped.items()})
        traced = trace_clues(result.clues, view)
        qvec = index.embedder.embed_query(current)
        ids = list(traced)
        sims = index._passage_vectors(ids) @ qvec if ids else np.zeros(0)
        for pid, sim in zip(ids, sims.tolist(), strict=True):
            if pid not in best or sim > best[pid][0]:
                best[pid] = (float(sim), step)
            for clue in traced[pid]:
                evidence.setdefault(pid, []).append({**clue, "step": step})
        rounds.append(
            {
                "query": current,
                "clues": len(result.clues),
                "traced_passages": len(ids),
                "reverse_ran": result.reverse_ran,
                "dropped_hypotheses": dict(result.dropped),
            }
        )
        if step + 1 >= params.max_steps:
            break
        top = sorted(best, key=lambda p: -best[p][0])[:k]
        evidence_texts = [p.text for p in read_many(view.passages, top).values()]
        following = next_query(index.decomposer, question, evidence_texts, used)
        if following is None or following in used:
            break
        used.append(following)
        current = following
    ctx = len(best)
    if params.fusion == "rrf":
        return fused(index, question, best, evidence, rounds, k, graph)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:k]
    label = index.translator_label
    texts = read_many(view.passages, [pid for pid, _ in ranked])
    out = [
        RetrievedPassage(
            texts[pid],
            score,
            {
                "method": index.method,
                "translator": label,
                "source": "traced",
                "step": step,
                "clues": evidence[pid],
                "traced_passages": ctx,
                "rounds": rounds,
            },
        )
        for pid, (score, step) in ranked
    ]
    if params.top_up and len(out) < k:
        out.extend(top_up(index, question, k - len(out), set(best), ctx, rounds, graph))
    return out


def dense_ranking(
    index: SearchIndex, question: str, n: int, scope: FilterScope | None = None
) -> list[tuple[str, float]]:
    """The ``n`` passages (of ``scope``) nearest ``question`` (embeds the missing ones once)."""
    index.view  # noqa: B018 - the read mode of the query params
    store = index.store
    if scope is None:
        missing = store.passages_without_vector()
    else:
        missing = store.missing_vectors(sorted(scope.passages))
    if missing:
        logger.info("embedding the %d passages not embedded yet", len(missing))
        index._passage_vectors(missing)
    return store.nearest_passages(index.embedder.embed_query(question), n, scope)


def fused(
    index: SearchIndex,
    question: str,
    best: dict[str, tuple[float, int]],
    evidence: dict[str, list[dict[str, Any]]],
    rounds: list[dict[str, Any]],
    k: int,
    graph: SearchGraph,
) -> list[RetrievedPassage]:
    """``fusion="rrf"``: reciprocal-rank fusion of the traced and the dense ranking."""
    params = index.query_params
    index.counters["fused_queries"] += 1
    traced = sorted(best, key=lambda p: (-best[p][0], p))
    dense = [pid for pid, _ in dense_ranking(index, question, params.fusion_depth, graph.scope)]
    score: dict[str, float] = {}
    for rank, pid in enumerate(traced, 1):
        score[pid] = params.fusion_weight / (params.fusion_k + rank)
    for rank, pid in enumerate(dense, 1):
        score[pid] = score.get(pid, 0.0) + 1.0 / (params.fusion_k + rank)
    traced_rank = {pid: r for r, pid in enumerate(traced, 1)}
    dense_rank = {pid: r for r, pid in enumerate(dense, 1)}
    ranked = sorted(score, key=lambda p: (-score[p], p))[:k]
    sources = {(True, False): "traced", (False, True): "dense", (True, True): "traced+dense"}
    label = index.translator_label
    texts = read_many(graph.view.passages, ranked)
    return [
        RetrievedPassage(
            texts[pid],
            score[pid],
            {
                "method": index.method,
                "translator": label,
                "source": sources[(pid in traced_rank, pid in dense_rank)],
                "traced_rank": traced_rank.get(pid),
                "dense_rank": dense_rank.get(pid),
                "clues": evidence.get(pid, []),
                "traced_passages": len(best),
                "rounds": rounds,
            },
        )
        for pid in ranked
    ]


def top_up(
    index: SearchIndex,
    question: str,
    n: int,
    exclude: set[str],
    ctx: int,
    rounds: list[dict[str, Any]],
    graph: SearchGraph,
) -> list[RetrievedPassage]:
    """Product mode: the nearest untraced passages (of the search graph), flagged."""
    index.counters["top_up_queries"] += 1
    hits = dense_ranking(index, question, n + len(exclude), graph.scope)
    extra = [(pid, s) for pid, s in hits if pid not in exclude][:n]
    logger.info("top-up: %d traced passages, %d added by dense retrieval", ctx, len(extra))
    label = index.translator_label
    texts = read_many(graph.view.passages, [pid for pid, _ in extra])
    return [
        RetrievedPassage(
            texts[pid],
            float(score),
            {
                "method": index.method,
                "translator": label,
                "source": "top_up",
                "clues": [],
                "traced_passages": ctx,
                "rounds": rounds,
            },
        )
        for pid, score in extra
    ]
