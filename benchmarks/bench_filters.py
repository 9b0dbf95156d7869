"""Cost and exactness of metadata filters (``retrieve(q, k, filter=...)``) per index.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_filters.py \
        [--limit 100] [--clue-passages 300] [--shards 10]
    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_filters.py --clue-8k \
        [--falkordb] [--cache /tmp/graphrag-bench-filters] [--questions 100]

Every passage gets ``{"shard": position % shards}``; each question is asked with ``k=5``
without a filter and with ``{"shard": 3}`` (1/shards of the corpus). Reported per index: mean
latency of both and their ratio (same process), and whether every filtered hit matches.

Default run (HotpotQA-100's 994 passages): the baselines filter before ranking (masks), so
their filtered answer is also compared with the index's own unfiltered full ranking
restricted to the shard (exact; the hybrid differs by design: its min-max fusion runs over
the matching candidates); Clue on the first ``--clue-passages`` passages.

``--clue-8k``: the push-down figure. A Clue index of MuSiQue-100's corpus plus the 2Wiki
corpus as distractors (about 8k passages, default offline models; built once and persisted
to ``--cache``, loaded by later runs; ``--falkordb``: its graph copied into a FalkorDB server
started for the run, the vectors in memory), asked MuSiQue-100's questions three ways: unfiltered;
filtered, the filter pushed into the search (the scope of the chunks a filtered Q-Iter walks;
the first filtered query computes it, reported apart as ``cold``); and the way filters ran
before (and still run for indexes without a push-down): the unfiltered search with a growing
budget, its results filtered afterwards (``post-filter``, BaseIndex's default).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.hybrid import HybridRetriever
from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.retrieval.filters import Comparison, retrieve_filtered
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.evaluation.datasets import load_dataset
from graphrag_integrations.methods.clue.index import ClueIndex

K = 5
SHARD = 3


def measure(
    name: str, index: BaseIndex, questions: list[str], n_passages: int, *, exact: bool = True
) -> None:
    where = {"shard": SHARD}
    plain_s = filtered_s = 0.0
    same = matching = 0
    for q in questions:
        t0 = time.perf_counter()
        index.retrieve(q, k=K)
        t1 = time.perf_counter()
        hits = index.retrieve(q, k=K, filter=where)
        t2 = time.perf_counter()
        plain_s += t1 - t0
        filtered_s += t2 - t1
        matching += all(h.passage.metadata["shard"] == SHARD for h in hits)
        if exact:
            full = index.retrieve(q, k=n_passages)
            expected = [h.id for h in full if h.passage.metadata["shard"] == SHARD][:K]
            same += [h.id for h in hits] == expected
    n = len(questions)
    restricted = f"= full ranking restricted {same}/{n}" if exact else ""
    print(
        f"{name:<8} passages {n_passages:>5}  questions {n:>3}  "
        f"plain {1000 * plain_s / n:8.1f} ms  filtered {1000 * filtered_s / n:8.1f} ms  "
        f"ratio {filtered_s / plain_s:5.2f}  all hits match {matching}/{n}  {restricted}"
    )


def sharded(passages: list[Passage], shards: int) -> list[Passage]:
    """``passages`` with ``{"shard": position % shards}`` added to their metadata."""
    return [
        dataclasses.replace(p, metadata={**p.metadata, "shard": i % shards})
        for i, p in enumerate(passages)
    ]


def clue_8k(
    data: Path, cache: Path, shards: int, graph_store: Any = None
) -> tuple[ClueIndex, list[Passage], list[str]]:
    """The ~8k-passage Clue index (built once, then loaded from ``cache``, with its graph in
    ``graph_store`` when given), its passages and the questions."""
    dataset = load_dataset(data / "musique-100", distractors=data / "2wiki-corpus")
    passages = sharded(dataset.passages, shards)
    folder = cache / "clue-8k"
    if not (folder / "manifest.json").is_file():
        t = time.perf_counter()
        ClueIndex.from_passages(passages).persist(folder, overwrite=True)
        print(f"built {len(passages)} passages in {time.perf_counter() - t:.0f}s")
    t = time.perf_counter()
    index = ClueIndex.load(folder, graph_store=graph_store)
    where = "" if graph_store is None else " into FalkorDB"
    print(f"loaded {folder}{where} in {time.perf_counter() - t:.1f}s")
    return index, passages, [q.text for q in dataset.questions]


def timed(call: Callable[[], list[RetrievedPassage]]) -> tuple[float, list[RetrievedPassage]]:
    t = time.perf_counter()
    hits = call()
    return time.perf_counter() - t, hits


def pushdown(index: ClueIndex, passages: list[Passage], questions: list[str]) -> None:
    """Unfiltered, pushed-down and post-filtered latencies of the same questions."""
    where = Comparison("shard", "eq", SHARD)
    n_passages = len(passages)
    allowed = sum(p.metadata["shard"] == SHARD for p in passages)
    index.retrieve(questions[0], k=K)  # models warm: the cold query below times the scope
    cold, _ = timed(lambda: index.retrieve(questions[0], k=K, filter=where))
    runs: dict[str, list[float]] = {"plain": [], "filtered": [], "post-filter": []}
    matching: dict[str, int] = {"filtered": 0, "post-filter": 0}
    modes: dict[str, Callable[[str], list[RetrievedPassage]]] = {
        "plain": lambda q: index.retrieve(q, k=K),
        "filtered": lambda q: index.retrieve(q, k=K, filter=where),
        "post-filter": lambda q: retrieve_filtered(index._retrieve, q, K, where),
    }
    for q in questions:
        for mode, run in modes.items():
            t = time.perf_counter()
            hits = run(q)
            runs[mode].append(time.perf_counter() - t)
            if mode in matching:
                matching[mode] += len(hits) == K and all(
                    h.passage.metadata["shard"] == SHARD for h in hits
                )
    n = len(questions)
    plain = statistics.fmean(runs["plain"])
    print(
        f"clue {n_passages} passages, filter {{'shard': {SHARD}}} = {allowed} passages "
        f"({100 * allowed / n_passages:.0f} %), {n} questions, k={K}; cold filtered query "
        f"(scope computed) {1000 * cold:.0f} ms"
    )
    for mode, seconds in runs.items():
        mean = statistics.fmean(seconds)
        p50 = statistics.median(seconds)
        extra = f"  {K} matching hits {matching[mode]}/{n}" if mode in matching else ""
        print(
            f"  {mode:<12} mean {1000 * mean:7.1f} ms  p50 {1000 * p50:7.1f} ms  "
            f"ratio to plain {mean / plain:5.2f}{extra}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--clue-passages", type=int, default=300)
    parser.add_argument("--shards", type=int, default=10)
    parser.add_argument("--clue-8k", action="store_true", help="the push-down run (see above)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/graphrag-bench-filters"))
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--falkordb", action="store_true", help="--clue-8k with FalkorDB")
    args = parser.parse_args()

    if args.clue_8k and args.falkordb:
        from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
        from graphrag_integrations.testing.falkordb_server import FalkorDBServer

        with FalkorDBServer() as server:
            store = FalkorDBGraph.at(server.url("filters"))
            index, passages, questions = clue_8k(args.data, args.cache, args.shards, store)
            pushdown(index, passages, questions[: args.questions])
        return
    if args.clue_8k:
        index, passages, questions = clue_8k(args.data, args.cache, args.shards)
        pushdown(index, passages, questions[: args.questions])
        return
    data = load_dataset(args.data / "hotpotqa-100", limit=args.limit)
    passages = sharded(data.passages, args.shards)
    questions = [q.text for q in data.questions]
    dense = DenseRetriever.from_passages(passages)
    measure("dense", dense, questions, len(passages))
    measure("bm25", BM25Retriever.from_passages(passages), questions, len(passages))
    measure("hybrid", HybridRetriever.from_dense(dense), questions, len(passages))
    subset: list[Passage] = passages[: args.clue_passages]
    clue = ClueIndex.from_passages(subset, embedding=dense.embedder)
    measure("clue", clue, questions[:30], len(subset), exact=False)


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
