"""KG-Translator parameters: what builds the ParseKG and what a query does.

Frozen dataclasses; each field's ``metadata`` names the paper symbol (``"symbol"``) and says
what it means, so the core's parameter registry (issue 8) can list them. :data:`PRESETS`
holds the paper-faithful settings next to the product defaults.

Examples
--------
>>> QueryParams().alpha, QueryParams().beta
(3, 3)
>>> QueryParams.paper("musique").beta, QueryParams.paper("musique").top_up
(5, False)
>>> IndexParams().max_relation_tokens
16
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

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


def _doc(symbol: str, meaning: str) -> dict[str, str]:
    return {"symbol": symbol, "doc": meaning}


@dataclass(frozen=True)
class IndexParams:
    """How the ParseKG is built (paper §3.2, appendix F.2).

    Attributes
    ----------
    excluded_head_labels : frozenset of str
        spaCy labels that never make a head entity (default: the nine of F.2).
    mask : str
        Placeholder of masked entities in a hyperrelation (``"##"``).
    max_relation_tokens : int
        Longest translated relation span, in LM tokens (F.2: 16).
    spacy_model : str, optional
        spaCy pipeline (``None``: offline ``en_core_web_sm``; the paper uses ``en_core_web_trf``).
    n_process, batch_size : int
        spaCy ``nlp.pipe`` workers and batch size.
    passage_vectors : {"build", "lazy"}
        ``"build"``: embed every passage while parsing (the dense top-up needs the corpus
        vectors); ``"lazy"``: the build only parses, and passages are embedded when first
        traced (Algorithm 1 ranks ``emb(P^)`` at query time) - the whole corpus is embedded
        on the first top-up.
    """

    excluded_head_labels: frozenset[str] = field(
        default=PAPER_EXCLUDED_HEAD_LABELS,
        metadata=_doc("F.2 type filter", "entity types that cannot be entry (head) entities"),
    )
    mask: str = field(default="##", metadata=_doc("##", "entity placeholder in hyperrelations"))
    max_relation_tokens: int = field(
        default=16, metadata=_doc("max |r^|", "longest relation span in LM tokens (F.2: 16)")
    )
    spacy_model: str | None = field(
        default=None, metadata=_doc("NLP model", "spaCy pipeline; paper: en_core_web_trf")
    )
    n_process: int = field(default=1, metadata=_doc("-", "spaCy worker processes"))
    batch_size: int = field(default=64, metadata=_doc("-", "spaCy batch size"))
    passage_vectors: PassageVectors = field(
        default="build", metadata=_doc("emb(P)", "embed passages at build or when first traced")
    )

    def __post_init__(self) -> None:
        if self.passage_vectors not in ("build", "lazy"):
            raise ValueError(
                f"passage_vectors must be 'build' or 'lazy', got {self.passage_vectors!r}"
            )
        if self.max_relation_tokens < 1:
            raise ValueError(f"max_relation_tokens must be >= 1, got {self.max_relation_tokens}")
        if not self.mask:
            raise ValueError("mask must be a non-empty string")
        object.__setattr__(self, "excluded_head_labels", frozenset(self.excluded_head_labels))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for the manifest)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["excluded_head_labels"] = sorted(self.excluded_head_labels)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IndexParams:
        """Inverse of :meth:`to_dict` (unknown keys are refused)."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown index parameters {sorted(unknown)}")
        values = dict(data)
        if "excluded_head_labels" in values:
            values["excluded_head_labels"] = frozenset(values["excluded_head_labels"])
        return cls(**values)


@dataclass(frozen=True)
class QueryParams:
    """What one query does (paper §3.3-3.4, Algorithms 1-2, appendix F.2).

    Attributes
    ----------
    alpha : int
        Translated entities per query (entity beam size).
    beta : int
        Translated relations per translated entity (relation beam size).
    k : int
        Passages returned (paper: top-5, fewer when fewer are traced).
    reverse : {"fallback", "always", "never"}
        Reverse translation: ``"fallback"`` = Algorithm 2 (when forward traces nothing or
        misses a query NER entity), ``"always"``, ``"never"`` (ablation "w/o reverse").
    add_query_entities : bool
        Query NER entities found in the ParseKG are always translated entities (§3.3.2).
    top_up : bool
        Product mode: fewer than ``k`` traced passages are topped up by dense retrieval over
        the corpus (flagged in the explanation). ``False`` reports the paper's variable number
        of passages ("Ctx").
    max_steps : int
        Translation rounds; > 1 needs a decomposition LLM (multi-step mode, prompt 3).
    max_entity_tokens : int
        Generation limit of entity decoding (the trie ends every entity earlier).
    """

    alpha: int = field(default=3, metadata=_doc("alpha", "translated entities"))
    beta: int = field(default=3, metadata=_doc("beta", "relations per translated entity"))
    k: int = field(default=5, metadata=_doc("k", "passages returned (top-k)"))
    reverse: ReverseMode = field(
        default="fallback", metadata=_doc("d", "reverse translation policy (Algorithm 2)")
    )
    add_query_entities: bool = field(
        default=True, metadata=_doc("E_q", "query NER entities are translated entities")
    )
    top_up: bool = field(
        default=True, metadata=_doc("-", "dense top-up when fewer than k passages are traced")
    )
    max_steps: int = field(default=1, metadata=_doc("steps", "translation rounds (multi-step)"))
    max_entity_tokens: int = field(default=32, metadata=_doc("-", "entity decoding limit"))

    def __post_init__(self) -> None:
        for name in ("alpha", "beta", "k", "max_steps", "max_entity_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.reverse not in ("fallback", "always", "never"):
            raise ValueError(
                f"reverse must be 'fallback', 'always' or 'never', got {self.reverse!r}"
            )

    @classmethod
    def paper(cls, dataset: str = "hotpotqa", **overrides: Any) -> QueryParams:
        """The paper's setting for ``dataset`` (F.2 beam sizes, no top-up).

        (alpha, beta) = (3, 3) HotpotQA, (3, 1) 2WikiMQA, (3, 5) MuSiQue and PopQA.
        """
        return replace(PRESETS[f"paper-{_dataset_key(dataset)}"], **overrides)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for explanations and reports)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _dataset_key(dataset: str) -> str:
    key = dataset.lower().replace("-", "").replace("_", "")
    for name in ("hotpotqa", "2wiki", "musique", "popqa"):
        if key.startswith(name):
            return name
    raise ValueError(f"no paper preset for dataset {dataset!r} (hotpotqa, 2wiki, musique, popqa)")


#: Named query settings: product default and the paper's per-dataset beams (F.2).
PRESETS: dict[str, QueryParams] = {
    "default": QueryParams(),
    "paper-hotpotqa": QueryParams(alpha=3, beta=3, top_up=False),
    "paper-2wiki": QueryParams(alpha=3, beta=1, top_up=False),
    "paper-musique": QueryParams(alpha=3, beta=5, top_up=False),
    "paper-popqa": QueryParams(alpha=3, beta=5, top_up=False),
}
