"""Compliance cases of the framework retrievers: langchain-tests' retriever suite (its
properties) and the LangChain and LlamaIndex retrievers returning the core order."""

from __future__ import annotations

from typing import Any

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.testing.compliance.base import ComplianceBase
from graphrag_integrations.testing.compliance.corpus import QUERIES, compliance_documents


class FrameworkCases(ComplianceBase):
    """What langchain-tests' ``RetrieversIntegrationTests`` needs, and the framework
    retrievers against the core results."""

    # -- langchain-tests' retriever suite -------------------------------------------------
    @property
    def retriever_constructor(self) -> Any:
        """``as_langchain_retriever`` of a fresh index over :data:`CORPUS`."""
        index = self._build(compliance_documents(), self.make_embedder())
        return self._surface(index).as_langchain_retriever

    @property
    def retriever_query_example(self) -> str:
        return QUERIES[0].query

    # -- framework retrievers ---------------------------------------------------------------
    def test_langchain_retriever_returns_the_core_order(self, index: BaseIndex) -> None:
        retriever = self._surface(index).as_langchain_retriever(k=3)
        for probe in QUERIES:
            docs = retriever.invoke(probe.query)
            hits = index.retrieve(probe.query, k=3)
            assert [d.id for d in docs] == [h.id for h in hits]
            assert [d.metadata["doc_id"] for d in docs] == [h.doc_id for h in hits]
            assert docs[0].metadata["title"] == hits[0].passage.metadata["title"]

    def test_llama_index_retriever_returns_nodes_with_scores_in_order(
        self, index: BaseIndex
    ) -> None:
        from llama_index.core.schema import NodeWithScore

        retriever = self._surface(index).as_llama_index_retriever(similarity_top_k=3)
        for probe in QUERIES:
            nodes = retriever.retrieve(probe.query)
            hits = index.retrieve(probe.query, k=3)
            assert all(isinstance(n, NodeWithScore) for n in nodes)
            assert [n.node.node_id for n in nodes] == [h.id for h in hits]
            assert [n.node.ref_doc_id for n in nodes] == [h.doc_id for h in hits]
            assert [n.score for n in nodes] == pytest.approx([h.score for h in hits])
