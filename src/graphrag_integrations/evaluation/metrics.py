"""Evaluation metrics: passage recall, SQuAD EM/F1, KGQA answer metrics, latency percentiles.

Exact definitions, with worked examples: ``docs/reference/metrics.md``. Per-question functions
return fractions in ``[0, 1]``; the aggregate functions return percentages ``0-100``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


# -- passage retrieval ----------------------------------------------------------------------
def recall_at_k(retrieved_ids: Sequence[str], gold_ids: Iterable[str], k: int) -> float:
    """``|top-k ∩ gold| / |gold|`` for one question (HippoRAG convention).

    Duplicated ids are counted once on both sides.

    Raises
    ------
    ValueError
        If ``gold_ids`` is empty (such questions are excluded, see :func:`mean_recall_at_k`)
        or ``k < 1``.

    Examples
    --------
    >>> recall_at_k(["a", "x", "b"], ["a", "b"], 2)
    0.5
    """
    gold = set(gold_ids)
    if not gold:
        raise ValueError("recall is undefined for a question without gold passages")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return len(set(retrieved_ids[:k]) & gold) / len(gold)


@dataclass(frozen=True)
class RecallSummary:
    """Mean recall over the questions that have gold, and how many were excluded.

    Attributes
    ----------
    value : float
        Mean recall as a percentage (0-100); ``nan`` when no question has gold.
    evaluated : int
        Questions with gold passages.
    excluded : int
        Questions without gold passages (not in the mean).
    """

    value: float
    evaluated: int
    excluded: int


def mean_recall_at_k(runs: Sequence[tuple[Sequence[str], Sequence[str]]], k: int) -> RecallSummary:
    """Mean :func:`recall_at_k` in percent over ``(retrieved_ids, gold_ids)`` pairs.

    Questions whose gold list is empty are excluded from the mean and counted.

    Examples
    --------
    >>> s = mean_recall_at_k([(["a", "b"], ["a"]), (["c"], ["d", "c"]), (["e"], [])], 1)
    >>> round(s.value, 1), s.evaluated, s.excluded
    (75.0, 2, 1)
    """
    values = [recall_at_k(ret, gold, k) for ret, gold in runs if gold]
    excluded = len(runs) - len(values)
    mean = 100.0 * float(np.mean(values)) if values else float("nan")
    return RecallSummary(mean, len(values), excluded)


# -- answers (SQuAD) ------------------------------------------------------------------------
def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower-case, drop punctuation and articles, collapse whitespace.

    Examples
    --------
    >>> normalize_answer("The  Eiffel-Tower!")
    'eiffeltower'
    """
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, answers: Iterable[str]) -> float:
    """1.0 if the normalised prediction equals any normalised answer, else 0.0.

    Examples
    --------
    >>> exact_match("the Beatles", ["Beatles", "The Fab Four"])
    1.0
    """
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(a) for a in answers))


def _token_f1(prediction: str, answer: str) -> float:
    pred = normalize_answer(prediction).split()
    gold = normalize_answer(answer).split()
    if not pred or not gold:
        return float(pred == gold)
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall)


def f1_score(prediction: str, answers: Iterable[str]) -> float:
    """Best SQuAD token F1 of ``prediction`` over ``answers`` (answer + aliases).

    Examples
    --------
    >>> round(f1_score("Paris France", ["Paris"]), 3)
    0.667
    """
    return max((_token_f1(prediction, a) for a in answers), default=0.0)


# -- KGQA answers ---------------------------------------------------------------------------
def _answer_set(answers: Iterable[str]) -> set[str]:
    return {normalize_answer(a) for a in answers}


