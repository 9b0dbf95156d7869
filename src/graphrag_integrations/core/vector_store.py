"""Vector indexes behind one protocol: exact in-memory numpy, or Chroma.

Both backends store L2-normalised ``float32`` vectors and score by cosine similarity, accept
the same metadata (``str``/``int``/``float``/``bool`` values) and the same ``where`` filters:

* ``{"field": value}`` or ``{"field": {"$eq": value}}`` - equality;
* ``{"field": {"$in": [v1, v2]}}`` - membership;
* several fields in one dict - all must hold (AND). A record without the field never matches.

:class:`InMemoryVectorIndex` is exact and persists to a directory (``vectors.npy`` +
``records.json`` + manifest). :class:`ChromaVectorIndex` keeps the vectors in a Chroma
collection (embedded and persistent by default, or on a Chroma server over HTTP); Chroma's
HNSW search is approximate, so on large collections its top-k can differ slightly from the
exact one.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.embeddings import FloatMatrix, normalize_rows
from graphrag_integrations.core.persistence import (
    Manifest,
    atomic_directory,
    atomic_write_json,
    check_manifest,
    read_manifest,
    write_manifest,
)
from graphrag_integrations.errors import IndexMismatchError

logger = logging.getLogger(__name__)

#: Metadata value types both backends accept.
MetadataValue = str | int | float | bool
Where = Mapping[str, Any]

_SCALARS = (str, int, float, bool)
_T = TypeVar("_T")
# Chroma's embedded SQLite can answer "database is locked" at once instead of waiting, when
# its own pooled connections race (seen under load: a collection update right after an add).
_BUSY_RETRIES = 8
_BUSY_FIRST_WAIT_S = 0.05
_MISSING = object()


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


# -- validation shared by both backends ------------------------------------------------------
@dataclass(frozen=True)
class _Condition:
    field: str
    values: tuple[MetadataValue, ...]  # one value for $eq, any number for $in


def _check_ids(ids: Sequence[str]) -> list[str]:
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


def _check_vectors(embeddings: npt.ArrayLike, n: int, dimension: int) -> FloatMatrix:
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


def _check_query_vector(embedding: npt.ArrayLike, dimension: int) -> FloatMatrix:
    arr = np.asarray(embedding, dtype=np.float32)
    if arr.ndim == 2 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim != 1:
        raise ValueError(f"query must be one vector, got shape {arr.shape}")
    return _check_vectors(arr, 1, dimension)[0]


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer, got {type(k).__name__}")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    return int(k)


def _check_scalar(value: Any, what: str) -> MetadataValue:
    if not isinstance(value, _SCALARS) or (isinstance(value, float) and not math.isfinite(value)):
        raise ValueError(
            f"{what} must be a str, int, float or bool (finite), got {type(value).__name__} "
            f"{value!r}"
        )
    return value


def _check_metadatas(
    metadatas: Sequence[Mapping[str, Any] | None] | None, n: int
) -> list[dict[str, MetadataValue]]:
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
            clean[key] = _check_scalar(value, f"metadata value {key!r}")
        out.append(clean)
    return out


def _check_documents(documents: Sequence[str | None] | None, n: int) -> list[str | None]:
    if documents is None:
        return [None] * n
    docs = list(documents)
    if len(docs) != n:
        raise ValueError(f"expected {n} documents, got {len(docs)}")
    for d in docs:
        if d is not None and not isinstance(d, str):
            raise ValueError(f"documents must be strings or None, got {type(d).__name__}")
    return docs


def _check_records(
    ids: Sequence[str],
    embeddings: npt.ArrayLike,
    metadatas: Sequence[Mapping[str, Any] | None] | None,
    documents: Sequence[str | None] | None,
    dimension: int,
) -> tuple[list[str], FloatMatrix, list[dict[str, MetadataValue]], list[str | None]]:
    """Validate the arguments of an ``add``, as :meth:`InMemoryVectorIndex.add` documents."""
    id_list = _check_ids(ids)
    return (
        id_list,
        _check_vectors(embeddings, len(id_list), dimension),
        _check_metadatas(metadatas, len(id_list)),
        _check_documents(documents, len(id_list)),
    )


def parse_where(where: Where | None) -> list[_Condition]:
    """Validate a ``where`` filter into a list of conditions (all must hold).

    Raises
    ------
    ValueError
        On an operator other than ``$eq``/``$in`` or a value that is not a metadata scalar.

    Examples
    --------
    >>> [(c.field, c.values) for c in parse_where({"lang": "en", "year": {"$in": [1, 2]}})]
    [('lang', ('en',)), ('year', (1, 2))]
    """
    if where is None:
        return []
    if not isinstance(where, Mapping):
        raise ValueError(f"where must be a mapping, got {type(where).__name__}")
    conditions: list[_Condition] = []
    for field, spec in where.items():
        if not isinstance(field, str) or not field or field.startswith("$"):
            raise ValueError(
                f"where keys must be metadata field names (operators $and/$or are not "
                f"supported), got {field!r}"
            )
        if isinstance(spec, Mapping):
            if len(spec) != 1:
                raise ValueError(f"where[{field!r}] must hold exactly one operator, got {spec!r}")
            ((op, value),) = spec.items()
            if op == "$eq":
                values: tuple[MetadataValue, ...] = (_check_scalar(value, f"where[{field!r}]"),)
            elif op == "$in":
                if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
                    raise ValueError(f"where[{field!r}]['$in'] must be a non-empty list")
                values = tuple(_check_scalar(v, f"where[{field!r}]['$in']") for v in value)
            else:
                raise ValueError(f"unsupported where operator {op!r} (use $eq or $in)")
        else:
            values = (_check_scalar(spec, f"where[{field!r}]"),)
        conditions.append(_Condition(field, values))
    return conditions


def _typed(value: MetadataValue) -> tuple[bool, MetadataValue]:
    # bool is an int subclass in Python (True == 1); keep them apart as Chroma does
    return (isinstance(value, bool), value)


def _row_filter(conditions: Sequence[_Condition]) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate on a metadata dict that is true when every condition holds."""
    allowed = [(c.field, frozenset(_typed(v) for v in c.values)) for c in conditions]

    def matches(meta: Mapping[str, Any]) -> bool:
        for name, values in allowed:
            value = meta.get(name, _MISSING)
            if value is _MISSING or _typed(value) not in values:
                return False
        return True

    return matches


