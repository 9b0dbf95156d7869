"""ParseKGTranslatorRetriever: the KG-Translator lifecycle (build, query, insert, delete, persist).

Build (paper §3.2): spaCy parses the passages (in a background thread, batched, ``n_process``
workers) while the passages are embedded for ranking; each sentence becomes a hyperedge of
the ParseKG (:mod:`~graphrag_integrations.methods.kgt.parsekg`), stored in
:mod:`~graphrag_integrations.methods.kgt.store`. :meth:`ParseKGTranslatorRetriever.stats`
gives the Table 5 figures.

Query (§3.3-3.4): the translator LM (loaded on first use) turns the query into clues under
the constraint indexes (built on first use for the LM's tokenizer, announced, cached,
persisted; once in use, an insert or delete updates them itself, tokenising only new texts,
so the next query does not rebuild them), the clues are traced to passages, and the passages
ranked by the embedder (:mod:`~graphrag_integrations.methods.kgt.retrieval`). Each result's
explanation lists the clues (entity, relation span, direction, hyperedge sentence) that
reached it.

Persist / load: :mod:`~graphrag_integrations.methods.kgt.persistence` (a base of the class);
which translator LM runs: :mod:`~graphrag_integrations.methods.kgt.translator_model`.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
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
from graphrag_integrations.core.index.query_binding import QueryParamsField
from graphrag_integrations.core.index.store_base import VectorIndexFactory
from graphrag_integrations.core.llm.precision import precision_suffix
from graphrag_integrations.core.progress import ProgressSetting, auto_progress
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.core.text.nlp import SpacyNLP
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.core.validation import check_k, check_query
from graphrag_integrations.methods.kgt.constraints import ConstraintIndexes, tokenizer_fingerprint
from graphrag_integrations.methods.kgt.params import KGTIndexParams, KGTQueryParams
from graphrag_integrations.methods.kgt.parsekg import ParseKGStats
from graphrag_integrations.methods.kgt.persistence import KGTPersistence
from graphrag_integrations.methods.kgt.preparation import KGTPreparer, PreparedHyperedges
from graphrag_integrations.methods.kgt.reads import ParseKGReads
from graphrag_integrations.methods.kgt.scope import FilteredGraphs, SearchGraph
from graphrag_integrations.methods.kgt.search import dense_ranking, search
from graphrag_integrations.methods.kgt.store import (
    ParseKGStore,
    ParseKGView,
    load_constraint_cache,
    read_many,
)
from graphrag_integrations.methods.kgt.translation import TranslationResult, Translator
from graphrag_integrations.methods.kgt.translator_model import (
    resolve_translator,
    translator_dtype,
    translator_name,
)

logger = logging.getLogger(__name__)

#: Index directory layout version.
FORMAT_VERSION = 1


class KGTOptions(EmbeddingIndexOptions[KGTIndexParams, KGTQueryParams], total=False):
    """The keywords of :meth:`ParseKGTranslatorRetriever.from_documents`: the
    :class:`~graphrag_integrations.core.index.build_options.EmbeddingIndexOptions` and the
    constructor's own arguments (each key as in :class:`ParseKGTranslatorRetriever`; one left
    out has the constructor's default)."""

    translator: Any
    decomposer: Any
    vector_index: VectorIndexFactory | None
    graph_store: GraphStoreSpec


