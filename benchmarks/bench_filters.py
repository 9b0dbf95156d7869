"""Cost and exactness of metadata filters (``retrieve(q, k, filter=...)``) per index.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_filters.py \
        [--limit 100] [--clue-passages 300] [--shards 10]

Every passage of HotpotQA-100 gets ``{"shard": position % shards}``; each question is asked
with ``k=5`` without a filter and with ``{"shard": 3}`` (1/shards of the corpus). Reported per
index: mean latency of both, their ratio (same process), and the fraction of filtered answers
equal to the index's own unfiltered full ranking restricted to the shard (what an exact filter
returns; the hybrid differs by design: its min-max fusion runs over the matching candidates).
The baselines filter before ranking (masks); Clue filters after its graph step (a growing
budget), built on the first ``--clue-passages`` passages.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.hybrid import HybridRetriever
from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.types import Passage
from graphrag_integrations.evaluation.datasets import load_dataset
from graphrag_integrations.methods.clue.index import ClueIndex

K = 5
SHARD = 3


def measure(name: str, index: BaseIndex, questions: list[str], n_passages: int) -> None:
    where = {"shard": SHARD}
    plain_s = filtered_s = 0.0
    exact = matching = 0
    for q in questions:
        t0 = time.perf_counter()
        index.retrieve(q, k=K)
        t1 = time.perf_counter()
        hits = index.retrieve(q, k=K, filter=where)
        t2 = time.perf_counter()
        plain_s += t1 - t0
        filtered_s += t2 - t1
        matching += all(h.passage.metadata["shard"] == SHARD for h in hits)
        full = index.retrieve(q, k=n_passages)
        expected = [h.id for h in full if h.passage.metadata["shard"] == SHARD][:K]
        exact += [h.id for h in hits] == expected
    n = len(questions)
    print(
        f"{name:<8} passages {n_passages:>5}  questions {n:>3}  "
        f"plain {1000 * plain_s / n:8.1f} ms  filtered {1000 * filtered_s / n:8.1f} ms  "
        f"ratio {filtered_s / plain_s:5.2f}  all hits match {matching}/{n}  "
        f"= full ranking restricted {exact}/{n}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--clue-passages", type=int, default=300)
    parser.add_argument("--shards", type=int, default=10)
    args = parser.parse_args()

    data = load_dataset(args.data / "hotpotqa-100", limit=args.limit)
    passages = [
        dataclasses.replace(p, metadata={**p.metadata, "shard": i % args.shards})
        for i, p in enumerate(data.passages)
    ]
    questions = [q.text for q in data.questions]
    dense = DenseRetriever.from_passages(passages)
    measure("dense", dense, questions, len(passages))
    measure("bm25", BM25Retriever.from_passages(passages), questions, len(passages))
    measure("hybrid", HybridRetriever.from_dense(dense), questions, len(passages))
    subset: list[Passage] = passages[: args.clue_passages]
    clue = ClueIndex.from_passages(subset, embedding=dense.embedder)
    measure("clue", clue, questions[:30], len(subset))


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
