"""The compliance suite's chunking and document-management cases fail indexes that break them
(so they can fail), and pass the real dense index."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.testing import FakeEmbedder, IndexComplianceTests, compliance_documents


class Suite(IndexComplianceTests):
    index_class = DenseRetriever


class NoChunking(DenseRetriever):
    """Keeps every document whole, whatever it is told (the old behaviour)."""

    @classmethod
    def from_documents(cls, documents: Any, **kwargs: Any) -> Any:
        for name in ("splitter", "chunker", "chunking"):
            kwargs.pop(name, None)
        return super().from_documents(documents, chunking=False, **kwargs)


class UpsertKeepsTheOldVersion(DenseRetriever):
    def upsert(self, documents: Any, **options: Any) -> list[str]:
        return self.insert(documents, **options)


class DeleteLeavesChunks(DenseRetriever):
    """Removes only the first chunk of a document."""

    def delete(self, doc_id: str) -> bool:
        rows = [i for i, p in enumerate(self.passages) if p.doc_id == doc_id]
        if not rows:
            return self._unknown_document(doc_id)
        keep = [i for i in range(len(self.passages)) if i != rows[0]]
        self.passages = [self.passages[i] for i in keep]
        self._matrix = self._matrix[keep] if keep else np.zeros((0, 0), dtype=np.float32)
        return True


def suite_for(cls: type[DenseRetriever]) -> IndexComplianceTests:
    class Broken(IndexComplianceTests):
        index_class = cls

    return Broken()


def build(cls: type[DenseRetriever]) -> DenseRetriever:
    return cls.from_documents(compliance_documents(), embedding=FakeEmbedder())


def test_the_cases_pass_the_real_dense_index(caplog: pytest.LogCaptureFixture) -> None:
    suite = Suite()
    suite.test_a_long_document_is_cut_into_chunks_by_default(FakeEmbedder())
    suite.test_chunking_false_keeps_each_document_whole(FakeEmbedder())
    suite.test_upsert_replaces_a_document_by_id(build(DenseRetriever), caplog)
    suite.test_doc_ids_lists_the_documents_indexed(build(DenseRetriever))


def test_an_index_that_does_not_chunk_fails() -> None:
    suite = suite_for(NoChunking)
    with pytest.raises(AssertionError, match="whole document came back as one passage"):
        suite.test_a_long_document_is_cut_into_chunks_by_default(FakeEmbedder())
    with pytest.raises(AssertionError):
        suite.test_a_text_splitter_or_node_parser_replaces_the_default(FakeEmbedder(), "langchain")


def test_an_upsert_that_keeps_the_old_version_fails(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(AssertionError):
        suite_for(UpsertKeepsTheOldVersion).test_upsert_replaces_a_document_by_id(
            build(UpsertKeepsTheOldVersion), caplog
        )


def test_a_delete_that_leaves_chunks_fails() -> None:
    with pytest.raises(AssertionError, match="a chunk survived delete"):
        suite_for(DeleteLeavesChunks).test_a_long_document_is_cut_into_chunks_by_default(
            FakeEmbedder()
        )
