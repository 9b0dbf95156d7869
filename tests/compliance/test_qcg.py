"""QueryCentricGraphIndex passes the index compliance suite (fake Doc2Query generator)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex
from graphrag_integrations.testing import IndexComplianceTests


def doc2query(prompt: str) -> str:
    """Two line-format pairs grounded in the chunk (the text after the prompt's marker)."""
    chunk = prompt.rsplit("---Input chunk---", 1)[1].strip()
    words = chunk.rstrip(".").split()
    head, tail = " ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2 :])
    return (
        f"Question: What about {head}?\nAnswer: {tail}\n"
        f"Question: Which text says {chunk}?\nAnswer: {chunk}\n"
    )


class TestQueryCentricGraphIndexCompliance(IndexComplianceTests):
    index_class = QueryCentricGraphIndex

    def build_index(self, documents: Sequence[Any], embedder: Any, **options: Any) -> BaseIndex:
        return QueryCentricGraphIndex.from_documents(
            documents, embedding=embedder, llm=doc2query, **options
        )

    def load_index(self, path: Path, embedder: Any) -> BaseIndex:
        return QueryCentricGraphIndex.load(path, embedding=embedder, llm=doc2query)


class TestQueryCentricGraphIndexHybridCompliance(TestQueryCentricGraphIndexCompliance):
    """The same suite with ``chunk_similarity="hybrid"`` on (preset ``fused-hybrid``): the BM25
    over the chunks follows inserts and deletes and is persisted with the index."""

    def build_index(self, documents: Sequence[Any], embedder: Any, **options: Any) -> BaseIndex:
        options.setdefault("preset", "fused-hybrid")
        return super().build_index(documents, embedder, **options)
