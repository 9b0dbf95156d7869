"""Vector index in a Chroma collection (embedded persistent, in memory, or a server over HTTP).

``chromadb`` is imported only when a client is created. Chroma's HNSW search is approximate, so
on large collections its top-k can differ slightly from the exact one of
:class:`~graphrag_integrations.core.vector_store.memory.InMemoryVectorIndex`. Every Chroma call
goes through :func:`_retry_busy`: the embedded SQLite store can answer "database is locked"
at once instead of waiting when its own pooled connections race.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import tenacity

from graphrag_integrations.core.batching import slices
from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.persistence import Manifest, check_manifest
from graphrag_integrations.core.retrieval.filters import AllOf, AnyOf, Comparison, MetadataFilter
from graphrag_integrations.core.vector_store.chroma_identity import (
    client_location,
    collection_error,
)
from graphrag_integrations.core.vector_store.protocol import MetadataValue, Where
from graphrag_integrations.core.vector_store.validation import (
    CheckedVectorIndex,
    Records,
    check_dimension,
    check_ids,
)
from graphrag_integrations.errors import IndexMismatchError

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
# Chroma's embedded SQLite can answer "database is locked" at once instead of waiting, when
# its own pooled connections race (seen under load: a collection update right after an add).
_BUSY_RETRIES = 8
_BUSY_FIRST_WAIT_S = 0.05


_CHROMA_ORDER = {"gt": "$gt", "gte": "$gte", "lt": "$lt", "lte": "$lte"}


def _to_chroma_where(where: MetadataFilter | None) -> dict[str, Any] | None:
    """The Chroma ``where`` clause of ``where``, or ``None`` if Chroma cannot express it with
    the semantics of :mod:`graphrag_integrations.core.retrieval.filters` (then the caller filters).

    Chroma's ``$ne``/``$nin`` match records without the key, its ``$gt``... take numbers only
    and its ``$in`` one value type: those, ``NOT`` groups and the text and list operators are
    not translated.

    Examples
    --------
    >>> from graphrag_integrations.core.retrieval.filters import parse_filter
    >>> _to_chroma_where(parse_filter({"a": 1, "b": {"$gt": 2}}))
    {'$and': [{'a': {'$eq': 1}}, {'b': {'$gt': 2}}]}
    >>> _to_chroma_where(parse_filter({"a": {"$ne": 1}})) is None
    True
    """
    if where is None:
        return None
    if isinstance(where, (AllOf, AnyOf)):
        clauses = [_to_chroma_where(f) for f in where.filters]
        if any(c is None for c in clauses):
            return None
        if len(clauses) == 1:
            return clauses[0]
        return {"$and" if isinstance(where, AllOf) else "$or": clauses}
    if not isinstance(where, Comparison):
        return None
    op, value = where.operator, where.value
    if op == "eq":
        return {where.key: {"$eq": value}}
    if op in _CHROMA_ORDER and isinstance(value, (int, float)) and not isinstance(value, bool):
        return {where.key: {_CHROMA_ORDER[op]: value}}
    if op == "in" and isinstance(value, tuple) and len({type(v) for v in value}) == 1:
        return {where.key: {"$in": list(value)}}
    return None


_META_PREFIX = "graphrag_integrations:"
_MODEL_KEY = _META_PREFIX + "embedding_model"
_DIM_KEY = _META_PREFIX + "dimension"
_FORMAT_KEY = _META_PREFIX + "format_version"
_INDEX_ID_KEY = _META_PREFIX + "index_id"
_LAYER_KEY = _META_PREFIX + "layer"
_METHOD_KEY = _META_PREFIX + "method"
_CHECKSUM_KEY = _META_PREFIX + "content_checksum"
_FIX = (
    "use another collection prefix, pass overwrite=True to replace it, or remove it "
    "(drop_index_collections / ChromaVectorIndex.drop)"
)
_NAME = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9._-]{1,510})[a-zA-Z0-9]")


def check_collection_name(name: str) -> str:
    """Return ``name`` if Chroma accepts it as a collection name, else raise ``ValueError``.

    Chroma's rules: 3-512 characters of ``[a-zA-Z0-9._-]``, starting and ending with a letter
    or digit, no ``..``, not an IPv4 address.

    Examples
    --------
    >>> check_collection_name("gi-0123abcd-units")
    'gi-0123abcd-units'
    >>> check_collection_name("my docs")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: invalid chroma collection name 'my docs': use 3-512 characters of ...
    """
    ok = isinstance(name, str) and _NAME.fullmatch(name) is not None and ".." not in name
    if ok:
        try:
            ipaddress.IPv4Address(name)
            ok = False
        except ValueError:
            pass
    if not ok:
        raise ValueError(
            f"invalid chroma collection name {name!r}: use 3-512 characters of [a-zA-Z0-9._-], "
            "starting and ending with a letter or digit, without '..' and not an IP address"
        )
    return name


@dataclass(frozen=True)
class CollectionOwner:
    """The index a collection holds vectors for, recorded in the collection's metadata.

    Parameters
    ----------
    index_id : str
        The index's id (:attr:`IndexStore.index_id
        <graphrag_integrations.core.index.store.IndexStore.index_id>`, kept across persist and
        load).
    layer : str
        The vector layer of that index (``"units"``, ``"chunks"``...).
    method : str
        The index's method when known (informative: the id already implies it).

    Examples
    --------
    >>> CollectionOwner("0123abcd", "units").describe()
    "layer 'units' of index 0123abcd"
    """

    index_id: str
    layer: str
    method: str = ""

    def describe(self) -> str:
        """Human-readable ``layer ... of index ...`` (for messages)."""
        method = f" ({self.method})" if self.method else ""
        return f"layer {self.layer!r} of index {self.index_id}{method}"

    @classmethod
    def from_metadata(cls, meta: Mapping[str, Any]) -> CollectionOwner | None:
        """The owner recorded in a collection's metadata, ``None`` if there is none."""
        index_id = meta.get(_INDEX_ID_KEY)
        if not index_id:
            return None
        return cls(str(index_id), str(meta.get(_LAYER_KEY, "")), str(meta.get(_METHOD_KEY, "")))

    def metadata(self) -> dict[str, str]:
        """The collection-metadata entries recording this owner."""
        return {_INDEX_ID_KEY: self.index_id, _LAYER_KEY: self.layer, _METHOD_KEY: self.method}


# HNSW settings Chroma can change on an existing collection
_HNSW_UPDATABLE = frozenset(
    {"ef_search", "num_threads", "batch_size", "sync_threshold", "resize_factor"}
)


class ChromaVectorIndex(CheckedVectorIndex):
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
    timeout, connect_timeout, retries : optional
        With ``host``: the read and connect timeouts of every request (seconds; 60 and 5)
        and the attempts after the first for a transient error (2), then a one-line
        ``TimeoutError`` / ``ConnectionError``
        (:mod:`~graphrag_integrations.core.vector_store.chroma_http`).
    batch_size : int, optional
        Records per write; defaults to the client's maximum batch size.
    hnsw : mapping, optional
        Chroma HNSW settings for a new collection (``ef_search``, ``ef_construction``,
        ``max_neighbors``...; the space is always cosine). Chroma's defaults (``ef_search``
        100, ``max_neighbors`` 16) trade recall for speed; raise ``ef_search`` for better
        recall. On an existing collection ``ef_search`` (and the other settings Chroma lets
        you update) are changed; the build-time ones cannot be and are logged as a warning.
    owner : CollectionOwner, optional
        The index layer the collection belongs to (recorded in a new collection's metadata).
        An existing collection must record the same owner: one holding another index's
        vectors (or no owner) is refused, so an index never reads or writes another's.
        ``None``: no owner check (a collection you manage yourself).
    overwrite : bool
        Delete an existing collection of that name first (whatever it holds) and start empty.

    Raises
    ------
    IndexMismatchError
        If the collection exists with another owner, embedding model or dimension, was not
        created by this package, or does not use the cosine space.
    ValueError
        If more than one of ``path``, ``client`` and ``host`` is given, or the collection
        name breaks Chroma's rules (:func:`check_collection_name`).

    Notes
    -----
    Chroma never embeds anything here: the collection is created with
    ``embedding_function=None``, so no default model is downloaded. Telemetry is off for
    clients created here. In-process clients of one process share their state, so two
    indexes opened with the same ``path`` (or both in memory) and collection name see the
    same records.

    A collection's metadata also holds a *content checksum* (:attr:`content_checksum`): the
    checksum of the persisted index whose vectors it holds, set by
    :meth:`set_content_checksum` after a copy or a persist, and cleared by the first write
    (``add`` / ``delete``) so it never vouches for content that changed since.

    Examples
    --------
    An in-memory collection (give ``path=`` for a persistent one):

    >>> index = ChromaVectorIndex("doctest-demo", embedding_model="toy", dimension=3)
    >>> index.add(["a", "b"], [[1, 0, 0], [0, 1, 0]], metadatas=[{"lang": "en"}, None])
    >>> [(id_, round(score, 3)) for id_, score in index.query([1, 0.1, 0], k=2)]
    [('a', 0.995), ('b', 0.1)]
    >>> index.query([1, 0.1, 0], k=2, where={"lang": "en"})[0][0]
    'a'
    >>> index.delete(["a", "b"])  # in-memory clients of one process share their collections
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
        timeout: float | None = None,
        connect_timeout: float | None = None,
        retries: int | None = None,
        batch_size: int | None = None,
        hnsw: Mapping[str, Any] | None = None,
        owner: CollectionOwner | None = None,
        overwrite: bool = False,
    ) -> None:
        chosen = [name for name, v in (("path", path), ("client", client), ("host", host)) if v]
        if len(chosen) > 1:
            raise ValueError(f"give at most one of path, client and host; got {chosen}")
        self.dimension = check_dimension(dimension)
        self.model_name = embedding_model
        self.collection_name = check_collection_name(collection)
        self.owner = owner
        hnsw_settings = dict(hnsw or {})
        if "space" in hnsw_settings:
            raise ValueError("hnsw['space'] cannot be set: the index always uses cosine")
        self.path = Path(path) if path is not None else None
        self.client: Any = (
            client
            if client is not None
            else _make_client(
                path, host, port, ssl, headers, http_options(timeout, connect_timeout, retries)
            )
        )
        #: Queries whose filter Chroma cannot express, evaluated here (logged, counted).
        self.client_side_filters = 0
        options: dict[str, Any] = {}
        if hnsw_settings:
            options["configuration"] = {"hnsw": {"space": "cosine", **hnsw_settings}}
        self._create_args: dict[str, Any] = {
            "name": collection,
            "metadata": {
                "hnsw:space": "cosine",
                _MODEL_KEY: embedding_model,
                _DIM_KEY: dimension,
                _FORMAT_KEY: 1,
                **(owner.metadata() if owner is not None else {}),
                _CHECKSUM_KEY: "",
            },
            "embedding_function": None,
            **options,
        }
        if overwrite and self._drop_if_exists():
            logger.warning("overwrite=True: deleted the existing chroma collection %r", collection)
        self._collection = _retry_busy(self.client.get_or_create_collection, **self._create_args)
        self._check_collection()
        self._checksum: str | None = (
            str(self._collection.metadata.get(_CHECKSUM_KEY) or "") or None
            if self._collection.metadata
            else None
        )
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
        stored_owner = CollectionOwner.from_metadata(meta)
        if self.owner is not None and (
            stored_owner is None
            or (stored_owner.index_id, stored_owner.layer)
            != (self.owner.index_id, self.owner.layer)
        ):
            held = "an index without an id" if stored_owner is None else stored_owner.describe()
            raise IndexMismatchError(
                f"{where} holds the vectors of {held}, not of {self.owner.describe()}; {_FIX}"
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
            raise IndexMismatchError(f"{where}: {exc}; {_FIX}") from exc

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
            self._on_collection(self._collection.modify, configuration={"hnsw": updatable})
        if fixed:
            logger.warning(
                "chroma collection %r exists with HNSW %s; %s cannot be changed after creation",
                self.collection_name,
                {k: current.get(k) for k in fixed},
                fixed,
            )

    def __repr__(self) -> str:
        return f"ChromaVectorIndex({self.collection_name!r})"

    def _on_collection(self, call: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """A call of the collection (through :func:`_retry_busy`); a collection the server
        no longer knows (restarted without its data, deleted, made again) is a one-line
        ``IndexMismatchError`` naming the server and how to rebuild
        (:mod:`~graphrag_integrations.core.vector_store.chroma_identity`)."""
        try:
            return _retry_busy(call, *args, **kwargs)
        except Exception as exc:
            if not _is_not_found(exc):
                raise
            raise self._lost() from exc

    def _lost(self) -> IndexMismatchError:
        """The error of this collection gone from the server (module notes of
        :mod:`~graphrag_integrations.core.vector_store.chroma_identity`)."""
        found: str | None = None
        try:
            now = _retry_busy(self.client.get_collection, self.collection_name)
        except Exception as exc:
            if not _is_not_found(exc):
                raise
        else:
            stored = CollectionOwner.from_metadata(dict(now.metadata or {}))
            found = "" if stored is None else stored.describe()
        owner = "" if self.owner is None else self.owner.describe()
        if found is not None and self.owner is None:
            found = ""  # no owner to compare: the name is held by another collection
        return collection_error(client_location(self.client), self.collection_name, owner, found)

    @property
    def collection(self) -> Any:
        """The underlying ``chromadb`` collection."""
        return self._collection

    @property
    def content_checksum(self) -> str | None:
        """Checksum of the persisted index this collection holds a copy of (``None``: unknown).

        Set by :meth:`set_content_checksum`; the first ``add`` / ``delete`` clears it.
        """
        return self._checksum

    def set_content_checksum(self, checksum: str | None) -> None:
        """Record (or clear, with ``None``) in the collection's metadata the checksum of the
        persisted index whose vectors it now holds exactly."""
        meta = {
            k: v for k, v in (self._collection.metadata or {}).items() if not k.startswith("hnsw:")
        }
        meta[_CHECKSUM_KEY] = checksum or ""
        self._on_collection(self._collection.modify, metadata=meta)
        self._checksum = checksum or None

    def _changing(self) -> None:
        if self._checksum is not None:
            self.set_content_checksum(None)

    def _drop_if_exists(self) -> bool:
        try:
            _retry_busy(self.client.delete_collection, self.collection_name)
        except Exception as exc:
            if not _is_not_found(exc):
                raise
            return False
        return True

    def drop(self) -> None:
        """Delete the collection from Chroma (this object is unusable afterwards)."""
        self._drop_if_exists()
        logger.info("dropped chroma collection %r", self.collection_name)

    def clear(self) -> None:
        """Remove every record: the collection is deleted and made again, empty, with the same
        owner, settings and an empty content checksum."""
        self._drop_if_exists()
        self._collection = _retry_busy(self.client.get_or_create_collection, **self._create_args)
        self._checksum = None

    def __len__(self) -> int:
        return int(self._on_collection(self._collection.count))

    def _add(self, records: Records) -> None:
        """Insert in batches (:attr:`batch_size`)."""
        id_list, vecs, metas, docs = records
        if id_list:
            self._changing()
        for part in slices(len(id_list), self.batch_size):
            batch_ids = id_list[part]
            # upsert would keep the old metadata/document where the new one is None:
            # delete existing records first so an add always replaces the whole record
            existing = self._on_collection(self._collection.get, ids=batch_ids, include=[])["ids"]
            if existing:
                self._on_collection(self._collection.delete, ids=list(existing))
            batch_metas = metas[part]
            batch_docs = docs[part]
            self._on_collection(
                self._collection.add,
                ids=batch_ids,
                embeddings=vecs[part],
                metadatas=[m or None for m in batch_metas] if any(batch_metas) else None,
                documents=batch_docs if any(d is not None for d in batch_docs) else None,
            )

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the records with these ids; ids not present are ignored."""
        id_list = check_ids(ids)
        if id_list:
            self._changing()
        for part in slices(len(id_list), self.batch_size):
            self._on_collection(self._collection.delete, ids=id_list[part])

    def _query(
        self, q: FloatMatrix, k: int, flt: MetadataFilter | None, where: Where | None
    ) -> list[tuple[str, float]]:
        """Top-``k`` by the collection's HNSW index (approximate)."""
        count = len(self)
        if count == 0:
            return []
        chroma_where = _to_chroma_where(flt)
        if flt is not None and chroma_where is None:
            # Chroma cannot express this filter: rank every record, filter their metadata here
            self.client_side_filters += 1
            logger.info(
                "chroma collection %r: filter %r evaluated client-side (all %d records ranked)",
                self.collection_name,
                where,
                count,
            )
            result = self._on_collection(
                self._collection.query,
                query_embeddings=[q.tolist()],
                n_results=count,
                include=["distances", "metadatas"],
            )
            hits = [
                (str(i), 1.0 - float(d))
                for i, d, meta in zip(
                    result["ids"][0], result["distances"][0], result["metadatas"][0], strict=True
                )
                if flt.matches(meta or {})
            ]
            return hits[:k]
        result = self._on_collection(
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
        for part in slices(len(ids), self.batch_size):
            res = self._on_collection(self._collection.get, ids=ids[part], include=include)
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


def _log_locked(state: tenacity.RetryCallState) -> None:
    logger.info(
        "chroma: database is locked, retry %d in %.2f s", state.attempt_number, state.upcoming_sleep
    )


@tenacity.retry(
    retry=tenacity.retry_if_exception(lambda exc: "database is locked" in str(exc)),
    stop=tenacity.stop_after_attempt(_BUSY_RETRIES),
    wait=tenacity.wait_exponential(multiplier=_BUSY_FIRST_WAIT_S),
    before_sleep=_log_locked,
    reraise=True,
)
def _retry_busy(call: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Run a chroma call, retrying with exponential back-off while SQLite says it is locked.

    Any other error, and a lock that outlasts ``_BUSY_RETRIES`` attempts (6.35 s of waiting), is
    raised unchanged.
    """
    return call(*args, **kwargs)


def _is_not_found(exc: Exception) -> bool:
    """Whether a chroma error says the collection does not exist (the class varies by
    chromadb version and client: ``NotFoundError``, ``ValueError``...)."""
    return type(exc).__name__ in {"NotFoundError", "InvalidCollectionException"} or (
        "does not exist" in str(exc)
    )


def http_options(
    timeout: float | None, connect_timeout: float | None, retries: int | None
) -> dict[str, Any]:
    """The given ``timeout`` / ``connect_timeout`` / ``retries`` of a server client, as
    keyword arguments of
    :class:`~graphrag_integrations.core.vector_store.chroma_http.HTTPSettings` (the
    others keep its defaults)."""
    given = {"timeout_s": timeout, "connect_timeout_s": connect_timeout, "retries": retries}
    return {key: value for key, value in given.items() if value is not None}


def _make_client(
    path: str | Path | None,
    host: str | None,
    port: int,
    ssl: bool,
    headers: Mapping[str, str] | None,
    http: Mapping[str, Any] | None = None,
) -> Any:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if host:
        from graphrag_integrations.core.vector_store.chroma_http import HTTPSettings, http_client

        logger.debug("connecting to chroma server %s:%s", host, port)
        return http_client(host, port, ssl, headers, HTTPSettings(**dict(http or {})), settings)
    if http:
        raise ValueError(f"{sorted(http)} apply to a Chroma server (host=) only")
    if path is not None:
        Path(path).mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=settings)
    return chromadb.EphemeralClient(settings=settings)
