"""Cross-fitted sweep of Q-Iter's query options on the three 100-question dev sets.

Usage (from the repository root; data from ``--data``, default ``../shared/data``)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_clue_tune.py \
        --grid M=5,8 --grid path_weight=0.5,1.0 [--variant name:K=4,D=2] [--latency]

Each set's Clue index is built once and persisted under ``--cache`` (reused while the
index-time options, ``--index-option key=json``, stay the same); the dense baseline runs in
the same process. Every variant (the grid's product plus the named ones; ``default`` is
always there) is evaluated on every question; the table gives R@5 per set and per half (A:
first half of the questions, B: the rest). Constants are chosen by cross-fitting: the
variant with the best mean R@5 over halves A of ALL sets is checked on halves B, and vice
versa (one set of constants for all sets, never one set alone). ``--latency`` only times the
defaults against dense, question by question in turn (wall and CPU p50: on a shared machine
the load moves between two sequential runs).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core.encoders.embeddings import Embedder, as_embedder
from graphrag_integrations.core.params import key_values
from graphrag_integrations.core.types import Retriever
from graphrag_integrations.evaluation.datasets import Dataset, load_dataset
from graphrag_integrations.evaluation.metrics import recall_at_k
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.params import ClueIndexParams

SETS = ("musique-100", "hotpotqa-100", "2wiki-dev-100")


@dataclass
class Run:
    """Per-question recall of one retriever on one set, and its query latencies."""

    r2: np.ndarray
    r5: np.ndarray
    seconds: np.ndarray

    def half(self, which: str) -> float:
        """Mean R@5 (percent) of half ``"A"`` (first), ``"B"`` (rest) or ``"all"``."""
        mid = len(self.r5) // 2
        part = {"A": self.r5[:mid], "B": self.r5[mid:], "all": self.r5}[which]
        return 100.0 * float(part.mean())


def evaluate(retriever: Retriever, dataset: Dataset) -> Run:
    """Retrieve the top 5 for every question with gold passages."""
    r2, r5, seconds = [], [], []
    for q in dataset.questions:
        if not q.gold_passage_ids:
            continue
        start = time.perf_counter()
        hits = retriever.retrieve(q.text, k=5)
        seconds.append(time.perf_counter() - start)
        ids = [h.passage.id for h in hits]
        r2.append(recall_at_k(ids, list(q.gold_passage_ids), 2))
        r5.append(recall_at_k(ids, list(q.gold_passage_ids), 5))
    return Run(np.array(r2), np.array(r5), np.array(seconds))


def interleaved_latency(dense: Retriever, clue: Retriever, dataset: Dataset) -> str:
    """p50 wall and CPU (this thread) of each question, dense and Clue in turn, so both see
    the same machine load; returns one line with the Clue / dense ratios."""
    wall: dict[str, list[float]] = {"dense": [], "clue": []}
    cpu: dict[str, list[float]] = {"dense": [], "clue": []}
    for q in dataset.questions:
        for name, retriever in (("dense", dense), ("clue", clue)):
            start, started = time.perf_counter(), time.thread_time()
            retriever.retrieve(q.text, k=5)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.thread_time() - started)
    p50 = {
        f"{kind} {name}": 1000 * float(np.median(values[name]))
        for kind, values in (("wall", wall), ("cpu", cpu))
        for name in values
    }
    return (
        f"{dataset.name}: p50 wall dense {p50['wall dense']:.1f} ms, clue "
        f"{p50['wall clue']:.1f} ms ({p50['wall clue'] / p50['wall dense']:.2f}x); CPU dense "
        f"{p50['cpu dense']:.1f} ms, clue {p50['cpu clue']:.1f} ms "
        f"({p50['cpu clue'] / p50['cpu dense']:.2f}x)"
    )


def clue_index(
    dataset: Dataset, embedder: Embedder, options: dict[str, Any], cache: Path
) -> ClueIndex:
    """The set's Clue index with these index options: loaded from ``cache`` or built."""
    tag = hashlib.sha1(json.dumps(options, sort_keys=True).encode()).hexdigest()[:8]
    where = cache / f"{dataset.name}-{tag}"
    if where.exists():
        return ClueIndex.load(where, embedding=embedder)
    start = time.perf_counter()
    index = ClueIndex.from_passages(
        dataset.passages, embedding=embedder, index_params=ClueIndexParams(**options)
    )
    print(f"built {dataset.name} in {time.perf_counter() - start:.1f}s", flush=True)
    index.persist(where)
    return index


