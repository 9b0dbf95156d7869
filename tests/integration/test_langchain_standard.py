"""langchain-tests' standard retriever suite against the LangChain adapter.

The wrapped retriever is the dense baseline with the fake hashing embedder, so the suite runs
in about a second without any model.
"""

from __future__ import annotations

from typing import Any

from langchain_tests.integration_tests import RetrieversIntegrationTests

from graphrag_integrations.adapters.langchain import LangChainRetriever
from graphrag_integrations.baselines.dense import DenseRetriever
from tests.conftest import FakeEmbedder, tiny_corpus


class TestLangChainRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[LangChainRetriever]:
        return LangChainRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"retriever": DenseRetriever(tiny_corpus(), embedding=FakeEmbedder()), "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return "Which city is the capital of Italy?"


class TestFrameworkSurfaceStandard(RetrieversIntegrationTests):
    """The same suite through ``DenseRetriever.as_langchain_retriever``."""

    @property
    def retriever_constructor(self) -> Any:
        index = DenseRetriever(tiny_corpus(), embedding=FakeEmbedder())
        return index.as_langchain_retriever

    @property
    def retriever_query_example(self) -> str:
        return "Who developed the theory of relativity?"
