"""KG-Translator on a dev set: ParseKG build speed vs the dense build, query latency, R@5.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=src \
        python benchmarks/bench_kgt.py --dataset musique-100 --questions 10 \
        [--translator PATH|base] [--queries FILE] [--preset paper-musique] [--n-process 1]

``--translator``: default = the committed MuSiQue-100 fold-a adapter, ``base`` = untuned SmolLM2;
``--queries``: a questions file replacing the dataset's (e.g. the held-out half written by
``train --option fold=a``).

Wall and CPU (process) times are both reported, as the machine is shared. Both builds use
the same embedder (all-MiniLM-L6-v2) and corpus; models are loaded before timing, so the
figures are build times only. The dense baseline runs in the same process and
its R@5 on the same questions is printed next to KG-Translator's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.params import DenseQueryParams
from graphrag_integrations.core.encoders.embeddings import as_embedder
from graphrag_integrations.evaluation.datasets import load_dataset
from graphrag_integrations.evaluation.metrics import latency_percentiles, recall_at_k
from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from graphrag_integrations.methods.kgt.params import PRESETS


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--dataset", default="musique-100")
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--translator", default=None, help="adapter / model path or 'base'")
    parser.add_argument("--queries", default=None, help="questions file replacing the dataset's")
    parser.add_argument("--skip", type=int, default=0, help="skip the first N questions")
    parser.add_argument("--preset", default="paper-musique", choices=sorted(PRESETS))
    parser.add_argument("--n-process", type=int, default=1)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--passage-vectors", default="lazy", choices=["build", "lazy"])
    parser.add_argument("--reverse", default=None, choices=["fallback", "always", "never"])
    parser.add_argument("--no-dense", action="store_true", help="skip the dense baseline")
    parser.add_argument("--out", default=None, help="write the figures as JSON here")
    args = parser.parse_args(argv)

    data = load_dataset(Path(args.data) / args.dataset, queries=args.queries)
    passages = data.passages
    embedder = as_embedder(None)
    embedder.embed(["warm-up"])  # load the model before timing
    from graphrag_integrations.core.text.nlp import SpacyNLP

    SpacyNLP().parse("Warm-up sentence by Ada Lovelace.")

    dense = None
    dense_s = dense_cpu = float("nan")
    if not args.no_dense:
        t0, c0 = time.perf_counter(), time.process_time()
        dense = DenseRetriever(
            passages, embedding=embedder, query_params=DenseQueryParams(k=args.k)
        )
        dense_s, dense_cpu = time.perf_counter() - t0, time.process_time() - c0

    t0, c0 = time.perf_counter(), time.process_time()
    kgt = ParseKGTranslatorRetriever.from_passages(
        passages,
        embedding=embedder,
        translator=args.translator,
        query_params=replace(
            PRESETS[args.preset], **({"reverse": args.reverse} if args.reverse else {})
        ),
        n_process=args.n_process,
        passage_vectors=args.passage_vectors,
    )
    kgt_s, kgt_cpu = time.perf_counter() - t0, time.process_time() - c0
    stats = kgt.stats()
    report: dict[str, Any] = {
        "dataset": args.dataset,
        "passage_vectors": args.passage_vectors,
        "passages": len(passages),
        "dense_build_s": round(dense_s, 2),
        "kgt_build_s": round(kgt_s, 2),
        "kgt_passages_per_s": round(len(passages) / kgt_s, 1),
        "dense_passages_per_s": round(len(passages) / dense_s, 1),
        "kgt_over_dense_build": round(kgt_s / dense_s, 3),
        "dense_build_cpu_s": round(dense_cpu, 2),
        "kgt_build_cpu_s": round(kgt_cpu, 2),
        "kgt_over_dense_build_cpu": round(kgt_cpu / dense_cpu, 3),
        "kgt_timings_s": {k: round(v, 2) for k, v in kgt.timings.items()},
        "stats": stats.__dict__,
    }
    print(stats.as_table())
    print(json.dumps(report, indent=1), flush=True)

    questions = data.questions[args.skip : args.skip + args.questions]
    if questions:
        t0 = time.perf_counter()
        model = kgt.lm.model  # load the translator
        indexes = kgt.constraint_indexes  # tokenise hyperrelations, build the entity tries
        report["translator_parameters"] = sum(p.numel() for p in model.parameters())
        report["forward_entries"] = len(indexes.entity_tokens["forward"])
        report["translator_load_and_constraint_build_s"] = round(time.perf_counter() - t0, 2)
        latencies, cpu, recalls, dense_recalls, ctx = [], [], [], [], []
        recalls2: list[float] = []
        dense_recalls2: list[float] = []
        reverse_ran = 0
        dropped: dict[str, int] = {}
        for q in questions:
            t0, c0 = time.perf_counter(), time.process_time()
            results = kgt.retrieve(q.text, k=args.k)
            latencies.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            ids = [r.id for r in results]
            recalls.append(recall_at_k(ids, q.gold_passage_ids, args.k))
            recalls2.append(recall_at_k(ids, q.gold_passage_ids, 2))
            rounds = results[0].explanation["rounds"] if results else []
            reverse_ran += any(r["reverse_ran"] for r in rounds)
            ctx.append(results[0].explanation["traced_passages"] if results else 0)
            for rnd in results[0].explanation["rounds"] if results else []:
                for v, n in rnd["dropped_hypotheses"].items():
                    dropped[v] = dropped.get(v, 0) + n
            print(
                f"q{len(latencies)}: {latencies[-1]:.1f}s wall, {cpu[-1]:.1f}s CPU, "
                f"R@{args.k} {recalls[-1]:.2f}, "
                f"ctx {ctx[-1]}",
                flush=True,
            )
            if dense is not None:
                dense_ids = [r.id for r in dense.retrieve(q.text, k=args.k)]
                dense_recalls.append(recall_at_k(dense_ids, q.gold_passage_ids, args.k))
                dense_recalls2.append(recall_at_k(dense_ids, q.gold_passage_ids, 2))
        report.update(
            {
                "questions": len(questions),
                "preset": args.preset,
                "translator": args.translator or "committed adapter musique-100",
                "queries": args.queries,
                "skip": args.skip,
                "reverse": kgt.query_params.reverse,
                **latency_percentiles(latencies),
                **{f"cpu_{k}": v for k, v in latency_percentiles(cpu).items()},
                "kgt_R@2": round(100 * statistics.mean(recalls2), 1),
                "reverse_ran": reverse_ran,
                "llm_usage": {
                    "calls": kgt.client.usage.calls,
                    "prompt_tokens": kgt.client.usage.prompt_tokens,
                    "completion_tokens": kgt.client.usage.completion_tokens,
                },
                f"kgt_R@{args.k}": round(100 * statistics.mean(recalls), 1),
                f"dense_R@{args.k}": (
                    round(100 * statistics.mean(dense_recalls), 1) if dense_recalls else None
                ),
                "dense_R@2": (
                    round(100 * statistics.mean(dense_recalls2), 1) if dense_recalls2 else None
                ),
                "mean_traced_passages_ctx": round(statistics.mean(ctx), 2),
                "dropped_hypotheses": dropped,
            }
        )
        print(json.dumps({k: v for k, v in report.items() if k != "stats"}, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return report


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
