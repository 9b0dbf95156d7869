"""Retrieval steps 1-3 on hand-made graphs, and the work per query at 10k query nodes."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.methods.qcg.graph import QueryGraph
from graphrag_integrations.methods.qcg.params import QCGQueryParams, preset
from graphrag_integrations.methods.qcg.retrieval import expand, rank_chunks, select_queries


def angle_rows(angles: list[float]) -> np.ndarray:
    a = np.array(angles)
    return np.stack([np.cos(a), np.sin(a)], axis=1).astype(np.float32)


def toy_graph() -> QueryGraph:
    # four queries at angles 0, 0.5, 1.2, 2.5 rad from the user query (at 0)
    m = angle_rows([0.0, 0.5, 1.2, 2.5])
    chunks = ["c1", "c1", "c2", "c3"]
    return QueryGraph.build(["a", "b", "c", "d"], m, chunks, {"a": ["b"], "b": ["c"], "c": ["d"]})


def test_gamma_is_a_threshold_on_cos_plus_one_and_n_caps() -> None:
    s = np.cos([0.0, 0.5, 1.2, 2.5]) + 1.0
    assert select_queries(s, 1.0, 10) == [0, 1, 2]  # cos >= 0
    assert select_queries(s, 1.5, 10) == [0, 1]  # cos >= 0.5
    assert select_queries(s, 1.0, 2) == [0, 1]  # the n most similar
    assert select_queries(s, 2.1, 3) == []


def test_hop_expansion_is_directed_unless_symmetric() -> None:
    g = toy_graph()
    assert expand(g, [1], 0, False) == {1: 0}
    assert expand(g, [1], 1, False) == {1: 0, 2: 1}
    assert expand(g, [1], 2, False) == {1: 0, 2: 1, 3: 2}
    assert expand(g, [1], 1, True) == {1: 0, 2: 1, 0: 1}


def test_chunk_score_is_the_mean_s_of_its_queries_in_q_star() -> None:
    g = toy_graph()
    user = np.array([1.0, 0.0], dtype=np.float32)
    params = QCGQueryParams.preset("paper", h=1, n=1, gamma=1.0)
    hits = rank_chunks(g, user, params, 5)
    # Q_r = {a}; one hop adds b (same chunk c1)
    assert [h.chunk_id for h in hits] == ["c1"]
    expected = ((1 + 1) + (np.cos(0.5) + 1)) / 2
    assert hits[0].score == pytest.approx(expected, abs=1e-6)
    assert [(m.row, m.hop) for m in hits[0].queries] == [(0, 0), (1, 1)]
    # two hops reach c (chunk c2), scored by its own s even though below gamma
    hits = rank_chunks(g, user, QCGQueryParams.preset("paper", h=2, n=1, gamma=1.9), 5)
    assert [h.chunk_id for h in hits] == ["c1", "c2"]
    assert hits[1].score == pytest.approx(np.cos(1.2) + 1, abs=1e-6)


def test_chunk_weight_fuses_the_chunk_similarity() -> None:
    g = toy_graph()
    user = np.array([1.0, 0.0], dtype=np.float32)
    own = {"c1": 0.0, "c2": 1.0}
    params = QCGQueryParams.preset("paper", h=2, n=1, gamma=1.0, chunk_weight=0.5)
    hits = rank_chunks(g, user, params, 5, chunk_cosine=lambda ids: np.array([own[c] for c in ids]))
    assert [h.chunk_id for h in hits] == ["c2", "c1"]
    assert hits[0].score == pytest.approx(0.5 * (np.cos(1.2) + 1) + 0.5 * 2.0, abs=1e-6)
    with pytest.raises(ValueError):
        rank_chunks(g, user, params, 5)


def test_chunk_candidates_make_query_less_chunks_reachable() -> None:
    g = toy_graph()
    user = np.array([1.0, 0.0], dtype=np.float32)
    own = {"c1": 0.2, "c2": 0.1, "c3": 0.0, "c9": 0.9}  # c9: no generated query at all
    cos = lambda ids: np.array([own[c] for c in ids])  # noqa: E731
    top = lambda c: sorted(own, key=lambda x: -own[x])[:c]  # noqa: E731
    paper = QCGQueryParams.preset("paper", h=0, n=1, gamma=1.0)
    assert [h.chunk_id for h in rank_chunks(g, user, paper, 5, chunk_cosine=cos)] == ["c1"]
    params = replace(paper, chunk_candidates=2)
    hits = rank_chunks(g, user, params, 5, chunk_cosine=cos, top_chunks=top)
    assert [h.chunk_id for h in hits] == ["c1", "c9"]  # c1 is also a top chunk: no duplicate
    assert hits[0].score == pytest.approx(1.0 + 1.0)  # mean s of query a (cos 1): unchanged
    assert hits[1].score == pytest.approx(1.9) and hits[1].queries == ()  # its own s
    fused = rank_chunks(
        g, user, replace(params, chunk_weight=0.5), 5, chunk_cosine=cos, top_chunks=top
    )
    assert [h.chunk_id for h in fused] == ["c9", "c1"]
    assert fused[1].score == pytest.approx(0.5 * 2.0 + 0.5 * 1.2)
    assert fused[0].score == pytest.approx(1.9)  # no query: own s whatever the weight
    with pytest.raises(ValueError):
        rank_chunks(g, user, params, 5, chunk_cosine=cos)


def test_presets() -> None:
    paper_side: dict[str, Any] = {
        "chunk_weight": 0.0,
        "chunk_candidates": 0,
        "chunk_similarity": "dense",
    }
    assert preset("multihop-rag").query == QCGQueryParams(h=1, n=15, gamma=1.0, **paper_side)
    lihua = preset("lihuaworld")
    assert (lihua.index.k_neighbors, lihua.query.n, lihua.query.gamma) == (2, 10, 1.5)
    assert lihua.query == QCGQueryParams(h=1, n=10, gamma=1.5, **paper_side)
    with pytest.raises(ValueError):
        QCGQueryParams(n=0)


def test_defaults_are_fused_hybrid_and_paper_restores_query_nodes_only() -> None:
    product = QCGQueryParams()
    assert (product.chunk_weight, product.chunk_candidates, product.chunk_similarity) == (
        0.3,
        10,
        "hybrid",
    )
    assert QCGQueryParams.preset("default") == product == preset("fused-hybrid").query
    assert preset("default").index == preset("fused-hybrid").index
    # the paper: the same retrieval with the chunk side off (query nodes only)
    paper = replace(product, chunk_weight=0.0, chunk_candidates=0, chunk_similarity="dense")
    assert QCGQueryParams.preset("paper") == paper == QCGQueryParams.preset("multihop-rag")
    assert QCGQueryParams.preset("fused") == replace(product, chunk_similarity="dense")
    lihua: dict[str, Any] = {"n": 10, "gamma": 1.5}
    assert QCGQueryParams.preset("lihuaworld") == replace(paper, **lihua)
    assert QCGQueryParams.preset("lihuaworld-fused-hybrid") == replace(product, **lihua)
    # overrides apply on top of the preset
    assert QCGQueryParams.preset("paper", h=0) == replace(paper, h=0)


class CountingRows(list[list[int]]):
    """Adjacency lists that count how many rows are read."""

    reads = 0

    def __getitem__(self, i: Any) -> Any:
        self.reads += 1
        return super().__getitem__(i)


def ring_graph(n_nodes: int, k: int, d: int = 16) -> QueryGraph:
    """``n_nodes`` random unit vectors, row ``i`` linked to the ``k`` rows after it."""
    rng = np.random.default_rng(0)
    m = rng.normal(size=(n_nodes, d)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    ids = [f"q{i:05d}" for i in range(n_nodes)]
    lists = {q: [ids[(i + j) % n_nodes] for j in range(1, k + 1)] for i, q in enumerate(ids)}
    g = QueryGraph.build(ids, m, [f"c{i // 16}" for i in range(n_nodes)], lists)
    g.out_rows = CountingRows(g.out_rows)
    return g


@pytest.mark.parametrize("n_nodes", [1_000, 10_000])
def test_work_per_query_is_bounded_by_n_and_k_not_graph_size(n_nodes: int) -> None:
    # The speed at 10k query nodes (bench_qcg.py latency, docs/lab/qcg.md) rests on this: past
    # the one vectorised similarity product, a query reads the kNN lists of at most
    # n * (1 + K + ... + K^(h-1)) rows and matches at most n * (1 + K + ... + K^h) queries,
    # whatever the number of nodes.
    k, params = 3, QCGQueryParams.preset("paper", h=2, n=10, gamma=0.0)
    g = ring_graph(n_nodes, k)
    user = np.random.default_rng(1).normal(size=16).astype(np.float32)
    hits = rank_chunks(g, user / np.linalg.norm(user), params, n_nodes)
    assert isinstance(g.out_rows, CountingRows)
    assert 0 < g.out_rows.reads <= params.n * (1 + k)
    matched = sum(len(h.queries) for h in hits)
    assert params.n < matched <= params.n * (1 + k + k**2)
