"""core.index.snapshot: an index keeps answering from its own documents once another writer
changed its database graph (here another index object of the same folder, in this process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_integrations.core.index import snapshot
from graphrag_integrations.core.retrieval.filters import AllOf, Comparison
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.compliance import QUERIES, compliance_documents
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

pytestmark = pytest.mark.falkordb_server


def _docs(index: ClueIndex) -> set[str]:
    return {hit.doc_id for probe in QUERIES for hit in index.retrieve(probe.query, k=9)}


def test_a_reader_keeps_its_documents_while_another_writer_inserts(
    falkordb_url: str, tmp_path: Path
) -> None:
    docs = compliance_documents()
    first, extra = docs[1:], docs[0]
    built = ClueIndex.from_documents(first, embedding=FakeEmbedder(), graph_store=falkordb_url)
    built.persist(tmp_path / "index")
    del built
    reader = ClueIndex.load(tmp_path / "index", embedding=FakeEmbedder())
    writer = ClueIndex.load(tmp_path / "index", embedding=FakeEmbedder())
    held = reader.doc_ids()
    assert snapshot.visible(reader) is None  # nobody wrote since it loaded: no filter
    assert writer.insert([extra]) == [extra.id]

    assert snapshot.visible(reader) == frozenset(held)
    assert reader.doc_ids() == held
    assert extra.id not in _docs(reader)
    assert extra.id in _docs(writer)  # the writer's own write keeps it reading everything
    assert snapshot.visible(writer) is None
    with pytest.raises(IndexMismatchError, match="another process wrote its graph") as info:
        reader.persist(tmp_path / "reader")
    assert "\n" not in str(info.value)

    writer.persist(tmp_path / "index", overwrite=True)
    again = ClueIndex.load(tmp_path / "index", embedding=FakeEmbedder())
    assert again.doc_ids() == sorted(d.id for d in docs)


def test_the_filter_of_a_snapshot_is_anded_with_the_callers(
    falkordb_url: str, tmp_path: Path
) -> None:
    docs = compliance_documents()
    built = ClueIndex.from_documents(docs[1:], embedding=FakeEmbedder(), graph_store=falkordb_url)
    built.persist(tmp_path / "index")
    reader = ClueIndex.load(tmp_path / "index", embedding=FakeEmbedder())
    caller = Comparison("doc_id", "ne", "rome")
    assert snapshot.narrowed(reader, caller) is caller
    built.insert([docs[0]])
    narrowed = snapshot.narrowed(reader, caller)
    assert isinstance(narrowed, AllOf) and narrowed.filters[0] is caller
    assert narrowed.matches({"doc_id": "jazz"}) and not narrowed.matches({"doc_id": docs[0].id})
