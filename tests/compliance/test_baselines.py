"""The baselines pass the index compliance suite (graphrag_integrations.testing)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.hybrid import HybridRetriever
from graphrag_integrations.baselines.params import HybridQueryParams
from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.testing import IndexComplianceTests


class TestDenseCompliance(IndexComplianceTests):
    index_class = DenseRetriever


class TestBM25Compliance(IndexComplianceTests):
    """BM25 takes no embedder."""

    index_class = BM25Retriever

    def build_index(self, documents: Sequence[Any], embedder: Any, **options: Any) -> BaseIndex:
        return BM25Retriever.from_documents(documents, **options)

    def load_index(self, path: Path, embedder: Any) -> BaseIndex:
        return BM25Retriever.load(path)


class TestHybridCompliance(IndexComplianceTests):
    index_class = HybridRetriever


class TestHybridRRFCompliance(IndexComplianceTests):
    """Reciprocal rank fusion, with the fusion read back from the manifest on load."""

    index_class = HybridRetriever

    def build_index(self, documents: Sequence[Any], embedder: Any, **options: Any) -> BaseIndex:
        options.setdefault("query_params", HybridQueryParams(fusion="rrf"))
        return HybridRetriever.from_documents(documents, embedding=embedder, **options)
