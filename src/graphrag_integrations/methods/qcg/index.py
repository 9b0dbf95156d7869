"""QueryCentricGraphIndex: the query-centric graph and its lifecycle (build, insert, delete, load).

Build (§3.3): chunks -> extended Doc2Query pairs (a :class:`QuerySet` first, the LLM for the
rest) -> extended Doc2Query-- (per-chunk top-alpha by ``cos(q (+) a, chunk)``) -> query nodes
embedded from their node text, linked to their chunk, and the query kNN layer. Every unique
text is embedded once, in batches. Storage: :mod:`~graphrag_integrations.methods.qcg.store`;
the retrieval arrays (:class:`~graphrag_integrations.methods.qcg.graph.QueryGraph`) are
derived from it after each mutation. ``insert`` and ``delete`` rewrite only the kNN lists that
change, and the result equals a rebuild over the remaining documents (tested).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

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
from graphrag_integrations.core.index.filtered_reads import passage_scope
from graphrag_integrations.core.index.query_binding import QueryParamsField
from graphrag_integrations.core.index.store_base import VectorIndexFactory
from graphrag_integrations.core.params import resolve_params
from graphrag_integrations.core.persistence import (
    Manifest,
)
from graphrag_integrations.core.progress import ProgressSetting, progress
from graphrag_integrations.core.retrieval.filter_scope import FilterScope
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.core.retrieval.fusion import ScoreFusion
from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.core.validation import check_k, check_query
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.qcg.generation import (
    QUERY_SET_FILE,
    Doc2QueryGenerator,
    QuerySet,
    prompt_hash,
    resolve_template,
)
from graphrag_integrations.methods.qcg.graph import QueryGraph, repair_knn
from graphrag_integrations.methods.qcg.neighbourhood import nearest_chunks, read_matches
from graphrag_integrations.methods.qcg.params import QCGIndexParams, QCGQueryParams
from graphrag_integrations.methods.qcg.preparation import (
    GeneratorSettings,
    PreparedQueries,
    QCGPreparer,
)
from graphrag_integrations.methods.qcg.retrieval import ChunkHit, rank_chunks, rank_matches
from graphrag_integrations.methods.qcg.scope import query_mask
from graphrag_integrations.methods.qcg.store import CHUNK, QCGStore

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1


class QCGOptions(EmbeddingIndexOptions[QCGIndexParams, QCGQueryParams], total=False):
    """The keywords of :meth:`QueryCentricGraphIndex.from_documents`: the
    :class:`~graphrag_integrations.core.index.build_options.EmbeddingIndexOptions` and the
    constructor's own arguments but ``chunker`` (each key as in
    :class:`QueryCentricGraphIndex`; one left out has the constructor's default)."""

    llm: Any
    query_set: QuerySet | str | Path | None
    cache_dir: str | Path | None
    max_concurrency: int
    max_tokens: int | str | None
    template: str
    vector_index: VectorIndexFactory | None
    graph_store: GraphStoreSpec
    batch_size: int


