"""Typed options of Clue-RAG: :class:`ClueIndexParams` (index time) and
:class:`ClueQueryParams` (Q-Iter; :data:`QIterParams` is its former name).

``ClueIndex(index_params=..., query_params=...)`` and ``QIter(index, query_params)`` take
them; the model objects (embedder, LLMs, re-ranker, vector-index factory) are not parameters
(see :mod:`graphrag_integrations.methods.clue.registration`). Symbols are those of the
Clue-RAG paper's Table 1 (``docs/reference/symbols.md``). Both classes have the presets ``default``
and ``paper`` (the index's paper preset is its defaults).

Examples
--------
>>> ClueQueryParams.from_options({"D": "2", "preset": "paper"}).path_vector
'encode'
>>> ClueIndexParams(alpha=0.5).alpha
0.5
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from graphrag_integrations.core.params import Params, param
from graphrag_integrations.core.text.nlp import NUMERIC_ENTITY_LABELS

__all__ = [
    "DEFAULT_EXCLUDED_LABELS",
    "PAPER_QITER",
    "ClueIndexParams",
    "ClueQueryParams",
    "QIterParams",
]

#: spaCy labels that get no entity node by default: numeric traversal hubs ("two", "first").
DEFAULT_EXCLUDED_LABELS = NUMERIC_ENTITY_LABELS

#: The ``"paper"`` preset: the values :meth:`QIter.paper` sets (cosine of the encoded joined
#: path, raw cumulative ``φ``, ``R(q, t)`` alone for the chunks, no global ranking).
PAPER_QITER: dict[str, Any] = {
    "renormalize_query": False,
    "lexical_weight": 0.0,
    "path_vector": "encode",
    "path_weight": 0.0,
    "ppr_weight": 0.0,
}


@dataclass(frozen=True)
class ClueIndexParams(Params):
    """Index-time options of :class:`~graphrag_integrations.methods.clue.index.ClueIndex`."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}, "paper": {}}

    alpha: float = param(
        0.0,
        symbol="α",
        doc="token constraint coefficient: share of tokens given to the LLM extractor",
        ge=0.0,
        le=1.0,
    )
    selection_value: Literal["bleu", "cosine"] = param(
        "bleu", doc="chunk value of the chunk-selection knapsack (Algorithm 2)"
    )
    spacy_model: str | None = param(None, doc="spaCy pipeline (none: offline en_core_web_sm)")
    title_prefix: bool = param(True, doc="prefix knowledge units with their chunk title")
    embed_title: bool = param(
        True,
        doc="embed a unit with its title prefix (False: its sentence alone; the unit's text, "
        "read by BM25 and the explanations, keeps the prefix)",
    )
    link_title: bool = param(True, doc="link every unit to its chunk-title entity")
    excluded_labels: frozenset[str] = param(
        frozenset(DEFAULT_EXCLUDED_LABELS), doc="spaCy entity labels that get no entity node"
    )
    chunk_vectors: Literal["encode", "units"] = param(
        "units", doc="chunk vector: sum of its unit vectors, or the encoded chunk text"
    )
    entity_vectors: Literal["encode", "mentions", "single_mentions"] = param(
        "encode",
        doc="entity vector: its encoded name, or the mean of its mentions' token vectors "
        "taken from the units' own encoding (no encoder pass over the names; "
        "single_mentions: only for names mentioned once, the others encoded)",
    )


