"""Tune the personalized-PageRank baseline on the dev sets, cross-fitted, against dense.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_ppr.py [--sets musique-100,hotpotqa-100,2wiki-dev-100]
        [--cache /tmp/ppr-cache] [--rounds 2]

Each set's index is built once (and persisted to ``--cache``; a later run loads it); each
question is embedded and parsed once (:meth:`PPRRetriever.signals`), then every setting ranks
from those signals. Settings are chosen by coordinate ascent on the mean R@5 over the three
sets, on the first half of each set's questions (A) and reported on the second (B), then the
other way round: one setting for all sets per direction. The dense baseline (the index's own
dense side, the same vectors as ``--method dense``) is scored on the same questions in the
same process; the paper's constants (``preset=paper``) and LinearRAG's activation are
printed beside them, and the setting chosen on all questions (the default of
:class:`~graphrag_integrations.baselines.ppr_params.PPRQueryParams`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphrag_integrations.baselines.ppr import PPRRetriever, QuerySignals
from graphrag_integrations.baselines.ppr_params import PPRQueryParams
from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
from graphrag_integrations.evaluation.datasets import Question, load_dataset
from graphrag_integrations.evaluation.metrics import recall_at_k

SETS = ("musique-100", "hotpotqa-100", "2wiki-dev-100")

#: The values coordinate ascent tries per option (query params; ``synonym_threshold`` is the
#: index option, relinked in place).
GRID: dict[str, tuple[Any, ...]] = {
    "passage_node_weight": (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0),
    "damping": (0.3, 0.5, 0.7, 0.85),
    "fact_top_k": (0, 3, 5, 10, 20),
    "link_weight": (0.0, 0.25, 0.5, 1.0, 2.0),
    "link_threshold": (0.6, 0.7, 0.8, 0.9),
    "link_k": (1, 2, 3),
    "linking_top_k": (0, 3, 5, 10, 20),
    "specificity": (True, False),
    "passage_seeds": (0, 5, 10, 20, 50),
    "activation_steps": (0, 1, 2),
    "synonym_threshold": (0.7, 0.8, 0.9, 1.0),
}


#: The default with one part removed (``--ablate``).
ABLATIONS: dict[str, dict[str, Any]] = {
    "no query links": {"link_weight": 0.0},
    "no facts": {"fact_top_k": 0},
    "no activation": {"activation_steps": 0},
    "no specificity": {"specificity": False},
    "no passage seeds": {"passage_node_weight": 0.0},
    "synonyms at 1.0 only": {"synonym_threshold": 1.0},
    "all entity seeds": {"linking_top_k": 0},
}


@dataclass
class Prepared:
    """One set: its index and, per question, the signals and the gold passage ids."""

    name: str
    index: PPRRetriever
    questions: list[Question]
    signals: list[QuerySignals]


def prepare(data: Path, name: str, cache: Path, embedder: Any) -> Prepared:
    """Build (or load) the set's index and compute every question's signals."""
    dataset = load_dataset(data / name)
    target = cache / name
    start = time.perf_counter()
    if (target / "manifest.json").exists():
        index = PPRRetriever.load(target, embedding=embedder)
        how = "loaded"
    else:
        index = PPRRetriever.from_passages(dataset.passages, embedding=embedder)
        index.persist(target, overwrite=True)
        how = "built"
    took = time.perf_counter() - start
    graph = index.graph
    print(
        f"{name}: {how} in {took:.1f}s: {len(index.passages)} passages, "
        f"{len(graph.entity_names)} entities, {graph.fact_vectors.shape[0]} facts, "
        f"{len(index.synonyms)} synonym edges",
        flush=True,
    )
    questions = list(dataset.questions)
    signals = [index.signals(q.text, entities=True) for q in questions]
    return Prepared(name, index, questions, signals)


def recall(p: Prepared, rows: range, params: PPRQueryParams | None, k: int = 5) -> float:
    """Mean R@k (percent) of questions ``rows``: PPR under ``params``, dense with ``None``."""
    total = 0.0
    for i in rows:
        sig, q = p.signals[i], p.questions[i]
        if params is None:
            ranked = sorted(range(len(sig.dense)), key=lambda j: -sig.dense[j])[:k]
            ids = [p.index.passages[j].id for j in ranked]
        else:
            with p.index.using_query_params(params):
                ids = [h.id for h in p.index.rank(sig, k)]
        total += recall_at_k(ids, q.gold_passage_ids, k)
    return 100.0 * total / max(len(rows), 1)


def half(p: Prepared, which: str) -> range:
    """Questions of half ``A`` (first), ``B`` (second) or ``all``."""
    middle = len(p.questions) // 2
    if which == "all":
        return range(len(p.questions))
    return range(middle) if which == "A" else range(middle, len(p.questions))


def score(sets: Sequence[Prepared], which: str, options: dict[str, Any]) -> list[float]:
    """R@5 per set on half ``which`` with ``options`` (query params + synonym threshold)."""
    query = {k: v for k, v in options.items() if k != "synonym_threshold"}
    params = PPRQueryParams.from_options(query)
    out = []
    for p in sets:
        threshold = options.get("synonym_threshold", 0.8)
        if p.index.index_params.synonym_threshold != threshold:
            p.index.relink_synonyms(threshold)
        out.append(recall(p, half(p, which), params))
    return out


def ascend(
    sets: Sequence[Prepared], which: str, start: dict[str, Any], rounds: int
) -> dict[str, Any]:
    """Coordinate ascent of the mean R@5 on half ``which`` from ``start``."""
    best = dict(start)
    best_score = statistics.mean(score(sets, which, best))
    for _ in range(rounds):
        improved = False
        for name, values in GRID.items():
            for value in values:
                if best.get(name) == value:
                    continue
                trial = {**best, name: value}
                got = statistics.mean(score(sets, which, trial))
                if got > best_score + 1e-9:
                    best, best_score, improved = trial, got, True
        print(f"  half {which}: {best_score:.2f} with {best}", flush=True)
        if not improved:
            break
    return best


def report(sets: Sequence[Prepared], label: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """R@5 of ``options`` (``None``: dense) on both halves and all questions, per set."""
    row: dict[str, Any] = {"setting": label}
    for p in sets:
        if options is None:
            row[p.name] = [recall(p, half(p, h), None) for h in ("A", "B")]
        else:
            row[p.name] = [score([p], h, options)[0] for h in ("A", "B")]
    return row


def print_rows(rows: Sequence[dict[str, Any]], sets: Sequence[Prepared]) -> None:
    """R@5 table: per set halves A / B and the mean; the ratio of the mean to dense's."""
    dense = rows[0]
    print(
        f"{'setting':<22}" + "".join(f"{p.name:>24}" for p in sets) + f"{'mean':>8}{'vs dense':>10}"
    )
    dense_mean = statistics.mean(sum(dense[p.name]) / 2 for p in sets)
    for row in rows:
        means = [sum(row[p.name]) / 2 for p in sets]
        cells = "".join(
            f"{row[p.name][0]:>8.1f}{row[p.name][1]:>8.1f}{m:>8.1f}"
            for p, m in zip(sets, means, strict=True)
        )
        total = statistics.mean(means)
        print(f"{row['setting']:<22}{cells}{total:>8.1f}{total / dense_mean:>9.2f}x")


