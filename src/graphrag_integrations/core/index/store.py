"""The storage every graph index shares: one graph backend plus named vector layers.

A graph-RAG index is a typed graph (a
:class:`~graphrag_integrations.core.graph.protocol.GraphBackend`, by default the networkx
:class:`~graphrag_integrations.core.graph.networkx_store.GraphStore`) whose nodes of some kinds
carry an embedding. :class:`IndexStore` keeps both in step:

* **node ids** are ``"<kind>:<key>"`` (:mod:`~graphrag_integrations.core.index.node_ids`:
  ``node_id`` / ``node_key`` / ``node_kind``), so the id spaces of the kinds (``chunk``,
  ``entity``, ``query``...) never collide;
* **vector layers** are declared by the method as ``{node kind: layer name}``; each layer is a
  core :class:`~graphrag_integrations.core.vector_store.VectorIndex` keyed by node key, made
  by a ``VectorIndexFactory`` (``in_memory_vectors`` by default, ``ChromaVectors`` of
  :mod:`~graphrag_integrations.core.vector_store.chroma_collections` for Chroma) once the
  dimension is known. A vector can only be added for an existing node;
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
  names the index's Chroma collections (``ChromaVectors``), so a load re-homed into
  Chroma reuses the collections of an earlier load of that index (when they hold a copy of
  the same content: ``content_checksum`` of
  :mod:`~graphrag_integrations.core.index.store_files`) instead of making new ones;
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

Where the parts live: the graph, the layers, reads, writes and views are
:class:`~graphrag_integrations.core.index.store_base.StoreBase` (with ``VectorIndexFactory``,
``VectorMetadata`` and ``in_memory_vectors``); the persisted files and what is read from them
alone are :mod:`~graphrag_integrations.core.index.store_files`; the body of :meth:`IndexStore.load`
is :mod:`~graphrag_integrations.core.index.store_loading`; this module adds persist and load.

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

import logging
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from graphrag_integrations.core.graph.backends import is_in_process
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.graph_changes import graph_version
from graphrag_integrations.core.index.store_base import (
    StoreBase,
    VectorIndexFactory,
    VectorMetadata,
)
from graphrag_integrations.core.index.store_files import (
    GRAPH_FILE,
    POINTER_FILE,
    STORE_FILE,
    VECTORS_DIR,
    content_checksum,
)
from graphrag_integrations.core.index.store_loading import load_store
from graphrag_integrations.core.persistence import (
    Manifest,
    atomic_directory,
    atomic_write_json,
    reading_index,
    write_manifest,
)
from graphrag_integrations.core.vector_store import InMemoryVectorIndex
from graphrag_integrations.core.vector_store.protocol import StoredLayer

logger = logging.getLogger(__name__)


class IndexStore(StoreBase):
    """A graph backend and the vector layers of its node kinds, persisted and loaded (see the
    module docstring; the parameters and attributes are those of
    :class:`~graphrag_integrations.core.index.store_base.StoreBase`)."""

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
        >>> import numpy as np
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
            return load_store(
                cls,
                src,
                model_name=model_name,
                dimension=dimension,
                layers=layers,
                factory=factory,
                graph=graph,
                metadata=metadata,
                cached_kinds=frozenset(cached_kinds),
            )


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