class QueryCentricGraphIndex(FrameworkSurface, BaseIndex):
    """The QCG-RAG index and retriever.

    Parameters
    ----------
    embedding : Embedder, str, LangChain / LlamaIndex embeddings, optional
        ``None``: offline all-MiniLM-L6-v2 (the paper's default).
    index_params : QCGIndexParams, optional
        How the graph is built (``M``, ``alpha``, ``k_neighbors``, ``node_text``,
        ``symmetric_knn``, ``answerless``, ``missing``).
    query_params : QCGQueryParams, optional
        How a query walks it (``h``, ``n``, ``gamma``, ``epsilon``, ``K`` = chunks returned
        when ``retrieve`` gets no ``k``, ``chunk_weight``, ``chunk_candidates``,
        ``chunk_similarity``).
    preset : str, optional
        Both params at once (not together with them): the paper's two settings ``"paper"``
        (= ``"multihop-rag"`` = ``"default"``) and ``"lihuaworld"``, each with the fusion
        deviations (``"fused"``, ``"lihuaworld-fused"``) and with them on the hybrid chunk
        side (``"fused-hybrid"``, ``"lihuaworld-fused-hybrid"``).
    llm : LLM, LLMClient or framework model, optional
        Query generator; wrapped in ``core.llm.LLMClient(cache_dir=..., max_concurrency=...)``
        unless it is one. ``None``: the offline SmolLM2-135M-Instruct, loaded only when a chunk
        is missing from ``query_set``.
    query_set : QuerySet or path, optional
        Pairs generated earlier, reused by chunk text (no LLM call for those chunks).
    cache_dir : str or Path, optional
        On-disk LLM reply cache (a rebuild or a restart never pays twice).
    max_concurrency : int
        LLM calls in flight.
    max_tokens : int, optional
        Generation limit per Doc2Query reply.
    template : str
        Doc2Query prompt (default: the paper's).
    chunker : optional
        How :meth:`insert` cuts documents (a splitter, see :attr:`~BaseIndex.splitter`);
        default: 1200-token chunks with 100 tokens of overlap, as in the paper.
    show_progress : bool or None
        Progress bars (generation with chunks/s and tokens/s, embedding); ``None``
        (default): on for batches of at least
        :data:`~graphrag_integrations.core.progress.PROGRESS_MIN_PASSAGES` passages.
    vector_index : callable, optional
        ``factory(layer, dimension, model_name)`` for the ``queries`` / ``chunks`` vectors.
    graph_store : str, GraphBackend class or GraphBackend, optional
        Where the graph lives (see
        :func:`~graphrag_integrations.core.graph.backends.resolve_graph_backend`): ``None`` or
        ``"networkx"``: in the process (the networkx ``GraphStore``);
        ``"falkordb://HOST:PORT/GRAPH"``: that FalkorDB graph, which must be empty
        (``FalkorDBGraph.at(url, overwrite=True)`` replaces what it holds); or a
        ``GraphBackend`` class or instance. :meth:`load` takes it too: where the graph is
        now, if it moved.
    batch_size : int
        Prompts per batched LLM call (models with ``complete_batch``).

    Examples
    --------
    >>> import numpy as np
    >>> class Words:  # a tiny bag-of-words embedder for the example
    ...     model_name, dimension = "words", 8
    ...     def embed(self, texts, show_progress=False):
    ...         out = np.zeros((len(texts), 8), np.float32)
    ...         for i, t in enumerate(texts):
    ...             for w in t.lower().split():
    ...                 out[i, sum(map(ord, w.strip("?.,"))) % 8] += 1
    ...         return out / np.linalg.norm(out, axis=1, keepdims=True)
    ...     def embed_query(self, text):
    ...         return self.embed([text])[0]
    >>> reply = '[{"query": "Where is Paris?", "answer": "in France"}]'
    >>> index = QueryCentricGraphIndex.from_documents(["Paris is in France."], embedding=Words(),
    ...     llm=lambda prompt: reply, index_params=QCGIndexParams(M=1))
    >>> hit = index.retrieve("Where is Paris?", k=1)[0]
    >>> hit.text, hit.explanation["queries"][0]["query"]
    ('Paris is in France.', 'Where is Paris?')
    """

    method = "qcg"
    format_version = FORMAT_VERSION
    index_params_class = QCGIndexParams
    query_params = QueryParamsField(QCGQueryParams)
    k_param = "K"
    #: Default chunking (tokens): the paper's 1200 / 100 (it also reports 512 / 64).
    chunk_size = 1200
    chunk_overlap = 100

    def __init__(
        self,
        embedding: Any = None,
        *,
        index_params: QCGIndexParams | None = None,
        query_params: QCGQueryParams | None = None,
        preset: str | None = None,
        llm: Any = None,
        query_set: QuerySet | str | Path | None = None,
        cache_dir: str | Path | None = None,
        max_concurrency: int = 4,
        max_tokens: int | str | None = None,
        template: str = "paper",
        chunker: Any = None,
        show_progress: bool | None = None,
        vector_index: VectorIndexFactory | None = None,
        graph_store: GraphStoreSpec = None,
        batch_size: int = 8,
    ) -> None:
        self.index_params: QCGIndexParams
        self.index_params, self.query_params = self.resolved_params(
            index_params, query_params, preset
        )
        self.preset = preset
        self.embedder: Embedder = as_embedder(embedding)
        self.llm = llm
        if isinstance(query_set, (str, Path)):
            query_set = QuerySet.load(query_set)
        self.query_set = query_set
        self.cache_dir = cache_dir
        self.max_concurrency = max_concurrency
        self.max_tokens = None if max_tokens is None else int(max_tokens)
        self.template = resolve_template(template)
        self.batch_size = batch_size
        self.graph_backend: type[GraphBackend] | None = resolve_graph_backend(graph_store)
        if chunker is not None:
            self.splitter = chunker
        self.show_progress = show_progress
        self.vector_index = vector_index
        self.store = QCGStore(self.embedder.model_name, vector_index, self.graph_backend)
        self._generator: Doc2QueryGenerator | None = None
        self._generator_model: str | None = None
        self.timings = dict.fromkeys(("generation", "embedding", "graph", "total"), 0.0)
        self.counts = dict.fromkeys(
            (
                "chunks",
                "reused_chunks",
                "generated_chunks",
                "skipped_chunks",
                "pairs",
                "queries",
                "empty_chunks",
            ),
            0,
        )

    # -- properties ---------------------------------------------------------------------------
    @property
    def graph_store(self) -> GraphBackend:
        """The chunk / query graph (export with ``to_graphml``; change it via the index)."""
        return self.store.graph_store

    @property
    def graph(self) -> QueryGraph:
        """The retrieval arrays (a derived view of the store, rebuilt after a mutation)."""
        return self.store.query_graph()

    @property
    def passages(self) -> list[Passage]:
        """The indexed chunks (sorted by id)."""
        return self.store.passages()

    def passages_of_documents(self, doc_ids: Iterable[str]) -> list[Passage]:
        """The chunks of ``doc_ids`` (what an ``upsert`` records of the documents it
        replaces: :mod:`~graphrag_integrations.core.index.restore`), in one batched read."""
        return self.store.passages_of_documents(doc_ids)

    @property
    def generator(self) -> Doc2QueryGenerator:
        """The Doc2Query generator (created, and its LLM wrapped, on first use)."""
        if self._generator is None:
            self._generator = self._generator_settings().make(self.show_progress)
            self._generator_model = self._generator.client.model_name
        return self._generator

    def _generator_settings(self) -> GeneratorSettings:
        return GeneratorSettings(
            self.llm,
            M=self.index_params.M,
            template=self.template,
            max_tokens=self.max_tokens,
            cache_dir=self.cache_dir,
            max_concurrency=self.max_concurrency,
            batch_size=self.batch_size,
        )

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def from_documents(  # type: ignore[override]  # typed: the base takes **kwargs
        cls, documents: Iterable[Any], **options: Unpack[QCGOptions]
    ) -> QueryCentricGraphIndex:
        """Index documents (strings, files, LangChain / LlamaIndex documents) cut into chunks.

        ``options``: the constructor's arguments and the chunking, load, checkpoint and
        executor options every index takes (:class:`QCGOptions`).
        ``executor``: ``"local"`` only (this build is not split into prepare / merge).
        """
        return build_from_documents(cls, documents, options)

    @classmethod
    def from_passages(cls, passages: Sequence[Passage], **kwargs: Any) -> QueryCentricGraphIndex:
        """Build from already chunked passages (the evaluation harness's entry)."""
        passages = [p for p in passages if p.text.strip()]
        return build_from_passages(cls, passages, **kwargs)

    def insert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Add documents (those already indexed are skipped with a warning); returns the ids
        of the documents added. ``options`` (load and chunking options) go to
        :meth:`~BaseIndex.document_passages`."""
        passages = self.document_passages(documents, options)
        indexed = {p.doc_id for p in self.passages}
        passages = [p for p in drop_indexed(passages, indexed) if p.text.strip()]
        self.add_passages(passages)
        return document_ids(passages)

    def add_passages(self, passages: Sequence[Passage]) -> None:
        """Generate, filter, embed and link ``passages`` (ids already indexed are skipped): the
        :meth:`merge` of their preparation (:mod:`~.preparation`)."""
        unique = list({p.id: p for p in passages}.values())
        new = [p for p in unique if not self.store.has_chunk(p.id)]
        if len(new) < len(passages):
            logger.info("skipping %d passages already indexed", len(passages) - len(new))
        if not new:
            return
        preparer = self.preparer()
        if any(self.query_set is None or self.query_set.get(p.text) is None for p in new):
            preparer.generator = self.generator  # the index's own (its usage is reported)
        preparer.show_progress = self.show_progress
        preparer.llm_progress = ProgressSetting.llm(self)
        self.merge([preparer(new)])

    def preparer(self) -> QCGPreparer:
        """The per-chunk half of the build with this index's settings and models
        (picklable: what an executor runs on its workers; see ``executor=``)."""
        return QCGPreparer(
            self.embedder, self.index_params, self.query_set, self._generator_settings()
        )

    def merge(self, prepared: Sequence[PreparedQueries]) -> None:
        """Link prepared batches (input order) into the graph, then repair the kNN lists once;
        chunks already indexed are skipped."""
        t2 = time.perf_counter()
        before = self.store.knn()
        added: set[str] = set()
        empty = n_new = n_pairs = 0
        timings = {"generation": 0.0, "embedding": 0.0}
        for part in prepared:
            if part.generator_model is not None and self._generator_model is None:
                self._generator_model = part.generator_model  # generated on a worker
            for key, value in part.counts.items():
                self.counts[key] += value
            for key in timings:
                timings[key] += part.timings.get(key, 0.0)
            rows = zip(
                part.passages, part.pairs, part.usable, part.kept, part.node_vectors,
                part.chunk_vectors, strict=True,
            )  # fmt: skip
            steps = progress(
                rows, "QCG: linking chunks", enabled=self.show_progress and len(part.passages) > 1
            )
            for passage, ps, idx, kept, node_vecs, chunk_vec in steps:
                if self.store.has_chunk(passage.id):
                    continue
                n_new += 1
                n_pairs += len(ps)
                if not idx:
                    empty += 1
                    logger.info(
                        "chunk %s has no generated query: only chunk_candidates > 0 can "
                        "retrieve it",
                        passage.id,
                    )
                added.update(self.store.add_chunk(passage, ps, kept, node_vecs, chunk_vec))
                self.counts["pairs"] += len(idx)
        if not n_new:
            return
        self.counts["chunks"] += n_new
        self.counts["empty_chunks"] += empty
        if empty:
            logger.warning(
                "%d of %d chunks have no generated query: only chunk_candidates > 0 can "
                "retrieve them",
                empty,
                n_new,
            )
        self._repair(before, added, set())
        t3 = time.perf_counter()
        total = timings["generation"] + timings["embedding"] + t3 - t2
        for key, seconds in (*timings.items(), ("graph", t3 - t2), ("total", total)):
            self.timings[key] += seconds
        logger.info(
            "QCG: %d chunks -> %d pairs, %d query nodes kept (alpha=%.2f) in %.1fs",
            n_new,
            n_pairs,
            len(added),
            self.index_params.alpha,
            total,
        )

    def _repair(self, before: dict[str, list[str]], added: set[str], removed: set[str]) -> None:
        """Rewrite the kNN lists the change affects, then refresh the derived arrays."""
        ids = self.store.query_ids()
        matrix = self.store.query_vectors(ids)
        current = {q: n for q, n in before.items() if q not in removed}
        updates = repair_knn(ids, matrix, self.index_params.k_neighbors, current, added, removed)
        self.store.set_knn(updates)
        self.counts["queries"] = len(ids)

    def doc_ids(self) -> list[str]:
        """The ids of the documents indexed, sorted."""
        return sorted(document_ids(self.passages))

    def delete(self, doc_id: str) -> bool:  # type: ignore[override]
        """Remove a document's chunks and queries, repairing the kNN lists that pointed at them.

        Returns ``False`` (and logs a warning) for an unknown ``doc_id``.
        """
        before = self.store.knn()
        chunks, queries = self.store.remove_document(doc_id)
        if not chunks and not queries:
            return self._unknown_document(doc_id)
        self._repair(before, set(), set(queries))
        return True

    # -- retrieval ----------------------------------------------------------------------------
    def _retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """The top ``k`` chunks (default: the query params' ``K``) with the generated queries
        that matched."""
        return self._retrieve_filtered(query, check_k(k, self.default_k), None)

    def _retrieve_filtered(
        self, query: str, k: int, where: MetadataFilter | None
    ) -> list[RetrievedPassage]:
        """:meth:`_retrieve` on the chunks ``where`` allows (``None``: all): the seeds are
        queries generated from them, the kNN walk passes only through those, and the chunk
        side ranks only them (:mod:`~graphrag_integrations.methods.qcg.scope`)."""
        k = check_k(k, self.default_k)
        text = check_query(query)
        params = self.query_params
        lazy = self.store.reads_lazily
        scope = None if where is None else passage_scope(self.store.store, CHUNK, where)
        if scope is not None and not scope.passages:
            return []
        queries = self.store.query_count() if lazy else len(self.graph)
        if not queries and not (params.chunk_candidates > 0 and self.store.chunk_ids()):
            return []  # nothing retrievable: no query node, no chunk candidates
        vector = self.embedder.embed_query(text)
        uses_chunks = params.chunk_weight > 0 or params.chunk_candidates > 0
        if uses_chunks and params.chunk_similarity == "hybrid":
            cosine, top = self._hybrid_chunks(text, vector, k, scope)
        else:
            cosine, top = self._chunk_cosine(vector), self._top_chunks(vector, scope)
        symmetric = self.index_params.symmetric_knn
        if lazy:  # a database graph: read the query's neighbourhood only
            matches = read_matches(self.store, vector, params, symmetric=symmetric, scope=scope)
            hits = rank_matches(matches, params, k, chunk_cosine=cosine, top_chunks=top)
        else:
            hits = rank_chunks(
                self.graph,
                vector,
                params,
                k,
                symmetric=symmetric,
                chunk_cosine=cosine,
                top_chunks=top,
                allowed=None if where is None else query_mask(self.store, self.graph, where),
            )
        return [self._result(hit) for hit in hits]

    def _hybrid_chunks(
        self, text: str, vector: FloatMatrix, k: int, scope: FilterScope | None = None
    ) -> tuple[Any, Any]:
        """``chunk_similarity="hybrid"``: the chunk side from the core's dense + BM25 fusion.

        The fusion (:class:`ScoreFusion` with the ``hybrid`` baseline's defaults) is fitted
        on the hybrid candidates of a top-``c`` query (``c = chunk_candidates``, else ``k``),
        so the ``c`` candidate chunks are exactly the hybrid baseline's top ``c`` over these
        chunks; a chunk's similarity is its fused score on the candidates' cosine range
        (:meth:`ScoreFusion.on_dense_scale`), comparable with the query nodes' cosines.
        """
        import numpy as np

        lexicon = self.store.lexicon()
        ids = list(lexicon.ids)
        dense = np.asarray(self.store.chunk_vectors(ids) @ vector, dtype=np.float32)
        sparse = lexicon.scorer.scores(text)
        fusion = ScoreFusion()
        c = self.query_params.chunk_candidates
        mask = None if scope is None else np.fromiter((i in scope.passages for i in ids), bool)
        if mask is not None:  # only the allowed chunks compete (BM25 keeps the corpus idf)
            dense, sparse = fusion.restrict(dense, sparse, mask)
        cands = fusion.candidates(dense, sparse, c if c > 0 else k, mask)
        row = {cid: i for i, cid in enumerate(ids)}

        def similarity(chunk_ids: list[str]) -> FloatMatrix:
            return fusion.on_dense_scale(dense, sparse, cands, [row[i] for i in chunk_ids])

        def top(n: int) -> list[str]:
            fused = fusion.fuse(dense, sparse, cands)
            return [ids[cands[j]] for j in top_k(fused, n)]  # ties: lower chunk id

        return similarity, top

    def _chunk_cosine(self, vector: FloatMatrix) -> Any:
        def cosine(chunk_ids: list[str]) -> FloatMatrix:
            result: FloatMatrix = self.store.chunk_vectors(chunk_ids) @ vector
            return result

        return cosine

    def _top_chunks(self, vector: FloatMatrix, scope: FilterScope | None = None) -> Any:
        import numpy as np

        def top(c: int) -> list[str]:
            if self.store.reads_lazily:  # a database graph: no listing of every chunk
                return nearest_chunks(self.store, vector, c, scope)
            ids = self.store.chunk_ids()
            if scope is not None:
                ids = [i for i in ids if scope.allows(i)]
            if not ids:
                return []
            cos = np.round(np.asarray(self.store.chunk_vectors(ids) @ vector, np.float64), 6)
            order = np.lexsort((np.arange(len(ids)), -cos))[:c]  # ties: lower chunk id
            return [ids[i] for i in order]

        return top

    def _result(self, hit: ChunkHit) -> RetrievedPassage:
        queries = []
        for m in hit.queries:
            qid = m.id
            node = self.store.query(qid)
            queries.append(
                {
                    "id": qid,
                    "query": node["query"],
                    "answer": node["answer"],
                    "hop": m.hop,
                    "s": round(m.s, 6),
                }
            )
        explanation = {
            "method": self.method,
            "score": round(hit.score, 6),
            "mean_query_s": round(hit.query_score, 6),
            "queries": queries,
        }
        return RetrievedPassage(self.store.passage(hit.chunk_id), hit.score, explanation)

    # -- reports ------------------------------------------------------------------------------
    def generation_report(self) -> dict[str, Any]:
        """Chunks reused from the query set / generated, parse statistics and token usage."""
        gen = self._generator
        usage = getattr(gen.client, "usage", None) if gen is not None else None
        return {
            **self.counts,
            "stats": gen.stats.as_dict() if gen is not None else None,
            "usage": usage.as_dict() if usage is not None else None,
        }

    def export_query_set(self) -> QuerySet:
        """Every generated pair of the indexed chunks, as a reusable :class:`QuerySet`."""
        qs = QuerySet(
            {},
            model=self._model_label(),
            prompt_hash=prompt_hash(self.template),
            M=self.index_params.M,
            extra={"alpha": self.index_params.alpha},
        )
        qs.update((p.text, self.store.generated_pairs(p.id)) for p in self.passages)
        return qs

    def _model_label(self) -> str:
        if self._generator_model is not None:
            return self._generator_model
        if self.query_set is not None:
            return self.query_set.model
        return "unknown"

    # -- persistence (hooks of BaseIndex.persist / load) ------------------------------------
    def manifest(self) -> Manifest:
        """What :meth:`persist` records: parameters, generator model and prompt hash, counts.

        The directory holds ``graph.json``, ``vectors/`` (:meth:`IndexStore.persist`) and the
        generated pairs as a query set (``query_set.jsonl.gz``, :meth:`export_query_set`),
        which ``query_set=<this folder>`` reuses (e.g. ``eval --option qcg.query_set=IDX``
        after ``index --method qcg``). With ``chunk_similarity="hybrid"``, the BM25 over the
        chunks too (``bm25/``, read back by :meth:`load`; without it, a hybrid query builds
        it on first use).
        """
        return Manifest(
            method=self.method,
            parameters={
                "preset": self.preset or "default",
                "index": asdict(self.index_params),
                "query": asdict(self.query_params),
                "prompt_hash": prompt_hash(self.template),
                "max_tokens": self.max_tokens,
                "passages": len(self.store.graph_store.nodes("chunk")),
                "queries": len(self.graph),
            },
            models={"embedding": self.embedder.model_name, "generator": self._model_label()},
            embedding_dimension=self.store.dimension or None,
        )

    def _write_files(self, directory: Path) -> None:
        self.store.persist(directory)
        if self.query_params.chunk_similarity == "hybrid":
            self.store.persist_lexicon(directory)
        self.export_query_set().save(directory / QUERY_SET_FILE)

    @classmethod
    def _from_manifest(
        cls, src: Path, manifest: Manifest, options: dict[str, Any]
    ) -> QueryCentricGraphIndex:
        """Graph parameters come from the manifest (another value given raises
        ``IndexMismatchError``), query parameters from it unless given; ``graph_store`` says
        where the graph is now (``None``: where the index says)."""
        graph_store = options.pop("graph_store", None)
        params = manifest.parameters
        built = QCGIndexParams.from_options(params["index"])
        recorded = QCGQueryParams.from_options(params["query"])
        if options.get("preset") is not None:  # its query params; the graph stays as built
            given, recorded = resolve_params(
                QCGIndexParams, QCGQueryParams, preset=options.pop("preset")
            )
            options.setdefault("index_params", given)
        options.pop("preset", None)
        asked = options.get("index_params")
        if asked is not None and asked != built:
            diff = [n for n, v in built.values().items() if getattr(asked, n) != v]
            raise IndexMismatchError(
                f"{src}: the index was built with "
                + ", ".join(f"{n}={getattr(built, n)!r}" for n in diff)
                + ", not "
                + ", ".join(f"{n}={getattr(asked, n)!r}" for n in diff)
            )
        options["index_params"] = built
        options.setdefault("query_params", recorded)
        options.setdefault("max_tokens", params.get("max_tokens"))
        index = cls(**options)
        # opened by _read_files: None = where the index says (IndexStore.load)
        index.graph_backend = None if graph_store is None else resolve_graph_backend(graph_store)
        return index

    def _read_files(self, src: Path, manifest: Manifest) -> None:
        if manifest.parameters.get("prompt_hash") != prompt_hash(self.template):
            logger.warning("%s was generated with another Doc2Query prompt", src)
        self._generator_model = manifest.models.get("generator")
        self.store = QCGStore.load(
            src,
            model_name=self.embedder.model_name,
            dimension=int(manifest.embedding_dimension or 0),
            factory=self.vector_index,
            graph=self.graph_backend,
        )

    def _check_loaded(self, src: Path, manifest: Manifest) -> None:
        if self.store.reads_lazily:  # a database graph: count the vector layers, which
            # IndexStore.load matched with the graph's nodes, instead of reading every node
            self.counts["queries"] = self.store.query_count()
            counts = (self.store.chunk_count(), self.store.query_count())
        else:
            self._repair({}, set(), set())
            counts = (len(self.store.graph_store.nodes("chunk")), len(self.graph))
        if counts != (manifest.parameters["passages"], manifest.parameters["queries"]):
            raise IndexMismatchError(f"{src}: graph counts differ from the manifest (corrupt)")
