"""A reader of a graph another writer changes fixes the documents it holds once: a write that
lands while it does so is never taken for its own (``core.index.snapshot.documents``).

The writer here is another index object of the same folder in this process (another graph
object: its journal and log entries are not the reader's), so the write can be placed exactly
where the race was: while the reader lists its documents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.index import snapshot
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.compliance import CORPUS, QUERIES, compliance_documents
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

pytestmark = pytest.mark.falkordb_server


def _load(folder: Path) -> ClueIndex:
    return ClueIndex.load(folder, embedding=FakeEmbedder(), graph_store=None)


def test_a_write_landing_while_the_reader_lists_its_documents_stays_the_writers(
    falkordb_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = compliance_documents()
    first, (one, two) = docs[2:], docs[:2]
    ClueIndex.from_documents(first, embedding=FakeEmbedder(), graph_store=falkordb_url).persist(
        tmp_path / "index"
    )
    reader, writer = _load(tmp_path / "index"), _load(tmp_path / "index")
    writer.insert([one])  # the reader now answers from its snapshot
    listing = snapshot.raw_doc_ids
    pending = [two]

    def list_while_another_write_lands(index: Any) -> list[str]:
        if index is reader and pending:  # the other write lands while the reader lists
            writer.insert([pending.pop()])
        return listing(index)

    monkeypatch.setattr(snapshot, "raw_doc_ids", list_while_another_write_lands)
    held = reader.doc_ids()
    assert not pending, "the reader never listed its documents"
    known = {d.id for d in first}
    assert set(held) == known
    assert snapshot.visible(reader) == known  # what every query is narrowed to
    for probe in QUERIES:
        assert {hit.doc_id for hit in reader.retrieve(probe.query, k=len(CORPUS))} <= known
