"""Compliance cases for readers in other processes while a process writes the index's graph.

With the graph in a database (FalkorDB), several processes may open one persisted index: one
writes (``insert``), the others query. A reader sees the state before or after a write, never
an error or a half state:

* a reader loaded **before** the writes keeps answering while another process inserts: from
  the documents it loaded (the graph's new nodes are other processes' writes);
* a reader that loads **while** the writer holds unfinished or unpersisted writes loads the
  state of the folder, without those documents (instead of a one-line "is writing" error).

:class:`ReaderProcessComplianceTests` is mixed into
:class:`~graphrag_integrations.testing.graph_store_compliance.FalkorDBComplianceTests`. The
writer is a forked process (:mod:`multiprocessing`, ``fork``): it runs the suite's own build
and load hooks, with their fakes, and ends with ``os._exit``.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

#: Seconds the reader waits for the writer process at most.
WRITER_TIMEOUT_S = 300.0


def forked(target: Callable[[], None]) -> Any:
    """Run ``target`` in a forked process (exit code 0 when it returned, 1 when it raised,
    its traceback printed); the process is started and returned."""

    def run() -> None:
        code = 0
        try:
            target()
        except BaseException:
            traceback.print_exc()
            code = 1
        os._exit(code)  # no finalizer of the parent's objects runs in the child

    process = multiprocessing.get_context("fork").Process(target=run, daemon=True)
    process.start()
    return process


class ReaderProcessComplianceTests:
    """Mixin of the FalkorDB compliance classes: readers while another process writes."""

    def _reader_answers(self, reader: Any, known: set[str]) -> None:
        """One round of the suite's questions: every passage from a document ``known``."""
        from graphrag_integrations.testing.compliance import CORPUS, QUERIES

        for probe in QUERIES:
            for hit in reader.retrieve(probe.query, k=len(CORPUS)):
                assert hit.doc_id in known, (type(reader).__name__, probe.query, hit.doc_id)

    def _writer(self, path: Path, extra: Sequence[Any], persist: bool) -> Callable[[], None]:
        suite: Any = self

        def write() -> None:
            writer = suite.load_index(path, suite.make_embedder())
            for document in extra:  # one write per document: the reader meets several
                writer.insert([document])
            if persist:
                writer.persist(path, overwrite=True)

        return write

    def test_a_reader_loaded_before_answers_while_another_process_inserts(
        self, documents: Any, tmp_path: Path
    ) -> None:
        """A reader loaded before another process inserts answers from the documents it
        loaded, without an error, until that process has finished."""
        suite: Any = self
        first, extra = list(documents[2:]), list(documents[:2])
        index = suite._build(first, suite.make_embedder())
        index.persist(tmp_path / "index")
        del index
        reader = suite.load_index(tmp_path / "index", suite.make_embedder())
        known = {d.id for d in first}
        writer = forked(self._writer(tmp_path / "index", extra, persist=True))
        errors: list[str] = []
        rounds = 0
        while writer.is_alive() or rounds < 2:
            try:
                self._reader_answers(reader, known)
            except Exception as error:  # counted: the case fails with all of them
                errors.append(f"{type(error).__name__}: {str(error)[:200]}")
            rounds += 1
        writer.join(WRITER_TIMEOUT_S)
        assert writer.exitcode == 0
        assert not errors, f"{len(errors)} errors in {rounds} rounds, e.g. {errors[:3]}"

    def test_a_reader_loading_while_another_process_inserts_gets_the_state_before(
        self, documents: Any, tmp_path: Path
    ) -> None:
        """Loads of the folder while another process inserts (and has not persisted yet)
        give the folder's state: its documents, answers from them, no error."""
        suite: Any = self
        first, extra = list(documents[2:]), list(documents[:2])
        index = suite._build(first, suite.make_embedder())
        index.persist(tmp_path / "index")
        del index
        known = {d.id for d in first}
        writer = forked(self._writer(tmp_path / "index", extra, persist=False))
        errors: list[str] = []
        loads = 0
        while writer.is_alive() or loads < 2:
            try:
                reader = suite.load_index(tmp_path / "index", suite.make_embedder())
                held = set(reader.doc_ids())
                assert held == known, (sorted(held - known), sorted(known - held))
                self._reader_answers(reader, known)
            except Exception as error:
                errors.append(f"{type(error).__name__}: {str(error)[:200]}")
            loads += 1
        writer.join(WRITER_TIMEOUT_S)
        assert writer.exitcode == 0
        if errors:
            pytest.fail(f"{len(errors)} errors in {loads} loads, e.g. {errors[:3]}")
