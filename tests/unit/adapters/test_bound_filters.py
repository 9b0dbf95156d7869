"""A filter bound to a retriever or a tool is an access boundary: a call's filter is ANDed
with it, so ``filter={}`` / ``None`` / ``search_kwargs`` never widen it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from graphrag_integrations.adapters.surface import BoundRetriever
from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.testing.compliance.boundary import TENANT_FILTER, tenant_documents

QUERY = "Which company does Priya Natarajan advise?"


@pytest.fixture(scope="module")
def index() -> BM25Retriever:
    return BM25Retriever.from_documents(tenant_documents())


def tenants(docs: Any) -> set[str]:
    return {d.metadata["tenant"] for d in docs}


def test_a_langchain_call_cannot_widen_the_bound_filter(index: BM25Retriever) -> None:
    bound = index.as_langchain_retriever(k=6, filter=TENANT_FILTER)
    for call in ({}, {"filter": {}}, {"filter": None}, {"search_kwargs": {"filter": {}}}):
        assert tenants(bound.invoke(QUERY, **call)) == {"A"}, call
    assert tenants(asyncio.run(bound.ainvoke(QUERY, filter={}))) == {"A"}
    assert bound.invoke(QUERY, filter={"tenant": "B"}) == []  # A and B: nothing
    narrowed = bound.invoke(QUERY, filter={"doc_id": {"$ne": "a1"}})
    assert {d.metadata["doc_id"] for d in narrowed} == {"a2", "a3"}
    everyone = index.as_langchain_retriever(k=6)
    assert tenants(everyone.invoke(QUERY)) == {"A", "B"}
    assert tenants(everyone.invoke(QUERY, filter={"tenant": "B"})) == {"B"}


def test_a_bound_retriever_ands_every_filter(index: BM25Retriever) -> None:
    bound = index.as_retriever(k=6, filter=TENANT_FILTER)
    assert isinstance(bound, BoundRetriever) and "filter=" in repr(bound)
    assert {h.passage.metadata["tenant"] for h in bound.retrieve(QUERY, filter={})} == {"A"}
    assert bound.retrieve(QUERY, filter={"doc_id": "b1"}) == []
    chained = bound.as_retriever(filter={"doc_id": {"$in": ["a1", "b1"]}})
    assert [h.doc_id for h in chained.retrieve(QUERY)] == ["a1"]
    framework = chained.as_langchain_retriever().invoke(QUERY, filter={})
    assert [d.metadata["doc_id"] for d in framework] == ["a1"]
    hits = asyncio.run(chained.aretrieve(QUERY, filter=None))
    assert [h.doc_id for h in hits] == ["a1"]


def test_tools_keep_their_bound_filter(index: BM25Retriever) -> None:
    lc_tool = index.as_langchain_tool(k=6, filter=TENANT_FILTER)
    text = lc_tool.invoke({"query": QUERY})
    assert "Natarajan is the chief engineer" in text and "secretly" not in text
    li_tool = index.as_llama_index_tool(similarity_top_k=6, filters=TENANT_FILTER)
    output = li_tool.call(QUERY)
    assert {n.node.metadata["tenant"] for n in output.raw_output} == {"A"}
    assert "secretly" not in output.content
