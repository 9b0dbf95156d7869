"""langchain-tests' standard retriever suite against ``RegIndex.as_langchain_retriever``."""

from __future__ import annotations

from typing import Any

from langchain_tests.integration_tests import RetrieversIntegrationTests

from tests.unit.reg_fixtures import movie_index


class TestRegLangChainStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> Any:
        return movie_index().as_langchain_retriever

    @property
    def retriever_query_example(self) -> str:
        return "who directed the films starring [Ronald Colman]"
