"""The compliance suite: the :mod:`~graphrag_integrations.core.index.base` contract as tests.

:class:`IndexComplianceTests` is a pytest base class (in the spirit of langchain-tests'
standard tests, whose retriever suite it includes). A method's test module subclasses it,
names the index class and, when ``from_documents(docs, embedding=...)`` / ``load(path,
embedding=...)`` is not how it is built, says how; every case then runs offline on a corpus of
nine one-sentence documents (:data:`CORPUS`) with the model-free
:class:`~graphrag_integrations.testing.fake_embedder.FakeEmbedder`.

A whole method test module::

    from graphrag_integrations.testing import IndexComplianceTests
    from my_package.index import MyIndex


    class TestMyIndexCompliance(IndexComplianceTests):
        index_class = MyIndex

The package holds one module per area of the contract, each a mixin of
:class:`~.base.ComplianceBase` (the hooks, fixtures and helpers), composed in
:mod:`.suite`; :mod:`.corpus` is the corpus and its probes, :mod:`.folders` the user folders
and damaged files of the data-safety cases. The names below are re-exported from them.

This package imports pytest, pytest-asyncio and langchain-tests (the ``testing`` extra:
``pip install graphrag-integrations[testing]``); nothing else in the package imports it.
"""

from __future__ import annotations

from graphrag_integrations.testing.compliance.chunking import (
    LONG_QUERY,
    PAIR,
    ParagraphSplitter,
    long_document,
)
from graphrag_integrations.testing.compliance.concurrency import MUTATIONS
from graphrag_integrations.testing.compliance.corpus import (
    CONCURRENT_EXTRAS,
    CORPUS,
    EXTRA,
    EXTRA_QUERY,
    QUERIES,
    CorpusDocument,
    Probe,
    compliance_documents,
)
from graphrag_integrations.testing.compliance.filters import (
    FILTER_CASES,
    FILTER_QUERIES,
    filter_documents,
)
from graphrag_integrations.testing.compliance.folders import DAMAGES, snapshot, write_foreign_files
from graphrag_integrations.testing.compliance.queries import INVALID_K
from graphrag_integrations.testing.compliance.suite import IndexComplianceTests

__all__ = [
    "CONCURRENT_EXTRAS",
    "CORPUS",
    "DAMAGES",
    "EXTRA",
    "EXTRA_QUERY",
    "FILTER_CASES",
    "FILTER_QUERIES",
    "INVALID_K",
    "LONG_QUERY",
    "MUTATIONS",
    "PAIR",
    "QUERIES",
    "CorpusDocument",
    "IndexComplianceTests",
    "ParagraphSplitter",
    "Probe",
    "compliance_documents",
    "filter_documents",
    "long_document",
    "snapshot",
    "write_foreign_files",
]
