"""Kill -9 the FalkorDB server in the middle of a write: after a restart from its append-only
file, the index (the same object, and a fresh load of the folder persisted before) equals a
clean build once the journaled write is rolled back.

The server is killed for real (``SIGKILL``) right after the write's first batch reached it
(:func:`~graphrag_integrations.testing.fault_cases.killing_after`). The same cases run for
every method with a database graph in the compliance suite
(:mod:`graphrag_integrations.testing.fault_cases`); these use a larger corpus.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.graph import falkordb_cypher as cy
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.fake_embedder import FakeEmbedder
from graphrag_integrations.testing.falkordb_server import FalkorDBServer
from graphrag_integrations.testing.fault_cases import killing_after
from tests.integration.town_corpus import answers, new_versions, town_corpus

pytestmark = pytest.mark.falkordb_server
FAST = "?timeout=10&connect_timeout=2&retries=1"


def _answers(index: Any) -> list[list[tuple[str, float]]]:
    return answers(index, digits=5)


def _build(url: str, docs: list[Any]) -> ClueIndex:
    return ClueIndex.from_documents(docs, embedding=FakeEmbedder(), graph_store=url)


def test_kill_during_insert_rolls_back_in_the_process_and_at_load(
    killable_falkordb: FalkorDBServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    first, more = town_corpus(0, 30), town_corpus(30, 40)
    index = _build(killable_falkordb.url("live") + FAST, first)
    index.persist(tmp_path / "before")
    with killing_after(killable_falkordb, cy.MERGE_NODES), pytest.raises(ConnectionError) as info:
        index.insert(more)
    assert "\n" not in str(info.value)
    killable_falkordb.restart()  # from the append-only file: the first batch is there

    # a fresh load of the folder persisted before: the unfinished write is rolled back
    with caplog.at_level(logging.WARNING):
        loaded = ClueIndex.load(tmp_path / "before", embedding=FakeEmbedder(), graph_store=None)
    assert "rolled back" in caplog.text and "unfinished write" in caplog.text
    clean_before = _build(killable_falkordb.url("clean_before"), first)
    assert loaded.doc_ids() == clean_before.doc_ids()
    assert _answers(loaded) == _answers(clean_before)

    # the same object: its next call rolls back what is left, and the insert then lands
    assert index.insert(more) == [d.id for d in more]
    clean = _build(killable_falkordb.url("clean_all"), first + more)
    assert index.doc_ids() == clean.doc_ids()
    assert _answers(index) == _answers(clean)


def test_kill_during_delete_many_is_completed_at_the_next_call_and_at_load(
    killable_falkordb: FalkorDBServer, tmp_path: Path
) -> None:
    docs = town_corpus(0, 30)
    gone = [d.id for d in docs[5:15]]
    index = _build(killable_falkordb.url("deleting") + FAST, docs)
    index.persist(tmp_path / "before")
    with killing_after(killable_falkordb, cy.PROV_EDGES_DELETE, 3), pytest.raises(ConnectionError):
        index.delete_many(gone)
    killable_falkordb.restart()
    clean = _build(killable_falkordb.url("clean"), [d for d in docs if d.id not in gone])
    # a fresh load of the folder persisted before: the delete is completed, never "corrupt"
    loaded = ClueIndex.load(tmp_path / "before", embedding=FakeEmbedder(), graph_store=None)
    assert loaded.doc_ids() == clean.doc_ids()
    assert _answers(loaded) == _answers(clean)
    _answers(index)  # a query rolls the unfinished delete forward first
    assert index.doc_ids() == clean.doc_ids()
    assert _answers(index) == _answers(clean)


@pytest.mark.parametrize(
    ("query", "nth"),
    [
        # during the deletes of the replaced documents (the third one half-deleted)
        (cy.PROV_EDGES_DELETE, 3),
        # during the insert of the new versions: each of the 10 deletes wrote Clue's
        # statistics node once (MERGE_NODES); the 11th is the insert's nodes, edges not yet
        (cy.MERGE_NODES, 11),
    ],
    ids=["deleting", "inserting"],
)
def test_kill_during_upsert_puts_the_replaced_documents_back(
    killable_falkordb: FalkorDBServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    query: str,
    nth: int,
) -> None:
    old = town_corpus(0, 30)
    replaced = [d.id for d in old[5:15]]
    new = new_versions(old[5:15]) + town_corpus(30, 35)
    index = _build(killable_falkordb.url("live") + FAST, old)
    index.persist(tmp_path / "before")
    with killing_after(killable_falkordb, query, nth), pytest.raises(ConnectionError) as info:
        index.upsert(new)
    assert "\n" not in str(info.value)
    killable_falkordb.restart()  # from the append-only file: the deletes sent are there

    # the old documents, put back after the others (as the rollback inserts them)
    kept = [d for d in old if d.id not in replaced]
    clean_old = _build(killable_falkordb.url("clean_old"), kept + old[5:15])
    with caplog.at_level(logging.WARNING):
        loaded = ClueIndex.load(tmp_path / "before", embedding=FakeEmbedder(), graph_store=None)
    assert "put back 10 document(s)" in caplog.text
    assert loaded.doc_ids() == clean_old.doc_ids()
    assert _passages(loaded) == _passages(clean_old)
    assert _answers(loaded) == _answers(clean_old)

    # the same object: its next call rolls back what is left, as the load did
    assert _answers(index) == _answers(clean_old)
    assert _passages(index) == _passages(clean_old)
    # and the failed call run again gives a clean build of the new documents (the graph's
    # passages compared through a fresh load)
    assert index.upsert(new) == [d.id for d in new]
    clean_new = _build(killable_falkordb.url("clean_new"), kept + new)
    assert index.doc_ids() == clean_new.doc_ids()
    assert _answers(index) == _answers(clean_new)
    index.persist(tmp_path / "after")
    again = ClueIndex.load(tmp_path / "after", embedding=FakeEmbedder(), graph_store=None)
    assert _passages(again) == _passages(clean_new)


def _passages(index: Any) -> list[tuple[str, str, str, dict[str, Any]]]:
    return sorted((p.id, p.doc_id, p.text, dict(p.metadata)) for p in index.passages)
