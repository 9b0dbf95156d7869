"""Argument checks and ``where``-filter parsing shared by every vector backend.

Every backend validates an ``add`` through :func:`check_records` (the built-in ones inherit
:class:`CheckedVectorIndex`) and a query through
:func:`check_query_vector` / :func:`check_count` / :func:`parse_where`, so both reject the same
inputs with the same messages.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import FloatMatrix, normalize_rows
from graphrag_integrations.core.retrieval.filters import FILTER_NODES, MetadataFilter, parse_filter
from graphrag_integrations.core.vector_store.protocol import MetadataValue, Where

_SCALARS = (str, int, float, bool)


def check_ids(ids: Sequence[str]) -> list[str]:
    """Non-empty string ids, no duplicates (a single ``str`` is refused)."""
    if isinstance(ids, str):
        raise TypeError("ids must be a sequence of strings, not a single string")
    out = list(ids)
    for i in out:
        if not isinstance(i, str) or not i:
            raise ValueError(f"every id must be a non-empty string, got {i!r}")
    if len(set(out)) != len(out):
        dupes = sorted(i for i, n in Counter(out).items() if n > 1)
        raise ValueError(f"duplicate ids in one call: {dupes[:5]}")
    return out


def check_vectors(embeddings: npt.ArrayLike, n: int, dimension: int) -> FloatMatrix:
    """``n`` finite, non-zero vectors of ``dimension``, L2-normalised ``float32``."""
    arr = np.asarray(embeddings, dtype=np.float32)
    if arr.ndim == 1 and n == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"expected {n} vectors of dimension {dimension}, got shape {arr.shape}")
    if arr.shape[1] != dimension:
        raise ValueError(f"vector dimension mismatch: expected {dimension}, got {arr.shape[1]}")
    if not np.isfinite(arr).all():
        raise ValueError("vectors contain NaN or infinite values")
    zero = np.flatnonzero(~arr.any(axis=1))
    if zero.size:
        raise ValueError(f"zero vectors have no cosine similarity (rows {zero[:5].tolist()})")
    return normalize_rows(arr)


def check_query_vector(embedding: npt.ArrayLike, dimension: int) -> FloatMatrix:
    """One query vector (shape ``(d,)`` or ``(1, d)``), checked and L2-normalised."""
    arr = np.asarray(embedding, dtype=np.float32)
    if arr.ndim == 2 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim != 1:
        raise ValueError(f"query must be one vector, got shape {arr.shape}")
    return check_vectors(arr, 1, dimension)[0]


def check_count(k: int) -> int:
    """A result count for ``query``: an integer >= 0 (``bool`` refused)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer, got {type(k).__name__}")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    return int(k)


def check_scalar(value: Any, what: str) -> MetadataValue:
    """A metadata value: ``str``, ``int``, finite ``float`` or ``bool``."""
    if not isinstance(value, _SCALARS) or (isinstance(value, float) and not math.isfinite(value)):
        raise ValueError(
            f"{what} must be a str, int, float or bool (finite), got {type(value).__name__} "
            f"{value!r}"
        )
    return value


def check_metadatas(
    metadatas: Sequence[Mapping[str, Any] | None] | None, n: int
) -> list[dict[str, MetadataValue]]:
    """``n`` metadata dicts (``None`` becomes ``{}``), values checked by :func:`check_scalar`."""
    if metadatas is None:
        return [{} for _ in range(n)]
    metas = list(metadatas)
    if len(metas) != n:
        raise ValueError(f"expected {n} metadatas, got {len(metas)}")
    out: list[dict[str, MetadataValue]] = []
    for meta in metas:
        if meta is None:
            out.append({})
            continue
        if not isinstance(meta, Mapping):
            raise ValueError(f"metadata must be a mapping or None, got {type(meta).__name__}")
        clean: dict[str, MetadataValue] = {}
        for key, value in meta.items():
            if not isinstance(key, str) or not key:
                raise ValueError(f"metadata keys must be non-empty strings, got {key!r}")
            clean[key] = check_scalar(value, f"metadata value {key!r}")
        out.append(clean)
    return out


def check_documents(documents: Sequence[str | None] | None, n: int) -> list[str | None]:
    """``n`` document texts or ``None``s."""
    if documents is None:
        return [None] * n
    docs = list(documents)
    if len(docs) != n:
        raise ValueError(f"expected {n} documents, got {len(docs)}")
    for d in docs:
        if d is not None and not isinstance(d, str):
            raise ValueError(f"documents must be strings or None, got {type(d).__name__}")
    return docs