@dataclass(frozen=True)
class ClueQueryParams(Params):
    """Query-time options of :class:`~graphrag_integrations.methods.clue.qiter.QIter`.

    The ``paper`` preset (:data:`PAPER_QITER`) is :meth:`QIter.paper`. ``N`` is the number of
    chunks returned when ``retrieve`` gets no ``k`` (``k`` of a call or of
    ``as_retriever(k=...)`` wins).
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}, "paper": PAPER_QITER}

    K: int = param(3, symbol="K", doc="top-K entities / anchoring units / units per anchor", ge=1)
    D: int = param(3, symbol="D", doc="maximum search depth", ge=1)
    M: int = param(5, symbol="M", doc="beam size: paths kept per depth", ge=1)
    N: int = param(5, symbol="N", doc="chunks returned when retrieve gets no k", ge=1)
    spreading_activation: bool = param(True, doc="ablation: query entities -> entity nodes")
    knowledge_anchoring: bool = param(True, doc="ablation: entities of the top-K units")
    query_updating: bool = param(True, symbol="φ ← φ − φ(k)", doc="ablation: query updating")
    renormalize_query: bool = param(True, doc="re-normalise φ after each subtraction")
    lexical_weight: float = param(
        0.5, doc="BM25 share of the default fused scorer (no reranker)", ge=0.0, le=1.0
    )
    path_vector: Literal["mean", "encode"] = param(
        "mean", doc="default scorer's path vector: mean of unit vectors or encoded text"
    )
    path_weight: float = param(
        0.5, doc="final chunk score R(q, t) + path_weight * best path score", ge=0.0
    )
    graph_view: Literal["auto", "flat", "neighbourhood"] = param(
        "auto",
        doc="graph a query reads: every row in arrays (flat), or the neighbourhoods it "
        "reaches, read per hop (auto: neighbourhood with a database graph backend, e.g. FalkorDB)",
    )
    cache_nodes: int = param(
        4096, doc="node records the neighbourhood view caches across queries", ge=1
    )
    # -- the global ranking (methods.clue.global_ranking; names of the ppr baseline's params)
    ppr_weight: float = param(
        1.5, doc="weight of the global PageRank ranking fused with Q-Iter's (0: off)", ge=0.0
    )
    ppr_rrf_k: float = param(3.0, doc="reciprocal-rank fusion constant", gt=0.0)
    ppr_depth: int = param(5, doc="chunks of the global ranking that join the fusion", ge=1)
    ppr_keep_margin: float | None = param(
        0.02,
        doc="Q-Iter's first chunk stays first when its score leads Q-Iter's second by at least "
        "this (none: the fusion decides)",
        ge=0.0,
    )
    ppr_damping: float = param(
        0.5, symbol="d", doc="global ranking: probability of following an edge", ge=0, lt=1
    )
    ppr_synonym_threshold: float = param(
        0.8, doc="global ranking: cosine from which two entities get a synonym edge", ge=0, le=1
    )
    ppr_passage_node_weight: float = param(
        0.05, doc="global ranking: weight of the chunks' cosine in the seeds", ge=0.0
    )
    ppr_reached_weight: float = param(
        0.02, doc="global ranking: weight of Q-Iter's reached chunks in the seeds", ge=0.0
    )
    ppr_fact_top_k: int = param(3, doc="global ranking: units (facts) seeding the walk", ge=0)
    ppr_fact_weight: float = param(1.0, doc="global ranking: weight of the fact seeds", ge=0.0)
    ppr_link_weight: float = param(
        1.0, doc="global ranking: weight of the query-entity links", ge=0.0
    )
    ppr_link_k: int = param(1, doc="global ranking: entity nodes a query entity links to", ge=1)
    ppr_link_threshold: float = param(
        0.8, doc="global ranking: smallest cosine of a query-entity link", ge=-1.0, le=1.0
    )
    ppr_linking_top_k: int = param(10, doc="global ranking: entity seeds kept (0: all)", ge=0)
    ppr_specificity: bool = param(
        True, doc="global ranking: divide an entity seed by the chunks it occurs in"
    )
    ppr_passage_seeds: int = param(
        0, doc="global ranking: chunks with a cosine seed (0: all)", ge=0
    )
    ppr_activation_steps: int = param(
        2, doc="global ranking: LinearRAG activation steps from the linked entities", ge=0
    )
    ppr_scope_hops: int = param(
        0,
        doc="global ranking: walk only the chunks within this many chunk steps of the seed "
        "entities and Q-Iter's reached chunks (0: the whole graph; methods.clue.walk_scope)",
        ge=0,
    )
    ppr_activation_threshold: float = param(
        0.5, doc="global ranking: smallest activation score that spreads", ge=0.0, le=1.0
    )


#: Former name of :class:`ClueQueryParams`.
QIterParams = ClueQueryParams
