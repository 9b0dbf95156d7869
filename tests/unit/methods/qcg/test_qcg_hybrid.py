"""``chunk_similarity="hybrid"``: the chunk side of QCG's fusion deviations from the core's
dense + BM25 fusion (candidates = the hybrid baseline's top c, similarity on the cosine
scale), kept consistent by insert / delete and persisted with the index."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.hybrid import HybridRetriever
from graphrag_integrations.baselines.registration import HybridParams
from graphrag_integrations.core.retrieval.fusion import ScoreFusion
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.methods.qcg import store as store_module
from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex
from graphrag_integrations.methods.qcg.params import QCGIndexParams, QCGQueryParams, preset
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

DOCS = {
    "paris": "Paris is the capital of France and sits on the Seine.",
    "rome": "Rome is the capital of Italy, on the Tiber.",
    "seine": "The Seine river flows through Paris to the sea at Le Havre.",
    "wine": "Bordeaux wine comes from the south west of France.",
    "pasta": "Italian pasta is eaten all over Italy and far beyond.",
    "alps": "The Alps separate France from Italy and Switzerland.",
    "tiber": "The Tiber river crosses Rome before reaching the sea.",
    "loire": "Castles line the Loire, the longest river in France.",
}
QUESTIONS = [
    "Which river flows through Paris?",
    "capital of Italy",
    "What separates France from Italy?",
    "longest river in France",
]


def only_paris(prompt: str) -> str:
    """A generator that gives a pair to the Paris chunk only (the others stay query-less)."""
    if "Paris is the capital" in prompt:
        return "Question: What is the capital of France?\nAnswer: Paris"
    return "nothing useful"


def documents(names: list[str]) -> list[SourceDocument]:
    return [SourceDocument(DOCS[n], id=n) for n in names]


def build(names: list[str], preset: str = "fused-hybrid", **query: Any) -> QueryCentricGraphIndex:
    """A QCG index over ``names``: ``preset`` with ``query`` fields overriding its query side."""
    index_params = QCGIndexParams.from_options({"preset": preset})
    query_params = QCGQueryParams.from_options({"preset": preset, **query})
    return QueryCentricGraphIndex.from_documents(
        documents(names),
        embedding=FakeEmbedder(),
        llm=only_paris,
        index_params=index_params,
        query_params=query_params,
    )


def test_the_presets_add_only_the_hybrid_chunk_side() -> None:
    assert QCGQueryParams().chunk_similarity == "hybrid"  # on by default (fused-hybrid)
    assert preset("paper").query.chunk_similarity == "dense"  # off in the paper
    assert preset("fused").query.chunk_similarity == "dense"
    for plain, hybrid in (
        ("fused", "fused-hybrid"),
        ("lihuaworld-fused", "lihuaworld-fused-hybrid"),
    ):
        p, h = preset(plain), preset(hybrid)
        assert h.index == p.index
        assert h.query.chunk_similarity == "hybrid"
        assert (h.query.chunk_weight, h.query.chunk_candidates) == (0.3, 10)
        assert h.query.gamma == p.query.gamma


def test_the_fusion_is_the_hybrid_baselines_default() -> None:
    p = HybridParams()
    assert ScoreFusion() == ScoreFusion(p.weight, p.fusion, p.candidate_factor, p.rrf_k)


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_candidates_are_the_hybrid_baselines_top_c_in_its_order(question: str) -> None:
    # gamma = 2: no generated query passes, so only the c candidates are ranked, by their
    # own similarity: the fused score on the cosine scale keeps the fused order
    index = build(list(DOCS), h=0, gamma=2.0, chunk_weight=0.0, chunk_candidates=4)
    hybrid = HybridRetriever.from_passages(index.passages, FakeEmbedder())
    got = [hit.id for hit in index.retrieve(question, k=4)]
    assert got == [hit.id for hit in hybrid.retrieve(question, k=4)]
    dense = DenseRetriever(index.passages, FakeEmbedder())
    index.query_params = replace(index.query_params, chunk_similarity="dense")  # dense side
    assert [hit.id for hit in index.retrieve(question, k=4)] == [
        hit.id for hit in dense.retrieve(question, k=4)
    ]


def test_a_hybrid_similarity_reads_like_a_cosine() -> None:
    """The best candidate gets the best candidate cosine, the worst the worst one."""
    dense = np.array([0.9, 0.2, 0.5, 0.1], dtype=np.float32)
    sparse = np.array([0.0, 4.0, 1.0, 0.0], dtype=np.float32)
    fusion = ScoreFusion()
    cands = fusion.candidates(dense, sparse, 1, candidate_factor=2)
    scaled = fusion.on_dense_scale(dense, sparse, cands, cands)
    fused = fusion.fuse(dense, sparse, cands)
    assert float(scaled.max()) == pytest.approx(float(dense[cands].max()))
    assert float(scaled.min()) == pytest.approx(float(dense[cands].min()))
    assert list(np.argsort(-scaled, kind="stable")) == list(np.argsort(-fused, kind="stable"))
    # a row outside the candidates gets the same affine formula, below them here
    outside = fusion.on_dense_scale(dense, sparse, cands, [3])
    assert float(outside[0]) < float(scaled.min())


def test_hybrid_changes_what_a_lexical_question_returns() -> None:
    """On a question the fake embedder cannot see but BM25 can, the hybrid side differs."""
    index = build(list(DOCS), h=0, gamma=2.0, chunk_weight=0.0, chunk_candidates=3)
    dense_index = build(
        list(DOCS), h=0, gamma=2.0, chunk_weight=0.0, chunk_candidates=3, chunk_similarity="dense"
    )
    differs = [
        q
        for q in QUESTIONS
        if [h.id for h in index.retrieve(q, k=3)] != [h.id for h in dense_index.retrieve(q, k=3)]
    ]
    assert differs  # the option is not a no-op on this corpus


def test_insert_and_delete_keep_the_bm25_side_equal_to_a_fresh_build() -> None:
    index = build(["paris", "rome", "seine", "wine"])
    index.retrieve(QUESTIONS[0])  # the lexicon view exists before the mutations
    index.insert(documents(["alps", "tiber", "loire", "pasta"]))
    assert index.delete("wine")
    fresh = build(["paris", "rome", "seine", "alps", "tiber", "loire", "pasta"])
    assert index.store.lexicon().ids == fresh.store.lexicon().ids
    for q in QUESTIONS:
        got = [(h.id, round(h.score, 6)) for h in index.retrieve(q, k=5)]
        assert got == [(h.id, round(h.score, 6)) for h in fresh.retrieve(q, k=5)]


def test_persist_writes_the_bm25_and_load_reads_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = build(list(DOCS))
    before = {q: [(h.id, h.score) for h in index.retrieve(q, k=5)] for q in QUESTIONS}
    index.persist(tmp_path / "idx")
    assert (tmp_path / "idx" / "bm25" / "chunks.json").is_file()

    built: list[int] = []

    class Counting(store_module.BM25Scorer):
        def __init__(self, texts: Any = ()) -> None:
            if texts:
                built.append(len(texts))
            super().__init__(texts)

    monkeypatch.setattr(store_module, "BM25Scorer", Counting)
    loaded = QueryCentricGraphIndex.load(tmp_path / "idx", embedding=FakeEmbedder())
    after = {q: [(h.id, h.score) for h in loaded.retrieve(q, k=5)] for q in QUESTIONS}
    assert after == before
    assert built == []  # read back, not re-tokenised
    assert loaded.delete("wine")
    loaded.retrieve(QUESTIONS[0])
    assert built == [len(DOCS) - 1]  # a mutation rebuilds it


def test_the_dense_mode_writes_no_bm25(tmp_path: Path) -> None:
    index = build(["paris", "rome"], preset="fused")
    index.persist(tmp_path / "idx")
    assert not (tmp_path / "idx" / "bm25").exists()
    loaded = QueryCentricGraphIndex.load(
        tmp_path / "idx",
        embedding=FakeEmbedder(),
        query_params=QCGQueryParams.from_options({"preset": "fused", "chunk_similarity": "hybrid"}),
    )
    # the lexicon is built on first use
    assert loaded.retrieve("capital of Italy", k=1)[0].passage.doc_id == "rome"