def _to_chroma_where(conditions: Sequence[_Condition]) -> dict[str, Any] | None:
    clauses: list[dict[str, Any]] = [
        {c.field: {"$eq": c.values[0]}}
        if len(c.values) == 1
        else {c.field: {"$in": list(c.values)}}
        for c in conditions
    ]
    if not clauses:
        return None
    if len(clauses) == 1:
        return clauses[0]
    return {"$and": clauses}


def top_k(scores: FloatMatrix, k: int) -> list[int]:
    """Indices of the ``k`` largest ``scores``, best first (ties: lower index first).

    Examples
    --------
    >>> top_k(np.array([0.1, 0.9, 0.5, 0.9], dtype=np.float32), 3)
    [1, 3, 2]
    """
    n = int(scores.shape[0])
    if k <= 0 or n == 0:
        return []
    k = min(k, n)
    cand = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
    # include every index tied with the k-th score so the tie-break is deterministic
    threshold = scores[cand].min()
    cand = np.flatnonzero(scores >= threshold)
    order = np.lexsort((cand, -scores[cand].astype(np.float64)))
    return [int(i) for i in cand[order][:k]]


def _batches(n: int, size: int) -> Iterator[slice]:
    for start in range(0, n, size):
        yield slice(start, min(start + size, n))


