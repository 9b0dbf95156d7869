"""KG-Translator parameters on :class:`~graphrag_integrations.core.params.Params`.

:class:`KGTIndexParams` (what builds the ParseKG), :class:`KGTQueryParams` (what a query does,
with the paper's per-dataset presets of appendix F.2; ``paper`` is ``paper-hotpotqa``) and
:class:`KGTTrainParams` (the ``train`` command); ``IndexParams`` / ``QueryParams`` /
``TrainParams`` are their former names. Each field names its paper symbol
(``docs/reference/symbols.md``).

Examples
--------
>>> KGTQueryParams().alpha, KGTQueryParams().beta
(3, 3)
>>> KGTQueryParams.paper("musique").beta, KGTQueryParams.paper("musique").top_up
(5, False)
>>> KGTQueryParams.from_options({"preset": "paper-2wiki", "k": "3"}).beta
1
>>> KGTIndexParams().max_relation_tokens, KGTIndexParams().passage_vectors
(16, 'lazy')
>>> KGTQueryParams().translator_dtype, KGTQueryParams.paper("musique").translator_dtype
('auto-fast', 'auto')
>>> KGTQueryParams().fusion, KGTQueryParams.paper("musique").fusion
('rrf', 'none')
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

from graphrag_integrations.core.params import Params, param

__all__ = [
    "CLUE_PROMPT",
    "DECOMPOSITION_PROMPT",
    "PAPER_EXCLUDED_HEAD_LABELS",
    "PRESETS",
    "IndexParams",
    "KGTIndexParams",
    "KGTQueryParams",
    "KGTTrainParams",
    "QueryParams",
    "TrainParams",
]

#: Entity types that can never be head (entry) entities (paper appendix F.2).
PAPER_EXCLUDED_HEAD_LABELS: frozenset[str] = frozenset(
    {"DATE", "QUANTITY", "PERCENT", "TIME", "LANGUAGE", "MONEY", "ORDINAL", "NORP", "CARDINAL"}
)
#: The clue translation prompt of appendix M (prompt 1), verbatim (its double comma included).
CLUE_PROMPT = (
    "Given a query, your task is to provide evidence in a pair format to help answer the "
    "query. A pair consists of an entity and a relation,, which are connected by \u201c@@\u201d "
    "and follows the format of \u201cENTITY@@RELATION\u201d."
)

#: The question decomposition prompt of appendix M (prompt 3), verbatim.
DECOMPOSITION_PROMPT = (
    "Given a question and its evidence, your task is to generate next search query different "
    "from the used queries to obtain additional evidence. First conduct step-by-step thinking, "
    "then start with \u201cSo the next search query is\u201d and generate a concise search query "
    "that can supplement this missing content.\n"
    "1. If the evidence is insufficient to answer the question: Identify the missing "
    "information based on the key information extracted, and generate a concise search query "
    "that can supplement this missing content.\n"
    "2. If the evidence is sufficient to fully answer the question: Clearly state the final "
    "answer to the original question in the thinking process, and generate \u201cNone\u201d as "
    "the next search query."
)

ReverseMode = Literal["fallback", "always", "never"]
PassageVectors = Literal["build", "lazy"]


@dataclass(frozen=True)
class KGTIndexParams(Params):
    """How the ParseKG is built (paper §3.2, appendix F.2).

    ``passage_vectors``: ``"lazy"`` (default; the paper's build embeds nothing) parses only,
    and passages are embedded when first traced (Algorithm 1 ranks ``emb(P^)`` at query time;
    the product top-up embeds the whole corpus on its first use, once, then persisted);
    ``"build"`` embeds every passage while parsing. Every query preset is also a preset
    here, of the defaults (the paper's settings differ at query time only).
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}  # set below, one per query preset

    excluded_head_labels: frozenset[str] = param(
        PAPER_EXCLUDED_HEAD_LABELS,
        symbol="F.2 type filter",
        doc="entity types that cannot be entry (head) entities",
    )
    mask: str = param("##", symbol="##", doc="entity placeholder in hyperrelations")
    max_relation_tokens: int = param(
        16, symbol="max |r^|", doc="longest relation span in LM tokens (F.2: 16)", ge=1
    )
    spacy_model: str | None = param(
        None, doc="spaCy pipeline (none: offline en_core_web_sm; paper: en_core_web_trf)"
    )
    n_process: int = param(1, doc="spaCy worker processes", ge=1)
    batch_size: int = param(64, doc="spaCy batch size", ge=1)
    passage_vectors: Literal["build", "lazy"] = param(
        "lazy", symbol="emb(P)", doc="embed passages when first traced (lazy) or at build"
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.mask:
            raise ValueError("mask must be a non-empty string")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for the manifest)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["excluded_head_labels"] = sorted(self.excluded_head_labels)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KGTIndexParams:
        """Inverse of :meth:`to_dict` (unknown keys are refused)."""
        return cls.from_options(data)


#: The paper's per-dataset query settings (F.2 beam sizes, no top-up); ``paper`` is HotpotQA's.
#: Besides the beams, each paper preset switches the product defaults off: the traced ranking
#: alone (no fusion, no top-up), full beam search, the exact precision (``"auto"``).
_PAPER_MODE: dict[str, Any] = {
    "top_up": False,
    "fusion": "none",
    "fusion_k": 60.0,
    "fusion_weight": 1.0,
    "early_stopping": False,
    "translator_dtype": "auto",
}
PAPER_PRESETS: dict[str, dict[str, Any]] = {
    "paper": {"alpha": 3, "beta": 3, **_PAPER_MODE},
    "paper-hotpotqa": {"alpha": 3, "beta": 3, **_PAPER_MODE},
    "paper-2wiki": {"alpha": 3, "beta": 1, **_PAPER_MODE},
    "paper-musique": {"alpha": 3, "beta": 5, **_PAPER_MODE},
    "paper-popqa": {"alpha": 3, "beta": 5, **_PAPER_MODE},
}


@dataclass(frozen=True)
class KGTQueryParams(Params):
    """What one query does (paper §3.3-3.4, Algorithms 1-2, appendix F.2).

    Presets: ``default`` and ``paper-hotpotqa`` / ``paper-2wiki`` / ``paper-musique`` /
    ``paper-popqa`` ((alpha, beta) = (3, 3), (3, 1), (3, 5), (3, 5); no top-up); ``paper`` is
    ``paper-hotpotqa``. ``k`` is the number of passages returned when ``retrieve`` gets no
    ``k`` (the paper's top-k).
    ``fusion="rrf"`` is a product quality knob, not in the paper: the traced ranking (weight
    ``fusion_weight``) and the dense ranking of the corpus (top ``fusion_depth``) are fused by
    reciprocal rank, ``sum w / (fusion_k + rank)``; ``top_up`` is then moot (fusion fills k).
    ``translator_dtype`` is the precision of a translator the index loads (``None`` / a
    name / a path; a given ``TransformersLLM`` keeps its own).

    The defaults are the best setting measured on the development sets, not the paper's:
    ``fusion="rrf"`` with ``fusion_k=5``, ``fusion_weight=0.5`` (chosen on MuSiQue-100; above
    dense on each half of MuSiQue-100 and of HotpotQA-100, which it was not tuned on),
    ``early_stopping=True`` and ``translator_dtype="auto-fast"`` (bfloat16 where the CPU
    computes it natively, else SmoothQuant int8: about 1.6 s per query on two AVX2 cores,
    R@5 within a point of float32). ``preset="paper"`` (and the per-dataset paper presets)
    restores the paper's traced ranking, full beam search and the exact precision
    (``"auto"``: bfloat16 where native, else float32), reproducing the paper-mode figures.
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}, **PAPER_PRESETS}

    alpha: int = param(3, symbol="α", doc="translated entities (entity beam size)", ge=1)
    beta: int = param(3, symbol="β", doc="relations per translated entity (beam size)", ge=1)
    k: int = param(5, symbol="k", doc="passages returned when retrieve gets no k (top-k)", ge=1)
    reverse: Literal["fallback", "always", "never"] = param(
        "fallback", symbol="d", doc="reverse translation: Algorithm 2 fallback, always, never"
    )
    add_query_entities: bool = param(
        True, symbol="E_q", doc="query NER entities are translated entities"
    )
    top_up: bool = param(True, doc="dense top-up when fewer than k passages are traced")
    fusion: Literal["none", "rrf"] = param(
        "rrf",
        doc="none: traced ranking (paper); rrf: reciprocal-rank fusion with the dense ranking",
    )
    fusion_k: float = param(5.0, symbol="k_rrf", doc="RRF constant: 1 / (k_rrf + rank)", gt=0)
    fusion_weight: float = param(
        0.5, doc="weight of the traced ranking in RRF (the dense ranking has 1)", ge=0
    )
    fusion_depth: int = param(50, doc="dense ranks fused (RRF)", ge=1)
    max_steps: int = param(1, symbol="steps", doc="translation rounds (multi-step)", ge=1)
    max_entity_tokens: int = param(32, doc="entity decoding limit in tokens", ge=1)
    early_stopping: bool = param(
        True,
        doc="beam search stops once every row has its beams finished (speed; paper: false)",
    )
    graph_view: Literal["auto", "flat", "neighbourhood"] = param(
        "auto",
        doc="graph a query reads: a flat view of the whole ParseKG, or per query only "
        "the neighbourhoods it uses: entities, hyperrelations, passages (auto: neighbourhood "
        "with a database graph backend, e.g. FalkorDB)",
    )
    cache_nodes: int = param(
        4096, doc="records the per-query graph reads cache across queries", ge=1
    )
    translator_dtype: Literal[
        "auto-fast",
        "auto",
        "float32",
        "bfloat16",
        "float16",
        "int8",
        "int8-mixed",
        "int8-smooth",
    ] = param(
        "auto-fast",
        doc="precision of a translator loaded by name or path (auto-fast: bfloat16 where the "
        "CPU computes it natively, else int8-smooth; auto: bfloat16 where native, ~2x faster, "
        "else float32 (exact); int8: dynamic int8 linear layers on "
        "CPU, ~1.8x faster than float32 on AVX2, lossy; int8-mixed: int8 but the MLP "
        "down_proj layers float32, closer to float32; int8-smooth: int8 after SmoothQuant "
        "smoothing of the MLP activations)",
    )

    @classmethod
    def paper(cls, dataset: str = "hotpotqa", **overrides: Any) -> KGTQueryParams:
        """The paper's setting for ``dataset`` (F.2 beam sizes, no top-up).

        (alpha, beta) = (3, 3) HotpotQA, (3, 1) 2WikiMQA, (3, 5) MuSiQue and PopQA.
        """
        return cls.from_options({"preset": f"paper-{_dataset_key(dataset)}", **overrides})

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for explanations and reports)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class KGTTrainParams(Params):
    """Options of ``graphrag-integrations train --method kgt`` (§3.3.3, appendix F.1-F.2)."""

    fold: Literal["all", "a", "b"] = param(
        "all", doc="questions trained on: all, first half (a) or second half (b)"
    )
    window: int = param(10, symbol="window", doc="F.1 relation window in words", ge=1)
    lora: bool = param(True, doc="LoRA adapter (peft); false: full fine-tuning (paper)")
    lora_r: int = param(4, doc="LoRA rank (alpha = 2 r)", ge=1)
    epochs: float = param(3.0, doc="epochs over the F.1 data", gt=0)
    max_steps: int | None = param(None, doc="cap on optimiser steps", ge=1)
    batch_size: int = param(8, doc="examples per step (paper: 64)", ge=1)
    learning_rate: float = param(2e-4, doc="AdamW learning rate (paper, full: 1e-5)", gt=0)
    seed: int = param(0, doc="random seed")
    base_model: str | None = param(None, doc="base LM (none: SmolLM2-135M-Instruct)")
    spacy_model: str | None = param(None, doc="spaCy pipeline for F.1 (none: en_core_web_sm)")


def _dataset_key(dataset: str) -> str:
    key = dataset.lower().replace("-", "").replace("_", "")
    for name in ("hotpotqa", "2wiki", "musique", "popqa"):
        if key.startswith(name):
            return name
    raise ValueError(f"no paper preset for dataset {dataset!r} (hotpotqa, 2wiki, musique, popqa)")


KGTIndexParams.PRESETS = {name: {} for name in KGTQueryParams.PRESETS}

#: Named query settings (product default and the paper's presets), as ``KGTQueryParams``.
PRESETS: dict[str, KGTQueryParams] = {
    name: KGTQueryParams.from_options({"preset": name}) for name in KGTQueryParams.PRESETS
}

#: Former names (kept importable).
IndexParams = KGTIndexParams
QueryParams = KGTQueryParams
TrainParams = KGTTrainParams
