"""ReG (Refined Graph-based RAG) over a knowledge graph: :class:`RefinedSubgraphRetriever`
(alias ``RegIndex``).

Stages (each in its module): KG sources (:mod:`.kg`) -> storage (:mod:`.store`) -> candidate
pools for training questions (:mod:`.candidates`) -> LLM-refined or weak supervision
(:mod:`.refinement`) -> the DDE + MLP triple scorer (:mod:`.subgraph`, :mod:`.scorer`,
trained by :mod:`.training`) -> structure-aware re-organisation into evidence chains
(:mod:`.reorganisation`). :meth:`RefinedSubgraphRetriever.retrieve` returns one passage per
evidence chain, formatted ``h -> [r] -> t -> ...`` as in the paper's prompts, best first.

**Anchors** (the query's topic entities, :mod:`.linking`): ``[bracketed]`` names in the
query (MetaQA style), else every longest non-overlapping span of the query whose lower-cased
word sequence equals an entity's (spans made only of stop words are ignored), else - logged
and counted in :attr:`RefinedSubgraphRetriever.stats` - the entity nearest the query
embedding.

**Documents without a triple** (no sentence names two entities) are kept: :meth:`doc_ids`
lists them (zero triples), :meth:`delete` removes them, and one warning per batch says how
many there were.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from typing_extensions import Unpack

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.core.encoders.embeddings import Embedder, as_embedder
from graphrag_integrations.core.graph.backends import GraphStoreSpec, resolve_graph_backend
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.base import BaseIndex, build_from_documents
from graphrag_integrations.core.index.build_options import (
    DocumentBuildOptions,
    DocumentOptions,
    check_options,
)
from graphrag_integrations.core.index.building import drop_indexed
from graphrag_integrations.core.index.query_binding import QueryParamsField
from graphrag_integrations.core.persistence import (
    PASSAGES_NAME,
    Manifest,
    atomic_write_bytes,
    read_passages,
    write_passages,
)
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.core.text.chunking import source_metadata
from graphrag_integrations.core.text.nlp import SpacyNLP
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.core.validation import check_k, check_query
from graphrag_integrations.errors import (
    EmptyCorpusError,
    IndexMismatchError,
)
from graphrag_integrations.methods.reg.anchoring import EntityAnchoring
from graphrag_integrations.methods.reg.candidates import CandidatePool, build_pool
from graphrag_integrations.methods.reg.kg import (
    KGSources,
    RegIndexArguments,
    Triple,
    check_triples,
    is_triple_file,
    read_triples,
)
from graphrag_integrations.methods.reg.linking import (
    BRACKET,
)
from graphrag_integrations.methods.reg.neighbourhood import NeighbourhoodReads
from graphrag_integrations.methods.reg.params import (
    RefinementParams,
    RegIndexParams,
    RegQueryParams,
    RegTrainParams,
    manifest_params,
)
from graphrag_integrations.methods.reg.preparation import PreparedTriples, RegPreparer
from graphrag_integrations.methods.reg.reorganisation import EvidenceChain, reorganise
from graphrag_integrations.methods.reg.retrieval import (
    ScoredTriple,
    chain_passages,
    top_triples,
)
from graphrag_integrations.methods.reg.scope import FilteredKG, FilteredKGs
from graphrag_integrations.methods.reg.scorer import (
    Features,
    TripleScorer,
    features,
    untrained_scores,
)
from graphrag_integrations.methods.reg.store import KGView, RegStore
from graphrag_integrations.methods.reg.subgraph import Subgraph, extract_subgraph
from graphrag_integrations.methods.reg.training import (
    Supervision,
    TrainingQuestion,
    TrainReport,
    label_questions,
    train_questions,
)

__all__ = [
    "RefinedSubgraphRetriever",
    "RegIndex",
    "ScoredTriple",
    "Supervision",
    "TrainingQuestion",
]

logger = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 2: core IndexStore layout (relation nodes, "entity:" node ids)
SCORER_FILE = "scorer.pt"
SCORER_CONFIG = "scorer.json"
DOCUMENTS_FILE = "documents.json"


class RefinedSubgraphRetriever(KGSources, EntityAnchoring, FrameworkSurface, BaseIndex):
    """The ReG retriever over a knowledge graph (see the module docstring).

    Parameters
    ----------
    embedding : Embedder, str, LangChain Embeddings, LlamaIndex BaseEmbedding, optional
        Encodes queries, entity names and relations (``None``: offline all-MiniLM-L6-v2).
    index_params : RegIndexParams, optional
        Build settings: the spaCy pipeline of ``from_documents``, the DDE features, the
        candidate pools of training questions.
    query_params : RegQueryParams, optional
        Query settings: ``k`` results, the subgraph bound, ``K`` triples, the chain length
        ``L``...
    preset : str, optional
        ``"default"`` or ``"paper"``: both parameter classes' preset (not together with
        ``index_params`` / ``query_params``).
    show_progress : bool or None
        Progress bars while embedding and training; ``None`` (default): on for text batches
        of at least :data:`~graphrag_integrations.core.progress.PROGRESS_MIN_PASSAGES`
        documents (off for training).
    graph_store : str, GraphBackend class or GraphBackend, optional
        Where the KG lives (see
        :func:`~graphrag_integrations.core.graph.backends.resolve_graph_backend`): ``None`` or
        ``"networkx"``: in the process (the networkx ``GraphStore``);
        ``"falkordb://HOST:PORT/GRAPH"``: that FalkorDB graph, which must be empty
        (``FalkorDBGraph.at(url, overwrite=True)`` replaces what it holds); or a backend class
        or instance offering ``GraphStore.edges`` too. :meth:`load` takes it too: where the
        graph is now, if it moved. With a database graph, queries read only the
        neighbourhood of their anchors (:attr:`neighbourhood`), not the whole graph.

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
    >>> index.as_retriever(k=1, K=1).retrieve("[Kismet]")[0].text
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
    #: Also under the index lock (see ``core.index.base``): queries and training-label reads
    #: as readers, triple insertion and training (which replaces the scorer) as writers.
    read_methods: ClassVar[tuple[str, ...]] = (
        *BaseIndex.read_methods,
        "retrieve_triples",
        "evidence_chains",
        "score_triples",
        "evidence_in_view",
        "candidate_pool",
        "supervision",
    )
    write_methods: ClassVar[tuple[str, ...]] = (*BaseIndex.write_methods, "insert_triples", "train")
    index_params_class = RegIndexParams
    query_params = QueryParamsField(RegQueryParams)
    k_param = "k"
    corpus_wide_scores = False  # a filtered query runs on the matching documents' KG alone

    def __init__(
        self,
        embedding: Any = None,
        *,
        index_params: RegIndexParams | None = None,
        query_params: RegQueryParams | None = None,
        preset: str | None = None,
        show_progress: bool | None = None,
        graph_store: GraphStoreSpec = None,
    ) -> None:
        self.index_params: RegIndexParams
        self.index_params, self.query_params = self.resolved_params(
            index_params, query_params, preset
        )
        self.embedder: Embedder = as_embedder(embedding)
        self._parser: SpacyNLP | None = None
        self.show_progress = show_progress
        self.graph_backend: type[GraphBackend] | None = resolve_graph_backend(graph_store)
        self.store = RegStore(self.embedder.model_name, graph=self.graph_backend)
        self.scorer: TripleScorer | None = None
        self.stats = {
            "entity_fallback": 0,
            "truncated_subgraphs": 0,
            "untrained_queries": 0,
            "filled_outside_subgraph": 0,
        }
        #: Metadata of each source document (copied into the passages it backs); every text
        #: document has an entry, also one that gave no triple.
        self.document_metadata: dict[str, dict[str, Any]] = {}
        #: Text of each indexed passage, by passage id (:attr:`passages`).
        self._passages: dict[str, Passage] = {}
        self._linker: tuple[KGView, dict[tuple[str, ...], list[int]]] | None = None
        self._reads: NeighbourhoodReads | None = None
        self._filtered = FilteredKGs()  # the KGs of recent filters (methods.reg.scope)
        self._texts_version = 0  # bumped when text documents come or go

    @property
    def passages(self) -> list[Passage]:
        """The text passages triples were extracted from (``[]`` for an index of triples)."""
        return list(self._passages.values())

    # -- building ---------------------------------------------------------------------------
    @property
    def parser(self) -> SpacyNLP:
        if self._parser is None:
            self._parser = SpacyNLP(self.index_params.spacy_model)
        return self._parser

    @classmethod
    def from_documents(  # type: ignore[override]  # typed: the base takes **kwargs
        cls,
        documents: Iterable[Any] | Any,
        *,
        embedding: Any = None,
        index_params: RegIndexParams | None = None,
        query_params: RegQueryParams | None = None,
        preset: str | None = None,
        show_progress: bool | None = None,
        graph_store: GraphStoreSpec = None,
        **options: Unpack[DocumentBuildOptions],
    ) -> RefinedSubgraphRetriever:
        """Build a KG from text documents (strings, files, folders, LangChain / LlamaIndex
        documents): cut into passages (``splitter=`` / ``chunking=False``, see
        ``docs/reference/chunking.md``), triples extracted per sentence
        (:func:`.kg.triples_from_parses`), provenance = each document's id. ``.tsv`` /
        ``.csv`` files among them are read as triples (:func:`.kg.read_triples`; provenance:
        the file name; an executor prepares the text documents only, see
        :meth:`executor_sources`). ``options``: the chunking, load, checkpoint and executor
        options every index takes
        (:class:`~graphrag_integrations.core.index.build_options.DocumentBuildOptions`)."""
        arguments: RegIndexArguments = {
            "embedding": embedding,
            "index_params": index_params,
            "query_params": query_params,
            "preset": preset,
            "show_progress": show_progress,
            "graph_store": graph_store,
        }
        texts, read_tables = cls.executor_sources(documents)
        if read_tables is None:
            return build_from_documents(cls, texts, options, **arguments)
        check_options(f"{cls.__name__}.from_documents()", options, DocumentOptions.__annotations__)
        index = cls(**arguments)
        read_tables(index)
        if texts or "path" in options:
            index.insert(texts, **options)
        return index

    @classmethod
    def executor_sources(
        cls, documents: Iterable[Any] | Any
    ) -> tuple[Any, Callable[[RefinedSubgraphRetriever], None] | None]:
        """The documents a build through an executor prepares there (the text ones) and the
        reading of the ``.tsv`` / ``.csv`` triple files, done here first (``None``: none)."""
        if isinstance(documents, (str, os.PathLike)):
            documents = [documents]
        listed = isinstance(documents, (list, tuple))
        tables = [d for d in documents if is_triple_file(d)] if listed else []
        if not tables:
            return documents, None

        def read_tables(index: RefinedSubgraphRetriever) -> None:
            for table in tables:
                index.insert_triples(read_triples(Path(table)), Path(table).name)

        return [d for d in documents if not is_triple_file(d)], read_tables

    def check_built(self) -> None:
        """Refuse a text build that found no triple (``EmptyCorpusError``)."""
        if self.store.n_triples == 0:
            raise EmptyCorpusError("no triples could be extracted from the documents")

    @classmethod
    def from_passages(  # type: ignore[override]  # typed: the base takes **kwargs
        cls, passages: Sequence[Passage], **arguments: Unpack[RegIndexArguments]
    ) -> RefinedSubgraphRetriever:
        """Build a KG from passages with the core NLP (:func:`.kg.triples_from_parses`;
        provenance: each passage's ``doc_id``); ``arguments``: the constructor's.
        ``from_documents`` cuts documents into passages first (chunk metadata is not kept in
        :attr:`document_metadata`)."""
        index = cls(**arguments)
        if not index._add_texts(passages):
            raise EmptyCorpusError("no triples could be extracted from the documents")
        return index

    def insert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Add text documents (triples extracted by the core NLP); returns the ids of the
        documents added, also those that gave no triple (listed by :meth:`doc_ids` with zero
        triples). Documents already indexed are skipped with a warning; ``options`` (load
        and chunking options) go to :meth:`~BaseIndex.document_passages`."""
        passages = self.document_passages(documents, options)
        fresh = drop_indexed(passages, self.doc_ids())
        self._add_texts(fresh)
        return list(dict.fromkeys(p.doc_id for p in fresh))

    def _add_texts(self, passages: Sequence[Passage]) -> list[str]:
        """Extract and insert the triples of ``passages``; every passage's document is
        recorded (metadata, passage text) even without a triple. Returns the ids of the
        documents that gave triples. The :meth:`merge` of their preparation."""
        prepare = RegPreparer(self.embedder, self.parser, self.show_progress)
        return self._merge([prepare(passages)])

    def preparer(self) -> RegPreparer:
        """The per-passage half of a text build (picklable: what an executor runs)."""
        return RegPreparer(self.embedder, self.parser)

    def merge(self, prepared: Sequence[PreparedTriples]) -> None:
        """Add prepared batches (input order) to the KG: triples by document, in order."""
        self._merge(prepared)

    def _merge(self, prepared: Sequence[PreparedTriples]) -> list[str]:
        triples_of: dict[str, list[Triple]] = {}
        vectors: dict[str, dict[str, Any]] = {}
        for batch in prepared:
            for layer, known in batch.vectors.items():
                vectors.setdefault(layer, {}).update(known)
            for p, triples in zip(batch.passages, batch.triples, strict=True):
                triples_of.setdefault(p.doc_id, []).extend(triples)
                self.document_metadata.setdefault(p.doc_id, source_metadata(p))
                self._passages[p.id] = p
        self._texts_version += 1
        for doc_id, triples in triples_of.items():
            if triples:
                self.store.add_triples(triples, doc_id, self.embedder, vectors)
                self._linker = None
        empty = [d for d, triples in triples_of.items() if not triples]
        if empty:
            logger.warning(
                "%d of %d documents yield no triple (no sentence names two entities); they are "
                "listed by doc_ids() with zero triples and cannot be retrieved",
                len(empty),
                len(triples_of),
            )
        return [d for d, triples in triples_of.items() if triples]

    def insert_triples(self, triples: Iterable[Sequence[str]], doc_id: str) -> int:
        """Add triples under provenance ``doc_id``; returns how many were new to the KG."""
        added = self.store.add_triples(check_triples(triples), doc_id, self.embedder)
        self._linker = None
        return added

    def doc_ids(self) -> list[str]:
        """The ids of the indexed documents (those backing a triple and text documents that
        gave none), sorted."""
        return sorted(self.store.document_ids() | set(self.document_metadata))

    def delete(self, doc_id: str) -> bool:  # type: ignore[override]
        """Remove the document: every triple (and entity) only ``doc_id`` backs, its passages
        and metadata; ``False`` (and a warning) for an unknown id."""
        removed = self.store.remove_document(doc_id)
        known = self.document_metadata.pop(doc_id, None) is not None
        for pid in [pid for pid, p in self._passages.items() if p.doc_id == doc_id]:
            del self._passages[pid]
        self._texts_version += 1
        self._linker = None
        return removed or known or self._unknown_document(doc_id)

    # -- supervision and training --------------------------------------------------------------
    def candidate_pool(self, question: TrainingQuestion) -> CandidatePool:
        """The multi-faceted, merged candidate pool of a training question."""
        return build_pool(self.view, question.topic_entities, question.answers, self.index_params)

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
        selection from the candidate pool, :mod:`.refinement`). ``labels`` also labels
        further questions the same way (what :meth:`train` does for validation questions)."""
        return label_questions(
            self, questions, mode=mode, llm=llm, refinement=refinement, cache_path=cache_path
        )

    def subgraph(self, anchors: Sequence[str], view: KGView | None = None) -> Subgraph:
        """The bounded subgraph around ``anchors`` in ``view`` (default :attr:`view`;
        ``query_params``' hops, degree and triple caps; a truncation is counted in
        :attr:`stats`)."""
        p = self.query_params
        view = self.view if view is None else view
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

    def train(
        self,
        questions: Sequence[TrainingQuestion],
        labels: Mapping[str, Sequence[Triple]],
        *,
        validation: Sequence[TrainingQuestion] = (),
        validation_labels: Mapping[str, Sequence[Triple]] | None = None,
        params: RegTrainParams | None = None,
    ) -> TrainReport:
        """Train the triple scorer on ``labels`` (e.g. :meth:`supervision`'s); the checkpoint
        with the best validation triple recall is kept in :attr:`scorer`.

        Validation questions take ``validation_labels``, else ``labels``; labels from
        :meth:`supervision` that do not cover them label them with the same mode.

        Raises
        ------
        InvalidArgumentError
            Validation questions without labels that cannot be labelled.
        """
        self.scorer, report = train_questions(
            self, questions, labels, validation, validation_labels, params or RegTrainParams()
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
        """``(anchors, subgraph, one score per subgraph triple)`` for ``query`` (the
        subgraph's rows are those of :attr:`view`, or of the query-local view when queries
        read neighbourhoods: see :meth:`evidence_in_view`)."""
        anchors, _, sub, scores = self._score(query, topic_entities)
        return anchors, sub, scores

    def _score(
        self, query: str, topic_entities: Sequence[str] | None, kg: FilteredKG | None = None
    ) -> tuple[list[str], KGView, Subgraph, np.ndarray[Any, np.dtype[np.float32]]]:
        """``(anchors, the view the subgraph indexes, subgraph, scores)`` (``kg``: in the KG
        of a filter's documents, :mod:`~graphrag_integrations.methods.reg.scope`)."""
        query = check_query(query)
        reads = None if kg is not None else self.neighbourhood
        if kg is not None:
            n_triples = kg.view.n_triples
        else:
            n_triples = self.store.n_triples if reads is not None else self.view.n_triples
        if n_triples == 0:
            raise EmptyCorpusError("the index holds no triples")
        if topic_entities:
            anchors = list(topic_entities)
        elif kg is not None:
            anchors = self._link_view(kg.view, kg.table, query)
        else:
            anchors = self.link_entities(query)
        known = (lambda a: a in kg.view.entity_row) if kg is not None else self.has_entity
        missing = [a for a in anchors if not known(a)]
        if missing:
            raise ValueError(f"topic entities not in the KG: {missing}")
        if kg is not None:
            view, sub = kg.view, self.subgraph(anchors, kg.view)
        elif reads is None:
            view, sub = self.view, self.subgraph(anchors)
        else:
            p = self.query_params
            view, sub = reads.subgraph(
                anchors, hops=p.subgraph_hops, max_degree=p.max_degree, max_triples=p.max_triples
            )
            if sub.truncated:
                self.stats["truncated_subgraphs"] += 1
        vec = self.embedder.embed([BRACKET.sub(r"\1", query)])[0]
        feats = features(view, sub, vec, self.index_params)
        return anchors, view, sub, self._scores(feats)

    def retrieve_triples(
        self, query: str, *, topic_entities: Sequence[str] | None = None, k: int | None = None
    ) -> list[ScoredTriple]:
        """The top-``k`` triples (``None``: ``RegQueryParams.K``), best first."""
        _, view, sub, scores = self._score(query, topic_entities)
        return top_triples(view, sub, scores, k or self.query_params.K)

    def evidence_chains(
        self, query: str, *, topic_entities: Sequence[str] | None = None, K: int | None = None
    ) -> tuple[list[EvidenceChain], list[ScoredTriple], list[str]]:
        """``(chains best first, top-K triples, anchors)`` (``K`` ``None``:
        ``query_params.K``)."""
        chains, top, anchors, _ = self.evidence_in_view(query, topic_entities=topic_entities, K=K)
        return chains, top, anchors

    def evidence_in_view(
        self,
        query: str,
        *,
        topic_entities: Sequence[str] | None = None,
        K: int | None = None,
        kg: FilteredKG | None = None,
    ) -> tuple[list[EvidenceChain], list[ScoredTriple], list[str], KGView]:
        """:meth:`evidence_chains` and the view the chains' rows index (render them with it):
        :attr:`view`, the query-local view when queries read neighbourhoods, or ``kg``'s."""
        anchors, view, sub, scores = self._score(query, topic_entities, kg)
        top = top_triples(view, sub, scores, K or self.query_params.K)
        rows = view.triple_rows(t.triple for t in top)
        chains = reorganise(
            view,
            rows,
            [t.score for t in top],
            [view.entity_row[a] for a in anchors],
            self.query_params,
        )
        return chains, top, anchors, view

    def _retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """One passage per evidence chain (``h -> [r] -> t -> ...``), best first; when there
        are fewer than ``k`` chains, the best top-K triples that no chain holds follow, one
        passage each (``metadata["chained"]`` is ``False``)."""
        k = check_k(k, self.default_k)
        chains, top, anchors, view = self.evidence_in_view(query)
        return chain_passages(self, query, k, chains, top, anchors, view)

    def _retrieve_filtered(
        self, query: str, k: int, where: MetadataFilter
    ) -> list[RetrievedPassage]:
        """:meth:`_retrieve` on the KG of the documents ``where`` allows
        (:mod:`~graphrag_integrations.methods.reg.scope`); ``[]`` when they hold no
        triple."""
        kg = self._filtered.get(self, self._texts_version, where)
        if kg.view.n_triples == 0:
            check_query(query)
            return []
        chains, top, anchors, view = self.evidence_in_view(query, kg=kg)
        return chain_passages(self, query, k, chains, top, anchors, view, kg)

    # -- persistence -------------------------------------------------------------------------
    def manifest(self) -> Manifest:
        reads = self.neighbourhood
        entities = len(self.view.entities if reads is None else reads.names().names)
        return Manifest(
            method=self.method,
            parameters={
                "index": self.index_params.to_kwargs(),
                "query": self.query_params.to_kwargs(),
                "entities": entities,
                "triples": self.store.n_triples,
                "trained": self.scorer is not None,
            },
            models={"embedding": self.embedder.model_name},
            embedding_dimension=self.embedder.dimension,
        )

    def _write_files(self, directory: Path) -> None:
        """``graph.json``, ``vectors/``, the document metadata, the text passages and (if
        trained) the scorer."""
        self.store.persist(directory)
        if self.scorer is not None:
            atomic_write_bytes(directory / SCORER_FILE, self.scorer.to_bytes())
            atomic_write_bytes(directory / SCORER_CONFIG, json.dumps(self.scorer.config()).encode())
        atomic_write_bytes(
            directory / DOCUMENTS_FILE,
            json.dumps(self.document_metadata, sort_keys=True, default=str).encode(),
        )
        if self._passages:
            write_passages(directory, self._passages.values())

    @classmethod
    def _from_manifest(
        cls, src: Path, manifest: Manifest, options: dict[str, Any]
    ) -> RefinedSubgraphRetriever:
        """Parameters come from the manifest unless given; ``graph_store`` says where the
        graph is now (``None``: where the index says)."""
        graph_store = options.pop("graph_store", None)
        if options.get("preset") is None:
            options.pop("preset", None)
            index_params, query_params = manifest_params(manifest.parameters)
            options.setdefault("index_params", index_params)
            options.setdefault("query_params", query_params)
        index = cls(**options)
        # opened by _read_files: None = where the index says (IndexStore.load)
        index.graph_backend = None if graph_store is None else resolve_graph_backend(graph_store)
        return index

    def _read_files(self, src: Path, manifest: Manifest) -> None:
        self.store = RegStore.load(
            src,
            model_name=self.embedder.model_name,
            dimension=int(manifest.embedding_dimension or 0),
            graph=self.graph_backend,
        )
        documents = src / DOCUMENTS_FILE
        if documents.is_file():
            self.document_metadata = json.loads(documents.read_text(encoding="utf-8"))
        if (src / PASSAGES_NAME).is_file():
            self._passages = {p.id: p for p in read_passages(src)}
        if manifest.parameters["trained"]:
            config = json.loads((src / SCORER_CONFIG).read_text(encoding="utf-8"))
            self.scorer = TripleScorer.from_bytes((src / SCORER_FILE).read_bytes(), **config)

    def _check_loaded(self, src: Path, manifest: Manifest) -> None:
        # n_triples: one count on a database graph (no whole-graph view at load)
        if self.store.n_triples != manifest.parameters["triples"]:
            raise IndexMismatchError(f"{src}: triple count disagrees with the manifest")


#: Short alias (phase-1 name).
RegIndex = RefinedSubgraphRetriever
