"""The graph and vector layers of an index store in the process: reads, writes, views.

:class:`StoreBase` is what :class:`~graphrag_integrations.core.index.store.IndexStore` is
without its files (persist, load): one graph backend and the vector layers of its node kinds,
node ids from :mod:`~graphrag_integrations.core.index.node_ids`, a version bumped by every
mutation and the derived views built from it, and the store's lock (see the module docstring
of :mod:`~graphrag_integrations.core.index.store`).

Examples
--------
>>> import numpy as np
>>> store = StoreBase("toy", {"entity": "entities"})
>>> store.add_node("entity", "paris", ("doc1",), name="Paris")
'entity:paris'
>>> store.add_vectors("entity", {"paris": np.array([1.0, 0.0])})
>>> store.nearest("entity", np.array([1.0, 0.0]), 1)
[('paris', 1.0)]
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import EdgeKey, GraphBackend
from graphrag_integrations.core.index.node_ids import node_id, node_key, node_kind
from graphrag_integrations.core.index.rollback import Rollback
from graphrag_integrations.core.index.store_journal import StoreJournal
from graphrag_integrations.core.vector_store import InMemoryVectorIndex, VectorIndex
from graphrag_integrations.core.vector_store.protocol import LayerFactory, StoredLayer

logger = logging.getLogger(__name__)

#: Vectors read per round trip when a layer is copied between stores.
COPY_BATCH = 2048

T = TypeVar("T")
S = TypeVar("S", bound="StoreBase")

VectorIndexFactory = Callable[[str, int, str], VectorIndex]
"""``factory(layer, dimension, model_name)`` -> a new, empty vector index for one layer."""

VectorMetadata = Callable[[GraphBackend, str, str], "Mapping[str, Any] | None"]
"""``metadata(graph, kind, key)`` -> the vector-index metadata of one node (or ``None``)."""


def in_memory_vectors(layer: str, dimension: int, model_name: str) -> VectorIndex:
    """Default factory: an exact :class:`InMemoryVectorIndex` per layer.

    Examples
    --------
    >>> len(in_memory_vectors("units", 3, "toy"))
    0
    """
    return InMemoryVectorIndex(dimension, model_name)


def _flush(graph: GraphBackend) -> None:
    """Send the writes a database backend queued (nothing for the in-process store)."""
    flush = getattr(graph, "flush", None)
    if callable(flush):
        flush()


class StoreBase:
    """A graph backend and the vector layers of its node kinds (see
    :mod:`~graphrag_integrations.core.index.store`).

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
        A graph already opened (what ``IndexStore.load`` passes) instead of a new empty one.

    Attributes
    ----------
    graph : GraphBackend
        The graph; mutate it through this store so the version and the vectors follow.
    vectors : dict of str to VectorIndex
        The vector index of each layer created so far.
    dimension : int
        Vector dimension (0 before the first vectors).
    index_id : str
        The index's id (32 hex digits): new for a new store, read back by ``IndexStore.load``.
        It names the index's Chroma collections
        (:class:`~graphrag_integrations.core.vector_store.chroma_collections.ChromaVectors`).
    later_writes : frozenset of str
        After ``IndexStore.load``: the documents written to the database graph after the folder
        was persisted, or by an unfinished write its journal lists, rolled back by the load
        (:mod:`~graphrag_integrations.core.index.graph_changes`); what the method read from
        the folder about them is stale (a method store rebuilds such state from the graph).
    journal : StoreJournal
        The in-process write journal used when the graph is in the process and the vectors
        are not (:mod:`~graphrag_integrations.core.index.store_journal`).
    other_writers : bool
        Whether another process wrote the (database) graph since the owning index saw it:
        set by :mod:`~graphrag_integrations.core.index.snapshot`; nodes without a vector
        then read as zero vectors (:meth:`embeddings`).
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
        self.other_writers = False
        self.journal = StoreJournal()
        self._version = 0
        self._lock = threading.RLock()
        self._views: dict[str, tuple[int, Any]] = {}
        self._removed_at: dict[str, int] = {}  # node id -> version of its last removal
        self._depth = 0  # nesting of writing() blocks

    # -- versions and derived views -------------------------------------------------------
    @property
    def version(self) -> int:
        """Counter bumped by every mutation (what :meth:`derived` compares against)."""
        return self._version

    @contextmanager
    def writing(self: S) -> Iterator[S]:
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

    def derived(self: S, name: str, build: Callable[[S, T | None], T]) -> T:
        """The view ``name``, rebuilt by ``build(store, previous)`` when the store changed.

        ``previous`` is the last view of that name (``None`` the first time) so ``build`` may
        reuse what did not change; it must return a new object (readers may still hold the
        old one). Thread-safe: built under the store's lock, at most once per version.

        Examples
        --------
        >>> store = StoreBase("toy", {})
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
            oldest = min(version for version, _ in self._views.values())
            self._removed_at = {n: v for n, v in self._removed_at.items() if v >= oldest}
            return view

    def removed_since(self, version: int, kind: str) -> set[str]:
        """Keys of kind ``kind`` removed at or after :attr:`version` ``version``.

        A :meth:`derived` view built at ``version`` must not reuse what it cached of them: a
        key removed and added again since (an ``upsert`` keeps a document's chunk ids) names
        new content.

        Examples
        --------
        >>> store = StoreBase("toy", {})
        >>> _ = store.add_node("entity", "paris", ["d1"])
        >>> built_at = store.version
        >>> _ = store.remove_document("d1")
        >>> store.removed_since(built_at, "entity")
        {'paris'}
        """
        return {
            node_key(n)
            for n, at in self._removed_at.items()
            if at >= version and node_kind(n) == kind
        }

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
        """Stored vectors of ``keys`` (one layer), in order.

        Once :attr:`other_writers` is set, a key without a vector (a node another process
        wrote into the shared graph) reads as a zero vector (similar to nothing) instead of
        a ``KeyError``: the index answers from its own documents only
        (:mod:`~graphrag_integrations.core.index.snapshot`), so it never ranks that node.
        """
        if not keys:
            return np.zeros((0, self.dimension), dtype=np.float32)
        index = self.vectors[self.layer(kind)]
        try:
            return index.get_embeddings(list(keys))
        except KeyError:
            if not self.other_writers:
                raise
        held = [k for k in dict.fromkeys(keys) if self._holds_vector(index, k)]
        row = {k: i for i, k in enumerate(held)}
        stored = index.get_embeddings(held) if held else None
        out = np.zeros((len(keys), self.dimension), dtype=np.float32)
        for i, key in enumerate(keys):
            if key in row and stored is not None:
                out[i] = stored[row[key]]
        return out

    @staticmethod
    def _holds_vector(index: VectorIndex, key: str) -> bool:
        if hasattr(index, "__contains__"):
            return key in index
        try:
            index.get_embeddings([key])
        except KeyError:
            return False
        return True

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
        >>> store = StoreBase("toy", {"entity": "entities"})
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
            if self.journal.recording:
                if node not in self.graph:
                    self.journal.created(kind, key)
                self.journal.cover([provenance])
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
            self.journal.cover([provenance])
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

    def keeps_vectors_outside(self) -> bool:
        """Whether the vector layers are made outside the in-memory default (a server, a
        framework's store): what makes an in-process graph's writes need a journal
        (:mod:`~graphrag_integrations.core.index.store_journal`)."""
        return self.factory is not in_memory_vectors

    def add_placeholders(
        self, rollback: Rollback, kind: str, index: VectorIndex, candidates: Sequence[str]
    ) -> None:
        """Give a placeholder vector, in ``index``, to the nodes of ``kind`` among
        ``candidates`` whose provenance is all pending documents of ``rollback``
        (:mod:`~graphrag_integrations.core.index.rollback`: they go before the rollback ends,
        which checks it), so that the method's views can be built until then; and to those
        whose provenance is all pending or hidden documents (a running process's writes:
        they stay, never answered, :mod:`~graphrag_integrations.core.index.snapshot`)."""
        if not candidates:
            return
        data = self.graph.nodes_data(node_id(kind, key) for key in candidates)
        provenance = {k: data[node_id(kind, k)]["provenance"] for k in candidates}
        covered = [k for k in candidates if rollback.covers(provenance[k])]
        if not covered:
            return
        unit = np.zeros((len(covered), self.dimension), dtype=np.float32)
        unit[:, 0] = 1.0
        index.add(covered, unit)
        owned = [k for k in covered if rollback.owns(provenance[k])]
        if owned:
            rollback.placeholders.append((self, kind, owned))
        if rollback.writer_running:  # the running writer's nodes: their documents hidden
            rollback.add_hidden(d for k in covered if k not in owned for d in provenance[k])

    def placeholders_for_journal(self, rollback: Rollback) -> None:
        """Before the rollback of a failed write this store's journal recorded: a placeholder
        vector for each node the write created that is still in the graph (its vector may
        not have reached the vector server)."""
        for kind, keys in self.journal.created_nodes().items():
            index = self.vectors.get(self.layers.get(kind, ""))
            if index is not None and self.dimension:
                present = list(dict.fromkeys(k for k in keys if self.has(kind, k)))
                self.add_placeholders(rollback, kind, index, present)

    def drop_orphan_vectors(self) -> int:
        """Delete the vectors of layers that list their ids (in memory) whose node the graph
        no longer has; returns how many. A failed write of this process may have added
        vectors of nodes whose graph writes were rolled back since (by this index, or by a
        load of another one)."""
        dropped = 0
        for kind, layer in self.layers.items():
            index = self.vectors.get(layer)
            ids = getattr(index, "ids", None)
            if index is None or not ids:
                continue
            present = set(self.keys(kind))
            gone = [key for key in ids if key not in present]
            if gone:
                index.delete(gone)
                dropped += len(gone)
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
            self.journal.cover([[doc_id]], removing=True)
            removed = self.graph.remove_provenance(doc_id)
            gone: dict[str, list[str]] = {}
            for node in removed.nodes:
                gone.setdefault(node_kind(node), []).append(node_key(node))
                self._removed_at[node] = self._version
            for kind, keys in gone.items():
                index = self.vectors.get(self.layers.get(kind, ""))
                if index is not None:
                    index.delete(keys)
        return gone

    def _copy(self, kind: str, source: VectorIndex, target: VectorIndex) -> None:
        """Copy every vector of one layer (with its metadata) from ``source`` to ``target``,
        :data:`COPY_BATCH` at a time (one read of a whole server layer made the process hold
        it several times over as the client's reply)."""
        keys = self.keys(kind)
        for part in batches(keys, COPY_BATCH):
            target.add(part, source.get_embeddings(part), self._metadatas(kind, part))
