"""Hybrid fusion: min-max and RRF arithmetic, candidates, ties, lifecycle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.hybrid import HybridRetriever, minmax, ranks
from graphrag_integrations.baselines.params import HybridQueryParams
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import IndexMismatchError
from tests.conftest import FakeEmbedder

PASSAGES = [
    Passage("p0", "Paris is the capital of France", "d0"),
    Passage("p1", "Rome is the capital of Italy and has the Colosseum", "d1"),
    Passage("p2", "Berlin is the capital of Germany", "d2"),
    Passage("p3", "The Colosseum is an amphitheatre", "d3"),
    Passage("p4", "Bananas are yellow fruit", "d4"),
]


def make(**options: object) -> HybridRetriever:
    params = HybridQueryParams.from_options(options)
    return HybridRetriever.from_passages(PASSAGES, FakeEmbedder(), query_params=params)


def test_minmax_and_ranks() -> None:
    assert minmax(np.array([1.0, 3.0, 2.0], dtype=np.float32)).tolist() == [0.0, 1.0, 0.5]
    assert minmax(np.array([2.0, 2.0], dtype=np.float32)).tolist() == [0.0, 0.0]
    assert ranks(np.array([0.5, 0.9, 0.5, 0.1], dtype=np.float32)).tolist() == [2, 1, 3, 4]


def test_minmax_fusion_matches_hand_computation() -> None:
    h = make(weight=0.3)
    q = "Colosseum in Rome"
    dense, sparse = h.dense.scores(q), h.bm25.scores(q)
    cands, fused = h.fused_scores(q, k=1)  # 4 candidates from each side, union
    expected_cands = sorted(
        set(np.argsort(-dense, kind="stable")[:4].tolist())
        | set(np.argsort(-sparse, kind="stable")[:4].tolist())
    )
    assert cands == expected_cands
    d, s = dense[cands], sparse[cands]
    want = 0.3 * (d - d.min()) / (d.max() - d.min()) + 0.7 * (s - s.min()) / (s.max() - s.min())
    assert fused.tolist() == pytest.approx(want.tolist(), abs=1e-6)
    top = h.retrieve(q, k=2)
    assert top[0].id == PASSAGES[cands[int(np.argmax(want))]].id
    assert top[0].explanation == {"method": "hybrid", "fusion": "minmax", "weight": 0.3}


def test_rrf_fusion_matches_hand_computation() -> None:
    h = make(fusion="rrf", weight=0.5)
    q = "capital Colosseum"
    rd, rs = ranks(h.dense.scores(q)), ranks(h.bm25.scores(q))
    cands, fused = h.fused_scores(q, k=2)
    want = [0.5 / (60 + rd[i]) + 0.5 / (60 + rs[i]) for i in cands]
    assert fused.tolist() == pytest.approx(want)


def test_weight_extremes_follow_one_side() -> None:
    q = "Colosseum amphitheatre"
    dense_only = make(weight=1.0)
    assert [r.id for r in dense_only.retrieve(q, k=3)] == [
        r.id for r in dense_only.dense.retrieve(q, k=3)
    ]
    bm25_only = make(weight=0.0)
    assert bm25_only.retrieve(q, k=1)[0].id == bm25_only.bm25.retrieve(q, k=1)[0].id


def test_ties_are_deterministic() -> None:
    h = make()
    first = [r.id for r in h.retrieve("capital", k=4)]
    assert first == [r.id for r in make().retrieve("capital", k=4)]
    scores = [r.score for r in h.retrieve("capital", k=4)]
    assert scores == sorted(scores, reverse=True)


def test_validation() -> None:
    with pytest.raises(ValueError, match="weight"):
        make(weight=1.5)
    with pytest.raises(ValueError, match="fusion"):
        make(fusion="sum")
    dense = DenseRetriever(PASSAGES, FakeEmbedder())
    with pytest.raises(IndexMismatchError):
        HybridRetriever(dense, BM25Retriever(PASSAGES[:2]))


def test_lifecycle_insert_delete_persist(tmp_path: Path) -> None:
    h = HybridRetriever.from_documents(
        ["Tokyo is in Japan.", "Oslo is in Norway."],
        embedding=FakeEmbedder(),
        query_params=HybridQueryParams(fusion="rrf", k=1),
    )
    h.insert(["Lima is in Peru."])
    assert h.retrieve("Peru")[0].text == "Lima is in Peru."
    h.delete(h.retrieve("Peru")[0].doc_id)
    assert len(h.passages) == 2 == len(h.bm25.passages)
    h.persist(tmp_path / "hy")
    loaded = HybridRetriever.load(tmp_path / "hy", embedding=FakeEmbedder())
    assert loaded.fusion == "rrf" and loaded.passages == h.passages
    assert loaded.retrieve("Norway", k=1)[0].text == "Oslo is in Norway."
