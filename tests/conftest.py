"""Shared test fixtures: a deterministic fake embedder, a tiny corpus, the data directory.

``FakeEmbedder`` (from :mod:`graphrag_integrations.testing.fake_embedder`, re-exported here)
implements the core ``Embedder`` protocol without any model: each lower-cased word is hashed
into one of ``dimension`` buckets, counts are L2-normalised. Texts sharing words therefore get
a positive cosine, texts sharing none get 0, which is enough to make retrieval order
predictable in tests.

Modules that cannot use fixtures (e.g. langchain-tests property classes) import the helpers:
``from tests.conftest import FakeEmbedder, tiny_corpus``.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest

from graphrag_integrations.core.context import current_callbacks
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

__all__ = ["TINY_CORPUS", "FakeEmbedder", "RecordingRetriever", "RetrieverCall", "tiny_corpus"]

# (doc_id, title, text): six short passages on distinct topics, three documents.
TINY_CORPUS: tuple[tuple[str, str, str], ...] = (
    ("geo", "Capitals", "Paris is the capital of France and sits on the Seine."),
    ("geo", "Capitals", "Rome is the capital of Italy and was founded on seven hills."),
    ("geo", "Capitals", "Berlin is the capital of Germany and hosts the Bundestag."),
    ("sci", "Physics", "Marie Curie won the Nobel Prize in Physics for work on radioactivity."),
    ("sci", "Physics", "Albert Einstein developed the theory of relativity."),
    ("food", "Cuisine", "Pasta carbonara is made with eggs, cheese, pepper and guanciale."),
)


def tiny_corpus() -> list[Passage]:
    """The :data:`TINY_CORPUS` as ``Passage`` objects with ids ``p0``..``p5``."""
    return [
        Passage(id=f"p{i}", text=text, doc_id=doc_id, metadata={"title": title})
        for i, (doc_id, title, text) in enumerate(TINY_CORPUS)
    ]


@dataclass
class RetrieverCall:
    """One call seen by :class:`RecordingRetriever`."""

    path: str  # "sync" or "async"
    query: str
    k: int | None
    thread_id: int
    callbacks: Any  # core.context.current_callbacks() during the call


@dataclass
class RecordingRetriever:
    """A core ``Retriever`` over fixed passages that records every call.

    Results are the first ``k`` (``None``: ``default_k``) passages in corpus order with scores
    1.0, 0.9, ...; empty queries raise ``EmptyQueryError`` like real retrievers. The async
    path is a native coroutine (no worker thread), so tests can tell which path ran.
    """

    passages: list[Passage] = field(default_factory=tiny_corpus)
    default_k: int = 2
    method: str = "recording"
    calls: list[RetrieverCall] = field(default_factory=list)

    def _results(self, query: str, k: int | None, path: str) -> list[RetrievedPassage]:
        from graphrag_integrations.core.index_base import check_query

        self.calls.append(RetrieverCall(path, query, k, threading.get_ident(), current_callbacks()))
        check_query(query)
        n = self.default_k if k is None else k
        return [
            RetrievedPassage(p, 1.0 - 0.1 * i, {"method": self.method, "rank": i})
            for i, p in enumerate(self.passages[:n])
        ]

    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        return self._results(query, k, "sync")

    async def aretrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        await asyncio.sleep(0)
        return self._results(query, k, "async")


@pytest.fixture
def recording_retriever() -> RecordingRetriever:
    """A fresh :class:`RecordingRetriever` over the tiny corpus (``default_k=2``)."""
    return RecordingRetriever()


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    """A fresh 64-dimensional :class:`FakeEmbedder`."""
    return FakeEmbedder()


@pytest.fixture
def tiny_passages() -> list[Passage]:
    """Six passages from three documents (see :data:`TINY_CORPUS`)."""
    return tiny_corpus()


@pytest.fixture
def tiny_texts() -> list[str]:
    """The texts of :data:`TINY_CORPUS`."""
    return [text for _, _, text in TINY_CORPUS]


@pytest.fixture
def dense_retriever(tiny_passages: list[Passage], fake_embedder: FakeEmbedder) -> Any:
    """A ``DenseRetriever`` over the tiny corpus with the fake embedder (``k=3``)."""
    from graphrag_integrations.baselines.dense import DenseRetriever

    return DenseRetriever(tiny_passages, embedding=fake_embedder, k=3)
