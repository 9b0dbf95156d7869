"""ReG (Refined Graph-based RAG) over a knowledge graph: :class:`RefinedSubgraphRetriever`
(alias ``RegIndex``).

Stages (each in its module): KG sources (:mod:`.kg`) -> storage (:mod:`.store`) -> candidate
pools for training questions (:mod:`.candidates`) -> LLM-refined or weak supervision
(:mod:`.refinement`) -> the DDE + MLP triple retriever (:mod:`.subgraph`,
:mod:`.retriever`) -> structure-aware re-organisation into evidence chains
(:mod:`.reorganisation`). :meth:`RefinedSubgraphRetriever.retrieve` returns one passage per
evidence chain, formatted ``h -> [r] -> t -> ...`` as in the paper's prompts, best first.

**Anchors** (the query's topic entities): ``[bracketed]`` names in the query (MetaQA style),
else every longest non-overlapping span of the query whose lower-cased word sequence equals
an entity's (spans made only of stop words are ignored), else - logged and counted in
:attr:`RefinedSubgraphRetriever.stats` - the entity nearest the query embedding.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.core.chunking import source_metadata
from graphrag_integrations.core.documents import content_id
from graphrag_integrations.core.embeddings import Embedder, as_embedder
from graphrag_integrations.core.index_base import BaseIndex, check_query, drop_indexed
from graphrag_integrations.core.nlp import SpacyNLP
from graphrag_integrations.core.persistence import (
    Manifest,
    atomic_write_bytes,
)
from graphrag_integrations.core.progress import ProgressSetting, progress
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.core.validation import check_k
from graphrag_integrations.errors import EmptyCorpusError, IndexMismatchError
from graphrag_integrations.methods.reg.candidates import (
    CandidatePool,
    PoolStats,
    build_pool,
    render_triple,
)
from graphrag_integrations.methods.reg.kg import (
    Triple,
    check_triples,
    read_triples,
    triples_from_graph_documents,
    triples_from_parses,
    triples_from_property_graph_store,
)
from graphrag_integrations.methods.reg.params import (
    CandidateParams,
    RefinementParams,
    ReorganisationParams,
    RetrieverParams,
    TrainParams,
)
from graphrag_integrations.methods.reg.refinement import Refiner, RefineStats
from graphrag_integrations.methods.reg.reorganisation import EvidenceChain, reorganise
from graphrag_integrations.methods.reg.retriever import (
    Example,
    Features,
    TrainReport,
    TripleScorer,
    features,
    train_scorer,
    untrained_scores,
)
from graphrag_integrations.methods.reg.store import KGView, RegStore
from graphrag_integrations.methods.reg.subgraph import Subgraph, extract_subgraph

logger = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 2: core IndexStore layout (relation nodes, "entity:" node ids)
SCORER_FILE = "scorer.pt"
SCORER_CONFIG = "scorer.json"
DOCUMENTS_FILE = "documents.json"
_BRACKET = re.compile(r"\[([^\]]+)\]")
_WORD = re.compile(r"\w+")
_STOP_WORDS = (
    "a an the of in on at to by for with from and or is are was were be what which who whom "
    "whose when where how did do does that this these those it its film films movie movies"
)
_STOP = frozenset(_STOP_WORDS.split(" "))
MAX_SPAN_WORDS = 12


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


@dataclass(frozen=True)
class TrainingQuestion:
    """A question with its topic entities and gold answers (KG entity names)."""

    id: str
    text: str
    topic_entities: tuple[str, ...]
    answers: tuple[str, ...]


@dataclass(frozen=True)
class ScoredTriple:
    """A retrieved triple with its retriever score."""

    head: str
    relation: str
    tail: str
    score: float

    @property
    def triple(self) -> Triple:
        return (self.head, self.relation, self.tail)


@dataclass
class Supervision:
    """Training labels and what producing them cost."""

    labels: dict[str, list[Triple]]
    pool_stats: dict[str, PoolStats] = field(default_factory=dict)
    refine_stats: RefineStats | None = None
    sources: dict[str, str] = field(default_factory=dict)

    def pool_summary(self) -> dict[str, float]:
        """Mean and max pool size before / after merging (Table 1)."""
        if not self.pool_stats:
            return {}
        raw = [s.raw for s in self.pool_stats.values()]
        merged = [s.merged for s in self.pool_stats.values()]
        return {
            "raw_mean": float(np.mean(raw)),
            "raw_max": float(max(raw)),
            "merged_mean": float(np.mean(merged)),
            "merged_max": float(max(merged)),
        }


class RefinedSubgraphRetriever(FrameworkSurface, BaseIndex):
    """The ReG retriever over a knowledge graph (see the module docstring).

    Parameters
    ----------
    embedding : Embedder, str, LangChain Embeddings, LlamaIndex BaseEmbedding, optional
        Encodes queries, entity names and relations (``None``: offline all-MiniLM-L6-v2).
    spacy_model : str, optional
        Pipeline used to turn documents into triples (:mod:`.kg`).
    retriever, reorganisation, candidates : parameter dataclasses, optional
        See :mod:`.params`.
    k : int
        Default number of evidence chains :meth:`retrieve` returns.
    show_progress : bool or None
        Progress bars while embedding and training; ``None`` (default): on for text batches
        of at least :data:`~graphrag_integrations.core.progress.PROGRESS_MIN_PASSAGES`
        documents (off for training).

    Examples
    --------
    A toy word-hashing embedder keeps the example offline:

    >>> import zlib, numpy as np
    >>> class Toy:
    ...     model_name, dimension = "toy", 16
    ...     def embed(self, texts, *, show_progress=False):
    ...         m = np.zeros((len(texts), 16), np.float32)
    ...         for i, t in enumerate(texts):
    ...             for w in t.lower().split():
    ...                 m[i, zlib.crc32(w.encode()) % 16] += 1
    ...         return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
    ...     def embed_query(self, text):
    ...         return self.embed([text])[0]
    >>> index = RefinedSubgraphRetriever.from_triples(
    ...     [("Kismet", "directed_by", "William Dieterle"), ("Kismet", "release_year", "1944")],
    ...     embedding=Toy())
    >>> index.retrieve("who directed [Kismet]", k=1)[0].text
    'Kismet -> [directed_by] -> William Dieterle'
    """

    method = "reg"
    format_version = FORMAT_VERSION
    oldest_format_version = FORMAT_VERSION
    #: Default chunking (tokens): triples come from sentences, so chunks only bound the size
    #: of one parse; the chunker cuts at sentence ends.
    chunk_size = 512
    chunk_overlap = 32
    batch_methods = ("_add_texts",)  # the text-batch funnel (progress bars by size)
    #: Also under the index lock (see ``core.index_base``): queries and training-label reads
    #: as readers, triple insertion and training (which replaces the scorer) as writers.
    read_methods: ClassVar[tuple[str, ...]] = (
        *BaseIndex.read_methods,
        "retrieve_triples",
        "evidence_chains",
        "score_triples",
        "candidate_pool",
        "supervision",
    )
    write_methods: ClassVar[tuple[str, ...]] = (*BaseIndex.write_methods, "insert_triples", "train")

    def __init__(
        self,
        embedding: Any = None,
        *,
        spacy_model: str | None = None,
        retriever: RetrieverParams | None = None,
        reorganisation: ReorganisationParams | None = None,
        candidates: CandidateParams | None = None,
        k: int = 5,
        show_progress: bool | None = None,
    ) -> None:
        self.embedder: Embedder = as_embedder(embedding)
        self.spacy_model = spacy_model
        self._parser: SpacyNLP | None = None
        self.retriever_params = retriever or RetrieverParams()
        self.reorganisation_params = reorganisation or ReorganisationParams()
        self.candidate_params = candidates or CandidateParams()
        self.default_k = k
        self.show_progress = show_progress
        self.store = RegStore(self.embedder.model_name)
        self.scorer: TripleScorer | None = None
        self.stats = {
            "entity_fallback": 0,
            "truncated_subgraphs": 0,
            "untrained_queries": 0,
            "filled_outside_subgraph": 0,
        }
        #: Metadata of each source document (copied into the passages it backs).
        self.document_metadata: dict[str, dict[str, Any]] = {}
        self._linker: tuple[KGView, dict[tuple[str, ...], list[int]]] | None = None

    # -- building ---------------------------------------------------------------------------
    @property
    def parser(self) -> SpacyNLP:
        if self._parser is None:
            self._parser = SpacyNLP(self.spacy_model)
        return self._parser

    @classmethod
    def from_triples(
        cls, triples: Iterable[Sequence[str]], *, doc_id: str = "triples", **kwargs: Any
    ) -> RefinedSubgraphRetriever:
        """Build from Python triples, all under provenance ``doc_id``."""
        checked = check_triples(triples)
        if not checked:
            raise EmptyCorpusError("no triples to index")
        index = cls(**kwargs)
        index.insert_triples(checked, doc_id)
        return index

    @classmethod
    def from_file(
        cls, path: str | Path, *, delimiter: str | None = None, **kwargs: Any
    ) -> RefinedSubgraphRetriever:
        """Build from a TSV / CSV / ``h|r|t`` file (provenance: the file name)."""
        return cls.from_triples(
            read_triples(path, delimiter=delimiter), doc_id=Path(path).name, **kwargs
        )

    @classmethod
    def from_graph_documents(
        cls, graph_documents: Iterable[Any], **kwargs: Any
    ) -> RefinedSubgraphRetriever:
        """Build from LangChain ``GraphDocument``s; each one's provenance is the content id of
        its source document (or of its relationships when it has none)."""
        index = cls(**kwargs)
        for gdoc in graph_documents:
            triples = triples_from_graph_documents([gdoc])
            source = getattr(getattr(gdoc, "source", None), "page_content", None)
            doc_id = content_id(source if source else json.dumps(triples))
            if triples:
                index.insert_triples(triples, doc_id)
        if not index.view.n_triples:
            raise EmptyCorpusError("the graph documents hold no relationships")
        return index

    @classmethod
    def from_property_graph_store(
        cls,
        store: Any,
        *,
        doc_id: str = "property_graph",
        filters: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> RefinedSubgraphRetriever:
        """Build from a LlamaIndex property-graph store's triplets
        (:func:`.kg.triples_from_property_graph_store`, ``filters`` passed on)."""
        triples = triples_from_property_graph_store(store, **(filters or {}))
        return cls.from_triples(triples, doc_id=doc_id, **kwargs)

    @classmethod
    def from_passages(cls, passages: Sequence[Passage], **kwargs: Any) -> RefinedSubgraphRetriever:
        """Build a KG from passages with the core NLP (:func:`.kg.triples_from_parses`;
        provenance: each passage's ``doc_id``). ``from_documents`` cuts documents into
        passages first (chunk metadata is not kept in :attr:`document_metadata`)."""
        index = cls(**kwargs)
        if not index._add_texts([(p.doc_id, p.text) for p in passages]):
            raise EmptyCorpusError("no triples could be extracted from the documents")
        for p in passages:
            index.document_metadata.setdefault(p.doc_id, source_metadata(p))
        return index

    def insert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Add text documents (triples extracted by the core NLP); returns the ids of the
        documents that contributed triples. Documents already indexed are skipped with a
        warning; ``options`` (load and chunking options) go to
        :meth:`~BaseIndex.document_passages`."""
        passages = self.document_passages(documents, options)
        fresh = drop_indexed(passages, self.store.document_ids())
        added = self._add_texts([(p.doc_id, p.text) for p in fresh])
        meta: dict[str, dict[str, Any]] = {}
        for p in fresh:
            meta.setdefault(p.doc_id, source_metadata(p))
        for doc_id in added:
            self.document_metadata[doc_id] = meta[doc_id]
        return added

    def _add_texts(self, items: Sequence[tuple[str, str]]) -> list[str]:
        parses = self.parser.parse_many([t for _, t in items], show_progress=self.show_progress)
        added: list[str] = []
        for (doc_id, _), parsed in zip(items, parses, strict=True):
            triples = triples_from_parses([parsed])
            if triples:
                self.insert_triples(triples, doc_id)
                added.append(doc_id)
            else:
                logger.info(
                    "document %r yields no triple (fewer than 2 entities per sentence)", doc_id
                )
        return list(dict.fromkeys(added))

    def insert_triples(self, triples: Iterable[Sequence[str]], doc_id: str) -> int:
        """Add triples under provenance ``doc_id``; returns how many were new to the KG."""
        added = self.store.add_triples(check_triples(triples), doc_id, self.embedder)
        self._linker = None
        return added

    def doc_ids(self) -> list[str]:
        """The ids of the documents that back a triple, sorted."""
        return sorted(self.store.document_ids())

    def delete(self, doc_id: str) -> bool:  # type: ignore[override]
        """Remove every triple (and entity) only ``doc_id`` backs; ``False`` (and a warning)
        for an unknown id."""
        removed = self.store.remove_document(doc_id)
        self.document_metadata.pop(doc_id, None)
        self._linker = None
        return removed or self._unknown_document(doc_id)

    @property
    def view(self) -> KGView:
        """The KG's array view."""
        return self.store.view()

    # -- anchors -----------------------------------------------------------------------------
    def _link_table(self) -> dict[tuple[str, ...], list[int]]:
        view = self.view
        if self._linker is None or self._linker[0] is not view:
            table: dict[tuple[str, ...], list[int]] = {}
            for row, name in enumerate(view.entities):
                key = tuple(_words(name))
                if 0 < len(key) <= MAX_SPAN_WORDS:
                    table.setdefault(key, []).append(row)
            self._linker = (view, table)
        return self._linker[1]

    def link_entities(self, query: str) -> list[str]:
        """The query's anchor entities (see the module docstring)."""
        view = self.view
        bracketed = [m.strip() for m in _BRACKET.findall(query)]
        if bracketed:
            found = [b for b in bracketed if b in view.entity_row]
            missing = [b for b in bracketed if b not in view.entity_row]
            if missing:
                logger.warning("bracketed entities not in the KG: %s", missing)
            if found:
                return found
        table = self._link_table()
        words = _words(query)
        rows: list[int] = []
        i = 0
        while i < len(words):
            for n in range(min(MAX_SPAN_WORDS, len(words) - i), 0, -1):
                span = tuple(words[i : i + n])
                if span in table and not all(w in _STOP for w in span):
                    rows += table[span]
                    i += n
                    break
            else:
                i += 1
        if rows:
            return [view.entities[r] for r in dict.fromkeys(rows)]
        self.stats["entity_fallback"] += 1
        q = self.embedder.embed([_BRACKET.sub(r"\1", query)])[0]
        best = int(np.argmax(view.entity_vectors @ q)) if view.entities else -1
        if best < 0:
            return []
        logger.warning(
            "no KG entity named in %r; anchoring at the nearest entity %r",
            query,
            view.entities[best],
        )
        return [view.entities[best]]

    # -- supervision and training --------------------------------------------------------------
    def candidate_pool(self, question: TrainingQuestion) -> CandidatePool:
        """The multi-faceted, merged candidate pool of a training question."""
        return build_pool(
            self.view, question.topic_entities, question.answers, self.candidate_params
        )

    def supervision(
        self,
        questions: Sequence[TrainingQuestion],
        *,
        mode: Literal["weak", "refined"] = "refined",
        llm: Any = None,
        refinement: RefinementParams | None = None,
        cache_path: str | Path | None = None,
    ) -> Supervision:
        """Training labels: ``"weak"`` (every q->a shortest path) or ``"refined"`` (the LLM's
        selection from the candidate pool, :mod:`.refinement`)."""
        view = self.view
        refiner = None
        if mode == "refined":
            if llm is None:
                raise ValueError("refined supervision needs an llm")
            refiner = Refiner(
                llm, refinement or RefinementParams(), Path(cache_path) if cache_path else None
            )
        elif mode != "weak":
            raise ValueError(f"mode must be 'weak' or 'refined', got {mode!r}")
        out = Supervision({}, refine_stats=refiner.stats if refiner else None)
        pools = {q.id: self.candidate_pool(q) for q in questions}
        if refiner is not None and refiner.params.choice_scoring == "batch":
            # Batch Calibration: the position prior of the questions labelled together
            refiner.fit_batch(view, [(q.id, q.text, pools[q.id]) for q in questions])
        steps = (
            progress(questions, "ReG weak supervision", enabled=self.show_progress)
            if refiner is None
            else refiner.track(questions, enabled=ProgressSetting.llm(self))  # from the 1st call
        )
        for q in steps:
            pool = pools[q.id]
            out.pool_stats[q.id] = pool.stats
            if refiner is None:
                rows, source = pool.weak_triples(), "weak"
            else:
                labels = refiner.refine(q.id, q.text, view, pool)
                rows, source = labels.rows, labels.source
            out.labels[q.id] = [view.triple(r) for r in rows]
            out.sources[q.id] = source
        return out

    def _subgraph(self, anchors: Sequence[str]) -> Subgraph:
        p = self.retriever_params
        view = self.view
        sub = extract_subgraph(
            view,
            [view.entity_row[a] for a in anchors],
            hops=p.subgraph_hops,
            max_degree=p.max_degree,
            max_triples=p.max_triples,
        )
        if sub.truncated:
            self.stats["truncated_subgraphs"] += 1
        return sub

    def _examples(
        self, questions: Sequence[TrainingQuestion], labels: Mapping[str, Sequence[Triple]]
    ) -> list[Example]:
        view = self.view
        vecs = self.embedder.embed([_BRACKET.sub(r"\1", q.text) for q in questions])
        out: list[Example] = []
        outside = 0
        for q, vec in zip(questions, vecs, strict=True):
            anchors = [t for t in q.topic_entities if t in view.entity_row]
            if not anchors:
                continue
            sub = self._subgraph(anchors)
            local = {int(r): i for i, r in enumerate(sub.rows)}
            rows = view.triple_rows(labels.get(q.id, []))
            pos = [local[r] for r in rows if r in local]
            outside += len(rows) - len(pos)
            out.append(
                Example(
                    q.id, features(view, sub, vec, self.retriever_params), np.array(pos, np.int64)
                )
            )
        if outside:
            logger.info("%d label triples lie outside their question's subgraph", outside)
        return out

    def train(
        self,
        questions: Sequence[TrainingQuestion],
        labels: Mapping[str, Sequence[Triple]],
        *,
        validation: Sequence[TrainingQuestion] = (),
        validation_labels: Mapping[str, Sequence[Triple]] | None = None,
        params: TrainParams | None = None,
    ) -> TrainReport:
        """Train the triple scorer on ``labels`` (e.g. :meth:`supervision`'s); the checkpoint
        with the best validation triple recall is kept in :attr:`scorer`."""
        train = self._examples(questions, labels)
        val = self._examples(validation, validation_labels or labels) if validation else []
        self.scorer, report = train_scorer(
            train,
            val,
            self.retriever_params,
            params or TrainParams(),
            show_progress=self.show_progress,
        )
        logger.info(
            "trained the ReG scorer in %.1fs: best epoch %d, validation recall %.4f",
            report.seconds,
            report.best_epoch,
            report.best_recall,
        )
        return report

    # -- retrieval ---------------------------------------------------------------------------
    def _scores(self, feats: Features) -> np.ndarray[Any, np.dtype[np.float32]]:
        if self.scorer is None:
            if not self.stats["untrained_queries"]:
                logger.warning("ReG has no trained scorer: zero-shot similarity order used")
            self.stats["untrained_queries"] += 1
            return untrained_scores(feats)
        return self.scorer.score(feats)

    def score_triples(
        self, query: str, *, topic_entities: Sequence[str] | None = None
    ) -> tuple[list[str], Subgraph, np.ndarray[Any, np.dtype[np.float32]]]:
        """``(anchors, subgraph, one score per subgraph triple)`` for ``query``."""
        query = check_query(query)
        view = self.view
        if view.n_triples == 0:
            raise EmptyCorpusError("the index holds no triples")
        anchors = list(topic_entities) if topic_entities else self.link_entities(query)
        missing = [a for a in anchors if a not in view.entity_row]
        if missing:
            raise ValueError(f"topic entities not in the KG: {missing}")
        sub = self._subgraph(anchors)
        vec = self.embedder.embed([_BRACKET.sub(r"\1", query)])[0]
        feats = features(view, sub, vec, self.retriever_params)
        return anchors, sub, self._scores(feats)

    def retrieve_triples(
        self, query: str, *, topic_entities: Sequence[str] | None = None, k: int | None = None
    ) -> list[ScoredTriple]:
        """The top-``k`` triples (``None``: ``RetrieverParams.top_k``), best first."""
        _, sub, scores = self.score_triples(query, topic_entities=topic_entities)
        return self._top(sub, scores, k or self.retriever_params.top_k)

    def _top(self, sub: Subgraph, scores: Any, k: int) -> list[ScoredTriple]:
        order = np.argsort(-scores, kind="stable")[:k]
        view = self.view
        return [ScoredTriple(*view.triple(int(sub.rows[i])), float(scores[i])) for i in order]

    def evidence_chains(
        self, query: str, *, topic_entities: Sequence[str] | None = None, top_k: int | None = None
    ) -> tuple[list[EvidenceChain], list[ScoredTriple], list[str]]:
        """``(chains best first, top-K triples, anchors)``."""
        anchors, sub, scores = self.score_triples(query, topic_entities=topic_entities)
        top = self._top(sub, scores, top_k or self.retriever_params.top_k)
        view = self.view
        rows = view.triple_rows(t.triple for t in top)
        chains = reorganise(
            view,
            rows,
            [t.score for t in top],
            [view.entity_row[a] for a in anchors],
            self.reorganisation_params,
        )
        return chains, top, anchors

    def _retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """One passage per evidence chain (``h -> [r] -> t -> ...``), best first; when there
        are fewer than ``k`` chains, the best top-K triples that no chain holds follow, one
        passage each (``metadata["chained"]`` is ``False``)."""
        k = check_k(k, self.default_k)
        chains, top, anchors = self.evidence_chains(query)
        view = self.view
        score_of = {t.triple: t.score for t in top}
        units: list[tuple[str, list[Triple], list[str], float, bool]] = [
            (
                chain.render(view),
                [view.triple(r) for r in chain.rows],
                [view.entities[t] for t in chain.targets],
                chain.score,
                True,
            )
            for chain in chains[:k]
        ]
        if len(units) < k:
            chained = {view.triple(r) for chain in chains for r in chain.rows}
            singles = [t for t in top if t.triple not in chained]
            if len(units) + len(singles) < k:
                singles += self._outside_subgraph(query, {t.triple for t in top})
            for t in singles[: k - len(units)]:
                text = render_triple(t.triple)
                units.append((text, [t.triple], [], t.score, False))
                score_of.setdefault(t.triple, t.score)
        out: list[RetrievedPassage] = []
        for text, triples, targets, score, is_chain in units:
            provenance = sorted({d for t in triples for d in self.store.triple_provenance(t)})
            meta: dict[str, Any] = {
                **self.document_metadata.get(provenance[0], {}),
                "triples": [list(t) for t in triples],
                "triple_scores": [score_of[t] for t in triples],
                "anchors": anchors,
                "targets": targets,
                "doc_ids": provenance,
                "chained": is_chain,
            }
            passage = Passage(content_id("reg", text), text, provenance[0], meta)
            explanation = {
                "method": "reg",
                "scorer": "trained" if self.scorer is not None else "untrained",
                **meta,
            }
            out.append(RetrievedPassage(passage, score, explanation))
        return out

    def _outside_subgraph(self, query: str, seen: set[Triple]) -> list[ScoredTriple]:
        """KG triples outside the query's subgraph, by zero-shot similarity (cosine of the
        query with relation, head and tail): what fills ``retrieve`` when the subgraph holds
        fewer than ``k`` results (logged at debug level, counted)."""
        self.stats["filled_outside_subgraph"] += 1
        logger.debug("subgraph of %r too small for k; filling from the rest of the KG", query)
        view = self.view
        q = np.asarray(self.embedder.embed([_BRACKET.sub(r"\1", query)])[0], np.float32)
        ent = view.entity_vectors @ q
        rel = view.relation_vectors @ q
        scores = rel[view.rels] + ent[view.heads] + ent[view.tails]
        out = []
        for row in np.argsort(-scores, kind="stable"):
            t = view.triple(int(row))
            if t not in seen:
                out.append(ScoredTriple(*t, float(scores[row])))
            if len(out) >= self.default_k + 50:
                break
        return out

    # -- persistence -------------------------------------------------------------------------
    def manifest(self) -> Manifest:
        view = self.view
        return Manifest(
            method=self.method,
            parameters={
                "retriever": self.retriever_params.to_kwargs(),
                "reorganisation": self.reorganisation_params.to_kwargs(),
                "candidates": self.candidate_params.to_kwargs(),
                "k": self.default_k,
                "entities": len(view.entities),
                "triples": view.n_triples,
                "trained": self.scorer is not None,
            },
            models={"embedding": self.embedder.model_name},
            embedding_dimension=self.embedder.dimension,
        )

    def _write_files(self, directory: Path) -> None:
        """``graph.json``, ``vectors/``, the document metadata and (if trained) the scorer."""
        self.store.persist(directory)
        if self.scorer is not None:
            atomic_write_bytes(directory / SCORER_FILE, self.scorer.to_bytes())
            atomic_write_bytes(directory / SCORER_CONFIG, json.dumps(self.scorer.config()).encode())
        atomic_write_bytes(
            directory / DOCUMENTS_FILE,
            json.dumps(self.document_metadata, sort_keys=True, default=str).encode(),
        )

    @classmethod
    def _from_manifest(
        cls, src: Path, manifest: Manifest, options: dict[str, Any]
    ) -> RefinedSubgraphRetriever:
        """Parameters come from the manifest unless given."""
        params = manifest.parameters
        options.setdefault("retriever", RetrieverParams(**params["retriever"]))
        options.setdefault("reorganisation", ReorganisationParams(**params["reorganisation"]))
        options.setdefault("candidates", CandidateParams(**params["candidates"]))
        options.setdefault("k", params["k"])
        return cls(**options)

    def _read_files(self, src: Path, manifest: Manifest) -> None:
        self.store = RegStore.load(
            src,
            model_name=self.embedder.model_name,
            dimension=int(manifest.embedding_dimension or 0),
        )
        if self.view.n_triples != manifest.parameters["triples"]:
            raise IndexMismatchError(f"{src}: triple count disagrees with the manifest")
        documents = src / DOCUMENTS_FILE
        if documents.is_file():
            self.document_metadata = json.loads(documents.read_text(encoding="utf-8"))
        if manifest.parameters["trained"]:
            config = json.loads((src / SCORER_CONFIG).read_text(encoding="utf-8"))
            self.scorer = TripleScorer.from_bytes((src / SCORER_FILE).read_bytes(), **config)

    def timed_retrieve(self, query: str, **kwargs: Any) -> tuple[list[ScoredTriple], float]:
        """:meth:`retrieve_triples` and its wall-clock seconds (benchmarks)."""
        start = time.perf_counter()
        out = self.retrieve_triples(query, **kwargs)
        return out, time.perf_counter() - start


#: Short alias (phase-1 name).
RegIndex = RefinedSubgraphRetriever
