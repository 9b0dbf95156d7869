"""Resuming a checkpointed build whose killed batch already wrote part of a database graph."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.graph.falkordb_connection import parse_falkordb_url
from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
from graphrag_integrations.core.index.checkpoint import (
    EMPTY_GRAPH_KEY,
    INDEX_FOLDER,
    PENDING_KEY,
    read_checkpoint,
    write_checkpoint,
)
from graphrag_integrations.core.index.executors.local import LocalExecutor
from graphrag_integrations.core.index.rollback import rolling_back
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.errors import IndexExistsError, IndexMismatchError
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

DOCS = [{"id": f"d{i}", "text": f"Town {i} lies on the river number {i % 4}."} for i in range(8)]
QUERIES = ["town on river number 2", "Town 7", "river 0"]


class Killed(Exception):
    pass


def answers(index: Any) -> list[list[tuple[str, float]]]:
    return [[(h.id, round(h.score, 6)) for h in index.retrieve(q, k=5)] for q in QUERIES]


@pytest.fixture
def url(falkordb_url: str) -> str:
    """A graph of this test's own on the session's server, deleted afterwards (conftest)."""
    return falkordb_url


def options() -> dict[str, Any]:
    """The checkpointed builds' options: batches of 4 documents, the fake embedder."""
    pytest.importorskip("spacy")
    return {"checkpoint_every": 4, "embedding": FakeEmbedder()}


@pytest.fixture
def whole(tmp_path: Path) -> ClueIndex:
    """The corpus built with checkpoints, no database and no kill: what a resume must give."""
    return ClueIndex.from_documents(DOCS, checkpoint_dir=tmp_path / "whole", **options())


