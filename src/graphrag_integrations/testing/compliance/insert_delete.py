"""Compliance cases of ``insert``, ``delete`` and ``delete_many``."""

from __future__ import annotations

import logging

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.testing.compliance.base import ComplianceBase
from graphrag_integrations.testing.compliance.corpus import (
    CORPUS,
    EXTRA,
    EXTRA_QUERY,
    QUERIES,
    compliance_documents,
)


class InsertDeleteCases(ComplianceBase):
    """``insert`` returns the ids added and skips those indexed; ``delete`` / ``delete_many``
    answer as a fresh build without the documents; an unknown id returns ``False``."""

    def test_insert_returns_the_ids_added_and_they_are_retrievable(self, index: BaseIndex) -> None:
        assert index.retrieve(EXTRA_QUERY.query, k=1)[0].doc_id != EXTRA.id
        assert index.insert(compliance_documents([EXTRA])) == [EXTRA.id]
        hit = self._assert_finds(index, EXTRA_QUERY)
        assert hit.passage.metadata["title"] == EXTRA.title

    def test_insert_skips_documents_already_indexed(
        self, index: BaseIndex, caplog: pytest.LogCaptureFixture
    ) -> None:
        before = self._answers(index, k=len(CORPUS))
        with caplog.at_level(logging.WARNING):
            added = index.insert(compliance_documents([CORPUS[0], EXTRA]))
        assert added == [EXTRA.id]
        assert any(
            r.levelno == logging.WARNING and CORPUS[0].id in r.getMessage() for r in caplog.records
        )
        assert index.delete(EXTRA.id) is True
        self._assert_same_answers(self._answers(index, k=len(CORPUS)), before)

    def test_insert_then_delete_equals_a_fresh_build(
        self, index: BaseIndex, documents: list[SourceDocument]
    ) -> None:
        fresh = self._build(documents, self.make_embedder())
        index.insert(compliance_documents([EXTRA]))
        assert index.delete(EXTRA.id) is True
        self._assert_same_answers(self._answers(index), self._answers(fresh))

    def test_delete_removes_the_document(
        self, index: BaseIndex, documents: list[SourceDocument]
    ) -> None:
        target = QUERIES[0]
        self._assert_finds(index, target)
        assert index.delete(target.doc_id) is True
        everything = index.retrieve(target.query, k=len(CORPUS))
        assert everything, "the other documents are still indexed"
        assert target.doc_id not in {h.doc_id for h in everything}
        fresh = self._build([d for d in documents if d.id != target.doc_id], self.make_embedder())
        self._assert_same_answers(self._answers(index), self._answers(fresh))

    def test_delete_of_an_unknown_id_returns_false_and_warns(
        self, index: BaseIndex, caplog: pytest.LogCaptureFixture
    ) -> None:
        before = self._answers(index)
        with caplog.at_level(logging.WARNING):
            assert index.delete("no-such-document") is False
        assert any(
            r.levelno == logging.WARNING and "no-such-document" in r.getMessage()
            for r in caplog.records
        )
        self._assert_same_answers(self._answers(index), before)

    def test_second_delete_of_the_same_id_returns_false(self, index: BaseIndex) -> None:
        assert index.delete(CORPUS[0].id) is True
        assert index.delete(CORPUS[0].id) is False

    def test_delete_many_equals_deleting_one_by_one(
        self, index: BaseIndex, documents: list[SourceDocument]
    ) -> None:
        gone = [CORPUS[0].id, CORPUS[1].id]
        assert index.delete_many([gone[0], "no-such-document", gone[1], gone[0]]) == gone
        fresh = self._build([d for d in documents if d.id not in gone], self.make_embedder())
        self._assert_same_answers(self._answers(index), self._answers(fresh))
