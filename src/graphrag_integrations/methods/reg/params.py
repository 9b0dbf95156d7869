"""ReG's parameters, one :class:`~graphrag_integrations.core.params.Params` class per stage;
each field names its paper symbol (``docs/reference/symbols.md``; empty: an implementation choice).

Every class has a ``"paper"`` preset with the paper-faithful values where this package deviates
by default (:data:`PAPER`).

Examples
--------
>>> ReorganisationParams.from_options({"preset": "paper"}).strict_direction
True
>>> RetrieverParams.from_options({"top_k": "50"}).top_k
50
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from graphrag_integrations.core.params import Params, param

__all__ = [
    "PAPER",
    "CandidateParams",
    "RefinementParams",
    "RegTrainParams",
    "ReorganisationParams",
    "RetrieverParams",
    "TrainParams",
]


@dataclass(frozen=True)
class CandidateParams(Params):
    """Multi-faceted candidate pool (paper 4.1, appendix E.2)."""

    max_path_length: int = param(3, doc="longest q->a shortest path considered (hops)", ge=1)
    max_paths: int = param(
        2000, doc="cap on raw shortest paths per (topic, answer) pair (counted when hit)", ge=1
    )
    neighbourhood_cap: int = param(
        50, symbol="P_q, P_a", doc="one-hop triples per query / answer entity kept", ge=0
    )
    answer_merging: bool = param(True, symbol="E.2 (I)", doc="keep one representative answer a*")
    relation_merging: bool = param(
        True, symbol="E.2 (II)", doc="merge paths sharing a (directed) relation chain"
    )


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
class RetrieverParams(Params):
    """Triple retriever (DDE + MLP, appendix F; SubgraphRAG)."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}, "paper": {"top_k": 200}}

    dde_rounds: int = param(2, symbol="DDE", doc="forward rounds (head->tail propagation)", ge=0)
    dde_reverse_rounds: int = param(2, symbol="DDE", doc="reverse rounds (tail->head)", ge=0)
    hidden: int = param(256, doc="MLP hidden width", ge=1)
    subgraph_hops: int = param(2, doc="hops of the per-question subgraph around the anchors", ge=1)
    max_degree: int = param(
        200, doc="an entity with more triples is a hub: reached, never expanded through", ge=1
    )
    max_triples: int = param(5000, doc="cap on triples per question subgraph", ge=1)
    top_k: int = param(100, symbol="K", doc="triples kept for reorganisation (paper: 200)", ge=1)


@dataclass(frozen=True)
class TrainParams(Params):
    """Retriever training (eq. 29, appendix F)."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}, "paper": {"epochs": 80}}

    epochs: int = param(20, doc="epochs (paper: 80)", ge=1)
    lr: float = param(1e-3, doc="Adam learning rate", gt=0)
    recall_k: int = param(100, doc="validation triple recall@k for checkpoint selection", ge=1)
    seed: int = param(42, doc="torch seed")


@dataclass(frozen=True)
class ReorganisationParams(Params):
    """Structure-aware re-organisation (paper 4.2, appendix E.4)."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "default": {},
        "paper": {"strict_direction": True, "keep_prefixes": True, "length_from_hops": False},
    }

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
class RegTrainParams(TrainParams):
    """Options of ``train --method reg`` (the :class:`TrainParams` plus data and labels)."""

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
    "refinement": RefinementParams.from_options({"preset": "paper"}),
    "retriever": RetrieverParams.from_options({"preset": "paper"}),
    "train": TrainParams.from_options({"preset": "paper"}),
    "reorganisation": ReorganisationParams.from_options({"preset": "paper"}),
}
