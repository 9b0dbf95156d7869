"""The lifecycle every method shares, so users learn one shape.

``X.from_documents(docs, ...)``, ``insert``, ``delete(doc_id)``, ``persist(dir)`` /
``X.load(dir)``, ``retrieve`` / ``aretrieve``. The framework surface
(``as_langchain_retriever`` and friends) comes from
:class:`graphrag_integrations.adapters.surface.FrameworkSurface`.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.errors import EmptyQueryError

IndexT = TypeVar("IndexT", bound="BaseIndex")


def check_query(query: str) -> str:
    """Return ``query`` stripped, or raise :class:`EmptyQueryError` if nothing is left."""
    if not isinstance(query, str):
        raise EmptyQueryError(f"query must be a string, got {type(query).__name__}")
    stripped = query.strip()
    if not stripped:
        raise EmptyQueryError("query is empty")
    return stripped


class BaseIndex(ABC):
    """Abstract base of every retriever/index in the package.

    Subclasses set :attr:`method` (the name recorded in manifests and used by the CLI) and
    :attr:`default_k`, and implement the abstract methods.
    """

    method: ClassVar[str] = "base"
    default_k: int = 5

    @classmethod
    @abstractmethod
    def from_documents(cls: type[IndexT], documents: Iterable[Any], **kwargs: Any) -> IndexT:
        """Build an index from LangChain/LlamaIndex documents, strings, files or folders."""

    @abstractmethod
    def insert(self, documents: Iterable[Any]) -> list[str]:
        """Add documents without a rebuild; returns the ids of the documents added."""

    @abstractmethod
    def delete(self, doc_id: str) -> None:
        """Remove a source document and everything derived from it."""

    @abstractmethod
    def persist(self, path: str | Path) -> None:
        """Write the index to a directory (atomically, with a manifest)."""

    @classmethod
    @abstractmethod
    def load(cls: type[IndexT], path: str | Path, **kwargs: Any) -> IndexT:
        """Load an index written by :meth:`persist`; validates the manifest."""

    @abstractmethod
    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """Return up to ``k`` passages for ``query``, best first."""

    async def aretrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """Async :meth:`retrieve`; the default runs it in a worker thread.

        Subclasses whose retrieval awaits an LLM override this with a native coroutine.
        """
        return await asyncio.to_thread(self.retrieve, query, k)
