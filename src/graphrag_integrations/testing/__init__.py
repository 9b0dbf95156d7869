"""Test helpers for methods built on this package: a compliance suite and a fake embedder.

* :class:`~graphrag_integrations.testing.compliance.IndexComplianceTests` - the
  :mod:`~graphrag_integrations.core.index.base` lifecycle contract (``from_documents`` from
  strings and framework documents, ``insert`` / ``delete``, ``persist`` / ``load``, empty
  queries, ``k``, explanations) plus langchain-tests' standard retriever tests through
  ``as_langchain_retriever`` and the LlamaIndex retriever, as a pytest base class. It imports
  pytest and langchain-tests (the ``testing`` extra), on first access only.
* :class:`~graphrag_integrations.testing.fake_embedder.FakeEmbedder` - a deterministic,
  model-free hashing embedder, so the suite runs offline in seconds.

A new method gets the whole suite with one subclass in its test module (pytest collects
``Test*`` classes; the base class itself is not collected)::

    # tests/unit/test_compliance_mymethod.py
    from graphrag_integrations.testing import FakeEmbedder, IndexComplianceTests
    from my_package.index import MyIndex


    class TestMyIndexCompliance(IndexComplianceTests):
        index_class = MyIndex

        # Optional: how to build and load it, when not with
        # MyIndex.from_documents(documents, embedding=embedder) / MyIndex.load(path, embedding=...)
        def build_index(self, documents, embedder):
            return MyIndex.from_documents(documents, embedding=embedder, depth=2)

        # Optional: another embedder than FakeEmbedder()
        def make_embedder(self):
            return FakeEmbedder(dimension=128)

Examples
--------
>>> from graphrag_integrations.testing import FakeEmbedder
>>> FakeEmbedder(dimension=8).embed(["hello world"]).shape
(1, 8)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphrag_integrations._lazy import resolve_lazy

if TYPE_CHECKING:
    from graphrag_integrations.testing.compliance import (
        CORPUS,
        CorpusDocument,
        IndexComplianceTests,
        compliance_documents,
    )
    from graphrag_integrations.testing.fake_embedder import FakeEmbedder

_LAZY: dict[str, str] = {
    "CORPUS": "graphrag_integrations.testing.compliance",
    "CorpusDocument": "graphrag_integrations.testing.compliance",
    "FakeEmbedder": "graphrag_integrations.testing.fake_embedder",
    "IndexComplianceTests": "graphrag_integrations.testing.compliance",
    "compliance_documents": "graphrag_integrations.testing.compliance",
}

__all__ = [
    "CORPUS",
    "CorpusDocument",
    "FakeEmbedder",
    "IndexComplianceTests",
    "compliance_documents",
]


def __getattr__(name: str) -> Any:
    return resolve_lazy(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted(__all__)
