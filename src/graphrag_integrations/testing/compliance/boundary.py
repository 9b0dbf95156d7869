"""Compliance cases: a metadata filter is an access boundary, on every surface.

:class:`FilterBoundaryCases` (part of
:class:`~graphrag_integrations.testing.compliance.IndexComplianceTests`) builds an index
over :data:`TENANT_DOCUMENTS`: two tenants whose documents share entities (a person, a city),
tenant ``B``'s holding the canary words of :data:`CANARIES`. A query filtered to tenant ``A``
must answer as if the index held only ``A``'s documents: no canary word in any output of any
surface - passages, explanations, LangChain ``Document`` metadata and tool strings, LlamaIndex
node metadata, tool outputs and query-engine source nodes, the ``show`` picture - also when a
retriever made with the filter is called with ``filter={}`` (a bound filter cannot be
widened).

Where an index's scores use no corpus-wide statistics (``corpus_wide_scores`` is false: see
:mod:`~graphrag_integrations.core.index.base`), a filtered query must moreover return the
passages and scores of an index built from the matching documents alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.testing.compliance.base import ComplianceBase

__all__ = [
    "CANARIES",
    "TENANT_DOCUMENTS",
    "TENANT_FILTER",
    "TENANT_QUERIES",
    "FilterBoundaryCases",
    "leaked",
    "tenant_documents",
]

#: ``(id, tenant, text)``: tenant ``A``'s documents, then ``B``'s (which hold the canaries).
#: Every sentence names two entities (so a triple method has triples), and the tenants share
#: the person and the city: a walk from ``A``'s passages reaches ``B``'s through them.
TENANT_DOCUMENTS: tuple[tuple[str, str, str], ...] = (
    ("a1", "A", "Priya Natarajan is the chief engineer of Orbitex Labs."),
    ("a2", "A", "Orbitex Labs builds weather satellites in Toulouse."),
    ("a3", "A", "Marco Bellini founded Orbitex Labs with Priya Natarajan."),
    ("b1", "B", "Priya Natarajan secretly advises Zebracanary Holdings."),
    ("b2", "B", "Zebracanary Holdings secretly buys land in Toulouse."),
    ("b3", "B", "Marco Bellini secretly sold Zebracanary Holdings to Priya Natarajan."),
)
#: Words only tenant ``B``'s documents hold (compared case-insensitively).
CANARIES: tuple[str, ...] = ("zebracanary", "secretly")
#: The filter of every probe: tenant ``A`` only.
TENANT_FILTER: dict[str, Any] = {"tenant": "A"}
#: Probes whose unfiltered walks lead into tenant ``B``'s documents (no canary in them).
TENANT_QUERIES: tuple[str, ...] = (
    "Which company does Priya Natarajan advise?",
    "Which company is linked to Orbitex Labs?",
    "What did Marco Bellini sell to Priya Natarajan?",
    "Which holdings buy land in Toulouse?",
)


def tenant_documents(tenant: str | None = None) -> list[SourceDocument]:
    """:data:`TENANT_DOCUMENTS` (of one tenant when given) with ``tenant`` and ``title``
    metadata.

    Examples
    --------
    >>> [d.id for d in tenant_documents("A")]
    ['a1', 'a2', 'a3']
    >>> tenant_documents()[3].metadata
    {'tenant': 'B', 'title': 'Memo b1'}
    """
    return [
        SourceDocument(text, id=doc_id, metadata={"tenant": owner, "title": f"Memo {doc_id}"})
        for doc_id, owner, text in TENANT_DOCUMENTS
        if tenant is None or owner == tenant
    ]


def leaked(output: Any) -> list[str]:
    """The canary words found in ``output`` (any object: its JSON, else its ``repr``).

    Examples
    --------
    >>> leaked({"paths": [{"units": ["Zebracanary Holdings ..."]}]}), leaked("fine")
    (['zebracanary'], [])
    """
    try:
        text = json.dumps(output, default=repr)
    except (TypeError, ValueError):
        text = repr(output)
    lowered = text.lower()
    return [word for word in CANARIES if word in lowered]


def _hit_record(hit: RetrievedPassage) -> dict[str, Any]:
    return {"text": hit.text, "id": hit.id, "doc_id": hit.doc_id, **hit.to_metadata()}


class FilterBoundaryCases(ComplianceBase):
    """The filter-boundary cases (see the module docstring)."""

    #: Results per probe (more than tenant ``A``'s passages, so top-ups run too).
    boundary_k = 4

    def _tenant_index(self, tenant: str | None = None) -> BaseIndex:
        return self._build(tenant_documents(tenant), self.make_embedder())

    def _assert_tenant_a(self, where: str, query: str, hits: Sequence[RetrievedPassage]) -> None:
        for hit in hits:
            record = _hit_record(hit)
            assert not leaked(record), (where, query, leaked(record), record)
            assert hit.passage.metadata.get("tenant") == "A", (where, query, record)

    def test_a_filter_keeps_other_tenants_text_out_of_every_result(self) -> None:
        index = self._tenant_index()
        k = self.boundary_k
        bound = self._surface(index).as_retriever(k, filter=TENANT_FILTER)
        for query in TENANT_QUERIES:
            self._assert_tenant_a("retrieve", query, index.retrieve(query, k, filter=TENANT_FILTER))
            self._assert_tenant_a("as_retriever", query, bound.retrieve(query))
            self._assert_tenant_a("as_retriever filter={}", query, bound.retrieve(query, filter={}))
            self._assert_tenant_a(
                "as_retriever filter=None", query, bound.retrieve(query, filter=None)
            )

    @pytest.mark.asyncio
    async def test_a_filter_keeps_other_tenants_text_out_of_async_results(self) -> None:
        index = self._tenant_index()
        k = self.boundary_k
        bound = self._surface(index).as_retriever(k, filter=TENANT_FILTER)
        for query in TENANT_QUERIES:
            hits = await index.aretrieve(query, k, filter=TENANT_FILTER)
            self._assert_tenant_a("aretrieve", query, hits)
            self._assert_tenant_a("bound aretrieve", query, await bound.aretrieve(query, filter={}))

    @pytest.mark.asyncio
    async def test_a_bound_filter_keeps_other_tenants_text_out_of_the_frameworks(self) -> None:
        from llama_index.core.llms import MockLLM

        index = self._tenant_index()
        surface = self._surface(index)
        k = self.boundary_k
        lc = surface.as_langchain_retriever(k=k, filter=TENANT_FILTER)
        lc_tool = surface.as_langchain_tool(k=k, filter=TENANT_FILTER)
        li = surface.as_llama_index_retriever(similarity_top_k=k, filters=TENANT_FILTER)
        li_tool = surface.as_llama_index_tool(similarity_top_k=k, filters=TENANT_FILTER)
        engine = surface.as_query_engine(llm=MockLLM(), similarity_top_k=k, filters=TENANT_FILTER)
        for query in TENANT_QUERIES:
            outputs: dict[str, Any] = {}
            for name, call in (
                ("invoke", {}),
                ("invoke filter={}", {"filter": {}}),
                ("invoke filter=None", {"filter": None}),
                ("invoke search_kwargs", {"search_kwargs": {"filter": {}}}),
            ):
                docs = lc.invoke(query, **call)
                outputs[name] = [(d.page_content, d.metadata) for d in docs]
                assert all(d.metadata.get("tenant") == "A" for d in docs), (name, query)
            adocs = await lc.ainvoke(query, filter={})
            outputs["ainvoke filter={}"] = [(d.page_content, d.metadata) for d in adocs]
            outputs["langchain tool"] = lc_tool.invoke({"query": query})
            nodes = li.retrieve(query)
            outputs["llama_index"] = [(n.node.get_content(), n.node.metadata) for n in nodes]
            assert all(n.node.metadata.get("tenant") == "A" for n in nodes), query
            result = li_tool.call(query)
            outputs["llama_index tool"] = [
                result.content,
                [(n.node.get_content(), n.node.metadata) for n in result.raw_output],
            ]
            answer = engine.query(query)
            outputs["query engine"] = [
                str(answer),
                [(s.node.get_content(), s.node.metadata) for s in answer.source_nodes],
            ]
            for name, output in outputs.items():
                assert not leaked(output), (name, query, leaked(output), output)

    def test_a_filter_keeps_other_tenants_text_out_of_the_picture(self) -> None:
        from graphrag_integrations.evaluation.show import render_html, retrieval_subgraph

        index = self._tenant_index()
        explain = getattr(index, "explanation_scores", None)
        for query in TENANT_QUERIES:
            hits = index.retrieve(query, self.boundary_k, filter=TENANT_FILTER)
            graph = retrieval_subgraph(query, hits, explain(query, hits) if explain else None)
            page = render_html(query, hits, graph=graph, index_info={"method": index.method})
            assert not leaked(page), (query, leaked(page))

    def test_a_filtered_query_answers_as_an_index_of_the_matching_documents(self) -> None:
        index = self._tenant_index()
        if getattr(index, "corpus_wide_scores", True):
            pytest.skip(f"{type(index).__name__} scores with corpus-wide statistics")
        alone = self._tenant_index("A")
        for query in TENANT_QUERIES:
            got = index.retrieve(query, self.boundary_k, filter=TENANT_FILTER)
            expected = alone.retrieve(query, self.boundary_k)
            assert [h.id for h in got] == [h.id for h in expected], query
            assert [h.score for h in got] == pytest.approx(
                [h.score for h in expected], abs=self.score_tolerance
            ), query
