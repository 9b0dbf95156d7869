"""What distractor passages cost Clue-RAG's global ranking, per seed / scope setting.

Usage (from the repository root; data from ``--data``, default ``../shared/data``)::

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python benchmarks/bench_clue_distractors.py \
        --seed-grid ppr_scope_hops=0,1,2 [--seed-grid ppr_damping=0.5,0.3] \
        [--variant links-only:ppr_fact_weight=0]

Two runs of the same questions (``--dataset``, default ``musique-100``): the plain corpus and
the corpus with ``--distractors`` appended (default ``2wiki-corpus``; same passages and order
as ``graphrag-integrations eval --distractors``). Each Clue index is built once and persisted
under ``--cache`` (the distractor index, 8,009 passages, takes ~15 min), dense runs in the same
process. Q-Iter runs once per question (its ranking and reached chunks are cached as
``signals-*.pkl``); every seed setting of ``--seed-grid`` (``ppr_*`` query options, cartesian
product) and of ``--variant`` (``default`` always there) walks once per question and is fused
with the default fusion. Per setting and run: R@5 of Q-Iter alone, the walk alone (its top
5), the fused ranking, the loss to the distractors; on the distractor run the walk's
distractor chunks in its top 5 (mean per question), the share of the entity seeds on
entities only distractors mention, the share of the walk's chunk mass on distractors, the
questions the fused ranking loses a gold chunk on, the time of one walk. Tune nothing on the
distractor run alone: check a setting on the plain dev sets with ``bench_clue_tune.py
--global-sweep --seed-grid ...`` (cross-fitted halves).
"""

from __future__ import annotations

import argparse
import pickle
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from bench_clue_tune import clue_index, evaluate, run_qiter, variants

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix, as_embedder
from graphrag_integrations.core.retrieval.ppr_seeds import query_seeds
from graphrag_integrations.evaluation.datasets import Dataset, load_dataset
from graphrag_integrations.methods.clue.global_ranking import (
    GlobalRanking,
    SeedSettings,
    fuse,
    ranking_graph,
)
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.params import ClueQueryParams


@dataclass
class Question:
    """One question's Q-Iter signals: gold rows, Q-Iter's ranking (every chunk reached,
    topped up to 5), its score of each reached chunk, the question and mention vectors."""

    gold: set[int]
    qiter: list[int]
    reached: dict[int, float]
    vector: FloatMatrix
    mentions: FloatMatrix


def signals(index: ClueIndex, dataset: Dataset, path: Path) -> list[Question]:
    """Q-Iter's signals of every question with gold passages (cached in ``path``)."""
    if path.exists():
        with path.open("rb") as handle:
            cached: list[Question] = pickle.load(handle)
        return cached
    qiter = index.as_retriever(k=5)
    flat = index.graph
    out: list[Question] = []
    for question in dataset.questions:
        if not question.gold_passage_ids:
            continue
        run = run_qiter(qiter, flat, question.text)
        gold = {flat.passage_row[p] for p in question.gold_passage_ids}
        out.append(Question(gold, run.order, run.reached, run.vector, run.mentions))
    with path.open("wb") as handle:
        pickle.dump(out, handle)
    return out


@dataclass
class Outcome:
    """Per question of one run and seed setting: R@5 of Q-Iter alone, the walk alone and the
    fused ranking; the walk's top-5 chunks that are distractors, the share of the entity
    seeds on entities that only distractors mention, the share of the chunk mass on
    distractors."""

    qiter: np.ndarray
    walk: np.ndarray
    fused: np.ndarray
    foreign: np.ndarray
    foreign_seeds: np.ndarray
    foreign_mass: np.ndarray
    seconds: float


