"""Tests for core.index.checkpoint: a killed checkpointed build resumes where it stopped."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.params import DenseQueryParams
from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.index.checkpoint import (
    CHECKPOINT_FILE,
    INDEX_FOLDER,
    read_checkpoint,
)
from graphrag_integrations.errors import IndexExistsError, IndexMismatchError
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

DOCS = [{"id": f"d{i}", "text": f"Town {i} lies on the river number {i % 4}."} for i in range(10)]
QUERIES = ["town on river number 2", "Town 7", "river 0"]


class Crash(RuntimeError):
    pass


class FailingEmbedder(FakeEmbedder):
    """Raises on its ``fail_on``-th ``embed`` call (1-based; ``None``: never)."""

    def __init__(self, fail_on: int | None = None) -> None:
        super().__init__(model_name="fake-ckpt")
        self.fail_on = fail_on
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str], *, show_progress: bool = False) -> FloatMatrix:
        if self.fail_on is not None and len(self.calls) + 1 == self.fail_on:
            raise Crash("embedder died")
        self.texts.extend(texts)
        return super().embed(texts, show_progress=show_progress)


def answers(index: object) -> list[list[tuple[str, float]]]:
    return [
        [(h.id, round(h.score, 6)) for h in index.retrieve(q, k=5)]  # type: ignore[attr-defined]
        for q in QUERIES
    ]


def test_dense_resumes_and_equals_an_uninterrupted_build(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    with pytest.raises(Crash):  # batches of 3: calls 1, 2 succeed, the 3rd batch dies
        DenseRetriever.from_documents(
            DOCS, embedding=FailingEmbedder(fail_on=3), checkpoint_dir=ckpt, checkpoint_every=3
        )
    state = read_checkpoint(ckpt)
    assert state["done"] == [f"d{i}" for i in range(6)] and state["batches"] == 2
    assert len(DenseRetriever.load(ckpt / INDEX_FOLDER, embedding=FailingEmbedder()).passages) == 6
    emb = FailingEmbedder()
    resumed = DenseRetriever.from_documents(
        DOCS, embedding=emb, checkpoint_dir=ckpt, checkpoint_every=3
    )
    # only the four documents not done were embedded again
    assert emb.texts == [d["text"] for d in DOCS[6:]]
    assert read_checkpoint(ckpt)["done"] == [d["id"] for d in DOCS]
    plain = DenseRetriever.from_documents(DOCS, embedding=FailingEmbedder())
    assert answers(resumed) == answers(plain)
    assert [p.doc_id for p in resumed.passages] == [d["id"] for d in DOCS]
    # a re-run finds everything done: nothing embedded
    again = FailingEmbedder()
    DenseRetriever.from_documents(DOCS, embedding=again, checkpoint_dir=ckpt, checkpoint_every=3)
    assert again.texts == []


def test_killed_between_persist_and_checkpoint_write_resumes(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    DenseRetriever.from_documents(
        DOCS[:6], embedding=FailingEmbedder(), checkpoint_dir=ckpt, checkpoint_every=3
    )
    # simulate the kill: the index holds 6 documents, the checkpoint lists only 3
    state = json.loads((ckpt / CHECKPOINT_FILE).read_text())
    state["done"] = state["done"][:3]
    (ckpt / CHECKPOINT_FILE).write_text(json.dumps(state))
    resumed = DenseRetriever.from_documents(
        DOCS, embedding=FailingEmbedder(), checkpoint_dir=ckpt, checkpoint_every=3
    )
    assert [p.doc_id for p in resumed.passages] == [d["id"] for d in DOCS]


def test_clue_resumes_and_equals_an_uninterrupted_checkpointed_build(tmp_path: Path) -> None:
    pytest.importorskip("spacy")
    opts = {"checkpoint_every": 4}
    whole = ClueIndex.from_documents(
        DOCS, embedding=FailingEmbedder(), checkpoint_dir=tmp_path / "whole", **opts
    )
    probe = FailingEmbedder()
    ClueIndex.from_documents(DOCS[:4], embedding=probe)  # embed calls of one batch
    per_batch = len(probe.calls)
    with pytest.raises(Crash):
        ClueIndex.from_documents(
            DOCS,
            embedding=FailingEmbedder(fail_on=per_batch + 1),  # dies in the second batch
            checkpoint_dir=tmp_path / "ckpt",
            **opts,
        )
    assert len(read_checkpoint(tmp_path / "ckpt")["done"]) == 4
    resumed = ClueIndex.from_documents(
        DOCS, embedding=FailingEmbedder(), checkpoint_dir=tmp_path / "ckpt", **opts
    )
    assert answers(resumed) == answers(whole)
    # batched inserts link entities across batches: the same as one build
    assert answers(whole) == answers(ClueIndex.from_documents(DOCS, embedding=FailingEmbedder()))
    g, w = resumed.graph, whole.graph
    assert (g.n_units, g.n_entities) == (w.n_units, w.n_entities)


def test_other_settings_or_method_are_refused(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    k3, k4, every = DenseQueryParams(k=3), DenseQueryParams(k=4), {"checkpoint_every": 2}
    DenseRetriever.from_documents(
        DOCS[:3], embedding=FailingEmbedder(), query_params=k3, checkpoint_dir=ckpt, **every
    )
    with pytest.raises(IndexMismatchError, match=r"other settings \(query_params differ\)"):
        DenseRetriever.from_documents(
            DOCS, embedding=FailingEmbedder(), query_params=k4, checkpoint_dir=ckpt, **every
        )
    with pytest.raises(IndexMismatchError, match=r"\(index_params, query_params differ\)"):
        DenseRetriever.from_documents(  # a preset is recorded as the params it names
            DOCS, embedding=FailingEmbedder(), preset="default", checkpoint_dir=ckpt, **every
        )
    with pytest.raises(IndexMismatchError, match=r"other settings \(embedding differ\)"):
        DenseRetriever.from_documents(
            DOCS, embedding=FakeEmbedder(), query_params=k3, checkpoint_dir=ckpt, **every
        )
    with pytest.raises(IndexMismatchError, match="method 'dense', not 'bm25'"):
        BM25Retriever.from_documents(DOCS, checkpoint_dir=ckpt)


def test_a_foreign_folder_and_bad_options_are_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(IndexExistsError, match="not a checkpoint"):
        DenseRetriever.from_documents(DOCS, embedding=FakeEmbedder(), checkpoint_dir=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    with pytest.raises(ValueError, match="checkpoint_every"):
        DenseRetriever.from_documents(
            DOCS, embedding=FakeEmbedder(), checkpoint_dir=tmp_path / "x", checkpoint_every=0
        )
    with pytest.raises(TypeError, match="checkpoint_every needs checkpoint_dir"):
        DenseRetriever.from_documents(DOCS, embedding=FakeEmbedder(), checkpoint_every=2)
