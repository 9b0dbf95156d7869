"""Clue-Index (Algorithm 1 at alpha = 0): chunks, sentence knowledge units, spaCy entities.

Each chunk is parsed ONCE by spaCy; that single ``Doc`` gives the sentences (the knowledge
units) and the entities each sentence mentions (the unit-entity edges). Design decisions
(measured in ``docs/lab/clue.md``):

* a chunk's title (``metadata["title"]``) prefixes each of its units (``"Title: sentence"``)
  and is linked to each of them as an entity (label ``TITLE``), so the sentence "He was born
  in 1950." still reaches its subject;
* entity names are keyed by ``normalize_entity`` at index and at query time, and each entity
  node is embedded from that key once;
* numeric entity types (``CARDINAL``, ``ORDINAL``, ``QUANTITY``, ``PERCENT``, ``MONEY``,
  ``TIME``) are not linked: they are traversal hubs without meaning ("two", "first"). ``DATE``
  is configurable through ``excluded_labels``;
* every unique unit text, entity key and chunk is embedded once, in batches; the chunk vectors
  serve the final re-ranking without re-encoding at query time.

Storage is the core :class:`~graphrag_integrations.core.index.store.IndexStore`
(:attr:`ClueIndex.store`, schema in :mod:`~graphrag_integrations.methods.clue.store`): the
chunk / unit / entity graph in a graph backend (:attr:`ClueIndex.graph_store`: networkx
``GraphStore`` by default, FalkorDB with ``graph_store="falkordb://HOST:PORT/GRAPH"``;
provenance = document id, so ``delete`` is ``remove_document``) and the vectors in core vector
indexes (in memory by default, Chroma through ``vector_index=ChromaVectors(...)``).
:attr:`ClueIndex.graph` is Q-Iter's derived array view of them (the store's derived view
``"qiter"``), rebuilt after each mutation.

With ``alpha > 0`` (and an ``llm``), the hybrid extraction of the paper runs on each batch
given to :meth:`ClueIndex.add_passages`: ``select_chunks`` picks the chunks the LLM may read
under ``alpha`` times the batch's tokens (token counts: ``core.llm.estimate_tokens``), the
``KnowledgeUnitExtractor`` turns them into knowledge units (falling back to sentences on a bad
reply, logged and counted), and one spaCy parse per LLM unit gives its entities. The other
chunks keep their sentence units from the single chunk parse.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typing_extensions import Unpack

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix, as_embedder
from graphrag_integrations.core.graph.backends import GraphStoreSpec, resolve_graph_backend
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.base import BaseIndex, build_from_documents
from graphrag_integrations.core.index.build_options import EmbeddingIndexOptions
from graphrag_integrations.core.index.building import (
    build_from_passages,
    document_ids,
    drop_indexed,
)
from graphrag_integrations.core.index.query_binding import QueryParamsField
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.index.store_base import VectorIndexFactory
from graphrag_integrations.core.params import resolve_params
from graphrag_integrations.core.persistence import (
    Manifest,
)
from graphrag_integrations.core.progress import ProgressSetting
from graphrag_integrations.core.retrieval.filters import FilterLike, MetadataFilter
from graphrag_integrations.core.text.nlp import SpacyNLP
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.core.validation import check_k
from graphrag_integrations.core.vector_store import VectorIndex
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.clue.extraction import ExtractionStats
from graphrag_integrations.methods.clue.graph import ClueGraph
from graphrag_integrations.methods.clue.neighbourhood import whole_graph_backend
from graphrag_integrations.methods.clue.params import (
    DEFAULT_EXCLUDED_LABELS,
    ClueIndexParams,
    ClueQueryParams,
)
from graphrag_integrations.methods.clue.preparation import (
    PARSE_SLICE,
    TITLE_LABEL,
    CluePreparer,
    PreparedChunks,
    combine,
)
from graphrag_integrations.methods.clue.scope import ScopedView
from graphrag_integrations.methods.clue.statistics import (
    DOCUMENT,
    ensure_statistics,
    read_statistics,
    remove_documents,
)
from graphrag_integrations.methods.clue.store import (
    CHUNK,
    ENTITY,
    LAYERS,
    UNIT,
    add_units,
    clue_metadata,
    clue_store,
    node_key,
)
from graphrag_integrations.methods.clue.term_index import ensure_term_index
from graphrag_integrations.methods.clue.view import QIterView, rank_hits

if TYPE_CHECKING:
    from graphrag_integrations.methods.clue.qiter import QIter

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_EXCLUDED_LABELS", "PARSE_SLICE", "TITLE_LABEL", "ClueIndex", "ClueOptions"]

#: Index directory layout: 2 = manifest + ``graph.json`` (GraphStore) + ``vectors/<layer>/``
#: (unchanged by the move to the core ``IndexStore``, which writes the same files).
FORMAT_VERSION = 2
#: Name of Q-Iter's view among the store's derived views.
VIEW = "qiter"


class ClueOptions(EmbeddingIndexOptions[ClueIndexParams, ClueQueryParams], total=False):
    """The keywords of :meth:`ClueIndex.from_documents`: the
    :class:`~graphrag_integrations.core.index.build_options.EmbeddingIndexOptions` and the
    constructor's own arguments (each key as in :class:`ClueIndex`; one left out has the
    constructor's default)."""

    llm: Any
    query_llm: Any
    reranker: Any
    vector_index: VectorIndexFactory | None
    graph_store: GraphStoreSpec


