"""Peak memory (RSS) and disk size of a Clue index: build, then load + query, in separate processes.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
        python benchmarks/bench_memory.py --index /tmp/clue-8k [--queries 100] [--skip-build]

The corpus is MuSiQue-100 plus the 2Wiki distractor corpus (8,009 passages, as
``bench_clue.py --distractors``); the index is the offline default Clue index (``alpha=0``,
spaCy ``en_core_web_sm``, all-MiniLM-L6-v2). Each stage runs in a fresh Python process, so the
peak RSS of one (``ru_maxrss``, the kernel's high-water mark) is not inflated by the other:

``build``
    load the dataset, build the index, persist it.
``query``
    load the persisted index and answer the MuSiQue-100 questions (``k=5``).

Each stage prints one JSON line; the driver prints a table. The ``floor`` figure is the RSS of
the process after the imports and after the models are loaded (MiniLM + spaCy), before any index
exists: what any process that embeds queries pays.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from process_memory import (
    MIB,
    current_rss_mib,
    dir_size_mib,
    fresh_process_json,
    peak_rss_mib,
)


def stage_build(args: argparse.Namespace) -> dict[str, Any]:
    """Build the index of the combined corpus and persist it."""
    from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
    from graphrag_integrations.evaluation.datasets import load_dataset
    from graphrag_integrations.methods.clue.index import ClueIndex

    dataset = load_dataset(
        args.data / "musique-100", distractors=args.data / "2wiki-corpus", limit=args.queries
    )
    embedder = SentenceTransformerEmbedder()
    embedder.embed(["warm up"])
    floor = current_rss_mib()
    t = time.perf_counter()
    index = ClueIndex.from_passages(dataset.passages, embedding=embedder)
    build_s = time.perf_counter() - t
    after_build = current_rss_mib()
    index.persist(args.index, overwrite=True)
    g = index.graph
    return {
        "stage": "build",
        "passages": len(dataset.passages),
        "units": g.n_units,
        "entities": g.n_entities,
        "build_s": round(build_s, 1),
        "floor_mib": round(floor, 1),
        "rss_after_build_mib": round(after_build, 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "disk_mib": round(dir_size_mib(args.index), 1),
        "files": {
            str(f.relative_to(args.index)): round(f.stat().st_size / MIB, 2)
            for f in sorted(args.index.rglob("*"))
            if f.is_file()
        },
    }


def stage_query(args: argparse.Namespace) -> dict[str, Any]:
    """Load the persisted index and answer the questions."""
    from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
    from graphrag_integrations.evaluation.datasets import load_dataset
    from graphrag_integrations.methods.clue.index import ClueIndex

    questions = load_dataset(args.data / "musique-100", limit=args.queries).questions
    embedder = SentenceTransformerEmbedder()
    embedder.embed(["warm up"])
    floor = current_rss_mib()
    t = time.perf_counter()
    index = ClueIndex.load(args.index, embedding=embedder)
    _ = index.graph  # the derived query-time arrays are part of loading
    load_s = time.perf_counter() - t
    after_load = current_rss_mib()
    t = time.perf_counter()
    answers = [[(r.passage.id, r.score) for r in index.retrieve(q.text, k=5)] for q in questions]
    query_s = time.perf_counter() - t
    if args.dump:
        args.dump.write_text(json.dumps(answers), encoding="utf-8")
    return {
        "stage": "query",
        "questions": len(questions),
        "load_s": round(load_s, 1),
        "query_ms_mean": round(1000 * query_s / max(len(questions), 1), 1),
        "floor_mib": round(floor, 1),
        "rss_after_load_mib": round(after_load, 1),
        "rss_after_queries_mib": round(current_rss_mib(), 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
    }


def run_stage(stage: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one stage in a fresh interpreter and return its JSON line."""
    cmd = [
        sys.executable,
        __file__,
        "--stage",
        stage,
        "--index",
        str(args.index),
        "--data",
        str(args.data),
        "--queries",
        str(args.queries),
    ]
    if args.dump:
        cmd += ["--dump", str(args.dump)]
    return fresh_process_json(cmd)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"), help="benchmark root")
    ap.add_argument("--index", type=Path, required=True, help="where the index is persisted")
    ap.add_argument("--queries", type=int, default=100, help="questions answered after load")
    ap.add_argument("--skip-build", action="store_true", help="reuse the index in --index")
    ap.add_argument(
        "--dump", type=Path, help="write the (passage id, score) lists of the answers (JSON) here"
    )
    ap.add_argument("--stage", choices=("build", "query"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stage:
        fn = stage_build if args.stage == "build" else stage_query
        print(json.dumps(fn(args)), flush=True)
        return
    results = [] if args.skip_build else [run_stage("build", args)]
    results.append(run_stage("query", args))
    for r in results:
        print(json.dumps(r, indent=1), flush=True)
    q = results[-1]
    verdict = "OK" if q["peak_rss_mib"] <= 1024 else "OVER"
    print(f"load + query peak RSS {q['peak_rss_mib']:.0f} MiB (goal <= 1024 MiB): {verdict}")


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