def variants(grid: Sequence[str], named: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``default`` plus the grid's cartesian product plus the named variants."""
    out: dict[str, dict[str, Any]] = {"default": {}}
    axes = [(key, values.split(",")) for key, values in (g.split("=", 1) for g in grid)]
    for combo in itertools.product(*(values for _, values in axes)):
        opts = {key: json.loads(v) for (key, _), v in zip(axes, combo, strict=True)}
        if opts:
            out[",".join(f"{k}={v}" for k, v in opts.items())] = opts
    for item in named:
        name, _, spec = item.partition(":")
        out[name] = {k: json.loads(v) for k, v in key_values(spec.split(",")).items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", default=list(SETS))
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/clue-cache"))
    ap.add_argument("--grid", action="append", default=[], help="key=v1,v2 (JSON values)")
    ap.add_argument("--variant", action="append", default=[], help="name:key=v,key=v")
    ap.add_argument("--index-option", action="append", default=[], help="key=json")
    ap.add_argument(
        "--latency", action="store_true", help="only the interleaved dense / Clue p50 (defaults)"
    )
    args = ap.parse_args()
    embedder = as_embedder(None)
    embedder.embed_query("warm-up")
    index_options = {k: json.loads(v) for k, v in key_values(args.index_option).items()}
    todo = variants(args.grid, args.variant)
    results: dict[str, dict[str, Run]] = {name: {} for name in ["dense", *todo]}
    for name in args.sets:
        dataset = load_dataset(args.data / name)
        index = clue_index(dataset, embedder, index_options, args.cache)
        dense = DenseRetriever.from_passages(dataset.passages, embedding=embedder)
        if args.latency:
            clue = index.as_retriever(k=5)
            clue.retrieve("warm-up question")
            print(interleaved_latency(dense, clue, dataset), flush=True)
            continue
        results["dense"][name] = evaluate(dense, dataset)
        for label, opts in todo.items():
            results[label][name] = evaluate(index.as_retriever(k=5, **opts), dataset)
        print(f"{name}: {len(todo)} variants done", flush=True)
    if not args.latency:
        report(results, args.sets)


def report(results: dict[str, dict[str, Run]], sets: Sequence[str]) -> None:
    """Table of R@5 (all / A / B per set), R@2, p50; then the cross-fitted choice."""
    head = ["variant"]
    for name in sets:
        head += [f"{name[:7]} R@5", "A", "B", "R@2", "p50"]
    print("\t".join([*head, "mean-dense A", "mean-dense B"]))
    gains: dict[str, dict[str, float]] = {}
    dense = results["dense"]
    for label, runs in results.items():
        row = [label]
        for name in sets:
            run = runs[name]
            row += [f"{run.half(h):.1f}" for h in ("all", "A", "B")]
            row += [f"{100 * run.r2.mean():.1f}", f"{1000 * np.median(run.seconds):.0f}"]
        gains[label] = {
            h: float(np.mean([runs[n].half(h) - dense[n].half(h) for n in sets]))
            for h in ("A", "B")
        }
        print("\t".join([*row, f"{gains[label]['A']:+.1f}", f"{gains[label]['B']:+.1f}"]))
    candidates = [label for label in results if label != "dense"]
    for chose, check in (("A", "B"), ("B", "A")):
        best = max(candidates, key=lambda label: gains[label][chose])
        print(
            f"chosen on halves {chose}: {best} ({gains[best][chose]:+.1f} over dense); "
            f"on halves {check}: {gains[best][check]:+.1f} (default "
            f"{gains['default'][check]:+.1f})"
        )


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()
    main()
