"""ReG supervision comparison on MetaQA: weak vs LLM-refined vs oracle labels, same questions.

Usage (from the repository root; the refinement caches come from
``graphrag-integrations train --method reg --option supervision=refined`` or an earlier run)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_reg_supervision.py \\
        --hops 2 --refined-cache refined_2hop.jsonl --index-cache /tmp/reg-metaqa-index \\
        [--epochs 20] [--out figures.json] [--save-scorers DIR]

Samples (seed 0, MetaQA answerable dev of the hop): ``disjoint_samples(qs, [300, 50, 200])``
= training pool / validation / test. The refined labels are read from the JSONL cache only
(no LLM call: a question without a cached selection is an error), so the training set of every
supervision is the N training questions that have one; ``weak-all`` trains on all 300 with weak
labels. Checkpoints are selected with the weak (q->a shortest-path) labels of the same 50
validation questions for every supervision. Oracle = the shortest paths whose relation chain is
the question type's (``qa_dev_qtype.txt``). Every scorer is measured on the same 200 test
questions, anchored at the gold topic entity.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from graphrag_integrations.core.embeddings import SentenceTransformerEmbedder
from graphrag_integrations.core.llm import LLMClient
from graphrag_integrations.evaluation.metaqa import (
    answerable,
    disjoint_samples,
    kgqa_metrics,
    load_questions,
    qtype_relation_chain,
)
from graphrag_integrations.methods.reg.candidates import relation_chain
from graphrag_integrations.methods.reg.index import RegIndex, TrainingQuestion
from graphrag_integrations.methods.reg.params import TrainParams


def _no_llm(prompt: str) -> str:
    raise RuntimeError("a question without a cached refinement reached the LLM")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--hops", type=int, default=2)
    ap.add_argument("--refined-cache", type=Path, required=True)
    ap.add_argument("--index-cache", type=Path, required=True)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--save-scorers", type=Path, default=None)
    args = ap.parse_args(argv)
    data = args.data / "metaqa"
    t0 = time.perf_counter()
    index = RegIndex.load(args.index_cache, embedding=SentenceTransformerEmbedder())
    index.retriever_params = dataclasses.replace(
        index.retriever_params, subgraph_hops=max(2, args.hops)
    )
    print(f"index loaded in {time.perf_counter() - t0:.1f}s", flush=True)
    qs = answerable(
        load_questions(data / f"{args.hops}-hop" / "dev.txt"),
        data / "answerable_with_reconstructed_kb.json",
    )
    train, val, test = disjoint_samples(qs, [300, 50, 200], seed=0)
    cached = {
        json.loads(line)["qid"]
        for line in args.refined_cache.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    as_t = [TrainingQuestion(q.id, q.text, (q.topic_entity,), tuple(q.answers)) for q in train]
    val_t = [TrainingQuestion(q.id, q.text, (q.topic_entity,), tuple(q.answers)) for q in val]
    refined_t = [q for q in as_t if q.id in cached]
    view = index.view
    weak_all = index.supervision(as_t + val_t, mode="weak")
    sup = index.supervision(
        refined_t, mode="refined", llm=LLMClient(_no_llm), cache_path=args.refined_cache
    )
    oracle: dict[str, Any] = {}
    qtypes = {q.id: q.qtype for q in train}
    for q in refined_t:
        chain = tuple(qtype_relation_chain(qtypes[q.id]))
        pool = index.candidate_pool(q)
        rows = [
            r
            for paths in pool.sp_paths.values()
            for p in paths
            if relation_chain(view, p) == chain
            for r, _ in p
        ]
        oracle[q.id] = [view.triple(r) for r in dict.fromkeys(rows)]
    val_labels = {q.id: weak_all.labels[q.id] for q in val_t}
    stats = sup.refine_stats
    results: dict[str, Any] = {
        "set": f"MetaQA {args.hops}-hop dev (answerable)",
        "train_refined": len(refined_t),
        "validation": len(val_t),
        "test": len(test),
        "refine_stats": dataclasses.asdict(stats) if stats else None,
        "label_triples_mean": {
            "weak": sum(len(weak_all.labels[q.id]) for q in refined_t) / max(len(refined_t), 1),
            "refined": sum(len(sup.labels[q.id]) for q in refined_t) / max(len(refined_t), 1),
            "oracle": sum(len(oracle[q.id]) for q in refined_t) / max(len(refined_t), 1),
        },
    }
    index.scorer = None
    results["untrained"] = kgqa_metrics(index, test, ks=[10, 20, 50, 100])
    print("untrained", json.dumps(results["untrained"]), flush=True)
    runs = {
        "weak": (refined_t, {q.id: weak_all.labels[q.id] for q in refined_t}),
        "refined": (refined_t, sup.labels),
        "oracle": (refined_t, oracle),
        "weak-all": (as_t, {q.id: weak_all.labels[q.id] for q in as_t}),
    }
    for name, (questions, labels) in runs.items():
        report = index.train(
            questions,
            labels,
            validation=val_t,
            validation_labels=val_labels,
            params=TrainParams(epochs=args.epochs),
        )
        metrics = kgqa_metrics(index, test, ks=[10, 20, 50, 100])
        results[name] = {
            "train_questions": len(questions),
            "train_s": report.seconds,
            "best_epoch": report.best_epoch,
            "val_recall": report.best_recall,
            "test": metrics,
        }
        print(name, json.dumps(results[name]), flush=True)
        if args.save_scorers is not None and index.scorer is not None:
            args.save_scorers.mkdir(parents=True, exist_ok=True)
            stem = args.save_scorers / f"{name}-{args.hops}hop"
            stem.with_suffix(".pt").write_bytes(index.scorer.to_bytes())
            config = {
                "config": index.scorer.config(),
                "supervision": name,
                "hops": args.hops,
                "train_ids": [q.id for q in questions],
                "validation_ids": [q.id for q in val_t],
                "epochs": args.epochs,
                "best_epoch": report.best_epoch,
                "train_s": report.seconds,
            }
            stem.with_suffix(".json").write_text(json.dumps(config))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
