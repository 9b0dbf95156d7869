"""Metadata filters through the framework surface: tools, search_kwargs, bad arguments."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

from graphrag_integrations.adapters.langchain import LangChainRetriever
from graphrag_integrations.adapters.llama_index import LlamaIndexRetriever
from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.errors import InvalidArgumentError

RECORDS = [
    {"text": "Paris is the capital of France.", "id": "paris", "country": "FR", "year": 1800},
    {"text": "Lyon is a city of France.", "id": "lyon", "country": "FR", "year": 1900},
    {"text": "Rome is the capital of Italy.", "id": "rome", "country": "IT", "year": 1870},
]


@pytest.fixture
def index() -> BM25Retriever:
    return BM25Retriever.from_documents(RECORDS)


def test_tools_carry_the_filter(index: BM25Retriever) -> None:
    lc_tool = index.as_langchain_tool(k=3, filter={"country": "IT"})
    assert lc_tool.invoke({"query": "capital of France"}) == "Rome is the capital of Italy."
    only_it = MetadataFilters(filters=[MetadataFilter(key="country", value="IT")])
    li_tool = index.as_llama_index_tool(similarity_top_k=3, filters=only_it)
    assert li_tool.call(input="capital of France").raw_output[0].node.node_id == (
        index.retrieve("Rome", k=1)[0].id
    )


def test_search_kwargs(index: BM25Retriever) -> None:
    retriever = index.as_langchain_retriever(search_kwargs={"k": 1, "filter": {"year": 1900}})
    assert [d.metadata["doc_id"] for d in retriever.invoke("capital of France")] == ["lyon"]
    with pytest.raises(InvalidArgumentError, match="only 'k' and 'filter'"):
        index.as_langchain_retriever(search_kwargs={"score_threshold": 0.5})
    with pytest.raises(InvalidArgumentError, match="either directly or in search_kwargs"):
        index.as_langchain_retriever(k=2, search_kwargs={"k": 1})


def test_a_bad_construction_filter_is_refused_at_once(index: BM25Retriever) -> None:
    with pytest.raises(ValueError, match=r"\$regex"):
        index.as_langchain_retriever(filter={"country": {"$regex": "F"}})
    with pytest.raises(ValueError, match="non-empty list"):
        LlamaIndexRetriever(index, filters={"country": {"$in": []}})


def test_a_retriever_without_filter_support_is_named() -> None:
    class Plain:
        def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
            return []

        async def aretrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
            return []

    retriever = LangChainRetriever(retriever=Plain(), k=1)
    assert retriever.invoke("q") == []
    with pytest.raises(InvalidArgumentError, match="Plain does not support metadata filters"):
        retriever.invoke("q", filter={"a": 1})


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"country": "FR"}, ["paris", "lyon"]),
        ({"year": {"$gt": 1850}}, ["rome", "lyon"]),
        ({"$or": [{"year": 1800}, {"country": "IT"}]}, ["paris", "rome"]),
    ],
)
def test_langchain_and_llama_index_agree(
    index: BM25Retriever, where: dict[str, Any], expected: list[str]
) -> None:
    query = "capital of France and Italy"
    lc = [
        d.metadata["doc_id"] for d in index.as_langchain_retriever(k=3).invoke(query, filter=where)
    ]
    li = [n.node.ref_doc_id for n in LlamaIndexRetriever(index, 3, filters=where).retrieve(query)]
    assert sorted(lc) == sorted(expected)
    assert li == lc
