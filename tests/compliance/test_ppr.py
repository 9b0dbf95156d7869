"""The personalized-PageRank baseline passes the index compliance suite, with its default
query options and with LinearRAG's entity activation (the options read back on load)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrag_integrations.baselines.ppr import PPRRetriever
from graphrag_integrations.baselines.ppr_params import PPRQueryParams
from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.testing import IndexComplianceTests


class TestPPRCompliance(IndexComplianceTests):
    index_class = PPRRetriever


class TestPPRLinearRAGCompliance(IndexComplianceTests):
    """Entity activation through the facts; the query preset is recorded and loaded."""

    index_class = PPRRetriever

    def build_index(self, documents: Sequence[Any], embedder: Any, **options: Any) -> BaseIndex:
        options.setdefault("query_params", PPRQueryParams.preset("linearrag"))
        return PPRRetriever.from_documents(documents, embedding=embedder, **options)
