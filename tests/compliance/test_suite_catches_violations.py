"""The compliance suite fails indexes that break the lifecycle contract (it can fail)."""

from __future__ import annotations

import shutil
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core.index import persistence as template_module
from graphrag_integrations.core.index.base import document_ids, drop_indexed
from graphrag_integrations.core.persistence import read_manifest
from graphrag_integrations.core.text.chunking import documents_to_passages
from graphrag_integrations.core.text.documents import SourceDocument, load_documents
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.errors import DocumentLoadError, InvalidArgumentError
from graphrag_integrations.testing import FakeEmbedder, IndexComplianceTests, compliance_documents
from graphrag_integrations.testing.compliance import filter_documents


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


class HidesItsArguments(DenseRetriever):
    """A ``from_documents`` whose arguments an IDE cannot see."""

    @classmethod
    def from_documents(cls, documents: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return super().from_documents(documents, **kwargs)


class RetrieverIgnoresK(DenseRetriever):
    """``as_retriever(k=...)`` drops ``k``: its retriever returns the params' default."""

    def as_retriever(
        self, k: int | None = None, *, query_params: Any = None, **overrides: Any
    ) -> Any:
        return super().as_retriever(None, query_params=query_params, **overrides)


class AcceptsUnknownOptions(DenseRetriever):
    """``as_retriever`` drops overrides it does not know instead of refusing them."""

    def as_retriever(
        self, k: int | None = None, *, query_params: Any = None, **overrides: Any
    ) -> Any:
        return super().as_retriever(k, query_params=query_params)


class PresetWinsSilently(DenseRetriever):
    """``preset`` given with a params object: the preset is dropped without a word."""

    @classmethod
    def from_passages(cls, passages: Any, **kwargs: Any) -> Any:
        if kwargs.get("query_params") is not None:
            kwargs.pop("preset", None)
        return cls(passages, **kwargs)

    @classmethod
    def from_documents(cls, documents: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs.pop("preset", None)
        return super().from_documents(documents, **kwargs)


def test_the_api_contract_is_checked() -> None:
    suite = Suite()
    suite.test_from_documents_names_every_argument()
    suite.test_as_retriever_k_is_the_number_of_results(build(DenseRetriever))
    suite.test_an_unknown_query_option_is_refused(build(DenseRetriever))
    with pytest.raises(AssertionError, match="hides arguments in"):
        bad_signature = Suite()
        bad_signature.index_class = HidesItsArguments
        bad_signature.test_from_documents_names_every_argument()
    with pytest.raises(AssertionError):
        suite.test_as_retriever_k_is_the_number_of_results(build(RetrieverIgnoresK))
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        suite.test_an_unknown_query_option_is_refused(build(AcceptsUnknownOptions))
    silent = Suite()
    silent.index_class = PresetWinsSilently
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        silent.test_a_preset_and_a_params_object_are_refused_together(
            compliance_documents(), FakeEmbedder()
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


# -- issue 12: the data-safety and input cases fail indexes that skip the core checks --------
DID_NOT_PASS = (AssertionError, pytest.fail.Exception)


class PersistWipesTheFolder(DenseRetriever):
    """Deletes whatever is in the target and never refuses (the issue-12 bug)."""

    def persist(self, path: str | Path, *, overwrite: bool = False) -> None:
        shutil.rmtree(path, ignore_errors=True)
        super().persist(path, overwrite=True)


class ReturnsNothingForBadK(DenseRetriever):
    def retrieve(self, query: str, k: Any = None) -> list[RetrievedPassage]:
        if isinstance(k, int) and k <= 0:
            return []
        return super().retrieve(query, int(k) if k is not None else None)


class DropsLoadOptions(DenseRetriever):
    @classmethod
    def from_documents(cls, documents: Any, **kwargs: Any) -> DenseRetriever:
        kwargs.pop("errors", None)
        kwargs.pop("report", None)
        return super().from_documents(documents, **kwargs)


def test_persist_must_refuse_foreign_folders(tmp_path: Path) -> None:
    class WipeSuite(IndexComplianceTests):
        index_class = PersistWipesTheFolder

    suite = WipeSuite()
    with pytest.raises(DID_NOT_PASS):
        suite.test_persist_refuses_a_folder_of_foreign_files(
            build(PersistWipesTheFolder), tmp_path / "a"
        )
    (tmp_path / "b").mkdir()
    with pytest.raises(DID_NOT_PASS):
        suite.test_persist_with_overwrite_keeps_foreign_files(
            build(PersistWipesTheFolder), tmp_path / "b"
        )
    (tmp_path / "c").mkdir()
    with pytest.raises(DID_NOT_PASS):
        suite.test_persist_refuses_an_index_of_another_method(
            build(PersistWipesTheFolder), tmp_path / "c"
        )


@pytest.mark.parametrize("damage", ["flipped-byte", "edited-text"])
def test_load_must_verify_the_checksums(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    Suite().test_a_damaged_file_is_named_at_load(build(DenseRetriever), tmp_path / "ok", damage)
    monkeypatch.setattr(template_module, "read_manifest", partial(read_manifest, verify=False))
    (tmp_path / "unverified").mkdir()
    with pytest.raises(DID_NOT_PASS):
        Suite().test_a_damaged_file_is_named_at_load(
            build(DenseRetriever), tmp_path / "unverified", damage
        )


def test_load_must_check_the_dimension(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Suite().test_load_with_an_embedder_of_another_dimension_fails(
        build(DenseRetriever), tmp_path / "ok"
    )
    monkeypatch.setattr(template_module, "check_embedder", lambda *args, **kwargs: None)
    (tmp_path / "unchecked").mkdir()
    with pytest.raises(DID_NOT_PASS):
        Suite().test_load_with_an_embedder_of_another_dimension_fails(
            build(DenseRetriever), tmp_path / "unchecked"
        )


@pytest.mark.parametrize("k", [0, -1])
def test_k_must_be_validated(k: int) -> None:
    class LaxSuite(IndexComplianceTests):
        index_class = ReturnsNothingForBadK

    with pytest.raises(DID_NOT_PASS):
        LaxSuite().test_invalid_k_raises(build(ReturnsNothingForBadK), k, InvalidArgumentError)


def test_load_options_must_reach_the_loader(tmp_path: Path) -> None:
    class DropSuite(IndexComplianceTests):
        index_class = DropsLoadOptions

    with pytest.raises(DocumentLoadError, match=r"latin1\.txt"):
        DropSuite().test_undecodable_files_are_skipped_with_errors_skip(FakeEmbedder(), tmp_path)


def test_a_build_index_without_options_is_named() -> None:
    class OldHook(IndexComplianceTests):
        index_class = DenseRetriever

        def build_index(self, documents: Any, embedder: Any) -> DenseRetriever:  # type: ignore[override]
            return DenseRetriever.from_documents(documents, embedding=embedder)

    with pytest.raises(TypeError, match=r"build_index must accept \*\*options"):
        OldHook()._build(compliance_documents(), FakeEmbedder(), errors="skip")


# -- issue 12: the concurrency cases fail an index without the lock ---------------------------
class Unlocked(DenseRetriever):
    """Opts out of the index lock and mutates in steps (check then act; passages before
    vectors), as an index without the lock does."""

    read_methods = ()
    write_methods = ()

    def insert(self, documents: Any, **options: Any) -> list[str]:
        indexed = {p.doc_id for p in self.passages}
        time.sleep(0.05)
        passages = drop_indexed(documents_to_passages(load_documents(documents)), indexed)
        if passages:
            vectors = self.embedder.embed([p.text for p in passages])
            self.passages.extend(passages)
            time.sleep(0.02)
            self._matrix = np.vstack([self._matrix, vectors])
        return document_ids(passages)

    def delete(self, doc_id: str) -> bool:
        keep = [i for i, p in enumerate(self.passages) if p.doc_id != doc_id]
        if len(keep) == len(self.passages):
            return self._unknown_document(doc_id)
        self.passages = [self.passages[i] for i in keep]
        time.sleep(0.02)
        self._matrix = self._matrix[keep]
        return True


class BlockingAsync(DenseRetriever):
    """``ainsert`` / ``adelete`` that run the mutation in the event loop's thread."""

    async def ainsert(self, documents: Any, **options: Any) -> list[str]:
        return self.insert(documents, **options)

    async def adelete(self, doc_id: str) -> bool:
        return self.delete(doc_id)


def test_the_concurrency_cases_fail_an_index_without_the_lock() -> None:
    suite = Suite()
    with pytest.raises(AssertionError, match="does not hold the index's write lock"):
        suite.test_mutations_and_queries_hold_the_index_lock(build(Unlocked))
    with pytest.raises(AssertionError):
        suite.test_queries_during_inserts_and_deletes_see_whole_mutations(
            build(Unlocked), compliance_documents()
        )
    with pytest.raises(AssertionError):
        suite.test_concurrent_inserts_land_exactly_once(build(Unlocked))
    # the real index passes them
    suite.test_queries_during_inserts_and_deletes_see_whole_mutations(
        build(DenseRetriever), compliance_documents()
    )
    suite.test_concurrent_inserts_land_exactly_once(build(DenseRetriever))


async def test_the_async_case_fails_mutations_that_block_the_loop() -> None:
    with pytest.raises(AssertionError, match="event loop stalled"):
        await Suite().test_ainsert_and_adelete_do_not_block_the_event_loop(build(BlockingAsync))


# -- issue 12: the metadata-filter cases fail an index that filters wrongly ----------------------
class IgnoresFilter(DenseRetriever):
    def _retrieve_filtered(self, query: str, k: int, where: Any) -> list[RetrievedPassage]:
        return self._retrieve(query, k)


class FilterIgnoresK(DenseRetriever):
    def _retrieve_filtered(self, query: str, k: int, where: Any) -> list[RetrievedPassage]:
        return super()._retrieve_filtered(query, len(self.passages), where)


class InsertDropsMetadata(DenseRetriever):
    def insert(self, documents: Any, **options: Any) -> list[str]:
        docs = load_documents(documents)
        return super().insert([SourceDocument(d.text, id=d.id) for d in docs], **options)


def test_the_filter_cases_fail_an_index_that_filters_wrongly() -> None:
    suite = Suite()

    def filtered(cls: type[DenseRetriever]) -> DenseRetriever:
        return cls.from_documents(filter_documents(), embedding=FakeEmbedder())

    with pytest.raises(AssertionError):
        suite.test_retrieve_with_a_filter_returns_only_matching_passages(filtered(IgnoresFilter))
    with pytest.raises(AssertionError):
        suite.test_a_filter_honours_k(filtered(FilterIgnoresK))
    with pytest.raises((AssertionError, KeyError)):
        suite.test_inserted_documents_are_filtered_by_their_metadata(filtered(InsertDropsMetadata))
    # the real index passes them
    suite.test_retrieve_with_a_filter_returns_only_matching_passages(filtered(DenseRetriever))
    suite.test_a_filter_honours_k(filtered(DenseRetriever))
    suite.test_inserted_documents_are_filtered_by_their_metadata(filtered(DenseRetriever))
