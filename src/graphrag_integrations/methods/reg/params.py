"""ReG's parameters on :class:`~graphrag_integrations.core.params.Params`; each field names its
paper symbol (``docs/reference/symbols.md``; empty for an implementation choice).

* :class:`RegIndexParams` - what the index is built with: the text-to-triple pipeline, the DDE
  features the triple scorer reads, the candidate pools of training questions;
* :class:`RegQueryParams` - what one query does: ``k`` evidence results returned, the question
  subgraph bound, ``K`` triples kept for the re-organisation, the chain length ``L`` and the
  re-organisation switches;
* :class:`RegTrainParams` - training the triple scorer (``RefinedSubgraphRetriever.train`` and
  ``graphrag-integrations train --method reg``, whose data options are not keyword arguments);
* :class:`RefinementParams` - the LLM-refined supervision (``supervision(refinement=)``).

Each class has the presets ``"default"`` and ``"paper"`` (the paper-faithful values where
this package deviates by default, :data:`PAPER`).

Examples
--------
>>> RegQueryParams.from_options({"preset": "paper"}).strict_direction
True
>>> RegQueryParams.from_options({"K": "50"}).K, RegQueryParams().k
(50, 5)
>>> RegIndexParams().dde_rounds, RegTrainParams.from_options({"preset": "paper"}).epochs
(2, 80)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from graphrag_integrations.core.params import Params, param

__all__ = [
    "PAPER",
    "RefinementParams",
    "RegIndexParams",
    "RegQueryParams",
    "RegTrainParams",
    "manifest_params",
]


@dataclass(frozen=True)
class RegIndexParams(Params):
    """How the index is built: text triples, scorer features, candidate pools (paper 4.1,
    appendices E.2 and F)."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}, "paper": {}}

    spacy_model: str | None = param(
        None, doc="spaCy pipeline turning documents into triples (none: offline en_core_web_sm)"
    )
    dde_rounds: int = param(2, symbol="DDE", doc="forward rounds (head->tail propagation)", ge=0)
    dde_reverse_rounds: int = param(2, symbol="DDE", doc="reverse rounds (tail->head)", ge=0)
    max_path_length: int = param(
        3, doc="training pools: longest q->a shortest path considered (hops)", ge=1
    )
    max_paths: int = param(
        2000,
        doc="training pools: cap on raw shortest paths per (topic, answer) pair (counted)",
        ge=1,
    )
    neighbourhood_cap: int = param(
        50, symbol="P_q, P_a", doc="training pools: one-hop triples per query / answer entity", ge=0
    )
    answer_merging: bool = param(True, symbol="E.2 (I)", doc="keep one representative answer a*")
    relation_merging: bool = param(
        True, symbol="E.2 (II)", doc="merge paths sharing a (directed) relation chain"
    )


@dataclass(frozen=True)
class RegQueryParams(Params):
    """What one query does: subgraph, triple scoring, re-organisation (paper 4.2, appendix
    E.4). ``k`` is the number of evidence results returned; ``K`` the triples kept for the
    re-organisation."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "default": {},
        "paper": {
            "K": 200,
            "strict_direction": True,
            "keep_prefixes": True,
            "length_from_hops": False,
        },
    }

    k: int = param(5, doc="evidence results returned by retrieve (chains, then triples)", ge=1)
    K: int = param(100, symbol="K", doc="top-K triples kept for re-organisation (paper: 200)", ge=1)
    subgraph_hops: int = param(2, doc="hops of the per-question subgraph around the anchors", ge=1)
    max_degree: int = param(
        200, doc="an entity with more triples is a hub: reached, never expanded through", ge=1
    )
    max_triples: int = param(5000, doc="cap on triples per question subgraph", ge=1)
    max_length: int = param(2, symbol="L", doc="longest evidence chain (triples)", ge=1)
    length_from_hops: bool = param(
        True,
        symbol="L",
        doc="KGQA questions with a known hop count h (the harness's MetaQA questions) use "
        "L = max(max_length, h); paper: L = 2 on MetaQA, unbounded on CWQ",
    )
    strict_direction: bool = param(
        False,
        symbol="Alg. 1",
        doc="True: only head->tail chaining, two passes (paper); False: a chain may also step "
        "against an edge (rendered '<- [r] <-'), which MetaQA's 'films starring X' needs",
    )
    keep_prefixes: bool = param(
        False, symbol="Alg. 1", doc="keep chains that prefix a longer kept chain (paper: True)"
    )
    multi_answer_merging: bool = param(
        True, symbol="E.4.2", doc="merge chains ending in different targets"
    )
    multi_entity_merging: bool = param(True, symbol="E.4.2", doc="pair chains of distinct anchors")


@dataclass(frozen=True)
class RefinementParams(Params):
    """LLM-guided candidate refinement (paper 4.1, appendix G)."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "default": {},
        "paper": {"mode": "generate", "require_answer_path": False},
    }

    mode: Literal["choice", "generate"] = param(
        "choice",
        doc="'choice': score every 'ans: Path i' continuation by log-probability (small local "
        "models); 'generate': free-text reply parsed for 'ans: Path i' lines (paper)",
    )
    choice_ratio: float = param(
        0.5, doc="choice mode: keep options with probability >= ratio * the best one's", gt=0, le=1
    )
    choice_max: int = param(
        0,
        doc="choice mode: keep at most this many options, best-scored first (0: no cap); "
        "applied after choice_ratio",
        ge=0,
    )
    choice_options: Literal["all", "answer_paths"] = param(
        "all",
        doc="choice mode: the options a selection may keep: 'all', or only the q->a shortest "
        "paths ('answer_paths': the neighbourhood options are still listed and scored, but "
        "never kept; choice_ratio is then relative to the best-scored q->a path)",
    )
    choice_scoring: Literal["label", "calibrated", "content", "permuted", "batch"] = param(
        "label",
        doc="choice mode: 'label' scores 'ans: Path i' (summed log-prob); 'calibrated' "
        "subtracts each label's log-prob after a content-free prompt (paths, question and "
        "answer replaced by calibration_placeholder; Zhao et al. 2021); 'content' scores "
        "'ans: <rendered path>' by mean per-token log-prob; 'permuted' averages each path's "
        "label log-prob with the paths listed as given and reversed (permutation "
        "de-biasing, Zheng et al. 2024); 'batch' subtracts the mean centred label log-prob "
        "of each option position over the questions labelled together (Batch Calibration, "
        "Zhou et al. 2024; positions counted as batch_position says)",
    )
    batch_position: Literal["end", "start"] = param(
        "end",
        doc="choice_scoring='batch': count option positions from the end of the list (the "
        "last option is position 0) or from its start",
    )
    calibration_placeholder: str = param(
        "N/A", doc="choice_scoring='calibrated': the content-free text of the baseline prompt"
    )
    require_answer_path: bool = param(
        True, doc="add the best q->a candidate when the LLM kept none (logged, counted)"
    )
    answer_path_fallback: Literal["best", "all"] = param(
        "best",
        doc="require_answer_path: add the best-scored q->a candidate ('best') or every q->a "
        "shortest path, i.e. the question's weak labels ('all')",
    )
    ground_to_all_answers: bool = param(
        True, doc="label the kept relation chains' paths to every answer, not only a*"
    )
    max_tokens: int = param(256, doc="generate mode: completion limit", ge=1)


