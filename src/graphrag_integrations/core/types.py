"""Plain data types that flow through every layer.

A :class:`Passage` is the unit a retriever returns (a chunk of a source document); a
:class:`RetrievedPassage` adds the score and the method's explanation. Both are framework
free; the adapters turn them into LangChain ``Document`` or LlamaIndex ``NodeWithScore``.
A :data:`Triple` is one knowledge-graph fact ``(head, relation, tail)`` (KGQA datasets, KG
methods).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

#: A knowledge-graph fact ``(head, relation, tail)``, e.g. ``("Kismet", "directed_by", "William
#: Dieterle")``.
Triple = tuple[str, str, str]


@dataclass(frozen=True)
class Passage:
    """A retrievable piece of text.

    Parameters
    ----------
    id : str
        Stable id (content hash of the source document id and the text span).
    text : str
        The passage text.
    doc_id : str
        Id of the :class:`~graphrag_integrations.core.text.documents.SourceDocument` it came from;
        ``delete(doc_id)`` removes every passage (and derived node) with this id.
    metadata : Mapping[str, Any]
        Free-form metadata carried over from the source document (title, source path...).
    """

    id: str
    text: str
    doc_id: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RetrievedPassage:
    """A passage with its retrieval score and the method's explanation.

    Parameters
    ----------
    passage : Passage
        What was retrieved.
    score : float
        Higher is better; comparable only within one result list.
    explanation : Mapping[str, Any]
        Why it was retrieved (paths, clues, generated queries, evidence chains), JSON-serialisable.
    """

    passage: Passage
    score: float
    explanation: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.passage.text

    @property
    def id(self) -> str:
        return self.passage.id

    @property
    def doc_id(self) -> str:
        return self.passage.doc_id

    def to_metadata(self) -> dict[str, Any]:
        """Flatten into the metadata dict the framework adapters attach to each result."""
        meta: dict[str, Any] = dict(self.passage.metadata)
        meta.update(
            {
                "passage_id": self.passage.id,
                "doc_id": self.passage.doc_id,
                "score": float(self.score),
                "explanation": dict(self.explanation),
            }
        )
        return meta


@runtime_checkable
class Retriever(Protocol):
    """What every core retriever provides; the framework adapters need nothing more."""

    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """Return up to ``k`` passages for ``query``, best first (``None``: the default k)."""
        ...

    async def aretrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """Async :meth:`retrieve`."""
        ...
