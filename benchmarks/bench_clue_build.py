"""CPU seconds of the dense and the Clue build of a set, in one process, as ``eval`` builds them.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_clue_build.py \
        ../shared/data/2wiki-dev-100 [--repeat 2] [--clue-option excluded_labels=DATE]

Both methods are built through their registrations with one shared, warmed-up embedder (as
``graphrag-integrations eval`` does) and one torch thread; each line gives the process's CPU
seconds (``getrusage``: all threads, so the Clue build's background spaCy thread counts) and
the wall seconds of each build, and the Clue / dense ratios. On a shared machine the wall
ratio moves with the load of the other jobs; the CPU ratio is the steadier figure.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from graphrag_integrations.core.encoders.embeddings import as_embedder
from graphrag_integrations.core.params import key_values
from graphrag_integrations.evaluation.datasets import load_dataset
from graphrag_integrations.evaluation.harness import dataset_inputs
from graphrag_integrations.evaluation.registry import get_registration


def cpu_seconds() -> float:
    """User plus system CPU seconds of this process (all threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--repeat", type=int, default=1, help="build both this many times")
    ap.add_argument("--clue-option", action="append", default=[], help="key=value")
    args = ap.parse_args()
    dataset = load_dataset(args.dataset)
    embedder = as_embedder(None)
    embedder.embed_query("warm-up")
    options = {"dense": {}, "clue": key_values(args.clue_option)}
    for _ in range(args.repeat):
        cpu: dict[str, float] = {}
        wall: dict[str, float] = {}
        for name in ("dense", "clue"):
            registration = get_registration(name)
            parsed = registration.parse_options(options[name])
            inputs = dataset_inputs(dataset, registration)
            start_cpu, start_wall = cpu_seconds(), time.perf_counter()
            registration.build(embedder, inputs, parsed, show_progress=False)
            cpu[name] = cpu_seconds() - start_cpu
            wall[name] = time.perf_counter() - start_wall
        print(
            f"{dataset.name} ({len(dataset.passages)} passages): CPU dense {cpu['dense']:.1f} s, "
            f"clue {cpu['clue']:.1f} s ({cpu['clue'] / cpu['dense']:.2f}x); wall dense "
            f"{wall['dense']:.1f} s, clue {wall['clue']:.1f} s "
            f"({wall['clue'] / wall['dense']:.2f}x)",
            flush=True,
        )


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit(1)
    main()