def answer_recall_at_k(predicted: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of gold answers among the top-``k`` ranked predicted answers.

    Examples
    --------
    >>> answer_recall_at_k(["A", "x", "B", "C"], ["a", "b", "c"], 3)
    0.6666666666666666
    """
    gold_set = _answer_set(gold)
    if not gold_set:
        raise ValueError("answer recall is undefined without gold answers")
    return len(_answer_set(predicted[:k]) & gold_set) / len(gold_set)


def hit(predicted: Sequence[str], gold: Iterable[str]) -> float:
    """1.0 if any predicted answer is a gold answer.

    Examples
    --------
    >>> hit(["x", "B"], ["b"])
    1.0
    """
    return float(bool(_answer_set(predicted) & _answer_set(gold)))


def hit_at_1(predicted: Sequence[str], gold: Iterable[str]) -> float:
    """1.0 if the first predicted answer is a gold answer.

    Examples
    --------
    >>> hit_at_1(["x", "B"], ["b"])
    0.0
    """
    return hit(predicted[:1], gold)


def triple_answer_recall_at_k(
    triples: Sequence[tuple[str, str, str]], gold: Iterable[str], k: int
) -> float:
    """Share of gold answers among the entities (heads and tails) of the top-``k`` triples.

    Examples
    --------
    >>> top = [("Kismet", "directed_by", "W. Dieterle"), ("Kismet", "release_year", "1944"),
    ...        ("Hunchback", "directed_by", "W. Dieterle")]
    >>> triple_answer_recall_at_k(top, ["1944", "Hunchback"], 2)
    0.5
    >>> triple_answer_recall_at_k(top, ["1944", "Hunchback"], 3)
    1.0
    """
    entities = [e for h, _, t in triples[:k] for e in (h, t)]
    return answer_recall_at_k(entities, gold, len(entities))


def answer_set_f1(predicted: Iterable[str], gold: Iterable[str]) -> float:
    """F1 between the predicted answer set and the gold answer set (both normalised).

    Examples
    --------
    >>> round(answer_set_f1(["p", "q", "x"], ["p", "q", "r", "s"]), 4)
    0.5714
    """
    pred, ref = _answer_set(predicted), _answer_set(gold)
    if not pred or not ref:
        return float(pred == ref)
    same = len(pred & ref)
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def macro_f1(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> float:
    """Mean :func:`answer_set_f1` over ``(predicted, gold)`` pairs, in percent.

    Examples
    --------
    >>> macro_f1([(["p"], ["p"]), (["x"], ["p"])])
    50.0
    """
    if not pairs:
        return float("nan")
    return 100.0 * float(np.mean([answer_set_f1(p, g) for p, g in pairs]))


def mean_percent(values: Sequence[float]) -> float:
    """Mean of per-question fractions in percent (``nan`` for none).

    Examples
    --------
    >>> mean_percent([1.0, 0.0, 0.5])
    50.0
    """
    return 100.0 * float(np.mean(values)) if len(values) else float("nan")


# -- KGQA evidence of triple retrievers -------------------------------------------------------
class KGQAEvidence(Protocol):
    """What a triple retriever gives the harness for a KGQA question (docs/reference/metrics.md)."""

    @property
    def triples(self) -> Sequence[tuple[str, str, str]]:
        """The top-K retrieved triples, best first."""
        ...

    @property
    def top_answer(self) -> str | None:
        """End entity of the best evidence chain (``None``: no chain)."""
        ...

    @property
    def chains(self) -> int:
        """Number of evidence chains returned."""
        ...

    @property
    def tokens(self) -> int:
        """Estimated tokens of the formatted evidence chains."""
        ...

    @property
    def flat_tokens(self) -> int:
        """Estimated tokens of the same top-K triples as a flat list, one triple a line."""
        ...


def kgqa_evidence_metrics(
    runs: Sequence[tuple[KGQAEvidence, Sequence[str]]], ks: Sequence[int]
) -> dict[str, float]:
    """``AnsR@k`` per ``k`` (:func:`triple_answer_recall_at_k`, percent), ``Hit@1`` (the top
    chain's end entity is gold, percent) and the mean ``chains``, ``tokens`` and
    ``flat_tokens`` over ``(evidence, gold answers)`` pairs. The evidence must hold the top
    ``max(ks)`` triples (a shorter list counts as fewer triples retrieved).

    Raises
    ------
    ValueError
        A pair without gold answers.

    Examples
    --------
    >>> from types import SimpleNamespace as E
    >>> a = E(triples=[("K", "r", "D"), ("K", "y", "1944")], top_answer="D", chains=2,
    ...       tokens=10, flat_tokens=12)
    >>> b = E(triples=[("H", "r", "D")], top_answer=None, chains=0, tokens=0, flat_tokens=4)
    >>> m = kgqa_evidence_metrics([(a, ["D", "1944"]), (b, ["1944"])], [1, 2])
    >>> m["AnsR@1"], m["AnsR@2"], m["Hit@1"], m["chains"], m["tokens"], m["flat_tokens"]
    (25.0, 50.0, 50.0, 1.0, 5.0, 8.0)
    """
    out = {
        f"AnsR@{k}": mean_percent([triple_answer_recall_at_k(e.triples, g, k) for e, g in runs])
        for k in ks
    }
    out["Hit@1"] = mean_percent(
        [hit_at_1([e.top_answer] if e.top_answer is not None else [], g) for e, g in runs]
    )
    for name in ("chains", "tokens", "flat_tokens"):
        values = [float(getattr(e, name)) for e, _ in runs]
        out[name] = float(np.mean(values)) if values else float("nan")
    return out


# -- latency --------------------------------------------------------------------------------
def latency_percentiles(seconds: Sequence[float]) -> dict[str, float]:
    """p50 and p95 of per-query latencies, in milliseconds (linear interpolation).

    Examples
    --------
    >>> latency_percentiles([0.010, 0.020, 0.030])
    {'latency_p50_ms': 20.0, 'latency_p95_ms': 29.0}
    """
    if not len(seconds):
        return {"latency_p50_ms": float("nan"), "latency_p95_ms": float("nan")}
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    return {
        "latency_p50_ms": round(float(np.percentile(ms, 50)), 3),
        "latency_p95_ms": round(float(np.percentile(ms, 95)), 3),
    }
