"""The files of a persisted index store and what can be read from them alone.

An :class:`~graphrag_integrations.core.index.store.IndexStore` persists ``store.json`` (its
index id and, for a database graph, the graph's write version), ``graph.json`` (or, for a
graph in a database such as FalkorDB, the pointer ``graph.pointer.json``) and
``vectors/<layer>/``. This module names them and reads them: :func:`content_checksum`,
:func:`stored_index_id`, :func:`stored_graph_version`, :func:`open_saved_graph`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any, cast

from graphrag_integrations.core.graph.backends import is_in_process
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.persistence import MANIFEST_NAME, file_sha256, read_manifest
from graphrag_integrations.errors import CorruptIndexError

logger = logging.getLogger(__name__)

GRAPH_FILE = "graph.json"
#: What a database graph backend (e.g. FalkorDB) saves instead of ``graph.json``: where the
#: graph is (never credentials).
POINTER_FILE = "graph.pointer.json"
VECTORS_DIR = "vectors"
#: The store's identity file: ``{"index_id": "<32 hex digits>"}``.
STORE_FILE = "store.json"


def content_checksum(directory: str | Path) -> str:
    """SHA-256 over the files of a persisted store that its vectors depend on.

    ``graph.json`` (the metadata of the vectors comes from the graph) and every file under
    ``vectors/``, by relative path: two directories have the same checksum exactly when
    their files are equal. A Chroma collection records the checksum of the copy it holds.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / GRAPH_FILE).write_text("{}")
    >>> len(content_checksum(d))
    64
    """
    root = Path(directory)
    files = [root / name for name in (GRAPH_FILE, POINTER_FILE) if (root / name).is_file()]
    if (root / VECTORS_DIR).is_dir():
        files += sorted(p for p in (root / VECTORS_DIR).rglob("*") if p.is_file())
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.relative_to(root).as_posix()}\0{file_sha256(path)}\n".encode())
    return digest.hexdigest()


def stored_index_id(directory: str | Path) -> str:
    """The index id of a persisted store (its ``store.json``).

    An index written before ``store.json`` existed gets an id derived from its content
    (:func:`content_checksum`), so loads of that directory agree on it until it is written
    again (which records the id).

    Raises
    ------
    CorruptIndexError
        If ``store.json`` exists but does not hold an index id.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from graphrag_integrations.core.index.store import IndexStore
    >>> store = IndexStore("toy", {})
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> store.persist(d)
    >>> stored_index_id(d) == store.index_id
    True
    """
    path = Path(directory) / STORE_FILE
    if not path.is_file():
        return content_checksum(directory)[:32]
    try:
        index_id = json.loads(path.read_text(encoding="utf-8"))["index_id"]
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"{path}: no index id ({exc!r})") from exc
    if not isinstance(index_id, str) or not index_id:
        raise CorruptIndexError(f"{path}: the index id must be a non-empty string")
    return index_id


def stored_graph_version(directory: str | Path) -> int | None:
    """The write version of the database graph a persisted store recorded (its
    ``store.json``; :mod:`~graphrag_integrations.core.index.graph_changes`), ``None`` when it
    recorded none (an in-process graph, or written before versions existed).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from graphrag_integrations.core.index.store import IndexStore
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> IndexStore("toy", {}).persist(d)
    >>> stored_graph_version(d) is None  # networkx: the folder holds the graph itself
    True
    """
    path = Path(directory) / STORE_FILE
    if not path.is_file():
        return None
    version = json.loads(path.read_text(encoding="utf-8")).get("graph_version")
    return int(version) if isinstance(version, int) else None


def open_saved_graph(src: Path, backend: type[GraphBackend]) -> GraphBackend:
    """The graph of the persisted store in ``src``.

    A pointer file (``graph.pointer.json``) reopens its FalkorDB graph whatever ``backend``
    is (``backend``'s credentials are used when it is bound to the same graph). A
    ``graph.json`` is read by ``backend.load``, except when ``backend`` is a database backend
    (e.g. ``FalkorDBGraph.at(url)``): then the saved graph is *re-homed* - copied into a new
    graph there (refused if that graph holds data, unless bound with ``overwrite=True``); the
    next persist writes the pointer.
    """
    if (src / POINTER_FILE).is_file():
        from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

        opener = backend if issubclass(backend, FalkorDBGraph) else FalkorDBGraph
        return opener.load(src / POINTER_FILE)
    copy_from = getattr(backend, "copy_from", None)
    if is_in_process(backend) or not callable(copy_from) or not (src / GRAPH_FILE).is_file():
        return backend.load(src / GRAPH_FILE)
    saved = GraphStore.load(src / GRAPH_FILE)
    target = backend()
    logger.info("copying the saved graph of %s (%d nodes) into %r", src, len(saved), target)
    cast(Any, target).copy_from(saved)
    return target


def saved_method(directory: Path) -> str:
    """The method named by the manifest in ``directory`` (``""`` without a readable one)."""
    if not (directory / MANIFEST_NAME).is_file():
        return ""
    try:
        return read_manifest(directory, verify=False).method
    except (OSError, ValueError):  # the caller checks the manifest; this is informative
        return ""
