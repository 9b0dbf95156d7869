"""The compliance suite with the graph in FalkorDB: :class:`FalkorDBComplianceTests`.

Mixed in before a method's :class:`~graphrag_integrations.testing.compliance.IndexComplianceTests`
subclass, it gives every index the suite builds a fresh graph (``graph_store=
"falkordb://127.0.0.1:PORT/<name>"``) on a real FalkorDB server, and deletes the graphs of a
test when it ends. The server is the ``falkordb_server`` fixture the test session provides (a
:class:`~graphrag_integrations.testing.falkordb_server.FalkorDBServer`; this package's
``tests/conftest.py`` starts one per session)::

    from graphrag_integrations.testing.graph_store_compliance import FalkorDBComplianceTests
    from tests.compliance import test_clue  # not imported by name: pytest would collect it twice


    class TestClueFalkorDB(FalkorDBComplianceTests, test_clue.TestClueCompliance):
        pass

A build that resumes a checkpoint (``checkpoint_dir=``) gets the graph of the build it
resumes (the name is derived from the checkpoint folder), as a user re-running the same
command would.

**Which cases.** The whole suite takes about as long again as the in-process one (1.5-3.5
minutes per method on a loaded 2-core machine), so by default only the cases that exercise
the graph store run (:data:`GRAPH_CASES`: builds, ``insert`` / ``delete`` / ``upsert`` against
a fresh build, ``persist`` / ``load`` through the pointer file, checkpoint resume, concurrent
mutations, metadata filters from the graph, and the test module's own cases); the others
(argument checks, splitters, document loading, framework adapters) do not depend on where
the graph lives and run in the in-process suite. ``GRAPHRAG_FALKORDB_FULL_COMPLIANCE=1`` runs
every case.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from graphrag_integrations.testing.fault_cases import FaultComplianceTests
from graphrag_integrations.testing.later_write_cases import LaterWriteComplianceTests
from graphrag_integrations.testing.reader_cases import ReaderProcessComplianceTests

#: Prefix of the graphs the suite makes (``<prefix>_<32 hex digits>``).
GRAPH_PREFIX = "compliance"
#: Set to ``1`` to run every case of the suite with FalkorDB, not only :data:`GRAPH_CASES`.
FULL_ENV = "GRAPHRAG_FALKORDB_FULL_COMPLIANCE"
#: The cases of :class:`~graphrag_integrations.testing.compliance.IndexComplianceTests` that
#: run with FalkorDB by default (those whose outcome depends on the graph store).
GRAPH_CASES: frozenset[str] = frozenset(
    {
        "test_from_strings",
        "test_insert_returns_the_ids_added_and_they_are_retrievable",
        "test_insert_skips_documents_already_indexed",
        "test_insert_then_delete_equals_a_fresh_build",
        "test_delete_removes_the_document",
        "test_delete_of_an_unknown_id_returns_false_and_warns",
        "test_second_delete_of_the_same_id_returns_false",
        "test_an_interrupted_checkpointed_build_resumes",
        "test_persist_load_round_trip",
        "test_persist_refuses_another_index_of_the_same_method",
        "test_the_same_index_persists_again_into_its_folder",
        "test_a_damaged_file_is_named_at_load",
        "test_load_with_an_embedder_of_another_dimension_fails",
        "test_a_long_document_is_cut_into_chunks_by_default",
        "test_doc_ids_lists_the_documents_indexed",
        "test_upsert_replaces_a_document_by_id",
        "test_queries_during_inserts_and_deletes_see_whole_mutations",
        "test_concurrent_inserts_land_exactly_once",
        "test_retrieve_with_a_filter_returns_only_matching_passages",
        "test_inserted_documents_are_filtered_by_their_metadata",
        "test_a_filter_keeps_other_tenants_text_out_of_every_result",
        "test_a_filter_keeps_other_tenants_text_out_of_async_results",
        "test_a_filter_keeps_other_tenants_text_out_of_the_picture",
        "test_a_bound_filter_keeps_other_tenants_text_out_of_the_frameworks",
        "test_a_filtered_query_answers_as_an_index_of_the_matching_documents",
    }
)


class FalkorDBComplianceTests(
    FaultComplianceTests, LaterWriteComplianceTests, ReaderProcessComplianceTests
):
    """Mixin: each index of the compliance suite keeps its graph in its own FalkorDB graph.

    Needs the ``falkordb_server`` fixture (see the module docstring). Graphs are named
    :data:`GRAPH_PREFIX` ``_<hex>`` and deleted at the end of the test that made them.
    """

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.falkordb_server]
    _falkordb: Any = None
    _graphs: list[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Leave out the suite's cases outside :data:`GRAPH_CASES` (unless
        ``GRAPHRAG_FALKORDB_FULL_COMPLIANCE=1``); cases the test module adds itself stay."""
        super().__init_subclass__(**kwargs)
        if os.environ.get(FULL_ENV) == "1":
            return
        from graphrag_integrations.testing.compliance import IndexComplianceTests

        suite = {name for name in dir(IndexComplianceTests) if name.startswith("test_")}
        for name in suite - GRAPH_CASES:
            setattr(cls, name, None)  # not collected

    @pytest.fixture(autouse=True)
    def _falkordb_graphs(self, falkordb_server: Any) -> Iterator[None]:
        """Bind the session's server to this test; delete its graphs afterwards."""
        self._falkordb = falkordb_server
        self._graphs = []
        try:
            yield
        finally:
            drop_graphs(falkordb_server, self._graphs)

    def test_a_first_batch_killed_before_its_save_resumes(
        self, documents: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A checkpointed build killed in its first batch (written into the graph, nothing
        saved) resumes: the batch is rolled back from the graph it made, and the build ends
        as an uninterrupted one, its saved folder loading."""
        from graphrag_integrations.core.index.checkpoint import INDEX_FOLDER, read_checkpoint
        from graphrag_integrations.testing.compliance import CORPUS

        suite: Any = self
        every = 4
        whole = suite._build(
            documents,
            suite.make_embedder(),
            checkpoint_dir=tmp_path / "whole",
            checkpoint_every=every,
        )

        class Killed(Exception):
            pass

        def killed(index: Any, path: Path, **kwargs: Any) -> None:
            raise Killed("killed before the first batch is saved")

        monkeypatch.setattr(suite.index_class, "persist", killed)
        ckpt = tmp_path / "ckpt"
        with pytest.raises(Killed):
            suite._build(
                documents, suite.make_embedder(), checkpoint_dir=ckpt, checkpoint_every=every
            )
        monkeypatch.undo()
        assert read_checkpoint(ckpt)["done"] == []
        resumed = suite._build(
            documents, suite.make_embedder(), checkpoint_dir=ckpt, checkpoint_every=every
        )
        assert read_checkpoint(ckpt)["done"] == [d.id for d in documents]
        # loads before any query (a query may write into the shared graph: KGT's lazy vectors)
        loaded = suite.load_index(ckpt / INDEX_FOLDER, suite.make_embedder())
        assert loaded.doc_ids() == whole.doc_ids()
        suite._assert_same_answers(
            suite._answers(resumed, k=len(CORPUS)), suite._answers(whole, k=len(CORPUS))
        )

    def test_the_graph_is_in_falkordb(self) -> None:
        """The suite's indexes really keep their graph in the server (not in the process)."""
        from graphrag_integrations.core.graph.backends import is_in_process
        from graphrag_integrations.core.index.store import index_stores_of
        from graphrag_integrations.testing.compliance import compliance_documents

        build = getattr(self, "_build", None)
        make_embedder = getattr(self, "make_embedder", None)
        assert callable(build) and callable(make_embedder), "mix in before IndexComplianceTests"
        index = build(compliance_documents(), make_embedder())
        stores = index_stores_of(index)
        assert stores, f"{type(index).__name__} holds no IndexStore"
        for store in stores:
            assert not is_in_process(type(store.graph)), type(store.graph)
            assert store.graph.location.graph in self._graphs  # type: ignore[attr-defined]
            assert len(store.graph) > 0

    def make_graph_store(self, options: dict[str, Any]) -> Any:
        """A new graph for each build; a checkpointed build's graph is its folder's."""
        if self._falkordb is None:
            raise RuntimeError("FalkorDBComplianceTests needs the falkordb_server fixture")
        checkpoint = options.get("checkpoint_dir")
        if checkpoint is not None:
            digest = hashlib.sha256(str(checkpoint).encode()).hexdigest()[:32]
            name = f"{GRAPH_PREFIX}_{digest}"
        else:
            name = f"{GRAPH_PREFIX}_{uuid.uuid4().hex}"
        if name not in self._graphs:
            self._graphs.append(name)
        return self._falkordb.url(name)


def drop_graphs(server: Any, names: list[str]) -> list[str]:
    """Delete the graphs ``names`` that exist on ``server`` (a ``FalkorDBServer``); returns
    those deleted. Other graphs are never touched."""
    from graphrag_integrations.core.graph.falkordb_connection import connect, parse_falkordb_url

    if not names:
        return []
    client = connect(parse_falkordb_url(server.url(names[0])))
    try:
        existing = set(client.list_graphs())
        dropped = [name for name in names if name in existing]
        for name in dropped:
            client.select_graph(name).delete()
    finally:
        client.connection.close()
    return dropped
