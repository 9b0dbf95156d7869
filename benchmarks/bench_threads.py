"""Intra-op threads per process, idle and beside CPU-bound processes: which default is faster.

Usage (from the repository root)::

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=src \\
        python benchmarks/bench_threads.py --table [--threads 1,2] [--busy 0,2]

``--table`` runs one child process per (threads, busy) pair and prints a Markdown table;
``busy`` is the number of ``python -c 'while True: pass'`` processes started beside the
child (and killed after it). A child measures the dense query path (MiniLM ``embed_query``
plus a dot product over 1,000 unit vectors; p50 / p95 of ``--queries`` queries after one
warm-up) and a short SmolLM2-135M generation (``--tokens`` new tokens, greedy; p50 of
``--gens`` runs after one warm-up); models load before timing. The thread count is applied
with :func:`~graphrag_integrations.core.threads.apply_thread_limit` (the CLI's helper).
``--paired`` runs one child per busy level that alternates the thread counts query by query
and generation by generation, so a change of the machine's load hits every count alike.
Results: docs/lab/threads.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from graphrag_integrations.core.threads import apply_thread_limit

QUESTIONS = [
    "Who designed the Analytical Engine?",
    "Which river flows through Warsaw?",
    "When was the Eiffel Tower completed?",
    "What is the capital of Australia?",
]


def child(threads: list[int], queries: int, gens: int, tokens: int) -> dict[int, dict[str, float]]:
    """Time the dense query path and a short generation with each count of ``threads``,
    alternating the counts call by call."""
    apply_thread_limit(threads[0])
    import torch

    from graphrag_integrations.core.encoders.embeddings import as_embedder
    from graphrag_integrations.core.llm.transformers_lm import TransformersLLM

    embedder = as_embedder(None)
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((1000, embedder.dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    llm = TransformersLLM(max_new_tokens=tokens)
    prompt = "Question: What is the capital of France?\nAnswer:"
    embedder.embed_query(QUESTIONS[0])
    llm.complete(prompt, max_tokens=tokens)  # loads the model: not timed
    dense: dict[int, list[float]] = {n: [] for n in threads}
    gen: dict[int, list[float]] = {n: [] for n in threads}
    for i in range(queries):
        for n in threads:
            apply_thread_limit(n)
            t = time.perf_counter()
            scores = vectors @ np.asarray(embedder.embed_query(QUESTIONS[i % len(QUESTIONS)]))
            np.argsort(-scores)[:10]
            dense[n].append(time.perf_counter() - t)
    for _ in range(gens):
        for n in threads:
            apply_thread_limit(n)
            t = time.perf_counter()
            llm.complete(prompt, max_tokens=tokens)
            gen[n].append(time.perf_counter() - t)
    out = {}
    for n in threads:
        d = sorted(dense[n])
        out[n] = {
            "torch_threads": float(n),
            "dense_p50_ms": 1000 * statistics.median(d),
            "dense_p95_ms": 1000 * d[int(0.95 * (len(d) - 1))],
            "gen_p50_s": statistics.median(gen[n]),
            "load1": os.getloadavg()[0],
        }
    assert torch.get_num_threads() == threads[-1]
    return out


def table(threads: list[int], busy: list[int], args: argparse.Namespace) -> None:
    """One child per (busy, threads) pair, each beside ``busy`` spinning processes."""
    print(f"tokens={args.tokens}, queries={args.queries}, gens={args.gens}, cores={os.cpu_count()}")
    print("| busy procs | threads | dense p50 ms | dense p95 ms | gen p50 s | load1 |")
    print("|---|---|---|---|---|---|")
    groups = [threads] if args.paired else [[n] for n in threads]
    for b in busy:
        for group in groups:
            spinners = [
                subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(b)
            ]
            try:
                cmd = [sys.executable, __file__, "--child", ",".join(map(str, group))]
                cmd += ["--queries", str(args.queries), "--gens", str(args.gens)]
                cmd += ["--tokens", str(args.tokens)]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            finally:
                for p in spinners:
                    p.kill()
                    p.wait()
            for n, r in json.loads(out.strip().splitlines()[-1]).items():
                print(
                    f"| {b} | {n} | {r['dense_p50_ms']:.1f} | {r['dense_p95_ms']:.1f} "
                    f"| {r['gen_p50_s']:.2f} | {r['load1']:.1f} |",
                    flush=True,
                )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--table", action="store_true", help="run every (busy, threads) pair")
    ap.add_argument("--paired", action="store_true", help="alternate the counts in one child")
    ap.add_argument("--child", help="measure in this process with these thread counts")
    ap.add_argument("--threads", default="1,2", help="thread counts of --table")
    ap.add_argument("--busy", default="0,2", help="spinning processes of --table")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--gens", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=24)
    a = ap.parse_args(argv)
    if a.child is not None:
        counts = [int(x) for x in a.child.split(",")]
        print(json.dumps(child(counts, a.queries, a.gens, a.tokens)))
        return
    apply_thread_limit(None)
    ints = [[int(x) for x in s.split(",")] for s in (a.threads, a.busy)]
    table(ints[0], ints[1], a)


if __name__ == "__main__":
    main()
