"""Clue-Index build throughput: single process against Ray with 1 and 2 workers.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python benchmarks/bench_ray.py --n 300 --runs local,1,2

``local`` is the default single-process build; ``N`` a :class:`RayExecutor` with ``N``
workers (a local Ray, or the cluster ``RAY_ADDRESS`` names: then every worker count runs
there). Each row is the wall clock of ``ClueIndex.from_documents`` over the first ``--n``
passages of the 2Wiki corpus with the offline default models (MiniLM, spaCy sm), worker start
and model loading included; the Ray rows also give the batches each node prepared and whether
the graph equals the single-process one (vectors agree to float rounding: a worker embeds other
batches than the single process does).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from graphrag_integrations.core.index.executors import RayExecutor
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.methods.clue.index import ClueIndex


def load(data: Path, n: int) -> list[SourceDocument]:
    """The first ``n`` passages of ``2wiki-corpus/corpus.json`` (title-prefixed)."""
    rows = json.loads((data / "2wiki-corpus" / "corpus.json").read_text(encoding="utf-8"))[:n]
    return [
        SourceDocument(f"{r['title']}\n{r['text']}", f"2wiki-{i}", {"title": r["title"]})
        for i, r in enumerate(rows)
    ]


def build(docs: list[SourceDocument], run: str, batch_size: int) -> tuple[Any, float, Any]:
    executor = None if run == "local" else RayExecutor(int(run), batch_size=batch_size)
    start = time.perf_counter()
    index = ClueIndex.from_documents(docs, chunking=False, executor=executor or "local")
    return index, time.perf_counter() - start, executor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--runs", default="local,1,2", help="local and/or worker counts")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    docs = load(args.data, args.n)
    reference = None
    print("| run | passages | seconds | passages/s | batches per node | graph == local |")
    print("|---|---|---|---|---|---|")
    for run in args.runs.split(","):
        index, seconds, executor = build(docs, run, args.batch_size)
        if reference is None and run == "local":
            reference = index
        nodes: Counter[str] = Counter()
        if executor is not None:
            for (node, _pid), count in executor.worker_batches.items():
                nodes[node[:8]] += count
        same = (
            "-"
            if reference is None or index is reference
            else index.graph_store == reference.graph_store
        )
        label = "single process" if run == "local" else f"ray, {run} worker(s)"
        per_node = ", ".join(f"{k}: {v}" for k, v in nodes.items()) or "-"
        print(
            f"| {label} | {len(index.passages)} | {seconds:.1f} | "
            f"{len(index.passages) / seconds:.1f} | {per_node} | {same} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