def outcome(
    index: ClueIndex, questions: list[Question], params: ClueQueryParams, native: int
) -> Outcome:
    """Walk every question with ``params`` and fuse (chunk rows ``>= native``: distractors)."""
    flat = index.graph
    ranking = ranking_graph(index.store, flat, params.ppr_synonym_threshold)
    graph, full = ranking.graph, ranking.graph.full
    alien = np.asarray(graph.incidence[:native].sum(axis=0)).ravel() == 0
    qi: list[float] = []
    wa: list[float] = []
    fu: list[float] = []
    fo: list[float] = []
    fs: list[float] = []
    fm: list[float] = []
    seconds = 0.0
    for q in questions:
        start = time.perf_counter()
        walk = GlobalRanking.of(
            ranking, full, params, q.vector, q.mentions, flat.passage_matrix, q.reached
        )
        seconds += time.perf_counter() - start
        dense = np.asarray(flat.passage_matrix @ q.vector, dtype=np.float64)
        facts = np.asarray(graph.fact_vectors @ q.vector, dtype=np.float64)
        seeds = query_seeds(graph, full, SeedSettings.of(params), dense, facts, q.mentions)
        total = float(seeds.entities.sum())
        fs.append(float(seeds.entities[alien].sum()) / total if total > 0 else 0.0)
        mass = float(walk.mass.sum())
        fm.append(float(walk.mass[native:].sum()) / mass if walk.seeded and mass > 0 else 0.0)
        rows = walk.top(max(5, params.ppr_depth)) if walk.seeded else []
        fused = (
            [
                r
                for r, _ in fuse(
                    q.qiter, rows[: params.ppr_depth], params.ppr_weight, params.ppr_rrf_k, 5
                )
            ]
            if rows
            else q.qiter[:5]
        )
        for out, top in ((qi, q.qiter[:5]), (wa, rows[:5] or q.qiter[:5]), (fu, fused)):
            out.append(len(q.gold & set(top)) / len(q.gold))
        fo.append(sum(r >= native for r in rows[:5]))
    seconds /= max(1, len(questions))
    return Outcome(
        np.array(qi), np.array(wa), np.array(fu), np.array(fo), np.array(fs), np.array(fm), seconds
    )


def load(
    data: Path, name: str, distractors: str | None, embedder: Embedder, cache: Path
) -> tuple[Dataset, ClueIndex]:
    """The dataset (with the distractor corpus appended, renamed) and its cached index."""
    dataset = load_dataset(
        data / name, distractors=data / distractors if distractors is not None else None
    )
    if distractors is not None:
        dataset.name = f"{name}+{distractors}"
    return dataset, clue_index(dataset, embedder, {}, cache)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--dataset", default="musique-100")
    ap.add_argument("--distractors", default="2wiki-corpus")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/clue-distract"))
    ap.add_argument("--seed-grid", action="append", default=[], help="key=v1,v2 (ppr_* seeds)")
    ap.add_argument("--variant", action="append", default=[], help="name:key=v,key=v")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    embedder = as_embedder(None)
    settings = variants(args.seed_grid, args.variant)
    results: dict[str, dict[str, Outcome]] = {name: {} for name in settings}
    dense: dict[str, float] = {}
    native = 0
    for run, extra in (("plain", None), ("distractors", args.distractors)):
        dataset, index = load(args.data, args.dataset, extra, embedder, args.cache)
        native = native or len(dataset.passages)
        retriever = DenseRetriever.from_passages(dataset.passages, embedding=embedder)
        dense[run] = 100 * float(evaluate(retriever, dataset).r5.mean())
        questions = signals(index, dataset, args.cache / f"signals-{dataset.name}.pkl")
        for name, opts in settings.items():
            params: Any = index.as_retriever(k=5, **opts).query_params
            results[name][run] = outcome(index, questions, params, native)
        print(f"{run}: {len(dataset.passages)} passages, done", flush=True)
    report(results, dense)


def report(results: dict[str, dict[str, Outcome]], dense: dict[str, float]) -> None:
    """One row per seed setting: R@5 plain -> distractors (loss) of each ranking."""
    print(
        f"dense R@5 {dense['plain']:.1f} -> {dense['distractors']:.1f} "
        f"({dense['distractors'] - dense['plain']:+.1f})"
    )
    head = [
        "setting",
        "Q-Iter",
        "walk",
        "fused",
        "fused-loss - dense-loss",
        "walk foreign/q",
        "foreign seeds",
        "foreign mass",
        "fused lost q",
        "ms/walk",
    ]
    print("\t".join(head))
    loss = dense["distractors"] - dense["plain"]
    for name, runs in results.items():
        plain, noisy = runs["plain"], runs["distractors"]
        cells = [name]
        for kind in ("qiter", "walk", "fused"):
            a = 100 * float(getattr(plain, kind).mean())
            b = 100 * float(getattr(noisy, kind).mean())
            cells.append(f"{a:.1f} -> {b:.1f} ({b - a:+.1f})")
        gap = 100 * float(noisy.fused.mean() - plain.fused.mean()) - loss
        cells += [
            f"{gap:+.1f}",
            f"{float(noisy.foreign.mean()):.2f}",
            f"{float(noisy.foreign_seeds.mean()):.3f}",
            f"{float(noisy.foreign_mass.mean()):.3f}",
            str(int(np.sum(noisy.fused < plain.fused))),
            f"{1000 * noisy.seconds:.0f}",
        ]
        print("\t".join(cells))


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()
    main()