@pytest.mark.falkordb_server
def test_clue_in_falkordb_resumes_after_a_batch_killed_before_its_save(
    url: str,
    whole: ClueIndex,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    opts = options()
    persist = ClueIndex.persist
    calls: list[Path] = []

    def killed(index: ClueIndex, path: Path, **kwargs: Any) -> None:
        calls.append(path)
        if len(calls) > 1:  # the second batch is in the graph, the process dies before saving
            raise Killed
        persist(index, path, **kwargs)

    monkeypatch.setattr(ClueIndex, "persist", killed)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(Killed):
        ClueIndex.from_documents(DOCS, checkpoint_dir=ckpt, graph_store=url, **opts)
    monkeypatch.undo()
    state = read_checkpoint(ckpt)
    assert state["done"] == ["d0", "d1", "d2", "d3"]
    assert state[PENDING_KEY] == ["d4", "d5", "d6", "d7"]  # what the graph holds beyond it

    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.core.index.rollback"):
        resumed = ClueIndex.from_documents(DOCS, checkpoint_dir=ckpt, graph_store=url, **opts)
    assert "rolled back 4 document(s)" in caplog.text and "d4, d5, d6, d7" in caplog.text
    state = read_checkpoint(ckpt)
    assert state["done"] == [d["id"] for d in DOCS] and PENDING_KEY not in state
    assert resumed.doc_ids() == whole.doc_ids()
    assert answers(resumed) == answers(whole)
    # the statistics node was rolled back with the documents: the saved index loads and agrees
    loaded = ClueIndex.load(ckpt / INDEX_FOLDER, embedding=FakeEmbedder())
    assert loaded._counts() == whole._counts()
    assert answers(loaded) == answers(whole)


@pytest.mark.falkordb_server
def test_nodes_of_a_pending_document_not_yet_listed_are_rolled_back(
    url: str, whole: ClueIndex, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A batch killed mid-write: a chunk of ``d5`` reached the graph, its document did not."""
    opts = options()
    ckpt = tmp_path / "ckpt"
    first = ClueIndex.from_documents(DOCS[:4], checkpoint_dir=ckpt, graph_store=url, **opts)
    first.store.add_node("chunk", "d5#0", ("d5",), text="Town 5 lies on the river number 1.")
    state = read_checkpoint(ckpt)
    write_checkpoint(ckpt, {**state, PENDING_KEY: ["d4", "d5", "d6", "d7"]})
    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.core.index.rollback"):
        resumed = ClueIndex.from_documents(DOCS, checkpoint_dir=ckpt, graph_store=url, **opts)
    assert "rolled back 1 document(s)" in caplog.text and ": d5" in caplog.text
    assert answers(resumed) == answers(whole)


@pytest.mark.falkordb_server
def test_a_first_batch_killed_before_its_save_is_rolled_back_from_the_graph_it_made(
    url: str, whole: ClueIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opts = options()

    def killed(index: ClueIndex, path: Path, **kwargs: Any) -> None:
        raise Killed  # the first batch is in the graph, nothing is saved

    monkeypatch.setattr(ClueIndex, "persist", killed)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(Killed):
        ClueIndex.from_documents(DOCS, checkpoint_dir=ckpt, graph_store=url, **opts)
    monkeypatch.undo()
    state = read_checkpoint(ckpt)
    assert state["done"] == [] and state[PENDING_KEY] == ["d0", "d1", "d2", "d3"]
    assert state[EMPTY_GRAPH_KEY] is True
    resumed = ClueIndex.from_documents(DOCS, checkpoint_dir=ckpt, graph_store=url, **opts)
    assert answers(resumed) == answers(whole)
    assert answers(ClueIndex.load(ckpt / INDEX_FOLDER, embedding=FakeEmbedder())) == answers(whole)


@pytest.mark.falkordb_server
def test_a_graph_holding_data_before_the_first_batch_is_never_rolled_back(
    url: str, tmp_path: Path
) -> None:
    opts = options()
    ClueIndex.from_documents(DOCS[:4], graph_store=url, embedding=FakeEmbedder())  # the user's
    where = parse_falkordb_url(url)
    held = len(FalkorDBGraph.open(where))
    ckpt = tmp_path / "ckpt"
    for _ in range(2):  # refused, and refused again on the re-run: nothing removed
        with pytest.raises(IndexExistsError):
            ClueIndex.from_documents(DOCS, checkpoint_dir=ckpt, graph_store=url, **opts)
        assert read_checkpoint(ckpt)[EMPTY_GRAPH_KEY] is False
        assert len(FalkorDBGraph.open(where)) == held


@pytest.mark.falkordb_server
def test_an_executor_build_killed_in_its_merge_resumes_into_the_same_graph(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The executor path (Ray's, here with the in-process executor): the merge wrote the
    graph, the driver died before the save; the re-run rolls it back and merges again."""
    pytest.importorskip("spacy")
    whole = ClueIndex.from_documents(DOCS, embedding=FakeEmbedder())

    def killed(index: ClueIndex, path: Path, **kwargs: Any) -> None:
        raise Killed  # merged into the graph, nothing saved

    ckpt = tmp_path / "ckpt"
    opts: dict[str, Any] = {"embedding": FakeEmbedder(), "checkpoint_dir": ckpt, "graph_store": url}
    monkeypatch.setattr(ClueIndex, "persist", killed)
    with pytest.raises(Killed):
        ClueIndex.from_documents(DOCS, executor=LocalExecutor(3), **opts)
    monkeypatch.undo()
    assert read_checkpoint(ckpt)[PENDING_KEY] == [d["id"] for d in DOCS]
    resumed = ClueIndex.from_documents(DOCS, executor=LocalExecutor(3), **opts)
    assert PENDING_KEY not in read_checkpoint(ckpt)
    loaded = ClueIndex.load(ckpt / INDEX_FOLDER, embedding=FakeEmbedder())
    assert answers(resumed) == answers(whole) == answers(loaded)


def _store_with_a_node_without_vector(directory: Path, provenance: str) -> None:
    store = IndexStore("toy", {"entity": "entities"})
    store.add_node("entity", "paris", ("d1",))
    store.add_vectors("entity", {"paris": np.array([1.0, 0.0])})
    store.add_node("entity", "rome", (provenance,))  # written, its vector never saved
    store.persist(directory)


def test_only_nodes_of_the_pending_documents_are_rolled_back(tmp_path: Path) -> None:
    load: dict[str, Any] = {"model_name": "toy", "dimension": 2, "layers": {"entity": "entities"}}
    _store_with_a_node_without_vector(tmp_path / "pending", "d2")
    with rolling_back(["d2"]) as rollback:
        store = IndexStore.load(tmp_path / "pending", **load)
    assert [(kind, keys) for _, kind, keys in rollback.placeholders] == [("entity", ["rome"])]
    assert store.remove_document("d2") == {"entity": ["rome"]}
    assert store.keys("entity") == ["paris"] and len(store.vectors["entities"]) == 1

    _store_with_a_node_without_vector(tmp_path / "done", "d1")  # a finished document's node
    with rolling_back(["d2"]), pytest.raises(IndexMismatchError, match="do not match"):
        IndexStore.load(tmp_path / "done", **load)
    with pytest.raises(IndexMismatchError, match="do not match"):  # no rollback: strict
        IndexStore.load(tmp_path / "pending", **load)
