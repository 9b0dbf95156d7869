"""ReG's parameters, one frozen dataclass per stage; each field's ``metadata`` names the paper
symbol (``""`` for an implementation choice) and what it means.

``PAPER`` holds the paper-faithful values where this package deviates by default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


def _m(symbol: str, doc: str) -> dict[str, str]:
    return {"symbol": symbol, "doc": doc}


@dataclass(frozen=True)
class CandidateParams:
    """Multi-faceted candidate pool (paper 4.1, appendix E.2)."""

    max_path_length: int = field(
        default=3, metadata=_m("", "longest q->a shortest path considered (hops)")
    )
    max_paths: int = field(
        default=2000,
        metadata=_m("", "cap on raw shortest paths per (topic, answer) pair (counted when hit)"),
    )
    neighbourhood_cap: int = field(
        default=50, metadata=_m("", "one-hop triples per query / answer entity kept in P_q / P_a")
    )
    answer_merging: bool = field(
        default=True, metadata=_m("E.2 (I)", "keep one representative answer a*")
    )
    relation_merging: bool = field(
        default=True, metadata=_m("E.2 (II)", "merge paths sharing a (directed) relation chain")
    )


@dataclass(frozen=True)
class RefinementParams:
    """LLM-guided candidate refinement (paper 4.1, appendix G)."""

    mode: Literal["choice", "generate"] = field(
        default="choice",
        metadata=_m(
            "",
            "'choice': score every 'ans: Path i' continuation by log-probability (small local "
            "models); 'generate': free-text reply parsed for 'ans: Path i' lines (paper)",
        ),
    )
    choice_ratio: float = field(
        default=0.5,
        metadata=_m("", "choice mode: keep options with probability >= ratio * the best one's"),
    )
    require_answer_path: bool = field(
        default=True,
        metadata=_m("", "add the best q->a candidate when the LLM kept none (logged, counted)"),
    )
    ground_to_all_answers: bool = field(
        default=True,
        metadata=_m("", "label the kept relation chains' paths to every answer, not only a*"),
    )
    max_tokens: int = field(default=256, metadata=_m("", "generate mode: completion limit"))


@dataclass(frozen=True)
class RetrieverParams:
    """Triple retriever (DDE + MLP, appendix F; SubgraphRAG)."""

    dde_rounds: int = field(
        default=2, metadata=_m("DDE", "forward rounds (head->tail mean propagation)")
    )
    dde_reverse_rounds: int = field(default=2, metadata=_m("DDE", "reverse rounds (tail->head)"))
    hidden: int = field(default=256, metadata=_m("", "MLP hidden width"))
    subgraph_hops: int = field(
        default=2, metadata=_m("", "hops of the per-question subgraph around the anchors")
    )
    max_degree: int = field(
        default=200,
        metadata=_m("", "an entity with more triples is a hub: reached, never expanded through"),
    )
    max_triples: int = field(default=5000, metadata=_m("", "cap on triples per question subgraph"))
    top_k: int = field(
        default=100, metadata=_m("K", "triples kept for reorganisation (paper: 200 / 500)")
    )


@dataclass(frozen=True)
class TrainParams:
    """Retriever training (eq. 29, appendix F)."""

    epochs: int = field(default=20, metadata=_m("", "epochs (paper: 80)"))
    lr: float = field(default=1e-3, metadata=_m("", "Adam learning rate"))
    recall_k: int = field(
        default=100, metadata=_m("", "validation triple recall@k for checkpoint selection")
    )
    seed: int = field(default=42, metadata=_m("", "torch seed"))


@dataclass(frozen=True)
class ReorganisationParams:
    """Structure-aware re-organisation (paper 4.2, appendix E.4)."""

    max_length: int = field(default=2, metadata=_m("L", "longest evidence chain (triples)"))
    strict_direction: bool = field(
        default=False,
        metadata=_m(
            "Alg. 1",
            "True: only head->tail chaining, two passes (paper); False: a chain may also step "
            "against an edge (rendered '<- [r] <-'), which MetaQA's 'films starring X' needs",
        ),
    )
    keep_prefixes: bool = field(
        default=False,
        metadata=_m("Alg. 1", "keep chains that prefix a longer kept chain (paper: True)"),
    )
    multi_answer_merging: bool = field(
        default=True, metadata=_m("E.4.2", "merge chains ending in different targets")
    )
    multi_entity_merging: bool = field(
        default=True, metadata=_m("E.4.2", "pair chains of distinct anchors")
    )


#: Paper-faithful settings where the defaults deviate.
PAPER = {
    "refinement": RefinementParams(mode="generate", require_answer_path=False),
    "retriever": RetrieverParams(top_k=200),
    "train": TrainParams(epochs=80),
    "reorganisation": ReorganisationParams(strict_direction=True, keep_prefixes=True),
}
