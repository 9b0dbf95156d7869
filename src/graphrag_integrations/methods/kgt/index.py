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

import numpy as np

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix, as_embedder
from graphrag_integrations.core.graph.backends import GraphStoreSpec, resolve_graph_backend
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.base import BaseIndex, build_from_documents
from graphrag_integrations.core.index.building import (
    DEFAULT_SPLITTER,
    CheckpointDir,
    DocumentPaths,
    build_from_passages,
    document_ids,
    drop_indexed,
)
from graphrag_integrations.core.index.executors import ExecutorSpec
from graphrag_integrations.core.index.query_binding import QueryParamsField
from graphrag_integrations.core.index.store import VectorIndexFactory
from graphrag_integrations.core.llm.precision import precision_suffix
from graphrag_integrations.core.params import resolve_params
from graphrag_integrations.core.progress import ProgressSetting, auto_progress
from graphrag_integrations.core.text.documents import DecodeErrors, LoadReport
from graphrag_integrations.core.text.nlp import SpacyNLP
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.core.validation import check_k, check_query
from graphrag_integrations.methods.kgt.constraints import ConstraintIndexes, tokenizer_fingerprint
from graphrag_integrations.methods.kgt.params import KGTIndexParams, KGTQueryParams
from graphrag_integrations.methods.kgt.parsekg import ParseKGStats
from graphrag_integrations.methods.kgt.persistence import KGTPersistence
from graphrag_integrations.methods.kgt.preparation import KGTPreparer, PreparedHyperedges
from graphrag_integrations.methods.kgt.reads import ParseKGReads
from graphrag_integrations.methods.kgt.retrieval import (
    decomposition_prompt,
    parse_next_query,
    trace_clues,
)
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


