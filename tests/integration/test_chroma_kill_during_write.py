"""Kill -9 the Chroma server that holds an index's vectors in the middle of a write: after a
restart, the index (the same object, and a fresh load of the folder persisted before) equals
a clean build once the write is rolled back; a silent or frozen server gives a one-line
timeout within the configured time.

The graph is the default networkx graph, in the process; its write journal is in the process
too (:mod:`graphrag_integrations.core.index.store_journal`). The server is killed for real
(``SIGKILL``) right after the write's first vector batch reached it (:func:`killing_after`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.vector_store.chroma import ChromaVectorIndex
from graphrag_integrations.core.vector_store.chroma_collections import ChromaVectors
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.chroma_server import ChromaServer
from graphrag_integrations.testing.fake_embedder import FakeEmbedder
from graphrag_integrations.testing.server_process import SilentServer
from tests.integration.town_corpus import answers, new_versions, town_corpus

pytestmark = pytest.mark.chroma_server
FAST = {"timeout": 10.0, "connect_timeout": 2.0, "retries": 1}


def _answers(index: Any) -> list[list[tuple[str, float]]]:
    return answers(index, digits=4)


def _vectors(server: ChromaServer) -> ChromaVectors:
    return ChromaVectors(host=server.host, port=server.port, **FAST)


def _build(server: ChromaServer, docs: list[Any]) -> ClueIndex:
    return ClueIndex.from_documents(docs, embedding=FakeEmbedder(), vector_index=_vectors(server))


@contextmanager
def killing_after(server: ChromaServer, calls: int = 1) -> Iterator[None]:
    """Within the block, ``kill -9`` ``server`` as soon as ``calls`` vector adds reached it."""
    done = [0]
    original = ChromaVectorIndex.add

    def add_then_kill(self: ChromaVectorIndex, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        done[0] += 1
        if done[0] == calls:
            server.kill()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ChromaVectorIndex, "add", add_then_kill)
        yield


def _insert_killed(server: ChromaServer, folder: Path) -> tuple[ClueIndex, list[Any], list[Any]]:
    """An index of 30 documents persisted to ``folder``, whose insert of 10 more was cut by
    ``kill -9`` of the server (restarted with its data afterwards)."""
    first, more = town_corpus(0, 30), town_corpus(30, 40)
    index = _build(server, first)
    index.persist(folder)
    with killing_after(server), pytest.raises(ConnectionError) as info:
        index.insert(more)
    message = str(info.value)
    assert "\n" not in message
    assert f"Chroma server at 127.0.0.1:{server.port}" in message
    assert "2 attempts" in message
    server.restart()  # with its data: the collections hold the first vector batch
    return index, first, more


def test_kill_during_insert_is_rolled_back_in_the_process(
    killable_chroma: ChromaServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    index, first, more = _insert_killed(killable_chroma, tmp_path / "before")
    # the next call rolls the unfinished insert back (one warning); the insert then lands
    with caplog.at_level(logging.WARNING):
        held = index.doc_ids()
    assert "rolled back 10 document(s) of an unfinished write" in caplog.text
    assert held == [d.id for d in first]
    assert index.insert(more) == [d.id for d in more]
    clean = _build(killable_chroma, first + more)
    assert index.doc_ids() == clean.doc_ids()
    assert _answers(index) == _answers(clean)
    index.persist(tmp_path / "after")
    again = ClueIndex.load(
        tmp_path / "after", embedding=FakeEmbedder(), vector_index=_vectors(killable_chroma)
    )
    assert _answers(again) == _answers(clean)


def test_kill_during_insert_then_the_process_ends_loads_the_folder(
    killable_chroma: ChromaServer, tmp_path: Path
) -> None:
    index, first, _ = _insert_killed(killable_chroma, tmp_path / "before")
    del index  # the writer process ends: its graph and journal with it
    # a fresh load (what another process does) opens the same collections: they changed
    # since the persist (the killed write), so they are refilled from the folder
    loaded = ClueIndex.load(
        tmp_path / "before", embedding=FakeEmbedder(), vector_index=_vectors(killable_chroma)
    )
    clean_first = _build(killable_chroma, first)
    assert loaded.doc_ids() == clean_first.doc_ids()
    assert _answers(loaded) == _answers(clean_first)


def test_kill_during_delete_many_is_completed_at_the_next_call(
    killable_chroma: ChromaServer,
) -> None:
    docs = town_corpus(0, 30)
    gone = [d.id for d in docs[5:15]]
    index = _build(killable_chroma, docs)
    deletes = ChromaVectorIndex.delete

    def delete_then_kill(self: ChromaVectorIndex, ids: Any) -> None:
        deletes(self, ids)
        killable_chroma.kill()

    with pytest.MonkeyPatch.context() as patch, pytest.raises(ConnectionError):
        patch.setattr(ChromaVectorIndex, "delete", delete_then_kill)
        index.delete_many(gone)
    killable_chroma.restart()
    assert index.delete_many(gone) == []  # the rollback completed it first
    clean = _build(killable_chroma, [d for d in docs if d.id not in gone])
    assert index.doc_ids() == clean.doc_ids()
    assert _answers(index) == _answers(clean)


def test_a_silent_port_times_out_within_the_configured_time() -> None:
    with SilentServer() as silent:
        start = time.monotonic()
        with pytest.raises(TimeoutError) as info:
            _ = ChromaVectors(host=silent.host, port=silent.port, timeout=1.0, retries=1).client
        elapsed = time.monotonic() - start
    assert "\n" not in str(info.value)
    assert "no answer within 1 s, 2 attempts" in str(info.value)
    assert elapsed < 2 * 1.0 + 2.0  # two attempts, the backoff, and slack for a busy machine


def test_a_frozen_server_times_out_then_answers_again(killable_chroma: ChromaServer) -> None:
    index = ChromaVectorIndex(
        "frozen",
        embedding_model="m",
        dimension=2,
        host=killable_chroma.host,
        port=killable_chroma.port,
        timeout=1.0,
        retries=0,
    )
    index.add(["a", "b"], np.eye(2, dtype=np.float32))
    killable_chroma.pause()
    try:
        with pytest.raises(TimeoutError, match=r"no answer within 1 s, 1 attempt \("):
            index.query(np.array([1.0, 0.0]), 1)
    finally:
        killable_chroma.resume()
    assert index.query(np.array([1.0, 0.0]), 1)[0][0] == "a"


@pytest.mark.falkordb_server
def test_graph_in_falkordb_vectors_in_chroma_kill_during_insert(
    killable_chroma: ChromaServer, falkordb_server: Any, tmp_path: Path
) -> None:
    first, more = town_corpus(0, 20), town_corpus(20, 26)

    def build(graph: str, docs: list[Any]) -> ClueIndex:
        return ClueIndex.from_documents(
            docs,
            embedding=FakeEmbedder(),
            graph_store=falkordb_server.url(graph),
            vector_index=_vectors(killable_chroma),
        )

    index = build("mixed", first)
    index.persist(tmp_path / "before")
    with killing_after(killable_chroma), pytest.raises(ConnectionError):
        index.insert(more)
    killable_chroma.restart()
    assert index.insert(more) == [d.id for d in more]  # the journal's rollback first
    clean = build("mixed_clean", first + more)
    assert index.doc_ids() == clean.doc_ids()
    assert _answers(index) == _answers(clean)


def test_kill_during_upsert_puts_the_replaced_documents_back(
    killable_chroma: ChromaServer, caplog: pytest.LogCaptureFixture
) -> None:
    old = town_corpus(0, 30)
    replaced = old[5:15]
    new = new_versions(replaced) + town_corpus(30, 35)
    index = _build(killable_chroma, old)
    # the deletes of the replaced documents reached the server; killed after the first add
    # of the new versions
    with killing_after(killable_chroma), pytest.raises(ConnectionError):
        index.upsert(new)
    killable_chroma.restart()
    with caplog.at_level(logging.WARNING):
        answers = _answers(index)  # the next call rolls back and puts the old ones back
    assert "put back 10 document(s)" in caplog.text
    kept = [d for d in old if d not in replaced]
    clean_old = _build(killable_chroma, kept + replaced)  # put back after the others
    assert index.doc_ids() == clean_old.doc_ids()
    assert answers == _answers(clean_old)
    assert index.upsert(new) == [d.id for d in new]
    clean_new = _build(killable_chroma, kept + new)
    assert _answers(index) == _answers(clean_new)
