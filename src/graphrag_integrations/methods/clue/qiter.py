"""Q-Iter (Algorithms 3 and 4): query-driven iterative retrieval over a Clue-Index.

1. Entity anchoring: query entities (from the LLM when given, else spaCy) each link to their
   top-K entity nodes by cosine (spreading activation), united with the entities of the top-K
   units nearest the query (knowledge anchoring).
2. Iterative retrieval, depth 1..D: for every beam state ``(anchor, φ, S)`` take the top-K
   units linked to the anchor and not in ``S`` by cosine with ``φ``; the new path
   ``sort(S ∪ {k})`` is scored against the question; ``φ ← φ − φ(k)`` (query updating,
   cumulative along a path); the top-M paths are kept and the entities of their newest unit
   become the next anchors.
3. Final re-ranking: the chunks behind every unit of every kept path (all depths) are scored
   against the question; the top-N are returned with the paths that led to them.

Deviations from the paper (see ``docs/guide/clue.md``; :meth:`QIter.paper` gives the faithful
variant): the default scorer fuses cosine with BM25 and approximates a path's vector from the
cached unit vectors; ``φ`` is re-normalised after each subtraction; the final chunk score may
add the best supporting path score (``path_weight``); fewer than N chunks reached are topped
up from the scorer over all chunks (logged, flagged in the explanation); the chunk ranking is
fused with a global personalized PageRank over the index's chunks and entities
(``ppr_weight``, :mod:`~graphrag_integrations.methods.clue.global_ranking`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from graphrag_integrations.adapters.surface import QueryRetriever
from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix, normalize_rows
from graphrag_integrations.core.encoders.rerank import as_reranker
from graphrag_integrations.core.index.locking import read_locked
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.params import bind_query_params
from graphrag_integrations.core.retrieval.filters import FilterLike, MetadataFilter, parse_filter
from graphrag_integrations.core.retrieval.ranking import top_k as top_k_indices
from graphrag_integrations.core.text.nlp import SpacyNLP, normalize_entity
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.core.validation import check_k, check_query
from graphrag_integrations.methods.clue.explain import describe_path as describe_path
from graphrag_integrations.methods.clue.global_ranking import (
    GlobalRanking,
    fuse,
    keep_leader,
    ranking_graph,
)
from graphrag_integrations.methods.clue.graph import ClueGraph, tokenize
from graphrag_integrations.methods.clue.neighbourhood import (
    NeighbourhoodCache,
    NeighbourhoodView,
    whole_graph_backend,
)
from graphrag_integrations.methods.clue.params import ClueQueryParams
from graphrag_integrations.methods.clue.scope import ScopedView, scoped_view
from graphrag_integrations.methods.clue.scoring import (
    FusedScorer,
    Path,
    PathScorer,
    Query,
    RerankerScorer,
    canonical_order,
)
from graphrag_integrations.methods.clue.store import ENTITY
from graphrag_integrations.methods.clue.top_up import TopUpView, top_up
from graphrag_integrations.methods.clue.view import IntRows, QIterView

logger = logging.getLogger(__name__)

#: Chunks scored per batch by the top-up of the final chunks (:meth:`QIter._fill`).
FILL_BATCH = 4096

ENTITY_PROMPT = (
    "Extract the named entities (people, places, organisations, works, events, dates) "
    "mentioned in the question. Reply with a JSON list of strings only.\n\n"
    "Question: {question}\nEntities:"
)


@dataclass
class _State:
    """One beam entry: the path so far, its query vector and how it was reached."""

    path: Path
    phi: FloatMatrix
    steps: tuple[tuple[int, int], ...]  # (anchor entity row, unit row) per depth
    score: float = 0.0
    depth: int = 0


@dataclass
class Trace:
    """What one retrieval did (returned in explanations and useful for debugging)."""

    query_entities: list[str] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    kept: list[_State] = field(default_factory=list)
    entity_source: str = "spacy"
    #: The global ranking's chunk rows (of the query's view), best first; ``None``: off.
    global_rows: list[int] | None = None
    seed_entities: list[str] = field(default_factory=list)


def _without(rows: IntRows, path: Path) -> IntRows:
    """``rows`` minus the units of ``path`` (in order): ``np.isin`` for a path of at most
    ``D`` units, without its set machinery (this runs once per beam state)."""
    keep = rows != path[0]
    for unit in path[1:]:
        keep &= rows != unit
    return rows[keep]


def _entity_names(value: Any) -> bool:
    """``complete_json`` validator: a JSON list of strings."""
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


class ClueSearchIndex(Protocol):
    """What Q-Iter reads from its index.

    :class:`~graphrag_integrations.methods.clue.index.ClueIndex` implements it; Q-Iter does not
    import the index module, which imports Q-Iter.
    """

    embedder: Embedder
    parser: SpacyNLP
    excluded_labels: frozenset[str]
    store: IndexStore
    #: The longest query processed (``BaseIndex.max_query_chars``).
    max_query_chars: int

    @property
    def graph(self) -> ClueGraph: ...

    def nearest_units(
        self, vector: FloatMatrix, k: int, graph: QIterView | None = None
    ) -> list[int]: ...

    def nearest_entities(
        self, vector: FloatMatrix, k: int, graph: QIterView | None = None
    ) -> list[int]: ...


class QIter(QueryRetriever):
    """The Q-Iter retriever over a :class:`~graphrag_integrations.methods.clue.index.ClueIndex`
    (what ``ClueIndex.as_retriever`` returns).

    Parameters
    ----------
    index : ClueIndex
        The graph to search (any :class:`ClueSearchIndex`).
    query_params : ClueQueryParams or mapping, optional
        Q-Iter's options (``None``: the defaults); their fields below.
    k : int, optional
        Chunks returned when :meth:`retrieve` gets no ``k`` (``None``: ``N``).
    reranker : core Reranker or str, optional
        Scores paths and chunks (a cross-encoder name/path or any ``Reranker``);
        ``None``: :class:`FusedScorer`.
    llm : LLM, LLMClient, LangChain / LlamaIndex model or callable ``str -> str``, optional
        Extracts query entities (whatever ``ClueIndex(llm=...)`` accepts: wrapped in
        ``core.llm.LLMClient`` unless it already has ``complete_json``); ``None``: spaCy NER on
        the question. An unparsable reply falls back to spaCy (logged, counted in
        :attr:`llm_fallbacks`).
    **overrides
        Fields of :class:`~graphrag_integrations.methods.clue.params.ClueQueryParams`
        overriding ``query_params`` (validated; unknown name: ``InvalidParameterError``):
    K : int
        Top-K entity nodes per query entity, top-K anchoring units, top-K units per anchor.
    D : int
        Search depth.
    M : int
        Beam size (paths kept per depth).
    N : int
        Chunks returned when neither the call nor ``k`` says (the paper's N).
    spreading_activation, knowledge_anchoring, query_updating : bool
        Ablation switches of the paper's components.
    renormalize_query : bool
        Re-normalise ``φ`` after each subtraction ``φ ← φ − φ(k)``.
    lexical_weight : float
        BM25 share of the default fused scorer (ignored with ``reranker``).
    path_vector : {"mean", "encode"}
        Default scorer: path vector from cached unit vectors or by encoding the joined text.
    path_weight : float
        Final chunk score ``R(q, t) + path_weight * best score of a path through t``
        (0: the paper's ``R(q, t)``).
    ppr_weight : float
        Weight of the global PageRank ranking fused with Q-Iter's chunk ranking by
        reciprocal rank (0: Q-Iter alone, the paper); the other ``ppr_*`` fields set its
        seeds and walk (:mod:`~graphrag_integrations.methods.clue.global_ranking`).

    Examples
    --------
    With the offline default models (MiniLM, spaCy ``en_core_web_sm``):

    >>> from graphrag_integrations.core.text.documents import SourceDocument
    >>> from graphrag_integrations.methods.clue.index import ClueIndex
    >>> index = ClueIndex.from_documents([
    ...     SourceDocument("Brian Clough managed Nottingham Forest.", "a", {"title": "Clough"}),
    ...     SourceDocument("Brian Clough was born in Middlesbrough.", "b", {"title": "Clough"}),
    ... ])
    >>> qiter = QIter(index, ClueQueryParams(K=2, D=2, M=3), k=2)
    >>> hits = qiter.retrieve("Where was the manager of Nottingham Forest born?")
    >>> sorted(hit.doc_id for hit in hits)
    ['a', 'b']
    >>> hits[0].explanation["paths"][0]["units"][0].startswith("Clough: Brian Clough")
    True
    """

    method = "clue"

    def __init__(
        self,
        index: ClueSearchIndex,
        query_params: ClueQueryParams | Mapping[str, Any] | None = None,
        *,
        k: int | None = None,
        reranker: Any = None,
        llm: Any = None,
        filter: FilterLike = None,
        **overrides: Any,
    ) -> None:
        params = bind_query_params(ClueQueryParams(), query_params, overrides)
        self.query_params: ClueQueryParams = params
        self.k = check_k(k, None) if k is not None else None
        self.filter = parse_filter(filter)
        self.index = index
        self.K, self.D, self.M, self.N = params.K, params.D, params.M, params.N
        self.llm = llm
        self._client: Any = None
        if llm is not None:
            from graphrag_integrations.core.llm import LLMClient

            has_json = callable(getattr(llm, "complete_json", None))
            self._client = llm if has_json else LLMClient(llm)
        self.spreading_activation = params.spreading_activation
        self.knowledge_anchoring = params.knowledge_anchoring
        self.query_updating = params.query_updating
        self.renormalize_query = params.renormalize_query
        self.path_weight = params.path_weight
        self.lexical_weight = params.lexical_weight
        self.path_vector: Literal["mean", "encode"] = params.path_vector
        self.reranker = None if reranker is None else as_reranker(reranker)
        self.graph_view = params.graph_view
        self.cache_nodes = params.cache_nodes
        self._scorer: tuple[QIterView, PathScorer] | None = None
        self._cache: NeighbourhoodCache | None = None
        if not self.reads_neighbourhoods:
            self.scorer_for(index.graph)
        self.llm_fallbacks = 0

    @property
    def default_k(self) -> int:  # type: ignore[override]
        """Chunks returned when :meth:`retrieve` gets no ``k``: :attr:`k`, else ``N``."""
        return self.N if self.k is None else self.k

    def as_retriever(
        self,
        k: int | None = None,
        *,
        query_params: Any = None,
        filter: FilterLike = None,
        **overrides: Any,
    ) -> QIter:
        """Another Q-Iter over the same index: these query params (default: this one's)
        with ``overrides``, ``k`` (default: this one's), the same re-ranker and LLM, and this
        one's filter AND ``filter``."""
        params = bind_query_params(self.query_params, query_params, overrides)
        return QIter(
            self.index,
            params,
            k=self.k if k is None else k,
            reranker=self.reranker,
            llm=self.llm,
            filter=self.query_filter(filter),
        )

    @property
    def scorer(self) -> PathScorer:
        """The scorer bound to the index's current graph view."""
        return self.scorer_for(self.view())

    @property
    def reads_neighbourhoods(self) -> bool:
        """Whether queries read neighbourhoods (``graph_view``; ``"auto"``: with any graph
        backend but the in-process networkx ``GraphStore``) instead of the flat view."""
        if self.graph_view == "auto":
            return not whole_graph_backend(self.index.store)
        return self.graph_view == "neighbourhood"

    def view(self) -> QIterView:
        """The view a query reads: the index's flat :class:`ClueGraph`, or a new
        :class:`~graphrag_integrations.methods.clue.neighbourhood.NeighbourhoodView` over this
        retriever's cache (remade when the index changed)."""
        if not self.reads_neighbourhoods:
            return self.index.graph
        cache = self._cache
        if cache is None or not cache.current or cache.store is not self.index.store:
            cache = self._cache = NeighbourhoodCache(self.index.store, self.cache_nodes)
        return NeighbourhoodView(cache)

    @property
    def cache(self) -> NeighbourhoodCache | None:
        """The neighbourhood cache of the last query (``None``: none yet, or the flat view)."""
        return self._cache

    def scorer_for(self, graph: QIterView) -> PathScorer:
        """The path / chunk scorer over ``graph`` (remade when the index's view changes)."""
        cached = self._scorer
        if cached is not None and cached[0] is graph:
            return cached[1]
        scorer: PathScorer = (
            FusedScorer(
                graph,
                self.index.embedder,
                lexical_weight=self.lexical_weight,
                path_vector=self.path_vector,
            )
            if self.reranker is None
            else RerankerScorer(graph, self.reranker)
        )
        self._scorer = (graph, scorer)
        return scorer

    @classmethod
    def paper(cls, index: ClueSearchIndex, **kwargs: Any) -> QIter:
        """The paper-faithful variant (preset ``"paper"``): cosine of the encoded joined path
        (no BM25), raw cumulative ``φ``, ``R(q, t)`` alone for the chunks and no global
        ranking; ``kwargs`` as
        for the constructor (``k``, ``reranker``, ``llm``, field overrides)."""
        return cls(index, ClueQueryParams.from_options({"preset": "paper"}), **kwargs)

    # -- step 1 ---------------------------------------------------------------------------
    def query_entities(self, question: str) -> tuple[list[str], str]:
        """Normalised query entity names and where they came from (``"llm"``/``"spacy"``)."""
        if self._client is not None:
            names = self._client.complete_json(
                ENTITY_PROMPT.format(question=question), _entity_names
            )
            if names is not None:
                keys = (normalize_entity(n) for n in names if n.strip())
                return list(dict.fromkeys(k for k in keys if k)), "llm"
            self.llm_fallbacks += 1
            logger.warning(
                "LLM query-entity reply unusable (%d so far); using spaCy", self.llm_fallbacks
            )
        excluded = self.index.excluded_labels
        ents = self.index.parser.named_entities(question)
        return list(dict.fromkeys(e.norm for e in ents if e.label not in excluded)), "spacy"

    def anchor(
        self,
        query: Query,
        entity_vectors: FloatMatrix,
        trace: Trace,
        graph: QIterView | None = None,
    ) -> list[int]:
        """Entity anchoring (Algorithm 4): entity rows (of ``graph``, default the index's
        current view) seeding the beam.

        Spreading activation (top-K entity nodes per query-entity vector) and knowledge
        anchoring (the entities of the top-K units nearest the query) are queries of the
        index's entity and unit vector indexes.
        """
        g = graph or self.view()
        anchors: dict[int, None] = {}
        if self.spreading_activation and g.has_entities:
            for vector in entity_vectors:
                anchors.update(dict.fromkeys(self.index.nearest_entities(vector, self.K, g)))
        if self.knowledge_anchoring and g.has_units:
            units = self.index.nearest_units(query.vector, self.K, g)
            g.prefetch_units(units, vectors=False, data=True)
            for u in units:
                anchors.update(dict.fromkeys(g.mentions(u)))
        trace.anchors = [g.entity_name(a) for a in anchors]
        return list(anchors)

    # -- step 2 ---------------------------------------------------------------------------
    def _update(self, phi: FloatMatrix, unit: int, graph: QIterView | None = None) -> FloatMatrix:
        """``φ ← φ − φ(unit)`` (re-normalised with ``renormalize_query``; unchanged without
        ``query_updating``)."""
        return self._updates(phi[None, :], [unit], graph)[0]

    def _updates(
        self, phis: FloatMatrix, units: Sequence[int], graph: QIterView | None = None
    ) -> FloatMatrix:
        """:meth:`_update` of every row of ``phis`` with the unit of the same position, in
        one subtraction and one normalisation (the same values row by row)."""
        if not self.query_updating:
            return phis
        new = phis - (graph or self.view()).unit_vectors(units)
        if self.renormalize_query:
            return normalize_rows(new)
        return new.astype(np.float32, copy=False)

    def search(
        self, query: Query, anchors: Sequence[int], graph: QIterView | None = None
    ) -> list[_State]:
        """Beam search over depths 1..D (on ``graph``, default the index's current view);
        returns every kept state (``C*``).

        Each depth reads what it needs in three batches (a neighbourhood view fetches them
        in a few round trips; the flat view has them): the units of every anchor, their
        vectors, then the data (text, chunk, entities) of the top-K units of each anchor.
        """
        g = graph or self.view()
        scorer = self.scorer_for(g)
        frontier = [(a, _State((), query.vector, ())) for a in anchors]
        kept_all: list[_State] = []
        for depth in range(1, self.D + 1):
            g.prefetch_entities(list(dict.fromkeys(a for a, _ in frontier)))
            seen: set[tuple[int, Path]] = set()
            expanding: list[tuple[int, _State, IntRows]] = []
            for anchor, state in frontier:
                if (anchor, state.path) in seen:
                    continue
                seen.add((anchor, state.path))
                linked = g.linked_units(anchor)
                if state.path:
                    linked = _without(linked, state.path)
                if linked.size:
                    expanding.append((anchor, state, linked))
            reached = list(dict.fromkeys(int(u) for _, _, ls in expanding for u in ls))
            g.prefetch_units(reached, vectors=True, data=False)
            chosen: list[tuple[int, _State, int]] = []
            for anchor, state, linked in expanding:
                # exact cosine over the anchor's few linked units, from the cached vectors: a
                # vector-index query restricted to them would be one filtered (``$in``) round
                # trip per beam state (D * M * K per question), approximate on Chroma's HNSW,
                # and could not rank by the updated query vector any faster than this dot product
                sims = g.unit_vectors(linked) @ state.phi
                chosen += [(anchor, state, int(linked[j])) for j in top_k_indices(sims, self.K)]
            g.prefetch_units(list(dict.fromkeys(u for *_, u in chosen)), vectors=False, data=True)
            candidates: dict[Path, tuple[int, _State, int]] = {}
            for anchor, state, unit in chosen:  # the first way to each new path
                candidates.setdefault(
                    canonical_order(g, (*state.path, unit)), (anchor, state, unit)
                )
            if not candidates:
                break
            picks = list(candidates.values())
            phis = self._updates(np.stack([s.phi for _, s, _ in picks]), [u for *_, u in picks], g)
            states = [
                _State(path, phis[i], (*state.steps, (anchor, unit)), depth=depth)
                for i, (path, (anchor, state, unit)) in enumerate(candidates.items())
            ]
            scores = scorer.score_paths(query, [s.path for s in states])
            best = top_k_indices(scores, self.M)
            kept = []
            for i in best:
                states[i].score = float(scores[i])
                kept.append(states[i])
            kept_all.extend(kept)
            frontier = [(e, s) for s in kept for e in g.mentions(s.steps[-1][1])]
        return kept_all

    # -- step 3 ---------------------------------------------------------------------------
    def retrieve(
        self, query: str, k: int | None = None, *, filter: FilterLike = None
    ) -> list[RetrievedPassage]:
        """Top-``k`` chunks (default: :attr:`default_k`) with the paths that led to each.

        Runs under the index's read lock
        (:func:`~graphrag_integrations.core.index.locking.read_locked`):
        its graph view and vector indexes stay those of one version for the whole query
        while other threads ``insert`` / ``delete``. ``filter`` (AND the retriever's own)
        restricts the whole search to the chunks whose metadata matches
        (:mod:`~graphrag_integrations.methods.clue.scope`).
        """
        index = self.index
        question = check_query(query, index.max_query_chars, owner=type(index).__name__)
        k = check_k(k, self.default_k)
        where = self.query_filter(filter)
        with read_locked(self.index):
            return self._retrieve(question, k, where)

    def _retrieve(
        self, question: str, k: int, where: MetadataFilter | None = None
    ) -> list[RetrievedPassage]:
        g = self.view()  # one snapshot for the whole retrieval
        if where is not None:
            g = scoped_view(self.index.store, g, where)
        if not g.has_passages:
            return []
        trace = Trace()
        names, trace.entity_source = (
            self.query_entities(question) if self.spreading_activation else ([], "none")
        )
        trace.query_entities = names
        vector, entity_vectors = self._embed(question, names)
        q = Query(question, vector, tuple(tokenize(question)))
        anchors = self.anchor(q, entity_vectors, trace, g)
        trace.kept = self.search(q, anchors, g)
        fused = self.query_params.ppr_weight > 0
        ranking = self.chunk_ranking(g, q, trace, k, deep=fused)
        if fused:
            _, final, support = ranking
            reached = {g.passage(r).id: final[r] for r in support}
            self.rank_globally(g, where, vector, entity_vectors, reached, trace)
        return self._final(g, trace, k, ranking)

    def rank_globally(
        self,
        g: QIterView,
        where: MetadataFilter | None,
        vector: FloatMatrix,
        entity_vectors: FloatMatrix,
        reached: Mapping[str, float],
        trace: Trace,
    ) -> None:
        """The global ranking's top ``ppr_depth`` chunks, as rows of ``g``, into ``trace``
        (:mod:`~graphrag_integrations.methods.clue.global_ranking`; nothing when no entity
        got a seed); ``reached``: Q-Iter's score of each chunk it reached, by passage id."""
        params = self.query_params
        flat = self.index.graph  # the flat view of the same version (read once per version)
        ranking = ranking_graph(self.index.store, flat, params.ppr_synonym_threshold)
        scope = g.scope if isinstance(g, ScopedView) else None
        walk = GlobalRanking.of(
            ranking,
            ranking.view(where, scope),
            params,
            vector,
            entity_vectors,
            flat.passage_matrix,
            {flat.passage_row[pid]: score for pid, score in reached.items()},
        )
        if not walk.seeded:
            return
        rows = walk.top(params.ppr_depth)
        base = g.view if isinstance(g, ScopedView) else g
        if isinstance(base, NeighbourhoodView):
            trace.global_rows = base.passage_rows([flat.passage_ids[r] for r in rows])
        else:  # the flat view: its rows
            trace.global_rows = rows
        trace.seed_entities = walk.seed_entities

    def _embed(self, question: str, names: Sequence[str]) -> tuple[FloatMatrix, FloatMatrix]:
        """The question's vector and one per query entity name: the stored vector of an
        entity node with that key (nodes are embedded from their key), else encoded with
        the question in one batch."""
        store = self.index.store
        known = [n for n in names if store.has_vector(ENTITY, n)]
        stored = dict(zip(known, store.embeddings(ENTITY, known), strict=True))
        fresh = [n for n in names if n not in stored]
        vecs = self.index.embedder.embed([question, *fresh])
        encoded = dict(zip(fresh, vecs[1:], strict=True))
        rows = [stored[n] if n in stored else encoded[n] for n in names]
        matrix = np.stack(rows) if rows else np.zeros((0, vecs.shape[1]), dtype=np.float32)
        return vecs[0], matrix.astype(np.float32, copy=False)

    async def aretrieve(
        self, query: str, k: int | None = None, *, filter: FilterLike = None
    ) -> list[RetrievedPassage]:
        """Async :meth:`retrieve` (runs in a worker thread)."""
        return await asyncio.to_thread(self.retrieve, query, k, filter=filter)

    def chunk_ranking(
        self, g: QIterView, q: Query, trace: Trace, k: int, *, deep: bool = False
    ) -> tuple[list[int], dict[int, float], dict[int, list[_State]]]:
        """Q-Iter's final chunk ranking: chunk rows best first (the top ``k``, or with
        ``deep`` every chunk reached), topped up to ``k`` by the scorer; their scores; the
        kept states through each reached chunk."""
        support: dict[int, list[_State]] = {}
        for state in trace.kept:
            for unit in state.path:
                support.setdefault(g.chunk_of(unit), []).append(state)
        rows = list(support)
        g.prefetch_passages(rows)
        scores = self.scorer_for(g).score_passages(q, rows)
        if self.path_weight:
            best = np.array([max(s.score for s in support[r]) for r in rows], dtype=np.float32)
            scores = scores + self.path_weight * best
        order = [rows[i] for i in top_k_indices(scores, len(rows) if deep else k)]
        final = {rows[i]: float(scores[i]) for i in range(len(rows))}
        if len(order) < k:
            order, final = self._fill(g, q, order, final, k)
        return order, final, support

    def _final(
        self,
        g: QIterView,
        trace: Trace,
        k: int,
        ranking: tuple[list[int], dict[int, float], dict[int, list[_State]]],
    ) -> list[RetrievedPassage]:
        order, final, support = ranking
        if trace.global_rows is not None:
            params = self.query_params
            ranked = fuse(order, trace.global_rows, params.ppr_weight, params.ppr_rrf_k, k)
            ranked = keep_leader(ranked, order, final, params.ppr_keep_margin)
            rank = {r: i for i, r in enumerate(trace.global_rows, start=1)}
            g.prefetch_passages([r for r, _ in ranked if r not in final])
            return [
                self._result(g, r, score, support.get(r, []), trace, rank.get(r))
                for r, score in ranked
            ]
        return [self._result(g, r, final[r], support.get(r, []), trace) for r in order[:k]]

    def _fill(
        self, g: QIterView, q: Query, order: list[int], final: dict[int, float], k: int
    ) -> tuple[list[int], dict[int, float]]:
        """Top up with the best-scoring chunks the search did not reach (defined fallback).

        Every other chunk is scored, :data:`FILL_BATCH` at a time in graph order, keeping the
        best so far in that order (equal scores: the earlier chunk first); a neighbourhood
        view over a graph with a term index finds the same chunks from two short candidate
        lists instead (:func:`~graphrag_integrations.methods.clue.top_up.top_up`).
        """
        logger.debug("Q-Iter reached %d chunks < %d; filling from the scorer", len(order), k)
        for row, score in self._best_unreached(g, q, set(final), k - len(order)):
            order.append(row)
            final[row] = score
        return order, final

    def _best_unreached(
        self, g: QIterView, q: Query, reached: set[int], need: int
    ) -> list[tuple[int, float]]:
        """The ``need`` best-scoring chunks not in ``reached``, best first (equal scores:
        graph order): a scan of every chunk, or, over a neighbourhood view with a term
        index, :func:`~graphrag_integrations.methods.clue.top_up.top_up`."""
        scorer = self.scorer_for(g)
        if isinstance(scorer, FusedScorer) and isinstance(g, TopUpView):
            found = top_up(g, scorer, q, reached, need)
            if found is not None:
                return found
        best_rows: list[int] = []
        best_scores: list[float] = []
        for batch in g.unreached_passages(reached, FILL_BATCH):
            scores = scorer.score_passages(q, batch)
            best_rows += batch
            best_scores += [float(x) for x in scores]
            keep = sorted(top_k_indices(np.array(best_scores, dtype=np.float32), need))
            best_rows = [best_rows[i] for i in keep]
            best_scores = [best_scores[i] for i in keep]
        ranked = top_k_indices(np.array(best_scores, dtype=np.float32), need)
        return [(best_rows[i], best_scores[i]) for i in ranked]

    def _result(
        self,
        g: QIterView,
        row: int,
        score: float,
        states: list[_State],
        trace: Trace,
        global_rank: int | None = None,
    ) -> RetrievedPassage:
        # the same units reached through different anchors are one path for the reader
        unique: dict[tuple[tuple[str, int], ...], _State] = {}
        for state in sorted(states, key=lambda s: -s.score):
            unique.setdefault(tuple((g.entity_name(e), u) for e, u in state.steps), state)
        states = list(unique.values())[:3]
        paths = [
            {
                "depth": s.depth,
                "score": s.score,
                "units": [g.unit_text(u) for _, u in s.steps],
                "entities": [g.entity_name(e) for e, _ in s.steps],
            }
            for s in states
        ]
        explanation: dict[str, Any] = {
            "method": self.method,
            "paths": paths,
            "query_entities": trace.query_entities,
            "entity_source": trace.entity_source,
            "anchors": trace.anchors[:20],
        }
        if trace.global_rows is not None:
            explanation["global_rank"] = global_rank
            explanation["seed_entities"] = trace.seed_entities
        if not states:
            explanation["fallback"] = (
                "not reached by the graph search; ranked by the global PageRank"
                if global_rank is not None
                else "not reached by the graph search; filled by score"
            )
        return RetrievedPassage(g.passage(row), score, explanation)
