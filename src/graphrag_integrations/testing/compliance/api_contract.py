"""Compliance cases of the API contract (issue 19): one construction and query shape for every
index."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.index.build_options import named_parameters
from graphrag_integrations.core.params import InvalidParameterError
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.errors import InvalidArgumentError
from graphrag_integrations.testing.compliance.base import ComplianceBase, ranking
from graphrag_integrations.testing.compliance.corpus import QUERIES


class ApiContractCases(ComplianceBase):
    """``from_documents`` names (or types) every argument, ``as_retriever(k=)`` and its
    overrides, and ``preset`` with a params object refused."""

    def test_from_documents_names_every_argument(self) -> None:
        """Every argument is named, or typed by a ``**options: Unpack[TypedDict]`` (see
        :func:`~graphrag_integrations.core.index.build_options.named_parameters`)."""
        parameters = named_parameters(self.index_class.from_documents)
        hidden = [p.name for p in parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
        assert not hidden, f"from_documents hides arguments in **{hidden[0]}"
        assert {"index_params", "query_params", "preset"} <= set(parameters)
        constructor = inspect.signature(self.index_class).parameters
        assert "embedding" not in constructor or "embedding" in parameters

    def test_as_retriever_k_is_the_number_of_results(self, index: BaseIndex) -> None:
        query = QUERIES[1].query
        retriever = self._surface(index).as_retriever(k=2)
        assert len(retriever.retrieve(query)) == 2
        assert len(retriever.retrieve(query, k=1)) == 1  # the call's k wins
        assert len(index.retrieve(query, k=1)) == 1
        assert ranking(retriever.retrieve(query, k=3)) == ranking(index.retrieve(query, k=3))
        same = self._surface(index).as_retriever(query_params=index.query_params)
        assert ranking(same.retrieve(query)) == ranking(index.retrieve(query))

    def test_an_unknown_query_option_is_refused(self, index: BaseIndex) -> None:
        with pytest.raises(InvalidParameterError, match="no_such_option"):
            self._surface(index).as_retriever(no_such_option=1)

    def test_a_preset_and_a_params_object_are_refused_together(
        self, documents: list[SourceDocument], embedder: Any
    ) -> None:
        params = self.index_class.query_params_class()()
        with pytest.raises(InvalidArgumentError, match="preset"):
            self._build(documents, embedder, preset="default", query_params=params)
