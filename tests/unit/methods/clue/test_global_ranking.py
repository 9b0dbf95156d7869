"""Clue's global ranking (methods.clue.global_ranking): a personalized PageRank over the
index's own chunks and entities, fused with Q-Iter's chunk ranking."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.methods.clue.global_ranking import RankingGraph, fuse, keep_leader
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.params import ClueQueryParams
from tests.conftest import FakeEmbedder

QUESTION = "Where is the company founded by Alice Johnson headquartered?"
#: a -> b -> c: the query entity's chunk, the company's, the city's (two entity hops away).
CHAIN = {
    "a": "Alice Johnson founded Globex Corporation in Chicago.",
    "b": "Globex Corporation later moved to Springfield.",
    "c": "Springfield lies on the Willow River in Oregon.",
}
#: chunks sharing the question's words but no entity with the chain
OTHERS = {
    f"d{i}": f"The company was founded and headquartered where the founder lived, case {i}."
    for i in range(6)
}
#: Q-Iter one hop deep (it reaches a only); the walk seeded by the query entity alone
SEARCH: dict[str, Any] = {"D": 1, "K": 1, "M": 2}
WALK: dict[str, Any] = {
    "ppr_weight": 100.0,
    "ppr_fact_top_k": 0,
    "ppr_passage_node_weight": 0.0,
    "ppr_activation_steps": 0,
}


def _documents(ids: list[str] | None = None) -> list[SourceDocument]:
    texts = {**CHAIN, **OTHERS}
    return [SourceDocument(texts[d], d, {"group": d[0]}) for d in ids or list(texts)]


@pytest.fixture()
def index() -> ClueIndex:
    return ClueIndex.from_documents(_documents(), embedding=FakeEmbedder(512))


def _ids(index: ClueIndex, k: int = 3, where: Any = None, **params: Any) -> list[str]:
    retriever = index.as_retriever(k=k, **SEARCH, **params)
    return [hit.doc_id for hit in retriever.retrieve(QUESTION, filter=where)]


def test_a_chunk_two_entity_hops_away_is_ranked_only_with_the_global_ranking(
    index: ClueIndex,
) -> None:
    assert "c" not in _ids(index)
    assert "c" not in _ids(
        index, ppr_weight=0.0, **{k: v for k, v in WALK.items() if k != "ppr_weight"}
    )
    on = index.as_retriever(k=3, **SEARCH, **WALK).retrieve(QUESTION)
    assert [hit.doc_id for hit in on] == ["a", "b", "c"]
    last = on[-1].explanation
    assert last["global_rank"] == 3 and "alice johnson" in last["seed_entities"]
    assert "global PageRank" in last["fallback"]  # Q-Iter did not reach it


def test_the_paper_preset_keeps_the_global_ranking_off() -> None:
    assert ClueQueryParams.from_options({"preset": "paper"}).ppr_weight == 0.0


def test_a_filter_walks_only_the_allowed_chunks(index: ClueIndex) -> None:
    allowed = ["a", "c", *OTHERS]
    where = {"doc_id": {"$in": allowed}}
    hits = _ids(index, k=8, where=where, **WALK)
    assert set(hits) <= set(allowed)
    # without b the chain is cut: c gets no mass from the walk, so it is not ranked by it
    explained = index.as_retriever(k=8, **SEARCH, **WALK).retrieve(QUESTION, filter=where)
    ranks = {hit.doc_id: hit.explanation["global_rank"] for hit in explained}
    assert ranks["a"] == 1 and ranks.get("c") is None


def test_delete_and_insert_rebuild_the_walked_graph(index: ClueIndex) -> None:
    assert "c" in _ids(index, **WALK)
    index.delete("b")
    assert "c" not in _ids(index, **WALK)
    index.insert(_documents(["b"]))
    assert _ids(index, **WALK) == ["a", "b", "c"]


def test_the_neighbourhood_view_ranks_as_the_flat_view(index: ClueIndex) -> None:
    def run(view: str) -> list[tuple[str, float]]:
        retriever = index.as_retriever(k=5, graph_view=view, **SEARCH, **WALK)
        return [(h.doc_id, round(h.score, 6)) for h in retriever.retrieve(QUESTION)]

    assert run("neighbourhood") == run("flat")


def test_synonym_edges_of_an_index_grown_by_inserts_equal_a_fresh_build() -> None:
    grown = ClueIndex.from_documents(_documents(["a", "d0"]), embedding=FakeEmbedder(512))
    before = RankingGraph.build(grown.graph, 0.5)
    grown.insert(_documents(["b", "c"]))
    fresh = ClueIndex.from_documents(_documents(["a", "d0", "b", "c"]), embedding=FakeEmbedder(512))
    after = RankingGraph.build(grown.graph, 0.5, before)
    expected = RankingGraph.build(fresh.graph, 0.5)
    assert after.synonyms == expected.synonyms
    assert (after.graph.adjacency != expected.graph.adjacency).nnz == 0


def test_fusion_adds_the_global_ranks_to_qiter_s() -> None:
    assert [r for r, _ in fuse([5, 6], [7, 6], 1.0, 10.0, 3)] == [6, 5, 7]
    scores = [s for _, s in fuse([5, 6], [7, 6], 1.0, 10.0, 3)]
    assert scores == sorted(scores, reverse=True)
    assert np.isclose(scores[0], 1 / 12 + 1 / 12)


def test_qiter_s_first_chunk_stays_first_only_when_it_leads_by_the_margin() -> None:
    fused = [(7, 0.6), (1, 0.5), (8, 0.4)]
    scores = {1: 0.9, 2: 0.7}
    assert keep_leader(fused, [1, 2], scores, 0.2) == [(1, 0.6), (7, 0.6), (8, 0.4)]
    assert keep_leader(fused, [1, 2], scores, 0.3) == fused  # a lead of 0.2 only
    assert keep_leader(fused, [1, 2], scores, None) == fused
    assert keep_leader(fused, [1], {1: 0.9}, 0.0) == fused  # no second chunk to lead
    # from outside the fused top: it pushes the last one out
    assert keep_leader([(7, 0.6), (8, 0.4)], [1, 2], scores, 0.1) == [(1, 0.6), (7, 0.6)]


def test_the_margin_is_a_validated_query_option() -> None:
    assert ClueQueryParams.from_options({"ppr_keep_margin": "none"}).ppr_keep_margin is None
    with pytest.raises(ValueError, match="ppr_keep_margin"):
        ClueQueryParams(ppr_keep_margin=-0.1)


@pytest.mark.slow
def test_a_single_hop_question_keeps_its_own_passage_first(tmp_path: Path) -> None:
    """The sample corpus case: the walk ranks "Leland, North Carolina" (a sentence naming the
    film and two others) first, Q-Iter the film's own passage, far ahead."""
    sample = Path(__file__).resolve().parents[4] / "examples" / "data" / "sample_corpus"
    for name in ("Maximum_Overdrive", "Leland_North_Carolina", "Chuck_Rowland", "Blennerville"):
        shutil.copy(sample / f"{name}.txt", tmp_path)
    index = ClueIndex.from_documents(tmp_path)

    def files(**params: Any) -> list[str]:
        hits = index.as_retriever(k=2, **params).retrieve("Who directed Maximum Overdrive?")
        return [hit.passage.metadata["file_name"] for hit in hits]

    assert files(ppr_weight=0.0)[0] == "Maximum_Overdrive.txt"
    assert files(ppr_keep_margin=None)[0] == "Leland_North_Carolina.txt"
    assert files() == ["Maximum_Overdrive.txt", "Leland_North_Carolina.txt"]
