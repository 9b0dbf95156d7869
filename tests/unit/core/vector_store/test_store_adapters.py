"""The store adapters without a server: LangChain's ``InMemoryVectorStore`` and LlamaIndex's
``SimpleVectorStore`` run the behavioural cases of :mod:`.vector_index_cases` (with this
module's ``backend`` fixture); then the parts every store shares (score conversions,
filter translation, the pass-through embeddings, one-line errors). The real servers (Chroma,
FalkorDB) are in ``tests/integration/test_store_vectors.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.retrieval.filters import parse_filter
from graphrag_integrations.core.vector_store import (
    LangChainVectorIndex,
    LangChainVectors,
    LlamaIndexVectors,
    PrecomputedEmbeddings,
)
from graphrag_integrations.core.vector_store.external import SCORE_CONVERSIONS, to_cosine
from graphrag_integrations.core.vector_store.llamaindex_vectors import to_metadata_filters
from graphrag_integrations.core.vector_store.validation import Records
from tests.unit.core.vector_store.vector_index_cases import DIM, VectorIndexCases


class AdapterBackend:
    """``make`` of the suite's ``Backend`` on a store held in this process."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def make(self, dimension: int = DIM, model: str = "toy-model") -> Any:
        if self.kind == "langchain-memory":
            from langchain_core.vectorstores import InMemoryVectorStore

            return LangChainVectors(lambda layer, emb: InMemoryVectorStore(emb))(
                "units", dimension, model
            )
        from llama_index.core.vector_stores import SimpleVectorStore

        index = LlamaIndexVectors(lambda layer: SimpleVectorStore())("units", dimension, model)
        documents: dict[str, str | None] = {}
        write = index._write

        def remember(records: Records) -> None:
            documents.update(zip(records.ids, records.documents, strict=True))  # no text kept
            write(records)

        index._write = remember  # type: ignore[assignment,method-assign]
        index.get_document = documents.get  # type: ignore[assignment,method-assign]
        return index


@pytest.fixture(params=["langchain-memory", "llamaindex-simple"])
def backend(request: pytest.FixtureRequest) -> AdapterBackend:
    return AdapterBackend(request.param)


class TestAdapterBackends(VectorIndexCases):
    """LangChain's ``InMemoryVectorStore`` and LlamaIndex's ``SimpleVectorStore``."""


@pytest.mark.parametrize("cosine", [0.6, -0.2, 1.0])
def test_every_score_conversion_inverts_its_distance(cosine: float) -> None:
    raw = {
        "cosine": cosine,
        "cosine_distance": 1 - cosine,
        "squared_l2": 2 - 2 * cosine,
        "l2": math.sqrt(2 - 2 * cosine),
        "exp_neg_cosine_distance": math.exp(-(1 - cosine)),
        "exp_neg_squared_l2": math.exp(-(2 - 2 * cosine)),
    }
    assert set(raw) == set(SCORE_CONVERSIONS)
    for conversion, value in raw.items():
        assert to_cosine(conversion)(value) == pytest.approx(cosine, abs=1e-9), conversion
    with pytest.raises(ValueError, match="unknown score conversion 'dot'"):
        to_cosine("dot")


def test_metadata_filters_translate_only_what_keeps_the_semantics() -> None:
    where = parse_filter({"$or": [{"lang": "en"}, {"year": {"$in": [1, 2]}}]})
    assert where is not None
    filters = to_metadata_filters(where)
    assert filters.condition.value == "or"
    assert [(f.key, f.operator.value, f.value) for f in filters.filters] == [
        ("lang", "==", "en"),
        ("year", "in", [1, 2]),
    ]
    untranslated_filters: list[dict[str, Any]] = [
        {"a": {"$ne": 1}},
        {"a": True},
        {"a": {"$gt": "m"}},
        {"a": {"$nin": [1]}},
    ]
    for untranslated in untranslated_filters:
        parsed = parse_filter(untranslated)
        assert parsed is not None
        assert to_metadata_filters(parsed) is None, untranslated


def test_precomputed_embeddings_hand_back_the_vectors_of_the_add_only() -> None:
    from langchain_core.embeddings import Embeddings

    emb = PrecomputedEmbeddings(2)
    assert isinstance(emb, Embeddings)
    with emb.providing(np.eye(2, dtype=np.float32)):
        assert emb.embed_documents(["x", "y"]) == [[1.0, 0.0], [0.0, 1.0]]
        with pytest.raises(RuntimeError, match="asked for 3 vectors"):
            emb.embed_documents(["x", "y", "z"])
    with pytest.raises(RuntimeError, match="query the store by vector"):
        emb.embed_query("text")


def test_a_store_without_its_precomputed_embeddings_is_refused() -> None:
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(PrecomputedEmbeddings(2))
    with pytest.raises(ValueError, match="does not use the PrecomputedEmbeddings given"):
        LangChainVectorIndex(
            store, dimension=2, model_name="toy", embeddings=PrecomputedEmbeddings(2)
        )


def test_a_store_that_cannot_return_vectors_says_so() -> None:
    from langchain_core.vectorstores import InMemoryVectorStore

    class Opaque(InMemoryVectorStore):  # an unknown store: no vector reader
        pass

    emb = PrecomputedEmbeddings(2)
    index = LangChainVectorIndex(
        Opaque(emb), dimension=2, model_name="toy", embeddings=emb, score="cosine"
    )
    index.add(["a"], [[1.0, 0.0]])
    assert index.query([1.0, 0.0], k=1)[0][0] == "a"
    with pytest.raises(TypeError, match=r"Opaque cannot return stored vectors.*read_vectors="):
        index.get_embeddings(["a"])


def test_llamaindex_doc_id_metadata_survives_and_filters_exactly() -> None:
    from llama_index.core.vector_stores import SimpleVectorStore

    index = LlamaIndexVectors(lambda layer: SimpleVectorStore())("units", 2, "toy")
    index.add(["a", "b"], [[1.0, 0.0], [0.8, 0.6]], metadatas=[{"doc_id": "d1"}, {"doc_id": "d2"}])
    assert index.get_metadata("b") == {"doc_id": "d2"}  # LlamaIndex overwrites a plain doc_id
    doc_filter = parse_filter({"doc_id": "d2"})
    assert doc_filter is not None
    assert to_metadata_filters(doc_filter).filters[0].key == "gi_doc_id"
    assert [i for i, _ in index.query([1.0, 0.0], k=2, where={"doc_id": "d2"})] == ["b"]


def test_a_store_refusing_unknown_ids_on_delete_still_takes_replacing_adds() -> None:
    from langchain_core.vectorstores import InMemoryVectorStore

    class Strict(InMemoryVectorStore):  # FAISS's contract: delete of an unknown id raises
        def delete(self, ids: Any = None, **kwargs: Any) -> None:
            missing = [i for i in ids or [] if i not in self.store]
            if missing:
                raise ValueError(f"Some specified ids do not exist in the current store: {missing}")
            super().delete(ids)

    emb = PrecomputedEmbeddings(2)
    index = LangChainVectorIndex(
        Strict(emb), dimension=2, model_name="toy", embeddings=emb, score="cosine"
    )
    index.add(["a"], [[1.0, 0.0]])
    index.add(["a", "b"], [[0.0, 1.0], [1.0, 0.0]])  # "a" replaced, "b" new
    assert len(index) == 2
    assert index.query([0.0, 1.0], k=1)[0][0] == "a"
