"""The Clue-Index's source of truth: one core ``GraphStore`` and three core ``VectorIndex``es.

:class:`ClueStore` holds the multi-partite graph of the paper in a
:class:`~graphrag_integrations.core.graph_store.GraphStore`:

* nodes of type ``chunk`` (attributes ``text``, ``doc_id``, ``metadata``), ``unit``
  (``text``, ``doc_id``, ``source``) and ``entity`` (``name``, ``label``), with ids
  ``"chunk:<passage id>"``, ``"unit:<unit id>"`` and ``"entity:<normalised name>"`` (the
  prefix keeps the three id spaces apart, see :func:`node_id`);
* edges ``contains`` (chunk -> unit, ``E_C``) and ``mentions`` (unit -> entity, ``E_E``,
  added in the unit's mention order);
* provenance = the document id on every node and edge, so ``delete(doc_id)`` is
  :meth:`GraphStore.remove_provenance`: an entity mentioned by another document keeps that
  document in its provenance and survives.

The vectors of chunks, units and entities live in three core vector indexes (``"chunks"``,
``"units"``, ``"entities"``; :class:`InMemoryVectorIndex` by default, any
:class:`~graphrag_integrations.core.vector_store.VectorIndex` through a factory such as
:class:`ChromaVectors`), keyed by passage id, unit id and entity name. Q-Iter's flat arrays
(:class:`~graphrag_integrations.methods.clue.graph.ClueGraph`) are derived from this store.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from graphrag_integrations.core.embeddings import FloatMatrix
from graphrag_integrations.core.graph_store import GraphStore
from graphrag_integrations.core.types import Passage
from graphrag_integrations.core.vector_store import (
    ChromaVectorIndex,
    InMemoryVectorIndex,
    VectorIndex,
)
from graphrag_integrations.errors import IndexMismatchError

if TYPE_CHECKING:
    from graphrag_integrations.methods.clue.graph import KnowledgeUnit

logger = logging.getLogger(__name__)

CHUNK, UNIT, ENTITY = "chunk", "unit", "entity"
CONTAINS, MENTIONS = "contains", "mentions"
#: Vector-index name of each node type.
LAYERS: dict[str, str] = {CHUNK: "chunks", UNIT: "units", ENTITY: "entities"}
GRAPH_FILE = "graph.json"
VECTORS_DIR = "vectors"

VectorIndexFactory = Callable[[str, int, str], VectorIndex]
"""``factory(layer, dimension, model_name)`` -> a new, empty vector index for one layer."""


def node_id(kind: str, key: str) -> str:
    """Graph node id of a chunk, unit or entity.

    Examples
    --------
    >>> node_id("entity", "nottingham forest")
    'entity:nottingham forest'
    """
    return f"{kind}:{key}"


def node_key(node: str) -> str:
    """The passage id, unit id or entity name inside a node id (inverse of :func:`node_id`).

    Examples
    --------
    >>> node_key("unit:ab12")
    'ab12'
    """
    return node.split(":", 1)[1]


def in_memory_vectors(layer: str, dimension: int, model_name: str) -> VectorIndex:
    """Default factory: an exact :class:`InMemoryVectorIndex` per layer.

    Examples
    --------
    >>> len(in_memory_vectors("units", 3, "toy"))
    0
    """
    return InMemoryVectorIndex(dimension, model_name)


class ChromaVectors:
    """Factory putting the three layers in Chroma collections ``<prefix>-<layer>``.

    Parameters
    ----------
    path : str or Path, optional
        Embedded persistent Chroma directory; ``None``: in-memory Chroma (or ``client`` /
        ``host`` in ``options``).
    prefix : str, optional
        Collection-name prefix; ``None``: ``clue-<random>``, so two indexes in one process never
        share collections (in-process Chroma clients share state).
    **options
        Passed to :class:`ChromaVectorIndex` (``client``, ``host``, ``port``, ``hnsw``...).

    Examples
    --------
    >>> index = ClueIndex.from_documents(docs, vector_index=ChromaVectors())  # doctest: +SKIP
    """

    def __init__(
        self, path: str | Path | None = None, *, prefix: str | None = None, **options: Any
    ) -> None:
        self.path = path
        self.prefix = prefix or f"clue-{uuid.uuid4().hex[:12]}"
        self.options = options

    def __call__(self, layer: str, dimension: int, model_name: str) -> VectorIndex:
        return ChromaVectorIndex(
            f"{self.prefix}-{layer}",
            embedding_model=model_name,
            dimension=dimension,
            path=self.path,
            **self.options,
        )


class ClueStore:
    """Graph and vectors of a Clue-Index, in the core stores.

    Parameters
    ----------
    model_name : str
        Embedding model of the vectors (recorded in the vector indexes).
    factory : callable, optional
        ``factory(layer, dimension, model_name)`` making each layer's vector index (created
        on the first vectors, when the dimension is known); ``None``: :func:`in_memory_vectors`.

    Examples
    --------
    >>> store = ClueStore("toy")
    >>> len(store.graph_store), store.dimension
    (0, 0)
    """

    def __init__(self, model_name: str, factory: VectorIndexFactory | None = None) -> None:
        self.model_name = model_name
        self.factory: VectorIndexFactory = factory or in_memory_vectors
        self.graph_store = GraphStore()
        self.vectors: dict[str, VectorIndex] = {}
        self.dimension = 0

    # -- reading ---------------------------------------------------------------------------
    def has(self, kind: str, key: str) -> bool:
        """Whether the chunk / unit / entity ``key`` is in the graph."""
        return node_id(kind, key) in self.graph_store

    def nearest(self, kind: str, vector: FloatMatrix, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest ``(key, cosine)`` of one layer, plus every hit tied with the k-th.

        Ties at the boundary are all returned so the caller can break them by its own order
        (Q-Iter: graph row), independently of the backend's internal order. A zero vector
        has no cosine neighbours: no hits (logged).
        """
        index = self.vectors.get(LAYERS[kind])
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
        return self.vectors[LAYERS[kind]].get_embeddings(list(keys))

    # -- mutation --------------------------------------------------------------------------
    def add(
        self,
        passages: Sequence[Passage],
        units: Sequence[KnowledgeUnit],
        *,
        chunk_vectors: Mapping[str, FloatMatrix],
        unit_vectors: Mapping[str, FloatMatrix],
        entity_vectors: Mapping[str, FloatMatrix],
        entity_labels: Mapping[str, str],
    ) -> None:
        """Add chunks, their knowledge units and the entities these mention.

        Vectors must be given for every new chunk, unit and entity (entities already in the
        graph keep their vector and label and only gain provenance).
        """
        g = self.graph_store
        for p in passages:
            g.add_node(
                node_id(CHUNK, p.id),
                CHUNK,
                (p.doc_id,),
                text=p.text,
                doc_id=p.doc_id,
                metadata=dict(p.metadata),
            )
        for u in units:
            unit = node_id(UNIT, u.id)
            prov = (u.doc_id,)
            g.add_node(unit, UNIT, prov, text=u.text, doc_id=u.doc_id, source=u.source)
            g.add_edge(node_id(CHUNK, u.passage_id), unit, CONTAINS, prov)
            for name in u.entities:
                entity = node_id(ENTITY, name)
                if entity in g:
                    g.add_node(entity, ENTITY, prov)
                else:
                    g.add_node(entity, ENTITY, prov, name=name, label=entity_labels[name])
                g.add_edge(unit, entity, MENTIONS, prov)
        self._add_vectors(
            CHUNK, chunk_vectors, [{"doc_id": p.doc_id} for p in passages if p.id in chunk_vectors]
        )
        self._add_vectors(
            UNIT,
            unit_vectors,
            [{"doc_id": u.doc_id, "chunk_id": u.passage_id} for u in units if u.id in unit_vectors],
        )
        self._add_vectors(ENTITY, entity_vectors, None)

    def _add_vectors(
        self,
        kind: str,
        vectors: Mapping[str, FloatMatrix],
        metadatas: Sequence[Mapping[str, Any]] | None,
    ) -> None:
        if not vectors:
            return
        matrix = np.stack(list(vectors.values()))
        self._index(kind, int(matrix.shape[1])).add(list(vectors), matrix, metadatas)

    def _index(self, kind: str, dimension: int) -> VectorIndex:
        layer = LAYERS[kind]
        if layer not in self.vectors:
            if self.dimension and dimension != self.dimension:
                raise ValueError(
                    f"vector dimension {dimension} != index dimension {self.dimension}"
                )
            self.dimension = dimension
            self.vectors[layer] = self.factory(layer, dimension, self.model_name)
        return self.vectors[layer]

    def remove_document(self, doc_id: str) -> int:
        """Forget ``doc_id`` (graph provenance and vectors); returns the chunks removed."""
        removed = self.graph_store.remove_provenance(doc_id)
        gone: dict[str, list[str]] = {layer: [] for layer in LAYERS.values()}
        for node in removed.nodes:
            kind = node.split(":", 1)[0]
            gone[LAYERS[kind]].append(node_key(node))
        for layer, keys in gone.items():
            if keys:
                self.vectors[layer].delete(keys)
        return len(gone[LAYERS[CHUNK]])

    # -- persistence -----------------------------------------------------------------------
    def persist(self, directory: Path) -> None:
        """Write ``graph.json`` and ``vectors/<layer>/`` into ``directory`` (an existing,
        fresh directory, e.g. the temporary one of ``atomic_directory``).

        In-memory indexes persist themselves; another backend (e.g. Chroma, whose data lives
        in its own store) is copied into an in-memory index first, so the directory is always
        self-contained (logged).
        """
        self.graph_store.save(directory / GRAPH_FILE)
        for kind, layer in LAYERS.items():
            index = self.vectors.get(layer)
            if index is None:
                continue
            if isinstance(index, InMemoryVectorIndex):
                local = index
            else:
                logger.info("copying the %s vectors from %s to persist them", layer, type(index))
                local = InMemoryVectorIndex(self.dimension, self.model_name)
                self._copy(kind, index, local)
            local.persist(directory / VECTORS_DIR / layer)

    def _copy(self, kind: str, source: VectorIndex, target: VectorIndex) -> None:
        """Copy every vector of one layer (with its metadata) from ``source`` to ``target``."""
        keys = [node_key(n) for n in self.graph_store.nodes(kind)]
        if keys:
            target.add(keys, source.get_embeddings(keys), self._metadatas(kind, keys))

    def _metadatas(self, kind: str, keys: Sequence[str]) -> list[dict[str, Any]] | None:
        g = self.graph_store.graph
        if kind == CHUNK:
            return [{"doc_id": g.nodes[node_id(CHUNK, k)]["doc_id"]} for k in keys]
        if kind == UNIT:
            return [
                {
                    "doc_id": g.nodes[node_id(UNIT, k)]["doc_id"],
                    "chunk_id": node_key(next(iter(g.pred[node_id(UNIT, k)]))),
                }
                for k in keys
            ]
        return None

    @classmethod
    def load(
        cls,
        directory: Path,
        *,
        model_name: str,
        dimension: int,
        factory: VectorIndexFactory | None = None,
    ) -> ClueStore:
        """Read what :meth:`persist` wrote and check graph and vectors agree.

        With a ``factory`` other than the in-memory default, the loaded vectors are copied
        into the indexes it makes.

        Raises
        ------
        IndexNotFoundError
            A missing graph or vector directory.
        IndexMismatchError
            Another model or dimension, or vector ids that differ from the graph's nodes.
        """
        store = cls(model_name, factory)
        store.graph_store = GraphStore.load(directory / GRAPH_FILE)
        store.dimension = dimension
        for kind, layer in LAYERS.items():
            keys = [node_key(n) for n in store.graph_store.nodes(kind)]
            if not keys:
                continue
            index = InMemoryVectorIndex.load(
                directory / VECTORS_DIR / layer, model_name=model_name, dimension=dimension
            )
            if set(index.ids) != set(keys):
                raise IndexMismatchError(
                    f"{directory}: the {layer} vectors ({len(index)}) do not match the graph's "
                    f"{len(keys)} {kind} nodes (corrupt index)"
                )
            store.vectors[layer] = index
            if factory is not None and factory is not in_memory_vectors:
                logger.info("copying the loaded %s vectors into %s", layer, factory)
                target = factory(layer, dimension, model_name)
                store._copy(kind, index, target)
                store.vectors[layer] = target
        return store