class ParseKGTranslatorRetriever(FrameworkSurface, KGTPersistence, BaseIndex):
    """KG-Translator: ParseKG + constrained clue translation + clue-traced ranking.

    Parameters
    ----------
    embedding : Embedder, str, LangChain Embeddings, LlamaIndex BaseEmbedding, optional
        Passage ranker (``None``: offline all-MiniLM-L6-v2).
    translator : str, Path or TransformersLLM, optional
        The translation LM: ``None`` = untuned SmolLM2-135M-Instruct (offline); a path to a
        model or to a LoRA adapter written by :func:`~graphrag_integrations.methods.kgt.
        training.train_translator`; or a loaded ``TransformersLLM``.
    index_params : KGTIndexParams, optional
        Build settings.
    query_params : KGTQueryParams, optional
        Query settings (``alpha``, ``beta``, ``k`` = passages returned when ``retrieve`` gets
        no ``k``, ``reverse``, ``top_up``, ``fusion``, ``max_steps``...).
    preset : str, optional
        Both params at once (not together with them): ``"default"``, ``"paper"`` (=
        ``"paper-hotpotqa"``) or another dataset's ``"paper-<dataset>"``.
    decomposer : LLM or LLMClient, optional
        Multi-step mode (``max_steps > 1``): answers prompt 3 of appendix M.
    vector_index : callable, optional
        ``factory(layer, dimension, model_name)`` of the passage vectors.
    graph_store : str, GraphBackend class or GraphBackend, optional
        Where the graph lives (see
        :func:`~graphrag_integrations.core.graph.backends.resolve_graph_backend`): ``None`` or
        ``"networkx"``: in the process (the networkx ``GraphStore``);
        ``"falkordb://HOST:PORT/GRAPH"``: that FalkorDB graph, which must be empty
        (``FalkorDBGraph.at(url, overwrite=True)`` replaces what it holds); or a
        ``GraphBackend`` class or instance. :meth:`load` takes it too: where the graph is
        now, if it moved.
    show_progress : bool or None
        Progress bars; ``None`` (default): on for batches of at least
        :data:`~graphrag_integrations.core.progress.PROGRESS_MIN_PASSAGES` passages.

    Examples
    --------
    >>> from graphrag_integrations.methods.kgt.params import KGTQueryParams
    >>> KGTQueryParams.paper("2wiki").beta
    1
    """

    method = "kgt"
    corpus_wide_scores = False  # a filtered query runs on the ParseKG of its passages alone
    format_version = FORMAT_VERSION
    index_params_class = KGTIndexParams
    query_params = QueryParamsField(KGTQueryParams)
    k_param = "k"
    #: Tighter than the core's bound: the translation (constrained beam search over the
    #: question in the prompt) and the decomposition prompt grow with the question's length
    #: (3.1 s at 2,000 characters, 17 s at 8,000, 291 s at 52,800 without a bound), and a
    #: question past 1,000 characters (~250 tokens) holds no more clues the LM translates.
    max_query_chars = 1_000
    #: Default chunking (tokens): passages the size all-MiniLM-L6-v2 embeds whole.
    chunk_size = 256
    chunk_overlap = 32

    def __init__(
        self,
        embedding: Any = None,
        *,
        translator: Any = None,
        index_params: KGTIndexParams | None = None,
        query_params: KGTQueryParams | None = None,
        preset: str | None = None,
        decomposer: Any = None,
        vector_index: VectorIndexFactory | None = None,
        graph_store: GraphStoreSpec = None,
        show_progress: bool | None = None,
    ) -> None:
        self.index_params: KGTIndexParams
        self.index_params, self.query_params = self.resolved_params(
            index_params, query_params, preset
        )
        if self.query_params.max_steps > 1 and decomposer is None:
            raise ValueError("max_steps > 1 (multi-step mode) needs a decomposer LLM")
        self.embedder: Embedder = as_embedder(embedding)
        self.parser = SpacyNLP(
            self.index_params.spacy_model,
            n_process=self.index_params.n_process,
            batch_size=self.index_params.batch_size,
        )
        self.decomposer = decomposer
        self.show_progress = show_progress
        self.vector_index = vector_index
        self.graph_backend: type[GraphBackend] | None = resolve_graph_backend(graph_store)
        self.store = ParseKGStore(
            self.embedder.model_name,
            self.index_params.excluded_head_labels,
            factory=vector_index,
            graph=self.graph_backend,
        )
        self.store.reads_class = ParseKGReads
        self.timings = dict.fromkeys(("nlp", "embedding", "graph", "total"), 0.0)
        self._translator_spec = translator
        self._lm: Any = None
        self._indexes: ConstraintIndexes | None = None
        self._cache_dir: Path | None = None  # persisted constraint caches (after load)
        self.counters: Counter[str] = Counter()
        self._cache_key = ""
        self._lazy_lock = threading.RLock()  # lazy translator / constraint indexes
        self._filtered = FilteredGraphs()  # the search graphs of recent filters

    @property
    def view(self) -> ParseKGView:
        """The query-time view of the ParseKG (a derived view of the store): the flat view, or
        per-query reads (``graph_view``; :mod:`~graphrag_integrations.methods.kgt.reads`)."""
        mode = self.query_params.graph_view
        self.store.per_query = None if mode == "auto" else mode == "neighbourhood"
        self.store.cache_nodes = self.query_params.cache_nodes
        return self.store.view

    @property
    def passages(self) -> list[Passage]:
        """The indexed passages (per-query reads: one batched read of every passage)."""
        view = self.view
        return list(read_many(view.passages, list(view.passages)).values())

    def passages_of_documents(self, doc_ids: Iterable[str]) -> list[Passage]:
        """The passages of ``doc_ids`` (what an ``upsert`` records of the documents it
        replaces: :mod:`~graphrag_integrations.core.index.restore`), in one batched read of
        those the summary lists."""
        keys = [p for doc in doc_ids for p in self.store.summary.passages_of(doc)]
        return list(read_many(self.view.passages, keys).values())

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_documents(  # type: ignore[override]  # typed: the base takes **kwargs
        cls, documents: Iterable[Any], **options: Unpack[KGTOptions]
    ) -> ParseKGTranslatorRetriever:
        """Index documents (strings, files, LangChain / LlamaIndex documents) cut into chunks.

        ``options``: the constructor's arguments and the chunking, load, checkpoint and
        executor options every index takes (:class:`KGTOptions`).
        """
        return build_from_documents(cls, documents, options)

    @classmethod
    def from_passages(
        cls, passages: Sequence[Passage], **kwargs: Any
    ) -> ParseKGTranslatorRetriever:
        """Build from already chunked passages (what the evaluation harness uses)."""
        return build_from_passages(cls, passages, **kwargs)

    def insert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Index documents into the existing ParseKG; returns the ids added (already indexed
        ones are skipped with a warning). ``options`` (load and chunking options) go to
        :meth:`~BaseIndex.document_passages`."""
        passages = self.document_passages(documents, options)
        passages = drop_indexed(passages, self.store.document_ids())
        self.add_passages(passages)
        return document_ids(passages)

    def add_passages(self, passages: Sequence[Passage]) -> None:
        """Parse, embed and add ``passages`` (ids already indexed are skipped)."""
        new = [p for p in dict((p.id, p) for p in passages).values()]
        new = [p for p in new if not self.store.has_passage(p.id)]
        if len(new) < len(passages):
            logger.info("skipping %d passages already indexed", len(passages) - len(new))
        if not new:
            return
        preparer = self.preparer()
        preparer.show_progress = self.show_progress
        self.merge([preparer(new)])

    def preparer(self) -> KGTPreparer:
        """The per-passage half of the build with this index's settings and models
        (picklable: what an executor runs on its workers; see ``executor=``)."""
        return KGTPreparer(self.embedder, self.parser, self.index_params)

    def merge(self, prepared: Sequence[PreparedHyperedges]) -> None:
        """Add prepared batches (input order) to the store at once; passages already indexed
        are skipped."""
        new = [p for part in prepared for p in part.passages if not self.store.has_passage(p.id)]
        if not new:
            return
        kept = {p.id for p in new}
        edges = [e for part in prepared for e in part.edges if e.passage_id in kept]
        vectors = {k: v for part in prepared for k, v in part.vectors.items() if k in kept}
        t1 = time.perf_counter()
        reuse = self._tokens_in_use()
        self.store.add(new, edges, vectors)
        self._refresh(reuse)
        t2 = time.perf_counter()
        seconds = {key: sum(part.timings.get(key, 0.0) for part in prepared) for key in
                   ("nlp", "embedding", "total")}  # fmt: skip
        for key in ("nlp", "embedding"):
            self.timings[key] += seconds[key]
        self.timings["graph"] += t2 - t1
        total = seconds["total"] + t2 - t1
        self.timings["total"] += total
        logger.info(
            "indexed %d passages -> %d hyperedges in %.1fs (%.1f passages/s; nlp %.1fs and "
            "embedding %.1fs overlapping, graph %.1fs)",
            len(new),
            len(edges),
            total,
            len(new) / max(total, 1e-9),
            seconds["nlp"],
            seconds["embedding"],
            t2 - t1,
        )

    def _tokens_in_use(self) -> dict[str, tuple[int, ...]] | None:
        """Before a graph change: the token ids of the constraint indexes in use (built by a
        query, or persisted with a loaded index), for :meth:`_refresh` to update them;
        ``None`` when no query needed them yet (the first query builds them, and says so)."""
        with self._lazy_lock:
            cache = self._cache_dir
            persisted = cache is not None and cache.is_dir() and any(cache.iterdir())
            if self._indexes is None and not persisted:
                return None
            return self._constraint_indexes().tokens_by_text()

    def _refresh(self, reuse: dict[str, tuple[int, ...]] | None = None) -> None:
        """The graph changed: drop the constraint indexes (the view is rebuilt on next use).

        With ``reuse`` (:meth:`_tokens_in_use`: the indexes were in use) they are rebuilt now,
        inside the insert or delete, tokenising only the texts ``reuse`` lacks, so the next
        query does not pay for them.
        """
        self._indexes = None
        if reuse is not None:
            with self._lazy_lock:
                self._constraint_indexes(reuse, why="updating them for the changed graph")

    def _after_failed_write(self) -> None:
        """A write failed half-way: the summary and the constraint indexes may count passages
        that never reached the graph; they are read from the graph again."""
        self.store.forget_summary()
        self._refresh()

    def doc_ids(self) -> list[str]:
        """The ids of the documents indexed, sorted."""
        return sorted(self.store.document_ids())

    def delete(self, doc_id: str) -> bool:
        """Remove a document: passages, hyperedges, orphaned entities, vectors.

        Returns ``False`` (and logs a warning) for an unknown ``doc_id``.
        """
        if doc_id not in self.store.document_ids():
            return self._unknown_document(doc_id)
        reuse = self._tokens_in_use()
        self.store.remove_document(doc_id)
        self._refresh(reuse)
        return True

    def stats(self) -> ParseKGStats:
        """Graph statistics as in the paper's Table 5."""
        return self.view.stats()

    # -- translation ----------------------------------------------------------------------
    @property
    def lm(self) -> Any:
        """The translator LM (loaded on first access)."""
        with self._lazy_lock:
            if self._lm is None:
                self._lm = resolve_translator(
                    self._translator_spec, dtype=self.query_params.translator_dtype
                )
        return self._lm.llm

    @property
    def translator_dtype(self) -> str | None:
        """The precision the translator runs in, without loading it.

        ``query_params.translator_dtype`` resolved (``"auto-fast"``, the default: ``"bfloat16"``
        on a CPU that computes it natively, else ``"int8-smooth"``; ``"auto"``: ``"bfloat16"``
        or ``"float32"``) for a translator loaded by name or path; a given model's own
        ``dtype`` (``None``: its checkpoint's).
        """
        return translator_dtype(self._translator_spec, self.query_params.translator_dtype)

    @property
    def translator_label(self) -> str:
        """The translator as recorded in explanations: its name (``"default"``, an adapter
        name, a path) with the resolved precision, e.g. ``"default[bfloat16]"``."""
        spec = self._translator_spec
        if spec is None or isinstance(spec, (str, Path)):
            return translator_name(spec) + precision_suffix(self.translator_dtype)
        return translator_name(spec)  # a model object's name carries its precision

    @property
    def client(self) -> Any:
        """The ``LLMClient`` of the translator (its ``usage`` counts the translation tokens)."""
        self.lm  # noqa: B018 - loads the client
        return self._lm

    @property
    def constraint_indexes(self) -> ConstraintIndexes:
        """Entity tries and relation indexes for the translator's tokenizer (built once)."""
        with self._lazy_lock:
            return self._constraint_indexes()

    def _constraint_indexes(
        self,
        known: dict[str, tuple[int, ...]] | None = None,
        why: str = "the first query needs them",
    ) -> ConstraintIndexes:
        """Build (or read from the persisted cache) the constraint indexes of the current graph;
        a build is announced (what, and ``why``) and timed, with ``known`` token ids reused."""
        if self._indexes is not None and self._indexes.lazy != self.view.lazy:
            self._indexes = None  # graph_view changed: the indexes of the other read mode
        if self._indexes is None:
            start = time.perf_counter()
            tokenizer = self.lm.tokenizer
            cached = None
            view = self.view
            graph_fp = view.fingerprint()
            tokens_fp = tokenizer_fingerprint(tokenizer)
            if self._cache_dir is not None:
                cached = load_constraint_cache(
                    self._cache_dir / tokens_fp, fingerprint=graph_fp, rels=not view.lazy
                )
                if cached is not None:
                    self.counters["constraint_cache_hits"] += 1
            if cached is None:
                self._say(
                    f"KGT: building the translator's constraint indexes ({len(view.rels):,} "
                    f"hyperrelations, {len(view.entities):,} entities): {why}"
                )
            self._indexes = ConstraintIndexes(
                view,
                tokenizer,
                max_relation_tokens=self.index_params.max_relation_tokens,
                cached=cached,
                eos_token_id=self.lm.eos_token_id,
                known=known,
            )
            self._cache_key = f"kgt:{graph_fp}:{tokens_fp}:{self.index_params.max_relation_tokens}"
            if cached is None:
                self.counters["constraint_builds"] += 1
                tokenised = self._indexes.tokenised
                self._say(
                    f"KGT: constraint indexes built in {time.perf_counter() - start:.1f}s "
                    f"({tokenised:,} texts tokenised, {len(known or {}):,} reused)"
                )
        return self._indexes

    def _say(self, message: str) -> None:
        """Log ``message``; also print it to stderr when this index shows progress for its
        size (``show_progress``; by default for graphs of at least
        :data:`~graphrag_integrations.core.progress.PROGRESS_MIN_PASSAGES` passages)."""
        logger.info(message)
        if auto_progress(ProgressSetting.setting_of(self), len(self.view.passages)):
            print(message, file=sys.stderr, flush=True)

    def translator(self, params: KGTQueryParams | None = None) -> Translator:
        """A :class:`Translator` over this index (``params``: the index's query params)."""
        indexes = self.constraint_indexes
        return Translator(
            self.client,
            indexes,
            params or self.query_params,
            nlp=self.parser,
            cache_key=self._cache_key,
        )

    def translate(self, query: str) -> TranslationResult:
        """The clues of ``query`` (forward, then reverse when Algorithm 2 asks for it)."""
        bounded = check_query(query, self.max_query_chars, owner=type(self).__name__)
        return self.translator().translate(bounded)

    # -- retrieval ------------------------------------------------------------------------
    def _retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """Translate, trace, rank; up to ``k`` passages (fewer without top-up)."""
        return self._retrieve_filtered(query, check_k(k, self.default_k), None)

    def _retrieve_filtered(
        self, query: str, k: int, where: MetadataFilter | None
    ) -> list[RetrievedPassage]:
        """:func:`~graphrag_integrations.methods.kgt.search.search` on the whole ParseKG, or
        on the ParseKG of the passages ``where`` allows
        (:mod:`~graphrag_integrations.methods.kgt.scope`)."""
        question = check_query(query)
        if not self.view.passages:
            logger.warning("retrieve on an empty index: no passages")
            return []
        if where is None:
            indexes = self.constraint_indexes  # sets the cache key
            graph = SearchGraph(self.view, indexes, self._cache_key)
        else:
            graph = self._filtered.get(self.store, where, self._filtered_indexes)
            if not graph.view.passages:
                return []
        return search(self, question, k, graph)

    def _filtered_indexes(self, view: ParseKGView) -> tuple[ConstraintIndexes, str]:
        """Constraint indexes over a filtered ``view`` and their cache key (its fingerprint)."""
        tokenizer = self.lm.tokenizer
        with self._lazy_lock:
            indexes = ConstraintIndexes(
                view,
                tokenizer,
                max_relation_tokens=self.index_params.max_relation_tokens,
                eos_token_id=self.lm.eos_token_id,
            )
        fingerprint = f"{view.fingerprint()}:{tokenizer_fingerprint(tokenizer)}"
        return indexes, f"kgt:{fingerprint}:{self.index_params.max_relation_tokens}"

    def _dense_ranking(self, question: str, n: int) -> list[tuple[str, float]]:
        """The ``n`` passages of the corpus nearest ``question`` (embeds the missing ones once)."""
        return dense_ranking(self, question, n)

    def _passage_vectors(self, ids: Sequence[str]) -> FloatMatrix:
        """Vectors of ``ids``, embedding (and storing) the missing ones (lazy mode).

        Queries run in parallel under the index's read lock; the check-embed-add of lazy
        vectors holds the store's lock, so two queries never add the same vector twice.
        """
        with self.store.index_store.writing():
            missing = self.store.missing_vectors(dict.fromkeys(ids))
            if missing:
                self.counters["lazy_embedded_passages"] += len(missing)
                read = read_many(self.view.passages, missing)
                passages = [read[i] for i in missing]
                matrix = self.embedder.embed([p.text for p in passages])
                vectors = {p.id: matrix[i] for i, p in enumerate(passages)}
                self.store.add_vectors(passages, vectors)
            return self.store.passage_vectors(ids)
