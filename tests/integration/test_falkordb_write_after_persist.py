"""A write after the last ``persist`` by another process (graph in FalkorDB, vectors in that
process): while the writer runs, a load of the folder gives the folder's state (the writer's
documents hidden, one warning naming it; ``core.index.snapshot``); once it has exited without
persisting again, the load rolls its writes back and the index equals a clean build of the
persisted documents (``core.index.graph_changes``). The same cases run
in-process for every method in the FalkorDB compliance suite
(``testing/later_write_cases.py``).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.compliance import QUERIES, compliance_documents
from graphrag_integrations.testing.compliance.base import ranking
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

pytestmark = pytest.mark.falkordb_server
ROOT = Path(__file__).resolve().parents[2]
#: The writer: build over all documents but the first, persist, insert the first, say so,
#: then wait for a line on stdin (or end at once with "exit") without persisting again.
WRITER = """
import sys
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.compliance import compliance_documents
from graphrag_integrations.testing.fake_embedder import FakeEmbedder
url, folder, mode = sys.argv[1:4]
docs = compliance_documents()
index = ClueIndex.from_documents(docs[1:], embedding=FakeEmbedder(), graph_store=url)
index.persist(folder)
index.insert(docs[:1])
print("written", flush=True)
if mode == "wait":
    sys.stdin.readline()
"""


def _writer(url: str, folder: Path, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, url, str(folder), mode],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def _answers(index: Any) -> list[list[tuple[str, float]]]:
    return [ranking(hits) for hits in _hits(index)]


def _hits(index: Any) -> list[list[Any]]:
    return [index.retrieve(probe.query, k=5) for probe in QUERIES]


def test_a_write_after_persist_by_an_ended_process_is_rolled_back_at_load(
    falkordb_server: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = falkordb_server.url("after_persist_ended")
    writer = _writer(url, tmp_path / "index", "exit")
    out, _ = writer.communicate(timeout=300)
    assert writer.returncode == 0 and "written" in out
    with caplog.at_level(logging.WARNING):
        loaded = ClueIndex.load(tmp_path / "index", embedding=FakeEmbedder())
    docs = compliance_documents()
    assert any(
        "after the folder was persisted" in m and docs[0].id in m for m in caplog.messages
    ), caplog.messages
    clean = ClueIndex.from_documents(
        docs[1:], embedding=FakeEmbedder(), graph_store=falkordb_server.url("after_clean")
    )
    assert loaded.doc_ids() == clean.doc_ids()
    for got, expected in zip(_answers(loaded), _answers(clean), strict=True):
        assert [i for i, _ in got] == [i for i, _ in expected]
        assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)


def test_a_load_while_the_writing_process_runs_gives_the_folder(
    falkordb_server: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = falkordb_server.url("after_persist_running")
    writer = _writer(url, tmp_path / "index", "wait")
    docs = compliance_documents()
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "written"
        with caplog.at_level(logging.WARNING):
            reader = ClueIndex.load(tmp_path / "index", embedding=FakeEmbedder())
        said = [m for m in caplog.messages if f"process {writer.pid}" in m]
        assert len(said) == 1 and "without them" in said[0] and "corrupt" not in said[0]
        assert reader.doc_ids() == sorted(d.id for d in docs[1:])
        assert all(hit.doc_id != docs[0].id for hits in _hits(reader) for hit in hits)
        with pytest.raises(IndexMismatchError, match="another process"):
            reader.persist(tmp_path / "reader")
    finally:
        writer.communicate("\n", timeout=120)  # it ends without persisting again
    assert ClueIndex.load(tmp_path / "index", embedding=FakeEmbedder()).doc_ids() == sorted(
        d.id for d in compliance_documents()[1:]
    )