def _check_dimension(dimension: int) -> int:
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension <= 0:
        raise ValueError(f"dimension must be a positive integer, got {dimension!r}")
    return dimension


# -- in-memory backend ---------------------------------------------------------------------
class InMemoryVectorIndex:
    """Exact cosine search over an L2-normalised ``float32`` matrix held in memory.

    Parameters
    ----------
    dimension : int
        Length of every vector.
    model_name : str
        Embedding model that produced the vectors; recorded by :meth:`persist` and checked by
        :meth:`load`.

    Examples
    --------
    >>> index = InMemoryVectorIndex(dimension=3, model_name="toy")
    >>> index.add(["a", "b"], [[1, 0, 0], [0, 1, 0]], metadatas=[{"lang": "en"}, {"lang": "fr"}])
    >>> index.query([1, 0.1, 0], k=1)[0][0]
    'a'
    >>> index.query([1, 0.1, 0], k=2, where={"lang": "fr"})[0][0]
    'b'
    """

    #: Method name recorded in the manifest of a persisted index.
    method = "vector_index.in_memory"

    def __init__(self, dimension: int, model_name: str) -> None:
        self.dimension = _check_dimension(dimension)
        self.model_name = model_name
        self._matrix: FloatMatrix = np.zeros((0, dimension), dtype=np.float32)
        self._size = 0
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._metadatas: list[dict[str, MetadataValue]] = []
        self._documents: list[str | None] = []

    def __len__(self) -> int:
        return self._size

    def __contains__(self, id_: object) -> bool:
        return id_ in self._rows

    @property
    def ids(self) -> list[str]:
        """Stored ids in row order."""
        return list(self._ids)

    def _reserve(self, extra: int) -> None:
        need = self._size + extra
        if need <= self._matrix.shape[0]:
            return
        capacity = max(need, 2 * self._matrix.shape[0], 16)
        grown = np.zeros((capacity, self.dimension), dtype=np.float32)
        grown[: self._size] = self._matrix[: self._size]
        self._matrix = grown

    def add(
        self,
        ids: Sequence[str],
        embeddings: npt.ArrayLike,
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        documents: Sequence[str | None] | None = None,
    ) -> None:
        """Insert records; an id already present is replaced.

        Raises
        ------
        ValueError
            On duplicate ids in the call, a vector of the wrong dimension, a NaN/infinite or
            zero vector, or metadata values that are not ``str``/``int``/``float``/``bool``.
        """
        id_list, vecs, metas, docs = _check_records(
            ids, embeddings, metadatas, documents, self.dimension
        )
        self._reserve(sum(1 for i in id_list if i not in self._rows))
        for id_, vec, meta, doc in zip(id_list, vecs, metas, docs, strict=True):
            row = self._rows.get(id_)
            if row is None:
                row = self._size
                self._size += 1
                self._rows[id_] = row
                self._ids.append(id_)
                self._metadatas.append(meta)
                self._documents.append(doc)
            else:
                self._metadatas[row] = meta
                self._documents[row] = doc
            self._matrix[row] = vec

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the records with these ids; ids not present are ignored."""
        drop = {self._rows[i] for i in _check_ids(ids) if i in self._rows}
        if not drop:
            return
        keep = [r for r in range(self._size) if r not in drop]
        self._matrix = np.ascontiguousarray(self._matrix[keep])
        self._ids = [self._ids[r] for r in keep]
        self._metadatas = [self._metadatas[r] for r in keep]
        self._documents = [self._documents[r] for r in keep]
        self._size = len(keep)
        self._rows = {id_: row for row, id_ in enumerate(self._ids)}

    def query(
        self, embedding: npt.ArrayLike, k: int, where: Where | None = None
    ) -> list[tuple[str, float]]:
        """Exact top-``k`` ``(id, cosine similarity)`` pairs, best first (ties: older first)."""
        k = _check_k(k)
        q = _check_query_vector(embedding, self.dimension)
        conditions = parse_where(where)
        if k == 0 or self._size == 0:
            return []
        scores = self._matrix[: self._size] @ q
        if conditions:
            # walk rows best first and stop at k matches: cheap unless the filter is rare
            matches = _row_filter(conditions)
            hits: list[tuple[str, float]] = []
            for row in np.argsort(-scores, kind="stable").tolist():
                if matches(self._metadatas[row]):
                    hits.append((self._ids[row], float(scores[row])))
                    if len(hits) == k:
                        break
            return hits
        return [(self._ids[r], float(scores[r])) for r in top_k(scores, k)]

    def get_embeddings(self, ids: Sequence[str]) -> FloatMatrix:
        """Stored vectors of ``ids`` in the order given; raises ``KeyError`` for unknown ids."""
        id_list = list(ids)
        missing = [i for i in id_list if i not in self._rows]
        if missing:
            raise KeyError(f"unknown ids: {missing[:5]}")
        return self._matrix[[self._rows[i] for i in id_list]].reshape(len(id_list), self.dimension)

    def get_metadata(self, id_: str) -> dict[str, MetadataValue]:
        """Metadata of one record (a copy); raises ``KeyError`` for an unknown id."""
        return dict(self._metadatas[self._rows[id_]])

    def get_document(self, id_: str) -> str | None:
        """Document text of one record; raises ``KeyError`` for an unknown id."""
        return self._documents[self._rows[id_]]

    # -- persistence -----------------------------------------------------------------------
    def persist(self, path: str | Path) -> None:
        """Write the index to directory ``path`` atomically (manifest, vectors, records)."""
        with atomic_directory(path) as tmp:
            np.save(tmp / "vectors.npy", self._matrix[: self._size], allow_pickle=False)
            atomic_write_json(
                tmp / "records.json",
                {"ids": self._ids, "metadatas": self._metadatas, "documents": self._documents},
                indent=None,
            )
            write_manifest(
                tmp,
                Manifest(
                    method=self.method,
                    models={"embedding": self.model_name},
                    embedding_dimension=self.dimension,
                    parameters={"count": self._size},
                ),
            )

    @classmethod
    def load(
        cls, path: str | Path, *, model_name: str | None = None, dimension: int | None = None
    ) -> InMemoryVectorIndex:
        """Load an index written by :meth:`persist`.

        Parameters
        ----------
        path : str or Path
            The directory.
        model_name, dimension : optional
            When given, must match the manifest (else :class:`IndexMismatchError`).

        Raises
        ------
        IndexNotFoundError
            If ``path`` holds no index.
        IndexMismatchError
            On a manifest that does not match, or files that disagree with each other.
        """
        src = Path(path)
        manifest = check_manifest(
            read_manifest(src), method=cls.method, embedding_model=model_name, dimension=dimension
        )
        if manifest.embedding_dimension is None or manifest.embedding_model is None:
            raise IndexMismatchError(f"{src}: manifest lacks the embedding model or dimension")
        try:
            matrix = np.load(src / "vectors.npy", allow_pickle=False)
            records = json.loads((src / "records.json").read_text(encoding="utf-8"))
            ids, metas, docs = records["ids"], records["metadatas"], records["documents"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise IndexMismatchError(f"{src}: unreadable vector index files: {exc}") from exc
        n = len(ids)
        if matrix.shape != (n, manifest.embedding_dimension) or len(metas) != n or len(docs) != n:
            raise IndexMismatchError(
                f"{src}: files disagree: vectors {matrix.shape}, {n} ids, {len(metas)} "
                f"metadatas, {len(docs)} documents, dimension {manifest.embedding_dimension}"
            )
        index = cls(manifest.embedding_dimension, manifest.embedding_model)
        if n:
            index._matrix = np.ascontiguousarray(matrix, dtype=np.float32)
            index._size = n
            index._ids = list(ids)
            index._rows = {id_: row for row, id_ in enumerate(index._ids)}
            index._metadatas = [dict(m) for m in metas]
            index._documents = list(docs)
        return index


# -- Chroma backend ------------------------------------------------------------------------
_META_PREFIX = "graphrag_integrations:"
_MODEL_KEY = _META_PREFIX + "embedding_model"
_DIM_KEY = _META_PREFIX + "dimension"
_FORMAT_KEY = _META_PREFIX + "format_version"
# HNSW settings Chroma can change on an existing collection
_HNSW_UPDATABLE = frozenset(
    {"ef_search", "num_threads", "batch_size", "sync_threshold", "resize_factor"}
)


class ChromaVectorIndex:
    """A vector index in a Chroma collection (cosine space, vectors supplied by us).

    Exactly one of ``path``, ``client`` and ``host`` selects where the collection lives;
    with none of them the collection is in memory (Chroma ``EphemeralClient``).

    Parameters
    ----------
    collection : str
        Collection name (3-512 characters of ``[a-zA-Z0-9._-]``).
    embedding_model : str
        Name of the model that produces the vectors; stored in the collection metadata and
        checked when an existing collection is opened.
    dimension : int
        Length of every vector; stored and checked like ``embedding_model``.
    path : str or Path, optional
        Directory of an embedded persistent store (``chromadb.PersistentClient``).
    client : chromadb client, optional
        A client you configured yourself.
    host, port, ssl, headers : optional
        Use a Chroma server over HTTP (``chromadb.HttpClient``).
    batch_size : int, optional
        Records per write; defaults to the client's maximum batch size.
    hnsw : mapping, optional
        Chroma HNSW settings for a new collection (``ef_search``, ``ef_construction``,
        ``max_neighbors``...; the space is always cosine). Chroma's defaults (``ef_search``
        100, ``max_neighbors`` 16) trade recall for speed; raise ``ef_search`` for better
        recall. On an existing collection ``ef_search`` (and the other settings Chroma lets
        you update) are changed; the build-time ones cannot be and are logged as a warning.

    Raises
    ------
    IndexMismatchError
        If the collection exists with another embedding model or dimension, was not created by
        this package, or does not use the cosine space.
    ValueError
        If more than one of ``path``, ``client`` and ``host`` is given.

    Notes
    -----
    Chroma never embeds anything here: the collection is created with
    ``embedding_function=None``, so no default model is downloaded. Telemetry is off for
    clients created here. In-process clients of one process share their state, so two
    indexes opened with the same ``path`` (or both in memory) and collection name see the
    same records.

    Examples
    --------
    >>> index = ChromaVectorIndex("demo-docs", embedding_model="toy", dimension=3)  # doctest: +SKIP
    >>> index.add(["a", "b"], [[1, 0, 0], [0, 1, 0]])  # doctest: +SKIP
    >>> index.query([1, 0.1, 0], k=1)  # doctest: +SKIP
    [('a', 0.995...)]
    """

    def __init__(
        self,
        collection: str = "graphrag",
        *,
        embedding_model: str,
        dimension: int,
        path: str | Path | None = None,
        client: Any = None,
        host: str | None = None,
        port: int = 8000,
        ssl: bool = False,
        headers: Mapping[str, str] | None = None,
        batch_size: int | None = None,
        hnsw: Mapping[str, Any] | None = None,
    ) -> None:
        chosen = [name for name, v in (("path", path), ("client", client), ("host", host)) if v]
        if len(chosen) > 1:
            raise ValueError(f"give at most one of path, client and host; got {chosen}")
        self.dimension = _check_dimension(dimension)
        self.model_name = embedding_model
        self.path = Path(path) if path is not None else None
        self.client: Any = (
            client if client is not None else _make_client(path, host, port, ssl, headers)
        )
        self.collection_name = collection
        hnsw_settings = dict(hnsw or {})
        if "space" in hnsw_settings:
            raise ValueError("hnsw['space'] cannot be set: the index always uses cosine")
        options: dict[str, Any] = {}
        if hnsw_settings:
            options["configuration"] = {"hnsw": {"space": "cosine", **hnsw_settings}}
        self._collection = _retry_busy(
            self.client.get_or_create_collection,
            name=collection,
            metadata={
                "hnsw:space": "cosine",
                _MODEL_KEY: embedding_model,
                _DIM_KEY: dimension,
                _FORMAT_KEY: 1,
            },
            embedding_function=None,
            **options,
        )
        self._check_collection()
        if hnsw_settings:
            self._apply_hnsw(hnsw_settings)
        getter = getattr(self.client, "get_max_batch_size", None)
        max_batch = int(getter() if getter is not None else self.client.max_batch_size)
        if batch_size is not None and batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.batch_size = min(batch_size or max_batch, max_batch)

    def _check_collection(self) -> None:
        meta = dict(self._collection.metadata or {})
        where = f"chroma collection {self.collection_name!r}"
        if _MODEL_KEY not in meta or _DIM_KEY not in meta:
            raise IndexMismatchError(
                f"{where} exists but was not created by graphrag-integrations (no embedding "
                f"model/dimension in its metadata {meta}); use another collection name"
            )
        config = getattr(self._collection, "configuration_json", None) or {}
        space = (config.get("hnsw") or {}).get("space") or meta.get("hnsw:space", "l2")
        if space != "cosine":
            raise IndexMismatchError(f"{where}: expected the 'cosine' space, found {space!r}")
        stored = Manifest(
            method="vector_index.chroma",
            models={"embedding": str(meta[_MODEL_KEY])},
            embedding_dimension=int(meta[_DIM_KEY]),
            format_version=int(meta.get(_FORMAT_KEY, 1)),
        )
        try:
            check_manifest(
                stored,
                method="vector_index.chroma",
                embedding_model=self.model_name,
                dimension=self.dimension,
            )
        except IndexMismatchError as exc:
            raise IndexMismatchError(f"{where}: {exc}") from exc

    def _apply_hnsw(self, wanted: Mapping[str, Any]) -> None:
        """Bring an existing collection's HNSW settings to ``wanted`` where Chroma allows."""
        config = getattr(self._collection, "configuration_json", None) or {}
        current = config.get("hnsw") or {}
        differ = {k: v for k, v in wanted.items() if current.get(k) != v}
        updatable = {k: v for k, v in differ.items() if k in _HNSW_UPDATABLE}
        fixed = {k: v for k, v in differ.items() if k not in _HNSW_UPDATABLE}
        if updatable:
            logger.info(
                "updating HNSW settings of chroma collection %r: %s",
                self.collection_name,
                updatable,
            )
            _retry_busy(self._collection.modify, configuration={"hnsw": updatable})
        if fixed:
            logger.warning(
                "chroma collection %r exists with HNSW %s; %s cannot be changed after creation",
                self.collection_name,
                {k: current.get(k) for k in fixed},
                fixed,
            )

    @property
    def collection(self) -> Any:
        """The underlying ``chromadb`` collection."""
        return self._collection

    def __len__(self) -> int:
        return int(_retry_busy(self._collection.count))

    def add(
        self,
        ids: Sequence[str],
        embeddings: npt.ArrayLike,
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        documents: Sequence[str | None] | None = None,
    ) -> None:
        """Insert records in batches; an id already present is replaced.

        Raises
        ------
        ValueError
            As :meth:`InMemoryVectorIndex.add`.
        """
        id_list, vecs, metas, docs = _check_records(
            ids, embeddings, metadatas, documents, self.dimension
        )
        for part in _batches(len(id_list), self.batch_size):
            batch_ids = id_list[part]
            # upsert would keep the old metadata/document where the new one is None:
            # delete existing records first so an add always replaces the whole record
            existing = _retry_busy(self._collection.get, ids=batch_ids, include=[])["ids"]
            if existing:
                _retry_busy(self._collection.delete, ids=list(existing))
            batch_metas = metas[part]
            batch_docs = docs[part]
            _retry_busy(
                self._collection.add,
                ids=batch_ids,
                embeddings=vecs[part],
                metadatas=[m or None for m in batch_metas] if any(batch_metas) else None,
                documents=batch_docs if any(d is not None for d in batch_docs) else None,
            )

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the records with these ids; ids not present are ignored."""
        id_list = _check_ids(ids)
        for part in _batches(len(id_list), self.batch_size):
            _retry_busy(self._collection.delete, ids=id_list[part])

    def query(
        self, embedding: npt.ArrayLike, k: int, where: Where | None = None
    ) -> list[tuple[str, float]]:
        """Top-``k`` ``(id, cosine similarity)`` pairs, best first (HNSW: approximate)."""
        k = _check_k(k)
        q = _check_query_vector(embedding, self.dimension)
        chroma_where = _to_chroma_where(parse_where(where))
        if k == 0:
            return []
        count = len(self)
        if count == 0:
            return []
        result = _retry_busy(
            self._collection.query,
            query_embeddings=[q.tolist()],
            n_results=min(k, count),
            where=chroma_where,
            include=["distances"],
        )
        ids = result["ids"][0]
        distances = result["distances"][0]
        return [(str(i), 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]

    def _get(self, ids: list[str], include: list[str]) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for part in _batches(len(ids), self.batch_size):
            res = _retry_busy(self._collection.get, ids=ids[part], include=include)
            for j, id_ in enumerate(res["ids"]):
                found[id_] = {key: res[key][j] for key in include}
        return found

    def get_embeddings(self, ids: Sequence[str]) -> FloatMatrix:
        """Stored vectors of ``ids`` in the order given; raises ``KeyError`` for unknown ids."""
        id_list = list(ids)
        found = self._get(list(dict.fromkeys(id_list)), ["embeddings"])
        missing = [i for i in id_list if i not in found]
        if missing:
            raise KeyError(f"unknown ids: {missing[:5]}")
        if not id_list:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.asarray([found[i]["embeddings"] for i in id_list], dtype=np.float32)

    def get_metadata(self, id_: str) -> dict[str, MetadataValue]:
        """Metadata of one record; raises ``KeyError`` for an unknown id."""
        return dict(self._get([id_], ["metadatas"])[id_]["metadatas"] or {})

    def get_document(self, id_: str) -> str | None:
        """Document text of one record; raises ``KeyError`` for an unknown id."""
        doc = self._get([id_], ["documents"])[id_]["documents"]
        return None if doc is None else str(doc)


def _retry_busy(call: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Run a chroma call, retrying with exponential back-off while SQLite says it is locked.

    Any other error, and a lock that outlasts ``_BUSY_RETRIES`` attempts (6.35 s of waiting), is
    raised unchanged.
    """
    wait = _BUSY_FIRST_WAIT_S
    for attempt in range(1, _BUSY_RETRIES + 1):
        try:
            return call(*args, **kwargs)
        except Exception as exc:
            if "database is locked" not in str(exc) or attempt == _BUSY_RETRIES:
                raise
            logger.info("chroma: database is locked, retry %d in %.2f s", attempt, wait)
            time.sleep(wait)
            wait *= 2
    raise AssertionError("unreachable")  # pragma: no cover


def _make_client(
    path: str | Path | None,
    host: str | None,
    port: int,
    ssl: bool,
    headers: Mapping[str, str] | None,
) -> Any:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if host:
        logger.debug("connecting to chroma server %s:%s", host, port)
        return chromadb.HttpClient(
            host=host, port=port, ssl=ssl, headers=dict(headers or {}), settings=settings
        )
    if path is not None:
        Path(path).mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=settings)
    return chromadb.EphemeralClient(settings=settings)
