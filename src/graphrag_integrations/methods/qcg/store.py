"""All storage of a QCG index: one core ``GraphStore`` and two core vector indexes.

The two-layer graph of §3.3 lives in a :class:`~graphrag_integrations.core.graph_store.GraphStore`:

* ``chunk`` nodes ``"chunk:<passage id>"`` (attributes ``text``, ``doc_id``, ``metadata``,
  ``pairs``: every generated pair ``[query, answer]`` before filtering, so the index is
  rebuildable without the LLM);
* ``query`` nodes ``"query:<query id>"`` (``query``, ``answer``, ``chunk``, ``index``: the
  pair's position in the generated list, ``score``: its Doc2Query-- cosine to the chunk);
  query ids are ``"<passage id>-<index>"`` as in the paper's case study;
* ``from_chunk`` edges query -> chunk (``E_inter``) and ``similar`` edges query -> query
  (``E_intra``, attribute ``rank`` 0..k-1).

Provenance is the document id on every node and edge, so ``delete(doc_id)`` starts with
:meth:`GraphStore.remove_provenance`; the kNN lists that lost a neighbour are then rewritten
by the index (:func:`~graphrag_integrations.methods.qcg.graph.repair_knn`).
Vectors: layer ``"queries"`` (the node text of each query) and ``"chunks"`` (each chunk's
text), :class:`InMemoryVectorIndex` by default or any factory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphrag_integrations.core.embeddings import FloatMatrix
from graphrag_integrations.core.graph_store import GraphStore
from graphrag_integrations.core.types import Passage
from graphrag_integrations.core.vector_store import InMemoryVectorIndex, VectorIndex
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.qcg.generation import QAPair
from graphrag_integrations.methods.qcg.graph import QueryGraph

logger = logging.getLogger(__name__)

CHUNK, QUERY = "chunk", "query"
FROM_CHUNK, SIMILAR = "from_chunk", "similar"
LAYERS = {QUERY: "queries", CHUNK: "chunks"}
GRAPH_FILE = "graph.json"
VECTORS_DIR = "vectors"

VectorIndexFactory = Callable[[str, int, str], VectorIndex]
"""``factory(layer, dimension, model_name)`` -> a new, empty vector index."""


def node_id(kind: str, key: str) -> str:
    """Graph node id.

    Examples
    --------
    >>> node_id("query", "p1-3")
    'query:p1-3'
    """
    return f"{kind}:{key}"


def node_key(node: str) -> str:
    """Inverse of :func:`node_id`.

    Examples
    --------
    >>> node_key("chunk:p1")
    'p1'
    """
    return node.split(":", 1)[1]


def query_id(passage_id: str, index: int) -> str:
    """Id of the ``index``-th generated pair of a chunk (the paper's ``x-y-z`` form).

    Examples
    --------
    >>> query_id("20261221_12:00-0", 14)
    '20261221_12:00-0-14'
    """
    return f"{passage_id}-{index}"


def in_memory_vectors(layer: str, dimension: int, model_name: str) -> VectorIndex:
    """Default factory: an exact in-memory index."""
    return InMemoryVectorIndex(dimension, model_name)


class QCGStore:
    """Graph and vectors of a QCG index.

    Examples
    --------
    >>> store = QCGStore("toy")
    >>> store.add_chunk(Passage("p", "Paris is in France.", "d"), [QAPair("Where?", "France")],
    ...                 [(0, 0.9)], np.ones((1, 2), np.float32) / 2**0.5,
    ...                 np.array([1.0, 0.0], np.float32))
    ['p-0']
    >>> store.chunk_of("p-0"), store.remove_document("d")
    ('p', (['p'], ['p-0']))
    """

    def __init__(self, model_name: str, factory: VectorIndexFactory | None = None) -> None:
        self.model_name = model_name
        self.factory: VectorIndexFactory = factory or in_memory_vectors
        self.graph_store = GraphStore()
        self.vectors: dict[str, VectorIndex] = {}
        self.dimension = 0

    # -- reading ---------------------------------------------------------------------------
    def has_chunk(self, passage_id: str) -> bool:
        return node_id(CHUNK, passage_id) in self.graph_store

    def passage(self, passage_id: str) -> Passage:
        data = self.graph_store.node(node_id(CHUNK, passage_id))
        return Passage(passage_id, data["text"], data["doc_id"], dict(data["metadata"]))

    def passages(self) -> list[Passage]:
        """Every chunk, sorted by passage id."""
        return [self.passage(node_key(n)) for n in sorted(self.graph_store.nodes(CHUNK))]

    def generated_pairs(self, passage_id: str) -> list[QAPair]:
        """Every pair generated for a chunk (before filtering)."""
        data = self.graph_store.node(node_id(CHUNK, passage_id))
        return [QAPair(str(q), str(a)) for q, a in data["pairs"]]

    def query_ids(self) -> list[str]:
        """Query ids, sorted."""
        return sorted(node_key(n) for n in self.graph_store.nodes(QUERY))

    def query(self, qid: str) -> dict[str, Any]:
        """Attributes of a query node (``query``, ``answer``, ``chunk``, ``index``, ``score``)."""
        return self.graph_store.node(node_id(QUERY, qid))

    def chunk_of(self, qid: str) -> str:
        return str(self.query(qid)["chunk"])

    def knn(self) -> dict[str, list[str]]:
        """Every query's kNN list, by rank."""
        g = self.graph_store.graph
        out: dict[str, list[str]] = {}
        for node in self.graph_store.nodes(QUERY):
            edges = [
                (d["rank"], node_key(v))
                for _, v, d in g.out_edges(node, data=True)
                if d["type"] == SIMILAR
            ]
            out[node_key(node)] = [v for _, v in sorted(edges)]
        return out

    def query_vectors(self, ids: Sequence[str]) -> FloatMatrix:
        if not ids:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self.vectors[LAYERS[QUERY]].get_embeddings(list(ids))

    def chunk_vectors(self, ids: Sequence[str]) -> FloatMatrix:
        if not ids:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self.vectors[LAYERS[CHUNK]].get_embeddings(list(ids))

    def query_graph(self) -> QueryGraph:
        """The derived arrays retrieval reads."""
        ids = self.query_ids()
        return QueryGraph.build(
            ids, self.query_vectors(ids), [self.chunk_of(q) for q in ids], self.knn()
        )

    # -- mutation --------------------------------------------------------------------------
    def add_chunk(
        self,
        passage: Passage,
        pairs: Sequence[QAPair],
        kept: Sequence[tuple[int, float]],
        query_vectors: FloatMatrix,
        chunk_vector: FloatMatrix,
    ) -> list[str]:
        """Add a chunk, its kept pairs (``(index, Doc2Query-- score)``) and their vectors.

        Returns the new query ids.
        """
        g = self.graph_store
        prov = (passage.doc_id,)
        chunk = node_id(CHUNK, passage.id)
        g.add_node(
            chunk,
            CHUNK,
            prov,
            text=passage.text,
            doc_id=passage.doc_id,
            metadata=dict(passage.metadata),
            pairs=[[p.query, p.answer] for p in pairs],
        )
        qids = []
        for index, score in kept:
            qid = query_id(passage.id, index)
            pair = pairs[index]
            g.add_node(
                node_id(QUERY, qid),
                QUERY,
                prov,
                query=pair.query,
                answer=pair.answer,
                chunk=passage.id,
                index=index,
                score=float(score),
            )
            g.add_edge(node_id(QUERY, qid), chunk, FROM_CHUNK, prov)
            qids.append(qid)
        meta = {"doc_id": passage.doc_id}
        self._index(CHUNK, chunk_vector.shape[0]).add([passage.id], chunk_vector[None, :], [meta])
        if qids:
            metas = [{"doc_id": passage.doc_id, "chunk_id": passage.id} for _ in qids]
            self._index(QUERY, query_vectors.shape[1]).add(qids, query_vectors, metas)
        return qids

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

    def set_knn(self, lists: Mapping[str, Sequence[str]]) -> None:
        """Replace the ``similar`` out-edges of each query in ``lists``."""
        g = self.graph_store
        raw = g.graph
        for qid, nbrs in lists.items():
            node = node_id(QUERY, qid)
            old = [(u, v, k) for u, v, k, t in raw.out_edges(node, keys=True, data="type")]
            for u, v, k in old:
                if raw.edges[u, v, k]["type"] == SIMILAR:
                    raw.remove_edge(u, v, k)
            prov = tuple(g.provenance(node))
            for rank, nbr in enumerate(nbrs):
                g.add_edge(node, node_id(QUERY, nbr), SIMILAR, prov, rank=rank)

    def remove_document(self, doc_id: str) -> tuple[list[str], list[str]]:
        """Forget ``doc_id``; returns (removed passage ids, removed query ids)."""
        removed = self.graph_store.remove_provenance(doc_id)
        chunks = [node_key(n) for n in removed.nodes if n.startswith(CHUNK + ":")]
        queries = [node_key(n) for n in removed.nodes if n.startswith(QUERY + ":")]
        if chunks:
            self.vectors[LAYERS[CHUNK]].delete(chunks)
        if queries:
            self.vectors[LAYERS[QUERY]].delete(queries)
        return chunks, queries

    # -- persistence -----------------------------------------------------------------------
    def persist(self, directory: Path) -> None:
        """Write ``graph.json`` and ``vectors/<layer>/`` into a fresh ``directory``."""
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
                keys = self.query_ids() if kind == QUERY else [p.id for p in self.passages()]
                if keys:
                    local.add(keys, index.get_embeddings(keys))
            local.persist(directory / VECTORS_DIR / layer)

    @classmethod
    def load(
        cls,
        directory: Path,
        *,
        model_name: str,
        dimension: int,
        factory: VectorIndexFactory | None = None,
    ) -> QCGStore:
        """Read what :meth:`persist` wrote; graph and vectors must agree.

        Raises
        ------
        IndexNotFoundError
            Missing files.
        IndexMismatchError
            Another model or dimension, or vectors that differ from the graph's nodes.
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
            if factory is not None and factory is not in_memory_vectors:
                target = factory(layer, dimension, model_name)
                target.add(keys, index.get_embeddings(keys))
                store.vectors[layer] = target
            else:
                store.vectors[layer] = index
        return store
