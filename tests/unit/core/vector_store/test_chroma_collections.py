"""Chroma collection lifecycle on toy stores: names, owners, content checksums, index ids."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pytest

from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.index.store_files import (
    STORE_FILE,
    content_checksum,
    stored_index_id,
)
from graphrag_integrations.core.persistence import Manifest
from graphrag_integrations.core.vector_store.chroma import (
    ChromaVectorIndex,
    CollectionOwner,
    check_collection_name,
)
from graphrag_integrations.core.vector_store.chroma_collections import (
    ChromaVectors,
    index_collections,
)
from graphrag_integrations.errors import CorruptIndexError, IndexMismatchError

LAYERS = {"entity": "entities", "chunk": "chunks"}


def toy_store(names: list[str], factory: ChromaVectors | None = None) -> IndexStore:
    store = IndexStore("toy", LAYERS, factory=factory)
    for i, name in enumerate(names):
        vector = np.zeros(3)
        vector[i % 3] = 1.0
        for kind in LAYERS:
            store.add_node(kind, name, ("doc",))
            store.add_vectors(kind, {name: vector})
    return store


def load(path: Path, factory: ChromaVectors) -> IndexStore:
    return IndexStore.load(path, model_name="toy", dimension=3, layers=LAYERS, factory=factory)


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("abc", True),
        ("gi-0123abcd-units", True),
        ("a" * 512, True),
        ("ab", False),
        ("a" * 513, False),
        ("-abc", False),
        ("abc-", False),
        ("a..b", False),
        ("my docs", False),
        ("10.0.0.1", False),
        ("a:b:c", False),
    ],
)
def test_collection_names_follow_chromas_rules(name: str, ok: bool) -> None:
    if ok:
        assert check_collection_name(name) == name
    else:
        with pytest.raises(ValueError, match="invalid chroma collection name"):
            check_collection_name(name)


def test_a_bad_prefix_fails_when_the_factory_is_made() -> None:
    with pytest.raises(ValueError, match="invalid chroma collection name"):
        ChromaVectors(prefix="my docs")


def test_an_owned_collection_refuses_another_owner_unless_overwrite(tmp_path: Path) -> None:
    name = f"own-{uuid.uuid4().hex[:8]}"
    mine = CollectionOwner("index-a", "units")
    first = ChromaVectorIndex(name, embedding_model="m", dimension=2, path=tmp_path, owner=mine)
    first.add(["x"], [[1.0, 0.0]])
    same = ChromaVectorIndex(name, embedding_model="m", dimension=2, path=tmp_path, owner=mine)
    assert len(same) == 1
    with pytest.raises(IndexMismatchError, match=rf"'{name}' holds .*index-a.*overwrite=True"):
        ChromaVectorIndex(
            name,
            embedding_model="m",
            dimension=2,
            path=tmp_path,
            owner=CollectionOwner("index-b", "units"),
        )
    with pytest.raises(IndexMismatchError, match="holds"):  # the same index, another layer
        ChromaVectorIndex(
            name,
            embedding_model="m",
            dimension=2,
            path=tmp_path,
            owner=CollectionOwner("index-a", "chunks"),
        )
    replaced = ChromaVectorIndex(
        name,
        embedding_model="m",
        dimension=2,
        path=tmp_path,
        owner=CollectionOwner("index-b", "units"),
        overwrite=True,
    )
    assert len(replaced) == 0 and replaced.owner == CollectionOwner("index-b", "units")


def test_a_collection_without_owner_is_refused_to_an_index(tmp_path: Path) -> None:
    name = f"plain-{uuid.uuid4().hex[:8]}"
    ChromaVectorIndex(name, embedding_model="m", dimension=2, path=tmp_path)
    with pytest.raises(IndexMismatchError, match="an index without an id"):
        ChromaVectorIndex(
            name, embedding_model="m", dimension=2, path=tmp_path, owner=CollectionOwner("i", "l")
        )


def test_the_content_checksum_is_cleared_by_the_first_write(tmp_path: Path) -> None:
    name = f"sum-{uuid.uuid4().hex[:8]}"
    index = ChromaVectorIndex(name, embedding_model="m", dimension=2, path=tmp_path)
    index.set_content_checksum("c1")
    reopened = ChromaVectorIndex(name, embedding_model="m", dimension=2, path=tmp_path)
    assert reopened.content_checksum == "c1"
    reopened.add(["x"], [[1.0, 0.0]])
    assert reopened.content_checksum is None
    assert (
        ChromaVectorIndex(name, embedding_model="m", dimension=2, path=tmp_path).content_checksum
        is None
    )
    index.set_content_checksum("c2")
    index.delete(["x"])
    assert (
        ChromaVectorIndex(name, embedding_model="m", dimension=2, path=tmp_path).content_checksum
        is None
    )
    index.delete([])  # no write, no change
    index.drop()


def test_the_index_id_is_kept_across_persist_and_load(tmp_path: Path) -> None:
    store = toy_store(["a", "b"])
    store.persist(tmp_path / "idx", Manifest(method="toy"))
    assert json.loads((tmp_path / "idx" / STORE_FILE).read_text()) == {"index_id": store.index_id}
    loaded = IndexStore.load(tmp_path / "idx", model_name="toy", dimension=3, layers=LAYERS)
    assert loaded.index_id == store.index_id
    assert toy_store(["a", "b"]).index_id != store.index_id  # a new build, a new index


def test_an_index_without_store_json_gets_a_stable_id_from_its_content(tmp_path: Path) -> None:
    for name, names in (("x", ["a", "b"]), ("y", ["a", "c"])):
        toy_store(names).persist(tmp_path / name)
        (tmp_path / name / STORE_FILE).unlink()
    assert stored_index_id(tmp_path / "x") == stored_index_id(tmp_path / "x")
    assert stored_index_id(tmp_path / "x") == content_checksum(tmp_path / "x")[:32]
    assert stored_index_id(tmp_path / "x") != stored_index_id(tmp_path / "y")
    (tmp_path / "x" / STORE_FILE).write_text("[1, 2]")
    with pytest.raises(CorruptIndexError, match=STORE_FILE):
        stored_index_id(tmp_path / "x")


def test_loading_twice_reuses_and_a_changed_index_refreshes(tmp_path: Path) -> None:
    factory = ChromaVectors(tmp_path / "chroma")
    store = toy_store(["a", "b"])
    store.persist(tmp_path / "idx")
    first = load(tmp_path / "idx", factory)
    ids = {layer: index.collection.id for layer, index in first.vectors.items()}  # type: ignore[attr-defined]
    second = load(tmp_path / "idx", factory)
    assert {layer: index.collection.id for layer, index in second.vectors.items()} == ids  # type: ignore[attr-defined]
    assert [c.name for c in factory.collections()] == sorted(
        f"gi-{store.index_id[:16]}-{layer}" for layer in LAYERS.values()
    )
    # the same index written again with other content: its collections are refilled
    grown = toy_store(["a", "b", "c"])
    grown.index_id = store.index_id
    grown.persist(tmp_path / "idx")
    third = load(tmp_path / "idx", factory)
    assert [c.count for c in factory.collections()] == [3, 3]
    assert sorted(k for k, _ in third.nearest("entity", np.array([0.0, 0.0, 1.0]), 1)) == ["c"]


def test_a_stale_collection_of_an_empty_layer_is_emptied_first(tmp_path: Path) -> None:
    factory = ChromaVectors(tmp_path / "chroma")
    store = IndexStore("toy", LAYERS, factory=factory)
    stale = factory.open_layer("entities", 3, "toy", index_id=store.index_id)
    stale.add(["old"], [[1.0, 0.0, 0.0]])
    store.add_node("entity", "new", ("doc",))
    store.add_vectors("entity", {"new": np.array([0.0, 1.0, 0.0])})
    assert [c.count for c in index_collections(factory.client, store.index_id)] == [1]
    assert store.nearest("entity", np.array([1.0, 0.0, 0.0]), 5) == [("new", 0.0)]


def test_drop_vector_store_of_an_in_memory_store_drops_nothing() -> None:
    store = toy_store(["a"])
    assert store.drop_vector_store() == []
    assert len(store.vectors["entities"]) == 1
