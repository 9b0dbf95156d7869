"""QCG-RAG's schema on the core :class:`~graphrag_integrations.core.index.store.IndexStore`.

The two-layer graph of §3.3 lives in the store's graph backend (networkx ``GraphStore`` by
default, any :class:`~graphrag_integrations.core.graph.protocol.GraphBackend` class):

* ``chunk`` nodes ``"chunk:<passage id>"`` (attributes ``text``, ``doc_id``, ``metadata``,
  ``pairs``: every generated pair ``[query, answer]`` before filtering, so the index is
  rebuildable without the LLM);
* ``query`` nodes ``"query:<query id>"`` (``query``, ``answer``, ``chunk``, ``index``: the
  pair's position in the generated list, ``score``: its Doc2Query-- cosine to the chunk);
  query ids are ``"<passage id>-<index>"`` as in the paper's case study;
* ``from_chunk`` edges query -> chunk (``E_inter``) and ``similar`` edges query -> query
  (``E_intra``, attribute ``rank`` 0..k-1, inserted in rank order so the backend's
  ``neighbors`` lists them by rank).

Provenance is the document id on every node and edge, so ``delete(doc_id)`` is
:meth:`IndexStore.remove_document`; the kNN lists that lost a neighbour are then rewritten
(:meth:`IndexStore.remove_edges` + ``add_edge``) by the index
(:func:`~graphrag_integrations.methods.qcg.graph.repair_knn`). Vector layers: ``"queries"``
(the node text of each query) and ``"chunks"`` (each chunk's text); the derived retrieval
arrays (:class:`~graphrag_integrations.methods.qcg.graph.QueryGraph`) are the store's derived
view ``"qcg"``.

``chunk_similarity="hybrid"`` also needs BM25 over the chunks: the derived view
``"qcg-bm25"`` (:class:`ChunkLexicon`, built on first use and after a mutation, so insert and
delete keep it consistent). :meth:`QCGStore.persist_lexicon` writes it to ``bm25/`` in the
index directory and :meth:`QCGStore.load` reads it back, so a loaded index does not
re-tokenise its chunks (a lexicon whose chunks differ from the graph's is rebuilt, logged;
with a database graph the stored lexicon is used as is until the index changes, so a query
process does not read every chunk's text to check it).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.graph.backends import is_in_process
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.index.store_base import VectorIndexFactory
from graphrag_integrations.core.persistence import atomic_write_json
from graphrag_integrations.core.retrieval.lexical import MATRIX_DIR, BM25Scorer
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.qcg.graph import QueryGraph
from graphrag_integrations.methods.qcg.prompts import QAPair

__all__ = [
    "CHUNK",
    "FROM_CHUNK",
    "LAYERS",
    "LEXICON_DIR",
    "QUERY",
    "SIMILAR",
    "ChunkLexicon",
    "QCGStore",
    "query_id",
]

logger = logging.getLogger(__name__)

CHUNK, QUERY = "chunk", "query"
FROM_CHUNK, SIMILAR = "from_chunk", "similar"
LAYERS = {QUERY: "queries", CHUNK: "chunks"}
#: Folder of the persisted BM25 over the chunks (``chunks.json`` + ``bm25s/``).
LEXICON_DIR = "bm25"
_LEXICON_CHUNKS = "chunks.json"


@dataclass(frozen=True)
class ChunkLexicon:
    """BM25 over the chunks: ``scorer`` row ``i`` is chunk ``ids[i]`` (ids sorted).

    ``fingerprint`` (:func:`chunk_fingerprint`) identifies the chunks it was built over.
    """

    ids: tuple[str, ...]
    fingerprint: str
    scorer: BM25Scorer


def chunk_fingerprint(passages: Sequence[Passage]) -> str:
    """SHA-256 over the ids and texts of ``passages`` (in the order given).

    Examples
    --------
    >>> a = chunk_fingerprint([Passage("p", "Paris.", "d")])
    >>> a == chunk_fingerprint([Passage("p", "Rome.", "d")]), len(a)
    (False, 64)
    """
    digest = hashlib.sha256()
    for p in passages:
        digest.update(f"{len(p.id)}:{p.id}{len(p.text)}:{p.text}".encode())
    return digest.hexdigest()


def query_id(passage_id: str, index: int) -> str:
    """Id of the ``index``-th generated pair of a chunk (the paper's ``x-y-z`` form).

    Examples
    --------
    >>> query_id("20261221_12:00-0", 14)
    '20261221_12:00-0-14'
    """
    return f"{passage_id}-{index}"


def query_chunk(qid: str) -> str:
    """The passage id of a query id (the inverse of :func:`query_id`).

    Examples
    --------
    >>> query_chunk(query_id("20261221_12:00-0", 14))
    '20261221_12:00-0'
    """
    return qid.rsplit("-", 1)[0]


def qcg_metadata(graph: GraphBackend, kind: str, key: str) -> dict[str, Any] | None:
    """Vector metadata: ``doc_id`` (and ``chunk_id`` for a query), read from the graph."""
    data = graph.node(node_id(kind, key))
    if kind == CHUNK:
        return {"doc_id": data["doc_id"]}
    chunk = graph.node(node_id(CHUNK, str(data["chunk"])))
    return {"doc_id": chunk["doc_id"], "chunk_id": data["chunk"]}


class QCGStore:
    """Graph and vectors of a QCG index (one :class:`IndexStore`).

    Examples
    --------
    >>> import numpy as np
    >>> store = QCGStore("toy")
    >>> store.add_chunk(Passage("p", "Paris is in France.", "d"), [QAPair("Where?", "France")],
    ...                 [(0, 0.9)], np.ones((1, 2), np.float32) / 2**0.5,
    ...                 np.array([1.0, 0.0], np.float32))
    ['p-0']
    >>> store.chunk_of("p-0"), store.remove_document("d")
    ('p', (['p'], ['p-0']))
    """

    def __init__(
        self,
        model_name: str,
        factory: VectorIndexFactory | None = None,
        graph: type[GraphBackend] | None = None,
        *,
        store: IndexStore | None = None,
    ) -> None:
        self.store = store or IndexStore(
            model_name, LAYERS, factory=factory, graph=graph, metadata=qcg_metadata
        )
        #: A lexicon read by :meth:`load`, reused by the first view build if it still fits.
        self._stored_lexicon: ChunkLexicon | None = None
        #: Whether retrieval reads per-query neighbourhoods (:attr:`reads_lazily`); ``None``:
        #: when the graph is in a database. ``True`` makes an in-process graph read that way.
        self.neighbourhood_reads: bool | None = None
        #: The store's version when :meth:`load` read the lexicon (unchanged since: it fits).
        self._stored_version = -1

    @property
    def model_name(self) -> str:
        return self.store.model_name

    @property
    def graph_store(self) -> GraphBackend:
        return self.store.graph

    @property
    def dimension(self) -> int:
        return self.store.dimension

    # -- reading ---------------------------------------------------------------------------
    def has_chunk(self, passage_id: str) -> bool:
        return self.store.has(CHUNK, passage_id)

    def passage(self, passage_id: str) -> Passage:
        data = self.store.graph.node(node_id(CHUNK, passage_id))
        return Passage(passage_id, data["text"], data["doc_id"], dict(data["metadata"]))

    def passages(self) -> list[Passage]:
        """Every chunk, sorted by passage id."""
        return [self.passage(key) for key in self.chunk_ids()]

    def passages_of_documents(self, doc_ids: Iterable[str]) -> list[Passage]:
        """The chunks of the documents ``doc_ids``, sorted by id, in one batched read of the
        chunks named ``<doc id>#<n>``; documents whose chunks have ids of another form
        (``from_passages``) are found by reading every chunk (:meth:`passages`)."""
        wanted = set(doc_ids)
        likely = [key for key in self.chunk_ids() if key.rpartition("#")[0] in wanted]
        data = self.store.graph.nodes_data(node_id(CHUNK, key) for key in likely)
        found = [
            Passage(key, d["text"], d["doc_id"], dict(d["metadata"]))
            for key in likely
            if (d := data[node_id(CHUNK, key)])["doc_id"] in wanted
        ]
        if wanted - {p.doc_id for p in found}:
            return [p for p in self.passages() if p.doc_id in wanted]
        return found

    def generated_pairs(self, passage_id: str) -> list[QAPair]:
        """Every pair generated for a chunk (before filtering)."""
        data = self.store.graph.node(node_id(CHUNK, passage_id))
        return [QAPair(str(q), str(a)) for q, a in data["pairs"]]

    def chunk_ids(self) -> list[str]:
        """Chunk (passage) ids, sorted (the derived view ``"qcg-chunk-ids"``: listing the
        graph's chunk nodes costs ~5 ms at 10k query nodes, once per mutation here)."""
        ids: tuple[str, ...] = self.store.derived("qcg-chunk-ids", _sorted_chunk_ids)
        return list(ids)

    def query_ids(self) -> list[str]:
        """Query ids, sorted."""
        return sorted(self.store.keys(QUERY))

    def query(self, qid: str) -> dict[str, Any]:
        """Attributes of a query node (``query``, ``answer``, ``chunk``, ``index``, ``score``)."""
        return self.store.graph.node(node_id(QUERY, qid))

    def chunk_of(self, qid: str) -> str:
        return str(self.query(qid)["chunk"])

    def knn(self) -> dict[str, list[str]]:
        """Every query's kNN list, by rank (the order :meth:`set_knn` inserted them in)."""
        graph = self.store.graph
        return {
            node_key(n): [node_key(v) for v in graph.neighbors(n, SIMILAR, "out")]
            for n in graph.nodes(QUERY)
        }

    def query_count(self) -> int:
        """How many query nodes there are (the size of the ``"queries"`` vector layer, which
        holds one vector per query node: no graph read)."""
        index = self.store.vectors.get(LAYERS[QUERY])
        return 0 if index is None else len(index)

    def chunk_count(self) -> int:
        """How many chunk nodes there are (the size of the ``"chunks"`` vector layer)."""
        index = self.store.vectors.get(LAYERS[CHUNK])
        return 0 if index is None else len(index)

    @property
    def reads_lazily(self) -> bool:
        """Whether retrieval reads per-query neighbourhoods instead of the :meth:`query_graph`
        view: :attr:`neighbourhood_reads`, by default whether the graph is in a database
        (not :func:`~graphrag_integrations.core.graph.backends.is_in_process`)."""
        if self.neighbourhood_reads is not None:
            return self.neighbourhood_reads
        return not is_in_process(type(self.store.graph))

    def query_vectors(self, ids: Sequence[str]) -> FloatMatrix:
        return self.store.embeddings(QUERY, ids)

    def chunk_vectors(self, ids: Sequence[str]) -> FloatMatrix:
        return self.store.embeddings(CHUNK, ids)

    def query_graph(self) -> QueryGraph:
        """The derived arrays retrieval reads (rebuilt only after a mutation)."""
        return self.store.derived("qcg", _build_query_graph)

    def lexicon(self) -> ChunkLexicon:
        """BM25 over the current chunks (the derived view ``"qcg-bm25"``)."""
        return self.store.derived("qcg-bm25", self._build_lexicon)

    def _build_lexicon(self, store: IndexStore, previous: ChunkLexicon | None) -> ChunkLexicon:
        stored = self._stored_lexicon
        if stored is not None and self.reads_lazily and store.version == self._stored_version:
            return stored  # a database graph as loaded: no reading of every chunk's text
        passages = self.passages()
        fingerprint = chunk_fingerprint(passages)
        for old in (previous, self._stored_lexicon):
            if old is not None and old.fingerprint == fingerprint:
                return old  # immutable, same chunks: nothing to re-tokenise
        if self._stored_lexicon is not None:
            logger.info("the stored BM25 lexicon is for other chunks: rebuilding it")
            self._stored_lexicon = None
        return ChunkLexicon(
            tuple(p.id for p in passages), fingerprint, BM25Scorer([p.text for p in passages])
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
        store = self.store
        prov = (passage.doc_id,)
        qids = [query_id(passage.id, index) for index, _ in kept]
        with store.writing():
            chunk = store.add_node(
                CHUNK,
                passage.id,
                prov,
                text=passage.text,
                doc_id=passage.doc_id,
                metadata=dict(passage.metadata),
                pairs=[[p.query, p.answer] for p in pairs],
            )
            for qid, (index, score) in zip(qids, kept, strict=True):
                pair = pairs[index]
                node = store.add_node(
                    QUERY,
                    qid,
                    prov,
                    query=pair.query,
                    answer=pair.answer,
                    chunk=passage.id,
                    index=index,
                    score=float(score),
                )
                store.add_edge(node, chunk, FROM_CHUNK, prov)
            store.add_vectors(CHUNK, {passage.id: chunk_vector})
            store.add_vectors(QUERY, dict(zip(qids, query_vectors, strict=True)))
        return qids

    def set_knn(self, lists: Mapping[str, Sequence[str]]) -> None:
        """Replace the ``similar`` out-edges of each query in ``lists`` (in rank order)."""
        store = self.store
        graph = store.graph
        with store.writing():
            for qid, nbrs in lists.items():
                node = node_id(QUERY, qid)
                old = graph.neighbors(node, SIMILAR, "out")
                store.remove_edges([(node, v, SIMILAR) for v in old])
                prov = tuple(graph.node(node)["provenance"])
                for rank, nbr in enumerate(nbrs):
                    store.add_edge(node, node_id(QUERY, nbr), SIMILAR, prov, rank=rank)

    def remove_document(self, doc_id: str) -> tuple[list[str], list[str]]:
        """Forget ``doc_id``; returns (removed passage ids, removed query ids)."""
        gone = self.store.remove_document(doc_id)
        return gone.get(CHUNK, []), gone.get(QUERY, [])

    # -- persistence -----------------------------------------------------------------------
    def persist(self, directory: str | Path) -> None:
        """Write ``graph.json`` and ``vectors/<layer>/`` into the (fresh) ``directory``
        (:meth:`IndexStore.persist`; the index's ``persist`` writes the manifest around it)."""
        self.store.persist(directory)

    def persist_lexicon(self, directory: str | Path) -> None:
        """Write :meth:`lexicon` to ``directory/bm25/`` (chunk ids, fingerprint, matrix)."""
        lexicon = self.lexicon()
        folder = Path(directory) / LEXICON_DIR
        folder.mkdir(parents=True, exist_ok=True)
        lexicon.scorer.save(folder / MATRIX_DIR)
        atomic_write_json(
            folder / _LEXICON_CHUNKS,
            {"ids": list(lexicon.ids), "fingerprint": lexicon.fingerprint},
        )

    @classmethod
    def load(
        cls,
        directory: Path,
        *,
        model_name: str,
        dimension: int,
        factory: VectorIndexFactory | None = None,
        graph: type[GraphBackend] | None = None,
    ) -> QCGStore:
        """Read what :meth:`persist` wrote (:meth:`IndexStore.load` checks graph and vectors)
        and the BM25 lexicon of :meth:`persist_lexicon` when there is one.

        Raises
        ------
        IndexNotFoundError
            Missing files.
        IndexMismatchError
            Another model or dimension, or vectors that differ from the graph's nodes.
        """
        store = IndexStore.load(
            directory,
            model_name=model_name,
            dimension=dimension,
            layers=LAYERS,
            factory=factory,
            graph=graph,
            metadata=qcg_metadata,
        )
        qcg = cls(model_name, store=store)
        chunks = Path(directory) / LEXICON_DIR / _LEXICON_CHUNKS
        if chunks.is_file() and not store.later_writes:  # else stale: rebuilt from the graph
            record = json.loads(chunks.read_text(encoding="utf-8"))
            ids = tuple(str(i) for i in record["ids"])
            scorer = BM25Scorer.load(chunks.parent / MATRIX_DIR, len(ids))
            qcg._stored_lexicon = ChunkLexicon(ids, str(record["fingerprint"]), scorer)
            qcg._stored_version = store.version
        return qcg


def _sorted_chunk_ids(store: IndexStore, previous: tuple[str, ...] | None) -> tuple[str, ...]:
    return tuple(sorted(store.keys(CHUNK)))


def _build_query_graph(store: IndexStore, previous: QueryGraph | None) -> QueryGraph:
    qcg = QCGStore(store.model_name, store=store)
    ids = qcg.query_ids()
    return QueryGraph.build(ids, qcg.query_vectors(ids), [qcg.chunk_of(q) for q in ids], qcg.knn())