def next_query(llm: Any, question: str, evidence: Sequence[str], used: Sequence[str]) -> str | None:
    """Ask the decomposition LLM for the next search query (prompt 3); ``None`` to stop.

    The one decomposition LLM call (``llm.complete(prompt)``: core ``LLM`` or ``LLMClient``).
    """
    reply = llm.complete(decomposition_prompt(question, evidence, used))
    text = reply if isinstance(reply, str) else reply.text
    return parse_next_query(text)


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
        self.index_params, self.query_params = resolve_params(
            KGTIndexParams,
            KGTQueryParams,
            index_params=index_params,
            query_params=query_params,
            preset=preset,
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

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_documents(  # type: ignore[override]  # typed: the base takes **kwargs
        cls,
        documents: Iterable[Any],
        *,
        embedding: Any = None,
        index_params: KGTIndexParams | None = None,
        query_params: KGTQueryParams | None = None,
        preset: str | None = None,
        translator: Any = None,
        decomposer: Any = None,
        show_progress: bool | None = None,
        vector_index: VectorIndexFactory | None = None,
        graph_store: GraphStoreSpec = None,
        splitter: Any = DEFAULT_SPLITTER,
        chunking: bool | None = True,
        errors: DecodeErrors = "strict",
        report: LoadReport | None = None,
        path: DocumentPaths = None,
        pattern: str | None = None,
        checkpoint_dir: CheckpointDir = None,
        checkpoint_every: int | None = None,
        executor: ExecutorSpec = None,
    ) -> ParseKGTranslatorRetriever:
        """Index documents (strings, files, LangChain / LlamaIndex documents) cut into chunks.

        The index arguments are the constructor's; ``splitter`` / ``chunking``, the load
        options (``errors``, ``report``, ``path``, ``pattern``) and ``checkpoint_dir`` /
        ``checkpoint_every`` are those of :meth:`BaseIndex.from_documents`; ``executor``: who
        runs the per-passage work (:mod:`~graphrag_integrations.core.index.executors`).
        """
        return build_from_documents(
            cls,
            documents,
            splitter=splitter,
            chunking=chunking,
            errors=errors,
            report=report,
            path=path,
            pattern=pattern,
            embedding=embedding,
            index_params=index_params,
            query_params=query_params,
            preset=preset,
            translator=translator,
            decomposer=decomposer,
            show_progress=show_progress,
            vector_index=vector_index,
            graph_store=graph_store,
        )

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
        question = check_query(query)
        k = check_k(k, self.default_k)
        if not self.view.passages:
            logger.warning("retrieve on an empty index: no passages")
            return []
        translator = self.translator()
        used = [question]
        current = question
        best: dict[str, tuple[float, int]] = {}
        evidence: dict[str, list[dict[str, Any]]] = {}
        rounds: list[dict[str, Any]] = []
        for step in range(self.query_params.max_steps):
            result = translator.translate(current)
            self.counters.update({f"dropped_{v}": n for v, n in result.dropped.items()})
            traced = trace_clues(result.clues, self.view)
            qvec = self.embedder.embed_query(current)
            ids = list(traced)
            sims = self._passage_vectors(ids) @ qvec if ids else np.zeros(0)
            for pid, sim in zip(ids, sims.tolist(), strict=True):
                if pid not in best or sim > best[pid][0]:
                    best[pid] = (float(sim), step)
                for clue in traced[pid]:
                    evidence.setdefault(pid, []).append({**clue, "step": step})
            rounds.append(
                {
                    "query": current,
                    "clues": len(result.clues),
                    "traced_passages": len(ids),
                    "reverse_ran": result.reverse_ran,
                    "dropped_hypotheses": dict(result.dropped),
                }
            )
            if step + 1 >= self.query_params.max_steps:
                break
            top = sorted(best, key=lambda p: -best[p][0])[:k]
            evidence_texts = [p.text for p in read_many(self.view.passages, top).values()]
            following = next_query(self.decomposer, question, evidence_texts, used)
            if following is None or following in used:
                break
            used.append(following)
            current = following
        ctx = len(best)
        if self.query_params.fusion == "rrf":
            return self._fused(question, best, evidence, rounds, k)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:k]
        label = self.translator_label
        texts = read_many(self.view.passages, [pid for pid, _ in ranked])
        out = [
            RetrievedPassage(
                texts[pid],
                score,
                {
                    "method": self.method,
                    "translator": label,
                    "source": "traced",
                    "step": step,
                    "clues": evidence[pid],
                    "traced_passages": ctx,
                    "rounds": rounds,
                },
            )
            for pid, (score, step) in ranked
        ]
        if self.query_params.top_up and len(out) < k:
            out.extend(self._top_up(question, k - len(out), set(best), ctx, rounds))
        return out

    def _dense_ranking(self, question: str, n: int) -> list[tuple[str, float]]:
        """The ``n`` passages of the corpus nearest ``question`` (embeds the missing ones once)."""
        self.view  # noqa: B018 - the read mode of the query params
        missing = self.store.passages_without_vector()
        if missing:
            logger.info("embedding the %d passages not embedded yet", len(missing))
            self._passage_vectors(missing)
        return self.store.nearest_passages(self.embedder.embed_query(question), n)

    def _fused(
        self,
        question: str,
        best: dict[str, tuple[float, int]],
        evidence: dict[str, list[dict[str, Any]]],
        rounds: list[dict[str, Any]],
        k: int,
    ) -> list[RetrievedPassage]:
        """``fusion="rrf"``: reciprocal-rank fusion of the traced and the dense ranking."""
        params = self.query_params
        self.counters["fused_queries"] += 1
        traced = sorted(best, key=lambda p: (-best[p][0], p))
        dense = [pid for pid, _ in self._dense_ranking(question, params.fusion_depth)]
        score: dict[str, float] = {}
        for rank, pid in enumerate(traced, 1):
            score[pid] = params.fusion_weight / (params.fusion_k + rank)
        for rank, pid in enumerate(dense, 1):
            score[pid] = score.get(pid, 0.0) + 1.0 / (params.fusion_k + rank)
        traced_rank = {pid: r for r, pid in enumerate(traced, 1)}
        dense_rank = {pid: r for r, pid in enumerate(dense, 1)}
        ranked = sorted(score, key=lambda p: (-score[p], p))[:k]
        sources = {(True, False): "traced", (False, True): "dense", (True, True): "traced+dense"}
        label = self.translator_label
        texts = read_many(self.view.passages, ranked)
        return [
            RetrievedPassage(
                texts[pid],
                score[pid],
                {
                    "method": self.method,
                    "translator": label,
                    "source": sources[(pid in traced_rank, pid in dense_rank)],
                    "traced_rank": traced_rank.get(pid),
                    "dense_rank": dense_rank.get(pid),
                    "clues": evidence.get(pid, []),
                    "traced_passages": len(best),
                    "rounds": rounds,
                },
            )
            for pid in ranked
        ]

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

    def _top_up(
        self, question: str, n: int, exclude: set[str], ctx: int, rounds: list[dict[str, Any]]
    ) -> list[RetrievedPassage]:
        """Product mode: the nearest untraced passages of the corpus, flagged."""
        self.counters["top_up_queries"] += 1
        hits = self._dense_ranking(question, n + len(exclude))
        extra = [(pid, s) for pid, s in hits if pid not in exclude][:n]
        logger.info("top-up: %d traced passages, %d added by dense retrieval", ctx, len(extra))
        label = self.translator_label
        texts = read_many(self.view.passages, [pid for pid, _ in extra])
        return [
            RetrievedPassage(
                texts[pid],
                float(score),
                {
                    "method": self.method,
                    "translator": label,
                    "source": "top_up",
                    "clues": [],
                    "traced_passages": ctx,
                    "rounds": rounds,
                },
            )
            for pid, score in extra
        ]
