"""Query sets for LiHuaWorld: resumable generation chat by chat (time order), and the snapshot."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_integrations.evaluation.qcg_query_sets.usage import (
    USAGE_KEYS,
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
    from graphrag_integrations.core.types import Passage
    from graphrag_integrations.methods.qcg.generation import Doc2QueryGenerator, QuerySet

__all__ = ["generate_lihuaworld", "lihuaworld_chunks", "snapshot_lihuaworld"]

_MODULE = "graphrag_integrations.evaluation.qcg_query_sets"


def lihuaworld_chunks(data: Path, chunking: str) -> tuple[list[Passage], tuple[int, int]]:
    """The LiHuaWorld chats (time order) cut as ``eval`` cuts them.

    Parameters
    ----------
    data
        The data folder holding ``lihuaworld/``.
    chunking
        ``"SIZE/OVERLAP"`` in tokens (e.g. ``"1200/100"``).

    Returns
    -------
    tuple[list[Passage], tuple[int, int]]
        The chunks and ``(size, overlap)``.
    """
    from graphrag_integrations.evaluation.lihuaworld import chunk_lihuaworld, load_chat_documents
    from graphrag_integrations.evaluation.lihuaworld_run import parse_chunking

    size, overlap = parse_chunking(chunking)
    chats = load_chat_documents(data / "lihuaworld")  # sorted by timestamp
    return chunk_lihuaworld(chats, size, overlap), (size, overlap)


def generate_lihuaworld(
    generator: Doc2QueryGenerator,
    data: Path,
    out: Path,
    *,
    chunking: str = "1200/100",
    start: int = 0,
    end: int | None = None,
    group: int = 8,
    seeds: Sequence[Path] = (),
    run_info: Mapping[str, Any] | None = None,
    log: Log = print_json,
) -> QuerySet:
    """Resumable generation on LiHuaWorld, chat by chat in chat-time order.

    Chats ``start`` to ``end`` (time order) are taken ``group`` at a time; their chunks the
    set lacks go to ``generator``, then the set is saved with the chats it covers completely
    (``extra["chats_done"]``, over the whole corpus) and the cumulative tokens / seconds
    (``extra["usage"]``).

    Parameters
    ----------
    generator
        The Doc2Query generator (its ``client.usage`` and ``stats`` are reported per batch).
    data
        The data folder holding ``lihuaworld/``.
    out
        The query set, resumed when it exists and rewritten after every batch.
    chunking
        ``"SIZE/OVERLAP"``, as ``eval`` cuts the chats.
    start, end, group
        Chat range (time order; ``end=None``: to the last) and chats per batch.
    seeds
        Query sets whose pairs are reused (same generator and prompt).
    run_info
        Provenance added to ``extra`` (decoding, template, ``max_tokens``...).
    log
        Receives one row per batch and a closing summary row.

    Returns
    -------
    QuerySet
        The saved set.

    Raises
    ------
    ValueError
        ``out`` or a seed was made by another generator, prompt, ``M`` or chunking.
    """
    from graphrag_integrations.methods.qcg.generation import QuerySet
    from graphrag_integrations.methods.qcg.resumable import generate_by_document

    chunks, cut = lihuaworld_chunks(data, chunking)
    chats = list(dict.fromkeys(c.doc_id for c in chunks))
    chosen = set(chats[start:end])
    qs = open_set(out, generator)
    made_by = (generator.model_name, generator.prompt_hash, generator.M)
    if (qs.model, qs.prompt_hash, qs.M) != made_by:
        raise ValueError(f"{out} was made by another generator / prompt / M")
    if qs.extra.get("chunking", list(cut)) != list(cut):
        raise ValueError(f"{out} was made for chunking {qs.extra['chunking']}")
    for seed in seeds:
        other = QuerySet.load(seed)
        if (other.model, other.prompt_hash) != (qs.model, qs.prompt_hash):
            raise ValueError(f"seed {seed} was made by another generator / prompt")
        qs.pairs.update(other.pairs)
    usage: dict[str, float] = dict.fromkeys(USAGE_KEYS, 0)
    usage.update(qs.extra.get("usage", {}))
    usage.setdefault("seconds", 0.0)
    qs.extra.update(
        {
            "dataset": "lihuaworld",
            "chunking": list(cut),
            "alpha": 0.8,
            **(run_info or {}),
            "corpus_chats": len(chats),
            "corpus_chunks": len(chunks),
            "usage": usage,
        }
    )
    meter = BatchMeter(generator, ("pairs", "retried", "failed"))

    def on_batch(info: dict[str, Any]) -> None:
        took = info["seconds"]
        used, figures = meter.take(took)
        for key, value in used.items():
            usage[key] += value
        usage["seconds"] = round(usage["seconds"] + took, 1)
        qs.extra["updated"] = utc_now()
        qs.save(out)  # after every batch, with its usage (a closed prefix on disk)
        log(
            {
                "chats": info["documents"],
                "chunks": info["chunks"],
                **figures,
                "chats_done": info["covered"],
            }
        )

    todo = [c for c in chunks if c.doc_id in chosen]
    generate_by_document(
        todo, qs, generator.generate, group=group, corpus=chunks, on_batch=on_batch
    )
    qs.save(out)
    log({"chats_done": len(qs.extra["chats_done"]), "of": len(chats), **usage})
    return qs


def snapshot_lihuaworld(
    sets: Sequence[Path],
    data: Path,
    out: Path,
    questions: Path,
    *,
    usage_logs: Sequence[Path] = (),
) -> dict[str, Any]:
    """Merge LiHuaWorld query sets into ``out``; write the closed dev questions.

    The chats covered are recomputed over the whole chunked corpus (every chunk of the chat
    in the merged set); ``questions`` receives the dev questions whose evidence chats are all
    covered (``Null`` ones too), verbatim, for ``eval --queries``.

    Parameters
    ----------
    sets
        Sets of :func:`generate_lihuaworld`, all from the same generator and chunking.
    data
        The data folder holding ``lihuaworld/``.
    out
        The merged set (the committed artefact); pairs of chunks outside the corpus are
        dropped.
    questions
        Receives the closed questions.
    usage_logs
        ``generate`` logs whose batch rows replace the usage the sets recorded.

    Returns
    -------
    dict
        The merged set's ``extra``.

    Raises
    ------
    ValueError
        The sets come from different generators or chunkings.
    """
    from graphrag_integrations.evaluation.lihuaworld import closed_question_records
    from graphrag_integrations.methods.qcg.generation import QuerySet, chunk_key
    from graphrag_integrations.methods.qcg.resumable import covered_documents

    loaded = [QuerySet.load(p) for p in sets]
    first = loaded[0]
    chunking = first.extra.get("chunking", [1200, 100])
    chunks, _ = lihuaworld_chunks(data, f"{chunking[0]}/{chunking[1]}")
    merged = QuerySet({}, model=first.model, prompt_hash=first.prompt_hash, M=first.M)
    usage: dict[str, float] = {**dict.fromkeys(USAGE_KEYS, 0), "seconds": 0.0}
    for qs in loaded:
        if not same_generator(qs, first) or qs.extra.get("chunking", chunking) != chunking:
            raise ValueError("the query sets come from different generators or chunkings")
        merged.pairs.update(qs.pairs)
        for key in usage:
            usage[key] += qs.extra.get("usage", {}).get(key, 0)
    corpus_keys = {chunk_key(c.text) for c in chunks}
    merged.pairs = {k: v for k, v in merged.pairs.items() if k in corpus_keys}
    chats = list(dict.fromkeys(c.doc_id for c in chunks))
    done = covered_documents(chunks, merged)
    raw = json.loads((data / "lihuaworld" / "queries-dev.json").read_text(encoding="utf-8"))
    closed = closed_question_records(raw, set(chats), set(done))
    if usage_logs:
        usage = logged_usage(usage_logs)
    skip = ("chats_done", "updated", "usage")
    extra = {k: v for k, v in first.extra.items() if k not in skip}
    extra.update(
        {
            "chats_done": done,
            "chats_total": len(chats),
            "chunks_covered": len(merged.pairs),
            "chunks_total": len(chunks),
            **pair_counts(merged, "chunks"),
            "dev_questions_covered": len(closed),
            "usage": usage,
            "chats_covered": len(done),
            **usage_rates(usage),
            "snapshot": utc_now(),
            "command": f"python -m {_MODULE} generate lihuaworld (see docs/lab/qcg.md)",
            "partial": len(done) < len(chats),
        }
    )
    return save_snapshot(merged, extra, out, questions, closed, indent=1)
