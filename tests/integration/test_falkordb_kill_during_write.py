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
from tests.integration.town_corpus import answers, town_corpus

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


def test_kill_during_delete_many_is_completed_at_the_next_call(
    killable_falkordb: FalkorDBServer,
) -> None:
    docs = town_corpus(0, 30)
    gone = [d.id for d in docs[5:15]]
    index = _build(killable_falkordb.url("deleting") + FAST, docs)
    with killing_after(killable_falkordb, cy.PROV_EDGES_DELETE), pytest.raises(ConnectionError):
        index.delete_many(gone)
    killable_falkordb.restart()
    _answers(index)  # a query rolls the unfinished delete forward first
    clean = _build(killable_falkordb.url("clean"), [d for d in docs if d.id not in gone])
    assert index.doc_ids() == clean.doc_ids()
    assert _answers(index) == _answers(clean)
