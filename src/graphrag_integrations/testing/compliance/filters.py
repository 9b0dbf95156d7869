"""Compliance cases of metadata filters (:mod:`~graphrag_integrations.core.retrieval.filters`)
over :func:`filter_documents`, through the core, LangChain and LlamaIndex."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.errors import InvalidArgumentError
from graphrag_integrations.testing.compliance.base import ComplianceBase
from graphrag_integrations.testing.compliance.corpus import (
    CORPUS,
    EXTRA,
    EXTRA_QUERY,
    QUERIES,
    Probe,
)


def filter_documents() -> list[SourceDocument]:
    """:data:`CORPUS` with the metadata the filter cases select on: ``title``, ``source``,
    ``n`` (the position, 0-8) and ``group`` (``"even"`` / ``"odd"`` position).

    Examples
    --------
    >>> filter_documents()[5].metadata
    {'title': 'Amazon River', 'source': 'compliance', 'n': 5, 'group': 'odd'}
    """
    return [
        SourceDocument(
            d.text,
            id=d.id,
            metadata={
                "title": d.title,
                "source": "compliance",
                "n": i,
                "group": "odd" if i % 2 else "even",
            },
        )
        for i, d in enumerate(CORPUS)
    ]


#: Probes of the filter cases (documents with at least two entities, so every method finds
#: them): curie (n 2, even) and amazon (n 5, odd).
FILTER_QUERIES: tuple[Probe, ...] = (QUERIES[1], QUERIES[0])
#: (LangChain dict filter, the same condition written out in Python) for the filter cases.
FILTER_CASES: tuple[tuple[dict[str, Any], Callable[[dict[str, Any]], bool]], ...] = (
    ({"group": "odd"}, lambda m: m.get("group") == "odd"),
    ({"n": {"$gte": 2, "$lt": 6}}, lambda m: 2 <= m.get("n", -1) < 6),
    ({"n": {"$ne": 5}}, lambda m: "n" in m and m["n"] != 5),
    (
        {"title": {"$in": ["Marie Curie", "Jazz"]}},
        lambda m: m.get("title") in ("Marie Curie", "Jazz"),
    ),
    ({"doc_id": {"$nin": ["curie", "amazon"]}}, lambda m: m["doc_id"] not in ("curie", "amazon")),
    (
        {"$or": [{"n": 5}, {"$and": [{"group": "even"}, {"n": {"$gt": 4}}]}]},
        lambda m: m.get("n") == 5 or (m.get("group") == "even" and m.get("n", -1) > 4),
    ),
    ({"title": "Atlantis"}, lambda m: False),
)


class FilterCases(ComplianceBase):
    """``retrieve(q, k, filter=)`` returns only matching passages (each of
    :data:`FILTER_CASES`), honours ``k``, and returns ``[]`` when nothing matches; the
    LangChain and LlamaIndex filters; inserted documents; malformed filters raise before
    any work."""

    # -- metadata filters (core.retrieval.filters) ------------------------------------------------
    @pytest.fixture
    def filter_index(self, embedder: Any) -> BaseIndex:
        """An index over :data:`CORPUS` with the metadata of :func:`filter_documents`."""
        return self._build(filter_documents(), embedder)

    def test_retrieve_with_a_filter_returns_only_matching_passages(
        self, filter_index: BaseIndex
    ) -> None:
        for where, expected in FILTER_CASES:
            matching = [d for d in filter_documents() if expected({**d.metadata, "doc_id": d.id})]
            for probe in FILTER_QUERIES:
                hits = filter_index.retrieve(probe.query, k=3, filter=where)
                for hit in hits:
                    meta = dict(hit.passage.metadata) | {"doc_id": hit.doc_id}
                    assert expected(meta), (where, probe.query, hit.doc_id, meta)
                assert len(hits) <= 3
                assert bool(hits) == bool(matching), (where, probe.query)
                if probe.doc_id in {d.id for d in matching}:
                    assert hits[0].doc_id == probe.doc_id, (where, probe.query)

    def test_a_filter_honours_k(self, filter_index: BaseIndex) -> None:
        where = {"n": {"$gte": 2}}  # seven documents
        for k in (1, 3):
            hits = filter_index.retrieve(FILTER_QUERIES[0].query, k=k, filter=where)
            assert len(hits) == k
            assert len({h.id for h in hits}) == k
            assert all(h.passage.metadata["n"] >= 2 for h in hits)

    @pytest.mark.asyncio
    async def test_a_filter_matching_nothing_returns_no_passage(
        self, filter_index: BaseIndex
    ) -> None:
        from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

        surface = self._surface(filter_index)
        query = FILTER_QUERIES[0].query
        for where in ({"title": "Atlantis"}, {"no_such_key": "x"}, {"n": {"$gt": 100}}):
            assert filter_index.retrieve(query, k=3, filter=where) == []
            assert await filter_index.aretrieve(query, k=3, filter=where) == []
            assert surface.as_langchain_retriever(k=3).invoke(query, filter=where) == []
        nothing = MetadataFilters(filters=[MetadataFilter(key="title", value="Atlantis")])
        retriever = surface.as_llama_index_retriever(similarity_top_k=3, filters=nothing)
        assert retriever.retrieve(query) == []

    @pytest.mark.asyncio
    async def test_langchain_filters(self, filter_index: BaseIndex) -> None:
        curie, amazon = FILTER_QUERIES
        surface = self._surface(filter_index)
        retriever = surface.as_langchain_retriever(k=2)
        docs = retriever.invoke(curie.query, filter={"group": "even"})
        assert docs and docs[0].metadata["doc_id"] == curie.doc_id
        assert all(d.metadata["group"] == "even" for d in docs) and len(docs) <= 2
        # a construction filter, narrowed (never widened) by a call's
        odd = surface.as_langchain_retriever(k=2, filter={"group": "odd"})
        docs = odd.invoke(amazon.query)
        assert docs and docs[0].metadata["doc_id"] == amazon.doc_id
        assert all(d.metadata["group"] == "odd" for d in docs)
        assert odd.invoke(amazon.query, filter={"n": 2}) == []  # curie (2) is even
        assert [d.metadata["doc_id"] for d in odd.invoke(amazon.query, filter={"n": 5})] == [
            amazon.doc_id
        ]
        adocs = await odd.ainvoke(amazon.query, filter={"$or": [{"n": 5}, {"n": 7}]})
        assert adocs and adocs[0].metadata["doc_id"] == amazon.doc_id
        assert {d.metadata["n"] for d in adocs} <= {5, 7}
        even = surface.as_langchain_retriever(k=2, filter={"group": "even"})
        adocs = await even.ainvoke(curie.query, filter={"$or": [{"n": 2}, {"n": 4}]})
        assert adocs and adocs[0].metadata["doc_id"] == curie.doc_id
        assert {d.metadata["n"] for d in adocs} <= {2, 4}
        # LangChain's vector-store retriever spelling
        vs = surface.as_langchain_retriever(search_kwargs={"k": 1, "filter": {"n": {"$lt": 3}}})
        assert [d.metadata["doc_id"] for d in vs.invoke(curie.query)] == [curie.doc_id]

    def test_llama_index_filters(self, filter_index: BaseIndex) -> None:
        from llama_index.core.llms import MockLLM
        from llama_index.core.vector_stores.types import (
            FilterCondition,
            FilterOperator,
            MetadataFilter,
            MetadataFilters,
        )

        curie, amazon = FILTER_QUERIES
        surface = self._surface(filter_index)
        odd = MetadataFilters(filters=[MetadataFilter(key="group", value="odd")])
        nodes = surface.as_llama_index_retriever(similarity_top_k=2, filters=odd).retrieve(
            amazon.query
        )
        assert nodes and nodes[0].node.ref_doc_id == amazon.doc_id and len(nodes) <= 2
        assert all(n.node.metadata["group"] == "odd" for n in nodes)
        # (n < 3 or n >= 7) and not group == odd: paris (0), curie (2), chess (8)
        nested = MetadataFilters(
            filters=[
                MetadataFilters(
                    filters=[
                        MetadataFilter(key="n", value=3, operator=FilterOperator.LT),
                        MetadataFilter(key="n", value=7, operator=FilterOperator.GTE),
                    ],
                    condition=FilterCondition.OR,
                ),
                MetadataFilters(filters=[odd.filters[0]], condition=FilterCondition.NOT),
            ]
        )
        engine = surface.as_query_engine(llm=MockLLM(), similarity_top_k=3, filters=nested)
        sources = engine.query(curie.query).source_nodes
        assert sources and sources[0].node.ref_doc_id == curie.doc_id
        assert {s.node.ref_doc_id for s in sources} <= {"paris", "curie", "chess"}

    def test_inserted_documents_are_filtered_by_their_metadata(
        self, filter_index: BaseIndex
    ) -> None:
        extra = SourceDocument(EXTRA.text, id=EXTRA.id, metadata={"title": EXTRA.title, "n": 9})
        assert filter_index.insert([extra]) == [EXTRA.id]
        hits = filter_index.retrieve(EXTRA_QUERY.query, k=3, filter={"n": 9})
        assert hits and hits[0].doc_id == EXTRA.id
        assert all(h.passage.metadata["n"] == 9 for h in hits)

    def test_a_bad_filter_raises_before_any_work(
        self, filter_index: BaseIndex, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def no_work(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the index ran a query with a malformed filter")

        monkeypatch.setattr(filter_index, "_retrieve", no_work, raising=False)
        monkeypatch.setattr(filter_index, "_retrieve_filtered", no_work, raising=False)
        surface = self._surface(filter_index)
        query = FILTER_QUERIES[0].query
        bads: tuple[Any, ...] = ({"n": {"$regex": "x"}}, {"n": {"$in": []}}, {"$or": []}, ["n", 1])
        for bad in bads:
            with pytest.raises(InvalidArgumentError):
                filter_index.retrieve(query, k=2, filter=bad)
            with pytest.raises(ValueError):
                surface.as_langchain_retriever(k=2).invoke(query, filter=bad)
        with pytest.raises(ValueError):
            surface.as_llama_index_retriever(filters={"n": {"$regex": "x"}})
