"""KG-Translator vs dense and BM25 in one process: per-question records, then the tables.

Run (from the repository root; ``--data`` defaults to ``../shared/data``)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=src \
        python benchmarks/bench_kgt_records.py run --dataset musique-100 --skip 50 \
        --questions 50 --translator musique-100-a --index DIR --out a.jsonl \
        [--translator-dtype bfloat16] [--early-stopping]
    python benchmarks/bench_kgt_records.py summarise a.jsonl b.jsonl [--fusion-k 60]

``--cross-fit`` (MuSiQue-100): questions 1-50 with adapter ``musique-100-b``, 51-100 with
``musique-100-a`` (each half held-out for its adapter), interleaved so a partial run stays
balanced. ``run`` builds (or loads, with ``--index``: built and persisted there on the first
run) the ParseKG, a ``DenseRetriever`` and a ``BM25Retriever`` over the same corpus
(``--distractors`` appends e.g. the 2Wiki corpus), then for each question records: every
traced passage in
KG-Translator's ranking (``top_up=False``, all traced passages, each with the directions of
the clues that traced it), the dense and BM25 rankings, wall / CPU time of the KG-Translator
query and whether reverse translation ran. Passage vectors are the dense build's (as with
``passage_vectors="build"``), so the query time is translation + tracing + ranking.
``summarise`` computes from the records (``.jsonl`` or gzip-compressed ``.jsonl.gz``; the
computation is ``benchmarks/kgt_records.py``), for the same questions:

* ``kgt paper``: the traced top-k (fewer when fewer are traced: the paper's Ctx);
* ``kgt top-up``: the product mode - the traced top-k filled up to k with the nearest
  untraced passages of the dense ranking (what ``top_up=True`` returns: the same embedder
  ranks the corpus);
* ``forward-only``: the same two with only passages traced by a forward clue (what
  ``reverse="never"`` returns: its forward translation is the same computation);
* ``kgt+dense RRF``: reciprocal-rank fusion of the traced ranking with the dense ranking,
  ``sum 1 / (fusion_k + rank)`` (the ``fusion="rrf"`` query option).

Recall is ``recall_at_k`` (HippoRAG convention), latency the KG-Translator query only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from kgt_records import (
    DEPTH,
    format_table,
    read_records,
    record_ids,
    rrf_grid,
    summarise_records,
)


class TextCachedEmbedder:
    """The embedder, remembering document vectors by text: the dense baseline embeds the
    corpus once and KG-Translator's passage vectors reuse those (its ``"build"`` mode)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self._vectors: dict[str, Any] = {}

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    def embed(self, texts: Any, *, show_progress: bool = False) -> Any:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for t, v in zip(
                missing, self.inner.embed(missing, show_progress=show_progress), strict=True
            ):
                self._vectors[t] = v
        return np.stack([self._vectors[t] for t in texts]) if len(texts) else self.inner.embed([])

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(text)


