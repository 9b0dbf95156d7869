"""The compliance suite fails indexes that break the lifecycle contract (it can fail)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.testing import FakeEmbedder, IndexComplianceTests, compliance_documents


class DeleteReturnsNothing(DenseRetriever):
    def delete(self, doc_id: str) -> Any:
        super().delete(doc_id)
        return None


class InsertDuplicates(DenseRetriever):
    """Inserts every document again, even when its id is already indexed."""

    def insert(self, documents: Any, **kwargs: Any) -> list[str]:
        docs = list(documents)
        self.add_passages(DenseRetriever.from_documents(docs, embedding=self.embedder).passages)
        return [d.id for d in docs]


class IgnoresK(DenseRetriever):
    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        return super().retrieve(query, None)


class LoadForgetsScores(DenseRetriever):
    @classmethod
    def load(cls, path: str | Path, **kwargs: Any) -> DenseRetriever:
        loaded = super().load(path, **kwargs)
        loaded._matrix = loaded._matrix * 0.5
        return loaded


class Suite(IndexComplianceTests):
    index_class = DenseRetriever


def build(cls: type[DenseRetriever]) -> DenseRetriever:
    return cls.from_documents(compliance_documents(), embedding=FakeEmbedder())


def test_the_suite_passes_the_real_dense_index(tmp_path: Path) -> None:
    suite = Suite()
    suite.test_second_delete_of_the_same_id_returns_false(build(DenseRetriever))
    suite.test_k_is_honoured(build(DenseRetriever))
    suite.test_persist_load_round_trip(build(DenseRetriever), tmp_path)


def test_delete_must_return_a_bool() -> None:
    with pytest.raises(AssertionError):
        Suite().test_second_delete_of_the_same_id_returns_false(build(DeleteReturnsNothing))


def test_insert_must_skip_indexed_documents(caplog: pytest.LogCaptureFixture) -> None:
    class DuplicateSuite(IndexComplianceTests):
        index_class = InsertDuplicates

    with pytest.raises(AssertionError):
        DuplicateSuite().test_insert_skips_documents_already_indexed(
            build(InsertDuplicates), caplog
        )


def test_k_must_be_honoured() -> None:
    with pytest.raises(AssertionError):
        Suite().test_k_is_honoured(build(IgnoresK))


def test_load_must_answer_the_same(tmp_path: Path) -> None:
    class LossySuite(IndexComplianceTests):
        index_class = LoadForgetsScores

    with pytest.raises(AssertionError):
        LossySuite().test_persist_load_round_trip(build(LoadForgetsScores), tmp_path)


def test_a_suite_without_index_class_says_so() -> None:
    class Incomplete(IndexComplianceTests):
        pass

    with pytest.raises(TypeError, match="must set index_class"):
        Incomplete()._build(compliance_documents(), FakeEmbedder())