class Records(NamedTuple):
    """The checked records of an ``add``, row-aligned: what :func:`check_records` returns."""

    ids: list[str]
    #: One L2-normalised ``float32`` row per id.
    vectors: FloatMatrix
    metadatas: list[dict[str, MetadataValue]]
    documents: list[str | None]

    def rows(self) -> Iterator[tuple[str, list[float], dict[str, MetadataValue], str | None]]:
        """``(id, vector as a list, metadata, document)`` of each record, in order."""
        return zip(self.ids, self.vectors.tolist(), self.metadatas, self.documents, strict=True)


def check_records(
    ids: Sequence[str],
    embeddings: npt.ArrayLike,
    metadatas: Sequence[Mapping[str, Any] | None] | None,
    documents: Sequence[str | None] | None,
    dimension: int,
) -> Records:
    """Validate the arguments of a backend's ``add`` (ids, vectors, metadatas, documents)."""
    id_list = check_ids(ids)
    return Records(
        id_list,
        check_vectors(embeddings, len(id_list), dimension),
        check_metadatas(metadatas, len(id_list)),
        check_documents(documents, len(id_list)),
    )


class CheckedVectorIndex(ABC):
    """The ``add`` and ``query`` of every built-in vector backend: the arguments are checked
    here (:func:`check_records`, :func:`check_count`, :func:`check_query_vector`,
    :func:`parse_where`), then the backend's :meth:`_add` / :meth:`_query` runs, so all of them
    take and refuse the same inputs with the same messages."""

    #: Length of every vector.
    dimension: int

    def add(
        self,
        ids: Sequence[str],
        embeddings: npt.ArrayLike,
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        documents: Sequence[str | None] | None = None,
    ) -> None:
        """Insert records; an id already present is replaced (vector, metadata, document).

        Raises
        ------
        ValueError
            On duplicate ids in the call, a vector of the wrong dimension, a NaN/infinite or
            zero vector, or metadata values that are not ``str``/``int``/``float``/``bool``.
        """
        self._add(check_records(ids, embeddings, metadatas, documents, self.dimension))

    def query(
        self, embedding: npt.ArrayLike, k: int, where: Where | None = None
    ) -> list[tuple[str, float]]:
        """Up to ``k`` ``(id, cosine similarity)`` pairs, best first, among the records
        matching ``where`` (:func:`parse_where`).

        Raises
        ------
        ValueError, TypeError
            On a negative or non-integer ``k``, a vector of the wrong shape or a malformed
            ``where``.
        """
        k = check_count(k)
        vector = check_query_vector(embedding, self.dimension)
        flt = parse_where(where)
        return [] if k == 0 else self._query(vector, k, flt, where)

    @abstractmethod
    def _add(self, records: Records) -> None:
        """Store checked records, replacing whole any whose id is already present."""

    @abstractmethod
    def _query(
        self, vector: FloatMatrix, k: int, flt: MetadataFilter | None, where: Where | None
    ) -> list[tuple[str, float]]:
        """The search for checked arguments (``k >= 1``, ``flt`` parsed from ``where``, which
        is passed as given for messages)."""


def parse_where(where: Where | None) -> MetadataFilter | None:
    """Validate a ``where`` filter into a filter tree (``None``: no filter).

    The language is :mod:`graphrag_integrations.core.retrieval.filters` (the LangChain / Chroma dict
    form: ``$eq $ne $gt $gte $lt $lte $in $nin $contains``, ``$and``, ``$or``) or a filter tree.

    Raises
    ------
    ValueError
        On an unknown operator, a value that is not a metadata scalar or an empty list.

    Examples
    --------
    >>> where = parse_where({"lang": "en", "year": {"$in": [1, 2]}})
    >>> where.matches({"lang": "en", "year": 2}), where.matches({"lang": "en", "year": 3})
    (True, False)
    """
    if where is not None and not isinstance(where, (Mapping, *FILTER_NODES)):
        raise ValueError(f"where must be a mapping, got {type(where).__name__}")
    return parse_filter(where)


def check_dimension(dimension: int) -> int:
    """A vector length: a positive integer."""
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension <= 0:
        raise ValueError(f"dimension must be a positive integer, got {dimension!r}")
    return dimension
