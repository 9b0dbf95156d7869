"""QCG retrieval reading per-query neighbourhoods (database graphs) == reading the whole view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex
from graphrag_integrations.methods.qcg.neighbourhood import nearest_chunks, seed_queries
from graphrag_integrations.methods.qcg.params import QCGQueryParams
from graphrag_integrations.methods.qcg.prompts import QAPair
from graphrag_integrations.methods.qcg.retrieval import query_scores, select_queries
from graphrag_integrations.methods.qcg.store import QCGStore
from tests.conftest import FakeEmbedder
from tests.unit.methods.qcg.test_qcg_index import QUESTIONS, FakeLLM, build, documents, qcg_params

#: Query settings, and whether the questions retrieve anything with them.
SETTINGS: list[tuple[dict[str, Any], bool]] = [
    ({"preset": "paper"}, True),
    ({"preset": "paper", "h": 2, "n": 3, "gamma": 1.2}, True),
    ({"symmetric_knn": True, "h": 2, "n": 2}, True),
    ({"chunk_weight": 0.3, "chunk_candidates": 3}, True),
    ({"preset": "paper", "n": 1, "gamma": 2.0}, False),  # nothing passes gamma
]


def results(index: QueryCentricGraphIndex) -> list[list[tuple[str, float, Any]]]:
    """Ids, scores and explanations (matched queries, hops, s) of every question."""
    return [[(h.id, h.score, h.explanation) for h in index.retrieve(q, k=4)] for q in QUESTIONS]


def refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a query read the whole graph")


def no_whole_graph_reads(index: QueryCentricGraphIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make listing the graph's nodes, or building the whole-graph view, fail."""
    monkeypatch.setattr(index.store.graph_store, "nodes", refuse)
    monkeypatch.setattr(index.store, "query_graph", refuse)
    monkeypatch.setattr(index.store, "chunk_ids", refuse)


@pytest.mark.parametrize(("options", "retrieves"), SETTINGS)
def test_neighbourhood_reads_give_the_same_results_as_the_view(
    options: dict[str, Any], retrieves: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = build(**options)
    expected = results(index)
    assert any(expected) == retrieves
    index.store.neighbourhood_reads = True
    no_whole_graph_reads(index, monkeypatch)
    assert results(index) == expected


def test_an_in_process_graph_reads_the_view_by_default() -> None:
    index = build()
    assert not index.store.reads_lazily
    index.store.neighbourhood_reads = True
    assert index.store.reads_lazily


@pytest.mark.falkordb_server
def test_a_loaded_falkordb_index_reads_neighbourhoods_with_networkx_results(
    falkordb_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    options: dict[str, Any] = {"symmetric_knn": True, "h": 2, "n": 2, "chunk_candidates": 2}
    expected = results(build(**options))
    built = QueryCentricGraphIndex.from_documents(
        documents(),
        embedding=FakeEmbedder(),
        llm=FakeLLM(),
        graph_store=FalkorDBGraph.at(falkordb_url),
        **qcg_params(**options),
    )
    built.persist(tmp_path / "index")
    monkeypatch.setattr(GraphStore, "load", refuse)  # the graph stays in the database
    monkeypatch.setattr(QCGStore, "query_graph", refuse)
    index = QueryCentricGraphIndex.load(tmp_path / "index", embedding=FakeEmbedder())
    assert index.store.reads_lazily
    no_whole_graph_reads(index, monkeypatch)
    assert results(index) == expected


def test_seeds_break_ties_by_query_id_like_the_view() -> None:
    store = QCGStore("toy")
    same = np.array([0.6, 0.8], np.float32)  # every query and chunk ties with the user query
    for name in ("e", "b", "d", "a", "c"):
        pairs = [QAPair(f"{name}?", name), QAPair(f"{name}!", name)]
        store.add_chunk(
            Passage(name, name, name), pairs, [(0, 0.9), (1, 0.9)], np.stack([same, same]), same
        )
    user = np.array([1.0, 0.0], np.float32)
    params = QCGQueryParams.preset("paper", n=3, gamma=1.0)
    view = store.query_graph()
    expected = [view.ids[r] for r in select_queries(query_scores(view, user, 1.0), 1.0, 3)]
    assert list(seed_queries(store, user, params)) == expected == ["a-0", "a-1", "b-0"]
    assert nearest_chunks(store, user, 2) == ["a", "b"]
