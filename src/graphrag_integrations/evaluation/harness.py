"""The evaluation harness: build every method over one corpus, query, score, time.

All methods of one :func:`run_eval` call share the dataset's passages, its questions and ONE
embedder instance. The embedder is warmed up (model loaded, one query embedded) before any
timing, so ``index_s`` measures indexing, not model loading. Per method:

* ``index_s`` — wall time of the builder; ``passages_per_s`` — passages / ``index_s``.
  Each method is built from scratch, even where it could reuse another's work (``hybrid``
  embeds the chunks again after ``dense``), so its time is what a user pays for it alone;
* ``R@k`` — :func:`~graphrag_integrations.evaluation.metrics.mean_recall_at_k` (percent) for
  every requested ``k`` (each question is retrieved once, at the largest ``k``);
* ``latency_p50_ms`` / ``latency_p95_ms`` — wall time of each ``retrieve`` call;
* KGQA hooks (questions with gold answers; see ``docs/reference/metrics.md``): a triple retriever
  implementing :class:`EvidenceRanker` gets ``AnsR@50`` and ``AnsR@100`` (share of gold
  answers among the entities of its top-50 / top-100 triples), ``Hit@1`` (its best evidence
  chain ends at a gold answer), ``chains``, ``tokens`` and ``flat_tokens`` (mean evidence
  chains and estimated tokens per question, chains vs the flat top-100 triple list); a
  retriever implementing only :class:`AnswerRanker` gets ``AnsR@50``, ``AnsR@100`` (share of
  gold answers among its first 50 / 100 ranked answers) and ``Hit@1``.

A builder receives exactly the dataset inputs its registration declares
(:attr:`~graphrag_integrations.core.registry.MethodRegistration.inputs`: ``passages``,
``triples`` of a knowledge-graph dataset, ``questions``); a method whose input the dataset
lacks is refused before anything is built.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from graphrag_integrations.core.encoders.embeddings import Embedder, as_embedder
from graphrag_integrations.core.registry import MethodRegistration
from graphrag_integrations.core.types import Retriever
from graphrag_integrations.evaluation.datasets import Dataset, Question
from graphrag_integrations.evaluation.metrics import (
    KGQAEvidence,
    RecallSummary,
    answer_recall_at_k,
    hit_at_1,
    kgqa_evidence_metrics,
    latency_percentiles,
    mean_percent,
    mean_recall_at_k,
)
from graphrag_integrations.evaluation.registry import get_registration

logger = logging.getLogger(__name__)

#: Depths of the KGQA answer-recall hook.
ANSWER_KS: tuple[int, ...] = (50, 100)


@runtime_checkable
class AnswerRanker(Protocol):
    """Retrievers answering with ranked entities (KGQA methods) implement this too."""

    def rank_answers(self, question: Question, k: int) -> list[str]:
        """Up to ``k`` answer strings, best first."""
        ...


@runtime_checkable
class EvidenceRanker(Protocol):
    """KGQA triple retrievers implement this: the top-``k`` triples and evidence chains of a
    question (:class:`~graphrag_integrations.evaluation.metrics.KGQAEvidence`)."""

    def kgqa_evidence(self, question: Question, k: int) -> KGQAEvidence:
        """Evidence for ``question`` holding its top ``k`` triples."""
        ...


@dataclass
class MethodResult:
    """Scores and timings of one method.

    Attributes
    ----------
    method : str
        Registry name.
    recall : dict of int to RecallSummary
        ``R@k`` per requested ``k``.
    latencies_s : list of float
        Wall time of each ``retrieve`` call.
    index_s : float
        Wall time of the builder.
    passages : int
        Corpus size the method indexed.
    answer_metrics : dict of str to float
        KGQA hook metrics (empty for passage retrievers).
    """

    method: str
    recall: dict[int, RecallSummary]
    latencies_s: list[float]
    index_s: float
    passages: int
    answer_metrics: dict[str, float] = field(default_factory=dict)

    @property
    def passages_per_s(self) -> float:
        """Indexing throughput."""
        return self.passages / self.index_s if self.index_s > 0 else float("inf")

    def to_json(self) -> dict[str, float | None]:
        """The method's JSON row (percentages 0-100; ``None`` where undefined)."""
        row: dict[str, float | None] = {
            f"R@{k}": _finite(round(s.value, 2)) for k, s in sorted(self.recall.items())
        }
        row.update(latency_percentiles(self.latencies_s))
        row["index_s"] = round(self.index_s, 3)
        row["passages_per_s"] = _finite(round(self.passages_per_s, 1))
        row.update({name: _finite(round(v, 2)) for name, v in self.answer_metrics.items()})
        return row


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


