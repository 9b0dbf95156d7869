"""Q-Iter's neighbourhood view: identical results to the flat view, reading only what a query
reaches; the graph's statistics node kept exact through insert and delete."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.methods.clue.graph import ClueGraph, tokenize
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.neighbourhood import NeighbourhoodCache, NeighbourhoodView
from graphrag_integrations.methods.clue.qiter import QIter
from graphrag_integrations.methods.clue.statistics import (
    STATS_NODE,
    QIterStats,
    count_statistics,
    read_statistics,
)
from graphrag_integrations.methods.clue.store import CHUNK, UNIT
from tests.conftest import FakeEmbedder
from tests.unit.clue_fixtures import CORPUS, documents
from tests.unit.core.test_index_store import DictGraph

QUESTIONS = [
    "Where was the manager of Nottingham Forest born?",
    "Which club won the FA Cup in 1970?",
    "What is the capital of France?",
    "Who won the European Cup?",
    "rivers in North Yorkshire",
]
TWIN_TEXT = "Twin Town\nTwin Town lies on the river Tees. Brian Clough visited Twin Town."


#: Unrelated documents: a graph larger than what a query reaches.
FILLER = [(f"Village {n}", f"Village {n} has {n} bakeries and a mill.") for n in range(20)]


def twins(*ids: str) -> list[SourceDocument]:
    """Documents with the same text and title: equal units and vectors (exact ties)."""
    return [SourceDocument(TWIN_TEXT, i, {"title": "Twin Town"}) for i in ids]


class OverlapReranker:
    """A real (lexical) re-ranker following the core Reranker protocol."""

    model_name = "overlap"

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        q = set(tokenize(query))
        return np.array([len(q & set(tokenize(t))) for t in texts], dtype=np.float32)


class CountingGraph(DictGraph):
    """A database-like backend (``remote``: not in this process) counting what is read."""

    remote = True

    def __init__(self) -> None:
        super().__init__()
        self.read: set[str] = set()
        self.listed: list[str | None] = []

    def nodes(self, type: str | None = None) -> list[str]:
        self.listed.append(type)
        return super().nodes(type)

    def nodes_data(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        out = super().nodes_data(ids)
        self.read.update(out)
        return out

    def neighbors_many(
        self,
        ids: Iterable[str],
        edge_type: str | Iterable[str] | None = None,
        direction: str = "out",
        node_type: str | None = None,
    ) -> dict[str, list[str]]:
        out = super().neighbors_many(ids, edge_type, direction, node_type)
        self.read.update(out)
        return out


def build(
    items: Sequence[tuple[str, str]] = CORPUS, extra: Sequence[str] = (), **options: Any
) -> ClueIndex:
    docs = documents(items) + twins(*extra)
    return ClueIndex.from_documents(docs, embedding=FakeEmbedder(), **options)


def results(hits: Sequence[RetrievedPassage]) -> list[tuple[str, float, Mapping[str, Any]]]:
    return [(h.passage.id, h.score, h.explanation) for h in hits]


def both(index: ClueIndex, question: str, k: int = 3, **params: Any) -> tuple[Any, Any]:
    flat = index.as_retriever(k=k, graph_view="flat", **params)
    lazy = index.as_retriever(k=k, graph_view="neighbourhood", **params)
    return results(flat.retrieve(question)), results(lazy.retrieve(question))


def assert_same(index: ClueIndex, **params: Any) -> None:
    for question in QUESTIONS:
        for k in (1, 3, len(index.graph.passages)):  # the largest k tops up by score
            flat, lazy = both(index, question, k, **params)
            assert lazy == flat, (question, k, params)


@pytest.fixture(scope="module")
def index() -> ClueIndex:
    return build(CORPUS, ("twin-a", "twin-b"))


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"preset": "paper"},
        {"D": 1, "M": 2, "K": 1},
        {"D": 3, "M": 8, "K": 4, "path_weight": 0.0, "lexical_weight": 1.0},
        {"query_updating": False, "spreading_activation": False},
    ],
)
def test_both_views_give_the_same_ids_scores_and_paths(index: ClueIndex, params: Any) -> None:
    params = dict(params)
    if params.pop("preset", None):
        from graphrag_integrations.methods.clue.params import PAPER_QITER

        params.update(PAPER_QITER)
    assert_same(index, **params)


def test_both_views_agree_with_a_reranker() -> None:
    idx = build(CORPUS, ("twin-a", "twin-b"), reranker=OverlapReranker())
    assert_same(idx)


def test_exact_ties_follow_the_graph_order_in_both_views(index: ClueIndex) -> None:
    # Q-Iter's own chunk scores (the fused default scores by rank)
    params = {"K": 1, "D": 1, "M": 1, "path_weight": 0.0, "ppr_weight": 0.0}
    qiter = index.as_retriever(k=8, graph_view="neighbourhood", **params)
    flat = index.as_retriever(k=8, graph_view="flat", **params)
    question = "Twin Town lies on the river Tees"
    hits = qiter.retrieve(question)
    assert results(hits) == results(flat.retrieve(question))
    assert [h.doc_id for h in hits[:2]] == ["twin-a", "twin-b"]  # equal scores: graph order
    assert hits[0].score == hits[1].score


def test_both_views_agree_after_insert_and_delete() -> None:
    idx = build(CORPUS[:3], ("twin-a",))
    idx.insert(documents(CORPUS[3:]) + twins("twin-b", "twin-c"))
    assert idx.delete("Chelsea F.C.")
    idx.insert(documents(CORPUS[2:3]))  # back, last in graph order now
    assert idx.delete("twin-a")
    assert_same(idx)


def test_statistics_node_matches_the_flat_views_counts_through_insert_and_delete() -> None:
    idx = build(CORPUS[:4])

    def check() -> None:
        g: ClueGraph = idx.graph
        stats = read_statistics(idx.graph_store)
        assert stats == count_statistics(idx.graph_store)[0]
        for mine, theirs in ((stats.units, g.unit_terms), (stats.chunks, g.passage_terms)):
            assert mine.size == theirs.size
            assert mine.avg_length == theirs.avg_length
            assert dict(mine.df) == dict(theirs.df)
            assert all(mine.idf(t) == theirs.idf(t) for t in [*theirs.df, "absent"])
        assert stats.entities == g.n_entities

    check()
    idx.insert(documents(CORPUS[4:]))
    check()
    assert idx.delete("Brian Clough")
    check()
    for title, _ in CORPUS:
        if title != "Brian Clough":
            idx.delete(title)
    assert len(idx.graph_store) == 0  # the statistics node went with the last document
    assert read_statistics(idx.graph_store) == QIterStats()


def test_a_graph_without_statistics_gets_them_counted_at_its_next_change() -> None:
    idx = build(CORPUS[:4])
    graph = idx.graph_store
    assert isinstance(graph, GraphStore)
    graph.graph.remove_node(STATS_NODE)  # as written before the node existed
    assert read_statistics(idx.graph_store) == count_statistics(idx.graph_store)[0]
    idx.insert(documents(CORPUS[4:]))
    assert STATS_NODE in idx.graph_store
    assert read_statistics(idx.graph_store) == count_statistics(idx.graph_store)[0]
    assert idx.graph_store.node(STATS_NODE)["provenance"] == set(idx.doc_ids())


def test_a_database_backend_queries_without_reading_the_whole_graph() -> None:
    idx = build(CORPUS + FILLER, graph_store=CountingGraph)
    graph = idx.graph_store
    assert isinstance(graph, CountingGraph)
    # knowledge anchoring alone: the fake embedder's many zero cosines between entity names
    # would tie, and exact ties are broken by reading the graph order
    # Q-Iter alone (the global ranking reads the chunk-entity graph once per version)
    qiter = idx.as_retriever(k=2, spreading_activation=False, ppr_weight=0.0)
    assert qiter.reads_neighbourhoods  # auto: any backend but the networkx GraphStore
    graph.read.clear()
    graph.listed.clear()
    hits = qiter.retrieve("What is the capital of France?")
    assert hits[0].doc_id == "Paris"
    # no listing of units or entities; chunk ids only to break exact ties by graph order
    assert set(graph.listed) <= {CHUNK}
    for kind in (UNIT, CHUNK):
        nodes = set(graph.nodes(kind))
        assert graph.read & nodes and len(graph.read & nodes) < len(nodes)
    assert "qiter" not in idx.store._views  # the flat view was never built
    reference = build(CORPUS + FILLER)
    for question in QUESTIONS:
        expected = reference.as_retriever(k=3).retrieve(question)
        assert results(idx.as_retriever(k=3).retrieve(question)) == results(expected)


def test_the_cache_is_bounded_and_follows_the_index_version() -> None:
    idx = build(CORPUS, ("twin-a", "twin-b"))
    small = idx.as_retriever(k=3, graph_view="neighbourhood", cache_nodes=3)
    for question in QUESTIONS:
        flat = idx.as_retriever(k=3, graph_view="flat").retrieve(question)
        assert results(small.retrieve(question)) == results(flat)
        cache = small.cache
        assert isinstance(cache, NeighbourhoodCache)
        assert len(cache) <= 3
    before = small.cache
    idx.delete("Paris")
    assert results(small.retrieve("What is the capital of France?")) == results(
        idx.as_retriever(k=3, graph_view="flat").retrieve("What is the capital of France?")
    )
    assert small.cache is not before and all(
        h.doc_id != "Paris" for h in small.retrieve("capital of France")
    )


def test_second_query_is_served_from_the_cache() -> None:
    idx = build(CORPUS, graph_store=CountingGraph)
    qiter = idx.as_retriever(k=2)
    qiter.retrieve("Where was the manager of Nottingham Forest born?")
    cache = qiter.cache
    assert cache is not None
    reads = sum(cache.reads.values())
    qiter.retrieve("Where was the manager of Nottingham Forest born?")
    assert qiter.cache is cache
    assert sum(cache.reads.values()) == reads  # every node already cached


def test_graph_view_is_a_validated_query_param() -> None:
    from graphrag_integrations.core.params import InvalidParameterError

    idx = build(CORPUS[:2])
    with pytest.raises(InvalidParameterError):
        idx.as_retriever(graph_view="lazy")
    with pytest.raises(InvalidParameterError):
        idx.as_retriever(cache_nodes=0)
    assert not idx.as_retriever().reads_neighbourhoods
    assert isinstance(idx.as_retriever().view(), ClueGraph)
    assert isinstance(QIter(idx, graph_view="neighbourhood").view(), NeighbourhoodView)


def test_unknown_document_delete_keeps_the_statistics() -> None:
    idx = build(CORPUS[:2])
    before = read_statistics(idx.graph_store)
    assert not idx.delete("nope")
    assert read_statistics(idx.graph_store) == before


def test_delete_many_writes_the_statistics_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphrag_integrations.methods.clue import statistics

    idx = build(CORPUS)
    writes: list[int] = []
    original = statistics._write
    monkeypatch.setattr(
        statistics, "_write", lambda *a, **k: (writes.append(1), original(*a, **k))[1]
    )
    assert idx.delete_many(["Paris", "nope", "Chelsea F.C.", "Brian Clough"]) == [
        "Paris",
        "Chelsea F.C.",
        "Brian Clough",
    ]
    assert len(writes) == 1
    assert read_statistics(idx.graph_store) == count_statistics(idx.graph_store)[0]
    assert "Paris" not in idx.doc_ids()
