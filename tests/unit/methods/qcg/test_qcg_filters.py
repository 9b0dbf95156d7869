"""QCG-RAG under a metadata filter: seeds, the kNN walk and the chunk side use only the
generated queries and chunks of the matching documents (methods.qcg.scope)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex
from graphrag_integrations.methods.qcg.retrieval import match_queries
from graphrag_integrations.methods.qcg.store import query_chunk
from tests.unit.methods.qcg.test_qcg_index import QUESTIONS, build

ALLOWED_DOCS = ("forest", "cup", "paris")
WHERE: dict[str, Any] = {"doc_id": {"$in": list(ALLOWED_DOCS)}}
SETTINGS: list[dict[str, Any]] = [
    {"preset": "paper"},
    {"preset": "paper", "h": 2, "n": 3, "gamma": 1.2},
    {"symmetric_knn": True, "h": 2, "n": 2},
    {"chunk_weight": 0.3, "chunk_candidates": 3},
    {},  # the default: fused-hybrid chunk side
]


def results(index: QueryCentricGraphIndex, where: Any) -> list[list[tuple[str, float, Any]]]:
    return [
        [(h.id, h.score, h.explanation) for h in index.retrieve(q, k=4, filter=where)]
        for q in QUESTIONS
    ]


@pytest.mark.parametrize("options", SETTINGS)
def test_a_filtered_query_uses_only_the_matching_chunks_queries(options: dict[str, Any]) -> None:
    index = build(**options)
    answers = results(index, WHERE)
    assert any(answers)
    for hits in answers:
        for chunk_id, _, explanation in hits:
            assert chunk_id.split("#")[0] in ALLOWED_DOCS
            assert all(query_chunk(m["id"]) == chunk_id for m in explanation["queries"])
    unfiltered = [[h.doc_id for h in index.retrieve(q, k=6)] for q in QUESTIONS]
    assert any(doc not in ALLOWED_DOCS for docs in unfiltered for doc in docs)
    # per-query neighbourhood reads (a database graph's path) answer alike
    index.store.neighbourhood_reads = True
    assert results(index, WHERE) == answers


def test_the_seeds_and_the_walk_stay_among_allowed_queries() -> None:
    index = build(preset="paper", h=2, n=4, gamma=1.0, symmetric_knn=True)
    graph = index.graph
    allowed = np.array([c.split("#")[0] in ALLOWED_DOCS for c in graph.chunk_of])
    params = index.query_params
    for question in QUESTIONS:
        vector = index.embedder.embed_query(question)
        everything = match_queries(graph, vector, params, symmetric=True)
        matched = match_queries(graph, vector, params, symmetric=True, allowed=allowed)
        assert {c.split("#")[0] for c in matched} <= set(ALLOWED_DOCS)
        for chunk, queries in matched.items():
            assert all(allowed[m.row] and graph.chunk_of[m.row] == chunk for m in queries)
        assert set(everything) >= set(matched)


def test_a_filter_matching_nothing_returns_nothing() -> None:
    index = build()
    assert index.retrieve(QUESTIONS[0], k=3, filter={"doc_id": "Atlantis"}) == []
    index.store.neighbourhood_reads = True
    assert index.retrieve(QUESTIONS[0], k=3, filter={"doc_id": "Atlantis"}) == []