@dataclass
class EvalReport:
    """Everything one evaluation run produced.

    Examples
    --------
    >>> EvalReport("toy", 3, 1, (2, 5)).to_json()
    {'dataset': 'toy', 'passages': 3, 'questions': 1, 'results': {}}
    """

    dataset: str
    passages: int
    questions: int
    ks: tuple[int, ...]
    results: dict[str, MethodResult] = field(default_factory=dict)
    excluded_questions: int = 0

    def to_json(self) -> dict[str, Any]:
        """``{"dataset", "passages", "questions", "results": {METHOD: {...}}}``."""
        return {
            "dataset": self.dataset,
            "passages": self.passages,
            "questions": self.questions,
            "results": {name: r.to_json() for name, r in self.results.items()},
        }


def _progress(items: Sequence[Any], desc: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, disable=not enabled, leave=False)


def evaluate_retriever(
    name: str,
    retriever: Retriever,
    dataset: Dataset,
    *,
    ks: Sequence[int] = (2, 5),
    index_s: float = 0.0,
    show_progress: bool = False,
) -> MethodResult:
    """Query ``retriever`` with every question of ``dataset`` and score it.

    Examples
    --------
    >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
    >>> from graphrag_integrations.core.types import Passage
    >>> corpus = [Passage("a", "Paris is in France.", "a"), Passage("b", "Rome is in Italy.", "b")]
    >>> ds = Dataset("toy", corpus, [Question("q", "Where is Rome?", ["Italy"], ["b"])])
    >>> result = evaluate_retriever("bm25", BM25Retriever(corpus), ds, ks=(1,))
    >>> result.to_json()["R@1"]
    100.0
    """
    depth = max(ks)
    runs: list[tuple[list[str], list[str]]] = []
    latencies: list[float] = []
    for q in _progress(dataset.questions, f"{name}: queries", show_progress):
        start = time.perf_counter()
        hits = retriever.retrieve(q.text, k=depth)
        latencies.append(time.perf_counter() - start)
        runs.append(([h.passage.id for h in hits], list(q.gold_passage_ids)))
    recall = {k: mean_recall_at_k(runs, k) for k in ks}
    answers: dict[str, float] = {}
    if isinstance(retriever, EvidenceRanker):
        answers = _evidence_metrics(retriever, dataset.questions)
    elif isinstance(retriever, AnswerRanker):
        answers = _answer_metrics(retriever, dataset.questions)
    return MethodResult(name, recall, latencies, index_s, len(dataset.passages), answers)


def _answer_metrics(ranker: AnswerRanker, questions: Sequence[Question]) -> dict[str, float]:
    depth = max(ANSWER_KS)
    ranked = [(ranker.rank_answers(q, depth), q.answers) for q in questions if q.answers]
    out = {
        f"AnsR@{k}": mean_percent([answer_recall_at_k(p, g, k) for p, g in ranked])
        for k in ANSWER_KS
    }
    out["Hit@1"] = mean_percent([hit_at_1(p, g) for p, g in ranked])
    return out


def _evidence_metrics(ranker: EvidenceRanker, questions: Sequence[Question]) -> dict[str, float]:
    depth = max(ANSWER_KS)
    runs = [(ranker.kgqa_evidence(q, depth), q.answers) for q in questions if q.answers]
    return kgqa_evidence_metrics(runs, ANSWER_KS)


