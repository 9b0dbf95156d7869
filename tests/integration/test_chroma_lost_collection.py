"""A Chroma collection lost or replaced behind an index's back is detected at the next call:
the server restarted without its data (its folder wiped), or another collection of that name
in its place. One line naming the server's URL and how to rebuild, for reads and writes;
a load of the folder persisted before refills the collections."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphrag_integrations.core.vector_store.chroma import ChromaVectorIndex, CollectionOwner
from graphrag_integrations.core.vector_store.chroma_collections import ChromaVectors
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.chroma_server import ChromaServer
from graphrag_integrations.testing.fake_embedder import FakeEmbedder
from tests.integration.town_corpus import QUESTIONS, answers, town_corpus

pytestmark = pytest.mark.chroma_server
FAST = {"timeout": 10.0, "connect_timeout": 2.0, "retries": 1}


def _vectors(server: ChromaServer) -> ChromaVectors:
    return ChromaVectors(host=server.host, port=server.port, **FAST)


def test_a_server_restarted_empty_is_a_one_line_error_then_a_load_refills_it(
    killable_chroma: ChromaServer, tmp_path: Path
) -> None:
    index = ClueIndex.from_documents(
        town_corpus(0, 20), embedding=FakeEmbedder(), vector_index=_vectors(killable_chroma)
    )
    before = answers(index, 4)
    index.persist(tmp_path / "index")
    killable_chroma.restart(empty=True)  # the server's data folder wiped
    url = f"http://127.0.0.1:{killable_chroma.port}"
    for call in (
        lambda: index.retrieve(QUESTIONS[0]),
        lambda: index.insert(town_corpus(20, 22)),
    ):
        with pytest.raises(IndexMismatchError, match="is gone") as info:
            call()
        message = str(info.value)
        assert "\n" not in message
        assert message.startswith(f"{url}: chroma collection 'gi-")
        assert "X.load(path, vector_index=ChromaVectors(...))" in message
    # the way out the message names: the folder persisted before, loaded into the server
    loaded = ClueIndex.load(
        tmp_path / "index", embedding=FakeEmbedder(), vector_index=_vectors(killable_chroma)
    )
    assert answers(loaded, 4) == before


def test_a_collection_replaced_by_another_index_is_named(killable_chroma: ChromaServer) -> None:
    def layer(index_id: str) -> ChromaVectorIndex:
        return ChromaVectorIndex(
            "shared-units",
            embedding_model="m",
            dimension=2,
            host=killable_chroma.host,
            port=killable_chroma.port,
            owner=CollectionOwner(index_id, "units"),
            overwrite=index_id == "other",
            **FAST,
        )

    mine = layer("mine")
    mine.add(["a", "b"], np.eye(2, dtype=np.float32))
    layer("other")  # another index takes the name (overwrite=True)
    with pytest.raises(IndexMismatchError, match="replaced by another collection") as info:
        mine.query(np.array([1.0, 0.0]), 1)
    assert "layer 'units' of index other" in str(info.value)


def test_a_restart_with_the_data_is_not_an_error(killable_chroma: ChromaServer) -> None:
    index = ChromaVectorIndex(
        "kept",
        embedding_model="m",
        dimension=2,
        host=killable_chroma.host,
        port=killable_chroma.port,
        **FAST,
    )
    index.add(["a", "b"], np.eye(2, dtype=np.float32))
    killable_chroma.restart()
    assert index.query(np.array([1.0, 0.0]), 1)[0][0] == "a"
