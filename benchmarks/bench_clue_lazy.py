"""Clue query process: flat view (networkx) against the neighbourhood view (FalkorDB).

Three steps, each its own process so that a query process holds only what a query needs::

    # 1. build a Clue index of HotpotQA-100's corpus plus 2Wiki distractors (default models)
    python benchmarks/bench_clue_lazy.py build --size 4000 --out /tmp/lazy/nx-4k
    # 2. copy its graph into a FalkorDB graph (the index directory then holds a pointer)
    python benchmarks/bench_clue_lazy.py to-falkordb --index /tmp/lazy/nx-4k \\
        --url falkordb://127.0.0.1:PORT/clue4k --out /tmp/lazy/fk-4k
    # 3. query: RSS after loading the models, after loading the index, after the questions;
    #    p50 / p95 latency and R@5 on the HotpotQA-100 questions
    python benchmarks/bench_clue_lazy.py query --index /tmp/lazy/fk-4k [--view flat]
    # or both views on one index, interleaved (same process, same load on the machine)
    python benchmarks/bench_clue_lazy.py compare --index /tmp/lazy/nx-4k

``query`` prints one JSON line. RSS figures are MiB; "index" is the growth from loading the
index and running the questions, i.e. the query process without the model weights.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time
from pathlib import Path
from typing import Any

DATA = Path(os.environ.get("GRAPHRAG_DATA", "/work/shared/data"))


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def dataset() -> Any:
    from graphrag_integrations.evaluation.datasets import load_dataset

    return load_dataset(DATA / "hotpotqa-100", distractors=DATA / "2wiki-corpus")


def passages(size: int) -> list[Any]:
    """HotpotQA-100's corpus, then 2Wiki passages as distractors up to ``size``."""
    return list(dataset().passages[:size])


def questions() -> list[tuple[str, set[str]]]:
    return [(q.text, set(q.gold_passage_ids)) for q in dataset().questions]


def cmd_build(args: argparse.Namespace) -> None:
    from graphrag_integrations.methods.clue.index import ClueIndex

    corpus = passages(args.size)
    start = time.perf_counter()
    index = ClueIndex.from_passages(corpus, show_progress=False)
    index.persist(args.out)
    print(json.dumps({"passages": len(corpus), "build_s": round(time.perf_counter() - start, 1)}))


def cmd_to_falkordb(args: argparse.Namespace) -> None:
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
    from graphrag_integrations.methods.clue.index import ClueIndex

    start = time.perf_counter()
    index = ClueIndex.load(args.index, graph_store=FalkorDBGraph.at(args.url))
    index.persist(args.out)
    print(json.dumps({"copied_s": round(time.perf_counter() - start, 1)}))


def _models(qs: list[tuple[str, set[str]]]) -> float:
    """Load MiniLM and spaCy and run the questions on a two-passage index, so that the
    models' weights and working memory are in place; the RSS then."""
    from graphrag_integrations.methods.clue.index import ClueIndex

    tiny = ClueIndex.from_documents(["Paris is in France.", "Rome is the capital of Italy."])
    _run(tiny.as_retriever(k=5), qs[:20])
    return rss_mib()


def _run(retriever: Any, qs: list[tuple[str, set[str]]]) -> tuple[list[float], float]:
    times: list[float] = []
    hits = 0.0
    for question, gold in qs:
        start = time.perf_counter()
        found = retriever.retrieve(question, k=5)
        times.append(time.perf_counter() - start)
        hits += len(gold & {h.passage.id for h in found}) / len(gold)
    return times, 100 * hits / len(qs)


def _pct(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def cmd_query(args: argparse.Namespace) -> None:
    from graphrag_integrations.methods.clue.index import ClueIndex

    qs = questions()[: args.questions]
    base = _models(qs)
    index = ClueIndex.load(args.index)
    loaded = rss_mib()
    retriever = index.as_retriever(k=5, graph_view=args.view)
    _run(retriever, qs[:5])  # warm-up (the flat view is built by the first query)
    times, recall = _run(retriever, qs)
    cache = getattr(retriever, "cache", None)
    print(
        json.dumps(
            {
                "index": str(args.index),
                "view": "neighbourhood" if retriever.reads_neighbourhoods else "flat",
                "rss_models_mib": round(base, 1),
                "rss_loaded_mib": round(loaded - base, 1),
                "rss_index_mib": round(rss_mib() - base, 1),
                "peak_mib": round(peak_mib(), 1),
                "p50_ms": _pct(times, 0.5),
                "p95_ms": _pct(times, 0.95),
                "mean_ms": round(1000 * statistics.mean(times), 1),
                "r_at_5": round(recall, 1),
                "cache_nodes": len(cache) if cache is not None else None,
                "reads": dict(cache.reads) if cache is not None else None,
            }
        )
    )


def cmd_compare(args: argparse.Namespace) -> None:
    """Both views on one index in one process, question by question, same ids asserted."""
    from graphrag_integrations.methods.clue.index import ClueIndex

    qs = questions()[: args.questions]
    _models(qs[:5])
    index = ClueIndex.load(args.index)
    views = {v: index.as_retriever(k=5, graph_view=v) for v in ("flat", "neighbourhood")}
    times: dict[str, list[float]] = {v: [] for v in views}
    for r in views.values():
        _run(r, qs[:5])
    same = 0
    for question, _ in qs:
        got = {}
        for v, r in views.items():
            start = time.perf_counter()
            got[v] = [(h.passage.id, h.score) for h in r.retrieve(question, k=5)]
            times[v].append(time.perf_counter() - start)
        same += got["flat"] == got["neighbourhood"]
    print(
        json.dumps(
            {
                "index": str(args.index),
                "identical": f"{same}/{len(qs)}",
                **{f"{v}_p50_ms": _pct(t, 0.5) for v, t in times.items()},
                **{f"{v}_p95_ms": _pct(t, 0.95) for v, t in times.items()},
            }
        )
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--size", type=int, required=True)
    b.add_argument("--out", type=Path, required=True)
    f = sub.add_parser("to-falkordb")
    f.add_argument("--index", type=Path, required=True)
    f.add_argument("--url", required=True)
    f.add_argument("--out", type=Path, required=True)
    for name in ("query", "compare"):
        q = sub.add_parser(name)
        q.add_argument("--index", type=Path, required=True)
        q.add_argument("--questions", type=int, default=100)
        if name == "query":
            q.add_argument("--view", default="auto", choices=("auto", "flat", "neighbourhood"))
    args = parser.parse_args(argv)
    {
        "build": cmd_build,
        "to-falkordb": cmd_to_falkordb,
        "query": cmd_query,
        "compare": cmd_compare,
    }[args.command](args)


if __name__ == "__main__":
    main()