def run_eval(
    dataset: Dataset,
    methods: Sequence[str],
    *,
    embedder: Any = None,
    ks: Sequence[int] = (2, 5),
    options: Mapping[str, Mapping[str, Any]] | None = None,
    show_progress: bool = True,
) -> EvalReport:
    """Build and evaluate ``methods`` on ``dataset``.

    Parameters
    ----------
    dataset : Dataset
        Shared corpus and questions.
    methods : sequence of str
        Registered names (:func:`~graphrag_integrations.evaluation.registry.method_names`).
    embedder : Embedder, str or None
        Shared by every method (``None``: all-MiniLM-L6-v2, offline).
    ks : sequence of int
        Recall depths.
    options : mapping of method name to options, optional
        Each method's options (parameter values, strings converted; Python objects such as
        LLMs), validated against its registration before anything is built.
    show_progress : bool
        Progress bars while indexing and querying.

    Returns
    -------
    EvalReport

    Raises
    ------
    UnknownMethodError, MethodUnavailableError
        Before anything is built, if a method cannot be resolved.
    InvalidParameterError
        Before anything is built, for an unknown option or a bad value.
    ValueError
        If the dataset lacks an input a method needs, or options name a method not run.

    Examples
    --------
    >>> from graphrag_integrations.core.types import Passage
    >>> from graphrag_integrations.testing import FakeEmbedder  # real runs use MiniLM
    >>> corpus = [Passage("a", "Paris is in France.", "a"), Passage("b", "Rome is in Italy.", "b")]
    >>> ds = Dataset("toy", corpus, [Question("q", "Where is Rome?", ["Italy"], ["b"])])
    >>> report = run_eval(ds, ["bm25"], embedder=FakeEmbedder(), ks=(1,), show_progress=False)
    >>> report.to_json()["results"]["bm25"]["R@1"]
    100.0
    """
    if not methods:
        raise ValueError("no method to evaluate")
    if not ks or min(ks) < 1:
        raise ValueError(f"recall depths must be >= 1, got {list(ks)}")
    regs = {name: get_registration(name) for name in methods}
    options = options or {}
    stray = sorted(set(options) - set(regs))
    if stray:
        raise ValueError(f"options given for {', '.join(stray)}, which is not evaluated")
    parsed = {name: reg.parse_options(options.get(name, {})) for name, reg in regs.items()}
    inputs = {name: dataset_inputs(dataset, reg) for name, reg in regs.items()}
    for reg in regs.values():
        reg.resolve_builder()  # an unavailable method fails before any model is loaded
    shared: Embedder = as_embedder(embedder)
    shared.embed_query("warm-up")  # load the model outside every timed section
    report = EvalReport(dataset.name, len(dataset.passages), len(dataset.questions), tuple(ks))
    report.excluded_questions = sum(1 for q in dataset.questions if not q.gold_passage_ids)
    for name, reg in regs.items():
        logger.info("building %s over %d passages", name, len(dataset.passages))
        start = time.perf_counter()
        retriever = reg.build(shared, inputs[name], parsed[name], show_progress=show_progress)
        index_s = time.perf_counter() - start
        report.results[name] = evaluate_retriever(
            name, retriever, dataset, ks=ks, index_s=index_s, show_progress=show_progress
        )
    return report


def dataset_inputs(dataset: Dataset, registration: MethodRegistration) -> dict[str, Any]:
    """The inputs ``registration`` declares, taken from ``dataset``.

    Raises
    ------
    ValueError
        If the dataset has none of a declared input (e.g. no triples for a KG method).

    Examples
    --------
    >>> from graphrag_integrations.evaluation.registry import get_registration
    >>> dataset_inputs(Dataset("toy", [], [], [("a", "r", "b")]), get_registration("bm25"))
    Traceback (most recent call last):
    ...
    ValueError: method 'bm25' needs passages; dataset 'toy' has none
    """
    available: dict[str, Any] = {
        "passages": dataset.passages,
        "triples": dataset.triples,
        "questions": dataset.questions,
    }
    missing = [name for name in sorted(registration.inputs) if not available[name]]
    if missing:
        raise ValueError(
            f"method {registration.name!r} needs {', '.join(missing)}; "
            f"dataset {dataset.name!r} has none"
        )
    return {name: available[name] for name in sorted(registration.inputs)}
