"""Vector indexes: one behavioural suite run on both backends, plus backend specifics."""

from __future__ import annotations

import itertools
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.persistence import MANIFEST_NAME
from graphrag_integrations.core.retrieval.filters import AllOf, Comparison, parse_filter
from graphrag_integrations.core.vector_store import (
    ChromaVectorIndex,
    InMemoryVectorIndex,
    VectorIndex,
    chroma,
    parse_where,
)
from graphrag_integrations.errors import CorruptIndexError, IndexMismatchError, IndexNotFoundError

DIM = 8
_names = itertools.count()


def _unique(prefix: str = "col") -> str:
    # in-process Chroma clients share state: give every test its own collection
    return f"{prefix}-{os.getpid()}-{next(_names)}"


def _vectors(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, dim)).astype(np.float32)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


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


def _exact(vectors: np.ndarray, ids: list[str], q: np.ndarray, k: int) -> list[str]:
    scores = _unit(vectors) @ _unit(q)
    order = sorted(range(len(ids)), key=lambda i: -scores[i])
    return [ids[i] for i in order[:k]]


# -- shared behaviour ----------------------------------------------------------------------
def test_satisfies_protocol(backend: Backend) -> None:
    index = backend.make()
    assert isinstance(index, VectorIndex)
    assert index.dimension == DIM
    assert index.model_name == "toy-model"
    assert len(index) == 0
    assert index.query(_vectors(1)[0], k=3) == []


def test_add_and_query_exact_cosine(backend: Backend) -> None:
    index = backend.make()
    vecs = _vectors(30)
    ids = [f"id{i}" for i in range(30)]
    index.add(ids, vecs)
    assert len(index) == 30
    q = _vectors(1, seed=7)[0]
    hits = index.query(q, k=5)
    assert [h[0] for h in hits] == _exact(vecs, ids, q, 5)
    expected = _unit(vecs) @ _unit(q)
    for id_, score in hits:
        assert score == pytest.approx(float(expected[ids.index(id_)]), abs=1e-5)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    # a stored vector is its own best match with similarity 1
    top_id, top_score = index.query(vecs[3] * 5.0, k=1)[0]
    assert top_id == "id3"
    assert top_score == pytest.approx(1.0, abs=1e-5)


def test_k_larger_than_index_and_zero(backend: Backend) -> None:
    index = backend.make()
    index.add(["a", "b"], _vectors(2))
    assert len(index.query(_vectors(1, 3)[0], k=10)) == 2
    assert index.query(_vectors(1, 3)[0], k=0) == []


def test_get_embeddings_in_given_order(backend: Backend) -> None:
    index = backend.make()
    vecs = _vectors(5)
    ids = list("abcde")
    index.add(ids, vecs)
    got = index.get_embeddings(["d", "a", "d"])
    assert got.dtype == np.float32
    assert got.shape == (3, DIM)
    np.testing.assert_allclose(got, _unit(vecs[[3, 0, 3]]), atol=1e-6)
    assert index.get_embeddings([]).shape == (0, DIM)
    with pytest.raises(KeyError, match="zz"):
        index.get_embeddings(["a", "zz"])


def test_add_replaces_existing_id(backend: Backend) -> None:
    index = backend.make()
    vecs = _vectors(3)
    index.add(
        ["a", "b", "c"], vecs, metadatas=[{"g": 1}, {"g": 1}, {"g": 2}], documents=["A", "B", "C"]
    )
    new = _vectors(1, seed=99)
    index.add(["b"], new)
    assert len(index) == 3
    np.testing.assert_allclose(index.get_embeddings(["b"]), _unit(new), atol=1e-6)
    # the whole record is replaced: no stale metadata or document
    assert index.get_metadata("b") == {}
    assert index.get_document("b") is None
    assert index.get_document("a") == "A"
    assert [i for i, _ in index.query(new[0], k=3, where={"g": 1})] == ["a"]


def test_delete(backend: Backend) -> None:
    index = backend.make()
    vecs = _vectors(6)
    ids = [f"p{i}" for i in range(6)]
    index.add(ids, vecs)
    index.delete(["p1", "p4", "not-there"])
    assert len(index) == 4
    got = {i for i, _ in index.query(vecs[1], k=10)}
    assert got == {"p0", "p2", "p3", "p5"}
    with pytest.raises(KeyError):
        index.get_embeddings(["p1"])
    # survivors keep their vectors after the compaction
    np.testing.assert_allclose(index.get_embeddings(["p5", "p0"]), _unit(vecs[[5, 0]]), atol=1e-6)
    # re-adding a deleted id works
    index.add(["p1"], vecs[1:2])
    assert index.query(vecs[1], k=1)[0][0] == "p1"
    index.delete([])
    assert len(index) == 5


