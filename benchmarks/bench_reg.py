"""ReG pilot on MetaQA: train the triple scorer on one dev sample, measure AnsR@K on another.

Usage (from the repository root; ``--data`` defaults to ``../shared/data``)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_reg.py \
        [--hops 2] [--train 300] [--val 50] [--test 200] [--supervision weak,oracle] \
        [--epochs 20] [--index-cache /tmp/reg-metaqa]

The KG is MetaQA's reconstructed ``kb.txt``; all questions come from the answerable subset of
``N-hop/dev.txt`` (disjoint random samples, seed 0). Supervision ``weak`` = all q->a shortest
paths; ``oracle`` = the shortest paths whose relation chain matches the question type
(``qa_dev_qtype.txt``); ``refined`` needs an LLM (``--llm local`` = the offline SmolLM2,
constrained choice). The baseline run in the same process is the untrained (zero-shot
similarity) scorer; ratios are trained / untrained.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any

from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
from graphrag_integrations.evaluation.datasets import KGQuestion
from graphrag_integrations.evaluation.metaqa import (
    answerable,
    disjoint_samples,
    kgqa_metrics,
    load_questions,
    qtype_relation_chain,
)
from graphrag_integrations.methods.reg.candidates import relation_chain
from graphrag_integrations.methods.reg.index import RegIndex, TrainingQuestion
from graphrag_integrations.methods.reg.kg import Triple
from graphrag_integrations.methods.reg.params import RegTrainParams


def as_training(q: KGQuestion) -> TrainingQuestion:
    return TrainingQuestion(q.id, q.text, (q.topic_entity,), tuple(q.answers))


def oracle_labels(index: RegIndex, questions: list[KGQuestion]) -> dict[str, list[Triple]]:
    """Shortest-path triples whose relation chain is the question type's."""
    view = index.view
    out: dict[str, list[Triple]] = {}
    for q in questions:
        chain = tuple(qtype_relation_chain(q.qtype))
        pool = index.candidate_pool(as_training(q))
        rows = [
            r
            for paths in pool.sp_paths.values()
            for p in paths
            if relation_chain(view, p) == chain
            for r, _ in p
        ]
        out[q.id] = [view.triple(r) for r in dict.fromkeys(rows)]
    return out


def build_index(data: Path, cache: Path | None) -> tuple[RegIndex, float]:
    embedder = SentenceTransformerEmbedder()
    start = time.perf_counter()
    if cache is not None and (cache / "manifest.json").is_file():
        index = RegIndex.load(cache, embedding=embedder)
    else:
        index = RegIndex.from_file(data / "kb.txt", embedding=embedder, show_progress=True)
        if cache is not None:
            index.persist(cache)
    return index, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--hops", type=int, default=2)
    ap.add_argument("--train", type=int, default=300)
    ap.add_argument("--val", type=int, default=50)
    ap.add_argument("--test", type=int, default=200)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--supervision", default="weak")
    ap.add_argument("--llm", default=None, help="'local' for refined supervision")
    ap.add_argument("--index-cache", type=Path, default=None)
    ap.add_argument("--ks", default="10,20,50,100", help="K of AnsR@K")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    data = args.data / "metaqa"
    index, build_s = build_index(data, args.index_cache)
    print(
        f"KG: {index.view.n_triples} triples, {len(index.view.entities)} entities "
        f"(built/loaded in {build_s:.1f}s)"
    )
    qs = answerable(
        load_questions(data / f"{args.hops}-hop" / "dev.txt"),
        data / "answerable_with_reconstructed_kb.json",
    )
    train, val, test = disjoint_samples(qs, [args.train, args.val, args.test], seed=0)
    results: dict[str, Any] = {
        "set": f"MetaQA {args.hops}-hop dev (answerable)",
        "kg_triples": index.view.n_triples,
    }
    index.scorer = None
    ks = [int(k) for k in args.ks.split(",")]
    base = kgqa_metrics(index, test, ks=ks)
    results["untrained"] = base
    print("untrained", json.dumps(base))
    for mode in args.supervision.split(","):
        start = time.perf_counter()
        if mode == "oracle":
            labels = oracle_labels(index, train + val)
        elif mode == "refined":
            from graphrag_integrations.core.llm import LLMClient

            llm = LLMClient(None if args.llm == "local" else args.llm)
            labels = index.supervision(
                [as_training(q) for q in train + val], mode="refined", llm=llm
            ).labels
        else:
            sup = index.supervision([as_training(q) for q in train + val], mode="weak")
            labels = sup.labels
            results["pool"] = sup.pool_summary()
        label_s = time.perf_counter() - start
        report = index.train(
            [as_training(q) for q in train],
            labels,
            validation=[as_training(q) for q in val],
            params=RegTrainParams(epochs=args.epochs),
        )
        metrics = kgqa_metrics(index, test, ks=ks)
        ratio = {k: metrics[k] / base[k] for k in [*(f"AnsR@{x}" for x in ks), "Hit@1"] if base[k]}
        results[mode] = {
            "labels_s": label_s,
            "train_s": report.seconds,
            "best_epoch": report.best_epoch,
            "val_recall": report.best_recall,
            "test": metrics,
            "ratio_vs_untrained": ratio,
        }
        print(mode, json.dumps(results[mode]))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
