"""Fault-injection cases of the compliance suite for indexes with a database graph.

:class:`FaultComplianceTests` is mixed into
:class:`~graphrag_integrations.testing.graph_store_compliance.FalkorDBComplianceTests`, so
every method whose graph can live in FalkorDB runs them. Each case starts a FalkorDB server
of its own (:class:`~graphrag_integrations.testing.falkordb_server.FalkorDBServer` with an
append-only file), kills it for real (``SIGKILL``) right after the write under test sent its
first batch (:func:`killing_after`), restarts it from its append-only file, and checks that
the index - the same object, and a fresh load of the folder persisted before - equals a clean
build once the journaled write is rolled back
(:mod:`~graphrag_integrations.core.index.journal`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.graph import falkordb_cypher as cy
from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
from graphrag_integrations.testing.falkordb_server import FalkorDBServer

#: Connection options of the cases' graphs: short timeouts, one retry.
FAULT_OPTIONS = "?timeout=30&connect_timeout=2&retries=1"


@contextmanager
def killing_after(server: FalkorDBServer, query: str, nth: int = 1) -> Iterator[None]:
    """Within the block, the ``nth`` time a graph sends ``query`` (a ``falkordb_cypher``
    text), ``kill -9`` ``server`` as soon as the server has answered it."""
    left = [nth]
    original = FalkorDBGraph._query

    def query_then_kill(self: FalkorDBGraph, text: str, params: Any = None) -> Any:
        rows = original(self, text, params)
        if left[0] > 0 and text == query:
            left[0] -= 1
            if not left[0]:
                server.kill()
        return rows

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FalkorDBGraph, "_query", query_then_kill)
        yield


class FaultComplianceTests:
    """Mixin of the FalkorDB compliance classes: writes interrupted by a killed server."""

    _falkordb: Any

    @pytest.fixture
    def killable_server(self) -> Iterator[FalkorDBServer]:
        """A server of this test with an append-only file; the suite's indexes are built on
        it during the test (always stopped at the end)."""
        server = FalkorDBServer(appendonly=True).start()
        shared, self._falkordb = self._falkordb, _WithOptions(server)
        try:
            yield server
        finally:
            self._falkordb = shared
            server.stop()

    def test_an_insert_killed_half_way_is_rolled_back(
        self, documents: Any, killable_server: FalkorDBServer, tmp_path: Path
    ) -> None:
        """kill -9 during ``insert``: a fresh load of the folder persisted before equals a
        clean build of the documents before; the same object then inserts the documents
        again and equals a clean build of them all."""
        from graphrag_integrations.testing.compliance import CORPUS

        suite: Any = self
        # Paris and Rome: graph content for every method (ReG: triples), so the insert writes
        first, more = list(documents[2:]), list(documents[:2])
        index = suite._build(first, suite.make_embedder())
        index.persist(tmp_path / "before")
        with killing_after(killable_server, cy.MERGE_NODES), pytest.raises(ConnectionError):
            index.insert(more)
        killable_server.restart()
        loaded = suite.load_index(tmp_path / "before", suite.make_embedder())
        clean_first = suite._build(first, suite.make_embedder())
        assert loaded.doc_ids() == clean_first.doc_ids()
        suite._assert_same_answers(
            suite._answers(loaded, k=len(CORPUS)), suite._answers(clean_first, k=len(CORPUS))
        )
        assert index.insert(more) == [d.id for d in more]
        clean = suite._build(first + more, suite.make_embedder())  # in the order written
        assert index.doc_ids() == clean.doc_ids()
        suite._assert_same_answers(
            suite._answers(index, k=len(CORPUS)), suite._answers(clean, k=len(CORPUS))
        )

    def test_an_upsert_killed_half_way_leaves_the_index_as_it_was(
        self, documents: Any, killable_server: FalkorDBServer, tmp_path: Path
    ) -> None:
        """kill -9 during ``upsert``, once the replaced document is deleted and the insert of
        the new ones has begun: a fresh load of the folder persisted before, and the same
        object, equal a clean build of the documents before (the replaced one put back);
        the upsert run again equals a clean build of the new documents."""
        from graphrag_integrations.testing.compliance import CORPUS, compliance_documents
        from graphrag_integrations.testing.compliance.chunking import PARIS_V2
        from graphrag_integrations.testing.compliance.corpus import EXTRA

        suite: Any = self
        index = suite._build(documents, suite.make_embedder())
        index.persist(tmp_path / "before")
        new = compliance_documents([PARIS_V2, EXTRA])
        # the journal's first growth after it began with the replaced passages: the insert
        # adds its new documents (the replaced one is deleted, nothing new written yet)
        with killing_after(killable_server, cy.JOURNAL_WRITE), pytest.raises(ConnectionError):
            index.upsert(new)
        killable_server.restart()
        others = [d for d in documents if d.id != PARIS_V2.id]
        replaced = [d for d in documents if d.id == PARIS_V2.id]
        clean_old = suite._build(others + replaced, suite.make_embedder())  # put back last
        expected = suite._answers(clean_old, k=len(CORPUS))
        loaded = suite.load_index(tmp_path / "before", suite.make_embedder())
        assert loaded.doc_ids() == clean_old.doc_ids()
        suite._assert_same_answers(suite._answers(loaded, k=len(CORPUS)), expected)
        suite._assert_same_answers(suite._answers(index, k=len(CORPUS)), expected)
        assert index.upsert(new) == [PARIS_V2.id, EXTRA.id]
        clean_new = suite._build(others + new, suite.make_embedder())
        assert index.doc_ids() == clean_new.doc_ids()
        suite._assert_same_answers(
            suite._answers(index, k=len(CORPUS)), suite._answers(clean_new, k=len(CORPUS))
        )

    def test_a_delete_killed_half_way_is_completed(
        self, documents: Any, killable_server: FalkorDBServer
    ) -> None:
        """kill -9 during ``delete_many``: the next call completes the delete; the index
        equals a clean build without the documents."""
        from graphrag_integrations.testing.compliance import CORPUS

        suite: Any = self
        gone = [d.id for d in documents[1:3]]
        index = suite._build(documents, suite.make_embedder())
        with killing_after(killable_server, cy.PROV_EDGES), pytest.raises(ConnectionError):
            index.delete_many(gone)
        killable_server.restart()
        assert index.delete_many(gone) == []  # the rollback completed it first
        clean = suite._build([d for d in documents if d.id not in gone], suite.make_embedder())
        assert index.doc_ids() == clean.doc_ids()
        suite._assert_same_answers(
            suite._answers(index, k=len(CORPUS)), suite._answers(clean, k=len(CORPUS))
        )


class _WithOptions:
    """A server whose graph URLs carry :data:`FAULT_OPTIONS` (what the suite's
    ``make_graph_store`` asks for)."""

    def __init__(self, server: FalkorDBServer) -> None:
        self.server = server

    def url(self, graph: str) -> str:
        return self.server.url(graph) + FAULT_OPTIONS