class ClueIndex(FrameworkSurface, BaseIndex):
    """The Clue-RAG multi-partite graph index (alpha = 0: spaCy sentence units).

    Parameters
    ----------
    embedding : Embedder, str, LangChain Embeddings, LlamaIndex BaseEmbedding, optional
        ``None``: offline all-MiniLM-L6-v2.
    index_params : ClueIndexParams, optional
        Build options (:class:`~graphrag_integrations.methods.clue.params.ClueIndexParams`):
        ``alpha`` (token share of each added batch given to the LLM extractor; 0: spaCy
        sentences only), ``selection_value`` (chunk value of the selection knapsack),
        ``spacy_model``, ``title_prefix`` (prefix units with their chunk title),
        ``link_title`` (link every unit to its chunk-title entity), ``excluded_labels``
        (spaCy entity labels that get no entity node) and ``chunk_vectors``: how a chunk's
        vector (used by the default final re-ranking) is made: ``"units"`` (default) takes
        the re-normalised sum of its knowledge-unit vectors, so chunks cost no encoding (a
        chunk without units is still encoded); ``"encode"`` embeds the chunk text (truncated
        at the embedder's limit). Measured on 2 CPU cores (docs/lab/clue.md): R@5 +0.4 to +0.8
        with ``"units"`` on all four dev settings, indexing 29 instead of 22-24 passages/s. A
        user ``reranker`` scores chunk texts directly and does not use these vectors.
        ``embed_title`` (``False``: a unit's vector is its sentence's alone) and
        ``entity_vectors`` (``"mentions"``: an entity's vector is the mean of its mentions'
        token vectors from the units' own encoding, with no encoder pass over the names)
        are cheaper builds that cost recall (docs/lab/clue.md, "Issue 31: build options").
    query_params : ClueQueryParams, optional
        Q-Iter's options for :meth:`retrieve` and :meth:`as_retriever` (``N``: chunks returned
        when ``retrieve`` gets no ``k``).
    preset : str, optional
        ``"default"`` or ``"paper"`` for both params (not together with them).
    llm : LLM, LLMClient or framework model, optional
        The knowledge-unit extractor, needed when ``alpha > 0``; wrapped in
        ``core.llm.LLMClient`` unless it already has ``complete_many``.
    query_llm : LLM, LLMClient, framework model or callable, optional
        Q-Iter's query-entity extractor (``None``: spaCy NER on the question).
    reranker : core Reranker or str, optional
        Q-Iter's path and chunk scorer (``None``: the fused scorer).
    show_progress : bool or None
        Progress bars; ``None`` (default): on for batches of at least
        :data:`~graphrag_integrations.core.progress.PROGRESS_MIN_PASSAGES` passages.
    vector_index : callable, optional
        ``factory(layer, dimension, model_name)`` making the vector index of each layer
        (``"chunks"``, ``"units"``, ``"entities"``), e.g.
        :class:`~graphrag_integrations.core.vector_store.chroma_collections.ChromaVectors`;
        ``None``: exact in-memory indexes.
    graph_store : str, GraphBackend class or GraphBackend, optional
        Where the graph lives (see
        :func:`~graphrag_integrations.core.graph.backends.resolve_graph_backend`): ``None`` or
        ``"networkx"``: in the process (the networkx
        :class:`~graphrag_integrations.core.graph.networkx_store.GraphStore`);
        ``"falkordb://HOST:PORT/GRAPH"``: that FalkorDB graph, which must be empty
        (``FalkorDBGraph.at(url, overwrite=True)`` replaces what it holds); or a
        :class:`~graphrag_integrations.core.graph.protocol.GraphBackend` class or instance.
        :meth:`load` takes it too: where the graph is now, if it moved.

    Attributes
    ----------
    store : IndexStore
        Graph and vectors (the source of truth).
    graph_store : GraphBackend
        The chunk / unit / entity graph (explore with ``neighbors``; node ids from
        :func:`~graphrag_integrations.core.index.node_ids.node_id`).
    vector_indexes : dict of str to VectorIndex
        The vectors of each layer.
    graph : ClueGraph
        Q-Iter's derived arrays (do not mutate).
    timings : dict of str to float
        Seconds spent by every build so far: ``nlp`` (spaCy), ``llm`` (extraction at
        ``alpha > 0``), ``embedding``, ``graph`` and ``total`` (wall clock). spaCy parses in
        a background thread while the chunks and the slices already parsed are embedded, so
        ``nlp + embedding`` can exceed ``total``.

    Examples
    --------
    With the offline default models (MiniLM, spaCy ``en_core_web_sm``):

    >>> index = ClueIndex.from_documents(
    ...     ["Paris is the capital of France.", "Rome is the capital of Italy."]
    ... )
    >>> index.as_retriever(k=1, D=2).retrieve("capital of France")[0].text
    'Paris is the capital of France.'
    """

    method = "clue"
    format_version = FORMAT_VERSION
    oldest_format_version = FORMAT_VERSION
    index_params_class = ClueIndexParams
    query_params = QueryParamsField(ClueQueryParams)
    k_param = "N"
    #: Default chunking (tokens): the window all-MiniLM-L6-v2 embeds a chunk in.
    chunk_size = 256
    chunk_overlap = 32

    def __init__(
        self,
        embedding: Any = None,
        *,
        index_params: ClueIndexParams | None = None,
        query_params: ClueQueryParams | None = None,
        preset: str | None = None,
        llm: Any = None,
        query_llm: Any = None,
        reranker: Any = None,
        show_progress: bool | None = None,
        vector_index: VectorIndexFactory | None = None,
        graph_store: GraphStoreSpec = None,
    ) -> None:
        params, self.query_params = resolve_params(
            ClueIndexParams,
            ClueQueryParams,
            index_params=index_params,
            query_params=query_params,
            preset=preset,
        )
        if params.alpha > 0 and llm is None:
            raise ValueError("alpha > 0 needs an llm for knowledge-unit extraction")
        self.index_params: ClueIndexParams = params
        self.alpha = params.alpha
        self.llm = llm
        self.query_llm = query_llm
        self.reranker = reranker
        self.selection_value = params.selection_value
        self.chunk_vectors = params.chunk_vectors
        self._preparer: CluePreparer | None = None  # the local builds' (keeps the LLM client)
        self.embedder: Embedder = as_embedder(embedding)
        self.parser = SpacyNLP(params.spacy_model)
        self.title_prefix = params.title_prefix
        self.link_title = params.link_title
        self.excluded_labels = frozenset(params.excluded_labels)
        self.show_progress = show_progress
        self.vector_index = vector_index
        self.graph_backend: type[GraphBackend] | None = resolve_graph_backend(graph_store)
        self.store: IndexStore = clue_store(
            self.embedder.model_name, vector_index, self.graph_backend
        )
        self.timings = dict.fromkeys(("nlp", "llm", "embedding", "graph", "total"), 0.0)
        self._selection = {"chunks": 0, "llm_chunks": 0, "tokens": 0, "llm_tokens": 0}
        self._extraction = ExtractionStats()
        self._retriever: Any = None

    @property
    def passages(self) -> list[Passage]:
        """The indexed chunks, in index order."""
        g = self.graph  # one view, even if another thread mutates meanwhile
        return [g.passages[pid] for pid in g.passage_ids]

    @property
    def graph(self) -> ClueGraph:
        """Q-Iter's derived arrays for the store's current version (do not mutate)."""
        return self.store.derived(VIEW, ClueGraph.build)

    @property
    def graph_store(self) -> GraphBackend:
        """The chunk / unit / entity graph (a core ``GraphBackend``; change it via the index)."""
        return self.store.graph

    @property
    def vector_indexes(self) -> dict[str, VectorIndex]:
        """The core vector index of each layer (``"chunks"``, ``"units"``, ``"entities"``)."""
        return dict(self.store.vectors)

    def nearest_units(
        self, vector: FloatMatrix, k: int, graph: QIterView | None = None
    ) -> list[int]:
        """Rows (of ``graph``, default :attr:`graph`) of the ``k`` units nearest ``vector``
        (a unit vector-index query; of a filtered view: among its allowed units)."""
        if isinstance(graph, ScopedView):
            return graph.nearest(UNIT, vector, k)
        return rank_hits(graph or self.graph, UNIT, self.store.nearest(UNIT, vector, k), k)

    def nearest_entities(
        self, vector: FloatMatrix, k: int, graph: QIterView | None = None
    ) -> list[int]:
        """Rows (of ``graph``, default :attr:`graph`) of the ``k`` entity nodes nearest
        ``vector`` (an entity vector-index query; of a filtered view: among its allowed
        entities)."""
        if isinstance(graph, ScopedView):
            return graph.nearest(ENTITY, vector, k)
        return rank_hits(graph or self.graph, ENTITY, self.store.nearest(ENTITY, vector, k), k)

    @property
    def _in_process_graph(self) -> bool:
        """Whether the graph lives in this process (then :attr:`graph` is cheap to build);
        with a database backend the index reads counts and ids without it."""
        return whole_graph_backend(self.store)

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_documents(  # type: ignore[override]  # typed: the base takes **kwargs
        cls, documents: Iterable[Any], **options: Unpack[ClueOptions]
    ) -> ClueIndex:
        """Index documents (strings, files, LangChain / LlamaIndex documents) cut into chunks.

        ``options``: the constructor's arguments and the chunking, load, checkpoint and
        executor options every index takes (:class:`ClueOptions`).
        """
        return build_from_documents(cls, documents, options)

    @classmethod
    def from_passages(cls, passages: Sequence[Passage], **kwargs: Any) -> ClueIndex:
        """Build from already chunked passages (what the evaluation harness uses)."""
        return build_from_passages(cls, passages, **kwargs)

    def insert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Cut documents into chunks and index them into the existing graph; returns the ids
        added.

        Documents already indexed are skipped with a warning; ``options`` (load and chunking
        options) go to :meth:`~BaseIndex.document_passages`.
        """
        found = self.document_passages(documents, options)
        if self._in_process_graph:
            indexed = {p.doc_id for p in self.graph.passages.values()}
        else:
            indexed = {p.doc_id for p in found if self.store.has(DOCUMENT, p.doc_id)}
        passages = drop_indexed(found, indexed)
        self.add_passages(passages)
        return document_ids(passages)

    def add_passages(self, passages: Sequence[Passage]) -> None:
        """Parse, embed and link ``passages`` (ids already in the index are skipped): the
        :meth:`merge` of their preparation (:mod:`~.preparation`)."""
        new = [
            p for p in dict((p.id, p) for p in passages).values() if not self.store.has(CHUNK, p.id)
        ]
        if len(new) < len(passages):
            logger.info("skipping %d passages already indexed", len(passages) - len(new))
        if not new:
            return
        if self._preparer is None:
            self._preparer = self.preparer()
        self._preparer.show_progress = self.show_progress
        self._preparer.llm_progress = ProgressSetting.llm(self)  # LLM work: always shown
        self.merge([self._preparer(new, lambda name: self.store.has(ENTITY, name))])

    def preparer(self) -> CluePreparer:
        """The per-passage half of the build with this index's settings and models
        (picklable: what an executor runs on its workers; see ``executor=``)."""
        return CluePreparer(self.embedder, self.parser, self.index_params, self.llm)

    def merge(self, prepared: Sequence[PreparedChunks]) -> None:
        """Add prepared batches (input order) to the graph and vectors, once; chunks already
        in the index are skipped."""
        batch = combine(prepared)
        if any(self.store.has(CHUNK, p.id) for p in batch.passages):
            kept = {p.id for p in batch.passages if not self.store.has(CHUNK, p.id)}
            batch.passages = [p for p in batch.passages if p.id in kept]
            batch.units = [u for u in batch.units if u.passage_id in kept]
        if not batch.passages:
            return
        t2 = time.perf_counter()
        mentioned = {n for u in batch.units for n in u.entities}
        new_names = [n for n in batch.labels if n in mentioned and not self.store.has(ENTITY, n)]
        add_units(
            self.store,
            batch.passages,
            batch.units,
            chunk_vectors={p.id: batch.chunk_vectors[p.id] for p in batch.passages},
            unit_vectors={u.id: batch.unit_vectors[u.text] for u in batch.units},
            entity_vectors={n: batch.entity_vectors[n] for n in new_names},
            entity_labels=batch.labels,
        )
        n_entities = self._counts()[2]  # rebuilds the flat view now, as part of the build
        graph_seconds = time.perf_counter() - t2
        split = {**batch.timings, "graph": graph_seconds}
        split["total"] = split.get("total", 0.0) + graph_seconds
        for key in self.timings:
            self.timings[key] += split.get(key, 0.0)
        for key, count in batch.selection.items():
            self._selection[key] += count
        self._extraction = self._extraction + batch.extraction
        if batch.selection:
            logger.info(
                "alpha=%.2f: %d/%d chunks (%d/%d tokens) to the LLM, %d fell back to "
                "sentences; LLM usage so far: %s",
                self.alpha,
                batch.selection["llm_chunks"],
                batch.selection["chunks"],
                batch.selection["llm_tokens"],
                batch.selection["tokens"],
                batch.extraction.fallback_chunks,
                self.extraction_report()["usage"],
            )
        logger.info(
            "indexed %d passages -> %d units, %d entities in %.1fs "
            "(nlp %.1fs, embedding %.1fs, overlapping; graph %.1fs)",
            len(batch.passages),
            len(batch.units),
            n_entities,
            split["total"],
            split.get("nlp", 0.0),
            split.get("embedding", 0.0),
            split["graph"],
        )

    def extraction_report(self) -> dict[str, Any]:
        """What hybrid extraction cost so far (all ``add_passages`` / ``insert`` calls).

        Returns
        -------
        dict
            ``alpha``; ``chunks`` and ``llm_chunks`` (chunks seen by chunk selection and
            sent to the LLM); ``tokens`` and ``llm_tokens`` (their token counts, the
            estimate chunk selection uses) and ``llm_token_share``; ``fallback_chunks`` and
            ``parse_failures`` (LLM chunks that became sentence units); ``usage``: the LLM
            client's token accounting (calls, prompt/completion tokens, cache hits), or
            ``None`` when no LLM was called. All zero at ``alpha = 0``.
        """
        sel = dict(self._selection)
        report: dict[str, Any] = {"alpha": self.alpha, **sel}
        report["llm_token_share"] = sel["llm_tokens"] / sel["tokens"] if sel["tokens"] else 0.0
        report["fallback_chunks"] = self._extraction.fallback_chunks
        report["parse_failures"] = self._extraction.parse_failures
        usage: Any = getattr(getattr(self._preparer, "extractor", None), "usage", None)
        report["usage"] = usage.as_dict() if hasattr(usage, "as_dict") else None
        return report

    def doc_ids(self) -> list[str]:
        """The ids of the documents indexed, sorted."""
        if self._in_process_graph:
            return sorted(document_ids(self.graph.passages.values()))
        return sorted(node_key(n) for n in self.store.graph.nodes(DOCUMENT))

    def _counts(self) -> tuple[int, int, int]:
        """Passages, units and entities: of the flat view, or of the statistics node."""
        if self._in_process_graph:
            g = self.graph
            return len(g.passages), g.n_units, g.n_entities
        stats = read_statistics(self.store.graph)
        return stats.chunks.size, stats.units.size, stats.entities

    def delete(self, doc_id: str) -> bool:
        return bool(self.delete_many([doc_id]))

    def delete_many(self, doc_ids: Iterable[str]) -> list[str]:
        """:meth:`delete` each of ``doc_ids`` with one read and one write of the statistics
        node; returns those that had something removed."""
        removed = remove_documents(self.store, doc_ids)
        if self._in_process_graph:
            _ = self.graph  # rebuild the view now, not in the next query
        gone = [doc for doc, kinds in removed.items() if kinds.get(CHUNK)]
        for doc in removed:
            if doc not in gone:
                self._unknown_document(doc)
        return gone

    # -- retrieval ------------------------------------------------------------------------
    def explanation_scores(
        self, question: str, results: Sequence[RetrievedPassage]
    ) -> dict[str, dict[str, float]]:
        """Cosine to ``question`` of the entities and units ``results`` name (what
        ``graphrag-integrations show`` draws; see :mod:`.explain`)."""
        from graphrag_integrations.methods.clue.explain import explanation_scores

        return explanation_scores(self, question, results)

    def as_retriever(
        self,
        k: int | None = None,
        *,
        query_params: Any = None,
        filter: FilterLike = None,
        **overrides: Any,
    ) -> QIter:
        """A :class:`~graphrag_integrations.methods.clue.qiter.QIter` over this index.

        Parameters
        ----------
        k : int, optional
            Chunks per query (``None``: the params' ``N``); a call's ``k`` still wins.
        query_params : ClueQueryParams or mapping, optional
            Q-Iter's options (``None``: the index's :attr:`query_params`).
        filter : dict or filter tree, optional
            Metadata filter bound to every query of the retriever (a call's filter is ANDed
            with it).
        **overrides
            :class:`~graphrag_integrations.methods.clue.params.ClueQueryParams` fields
            (``D=2``...), validated (unknown name: ``InvalidParameterError``).
        """
        from graphrag_integrations.methods.clue.qiter import QIter

        base = self.query_params if query_params is None else query_params
        return QIter(
            self,
            base,
            k=k,
            reranker=self.reranker,
            llm=self.query_llm,
            filter=filter,
            **overrides,
        )

    def _retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """Q-Iter with :attr:`query_params` (use :meth:`as_retriever` to change them)."""
        return self._retrieve_filtered(query, check_k(k, self.default_k), None)

    def _retrieve_filtered(
        self, query: str, k: int, where: MetadataFilter | None
    ) -> list[RetrievedPassage]:
        """Q-Iter on the chunks ``where`` allows (:mod:`~.scope`; ``None``: all of them)."""
        params = self.query_params
        retriever = self._retriever
        if retriever is None or retriever.query_params is not params:
            retriever = self.as_retriever(query_params=params)
            if params is self.__dict__.get("_query_params"):  # the index's own: cache it
                self._retriever = retriever
        result: list[RetrievedPassage] = retriever.retrieve(query, k, filter=where)
        return result

    # -- persistence (hooks of BaseIndex.persist / load) ----------------------------------
    def manifest(self) -> Manifest:
        """The manifest :meth:`persist` writes (build options, models, counts); the directory
        holds ``graph.json`` (the GraphStore), ``store.json`` and ``vectors/<layer>/`` (the
        vector indexes), written by :meth:`IndexStore.persist`."""
        passages, units, entities = self._counts()  # of one version
        return Manifest(
            method=self.method,
            parameters={
                "title_prefix": self.title_prefix,
                "link_title": self.link_title,
                "excluded_labels": sorted(self.excluded_labels),
                "alpha": self.alpha,
                "chunk_vectors": self.chunk_vectors,
                "embed_title": self.index_params.embed_title,
                "entity_vectors": self.index_params.entity_vectors,
                "passages": passages,
                "units": units,
                "entities": entities,
            },
            models={"embedding": self.embedder.model_name, "spacy": self.parser.model_name},
            embedding_dimension=self.store.dimension or None,  # None: no vectors yet
        )

    def _write_files(self, directory: Path) -> None:
        self.store.persist(directory)

    @classmethod
    def _from_manifest(cls, src: Path, manifest: Manifest, options: dict[str, Any]) -> ClueIndex:
        """The build options come from the manifest unless given; ``vector_index`` (a
        factory) re-homes the loaded vectors, e.g. into Chroma; ``graph_store`` says where
        the graph is now (``None``: where the index says)."""
        graph_store = options.pop("graph_store", None)
        params = manifest.parameters
        if "index_params" not in options and "preset" not in options:
            recorded = {key: params[key] for key in ("title_prefix", "link_title")}
            recorded["excluded_labels"] = params["excluded_labels"]
            recorded["chunk_vectors"] = params.get("chunk_vectors", "encode")  # older
            # indexes written before these options were built as their first defaults
            recorded["embed_title"] = params.get("embed_title", True)
            recorded["entity_vectors"] = params.get("entity_vectors", "encode")
            recorded["spacy_model"] = manifest.models.get("spacy")
            options["index_params"] = ClueIndexParams.from_options(recorded)
        index = cls(**options)
        # opened by _read_files: None = where the index says (IndexStore.load)
        index.graph_backend = None if graph_store is None else resolve_graph_backend(graph_store)
        return index

    def _read_files(self, src: Path, manifest: Manifest) -> None:
        self.store = IndexStore.load(
            src,
            model_name=self.embedder.model_name,
            dimension=int(manifest.embedding_dimension or 0),
            layers=LAYERS,
            factory=self.vector_index,
            graph=self.graph_backend,
            metadata=clue_metadata,
        )
        if not self._in_process_graph:  # a database graph written by an older version: once
            ensure_statistics(self.store)
            ensure_term_index(self.store)

    def _check_loaded(self, src: Path, manifest: Manifest) -> None:
        params = manifest.parameters
        counts = self._counts()
        expected = (params["passages"], params["units"], params["entities"])
        if counts != expected:
            raise IndexMismatchError(
                f"{src}: graph holds {counts} passages/units/entities, the manifest {expected} "
                "(corrupt index)"
            )
