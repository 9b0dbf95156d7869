"""Typed options of the personalized-PageRank baseline (:class:`PPRIndexParams`,
:class:`PPRQueryParams`).

The mechanism is HippoRAG 2's (arXiv 2502.14802) without an LLM; the names and the
``"paper"`` presets carry its constants: damping ``0.5``, passage node weight ``0.05``,
synonym edges at cosine ``0.8`` between entities of more than two letters or digits, the top
``5`` facts and the top ``5`` linked phrases as seeds, each phrase weighted by its fact score
divided by the number of passages it occurs in. Without OpenIE triples a *fact* is a sentence
of a passage (its spaCy entities are the fact's phrases). The ``"linearrag"`` query preset is
LinearRAG's (arXiv 2510.10114) entity activation: each query entity linked to its nearest
entity node, activation spread through the query's most similar sentence of each active
entity for ``2`` more steps while the score stays above ``0.5``, no phrase cut.

The ``"default"`` query preset is the setting chosen on the three development sets
(MuSiQue-100, HotpotQA-100, 2Wiki-dev-100) by ``benchmarks/bench_ppr.py``: the top 3 facts,
query entities linked at cosine 0.8 with weight 1 and activated for 2 steps, the top 10
entity seeds, HippoRAG 2's damping, passage node weight and synonym threshold (cross-fitted
figures in ``docs/lab/ppr.md``). The ``"default"`` and ``"paper"`` index presets are the same.

Examples
--------
>>> PPRQueryParams.preset("paper").passage_node_weight
0.05
>>> PPRIndexParams().synonym_threshold
0.8
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from graphrag_integrations.core.params import Params, param
from graphrag_integrations.core.text.nlp import NUMERIC_ENTITY_LABELS

__all__ = ["LINEARRAG_QUERY", "PAPER_QUERY", "PPRIndexParams", "PPRQueryParams"]

#: HippoRAG 2's query-time constants (facts as seeds, no query-entity linking).
PAPER_QUERY: dict[str, Any] = {
    "damping": 0.5,
    "passage_node_weight": 0.05,
    "fact_top_k": 5,
    "linking_top_k": 5,
    "fact_weight": 1.0,
    "link_weight": 0.0,
    "specificity": True,
    "passage_seeds": 0,
    "activation_steps": 0,
}

#: LinearRAG's entity activation (query entities -> nearest entity node -> sentences).
LINEARRAG_QUERY: dict[str, Any] = {
    "damping": 0.5,
    "passage_node_weight": 0.05,
    "fact_weight": 0.0,
    "link_weight": 1.0,
    "link_k": 1,
    "link_threshold": 0.0,
    "linking_top_k": 0,
    "specificity": False,
    "passage_seeds": 0,
    "activation_steps": 2,
    "activation_threshold": 0.5,
}


@dataclass(frozen=True)
class PPRIndexParams(Params):
    """Index-time options of :class:`~graphrag_integrations.baselines.ppr.PPRRetriever`."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}, "paper": {}}

    spacy_model: str | None = param(None, doc="spaCy pipeline (none: offline en_core_web_sm)")
    excluded_labels: frozenset[str] = param(
        frozenset(NUMERIC_ENTITY_LABELS), doc="spaCy entity labels that get no entity node"
    )
    link_title: bool = param(True, doc="the passage title is an entity of the passage")
    title_prefix: bool = param(True, doc="embed each sentence (fact) as 'title: sentence'")
    synonym_threshold: float = param(
        0.8, doc="cosine from which two entity nodes get a synonym edge", ge=0.0, le=1.0
    )
    synonym_min_chars: int = param(
        3, doc="entities with fewer letters or digits get no synonym edge", ge=0
    )


@dataclass(frozen=True)
class PPRQueryParams(Params):
    """Query-time options of :class:`~graphrag_integrations.baselines.ppr.PPRRetriever`.

    Entity seeds: ``fact_weight`` times the min-max normalised score of the top
    ``fact_top_k`` sentences (each of their entities gets the mean score of the facts it is
    in) plus ``link_weight`` times the cosine of each query entity to its ``link_k`` nearest
    entity nodes (at least ``link_threshold``; activation adds to it); the top
    ``linking_top_k`` entities are kept (``0``: all), each divided by the number of passages
    it occurs in when ``specificity`` is on. Passage seeds: the min-max normalised dense
    score of each passage (of the top ``passage_seeds`` only, ``0``: all) times
    ``passage_node_weight``. A query without entity seeds is ranked by the dense score.
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "default": {},
        "paper": PAPER_QUERY,
        "linearrag": LINEARRAG_QUERY,
    }

    damping: float = param(0.5, symbol="d", doc="probability of following an edge", ge=0, lt=1)
    passage_node_weight: float = param(
        0.05, doc="weight of the dense passage scores in the seeds", ge=0.0
    )
    fact_top_k: int = param(3, doc="sentences (facts) whose entities seed the walk", ge=0)
    fact_weight: float = param(1.0, doc="weight of the fact seeds", ge=0.0)
    link_weight: float = param(1.0, doc="weight of the query-entity links", ge=0.0)
    link_k: int = param(1, doc="entity nodes each query entity links to", ge=1)
    link_threshold: float = param(
        0.8, doc="smallest cosine of a query-entity link", ge=-1.0, le=1.0
    )
    linking_top_k: int = param(10, doc="entity seeds kept (0: all)", ge=0)
    specificity: bool = param(True, doc="divide an entity seed by the passages it occurs in")
    passage_seeds: int = param(0, doc="passages with a dense seed (0: all)", ge=0)
    activation_steps: int = param(
        2, doc="LinearRAG entity-activation steps from the linked entities", ge=0
    )
    activation_threshold: float = param(
        0.5, doc="smallest activation score that spreads", ge=0.0, le=1.0
    )
    k: int = param(5, doc="passages returned when retrieve gets no k", ge=1)
