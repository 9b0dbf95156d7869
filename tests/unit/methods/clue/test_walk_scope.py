"""The scoped global ranking of Clue-RAG (``ppr_scope_hops``, methods.clue.walk_scope): the
walk keeps to the chunks within a few chunk steps of its seeds."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.retrieval.pagerank import personalized_pagerank
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.methods.clue.global_ranking import ranking_graph
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.params import ClueQueryParams
from graphrag_integrations.methods.clue.walk_scope import scope_passages, scoped_pagerank
from tests.conftest import FakeEmbedder

QUESTION = "Where is the company founded by Alice Johnson headquartered?"
#: a -> b -> c: the query entity's chunk, the company's (one chunk step), the city's (two)
TEXTS = {
    "a": "Alice Johnson founded Globex Corporation in Chicago.",
    "b": "Globex Corporation later moved to Springfield.",
    "c": "Springfield lies on the Willow River in Oregon.",
    **{
        f"d{i}": f"The company was founded and headquartered where the founder lived, case {i}."
        for i in range(4)
    },
}
#: Q-Iter one hop deep (it reaches a only); the walk seeded by the query entity alone
OPTIONS: dict[str, Any] = {
    "D": 1,
    "K": 1,
    "M": 2,
    "ppr_weight": 100.0,
    "ppr_fact_top_k": 0,
    "ppr_passage_node_weight": 0.0,
    "ppr_activation_steps": 0,
}


@pytest.fixture()
def index() -> ClueIndex:
    docs = [SourceDocument(text, d, {"group": d[0]}) for d, text in TEXTS.items()]
    return ClueIndex.from_documents(docs, embedding=FakeEmbedder(512))


def _ranks(index: ClueIndex, where: Any = None, **params: Any) -> dict[str, int | None]:
    retriever = index.as_retriever(k=3, **OPTIONS, **params)
    hits = retriever.retrieve(QUESTION, filter=where)
    return {hit.doc_id: hit.explanation["global_rank"] for hit in hits}


def test_the_walk_reaches_only_chunks_within_the_scope(index: ClueIndex) -> None:
    assert list(_ranks(index)) == ["a", "b", "c"]
    one = _ranks(index, ppr_scope_hops=1)
    assert one["a"] == 1 and "c" not in one and one.get("b") is None
    two = _ranks(index, ppr_scope_hops=2)
    assert two["a"] == 1 and two["b"] == 2 and "c" not in two
    assert list(_ranks(index, ppr_scope_hops=3)) == ["a", "b", "c"]


def test_a_scope_covering_the_graph_walks_as_the_whole_graph(index: ClueIndex) -> None:
    flat = index.graph
    graph = ranking_graph(index.store, flat, 0.8).graph
    rng = np.random.default_rng(0)
    restart = rng.random(graph.n_passages + len(graph.entity_names))
    keep = np.ones(graph.n_passages, dtype=np.bool_)
    scoped = scoped_pagerank(graph, graph.full, keep, restart, 0.5)
    whole = personalized_pagerank(graph.full.transition, restart, damping=0.5)
    assert np.allclose(scoped, whole)
    none = np.zeros(len(graph.entity_names))
    assert not scope_passages(graph, graph.full, none, np.zeros(0, np.int64), 3).any()


def test_a_filtered_scoped_walk_stays_in_the_filter(index: ClueIndex) -> None:
    where = {"doc_id": {"$in": ["a", "c", "d0"]}}
    ranks = _ranks(index, where=where, ppr_scope_hops=3)
    assert set(ranks) <= {"a", "c", "d0"} and ranks["a"] == 1 and ranks.get("c") is None


def test_the_neighbourhood_view_scopes_as_the_flat_view(index: ClueIndex) -> None:
    def run(view: str) -> list[tuple[str, float]]:
        retriever = index.as_retriever(k=5, graph_view=view, ppr_scope_hops=2, **OPTIONS)
        return [(h.doc_id, round(h.score, 6)) for h in retriever.retrieve(QUESTION)]

    assert run("neighbourhood") == run("flat")


def test_the_scope_is_off_by_default_and_never_negative() -> None:
    assert ClueQueryParams().ppr_scope_hops == 0
    assert ClueQueryParams.from_options({"preset": "paper"}).ppr_scope_hops == 0
    with pytest.raises(ValueError):
        ClueQueryParams(ppr_scope_hops=-1)
