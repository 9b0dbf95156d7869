"""Vector indexes: the behavioural cases (:mod:`.vector_index_cases`) on both built-in
backends, plus backend specifics."""

from __future__ import annotations

import itertools
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.persistence import MANIFEST_NAME
from graphrag_integrations.core.retrieval.filters import AllOf, Comparison
from graphrag_integrations.core.vector_store import (
    ChromaVectorIndex,
    InMemoryVectorIndex,
    chroma,
    parse_where,
)
from graphrag_integrations.errors import CorruptIndexError, IndexMismatchError, IndexNotFoundError
from tests.unit.core.vector_store.vector_index_cases import (
    DIM,
    ReloadCase,
    VectorIndexCases,
    exact,
    unit,
    vectors,
)

_names = itertools.count()


def _unique(prefix: str = "col") -> str:
    # in-process Chroma clients share state: give every test its own collection
    return f"{prefix}-{os.getpid()}-{next(_names)}"


class Backend:
    """Creates an index and reopens it from storage (persist/load or a new client)."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.tmp_path = tmp_path
        self.collection = _unique()

    def make(self, dimension: int = DIM, model: str = "toy-model") -> Any:
        if self.kind == "memory":
            return InMemoryVectorIndex(dimension, model)
        return ChromaVectorIndex(
            self.collection,
            embedding_model=model,
            dimension=dimension,
            path=self.tmp_path / "chroma",
        )

    def reopen(self, index: Any, dimension: int = DIM, model: str = "toy-model") -> Any:
        if self.kind == "memory":
            index.persist(self.tmp_path / "mem")
            return InMemoryVectorIndex.load(self.tmp_path / "mem")
        return self.make(dimension, model)


@pytest.fixture(params=["memory", "chroma"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return Backend(request.param, tmp_path)


class TestBuiltInBackends(VectorIndexCases, ReloadCase):
    """The in-memory index and Chroma (a local client)."""


def test_batched_add(backend: Backend) -> None:
    if backend.kind == "memory":
        index = backend.make()
    else:
        index = ChromaVectorIndex(
            backend.collection, embedding_model="toy-model", dimension=DIM, batch_size=7
        )
        assert index.batch_size == 7
    vecs = vectors(50)
    ids = [f"b{i}" for i in range(50)]
    index.add(ids, vecs)
    assert len(index) == 50
    np.testing.assert_allclose(index.get_embeddings(ids[::-1]), unit(vecs[::-1]), atol=1e-6)
    index.delete(ids[:20])
    assert len(index) == 30


# -- helpers -------------------------------------------------------------------------------
def test_parse_where() -> None:
    where = parse_where({"a": 1, "b": {"$in": ["x", "y"]}, "c": {"$eq": True}})
    assert where == AllOf(
        (Comparison("a", "eq", 1), Comparison("b", "in", ("x", "y")), Comparison("c", "eq", True))
    )
    assert parse_where(None) is None
    # several operators under one key: all must hold
    assert parse_where({"a": {"$gte": 1, "$lt": 3}}) == AllOf(
        (Comparison("a", "gte", 1), Comparison("a", "lt", 3))
    )
    with pytest.raises(ValueError, match="must be a mapping"):
        parse_where([("a", 1)])  # type: ignore[arg-type]


# -- in-memory specifics -------------------------------------------------------------------
def test_in_memory_persist_layout_and_checks(tmp_path: Path) -> None:
    index = InMemoryVectorIndex(DIM, "toy-model")
    index.add(["a"], vectors(1))
    index.persist(tmp_path / "ix")
    names = sorted(p.name for p in (tmp_path / "ix").iterdir())
    assert names == [MANIFEST_NAME, "records.json", "vectors.npy"]
    manifest = json.loads((tmp_path / "ix" / MANIFEST_NAME).read_text())
    assert manifest["models"] == {"embedding": "toy-model"}
    assert manifest["embedding_dimension"] == DIM
    loaded = InMemoryVectorIndex.load(tmp_path / "ix", model_name="toy-model", dimension=DIM)
    assert loaded.ids == ["a"]
    with pytest.raises(IndexMismatchError, match="expected 'other', found 'toy-model'"):
        InMemoryVectorIndex.load(tmp_path / "ix", model_name="other")
    with pytest.raises(IndexMismatchError, match="expected 4, found 8"):
        InMemoryVectorIndex.load(tmp_path / "ix", dimension=4)
    with pytest.raises(IndexNotFoundError):
        InMemoryVectorIndex.load(tmp_path / "missing")


def test_in_memory_load_detects_inconsistent_files(tmp_path: Path) -> None:
    index = InMemoryVectorIndex(DIM, "toy-model")
    index.add(["a", "b"], vectors(2))
    index.persist(tmp_path / "ix")
    np.save(tmp_path / "ix" / "vectors.npy", vectors(3))
    with pytest.raises(CorruptIndexError, match=r"vectors\.npy: checksum mismatch"):
        InMemoryVectorIndex.load(tmp_path / "ix")
    manifest = tmp_path / "ix" / MANIFEST_NAME  # an older index: no checksums, same checks
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "files": {}}))
    with pytest.raises(CorruptIndexError, match="files disagree"):
        InMemoryVectorIndex.load(tmp_path / "ix")
    (tmp_path / "ix" / "records.json").write_text("{broken")
    with pytest.raises(IndexMismatchError, match="unreadable"):
        InMemoryVectorIndex.load(tmp_path / "ix")


def test_in_memory_empty_round_trip(tmp_path: Path) -> None:
    InMemoryVectorIndex(DIM, "m").persist(tmp_path / "e")
    loaded = InMemoryVectorIndex.load(tmp_path / "e")
    assert len(loaded) == 0
    loaded.add(["a"], vectors(1))
    assert loaded.query(vectors(1)[0], 1)[0][0] == "a"


def test_in_memory_growth_keeps_rows() -> None:
    index = InMemoryVectorIndex(DIM, "m")
    vecs = vectors(100)
    for i in range(100):  # many small adds exercise the capacity doubling
        index.add([f"g{i}"], vecs[i : i + 1])
    np.testing.assert_allclose(index.get_embeddings(["g0", "g99"]), unit(vecs[[0, 99]]), atol=1e-6)
    assert index.query(vecs[42], 1)[0][0] == "g42"


def test_bad_dimension() -> None:
    with pytest.raises(ValueError, match="positive integer"):
        InMemoryVectorIndex(0, "m")
    with pytest.raises(ValueError, match="positive integer"):
        ChromaVectorIndex(_unique(), embedding_model="m", dimension=-3)


# -- Chroma specifics ----------------------------------------------------------------------
def test_chroma_collection_config(tmp_path: Path) -> None:
    index = ChromaVectorIndex(_unique(), embedding_model="toy-model", dimension=DIM)
    meta = index.collection.metadata
    assert meta["hnsw:space"] == "cosine"
    assert meta["graphrag_integrations:embedding_model"] == "toy-model"
    assert meta["graphrag_integrations:dimension"] == DIM
    # chroma must never embed for us (its default function downloads a model)
    assert index.collection._embedding_function is None
    assert index.client.get_settings().anonymized_telemetry is False


def test_chroma_reopen_checks_model_and_dimension(tmp_path: Path) -> None:
    name = _unique()
    ChromaVectorIndex(name, embedding_model="m1", dimension=DIM, path=tmp_path).add(
        ["a"], vectors(1)
    )
    with pytest.raises(IndexMismatchError, match="expected 'm2', found 'm1'"):
        ChromaVectorIndex(name, embedding_model="m2", dimension=DIM, path=tmp_path)
    with pytest.raises(IndexMismatchError, match=f"expected 4, found {DIM}"):
        ChromaVectorIndex(name, embedding_model="m1", dimension=4, path=tmp_path)
    assert len(ChromaVectorIndex(name, embedding_model="m1", dimension=DIM, path=tmp_path)) == 1


def test_chroma_rejects_foreign_collections() -> None:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
    plain = _unique()
    client.create_collection(plain, embedding_function=None)
    with pytest.raises(IndexMismatchError, match="not created by graphrag-integrations"):
        ChromaVectorIndex(plain, embedding_model="m", dimension=DIM, client=client)
    l2 = _unique()
    client.create_collection(
        l2,
        metadata={
            "graphrag_integrations:embedding_model": "m",
            "graphrag_integrations:dimension": DIM,
        },
        embedding_function=None,
    )
    with pytest.raises(IndexMismatchError, match="'cosine' space, found 'l2'"):
        ChromaVectorIndex(l2, embedding_model="m", dimension=DIM, client=client)
    # a user-supplied client is used as is
    ok = ChromaVectorIndex(_unique(), embedding_model="m", dimension=DIM, client=client)
    assert ok.client is client


def test_chromadb_is_imported_only_when_a_chroma_index_is_made() -> None:
    code = (
        "import sys; from graphrag_integrations.core.vector_store import ChromaVectorIndex; "
        "print('chromadb' in sys.modules); "
        "ChromaVectorIndex('lazy-import', embedding_model='m', dimension=2); "
        "print('chromadb' in sys.modules)"
    )
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.split() == ["False", "True"]


def test_chroma_location_arguments_are_exclusive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at most one"):
        ChromaVectorIndex(embedding_model="m", dimension=DIM, path=tmp_path, host="localhost")
    with pytest.raises(ValueError, match="batch_size"):
        ChromaVectorIndex(_unique(), embedding_model="m", dimension=DIM, batch_size=0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[int]:
    import shutil
    import sys

    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    if not Path(exe).exists():
        pytest.skip("chroma CLI not installed")
    port = _free_port()
    proc = subprocess.Popen(
        [
            exe,
            "run",
            "--path",
            str(tmp_path / "server"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        else:
            pytest.fail("chroma server did not start")
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
def test_chroma_http_client(chroma_server: int, caplog: pytest.LogCaptureFixture) -> None:
    name = _unique()
    with caplog.at_level(logging.DEBUG, logger="graphrag_integrations.core.vector_store.chroma"):
        index = ChromaVectorIndex(
            name, embedding_model="m", dimension=DIM, host="127.0.0.1", port=chroma_server
        )
    assert "connecting to chroma server" in caplog.text
    vecs = vectors(5)
    index.add(list("abcde"), vecs, metadatas=[{"i": i} for i in range(5)])
    assert index.query(vecs[2], k=1)[0][0] == "c"
    assert [i for i, _ in index.query(vecs[2], k=5, where={"i": {"$in": [0, 4]}})] == exact(
        vecs[[0, 4]], ["a", "e"], vecs[2], 2
    )
    again = ChromaVectorIndex(
        name, embedding_model="m", dimension=DIM, host="127.0.0.1", port=chroma_server
    )
    assert len(again) == 5
    with pytest.raises(IndexMismatchError):
        ChromaVectorIndex(
            name, embedding_model="x", dimension=DIM, host="127.0.0.1", port=chroma_server
        )


def test_chroma_hnsw_settings(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    name = _unique()
    index = ChromaVectorIndex(
        name,
        embedding_model="m",
        dimension=DIM,
        path=tmp_path,
        hnsw={"ef_search": 300, "max_neighbors": 24},
    )
    hnsw = index.collection.configuration_json["hnsw"]
    assert (hnsw["space"], hnsw["ef_search"], hnsw["max_neighbors"]) == ("cosine", 300, 24)
    index.add(["a", "b"], vectors(2))
    with caplog.at_level(logging.INFO, logger="graphrag_integrations.core.vector_store.chroma"):
        again = ChromaVectorIndex(
            name,
            embedding_model="m",
            dimension=DIM,
            path=tmp_path,
            hnsw={"ef_search": 50, "max_neighbors": 8},
        )
    assert again.collection.configuration_json["hnsw"]["ef_search"] == 50
    assert "updating HNSW settings" in caplog.text
    assert "cannot be changed after creation" in caplog.text
    assert again.collection.configuration_json["hnsw"]["max_neighbors"] == 24
    assert again.query(vectors(2)[0], k=1)[0][0] == "a"
    with pytest.raises(ValueError, match="always uses cosine"):
        ChromaVectorIndex(_unique(), embedding_model="m", dimension=DIM, hnsw={"space": "l2"})


class _LockedCollection:
    """Wraps a chroma collection; its first ``locked`` calls fail as SQLite's lock does."""

    def __init__(self, inner: Any, locked: int) -> None:
        self.inner = inner
        self.locked = locked
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name not in {"add", "delete", "modify", "count"}:
            return attr

        def write(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            if self.locked:
                self.locked -= 1
                raise RuntimeError("Database error: (code: 5) database is locked")
            return attr(*args, **kwargs)

        return write


def test_chroma_retries_while_database_is_locked(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)  # tenacity sleeps with time.sleep
    index = ChromaVectorIndex(_unique(), embedding_model="m", dimension=DIM)
    locked = _LockedCollection(index.collection, locked=3)
    index._collection = locked
    index.add(["a", "b"], vectors(2))
    assert locked.calls == ["add"] * 4
    assert waits == [0.05, 0.1, 0.2]
    assert len(index) == 2
    locked.locked = 2
    index.delete(["a"])
    assert len(index) == 1 and locked.locked == 0
    locked.locked = 2  # a count (run by every query) retries too
    assert len(index) == 1 and locked.calls[-3:] == ["count"] * 3


def test_chroma_lock_that_persists_or_other_errors_are_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)  # tenacity sleeps with time.sleep
    index = ChromaVectorIndex(_unique(), embedding_model="m", dimension=DIM)
    index._collection = _LockedCollection(index.collection, locked=100)
    with pytest.raises(RuntimeError, match="database is locked"):
        index.delete(["a"])
    assert len(waits) == chroma._BUSY_RETRIES - 1
    waits.clear()

    def broken(**_: Any) -> None:
        raise RuntimeError("disk I/O error")

    with pytest.raises(RuntimeError, match="disk I/O"):
        chroma._retry_busy(broken)
    assert waits == []
