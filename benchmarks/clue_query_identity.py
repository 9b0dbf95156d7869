"""Record, or compare with a record, the top-10 of Clue's and the ``ppr`` baseline's defaults on
the three 100-question dev sets: a query-path speed-up must leave them unchanged.

Usage (from the repository root; the default Clue index loaded from ``--cache``, or built and
written there, as ``bench_clue_tune.py`` does; the ``ppr`` index built in the process)::

    HF_HUB_OFFLINE=1 python benchmarks/clue_query_identity.py record /tmp/ref.json
    HF_HUB_OFFLINE=1 python benchmarks/clue_query_identity.py compare /tmp/ref.json

``compare`` prints the number of rankings whose passage ids or order differ or whose scores
differ by more than ``--tolerance``, and exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench_clue_tune import clue_index

from graphrag_integrations.baselines.ppr import PPRRetriever
from graphrag_integrations.core.encoders.embeddings import as_embedder
from graphrag_integrations.core.types import Retriever
from graphrag_integrations.evaluation.datasets import load_dataset

SETS = ("musique-100", "hotpotqa-100", "2wiki-dev-100")

Rankings = dict[str, list[list[tuple[str, float]]]]


def rankings(data: Path, cache: Path, sets: list[str]) -> Rankings:
    """The top 10 (passage id, score) of every question, per set and method."""
    embedder = as_embedder(None)
    out: Rankings = {}
    for name in sets:
        dataset = load_dataset(data / name)
        clue = clue_index(dataset, embedder, {}, cache)  # default index options
        ppr = PPRRetriever.from_passages(dataset.passages, embedding=embedder)
        methods: tuple[tuple[str, Retriever], ...] = (
            ("clue", clue.as_retriever(k=10)),
            ("ppr", ppr),
        )
        for label, retriever in methods:
            out[f"{name}/{label}"] = [
                [(hit.passage.id, float(hit.score)) for hit in retriever.retrieve(q.text, k=10)]
                for q in dataset.questions
            ]
    return out


def differences(reference: Rankings, current: Rankings, tolerance: float) -> tuple[int, int, float]:
    """(rankings compared, rankings that differ, largest score difference)."""
    compared = differ = 0
    worst = 0.0
    for key, rows in current.items():
        for i, (old, new) in enumerate(zip(reference[key], rows, strict=True)):
            compared += 1
            if [pid for pid, _ in old] != [pid for pid, _ in new]:
                differ += 1
                print(f"order differs: {key} question {i}", flush=True)
                continue
            gap = max((abs(a[1] - b[1]) for a, b in zip(old, new, strict=True)), default=0.0)
            worst = max(worst, gap)
            if gap > tolerance:
                differ += 1
                print(f"scores differ by {gap:.2e}: {key} question {i}", flush=True)
    return compared, differ, worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("record", "compare"))
    ap.add_argument("path", type=Path)
    ap.add_argument("sets", nargs="*", default=list(SETS))
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/clue-cache"))
    ap.add_argument("--tolerance", type=float, default=1e-6)
    args = ap.parse_args()
    current = rankings(args.data, args.cache, args.sets)
    if args.mode == "record":
        args.path.write_text(json.dumps(current))
        print(f"recorded {sum(len(v) for v in current.values())} rankings")
        return
    reference: Rankings = {
        key: [[(pid, score) for pid, score in row] for row in rows]
        for key, rows in json.loads(args.path.read_text()).items()
    }
    compared, differ, worst = differences(reference, current, args.tolerance)
    print(f"compared {compared} rankings: {differ} differ; largest score difference {worst:.2e}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
