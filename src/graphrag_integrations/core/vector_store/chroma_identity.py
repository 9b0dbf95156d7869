"""Is the collection still ours? What a Chroma vector layer says when its collection is gone.

A :class:`~graphrag_integrations.core.vector_store.chroma.ChromaVectorIndex` works on one
collection object, which Chroma knows by a random id made when the collection is created. A
Chroma server that comes back from a restart without its data (a wiped ``--path``, another
volume), or a collection deleted or made again by someone else (another index, a load of
the same index into the same Chroma), leaves that id unknown to the server: every request of
the layer then gets chromadb's ``NotFoundError: Collection [<id>] does not exist.``, which
names neither the server nor what to do, and an index would fail on it in every query and
write, rollbacks included.

The layer turns that error, on its first read or write after the change, into one line
(:func:`collection_error`): :class:`~graphrag_integrations.errors.IndexMismatchError` naming
the server's URL (:func:`client_location`), the collection and its owner, what happened (the
collection is gone, or another one holds the name now: :func:`what_happened`) and how to
rebuild (the same remedy as a lost FalkorDB graph,
:mod:`~graphrag_integrations.core.graph.falkordb_identity`).

Examples
--------
>>> print(collection_error("http://127.0.0.1:8000", "gi-0123-units", "layer 'units' of index "
...     "0123", None))  # doctest: +NORMALIZE_WHITESPACE
http://127.0.0.1:8000: chroma collection 'gi-0123-units' (layer 'units' of index 0123) is gone
(the server restarted without its data, or the collection was deleted); rebuild it:
X.load(path, vector_index=ChromaVectors(...)) from a folder persisted with these vectors
refills it, or `graphrag-integrations index --overwrite` from the source documents
"""

from __future__ import annotations

from typing import Any

from graphrag_integrations.errors import IndexMismatchError

_REBUILD = (
    "rebuild it: X.load(path, vector_index=ChromaVectors(...)) from a folder persisted with "
    "these vectors refills it, or `graphrag-integrations index --overwrite` from the source "
    "documents"
)


def client_location(client: Any) -> str:
    """Where a chromadb ``client`` keeps its collections: the server's URL, the folder of an
    embedded persistent client, or ``in-memory Chroma``.

    >>> import chromadb
    >>> from chromadb.config import Settings
    >>> client_location(chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False)))
    'in-memory Chroma'
    """
    getter = getattr(client, "get_settings", None)
    settings = getter() if callable(getter) else None
    host = getattr(settings, "chroma_server_host", None)
    if host:
        scheme = "https" if getattr(settings, "chroma_server_ssl_enabled", False) else "http"
        return f"{scheme}://{host}:{getattr(settings, 'chroma_server_http_port', '')}"
    if getattr(settings, "is_persistent", False):
        return f"Chroma folder {getattr(settings, 'persist_directory', '?')}"
    return "in-memory Chroma"


def what_happened(found_owner: str | None, owner: str) -> str:
    """What became of a collection whose id the server no longer knows: ``found_owner`` is
    the owner described by the collection now holding the name (``None``: there is none; an
    empty string: one of no index).

    >>> what_happened("layer 'units' of index ab12", "layer 'units' of index cd34")
    "was replaced by another collection of that name (layer 'units' of index ab12)"
    """
    if found_owner is None:
        return "is gone (the server restarted without its data, or the collection was deleted)"
    if found_owner == owner:
        return (
            "was made again by another client (the server restarted without its data and the "
            "index was loaded again elsewhere, or the collection was refilled)"
        )
    return f"was replaced by another collection of that name ({found_owner or 'of no index'})"


def collection_error(
    location: str, name: str, owner: str, found_owner: str | None
) -> IndexMismatchError:
    """The one-line error of a collection the server no longer knows (module notes)."""
    whose = f" ({owner})" if owner else ""
    return IndexMismatchError(
        f"{location}: chroma collection {name!r}{whose} {what_happened(found_owner, owner)}; "
        f"{_REBUILD}"
    )