@dataclass(frozen=True)
class RegTrainParams(Params):
    """Training the triple scorer (eq. 29, appendix F). The fields after ``hidden`` are the
    data options of ``graphrag-integrations train --method reg`` (not keyword arguments)."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}, "paper": {"epochs": 80}}

    epochs: int = param(20, doc="epochs (paper: 80)", ge=1)
    lr: float = param(1e-3, doc="Adam learning rate", gt=0)
    recall_k: int = param(100, doc="validation triple recall@k for checkpoint selection", ge=1)
    seed: int = param(42, doc="torch seed")
    hidden: int = param(256, doc="MLP hidden width", ge=1)
    supervision: Literal["weak", "refined", "oracle"] = param(
        "refined",
        doc="training labels: weak shortest paths, LLM-refined, or oracle (qtype)",
        kwarg=False,
    )
    hops: int = param(2, doc="MetaQA hop set (1, 2 or 3)", ge=1, le=3, kwarg=False)
    train: int = param(300, doc="training questions (sample 1)", ge=1, kwarg=False)
    val: int = param(50, doc="validation questions (sample 2)", ge=1, kwarg=False)
    test: int = param(200, doc="held-out test questions (sample 3, not used)", ge=0, kwarg=False)
    sample_seed: int = param(0, doc="seed of the disjoint samples", kwarg=False)
    llm: str = param("", doc="refined: LLM name or path ('' = offline SmolLM2)", kwarg=False)
    refinement: str = param(
        "",
        doc="refined: RefinementParams options as K=V,K=V ('' = the defaults; the committed "
        "3-hop scorer: choice_scoring=permuted,choice_options=answer_paths)",
        kwarg=False,
    )
    index_cache: str = param(
        "", doc="persisted ReG index of kb.txt (loaded if present, else written)", kwarg=False
    )


#: Paper-faithful settings where the defaults deviate (each class's ``"paper"`` preset).
PAPER = {
    "index": RegIndexParams.from_options({"preset": "paper"}),
    "query": RegQueryParams.from_options({"preset": "paper"}),
    "train": RegTrainParams.from_options({"preset": "paper"}),
    "refinement": RefinementParams.from_options({"preset": "paper"}),
}


def manifest_params(params: Mapping[str, Any]) -> tuple[RegIndexParams, RegQueryParams]:
    """The parameters recorded in a manifest; indexes written before the parameter classes
    were flattened hold ``retriever`` / ``reorganisation`` / ``candidates`` / ``k``."""
    if "index" in params:
        return RegIndexParams(**params["index"]), RegQueryParams(**params["query"])
    retriever = {key: v for key, v in params["retriever"].items() if key != "hidden"}
    retriever["K"] = retriever.pop("top_k")
    index_names = {s.name for s in RegIndexParams.specs()}
    flat = {**retriever, **params["reorganisation"], **params["candidates"], "k": params["k"]}
    return (
        RegIndexParams(**{key: v for key, v in flat.items() if key in index_names}),
        RegQueryParams(**{key: v for key, v in flat.items() if key not in index_names}),
    )