def test_where_filters(backend: Backend) -> None:
    index = backend.make()
    vecs = _vectors(12)
    ids = [f"x{i}" for i in range(12)]
    metas: list[dict[str, Any] | None] = [
        {"lang": "en" if i % 2 else "fr", "year": 2000 + i % 3, "flag": i < 6} for i in range(11)
    ]
    metas.append(None)  # a record without metadata never matches a filter
    index.add(ids, vecs, metadatas=metas)
    q = _vectors(1, seed=5)[0]

    def ids_for(where: dict[str, Any]) -> set[str]:
        return {i for i, _ in index.query(q, k=20, where=where)}

    assert ids_for({"lang": "en"}) == {f"x{i}" for i in range(11) if i % 2}
    assert ids_for({"lang": {"$eq": "fr"}}) == {f"x{i}" for i in range(11) if i % 2 == 0}
    assert ids_for({"year": {"$in": [2000, 2002]}}) == {
        f"x{i}" for i in range(11) if i % 3 in (0, 2)
    }
    assert ids_for({"lang": "en", "year": 2001}) == {
        f"x{i}" for i in range(11) if i % 2 and i % 3 == 1
    }
    assert ids_for({"flag": True}) == {f"x{i}" for i in range(6)}
    assert ids_for({"lang": "de"}) == set()
    # filtered results are still the exact best among the matching records
    en = [f"x{i}" for i in range(11) if i % 2]
    hits = index.query(q, k=2, where={"lang": "en"})
    assert [h[0] for h in hits] == _exact(vecs[[int(i[1:]) for i in en]], en, q, 2)


RICH_FILTERS: list[dict[str, Any]] = [
    {"year": {"$gt": 2000}},
    {"year": {"$gte": 2001, "$lt": 2002}},
    {"lang": {"$ne": "en"}},  # records without "lang" do not match (Chroma's $ne would)
    {"lang": {"$nin": ["fr"]}},
    {"$or": [{"lang": "en"}, {"flag": True}]},
    {"$and": [{"year": {"$lte": 2001}}, {"$or": [{"lang": "fr"}, {"year": 2000}]}]},
    {"title": {"$gt": "m"}},  # string order: Chroma cannot, evaluated client-side
    {"title": {"$contains": "ee"}},
    {"year": {"$in": [2000, 2002.0]}},  # mixed types: client-side on Chroma
    {"nothing": 1},
]


@pytest.mark.parametrize("where", RICH_FILTERS, ids=[json.dumps(w) for w in RICH_FILTERS])
def test_rich_filters_equal_the_brute_force_top_k(backend: Backend, where: dict[str, Any]) -> None:
    index = backend.make()
    vecs = _vectors(14)
    ids = [f"w{i}" for i in range(14)]
    metas: list[dict[str, Any] | None] = [
        {"year": 2000 + i % 3, "flag": i % 4 == 0, "title": ["apple", "melon", "peer"][i % 3]}
        | ({"lang": "en" if i % 2 else "fr"} if i < 10 else {})
        for i in range(13)
    ]
    metas.append(None)
    index.add(ids, vecs, metadatas=metas)
    q = _vectors(1, seed=9)[0]
    flt = parse_filter(where)
    assert flt is not None
    keep = [i for i, m in enumerate(metas) if flt.matches(m or {})]
    expected = _exact(vecs[keep], [ids[i] for i in keep], q, 4) if keep else []
    assert [i for i, _ in index.query(q, k=4, where=where)] == expected


