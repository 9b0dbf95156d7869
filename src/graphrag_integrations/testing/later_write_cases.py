"""Compliance cases for a write after the last ``persist`` with the graph in a database.

The graph (FalkorDB) is durable at once, the in-process vectors only at ``persist``. When a
process writes after its last ``persist`` and ends without persisting again, the folder is
behind its graph; its ``load`` reconciles the two
(:mod:`~graphrag_integrations.core.index.graph_changes`): the documents written since are
rolled back (one warning names them), so the index loads as the folder minus those documents,
and is never called corrupt. While the writer still holds its writes, the load gives the
folder's state without them (they are the writer's: hidden, not rolled back), and that index
refuses to persist (its vectors lack the writer's documents).

:class:`LaterWriteComplianceTests` is mixed into
:class:`~graphrag_integrations.testing.graph_store_compliance.FalkorDBComplianceTests`, so
every method whose graph can live in FalkorDB runs these cases. "The process ends" is the
index object dropped (no reference left, garbage collected): the writer's graph object is
what the load asks about in its own process (a writer in another process: whether that
process runs, ``tests/integration/test_falkordb_write_after_persist.py``).
"""

from __future__ import annotations

import gc
import logging
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.errors import IndexMismatchError


class LaterWriteComplianceTests:
    """Mixin of the FalkorDB compliance classes: writes after the last ``persist``."""

    def _same_as_clean(self, index: Any, documents: list[Any]) -> None:
        from graphrag_integrations.testing.compliance import CORPUS

        suite: Any = self
        clean = suite._build(documents, suite.make_embedder())
        assert index.doc_ids() == clean.doc_ids()
        suite._assert_same_answers(
            suite._answers(index, k=len(CORPUS)), suite._answers(clean, k=len(CORPUS))
        )

    def test_an_insert_after_the_last_persist_is_rolled_back_at_load(
        self, documents: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """persist, insert, the writer ends: the folder loads as persisted (the insert rolled
        back, one warning naming it), and inserting the document again gives the full index."""
        suite: Any = self
        first, extra = list(documents[1:]), documents[0]  # Paris: content for every method
        index = suite._build(first, suite.make_embedder())
        index.persist(tmp_path / "index")
        assert index.insert([extra]) == [extra.id]
        del index  # the writer ends without persisting again
        gc.collect()
        with caplog.at_level(logging.WARNING):
            loaded = suite.load_index(tmp_path / "index", suite.make_embedder())
        said = [m for m in caplog.messages if "after the folder was persisted" in m]
        assert len(said) == 1 and extra.id in said[0] and "\n" not in said[0], said
        self._same_as_clean(loaded, first)
        assert loaded.insert([extra]) == [extra.id]
        self._same_as_clean(loaded, [*first, extra])  # in the order written

    def test_a_delete_after_the_last_persist_is_completed_at_load(
        self, documents: Any, tmp_path: Path
    ) -> None:
        """persist, delete, the writer ends: the folder loads without the deleted document
        (what the graph holds), equal to a clean build without it."""
        suite: Any = self
        gone = documents[2]
        index = suite._build(documents, suite.make_embedder())
        index.persist(tmp_path / "index")
        assert index.delete(gone.id)
        del index  # the writer ends without persisting again
        gc.collect()
        loaded = suite.load_index(tmp_path / "index", suite.make_embedder())
        self._same_as_clean(loaded, [d for d in documents if d.id != gone.id])

    def test_a_load_while_the_writer_holds_later_writes_gives_the_folder(
        self, documents: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """persist, insert, the writer still runs: the load gives the folder's state (the
        writer's document hidden, one warning, never "corrupt"), which refuses to persist;
        once the writer persists again, the folder loads with the insert."""
        from graphrag_integrations.testing.compliance import QUERIES

        suite: Any = self
        first, extra = list(documents[1:]), documents[0]  # Paris: content for every method
        index = suite._build(first, suite.make_embedder())
        index.persist(tmp_path / "index")
        index.insert([extra])
        with caplog.at_level(logging.WARNING):
            reader = suite.load_index(tmp_path / "index", suite.make_embedder())
        said = [m for m in caplog.messages if "without them" in m]
        assert len(said) == 1 and extra.id in said[0] and "corrupt" not in said[0], said
        assert set(reader.doc_ids()) == {d.id for d in first}
        for probe in QUERIES:  # never the writer's document (scores may use the graph's
            # corpus-wide statistics, which count it: the passages are the folder's)
            assert extra.id not in {h.doc_id for h in reader.retrieve(probe.query, k=9)}
        with pytest.raises(IndexMismatchError) as info:
            reader.persist(tmp_path / "reader")
        assert "\n" not in str(info.value) and "another process" in str(info.value)
        index.persist(tmp_path / "index")
        loaded = suite.load_index(tmp_path / "index", suite.make_embedder())
        self._same_as_clean(loaded, [*first, extra])  # in the order written
