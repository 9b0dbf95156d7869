"""Dense queries through the Python API beside a CPU-bound process: the library's thread
default against torch's own count.

Usage (from the repository root)::

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=src \\
        python benchmarks/bench_library_threads.py [--busy 1] [--queries 40] [--settle 0]

The parent starts ``--busy`` processes spinning on the CPU (``python -c 'while True: pass'``),
waits ``--settle`` seconds (so that the load average sees them), then runs one child, a plain
library user: it sets no thread count, builds a ``DenseRetriever`` over the sample corpus with
the default MiniLM (the package applies its default, ``core.threads.default_thread_limit``,
when it loads the model) and times ``retrieve(question, k=5)``, alternating query by query
between the count the package chose and torch's own count (one thread per core, what a
library user got before), so a change in the machine's load hits both alike. It prints
p50 / p95 per count and the ratio torch's own / the package's. With
``GRAPHRAG_INTEGRATIONS_THREADS=off`` in the environment the package leaves torch alone (both
columns then use torch's count). Results: ``docs/reference/failures.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "examples" / "data" / "sample_corpus"
QUESTIONS = [
    "Who directed the film shot near Leland, North Carolina in 1986?",
    "Which town lies in Brunswick County, North Carolina?",
    "Who composed music at the court of Frederick the Great?",
    "What video game series was named after a rally driver?",
]


def child(queries: int) -> dict[str, float]:
    """Time the dense query path with the package's count and with torch's own, alternating."""
    import torch

    own = torch.get_num_threads()  # before the package touches anything
    from threadpoolctl import threadpool_limits

    from graphrag_integrations import DenseRetriever

    index = DenseRetriever.from_documents(CORPUS)
    chosen = torch.get_num_threads()  # what the package applied when it loaded MiniLM
    index.retrieve(QUESTIONS[0], k=5)  # warm-up
    times: dict[int, list[float]] = {chosen: [], own: []}
    for i in range(queries):
        for n in dict.fromkeys((chosen, own)):
            torch.set_num_threads(n)
            threadpool_limits(n)
            start = time.perf_counter()
            index.retrieve(QUESTIONS[i % len(QUESTIONS)], k=5)
            times[n].append(time.perf_counter() - start)
    out = {"package_threads": float(chosen), "torch_threads": float(own)}
    for label, n in (("package", chosen), ("torch", own)):
        t = sorted(times[n])
        out[f"{label}_p50_ms"] = 1000 * statistics.median(t)
        out[f"{label}_p95_ms"] = 1000 * t[int(0.95 * (len(t) - 1))]
    out["load1"] = os.getloadavg()[0]
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--child", action="store_true", help="measure in this process")
    ap.add_argument("--busy", type=int, default=1, help="CPU-spinning processes beside it")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--settle", type=float, default=0.0, help="seconds between spin and run")
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.queries)))
        return
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.busy)]
    try:
        time.sleep(a.settle)
        cmd = [sys.executable, __file__, "--child", "--queries", str(a.queries)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    r = json.loads(out.strip().splitlines()[-1])
    print(f"cores={os.cpu_count()} busy={a.busy} queries={a.queries} load1={r['load1']:.1f}")
    print("| threads | chosen by | p50 ms | p95 ms |")
    print("|---|---|---|---|")
    for label, by in (("package", "the package (default)"), ("torch", "torch (before)")):
        print(
            f"| {int(r[f'{label}_threads'])} | {by} | {r[f'{label}_p50_ms']:.1f} "
            f"| {r[f'{label}_p95_ms']:.1f} |"
        )
    print(
        f"torch's own / the package's default, p50: {r['torch_p50_ms'] / r['package_p50_ms']:.2f}x"
    )


if __name__ == "__main__":
    main()