def test_reload(backend: Backend) -> None:
    index = backend.make()
    vecs = _vectors(10)
    ids = [f"r{i}" for i in range(10)]
    index.add(ids, vecs, metadatas=[{"even": i % 2 == 0} for i in range(10)], documents=ids)
    index.delete(["r0"])
    q = _vectors(1, seed=11)[0]
    before = index.query(q, k=4, where={"even": True})
    reopened = backend.reopen(index)
    assert len(reopened) == 9
    after = reopened.query(q, k=4, where={"even": True})
    assert [i for i, _ in after] == [i for i, _ in before]
    assert [s for _, s in after] == pytest.approx([s for _, s in before], abs=1e-6)
    np.testing.assert_allclose(reopened.get_embeddings(["r3"]), _unit(vecs[[3]]), atol=1e-6)
    assert reopened.get_document("r3") == "r3"
    assert reopened.get_metadata("r2") == {"even": True}


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda ix: ix.add(["a"], np.ones((1, DIM + 1))), ValueError, "dimension mismatch"),
        (lambda ix: ix.add(["a", "b"], np.ones((1, DIM))), ValueError, "expected 2 vectors"),
        (lambda ix: ix.add(["a", "a"], np.ones((2, DIM))), ValueError, "duplicate ids"),
        (lambda ix: ix.add([""], np.ones((1, DIM))), ValueError, "non-empty string"),
        (lambda ix: ix.add("ab", np.ones((2, DIM))), TypeError, "single string"),
        (lambda ix: ix.add(["a"], np.zeros((1, DIM))), ValueError, "zero vectors"),
        (lambda ix: ix.add(["a"], np.full((1, DIM), np.nan)), ValueError, "NaN"),
        (
            lambda ix: ix.add(["a"], np.ones((1, DIM)), metadatas=[{"x": [1]}]),
            ValueError,
            "metadata value 'x'",
        ),
        (
            lambda ix: ix.add(["a"], np.ones((1, DIM)), metadatas=[{}, {}]),
            ValueError,
            "expected 1 metadatas",
        ),
        (
            lambda ix: ix.add(["a"], np.ones((1, DIM)), documents=[3]),
            ValueError,
            "documents must be strings",
        ),
        (lambda ix: ix.query(np.ones(DIM + 2), k=1), ValueError, "dimension mismatch"),
        (lambda ix: ix.query(np.ones((2, DIM)), k=1), ValueError, "one vector"),
        (lambda ix: ix.query(np.ones(DIM), k=-1), ValueError, "k must be >= 0"),
        (lambda ix: ix.query(np.ones(DIM), k=1.5), TypeError, "k must be an integer"),
        (lambda ix: ix.query(np.ones(DIM), k=1, where={"a": {"$gt": [1]}}), ValueError, r"\(gt\)"),
        (lambda ix: ix.query(np.ones(DIM), k=1, where={"a": {"$like": 1}}), ValueError, r"\$like"),
        (lambda ix: ix.query(np.ones(DIM), k=1, where={"$or": []}), ValueError, "non-empty list"),
        (lambda ix: ix.query(np.ones(DIM), k=1, where={"a": {"$in": []}}), ValueError, "non-empty"),
    ],
)
def test_bad_input(
    backend: Backend, call: Callable[[Any], object], error: type[Exception], message: str
) -> None:
    index = backend.make()
    with pytest.raises(error, match=message):
        call(index)
    assert len(index) == 0


def test_batched_add(backend: Backend) -> None:
    if backend.kind == "memory":
        index = backend.make()
    else:
        index = ChromaVectorIndex(
            backend.collection, embedding_model="toy-model", dimension=DIM, batch_size=7
        )
        assert index.batch_size == 7
    vecs = _vectors(50)
    ids = [f"b{i}" for i in range(50)]
    index.add(ids, vecs)
    assert len(index) == 50
    np.testing.assert_allclose(index.get_embeddings(ids[::-1]), _unit(vecs[::-1]), atol=1e-6)
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


def test_bool_is_not_int_in_filters(backend: Backend) -> None:
    index = backend.make()
    index.add(["t", "one"], _vectors(2), metadatas=[{"v": True}, {"v": 1}])
    q = _vectors(1, 4)[0]
    assert [i for i, _ in index.query(q, 5, where={"v": True})] == ["t"]
    assert [i for i, _ in index.query(q, 5, where={"v": 1})] == ["one"]


# -- in-memory specifics -------------------------------------------------------------------
def test_in_memory_persist_layout_and_checks(tmp_path: Path) -> None:
    index = InMemoryVectorIndex(DIM, "toy-model")
    index.add(["a"], _vectors(1))
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
    index.add(["a", "b"], _vectors(2))
    index.persist(tmp_path / "ix")
    np.save(tmp_path / "ix" / "vectors.npy", _vectors(3))
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
    loaded.add(["a"], _vectors(1))
    assert loaded.query(_vectors(1)[0], 1)[0][0] == "a"


def test_in_memory_growth_keeps_rows() -> None:
    index = InMemoryVectorIndex(DIM, "m")
    vecs = _vectors(100)
    for i in range(100):  # many small adds exercise the capacity doubling
        index.add([f"g{i}"], vecs[i : i + 1])
    np.testing.assert_allclose(index.get_embeddings(["g0", "g99"]), _unit(vecs[[0, 99]]), atol=1e-6)
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
        ["a"], _vectors(1)
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
    vecs = _vectors(5)
    index.add(list("abcde"), vecs, metadatas=[{"i": i} for i in range(5)])
    assert index.query(vecs[2], k=1)[0][0] == "c"
    assert [i for i, _ in index.query(vecs[2], k=5, where={"i": {"$in": [0, 4]}})] == _exact(
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
    index.add(["a", "b"], _vectors(2))
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
    assert again.query(_vectors(2)[0], k=1)[0][0] == "a"
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
    index.add(["a", "b"], _vectors(2))
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
