"""Query sets for HotpotQA-100: resumable generation question by question, and the snapshot."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_integrations.core.batching import batches
from graphrag_integrations.evaluation.qcg_query_sets.usage import (
    BatchMeter,
    Log,
    logged_usage,
    open_set,
    pair_counts,
    print_json,
    same_generator,
    save_snapshot,
    usage_rates,
    utc_now,
)

if TYPE_CHECKING:
    from graphrag_integrations.methods.qcg.generation import Doc2QueryGenerator, QuerySet

__all__ = ["generate_hotpotqa", "snapshot_hotpotqa"]

_MODULE = "graphrag_integrations.evaluation.qcg_query_sets"


def generate_hotpotqa(
    generator: Doc2QueryGenerator,
    data: Path,
    out: Path,
    *,
    start: int = 0,
    end: int | None = None,
    group: int = 2,
    seeds: Sequence[Path] = (),
    run_info: Mapping[str, Any] | None = None,
    log: Log = print_json,
) -> QuerySet:
    """Resumable generation on HotpotQA-100, question by question.

    Questions ``start`` to ``end`` of ``hotpotqa-100/questions.json`` are taken in file
    order, ``group`` at a time; each group's context passages (10 per question) that the set
    lacks are sent to ``generator``, then the set is saved with the questions it now covers
    (``extra["questions_done"]``).

    Parameters
    ----------
    generator
        The Doc2Query generator (its ``client.usage`` and ``stats`` are reported per group).
    data
        The data folder holding ``hotpotqa-100/``.
    out
        The query set, resumed when it exists and rewritten after every group.
    start, end, group
        Question range (``end=None``: to the last) and questions per group.
    seeds
        Query sets whose pairs are reused (e.g. the committed artefact).
    run_info
        Provenance added to ``extra`` (decoding, template, ``max_tokens``...).
    log
        Receives one row per group (tokens, seconds, questions done).

    Returns
    -------
    QuerySet
        The saved set.
    """
    from graphrag_integrations.evaluation.datasets import load_dataset
    from graphrag_integrations.methods.qcg.generation import QuerySet

    folder = data / "hotpotqa-100"
    dataset = load_dataset(folder)
    by_title = {str(p.metadata["title"]): p for p in dataset.passages}
    raw = json.loads((folder / "questions.json").read_text(encoding="utf-8"))
    qs = open_set(out, generator)
    for seed in seeds:
        qs.pairs.update(QuerySet.load(seed).pairs)
    done = set(qs.extra.get("questions_done", []))
    qs.extra.update(
        {
            "dataset": "hotpotqa-100",
            "alpha": 0.8,
            **(run_info or {}),
            "corpus_passages": len(dataset.passages),
        }
    )
    meter = BatchMeter(generator, ("pairs", "retried", "failed", "dropped_pairs"))
    items = raw[start:end]
    for part in batches(items, group):
        batch = [q for q in part if q["_id"] not in done]
        if not batch:
            continue
        titles = list(dict.fromkeys(str(t) for q in batch for t, _ in q["context"]))
        texts = [by_title[t].text for t in titles if qs.get(by_title[t].text) is None]
        t0 = time.perf_counter()
        if texts:
            qs.update(zip(texts, generator.generate(texts), strict=True))
        took = time.perf_counter() - t0
        done.update(q["_id"] for q in batch)
        qs.extra["questions_done"] = sorted(done)
        qs.extra["passages_done"] = len(qs.pairs)
        qs.extra["updated"] = utc_now()
        qs.save(out)
        _, figures = meter.take(took)
        log(
            {
                "questions": [q["_id"] for q in batch],
                "passages": len(texts),
                **figures,
                "questions_done": len(done),
                "query_set_sha": hashlib.sha256(out.read_bytes()).hexdigest()[:12],
            }
        )
    return qs


def snapshot_hotpotqa(
    sets: Sequence[Path],
    data: Path,
    out: Path,
    questions: Path,
    *,
    usage_logs: Sequence[Path] = (),
) -> dict[str, Any]:
    """Merge HotpotQA-100 query sets into ``out`` and write the covered questions.

    Parameters
    ----------
    sets
        Per-process sets of :func:`generate_hotpotqa`, all from the same generator.
    data
        The data folder holding ``hotpotqa-100/``.
    out
        The merged set (the committed artefact).
    questions
        Receives the covered questions (HotpotQA format, for ``eval``).
    usage_logs
        ``generate`` logs whose batch rows sum to the set's cost (:func:`logged_usage`).

    Returns
    -------
    dict
        The merged set's ``extra``.

    Raises
    ------
    ValueError
        The sets come from different generators (model, prompt or ``M``).
    """
    from graphrag_integrations.methods.qcg.generation import QuerySet

    loaded = [QuerySet.load(p) for p in sets]
    first = loaded[0]
    merged = QuerySet({}, model=first.model, prompt_hash=first.prompt_hash, M=first.M)
    done: list[str] = []
    for qs in loaded:
        if not same_generator(qs, first):
            raise ValueError("the query sets come from different generators")
        merged.pairs.update(qs.pairs)
        done += qs.extra.get("questions_done", [])
    raw = json.loads((data / "hotpotqa-100" / "questions.json").read_text(encoding="utf-8"))
    chosen = [q for q in raw if q["_id"] in set(done)]
    skip = ("questions_done", "updated", "passages_done")
    extra = {k: v for k, v in first.extra.items() if k not in skip}
    extra.update(
        {
            "questions_done": sorted(done),
            "questions_total": len(raw),
            "passages_covered": len(merged.pairs),
            **pair_counts(merged, "passages"),
            "snapshot": utc_now(),
            "command": f"python -m {_MODULE} generate hotpotqa-100 (see docs/lab/qcg.md)",
            "partial": len(done) < len(raw),
        }
    )
    if usage_logs:
        usage = logged_usage(usage_logs)
        extra.update({"usage": usage, **usage_rates(usage)})
    return save_snapshot(merged, extra, out, questions, chosen)
