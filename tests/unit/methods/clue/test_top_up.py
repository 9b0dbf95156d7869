"""Q-Iter's top-up from two candidate lists (nearest chunks, chunks holding the query's rarer
words): the same chunks, scores and order as scoring every chunk, without reading them all."""

from __future__ import annotations

import re
from typing import Any

import pytest

from graphrag_integrations.core.graph.term_search import TermSearch, searchable
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.neighbourhood import NeighbourhoodCache
from graphrag_integrations.methods.clue.store import CHUNK
from graphrag_integrations.methods.clue.term_index import TERMS, chunk_terms, has_term_index
from tests.unit.clue_fixtures import CORPUS, documents
from tests.unit.methods.clue.test_neighbourhood import (
    FILLER,
    QUESTIONS,
    CountingGraph,
    OverlapReranker,
    build,
    results,
)


class TermGraph(CountingGraph):
    """The counting test backend with the ``TermSearch`` contract answered by a scan (exact
    word matches; FalkorDB's full-text index is tested in test_neighbourhood_falkordb.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.indexed: set[str] = set()

    def has_term_index(self, attr: str) -> bool:
        return attr in self.indexed

    def index_terms(self, attr: str) -> None:
        self.indexed.add(attr)

    def nodes_without(self, attr: str, type: str) -> list[str]:
        return [n for n, d in self._nodes.items() if d["type"] == type and attr not in d]

    def nodes_with_term(self, attr: str, term: str, type: str | None = None) -> list[str]:
        assert attr in self.indexed and searchable(term)
        return [
            n
            for n, d in self._nodes.items()
            if (type is None or d["type"] == type) and term in str(d.get(attr, "")).split(" ")
        ]


QUERIES = [*QUESTIONS, "Village 7 bakeries", "a mill in the river Tees"]


@pytest.fixture(scope="module")
def index() -> ClueIndex:
    return build(CORPUS + FILLER, ("twin-a", "twin-b"), graph_store=TermGraph)


def reads(retriever: Any) -> NeighbourhoodCache:
    cache = retriever.cache
    assert isinstance(cache, NeighbourhoodCache)
    return cache


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"D": 1, "M": 1, "K": 1},
        {"lexical_weight": 0.0},
        {"lexical_weight": 1.0, "path_weight": 0.0},
        {"query_updating": False, "spreading_activation": False},
    ],
)
def test_top_up_gives_what_scoring_every_chunk_gives(index: ClueIndex, params: Any) -> None:
    assert isinstance(index.graph_store, TermSearch) and has_term_index(index.store)
    n = len(index.doc_ids())
    lazy = {k: index.as_retriever(k=k, graph_view="neighbourhood", **params) for k in (4, 9, n)}
    for question in QUERIES:
        for k, retriever in lazy.items():
            flat = index.as_retriever(k=k, graph_view="flat", **params).retrieve(question)
            assert results(retriever.retrieve(question)) == results(flat), (question, k)
    for retriever in lazy.values():
        assert reads(retriever).reads["chunk_scan"] == 0  # never scanned
        assert reads(retriever).reads["chunk_nearest"] > 0  # but topped up


def test_top_up_reads_only_candidates() -> None:
    villages = [(f"Village {n}", f"Village {n} has {n} bakeries and a mill.") for n in range(80)]
    idx = build(CORPUS + villages, graph_store=TermGraph)
    graph = idx.graph_store
    assert isinstance(graph, TermGraph)
    # Q-Iter alone: the global ranking reads the whole graph once per version (its flat view)
    retriever = idx.as_retriever(k=4, graph_view="neighbourhood", D=1, M=1, K=1, ppr_weight=0.0)
    graph.read.clear()
    hits = retriever.retrieve("Where was the manager of Nottingham Forest born?")
    assert any("fallback" in h.explanation for h in hits)  # some came from the top-up
    assert reads(retriever).reads["chunk_scan"] == 0
    chunks = set(graph.nodes(CHUNK))
    assert 0 < len(graph.read & chunks) < len(chunks) / 2
    flat = idx.as_retriever(k=4, graph_view="flat", D=1, M=1, K=1, ppr_weight=0.0)
    assert results(hits) == results(
        flat.retrieve("Where was the manager of Nottingham Forest born?")
    )


def test_a_reranker_scorer_still_scans(index: ClueIndex) -> None:
    idx = build(CORPUS + FILLER, reranker=OverlapReranker(), graph_store=TermGraph)
    k = len(idx.doc_ids())
    lazy = idx.as_retriever(k=k, graph_view="neighbourhood")
    flat = idx.as_retriever(k=k, graph_view="flat")
    assert results(lazy.retrieve(QUERIES[0])) == results(flat.retrieve(QUERIES[0]))
    assert reads(lazy).reads["chunk_scan"] == 1


def test_chunks_carry_their_words_and_an_older_graph_gets_them_once() -> None:
    idx = build(CORPUS[:3], graph_store=TermGraph)
    graph = idx.graph_store
    assert isinstance(graph, TermGraph)
    for name in graph.nodes(CHUNK):
        data = graph.node(name)
        assert data[TERMS] == chunk_terms(data["text"])
        assert data[TERMS].split(" ") == list(
            dict.fromkeys(re.findall(r"\w+", data["text"].lower()))
        )
        del graph._nodes[name][TERMS]  # as written before the attribute existed
    graph.indexed.clear()
    assert not has_term_index(idx.store)
    idx.insert(documents(CORPUS[3:4]))
    assert has_term_index(idx.store)
    assert all(TERMS in graph.node(name) for name in graph.nodes(CHUNK))
