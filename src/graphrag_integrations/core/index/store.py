"""The storage every graph index shares: one graph backend plus named vector layers.

A graph-RAG index is a typed graph (a
:class:`~graphrag_integrations.core.graph.protocol.GraphBackend`, by default the networkx
:class:`~graphrag_integrations.core.graph.networkx_store.GraphStore`) whose nodes of some kinds
carry an embedding. :class:`IndexStore` keeps both in step:

* **node ids** are ``"<kind>:<key>"`` (:func:`node_id` / :func:`node_key` / :func:`node_kind`),
  so the id spaces of the kinds (``chunk``, ``entity``, ``query``...) never collide;
* **vector layers** are declared by the method as ``{node kind: layer name}``; each layer is a
  core :class:`~graphrag_integrations.core.vector_store.VectorIndex` keyed by node key, made
  by a :data:`VectorIndexFactory` (:func:`in_memory_vectors` by default, :class:`ChromaVectors`
  for Chroma) once the dimension is known. A vector can only be added for an existing node;
  its metadata comes from the graph through the method's ``metadata`` function, so copies
  between backends (persist, re-homing) keep it;
* **provenance** - every node and edge records the source-document ids it came from;
  :meth:`IndexStore.remove_document` removes a document's nodes, edges and vectors and says
  what went, per kind;
* **nearest with ties** - :meth:`IndexStore.nearest` returns the ``k`` best keys plus every
  key tied with the k-th, so the caller breaks ties by its own (graph) order whatever the
  backend's internal order;
* **identity** - :attr:`IndexStore.index_id`, made when the store is built, written to
  ``store.json`` by :meth:`IndexStore.persist` and read back by :meth:`IndexStore.load`: it
  names the index's Chroma collections (:class:`ChromaVectors`), so a load re-homed into
  Chroma reuses the collections of an earlier load of that index (when they hold a copy of
  the same content: :func:`content_checksum`) instead of making new ones;
  :meth:`IndexStore.drop_vector_store` removes them;
* **persistence** - :meth:`IndexStore.persist` writes ``graph.json`` (or, for a graph in a
  database such as FalkorDB, the pointer ``graph.pointer.json``), ``store.json`` and
  ``vectors/<layer>/``
  (into the temporary directory of the index's ``persist``: a graph index's ``_write_files``
  hook is ``self.store.persist(directory)``, the ``BaseIndex.persist`` template writing the
  manifest around it; given a manifest, the whole directory through ``atomic_directory``,
  with the data safety rules of :mod:`~graphrag_integrations.core.persistence`);
  :meth:`IndexStore.load` reads them inside ``reading_index``, checks that every layer holds
  exactly the vectors of its nodes and can re-home the vectors into another backend (e.g.
  Chroma);
* **derived views** - query-time caches (flat arrays, statistics) built from the store:
  every mutation bumps :attr:`IndexStore.version` and :meth:`IndexStore.derived` rebuilds a
  view lazily, under the store's lock, when it is older than the store;
* **threads** - the store's lock makes each ``writing()`` batch and each view build atomic;
  a query that makes several calls (a view, then vector-index queries) is consistent because
  the owning index holds its readers-writer lock (:mod:`~graphrag_integrations.core.index.locking`:
  ``retrieve`` reads, ``insert`` / ``delete`` write). Lock order: the index lock, then the
  store's; a view may be (re)built by a writer (inside ``insert``) or by readers (at most
  once per version), and code inside ``writing()`` never calls a method of the index.

Examples
--------
>>> import numpy as np
>>> store = IndexStore("toy", {"entity": "entities"})
>>> store.add_node("entity", "paris", ("doc1",), name="Paris")
'entity:paris'
>>> store.add_node("entity", "rome", ("doc2",), name="Rome")
'entity:rome'
>>> store.add_vectors("entity", {"paris": np.array([1.0, 0.0]), "rome": np.array([0.0, 1.0])})
>>> [(key, round(score, 2)) for key, score in store.nearest("entity", np.array([1.0, 0.0]), 1)]
[('paris', 1.0)]
>>> store.remove_document("doc1")
{'entity': ['paris']}
>>> len(store.vectors["entities"]), store.version
(1, 4)
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.graph.backends import is_in_process
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import EdgeKey, GraphBackend
from graphrag_integrations.core.index.graph_changes import (
    changes_to_roll_back,
    drop_gone_vectors,
    graph_version,
)
from graphrag_integrations.core.index.rollback import Rollback, active_rollback
from graphrag_integrations.core.persistence import (
    MANIFEST_NAME,
    Manifest,
    atomic_directory,
    atomic_write_json,
    file_sha256,
    read_manifest,
    reading_index,
    write_manifest,
)
from graphrag_integrations.core.vector_store import (
    InMemoryVectorIndex,
    VectorIndex,
)
from graphrag_integrations.core.vector_store.chroma_collections import (
    ChromaVectors as ChromaVectors,
)
from graphrag_integrations.core.vector_store.protocol import LayerFactory, StoredLayer
from graphrag_integrations.errors import CorruptIndexError, IndexMismatchError

logger = logging.getLogger(__name__)

GRAPH_FILE = "graph.json"
#: What a database graph backend (e.g. FalkorDB) saves instead of ``graph.json``: where the
#: graph is (never credentials).
POINTER_FILE = "graph.pointer.json"
VECTORS_DIR = "vectors"
#: The store's identity file: ``{"index_id": "<32 hex digits>"}``.
STORE_FILE = "store.json"
#: Vectors read per round trip when a layer is copied between stores.
COPY_BATCH = 2048

T = TypeVar("T")

VectorIndexFactory = Callable[[str, int, str], VectorIndex]
"""``factory(layer, dimension, model_name)`` -> a new, empty vector index for one layer."""

VectorMetadata = Callable[[GraphBackend, str, str], "Mapping[str, Any] | None"]
"""``metadata(graph, kind, key)`` -> the vector-index metadata of one node (or ``None``)."""


def node_id(kind: str, key: str) -> str:
    """Graph node id of the node ``key`` of kind ``kind``.

    Examples
    --------
    >>> node_id("entity", "nottingham forest")
    'entity:nottingham forest'
    """
    if not kind or ":" in kind:
        raise ValueError(f"node kind must be non-empty and free of ':', got {kind!r}")
    return f"{kind}:{key}"


def node_key(node: str) -> str:
    """The key inside a node id (inverse of :func:`node_id`).

    Examples
    --------
    >>> node_key("unit:ab12")
    'ab12'
    """
    return node.split(":", 1)[1]


def node_kind(node: str) -> str:
    """The kind inside a node id.

    Examples
    --------
    >>> node_kind("unit:ab12")
    'unit'
    """
    return node.split(":", 1)[0]


def in_memory_vectors(layer: str, dimension: int, model_name: str) -> VectorIndex:
    """Default factory: an exact :class:`InMemoryVectorIndex` per layer.

    Examples
    --------
    >>> len(in_memory_vectors("units", 3, "toy"))
    0
    """
    return InMemoryVectorIndex(dimension, model_name)


def release_free_heap() -> bool:
    """Hand the C heap's free memory back to the operating system (glibc ``malloc_trim``).

    Loading an index parses large JSON files whose many small temporaries are freed but stay
    in the process's heap; trimming lowers the resident size without changing any object.
    A no-op (returning ``False``) where the C library has no ``malloc_trim`` (not glibc).

    Examples
    --------
    >>> release_free_heap() in (True, False)
    True
    """
    import ctypes
    import ctypes.util

    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        name = ctypes.util.find_library("c")
        try:
            _MALLOC_TRIM = ctypes.CDLL(name).malloc_trim if name else False
        except (OSError, AttributeError):
            _MALLOC_TRIM = False
        if not _MALLOC_TRIM:
            logger.debug("no malloc_trim in this C library: freed heap is not trimmed")
    if _MALLOC_TRIM is False:
        return False
    _MALLOC_TRIM(0)
    return True


_MALLOC_TRIM: Any = None


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


def index_stores_of(index: object) -> list[IndexStore]:
    """The :class:`IndexStore` objects an index holds: attributes that are one, or that hold
    one as an attribute (a method's own store class wrapping the core one).

    Examples
    --------
    >>> class Wrapper:
    ...     def __init__(self) -> None:
    ...         self.index_store = IndexStore("toy", {})
    >>> class Index:
    ...     def __init__(self) -> None:
    ...         self.store = Wrapper()
    >>> len(index_stores_of(Index()))
    1
    """
    found: dict[int, IndexStore] = {}
    for value in vars(index).values():
        inner = getattr(value, "__dict__", None)
        candidates = [value, *(inner.values() if isinstance(inner, dict) else ())]
        for candidate in candidates:
            if isinstance(candidate, IndexStore):
                found.setdefault(id(candidate), candidate)
    return list(found.values())


def _flush(graph: GraphBackend) -> None:
    """Send the writes a database backend queued (nothing for the in-process store)."""
    flush = getattr(graph, "flush", None)
    if callable(flush):
        flush()


def _load_graph(src: Path, backend: type[GraphBackend]) -> GraphBackend:
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


def _method_of(directory: Path) -> str:
    if not (directory / MANIFEST_NAME).is_file():
        return ""
    try:
        return read_manifest(directory, verify=False).method
    except (OSError, ValueError):  # the caller checks the manifest; this is informative
        return ""


class IndexStore:
    """A graph backend and the vector layers of its node kinds (see the module docstring).

    Parameters
    ----------
    model_name : str
        Embedding model of the vectors (recorded in the vector indexes).
    layers : mapping of str to str
        ``{node kind: layer name}`` of the kinds whose nodes carry a vector.
    factory : callable, optional
        ``factory(layer, dimension, model_name)`` making each layer's vector index (created on
        the layer's first vectors); ``None``: :func:`in_memory_vectors`.
    graph : GraphBackend class, optional
        The graph backend (called with no argument for an empty graph, its ``load`` class
        method reads a saved one); ``None``: :class:`GraphStore`.
    metadata : callable, optional
        ``metadata(graph, kind, key)``: vector-index metadata of a node (``None``: none).
    opened : GraphBackend, optional
        A graph already opened (what :meth:`load` passes) instead of a new empty one.

    Attributes
    ----------
    graph : GraphBackend
        The graph; mutate it through this store so the version and the vectors follow.
    vectors : dict of str to VectorIndex
        The vector index of each layer created so far.
    dimension : int
        Vector dimension (0 before the first vectors).
    index_id : str
        The index's id (32 hex digits): new for a new store, read back by :meth:`load`. It
        names the index's Chroma collections (:class:`ChromaVectors`).
    later_writes : frozenset of str
        After :meth:`load`: the documents written to the database graph after the folder
        was persisted, rolled back by the load
        (:mod:`~graphrag_integrations.core.index.graph_changes`); what the method read from
        the folder about them is stale (a method store rebuilds such state from the graph).
    """

    def __init__(
        self,
        model_name: str,
        layers: Mapping[str, str],
        *,
        factory: VectorIndexFactory | None = None,
        graph: type[GraphBackend] | None = None,
        metadata: VectorMetadata | None = None,
        opened: GraphBackend | None = None,
    ) -> None:
        if len(set(layers.values())) != len(layers):
            raise ValueError(f"two node kinds share a layer name: {dict(layers)}")
        self.model_name = model_name
        self.layers: dict[str, str] = dict(layers)
        self.factory: VectorIndexFactory = factory or in_memory_vectors
        self.backend: type[GraphBackend] = graph or GraphStore
        self.metadata = metadata
        self.graph: GraphBackend = self.backend() if opened is None else opened
        self.vectors: dict[str, VectorIndex] = {}
        self.dimension = 0
        self.index_id = uuid.uuid4().hex
        self.later_writes: frozenset[str] = frozenset()
        self._version = 0
        self._lock = threading.RLock()
        self._views: dict[str, tuple[int, Any]] = {}
        self._depth = 0  # nesting of writing() blocks

    # -- versions and derived views -------------------------------------------------------
    @property
    def version(self) -> int:
        """Counter bumped by every mutation (what :meth:`derived` compares against)."""
        return self._version

    @contextmanager
    def writing(self) -> Iterator[IndexStore]:
        """Hold the store's lock for a batch of mutations (bumps :attr:`version` at the end).

        A view is never built from half a batch: :meth:`derived` waits for the lock. A graph
        backend that queues writes (a ``flush()`` method, e.g. FalkorDB) is flushed when the
        outermost batch ends.
        """
        with self._lock:
            self._depth += 1
            try:
                yield self
                if self._depth == 1:
                    _flush(self.graph)
            finally:
                self._depth -= 1
                self._version += 1

    def derived(self, name: str, build: Callable[[IndexStore, T | None], T]) -> T:
        """The view ``name``, rebuilt by ``build(store, previous)`` when the store changed.

        ``previous`` is the last view of that name (``None`` the first time) so ``build`` may
        reuse what did not change; it must return a new object (readers may still hold the
        old one). Thread-safe: built under the store's lock, at most once per version.

        Examples
        --------
        >>> store = IndexStore("toy", {})
        >>> count = lambda s, previous: len(s.graph)
        >>> store.derived("size", count)
        0
        >>> _ = store.add_node("entity", "paris")
        >>> store.derived("size", count)
        1
        """
        with self._lock:
            cached = self._views.get(name)
            if cached is not None and cached[0] == self._version:
                return cast(T, cached[1])
            view = build(self, None if cached is None else cast(T, cached[1]))
            self._views[name] = (self._version, view)
            return view

    # -- reading ---------------------------------------------------------------------------
    def has(self, kind: str, key: str) -> bool:
        """Whether node ``key`` of kind ``kind`` is in the graph."""
        return node_id(kind, key) in self.graph

    def has_vector(self, kind: str, key: str) -> bool:
        """Whether node ``key`` of kind ``kind`` has a vector in this store: its node is in the
        graph and, when the layer can tell (in-process layers), the layer holds it (a database
        graph shared with another index may hold a node whose vector that index made)."""
        if not self.has(kind, key):
            return False
        index = self.vectors.get(self.layers.get(kind, ""))
        if index is None:  # no vector of the kind yet in this store
            return False
        return not hasattr(index, "__contains__") or key in index

    def keys(self, kind: str) -> list[str]:
        """Keys of the nodes of ``kind``, in insertion order."""
        return [node_key(n) for n in self.graph.nodes(kind)]

    def layer(self, kind: str) -> str:
        """Layer name of ``kind``.

        Raises
        ------
        KeyError
            If ``kind`` has no vector layer.
        """
        if kind not in self.layers:
            raise KeyError(f"node kind {kind!r} has no vector layer (layers: {self.layers})")
        return self.layers[kind]

    def nearest(self, kind: str, vector: FloatMatrix, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest ``(key, cosine)`` of one layer, plus every hit tied with the k-th.

        Ties at the boundary are all returned so the caller can break them by its own order
        independently of the backend's internal order. A zero vector has no cosine
        neighbours: no hits (logged).
        """
        index = self.vectors.get(self.layer(kind))
        if index is None or k <= 0 or not len(index):
            return []
        if not np.any(vector):
            logger.warning("zero %s query vector: no nearest neighbours", kind)
            return []
        size = len(index)
        want = min(k + 1, size)
        while True:
            hits = index.query(vector, want)
            if len(hits) <= k:
                return hits
            if want >= size or hits[-1][1] < hits[k - 1][1]:
                return [h for h in hits if h[1] >= hits[k - 1][1]]
            want = min(2 * want, size)

    def embeddings(self, kind: str, keys: Sequence[str]) -> FloatMatrix:
        """Stored vectors of ``keys`` (one layer), in order."""
        if not keys:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self.vectors[self.layer(kind)].get_embeddings(list(keys))

    def shared_embeddings(self, kind: str, keys: Sequence[str]) -> FloatMatrix | None:
        """The vectors of ``keys`` without a copy, or ``None`` where that is not possible.

        A read-only view of an in-memory layer's matrix when the layer (a plain
        :class:`~graphrag_integrations.core.vector_store.memory.InMemoryVectorIndex`) holds
        exactly ``keys`` in that order (what a view built from the graph's insertion order
        usually asks for); the view stays unchanged by later mutations
        (:meth:`~graphrag_integrations.core.vector_store.memory.InMemoryVectorIndex.matrix_view`).
        ``None`` for another order, other keys or another backend: use :meth:`embeddings`.

        Examples
        --------
        >>> store = IndexStore("toy", {"entity": "entities"})
        >>> for key in ("a", "b"):
        ...     _ = store.add_node("entity", key, ("doc1",))
        >>> store.add_vectors("entity", {"a": [1.0, 0.0], "b": [0.0, 1.0]})
        >>> store.shared_embeddings("entity", ["a", "b"]).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
        >>> store.shared_embeddings("entity", ["b", "a"]) is None
        True
        """
        index = self.vectors.get(self.layer(kind))
        # exactly the core class: a subclass may override get_embeddings (and is asked)
        if type(index) is not InMemoryVectorIndex or len(index) != len(keys):
            return None
        if index.ids != list(keys):
            return None
        return index.matrix_view()

    # -- mutation --------------------------------------------------------------------------
    def add_node(self, kind: str, key: str, provenance: Sequence[str] = (), **attrs: Any) -> str:
        """Add (or merge into) node ``key`` of ``kind``; returns its node id."""
        node = node_id(kind, key)
        with self.writing():
            self.graph.add_node(node, kind, provenance, **attrs)
        return node

    def add_edge(
        self,
        u: str,
        v: str,
        type: str,
        provenance: Sequence[str] = (),
        *,
        key: str | None = None,
        **attrs: Any,
    ) -> str:
        """Add (or merge into) the edge ``u -> v`` between two node ids; returns its key."""
        with self.writing():
            return self.graph.add_edge(u, v, type, provenance, key=key, **attrs)

    def remove_edges(self, edges: Iterable[EdgeKey]) -> list[EdgeKey]:
        """Remove graph edges ``(u, v, key)`` (node ids) whatever their provenance; returns
        those that existed. For edges a method derives and rewrites (QCG-RAG's kNN lists)."""
        with self.writing():
            return self.graph.remove_edges(edges)

    def add_vectors(self, kind: str, vectors: Mapping[str, npt.ArrayLike]) -> None:
        """Store the vectors of existing nodes of ``kind`` (``{key: vector}``).

        Raises
        ------
        KeyError
            If a key is not a node of ``kind`` or ``kind`` has no layer.
        ValueError
            If the dimension differs from the store's.
        """
        if not vectors:
            return
        layer = self.layer(kind)
        missing = [k for k in vectors if not self.has(kind, k)]
        if missing:
            raise KeyError(f"vectors for {len(missing)} unknown {kind} nodes, e.g. {missing[:3]}")
        matrix = np.stack([np.asarray(v, dtype=np.float32) for v in vectors.values()])
        keys = list(vectors)
        with self.writing():
            self._index(layer, int(matrix.shape[1])).add(keys, matrix, self._metadatas(kind, keys))

    def _index(self, layer: str, dimension: int) -> VectorIndex:
        if self.dimension and dimension != self.dimension:
            raise ValueError(f"vector dimension {dimension} != index dimension {self.dimension}")
        if layer not in self.vectors:
            self.dimension = dimension
            self.vectors[layer] = self._open_layer(layer, dimension)
            index = self.vectors[layer]
            stored = isinstance(self.factory, LayerFactory) and isinstance(index, StoredLayer)
            if stored and len(index):
                # a collection this index left in an earlier state (its layer is empty now)
                logger.info("emptying the stale vector collection of layer %s", layer)
                cast(StoredLayer, index).clear()
        return self.vectors[layer]

    def _open_layer(self, layer: str, dimension: int, method: str = "") -> VectorIndex:
        if isinstance(self.factory, LayerFactory):
            return self.factory.open_layer(
                layer, dimension, self.model_name, index_id=self.index_id, method=method
            )
        return self.factory(layer, dimension, self.model_name)

    def drop_vector_store(self) -> list[str]:
        """Delete the Chroma collections of this store's layers; returns their names.

        Only collections opened for this store are touched. The layers are gone afterwards
        (queries find nothing in them; persist first to keep the vectors); in-memory layers
        are kept.
        """
        dropped: list[str] = []
        with self.writing():
            for layer, index in list(self.vectors.items()):
                if isinstance(index, StoredLayer):
                    index.drop()
                    dropped.append(getattr(index, "collection_name", repr(index)))
                    del self.vectors[layer]
        return dropped

    def _metadatas(self, kind: str, keys: Sequence[str]) -> list[dict[str, Any]] | None:
        if self.metadata is None:
            return None
        metas = [self.metadata(self.graph, kind, k) for k in keys]
        if all(m is None for m in metas):
            return None
        return [dict(m or {}) for m in metas]

    def remove_document(self, doc_id: str) -> dict[str, list[str]]:
        """Forget ``doc_id``: its graph provenance, then the nodes left without any and their
        vectors.

        Returns
        -------
        dict of str to list of str
            The removed node keys per kind (kinds with no removal are absent).
        """
        with self.writing():
            removed = self.graph.remove_provenance(doc_id)
            gone: dict[str, list[str]] = {}
            for node in removed.nodes:
                gone.setdefault(node_kind(node), []).append(node_key(node))
            for kind, keys in gone.items():
                index = self.vectors.get(self.layers.get(kind, ""))
                if index is not None:
                    index.delete(keys)
        return gone

    # -- persistence -----------------------------------------------------------------------
    def persist(
        self,
        directory: str | Path,
        manifest: Manifest | None = None,
        *,
        overwrite: bool = False,
    ) -> None:
        """Write ``graph.json`` and ``vectors/<layer>/`` (and the index manifest) to ``directory``.

        With a ``manifest`` (what a graph index's ``persist`` passes), the whole directory is
        written through :func:`~graphrag_integrations.core.persistence.atomic_directory` with
        ``overwrite=overwrite, method=manifest.method`` and the manifest's ``index_id`` (by
        default the store's :attr:`index_id`): atomically, the checksum of every file recorded,
        and a folder that is not this index refused unless ``overwrite=True`` (files the index
        did not write are kept either way). Without one,
        the files go into ``directory`` as it is: an existing, fresh directory such as the
        temporary one of an ``atomic_directory`` block the caller holds.

        In-memory indexes persist themselves; another backend (e.g. Chroma, whose data lives
        in its own store) is copied into an in-memory index first, so the directory is always
        self-contained (logged).

        Parameters
        ----------
        directory : str or Path
            The index directory.
        manifest : Manifest, optional
            The index's manifest (method, parameters, models); written last.
        overwrite : bool
            See :func:`~graphrag_integrations.core.persistence.atomic_directory`.

        Raises
        ------
        IndexExistsError
            With a ``manifest``, if ``directory`` is not ours to replace (nothing written).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from graphrag_integrations.core.persistence import read_manifest
        >>> store = IndexStore("toy", {"entity": "entities"})
        >>> _ = store.add_node("entity", "paris", ("doc1",))
        >>> store.add_vectors("entity", {"paris": np.array([1.0, 0.0])})
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "index"
        >>> store.persist(target, Manifest(method="toy"))
        >>> sorted(read_manifest(target).files)  # doctest: +NORMALIZE_WHITESPACE
        ['graph.json', 'store.json', 'vectors/entities/manifest.json',
         'vectors/entities/records.json', 'vectors/entities/vectors.npy']
        """
        if manifest is None:
            self._write(Path(directory))
            return
        manifest = replace(manifest, index_id=manifest.index_id or self.index_id)
        with atomic_directory(
            directory, overwrite=overwrite, method=manifest.method, index_id=manifest.index_id
        ) as out:
            self._write(out)
            write_manifest(out, manifest)

    def _write(self, out: Path) -> None:
        with self._lock:
            record: dict[str, Any] = {"index_id": self.index_id}
            version = graph_version(self.graph)
            if version is not None:  # a database graph's state these files hold
                record["graph_version"] = version
            atomic_write_json(out / STORE_FILE, record)
            in_process = is_in_process(type(self.graph))
            self.graph.save(out / (GRAPH_FILE if in_process else POINTER_FILE))
            for kind, layer in self.layers.items():
                index = self.vectors.get(layer)
                if index is None:
                    continue
                if isinstance(index, InMemoryVectorIndex):
                    local = index
                else:
                    logger.info("copying the %s vectors from %s to persist them", layer, index)
                    local = InMemoryVectorIndex(self.dimension, self.model_name)
                    self._copy(kind, index, local)
                local.persist(out / VECTORS_DIR / layer)
            chroma = [i for i in self.vectors.values() if isinstance(i, StoredLayer)]
            if chroma:  # they now hold a copy of what was written: a load can reuse them
                checksum = content_checksum(out)
                for index in chroma:
                    index.set_content_checksum(checksum)

    def _copy(self, kind: str, source: VectorIndex, target: VectorIndex) -> None:
        """Copy every vector of one layer (with its metadata) from ``source`` to ``target``,
        :data:`COPY_BATCH` at a time (one read of a whole server layer made the process hold
        it several times over as the client's reply)."""
        keys = self.keys(kind)
        for part in batches(keys, COPY_BATCH):
            target.add(part, source.get_embeddings(part), self._metadatas(kind, part))

    @classmethod
    def load(
        cls,
        directory: str | Path,
        *,
        model_name: str,
        dimension: int,
        layers: Mapping[str, str],
        factory: VectorIndexFactory | None = None,
        graph: type[GraphBackend] | None = None,
        metadata: VectorMetadata | None = None,
        cached_kinds: Collection[str] = (),
    ) -> IndexStore:
        """Read what :meth:`persist` wrote and check graph and vectors agree.

        With a ``factory`` other than the in-memory default, the loaded vectors are copied
        into the indexes it makes (re-homing, logged). ``cached_kinds`` are the node kinds
        whose vectors the method recomputes when needed (a cache, e.g. vectors embedded
        lazily at query time): a database graph (which a query after the last persist
        changed) may hold nodes of those kinds without a saved vector; they are removed from
        it (logged; nothing else is). An in-process graph is the saved snapshot: nothing to
        remove. The other parameters are those of :class:`IndexStore`.

        The files are read inside :func:`~graphrag_integrations.core.persistence.reading_index`
        (a concurrent ``persist`` of ``directory`` waits until they are read); the index
        manifest and its checksums are the caller's (read them in the same block).

        Raises
        ------
        IndexNotFoundError
            A missing graph or vector directory.
        IndexMismatchError
            Another model or dimension, or vector ids that differ from the graph's nodes
            (saved vectors without a node, or nodes without a saved vector other than those
            of ``cached_kinds`` in a database graph).
        """
        with reading_index(directory) as src:
            return cls._load(
                src,
                model_name=model_name,
                dimension=dimension,
                layers=layers,
                factory=factory,
                graph=graph,
                metadata=metadata,
                cached_kinds=frozenset(cached_kinds),
            )

    @classmethod
    def _load(
        cls,
        src: Path,
        *,
        model_name: str,
        dimension: int,
        layers: Mapping[str, str],
        factory: VectorIndexFactory | None,
        graph: type[GraphBackend] | None,
        metadata: VectorMetadata | None,
        cached_kinds: frozenset[str] = frozenset(),
    ) -> IndexStore:
        opened = _load_graph(src, graph or GraphStore)
        store = cls(
            model_name,
            layers,
            factory=factory,
            graph=type(opened),
            metadata=metadata,
            opened=opened,
        )
        store.dimension = dimension
        store.index_id = stored_index_id(src)
        rehome = factory is not None and factory is not in_memory_vectors
        checksum = content_checksum(src) if isinstance(factory, LayerFactory) else ""
        rollback = changes_to_roll_back(src, opened, active_rollback(), stored_graph_version(src))
        store.later_writes = rollback.later if rollback is not None else frozenset()
        for kind, layer in store.layers.items():
            keys = store.keys(kind)
            if not keys:
                continue
            target = None
            if rehome:
                target = store._open_layer(layer, dimension, _method_of(src) if checksum else "")
                if rollback is None and store._holds(target, checksum, len(keys)):
                    # a server layer already holding this content: the vectors stay unread
                    logger.info("reusing vector store layer %r (same content)", target)
                    store.vectors[layer] = target
                    continue
            cached = kind in cached_kinds and not is_in_process(type(store.graph))
            if (rollback is not None or cached) and not (src / VECTORS_DIR / layer).is_dir():
                # the killed batch's kind / a cache with nothing saved
                index = InMemoryVectorIndex(dimension, model_name)
            else:
                index = InMemoryVectorIndex.load(
                    src / VECTORS_DIR / layer, model_name=model_name, dimension=dimension
                )
            if rollback is not None:
                store._placeholders(rollback, kind, index, keys)
                drop_gone_vectors(src, kind, index, keys, rollback)
            if cached:
                keys = store._drop_unsaved(src, kind, index, keys)
            if set(index.ids) != set(keys):
                raise IndexMismatchError(
                    f"{src}: the {layer} vectors ({len(index)}) do not match the graph's "
                    f"{len(keys)} {kind} nodes (corrupt index)"
                )
            store.vectors[layer] = index
            if target is not None:
                store.vectors[layer] = store._rehome(kind, index, target, checksum)
        release_free_heap()  # the parsed JSON's temporaries
        return store

    def _holds(self, target: VectorIndex, checksum: str, count: int) -> bool:
        """Whether ``target`` is a server layer of this index holding the persisted content
        ``checksum`` (``count`` records)."""
        return (
            bool(checksum)
            and isinstance(self.factory, LayerFactory)
            and isinstance(target, StoredLayer)
            and target.content_checksum == checksum
            and len(target) == count
        )

    def _drop_unsaved(
        self, src: Path, kind: str, index: InMemoryVectorIndex, keys: list[str]
    ) -> list[str]:
        """``keys`` without the nodes of ``kind`` that have no saved vector, removed from the
        database graph (a cached kind: their vectors are recomputed when needed); ``keys``
        unchanged for a backend that cannot remove nodes."""
        remove_nodes = getattr(self.graph, "remove_nodes", None)
        if not callable(remove_nodes):
            return keys
        held = set(index.ids)
        unsaved = [key for key in keys if key not in held]
        if not unsaved:
            return keys
        logger.info(
            "%s: removing %d %s nodes without a saved vector from %r (computed after the "
            "last persist; recomputed when needed)",
            src,
            len(unsaved),
            kind,
            self.graph,
        )
        with self.writing():
            remove_nodes([node_id(kind, key) for key in unsaved])
        return [key for key in keys if key in held]

    def _placeholders(
        self, rollback: Rollback, kind: str, index: InMemoryVectorIndex, keys: list[str]
    ) -> None:
        """Give a placeholder vector to the nodes of ``kind`` without one whose provenance is
        all pending documents of ``rollback`` (:mod:`~graphrag_integrations.core.index.rollback`:
        they go before the load ends)."""
        held = set(index.ids)
        missing = [key for key in keys if key not in held]
        if not missing:
            return
        data = self.graph.nodes_data(node_id(kind, key) for key in missing)
        owned = [key for key in missing if rollback.owns(data[node_id(kind, key)]["provenance"])]
        if not owned:
            return
        unit = np.zeros((len(owned), self.dimension), dtype=np.float32)
        unit[:, 0] = 1.0
        index.add(owned, unit)
        rollback.placeholders.append((self, kind, owned))

    def _rehome(
        self, kind: str, loaded: InMemoryVectorIndex, target: VectorIndex, checksum: str
    ) -> VectorIndex:
        """``target`` (the layer's index in the factory's backend) filled with the loaded
        vectors: a stale Chroma collection / FalkorDB layer of this index is refilled."""
        if not isinstance(self.factory, LayerFactory) or not isinstance(target, StoredLayer):
            logger.info("copying the loaded %s vectors into %s", kind, self.factory)
            self._copy(kind, loaded, target)
            return target
        if len(target):
            logger.info(
                "refreshing vector store layer %r: it holds another version of this index",
                target,
            )
            target.clear()
        logger.info("copying the loaded %s vectors into %r", kind, target)
        self._copy(kind, loaded, target)
        target.set_content_checksum(checksum)
        return target
