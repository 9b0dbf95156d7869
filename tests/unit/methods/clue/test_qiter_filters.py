"""Q-Iter (Clue's retriever, the README's main flow) takes metadata filters too."""

from __future__ import annotations

import asyncio

import pytest

from graphrag_integrations.errors import InvalidArgumentError
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.compliance import CORPUS, QUERIES, filter_documents
from tests.conftest import FakeEmbedder


@pytest.fixture(scope="module")
def index() -> ClueIndex:
    return ClueIndex.from_documents(filter_documents(), embedding=FakeEmbedder())


def test_qiter_filters_equal_filtering_its_full_ranking(index: ClueIndex) -> None:
    qiter = index.as_retriever(k=3)
    for probe in QUERIES:
        everything = qiter.retrieve(probe.query, k=len(CORPUS))
        for where, keep in (
            ({"group": "odd"}, lambda m: m["group"] == "odd"),
            ({"n": {"$lt": 3}}, lambda m: m["n"] < 3),
        ):
            expected = [h.id for h in everything if keep(h.passage.metadata)][:2]
            got = qiter.retrieve(probe.query, k=2, filter=where)
            assert [h.id for h in got] == expected
            assert [h.id for h in asyncio.run(qiter.aretrieve(probe.query, 2, filter=where))] == (
                expected
            )
    assert qiter.retrieve(QUERIES[0].query, k=2, filter={"title": "Atlantis"}) == []


def test_qiter_filters_through_the_framework_retrievers(index: ClueIndex) -> None:
    qiter = index.as_retriever(k=3)
    docs = qiter.as_langchain_retriever(k=2).invoke(QUERIES[1].query, filter={"group": "even"})
    assert docs and docs[0].metadata["doc_id"] == QUERIES[1].doc_id
    assert all(d.metadata["group"] == "even" for d in docs)
    with pytest.raises(InvalidArgumentError, match="unknown filter operator"):
        qiter.retrieve(QUERIES[1].query, filter={"n": {"$near": 1}})
