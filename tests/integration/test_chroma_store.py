"""Chroma as a real store: a persisted index re-homed into an embedded persistent Chroma and
into a real ``chroma run`` server over HTTP (``chromadb.HttpClient``; fixture in conftest.py).

Deterministic collection names per index (reloads reuse them), a prefix holding another index
refused, removal of exactly the index's collections, and mutations that reach the store.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.index.store_files import stored_index_id
from graphrag_integrations.core.vector_store.chroma import _make_client
from graphrag_integrations.core.vector_store.chroma_collections import (
    ChromaVectors,
    drop_index_collections,
    index_collections,
)
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.chroma_server import ChromaServer
from tests.conftest import FakeEmbedder
from tests.unit.clue_fixtures import CORPUS, documents
from tests.unit.methods.clue.test_clue_index import answers

LAYERS = ("chunks", "units", "entities")
Factory = Callable[..., ChromaVectors]


@pytest.fixture(
    params=["persistent", pytest.param("server", marks=pytest.mark.chroma_server)],
    scope="module",
)
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``(make_factory, fresh_client)`` of one Chroma: embedded persistent or the server."""
    if request.param == "server":
        server: ChromaServer = request.getfixturevalue("chroma_server")

        def make(**kwargs: Any) -> ChromaVectors:
            return ChromaVectors(host=server.host, port=server.port, **kwargs)

        def client() -> Any:  # a new connection: what another process would see
            return _make_client(None, server.host, server.port, False, None)

        return make, client
    path = tmp_path_factory.mktemp("chroma-persistent")

    def make_local(**kwargs: Any) -> ChromaVectors:
        return ChromaVectors(path, **kwargs)

    return make_local, lambda: _make_client(path, None, 8000, False, None)


@pytest.fixture(scope="module")
def persisted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two persisted Clue indexes (A: the corpus, B: without its last document) and their
    in-memory answers."""
    root = tmp_path_factory.mktemp("indexes")
    built = {
        "A": ClueIndex.from_documents(documents(CORPUS), embedding=FakeEmbedder()),
        "B": ClueIndex.from_documents(documents(CORPUS[:-1]), embedding=FakeEmbedder()),
    }
    out: dict[str, Any] = {}
    for name, index in built.items():
        index.persist(root / name)
        out[name] = root / name
        out[name + "_answers"] = answers(index)
    return out


def _load(path: Path, factory: ChromaVectors) -> ClueIndex:
    return ClueIndex.load(path, embedding=FakeEmbedder(), vector_index=factory)


def _ids(index: ClueIndex) -> dict[str, Any]:
    """Chroma's own id of each layer's collection (a new one whenever it is remade)."""
    return {layer: index.vector_indexes[layer].collection.id for layer in LAYERS}


def test_reloads_reuse_the_same_collections(backend: Any, persisted: dict[str, Any]) -> None:
    make, client = backend
    first = _load(persisted["A"], make())
    index_id = stored_index_id(persisted["A"])
    names_before = {c.name for c in client().list_collections()}
    second = _load(persisted["A"], make())
    assert {c.name for c in client().list_collections()} == names_before  # nothing new
    assert _ids(second) == _ids(first)  # reused, not remade or refilled
    mine = index_collections(client(), index_id)
    assert [c.name for c in mine] == sorted(f"gi-{index_id[:16]}-{layer}" for layer in LAYERS)
    assert {c.layer: c.count for c in mine} == {
        layer: len(first.vector_indexes[layer]) for layer in LAYERS
    }
    assert all(c.method == "clue" and c.content_checksum for c in mine)
    assert answers(second) == answers(first) == persisted["A_answers"]


def test_a_prefix_holding_another_index_is_refused(backend: Any, persisted: dict[str, Any]) -> None:
    make, client = backend
    prefix = f"p{uuid.uuid4().hex[:8]}"
    a = _load(persisted["A"], make(prefix=prefix))
    with pytest.raises(IndexMismatchError, match=rf"'{prefix}-chunks'.*another collection prefix"):
        _load(persisted["B"], make(prefix=prefix))
    assert answers(a) == persisted["A_answers"]  # A's collections untouched
    b = _load(persisted["B"], make(prefix=prefix, overwrite=True))
    assert answers(b) == persisted["B_answers"]
    owners = {c.index_id for c in index_collections(client()) if c.name.startswith(prefix)}
    assert owners == {stored_index_id(persisted["B"])}


def test_drop_removes_exactly_the_index_collections(
    backend: Any, persisted: dict[str, Any]
) -> None:
    make, client = backend
    a = _load(persisted["A"], make(prefix=f"a{uuid.uuid4().hex[:8]}"))
    b = _load(persisted["B"], make(prefix=f"b{uuid.uuid4().hex[:8]}"))
    foreign = f"foreign-{uuid.uuid4().hex[:8]}"
    client().create_collection(foreign, embedding_function=None)
    a_names = sorted(a.vector_indexes[layer].collection_name for layer in LAYERS)
    before = {c.name for c in client().list_collections()}

    assert sorted(a.drop_vector_store()) == a_names
    assert {c.name for c in client().list_collections()} == before - set(a_names)
    assert a.vector_indexes == {}  # its layers are gone with them

    b_id = stored_index_id(persisted["B"])
    b_names = {b.vector_indexes[layer].collection_name for layer in LAYERS}
    of_b = [c.name for c in index_collections(client(), b_id)]  # B may be under other prefixes
    assert b_names <= set(of_b)
    assert drop_index_collections(client(), b_id) == of_b
    left = {c.name for c in client().list_collections()}
    assert left == before - set(a_names) - set(of_b) and foreign in left
    client().delete_collection(foreign)


def test_insert_and_delete_reach_the_store(backend: Any, persisted: dict[str, Any]) -> None:
    make, client = backend
    prefix = f"m{uuid.uuid4().hex[:8]}"
    index = _load(persisted["B"], make(prefix=prefix))

    def chunk_ids() -> set[str]:  # read through another client, as another process would
        return set(client().get_collection(f"{prefix}-chunks").get(include=[])["ids"])

    before = chunk_ids()
    last_id = CORPUS[-1][0]
    index.insert(documents(CORPUS[-1:]))
    added = chunk_ids() - before
    assert len(added) == 1 and chunk_ids() >= before
    assert answers(index) == persisted["A_answers"]
    # the stored checksum no longer vouches for B's files: the next load of B refills
    assert not index.vector_indexes["chunks"].content_checksum
    reloaded = _load(persisted["B"], make(prefix=prefix))
    assert chunk_ids() == before
    assert answers(reloaded) == persisted["B_answers"]
    reloaded.insert(documents(CORPUS[-1:]))
    assert chunk_ids() == before | added
    assert reloaded.delete(last_id)
    assert chunk_ids() == before
    reloaded.drop_vector_store()


def test_persist_stamps_the_collections_so_a_load_reuses_them(
    backend: Any, persisted: dict[str, Any], tmp_path: Path
) -> None:
    make, _ = backend
    index = _load(persisted["B"], make())
    index.insert(documents(CORPUS[-1:]))
    index.persist(tmp_path / "grown")
    assert stored_index_id(tmp_path / "grown") == stored_index_id(persisted["B"])
    again = _load(tmp_path / "grown", make())
    assert _ids(again) == _ids(index)  # the persisted content is what they hold: reused
    assert answers(again) == persisted["A_answers"]
    index.drop_vector_store()