def run(args: argparse.Namespace) -> None:
    from graphrag_integrations.baselines.bm25 import BM25Retriever
    from graphrag_integrations.baselines.dense import DenseRetriever
    from graphrag_integrations.baselines.params import BM25QueryParams, DenseQueryParams
    from graphrag_integrations.core.encoders.embeddings import as_embedder
    from graphrag_integrations.core.llm.precision import cpu_has_native_bf16
    from graphrag_integrations.core.text.nlp import SpacyNLP
    from graphrag_integrations.evaluation.datasets import load_dataset
    from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
    from graphrag_integrations.methods.kgt.params import PRESETS, KGTIndexParams

    data = load_dataset(
        Path(args.data) / args.dataset, queries=args.queries, distractors=args.distractors
    )
    embedder = TextCachedEmbedder(as_embedder(None))
    SpacyNLP().parse("Warm-up sentence by Ada Lovelace.")
    params = replace(
        PRESETS[args.preset],
        top_up=False,
        k=DEPTH,
        translator_dtype=args.translator_dtype,
        early_stopping=args.early_stopping,
    )
    if args.reverse:
        params = replace(params, reverse=args.reverse)
    t0 = time.perf_counter()
    dense = DenseRetriever(
        data.passages, embedding=embedder, query_params=DenseQueryParams(k=DEPTH)
    )
    dense_build = time.perf_counter() - t0
    bm25 = BM25Retriever(data.passages, query_params=BM25QueryParams(k=DEPTH))
    index_dir = Path(args.index) if args.index else None
    if index_dir is not None and not (index_dir / "manifest.json").is_file():
        ParseKGTranslatorRetriever.from_passages(
            data.passages,
            embedding=embedder,
            index_params=KGTIndexParams(passage_vectors="lazy"),
            query_params=params,
        ).persist(index_dir)
    questions = data.questions[args.skip : args.skip + args.questions]
    # (translator, questions): one, or the cross-fitted pair of folds, interleaved
    plan = [(args.translator, list(questions))]
    if args.cross_fit:
        half = len(data.questions) // 2
        plan = [("musique-100-b", data.questions[:half]), ("musique-100-a", data.questions[half:])]
    indexes = []
    for translator, _ in plan:
        if index_dir is not None:
            kgt = ParseKGTranslatorRetriever.load(
                index_dir, embedding=embedder, translator=translator, query_params=params
            )
        else:
            kgt = ParseKGTranslatorRetriever.from_passages(
                data.passages, embedding=embedder, translator=translator, query_params=params
            )
        kgt._passage_vectors(list(kgt.view.passages))  # vectors from the dense build's cache
        kgt.lm.model  # noqa: B018 - load the translator before timing
        kgt.constraint_indexes  # noqa: B018
        indexes.append(kgt)
    order = []
    for i in range(max(len(qs) for _, qs in plan)):
        for j, (_, qs) in enumerate(plan):
            if i < len(qs):
                order.append((j, qs[i]))
    if args.cross_fit:  # --skip / --questions count interleaved items (resume a stopped run)
        order = order[args.skip : args.skip + args.questions]
    header = {
        "header": True,
        "dataset": args.dataset,
        "distractors": args.distractors,
        "passages": len(data.passages),
        "translators": [t or "musique-100-a" for t, _ in plan],
        "preset": args.preset,
        "reverse": params.reverse,
        "translator_dtype": indexes[0].translator_dtype,  # resolved ("auto" -> this CPU's)
        "cpu_bf16_native": cpu_has_native_bf16(),
        "early_stopping": params.early_stopping,
        "dense_build_s": round(dense_build, 1),
        "load_average": os.getloadavg(),
        "threads": os.environ.get("OMP_NUM_THREADS"),
    }
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        for n, (j, q) in enumerate(order, 1):
            kgt = indexes[j]
            t0, c0 = time.perf_counter(), time.process_time()
            hits = kgt.retrieve(q.text, k=DEPTH)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            rounds = hits[0].explanation["rounds"] if hits else []
            record = {
                "qid": q.id,
                "translator": plan[j][0],
                "gold": sorted(q.gold_passage_ids),
                "kgt": [
                    [
                        h.id,
                        round(h.score, 5),
                        sorted({c["direction"] for c in h.explanation["clues"]}),
                    ]
                    for h in hits
                ],
                "dense": [h.id for h in dense.retrieve(q.text, k=DEPTH)],
                "bm25": [h.id for h in bm25.retrieve(q.text, k=DEPTH)],
                "wall_s": round(wall, 3),
                "cpu_s": round(cpu, 3),
                "reverse_ran": any(r["reverse_ran"] for r in rounds),
                "dropped": {k: v for r in rounds for k, v in r["dropped_hypotheses"].items()},
                "load1": os.getloadavg()[0],
            }
            out.write(json.dumps(record) + "\n")
            out.flush()
            print(f"{n}/{len(order)} {wall:.1f}s wall {cpu:.1f}s cpu", flush=True)


def summarise(args: argparse.Namespace) -> dict[str, Any]:
    headers, records = read_records(args.records)
    if args.only_qids_from:  # compare two runs on the questions both have done
        keep = record_ids(args.only_qids_from)
        records = [r for r in records if r["qid"] in keep]
    if args.exclude_qids_from:  # e.g. the questions a knob was tuned on
        drop = record_ids(args.exclude_qids_from)
        records = [r for r in records if r["qid"] not in drop]
    if not records:
        sys.exit("no records")
    summary = summarise_records(
        records, headers, fusion_k=args.fusion_k, fusion_weight=args.fusion_weight
    )
    print(format_table(summary["table"]))
    print(json.dumps({k: v for k, v in summary.items() if k != "table"}, indent=1))
    if args.grid:
        for (fk, w), r5 in rrf_grid(records).items():
            print(f"RRF k={fk:g} w={w:g}: R@5 {r5:.1f}")
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--data", default="../shared/data")
    r.add_argument("--dataset", default="musique-100")
    r.add_argument("--queries", default=None)
    r.add_argument("--distractors", default=None)
    r.add_argument("--skip", type=int, default=0)
    r.add_argument("--questions", type=int, default=100)
    r.add_argument("--translator", default=None, help="adapter name / path or 'base'")
    r.add_argument("--preset", default="paper-musique")
    r.add_argument(
        "--translator-dtype",
        default="auto",
        choices=["auto", "float32", "bfloat16", "float16", "int8", "int8-mixed", "int8-smooth"],
        help="auto: bfloat16 on a CPU with AVX-512 BF16 / AMX, else float32",
    )
    r.add_argument("--early-stopping", action="store_true", help="beam search early stopping")
    r.add_argument("--reverse", default=None, choices=["fallback", "always", "never"])
    r.add_argument("--index", default=None, help="persisted ParseKG (built there if missing)")
    r.add_argument(
        "--cross-fit",
        action="store_true",
        help="first half of the questions with musique-100-b, second half with -a, interleaved",
    )
    r.add_argument("--out", required=True)
    s = sub.add_parser("summarise")
    s.add_argument("records", nargs="+")
    s.add_argument("--fusion-k", type=float, default=60.0)
    s.add_argument("--fusion-weight", type=float, default=1.0)
    s.add_argument("--only-qids-from", default=None, help="keep questions present in this file")
    s.add_argument("--exclude-qids-from", default=None, help="drop questions present in this file")
    s.add_argument("--grid", action="store_true", help="R@5 of RRF over a (k, w) grid (dev)")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args)
    else:
        summarise(args)


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
