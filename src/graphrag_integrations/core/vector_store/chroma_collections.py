"""The Chroma collections of graph indexes: naming, the layer factory, listing and removal.

A graph index keeps each vector layer in one collection named ``<prefix>-<layer>``
(:func:`collection_name`). The prefix is the one you give to :class:`ChromaVectors`, or
``gi-<first 16 hex digits of the index id>`` (:func:`default_prefix`): the index id is made when
an index is built and kept across persist and load
(:attr:`~graphrag_integrations.core.index.store.IndexStore.index_id`), so loading the same
index into the same Chroma again finds the same collections. Each collection records its owner
(:class:`~graphrag_integrations.core.vector_store.chroma.CollectionOwner`: index id and layer)
and the content checksum of the copy it holds; :func:`index_collections` lists the
collections this package made, :func:`drop_index_collections` removes those of one index and
never any other.

Examples
--------
>>> factory = ChromaVectors(prefix="doctest-names")
>>> index = factory.open_layer("units", 2, "toy", index_id="0123abcd")
>>> index.collection_name
'doctest-names-units'
>>> [(c.name, c.index_id, c.count) for c in index_collections(factory.client, "0123abcd")]
[('doctest-names-units', '0123abcd', 0)]
>>> drop_index_collections(factory.client, "0123abcd")
['doctest-names-units']
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphrag_integrations.core.vector_store.chroma import (
    _CHECKSUM_KEY,
    _DIM_KEY,
    _MODEL_KEY,
    ChromaVectorIndex,
    CollectionOwner,
    _make_client,
    _retry_busy,
    check_collection_name,
    http_options,
)

logger = logging.getLogger(__name__)

# ChromaVectors options that configure the client rather than each collection
_CLIENT_OPTIONS = frozenset(
    {"host", "port", "ssl", "headers", "timeout", "connect_timeout", "retries"}
)

#: Start of the prefix of an index that was given none (see :func:`default_prefix`).
DEFAULT_PREFIX_START = "gi-"


def default_prefix(index_id: str) -> str:
    """The collection prefix of an index given no prefix: ``gi-`` and 16 hex digits of its id.

    Examples
    --------
    >>> default_prefix("0123456789abcdef0123456789abcdef")
    'gi-0123456789abcdef'
    """
    return DEFAULT_PREFIX_START + index_id[:16]


def collection_name(prefix: str, layer: str) -> str:
    """``<prefix>-<layer>``, checked against Chroma's naming rules.

    Raises
    ------
    ValueError
        If the name is not a valid Chroma collection name.

    Examples
    --------
    >>> collection_name("my-docs", "units")
    'my-docs-units'
    """
    return check_collection_name(f"{prefix}-{layer}")


@dataclass(frozen=True)
class CollectionInfo:
    """One collection made by this package, as :func:`index_collections` lists it."""

    name: str
    index_id: str | None
    layer: str | None
    method: str | None
    embedding_model: str
    dimension: int
    count: int
    content_checksum: str | None


def index_collections(client: Any, index_id: str | None = None) -> list[CollectionInfo]:
    """The collections of ``client`` made by this package (of one index if ``index_id``).

    Collections without this package's metadata are never listed. Sorted by name.

    Parameters
    ----------
    client : chromadb client
        E.g. ``ChromaVectors(...).client``, ``chromadb.PersistentClient(path)`` or
        ``chromadb.HttpClient(host, port)``.
    index_id : str, optional
        Keep the collections of this index only (:attr:`IndexStore.index_id
        <graphrag_integrations.core.index.store.IndexStore.index_id>`, or
        :func:`~graphrag_integrations.core.index.store_files.stored_index_id` of a persisted
        index).
    """
    found: list[CollectionInfo] = []
    for collection in _all_collections(client):
        meta = dict(collection.metadata or {})
        if _MODEL_KEY not in meta or _DIM_KEY not in meta:
            continue
        owner = CollectionOwner.from_metadata(meta)
        if index_id is not None and (owner is None or owner.index_id != index_id):
            continue
        found.append(
            CollectionInfo(
                name=collection.name,
                index_id=None if owner is None else owner.index_id,
                layer=None if owner is None else owner.layer,
                method=(owner.method or None) if owner is not None else None,
                embedding_model=str(meta[_MODEL_KEY]),
                dimension=int(meta[_DIM_KEY]),
                count=int(_retry_busy(collection.count)),
                content_checksum=str(meta.get(_CHECKSUM_KEY) or "") or None,
            )
        )
    return sorted(found, key=lambda c: c.name)


def _all_collections(client: Any, page: int = 100) -> list[Any]:
    """Every collection of ``client``, read page by page (a server may cap one reply)."""
    out: list[Any] = []
    while True:
        batch = list(_retry_busy(client.list_collections, limit=page, offset=len(out)))
        out.extend(batch)
        if len(batch) < page:
            return out


def drop_index_collections(client: Any, index_id: str) -> list[str]:
    """Delete the collections that record ``index_id`` as their owner; returns their names.

    Only collections this package made for that index are removed (see
    :func:`index_collections`), never another index's or a foreign one.

    Raises
    ------
    ValueError
        If ``index_id`` is empty.
    """
    if not index_id:
        raise ValueError("index_id must be a non-empty string")
    names = [c.name for c in index_collections(client, index_id)]
    for name in names:
        _retry_busy(client.delete_collection, name)
        logger.info("dropped chroma collection %r of index %s", name, index_id)
    return names


class ChromaVectors:
    """Factory putting each vector layer of an index in a Chroma collection ``<prefix>-<layer>``.

    Parameters
    ----------
    path : str or Path, optional
        Embedded persistent Chroma directory; ``None``: in-memory Chroma (or ``client`` /
        ``host`` in ``options``).
    prefix : str, optional
        Collection-name prefix. ``None``: :func:`default_prefix` of the index id, so loading
        the same index again (in this process, or into the same persistent or server Chroma)
        reuses its collections; two different indexes never share one.
    overwrite : bool
        Replace collections of these names that hold another index's vectors (deleted and made
        again) instead of refusing them.
    **options
        Passed to :class:`~graphrag_integrations.core.vector_store.chroma.ChromaVectorIndex`
        (``client``, ``host``, ``port``, ``ssl``, ``headers``, ``hnsw``, ``batch_size``; with
        ``host``: ``timeout``, ``connect_timeout``, ``retries`` of every request, see
        :mod:`~graphrag_integrations.core.vector_store.chroma_http`).

    Attributes
    ----------
    client : chromadb client
        The client every layer uses (made on first use).

    Notes
    -----
    Two index objects opened on the same collections (the same index loaded twice into one
    Chroma) share them: an insert through one is seen by the other's vector search but not by
    its graph. Give a copy you mutate independently its own ``prefix``.

    Examples
    --------
    >>> factory = ChromaVectors(prefix="demo")
    >>> factory.prefix, factory.name("units", "0123456789abcdef")
    ('demo', 'demo-units')

    ``IndexStore(..., factory=ChromaVectors())`` or ``ClueIndex(vector_index=ChromaVectors())``
    put the vectors in Chroma.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        prefix: str | None = None,
        overwrite: bool = False,
        **options: Any,
    ) -> None:
        if prefix is not None:
            collection_name(prefix, "layer")  # a bad prefix fails here, not at the first vector
        if path is not None and ("client" in options or "host" in options):
            raise ValueError("give at most one of path, client and host")
        self.path = path
        self.prefix = prefix
        self.overwrite = overwrite
        self.options = dict(options)
        self._client: Any = self.options.pop("client", None)
        self._anonymous_id = uuid.uuid4().hex

    @property
    def client(self) -> Any:
        """The chromadb client of every layer (created on first use)."""
        if self._client is None:
            self._client = _make_client(
                self.path,
                self.options.get("host"),
                int(self.options.get("port", 8000)),
                bool(self.options.get("ssl", False)),
                self.options.get("headers"),
                http_options(
                    self.options.get("timeout"),
                    self.options.get("connect_timeout"),
                    self.options.get("retries"),
                ),
            )
        return self._client

    def name(self, layer: str, index_id: str) -> str:
        """Collection name of ``layer`` of the index ``index_id``."""
        return collection_name(self.prefix or default_prefix(index_id), layer)

    def open_layer(
        self,
        layer: str,
        dimension: int,
        model_name: str,
        *,
        index_id: str,
        method: str = "",
    ) -> ChromaVectorIndex:
        """Open (or create) the collection of ``layer`` of the index ``index_id``.

        Raises
        ------
        IndexMismatchError
            If the collection holds another index's vectors (and not ``overwrite``), or
            another embedding model or dimension.
        """
        extra = {k: v for k, v in self.options.items() if k not in _CLIENT_OPTIONS}
        return ChromaVectorIndex(
            self.name(layer, index_id),
            embedding_model=model_name,
            dimension=dimension,
            client=self.client,
            owner=CollectionOwner(index_id, layer, method),
            overwrite=self.overwrite,
            **extra,
        )

    def __call__(self, layer: str, dimension: int, model_name: str) -> ChromaVectorIndex:
        """A layer of an anonymous index (a random id made once per factory); an
        :class:`~graphrag_integrations.core.index.store.IndexStore` calls :meth:`open_layer`
        with its own id instead."""
        return self.open_layer(layer, dimension, model_name, index_id=self._anonymous_id)

    def collections(self, index_id: str | None = None) -> list[CollectionInfo]:
        """:func:`index_collections` of this factory's client."""
        return index_collections(self.client, index_id)

    def drop(self, index_id: str) -> list[str]:
        """:func:`drop_index_collections` of this factory's client."""
        return drop_index_collections(self.client, index_id)

    def __repr__(self) -> str:
        return f"ChromaVectors(path={self.path!r}, prefix={self.prefix!r})"
