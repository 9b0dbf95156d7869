"""What query-set runs share: cost accounting (usage logs, rates, pair counts) and helpers.

Examples
--------
>>> usage_rates({"prompt_tokens": 30, "completion_tokens": 10, "seconds": 4.0})["tokens_per_s"]
10.0
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag_integrations.methods.qcg.generation import Doc2QueryGenerator, QuerySet

__all__ = [
    "USAGE_KEYS",
    "BatchMeter",
    "Log",
    "logged_usage",
    "open_set",
    "pair_counts",
    "print_json",
    "rate",
    "same_generator",
    "save_snapshot",
    "usage_rates",
    "utc_now",
]

#: How a run reports a row (default: one JSON line on stdout).
Log = Callable[[dict[str, Any]], None]
#: The usage counters a run reports (``LLMClient.usage``), besides seconds.
USAGE_KEYS = ("calls", "prompt_tokens", "completion_tokens")


def print_json(row: dict[str, Any]) -> None:
    """The default :data:`Log`: ``row`` as one JSON line on stdout, flushed."""
    print(json.dumps(row), flush=True)


def utc_now() -> str:
    """Now in UTC, ISO 8601 to the second (``datetime.UTC`` needs Python 3.11)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def rate(amount: float, seconds: float, digits: int) -> float | None:
    """``amount / seconds`` rounded to ``digits``; ``None`` for zero seconds."""
    return round(amount / seconds, digits) if seconds else None


def same_generator(a: QuerySet, b: QuerySet) -> bool:
    """Whether two query sets come from the same model, prompt and ``M``."""
    return (a.model, a.prompt_hash, a.M) == (b.model, b.prompt_hash, b.M)


def logged_usage(logs: Sequence[Path]) -> dict[str, float]:
    """Calls, tokens and seconds summed over the per-batch JSON rows of ``generate`` logs.

    Parameters
    ----------
    logs
        Captured outputs of ``generate`` runs; lines that are not JSON objects and the
        closing summary row are skipped.

    Returns
    -------
    dict[str, float]
        ``calls``, ``prompt_tokens``, ``completion_tokens`` and ``seconds`` (rounded to 0.1).

    Examples
    --------
    >>> import tempfile
    >>> log = Path(tempfile.mkdtemp()) / "gen.log"
    >>> row = {"questions": ["q1"], "calls": 2, "prompt_tokens": 90, "completion_tokens": 30,
    ...        "seconds": 1.25}
    >>> _ = log.write_text("loading...\\n" + json.dumps(row) + "\\n" + json.dumps(row) + "\\n")
    >>> logged_usage([log])
    {'calls': 4, 'prompt_tokens': 180, 'completion_tokens': 60, 'seconds': 2.5}
    """
    usage: dict[str, float] = dict.fromkeys((*USAGE_KEYS, "seconds"), 0)
    for log in logs:
        for line in log.read_text(encoding="utf-8").splitlines():
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            if "chats" in row or "questions" in row:  # a batch row, not the closing summary
                for key in usage:
                    usage[key] += row[key]
    usage["seconds"] = round(usage["seconds"], 1)
    return usage


def pair_counts(query_set: QuerySet, unit: str) -> dict[str, int]:
    """Answered pairs, answerless questions and ``<unit>_without_pairs`` of a query set.

    Examples
    --------
    >>> from graphrag_integrations.methods.qcg.generation import QAPair, QuerySet
    >>> qs = QuerySet({}, model="m", prompt_hash="0" * 16, M=2)
    >>> qs.update([("a", [QAPair("q1?", "x"), QAPair("q2?", "")]), ("b", [])])
    >>> pair_counts(qs, "chunks")
    {'chunks_without_pairs': 1, 'pairs': 1, 'answerless_questions': 1}
    """
    lists = list(query_set.pairs.values())
    return {
        f"{unit}_without_pairs": sum(1 for p in lists if not any(q.answer for q in p)),
        "pairs": sum(1 for p in lists for q in p if q.answer),
        "answerless_questions": sum(1 for p in lists for q in p if not q.answer),
    }


def usage_rates(usage: Mapping[str, float]) -> dict[str, Any]:
    """Wall seconds and tokens/s of a usage record (:func:`logged_usage`).

    Examples
    --------
    >>> usage_rates({"prompt_tokens": 300, "completion_tokens": 100, "seconds": 20.0})
    {'wall_s': 20.0, 'tokens_per_s': 20.0, 'completion_tokens_per_s': 5.0}
    """
    seconds = usage["seconds"]
    tokens = usage["prompt_tokens"] + usage["completion_tokens"]
    return {
        "wall_s": round(seconds, 1),
        "tokens_per_s": rate(tokens, seconds, 2),
        "completion_tokens_per_s": rate(usage["completion_tokens"], seconds, 2),
    }


def open_set(out: Path, generator: Doc2QueryGenerator) -> QuerySet:
    """The output set to resume, or a new one for ``generator``."""
    from graphrag_integrations.methods.qcg.generation import QuerySet

    if out.exists():
        return QuerySet.load(out)
    return QuerySet(
        {}, model=generator.model_name, prompt_hash=generator.prompt_hash, M=generator.M
    )


class BatchMeter:
    """What a generator spends batch by batch: the usage (:data:`USAGE_KEYS`) and generation
    stats since the previous :meth:`take`, and the figures of a ``generate`` log row.

    Parameters
    ----------
    generator : Doc2QueryGenerator
        Its ``client.usage`` and ``stats`` are read (the first time: now).
    stat_keys : sequence of str
        The ``stats`` counters a row reports.
    """

    def __init__(self, generator: Doc2QueryGenerator, stat_keys: Sequence[str]) -> None:
        self.generator = generator
        self.stat_keys = tuple(stat_keys)
        self._usage, self._stats = self._now()

    def _now(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.generator.client.usage.as_dict(), self.generator.stats.as_dict()

    def take(self, seconds: float) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(used, row)`` of the batch that took ``seconds``: the usage spent since the last
        take, and the row figures (seconds, that usage, the stats counters, completion and
        total tokens per second)."""
        usage, stats = self._now()
        used = {k: usage[k] - self._usage[k] for k in USAGE_KEYS}
        tokens = used["prompt_tokens"] + used["completion_tokens"]
        row = {
            "seconds": round(seconds, 1),
            **used,
            **{k: stats[k] - self._stats[k] for k in self.stat_keys},
            "completion_tok_s": rate(used["completion_tokens"], seconds, 2),
            "total_tok_s": rate(tokens, seconds, 1),
        }
        self._usage, self._stats = usage, stats
        return used, row


def save_snapshot(
    merged: QuerySet,
    extra: dict[str, Any],
    out: Path,
    questions: Path,
    records: Any,
    *,
    indent: int | None = None,
) -> dict[str, Any]:
    """Save the merged set with ``extra`` to ``out`` and the covered question ``records`` to
    ``questions`` (JSON); returns ``extra``."""
    merged.extra = extra
    merged.save(out)
    questions.parent.mkdir(parents=True, exist_ok=True)
    questions.write_text(json.dumps(records, indent=indent), encoding="utf-8")
    return extra
