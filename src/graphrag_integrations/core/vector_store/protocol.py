"""The :class:`VectorIndex` protocol every vector backend implements, and its value types.

Backends store L2-normalised ``float32`` vectors and score by cosine similarity, accept metadata
values of the :data:`MetadataValue` types and the same ``where`` filters (see
:func:`~graphrag_integrations.core.vector_store.validation.parse_where`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy.typing as npt

from graphrag_integrations.core.embeddings import FloatMatrix
from graphrag_integrations.core.filters import MetadataFilter

#: Metadata value types every backend accepts.
MetadataValue = str | int | float | bool
#: A metadata filter: the dict form of :mod:`graphrag_integrations.core.filters`
#: (``{"field": value}``, ``{"f": {"$gt": v}}``, ``{"$or": [...]}``...) or a filter tree.
Where = Mapping[str, Any] | MetadataFilter


@runtime_checkable
class VectorIndex(Protocol):
    """A store of id -> (vector, metadata, document) searched by cosine similarity.

    Attributes
    ----------
    model_name : str
        Embedding model that produced the vectors (checked when a stored index is reopened).
    dimension : int
        Length of every vector.
    """

    model_name: str
    dimension: int

    def add(
        self,
        ids: Sequence[str],
        embeddings: npt.ArrayLike,
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        documents: Sequence[str | None] | None = None,
    ) -> None:
        """Insert records; an id already present is replaced (vector, metadata and document)."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the records with these ids (ids not present are ignored)."""
        ...

    def query(
        self, embedding: npt.ArrayLike, k: int, where: Where | None = None
    ) -> list[tuple[str, float]]:
        """Up to ``k`` ``(id, cosine)`` pairs, best first, among records matching ``where``."""
        ...

    def get_embeddings(self, ids: Sequence[str]) -> FloatMatrix:
        """The stored (L2-normalised) vectors of ``ids``, in the order given."""
        ...

    def __len__(self) -> int: ...
