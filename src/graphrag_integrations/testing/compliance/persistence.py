"""Compliance cases of ``persist`` / ``load`` and their data-safety rules
(:mod:`~graphrag_integrations.core.persistence`)."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.persistence import (
    MANIFEST_NAME,
    Manifest,
    atomic_directory,
    read_manifest,
    write_manifest,
)
from graphrag_integrations.errors import CorruptIndexError, IndexExistsError, IndexMismatchError
from graphrag_integrations.testing.compliance.base import ComplianceBase
from graphrag_integrations.testing.compliance.corpus import (
    CORPUS,
    EXTRA,
    EXTRA_QUERY,
    compliance_documents,
)
from graphrag_integrations.testing.compliance.folders import DAMAGES, snapshot, write_foreign_files


class PersistenceCases(ComplianceBase):
    """The round trip; foreign folders, other indexes, damaged files, another dimension,
    stale siblings and build timings (see the suite's docstring)."""

    # -- persistence ------------------------------------------------------------------------
    def test_persist_load_round_trip(self, index: BaseIndex, tmp_path: Path) -> None:
        index.persist(tmp_path / "index")
        loaded = self.load_index(tmp_path / "index", self.make_embedder())
        assert type(loaded) is type(index)
        assert loaded.default_k == index.default_k
        self._assert_same_answers(self._answers(loaded), self._answers(index))
        # the loaded index keeps its lifecycle
        assert loaded.insert(compliance_documents([EXTRA])) == [EXTRA.id]
        self._assert_finds(loaded, EXTRA_QUERY)

    # -- data safety (core.persistence) -----------------------------------------------------
    def test_persist_refuses_a_folder_of_foreign_files(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        folder = tmp_path / "my_docs"
        write_foreign_files(folder)
        before = snapshot(tmp_path)
        with pytest.raises(IndexExistsError, match="non-empty folder"):
            index.persist(folder)
        assert snapshot(tmp_path) == before, "persist changed or left files behind"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["my_docs"]

    def test_persist_with_overwrite_keeps_foreign_files(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        folder = tmp_path / "my_docs"
        foreign = write_foreign_files(folder)
        index.persist(folder, overwrite=True)
        kept = snapshot(folder)
        assert {rel: kept.get(rel) for rel in foreign} == foreign
        expected = self._answers(index)
        self._assert_same_answers(
            self._answers(self.load_index(folder, self.make_embedder())), expected
        )
        # now an index of this method: a re-persist needs no overwrite and still keeps them
        index.persist(folder)
        kept = snapshot(folder)
        assert {rel: kept.get(rel) for rel in foreign} == foreign
        self._assert_same_answers(
            self._answers(self.load_index(folder, self.make_embedder())), expected
        )

    def test_persist_refuses_an_index_of_another_method(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        target = tmp_path / "other"
        other = f"not-{index.method}"
        with atomic_directory(target) as tmp:
            (tmp / "data.bin").write_bytes(b"another method's data")
            write_manifest(tmp, Manifest(method=other))
        before = snapshot(tmp_path)
        with pytest.raises(IndexExistsError, match=re.escape(repr(other))):
            index.persist(target)
        assert snapshot(tmp_path) == before
        index.persist(target, overwrite=True)
        assert read_manifest(target).method == index.method
        loaded = self.load_index(target, self.make_embedder())
        self._assert_same_answers(self._answers(loaded), self._answers(index))

    def test_persist_refuses_another_index_of_the_same_method(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        target = tmp_path / "index"
        index.persist(target)
        assert read_manifest(target).index_id == index.index_id
        other = self._build(compliance_documents(CORPUS[:4]), self.make_embedder())
        assert other.index_id != index.index_id
        before = snapshot(tmp_path)
        with pytest.raises(IndexExistsError, match=r"pass overwrite=True") as error:
            other.persist(target)
        assert str(target) in str(error.value) and "\n" not in str(error.value)
        assert snapshot(tmp_path) == before, "the refused persist changed the folder"
        loaded = self.load_index(target, self.make_embedder())
        self._assert_same_answers(self._answers(loaded), self._answers(index))
        other.persist(target, overwrite=True)
        assert read_manifest(target).index_id == other.index_id
        loaded = self.load_index(target, self.make_embedder())
        self._assert_same_answers(self._answers(loaded), self._answers(other))

    def test_the_same_index_persists_again_into_its_folder(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        target = tmp_path / "index"
        index.persist(target)
        assert index.insert(compliance_documents([EXTRA])) == [EXTRA.id]
        index.persist(target)  # the same index: no overwrite needed
        loaded = self.load_index(target, self.make_embedder())
        assert loaded.index_id == index.index_id
        self._assert_finds(loaded, EXTRA_QUERY)
        assert loaded.delete(EXTRA.id) is True
        loaded.persist(target)  # a loaded index too
        assert read_manifest(target).index_id == index.index_id
        again = self.load_index(target, self.make_embedder())
        self._assert_same_answers(self._answers(again), self._answers(loaded))

    def test_an_index_recorded_without_an_index_id_is_not_replaced(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        target = tmp_path / "index"
        index.persist(target)
        manifest = target / MANIFEST_NAME
        data = json.loads(manifest.read_text(encoding="utf-8"))
        del data["index_id"]  # as written before index ids existed
        manifest.write_text(json.dumps(data), encoding="utf-8")
        before = snapshot(tmp_path)
        with pytest.raises(IndexExistsError, match=r"without an index id.*pass overwrite=True"):
            index.persist(target)
        assert snapshot(tmp_path) == before
        self.load_index(target, self.make_embedder())  # it still loads
        index.persist(target, overwrite=True)
        assert read_manifest(target).index_id == index.index_id

    def test_build_timings_are_kept_through_load(self, index: BaseIndex, tmp_path: Path) -> None:
        timings = getattr(index, "timings", None)
        if not isinstance(timings, dict):
            pytest.skip(f"{type(index).__name__} reports no build timings")
        assert any(value > 0 for value in timings.values()), timings
        target = tmp_path / "index"
        index.persist(target)
        assert read_manifest(target).timings == pytest.approx(timings)
        loaded_timings = getattr(self.load_index(target, self.make_embedder()), "timings", None)
        assert loaded_timings == pytest.approx(timings)
        # a manifest written before timings were recorded: unknown (nan), never 0
        manifest = target / MANIFEST_NAME
        data = json.loads(manifest.read_text(encoding="utf-8"))
        del data["timings"]
        manifest.write_text(json.dumps(data), encoding="utf-8")
        unknown = getattr(self.load_index(target, self.make_embedder()), "timings", None)
        assert isinstance(unknown, dict) and set(unknown) == set(timings)
        assert all(math.isnan(value) for value in unknown.values()), unknown

    @pytest.mark.parametrize("damage", sorted(DAMAGES))
    def test_a_damaged_file_is_named_at_load(
        self, index: BaseIndex, tmp_path: Path, damage: str
    ) -> None:
        source = tmp_path / "index"
        index.persist(source)
        files = read_manifest(source).files
        assert files, "the manifest lists no checksums: persist must write via atomic_directory"
        damaged = 0
        for n, rel in enumerate(sorted(files)):
            copy = tmp_path / f"copy-{n}"
            shutil.copytree(source, copy)
            if not DAMAGES[damage](copy / rel):
                continue
            damaged += 1
            with pytest.raises(CorruptIndexError) as error:
                self.load_index(copy, self.make_embedder())
            assert rel in str(error.value), f"{damage} {rel}: {error.value}"
        if not damaged:
            pytest.skip(f"no file of the index can be damaged as {damage!r}")

    def test_load_with_an_embedder_of_another_dimension_fails(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        index.persist(tmp_path / "index")
        if read_manifest(tmp_path / "index").embedding_model is None:
            pytest.skip("the index records no embedding model")
        other = self.make_other_dimension_embedder(self.make_embedder())
        if other is None:
            pytest.skip("make_other_dimension_embedder gave no embedder")
        with pytest.raises(IndexMismatchError, match="dimension"):
            self.load_index(tmp_path / "index", other)

    def test_stale_siblings_of_killed_writers_are_cleaned_at_load(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        index.persist(tmp_path / "index")
        for name in (".index.tmp-abcd1234", ".index.old-abcd1234"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "partial.bin").write_bytes(b"0" * 64)
        self.load_index(tmp_path / "index", self.make_embedder())
        assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]