def latency(p: Prepared, params: PPRQueryParams, repeats: int = 30) -> tuple[float, float]:
    """p50 seconds of a whole ``retrieve`` (embedding, parsing, walk) and of dense's."""
    queries = [q.text for q in p.questions[:repeats]]
    ppr, dense = [], []
    with p.index.using_query_params(params):
        for text in queries:
            start = time.perf_counter()
            p.index.retrieve(text, k=5)
            ppr.append(time.perf_counter() - start)
            start = time.perf_counter()
            p.index.dense.retrieve(text, k=5)
            dense.append(time.perf_counter() - start)
    return statistics.median(ppr), statistics.median(dense)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep and print the cross-fitted table (and ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ppr-cache"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--ablate", action="store_true", help="no tuning: the default with each part removed"
    )
    args = parser.parse_args(argv)
    embedder = SentenceTransformerEmbedder()
    sets = [prepare(args.data, name, args.cache, embedder) for name in args.sets.split(",")]
    if args.ablate:
        default = {**PPRQueryParams().values(), "synonym_threshold": 0.8}
        rows = [report(sets, "dense", None), report(sets, "default", default)]
        rows += [report(sets, label, {**default, **change}) for label, change in ABLATIONS.items()]
        print_rows(rows, sets)
        return 0
    start: dict[str, Any] = {**PPRQueryParams().values(), "synonym_threshold": 0.8}
    chosen = {h: ascend(sets, h, start, args.rounds) for h in ("A", "B", "all")}
    rows = [
        report(sets, "dense", None),
        report(sets, "paper (HippoRAG 2)", {**PPRQueryParams.preset("paper").values()}),
        report(sets, "linearrag", {**PPRQueryParams.preset("linearrag").values()}),
        report(sets, "default", start),
        report(sets, "chosen on A", chosen["A"]),
        report(sets, "chosen on B", chosen["B"]),
        report(sets, "chosen on all", chosen["all"]),
    ]
    print_rows(rows, sets)
    print("cross-fitted (chosen on A, reported on B and vice versa):")
    for p in sets:
        held = (score([p], "B", chosen["A"])[0] + score([p], "A", chosen["B"])[0]) / 2
        dense = statistics.mean(report([p], "dense", None)[p.name])
        print(f"  {p.name}: ppr {held:.1f}  dense {dense:.1f}  ratio {held / dense:.2f}x")
    for p in sets:
        p.index.relink_synonyms(0.8)
        ppr_s, dense_s = latency(p, PPRQueryParams())
        print(
            f"{p.name}: p50 ppr {ppr_s * 1000:.1f} ms, dense {dense_s * 1000:.1f} ms, "
            f"ratio {ppr_s / dense_s:.1f}x"
        )
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "chosen": chosen}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
