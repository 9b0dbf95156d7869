"""Q-Iter (Clue's retriever, the README's main flow) under a metadata filter: the search
itself runs on the matching chunks (methods.clue.scope), in both views."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from graphrag_integrations.errors import InvalidArgumentError
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.compliance import QUERIES, filter_documents
from graphrag_integrations.testing.compliance.boundary import (
    TENANT_DOCUMENTS,
    TENANT_FILTER,
    TENANT_QUERIES,
    tenant_documents,
)
from tests.conftest import FakeEmbedder


@pytest.fixture(scope="module")
def index() -> ClueIndex:
    return ClueIndex.from_documents(filter_documents(), embedding=FakeEmbedder())


@pytest.fixture(scope="module")
def tenants() -> ClueIndex:
    """Two tenants whose documents share a person, a company and a city (offline models)."""
    return ClueIndex.from_documents(tenant_documents())


def _tenant_a_text() -> str:
    texts = [f"Memo {d}: {text}" for d, owner, text in TENANT_DOCUMENTS if owner == "A"]
    return " ".join(texts).lower()


def _search(hits: Any) -> list[tuple[str, float, list[list[str]], list[str]]]:
    return [
        (
            h.id,
            round(h.score, 5),
            [p["units"] for p in h.explanation["paths"]],
            h.explanation["anchors"],
        )
        for h in hits
    ]


def test_a_filtered_search_walks_only_the_matching_chunks(tenants: ClueIndex) -> None:
    allowed = _tenant_a_text()
    unfiltered_anchors: set[str] = set()
    for query in TENANT_QUERIES:
        unfiltered = tenants.retrieve(query, k=6)
        unfiltered_anchors |= {a for h in unfiltered for a in h.explanation["anchors"]}
        hits = tenants.retrieve(query, k=4, filter=TENANT_FILTER)
        assert hits and all(h.passage.metadata["tenant"] == "A" for h in hits), query
        for hit in hits:
            for path in hit.explanation["paths"]:
                assert all(unit.lower() in allowed for unit in path["units"]), path
                assert all(entity in allowed for entity in path["entities"]), path
            assert all(anchor in allowed for anchor in hit.explanation["anchors"]), query
    # the same probes without the filter anchor on the other tenant's entities
    assert {a for a in unfiltered_anchors if a not in allowed}


def test_the_neighbourhood_view_answers_a_filter_as_the_flat_view(tenants: ClueIndex) -> None:
    flat = tenants.as_retriever(k=4, graph_view="flat")
    reads = tenants.as_retriever(k=4, graph_view="neighbourhood")
    for query in TENANT_QUERIES:
        for where in (TENANT_FILTER, {"doc_id": {"$in": ["a1", "b2"]}}):
            expected = _search(flat.retrieve(query, filter=where))
            assert _search(reads.retrieve(query, filter=where)) == expected, (query, where)


def test_a_filter_matching_nothing_or_a_chunk_without_links(tenants: ClueIndex) -> None:
    assert tenants.retrieve(TENANT_QUERIES[0], k=3, filter={"tenant": "C"}) == []
    # one chunk: the top-up returns it even when the walk reaches nothing else
    hits = tenants.retrieve(TENANT_QUERIES[1], k=3, filter={"doc_id": "a2"})
    assert [h.doc_id for h in hits] == ["a2"]


def test_a_bound_filter_is_anded_with_the_calls(tenants: ClueIndex) -> None:
    bound = tenants.as_retriever(k=4, filter=TENANT_FILTER)
    query = TENANT_QUERIES[0]
    assert {h.passage.metadata["tenant"] for h in bound.retrieve(query, filter={})} == {"A"}
    assert [h.doc_id for h in bound.retrieve(query, filter={"doc_id": "a2"})] == ["a2"]
    assert bound.retrieve(query, filter={"doc_id": "b1"}) == []  # narrowed to nothing
    narrower = bound.as_retriever(filter={"doc_id": {"$ne": "a1"}})
    assert {h.doc_id for h in narrower.retrieve(query)} <= {"a2", "a3"}
    hits = asyncio.run(narrower.aretrieve(query, filter=None))
    assert hits and {h.doc_id for h in hits} <= {"a2", "a3"}


def test_qiter_filters_through_the_framework_retrievers(index: ClueIndex) -> None:
    qiter = index.as_retriever(k=3)
    docs = qiter.as_langchain_retriever(k=2).invoke(QUERIES[1].query, filter={"group": "even"})
    assert docs and docs[0].metadata["doc_id"] == QUERIES[1].doc_id
    assert all(d.metadata["group"] == "even" for d in docs)
    with pytest.raises(InvalidArgumentError, match="unknown filter operator"):
        qiter.retrieve(QUERIES[1].query, filter={"n": {"$near": 1}})
