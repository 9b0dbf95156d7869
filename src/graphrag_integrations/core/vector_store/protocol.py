"""The :class:`VectorIndex` protocol every vector backend implements, and its value types.

Backends store L2-normalised ``float32`` vectors and score by cosine similarity, accept metadata
values of the :data:`MetadataValue` types and the same ``where`` filters (see
:func:`~graphrag_integrations.core.vector_store.validation.parse_where`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.retrieval.filters import MetadataFilter

#: Metadata value types every backend accepts.
MetadataValue = str | int | float | bool
#: A metadata filter: the dict form of :mod:`graphrag_integrations.core.retrieval.filters`
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


@runtime_checkable
class StoredLayer(Protocol):
    """A layer whose records live in a server store named after its index (a Chroma
    collection, a FalkorDB label): it records the checksum of the persisted index it holds a
    copy of, so a load of the same index reuses it, and can be emptied or removed."""

    @property
    def content_checksum(self) -> str | None:
        """Checksum of the persisted index this layer holds a copy of (``None``: unknown)."""
        ...

    def set_content_checksum(self, checksum: str | None) -> None:
        """Record (or clear, with ``None``) that checksum."""
        ...

    def clear(self) -> None:
        """Remove every record (the layer stays, its checksum is cleared)."""
        ...

    def drop(self) -> None:
        """Remove the layer from the store."""
        ...


@runtime_checkable
class LayerFactory(Protocol):
    """A ``vector_index=`` factory that names each layer after its index
    (:class:`~graphrag_integrations.core.vector_store.chroma_collections.ChromaVectors`,
    :class:`~graphrag_integrations.core.vector_store.falkordb.FalkorDBVectors`)."""

    def open_layer(
        self, layer: str, dimension: int, model_name: str, *, index_id: str, method: str = ""
    ) -> VectorIndex:
        """Open (or create) ``layer`` of the index ``index_id``."""
        ...

    def __call__(self, layer: str, dimension: int, model_name: str) -> VectorIndex: ...
