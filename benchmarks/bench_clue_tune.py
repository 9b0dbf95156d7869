"""Cross-fitted sweep of Q-Iter's query options on the three 100-question dev sets.

Usage (from the repository root; data from ``--data``, default ``../shared/data``)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_clue_tune.py \
        --grid M=5,8 --grid path_weight=0.5,1.0 [--variant name:K=4,D=2] [--latency]

Each set's Clue index is built once and persisted under ``--cache`` (reused while the
index-time options, ``--index-option key=json``, stay the same); the dense baseline runs in
the same process. Every variant (the grid's product plus the named ones; ``default`` is
always there) is evaluated on every question; the table gives R@5 per set and per half (A:
first half of the questions, B: the rest). Constants are chosen by cross-fitting: the
variant with the best mean R@5 over halves A of ALL sets is checked on halves B, and vice
versa (one set of constants for all sets, never one set alone). ``--latency`` only times the
defaults against dense, question by question in turn (wall and CPU p50: on a shared machine
the load moves between two sequential runs).

``--global-sweep`` tunes the global ranking
(:mod:`~graphrag_integrations.methods.clue.global_ranking`) from cached per-question signals:
Q-Iter runs once per question (its chunk ranking, every chunk reached), each seed setting of
``--seed-grid`` walks once per question, and every fusion setting of ``--fusion-grid`` is
scored from those lists; same cross-fitting::

    python benchmarks/bench_clue_tune.py --global-sweep \
        --seed-grid ppr_passage_node_weight=0.05,0.2 --fusion-grid ppr_weight=1,2,3

``--rerank-sweep`` re-ranks the default fusion from cached per-candidate evidence
(:class:`Evidence`, pickled under ``--cache`` with the dense run): every setting of
``--rerank-grid`` (keys of :func:`rerank`) gets R@5, R@2 and MRR; ``--select`` is the metric
the halves choose by::

    python benchmarks/bench_clue_tune.py --rerank-sweep --select mrr \
        --rerank-grid ppr_keep_margin=null,0.02,0.1 --variant "t:title=1,title_depth=10"
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix, as_embedder
from graphrag_integrations.core.params import key_values
from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.core.text.chunking import split_title
from graphrag_integrations.core.types import Passage, Retriever
from graphrag_integrations.evaluation.datasets import Dataset, load_dataset
from graphrag_integrations.evaluation.metrics import recall_at_k
from graphrag_integrations.methods.clue.global_ranking import (
    GlobalRanking,
    fuse,
    keep_leader,
    ranking_graph,
)
from graphrag_integrations.methods.clue.graph import ClueGraph
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.params import ClueIndexParams, ClueQueryParams
from graphrag_integrations.methods.clue.qiter import QIter, Trace
from graphrag_integrations.methods.clue.scoring import Query
from graphrag_integrations.methods.clue.statistics import tokenize

SETS = ("musique-100", "hotpotqa-100", "2wiki-dev-100")


@dataclass
class Run:
    """Per-question recall of one retriever on one set, and its query latencies."""

    r2: np.ndarray
    r5: np.ndarray
    seconds: np.ndarray

    def half(self, which: str) -> float:
        """Mean R@5 (percent) of half ``"A"`` (first), ``"B"`` (rest) or ``"all"``."""
        mid = len(self.r5) // 2
        part = {"A": self.r5[:mid], "B": self.r5[mid:], "all": self.r5}[which]
        return 100.0 * float(part.mean())


def evaluate(retriever: Retriever, dataset: Dataset) -> Run:
    """Retrieve the top 5 for every question with gold passages."""
    r2, r5, seconds = [], [], []
    for q in dataset.questions:
        if not q.gold_passage_ids:
            continue
        start = time.perf_counter()
        hits = retriever.retrieve(q.text, k=5)
        seconds.append(time.perf_counter() - start)
        ids = [h.passage.id for h in hits]
        r2.append(recall_at_k(ids, list(q.gold_passage_ids), 2))
        r5.append(recall_at_k(ids, list(q.gold_passage_ids), 5))
    return Run(np.array(r2), np.array(r5), np.array(seconds))


def interleaved_latency(dense: Retriever, clue: Retriever, dataset: Dataset) -> str:
    """p50 wall and CPU (this thread) of each question, dense and Clue in turn, so both see
    the same machine load; returns one line with the Clue / dense ratios."""
    wall: dict[str, list[float]] = {"dense": [], "clue": []}
    cpu: dict[str, list[float]] = {"dense": [], "clue": []}
    for q in dataset.questions:
        for name, retriever in (("dense", dense), ("clue", clue)):
            start, started = time.perf_counter(), time.thread_time()
            retriever.retrieve(q.text, k=5)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.thread_time() - started)
    p50 = {
        f"{kind} {name}": 1000 * float(np.median(values[name]))
        for kind, values in (("wall", wall), ("cpu", cpu))
        for name in values
    }
    return (
        f"{dataset.name}: p50 wall dense {p50['wall dense']:.1f} ms, clue "
        f"{p50['wall clue']:.1f} ms ({p50['wall clue'] / p50['wall dense']:.2f}x); CPU dense "
        f"{p50['cpu dense']:.1f} ms, clue {p50['cpu clue']:.1f} ms "
        f"({p50['cpu clue'] / p50['cpu dense']:.2f}x)"
    )


def clue_index(
    dataset: Dataset, embedder: Embedder, options: dict[str, Any], cache: Path
) -> ClueIndex:
    """The set's Clue index with these index options: loaded from ``cache`` or built."""
    tag = hashlib.sha1(json.dumps(options, sort_keys=True).encode()).hexdigest()[:8]
    where = cache / f"{dataset.name}-{tag}"
    if where.exists():
        return ClueIndex.load(where, embedding=embedder)
    start = time.perf_counter()
    index = ClueIndex.from_passages(
        dataset.passages, embedding=embedder, index_params=ClueIndexParams(**options)
    )
    print(f"built {dataset.name} in {time.perf_counter() - start:.1f}s", flush=True)
    index.persist(where)
    return index


@dataclass
class Signals:
    """Per question of one set: Q-Iter's chunk ranking (every chunk reached, topped up to 5)
    and, per seed setting, the global ranking's top 40 (``None``: no entity seed)."""

    gold: list[set[int]]
    qiter: list[list[int]]
    walks: dict[str, list[list[int] | None]]


@dataclass
class QIterRun:
    """One question through Q-Iter's stages (its defaults), with what they produce: the
    query, its vectors, the anchors, the chunk ranking (``deep``: every chunk reached), each
    chunk's final score and the paths behind it."""

    query: Query
    vector: FloatMatrix
    mentions: FloatMatrix
    anchors: list[int]
    order: list[int]
    final: dict[int, float]
    support: dict[int, list[Any]]

    @property
    def reached(self) -> dict[int, float]:
        """Q-Iter's final score of each chunk a kept path reached, by row."""
        return {row: self.final[row] for row in self.support}


def run_qiter(qiter: QIter, flat: ClueGraph, text: str) -> QIterRun:
    """Run Q-Iter's stages on one question over the flat view ``flat``."""
    trace = Trace()
    names, _ = qiter.query_entities(text)
    vector, mentions = qiter._embed(text, names)  # its signals
    query = Query(text, vector, tuple(tokenize(text)))
    anchors = qiter.anchor(query, mentions, trace, flat)
    trace.kept = qiter.search(query, anchors, flat)
    order, final, support = qiter.chunk_ranking(flat, query, trace, 5, deep=True)
    return QIterRun(query, vector, mentions, anchors, order, final, dict(support))


def global_signals(index: ClueIndex, dataset: Dataset, seeds: dict[str, dict[str, Any]]) -> Signals:
    """Run Q-Iter (defaults) and the global ranking of every seed setting once per question."""
    qiter = index.as_retriever(k=5)
    flat = index.graph
    out = Signals([], [], {name: [] for name in seeds})
    settings = {name: qiter.query_params.with_overrides(opts) for name, opts in seeds.items()}
    for question in dataset.questions:
        if not question.gold_passage_ids:
            continue
        out.gold.append({flat.passage_row[p] for p in question.gold_passage_ids})
        run = run_qiter(qiter, flat, question.text)
        out.qiter.append(run.order)
        vector, mentions, reached = run.vector, run.mentions, run.reached
        for name, params in settings.items():
            ranking = ranking_graph(index.store, flat, params.ppr_synonym_threshold)
            full = ranking.graph.full
            walk = GlobalRanking.of(
                ranking, full, params, vector, mentions, flat.passage_matrix, reached
            )
            out.walks[name].append(walk.top(40) if walk.seeded else None)
    return out


def sweep_fusion(
    signals: dict[str, Signals],
    dense: dict[str, Run],
    fusion: dict[str, dict[str, Any]],
    sets: Sequence[str],
) -> None:
    """R@5 of every (seed setting, fusion setting) from the cached lists; cross-fitted
    choice as in :func:`report` (Q-Iter alone and the top 15 by halves A are printed)."""
    rows: list[tuple[str, dict[str, list[float]], dict[str, float]]] = []
    seeds = next(iter(signals.values())).walks
    combos = [("Q-Iter alone", "", {"ppr_weight": 0.0})]
    combos += [(s, f, opts) for s in seeds for f, opts in fusion.items()]
    for seed, label, opts in combos:
        defaults = ClueQueryParams()
        params = {
            "ppr_weight": defaults.ppr_weight,
            "ppr_rrf_k": defaults.ppr_rrf_k,
            "ppr_depth": defaults.ppr_depth,
            **opts,
        }
        per_set: dict[str, list[float]] = {}
        for name in sets:
            sig = signals[name]
            recalls = []
            for i, gold in enumerate(sig.gold):
                walk = sig.walks[seed][i] if seed in sig.walks else None
                if walk is None or params["ppr_weight"] <= 0:
                    top = sig.qiter[i][:5]
                else:
                    fused = fuse(
                        sig.qiter[i],
                        walk[: int(params["ppr_depth"])],
                        params["ppr_weight"],
                        params["ppr_rrf_k"],
                        5,
                    )
                    top = [r for r, _ in fused]
                recalls.append(len(gold & set(top)) / len(gold))
            per_set[name] = recalls
        gains = {
            h: float(np.mean([_half(per_set[n], h) - dense[n].half(h) for n in sets]))
            for h in ("A", "B")
        }
        rows.append((f"{seed} | {label}", per_set, gains))
    print("\t".join(["variant", *[f"{n[:7]} R@5 A/B" for n in sets], "-dense A", "B"]))
    dense_row = [
        f"{dense[n].half('all'):.1f} ({dense[n].half('A'):.1f}/{dense[n].half('B'):.1f})"
        for n in sets
    ]
    print("\t".join(["dense", *dense_row]))
    for label, per_set, gains in [rows[0], *sorted(rows[1:], key=lambda r: -r[2]["A"])[:15]]:
        cells = [_cell(per_set[n]) for n in sets]
        print("\t".join([label, *cells, f"{gains['A']:+.1f}", f"{gains['B']:+.1f}"]))
    for chose, check in (("A", "B"), ("B", "A")):
        best = max(rows, key=lambda r: r[2][chose])
        print(
            f"chosen on halves {chose}: {best[0]} ({best[2][chose]:+.1f} over dense); on halves "
            f"{check}: {best[2][check]:+.1f}; per set all: "
            + ", ".join(f"{n} {_half(best[1][n], 'all'):.1f}" for n in sets)
        )


WALK_ANCHORS = (2, 4, 8)
FEATURES = ("chunk_fused", "chunk_cos", "unit_cos", "unit_fused", "mass", "path", "qiter")


@dataclass
class Evidence:
    """One question's candidates (Q-Iter's deep ranking's top 30 and the walk's top 40, by
    row) with one column per :data:`FEATURES` entry, and the idf-weighted question terms
    each contains (``terms``: candidates x distinct question terms, ``idf`` per term)."""

    gold: set[int]
    qiter: list[int]
    walk: list[int] | None
    rows: list[int]
    features: np.ndarray
    terms: np.ndarray
    title_terms: np.ndarray
    title_sizes: np.ndarray
    idf: np.ndarray
    anchored: dict[int, list[int]]


def evidence_signals(index: ClueIndex, dataset: Dataset) -> list[Evidence]:
    """Run Q-Iter and the global ranking (defaults) once per question and collect every
    candidate's evidence (see :class:`Evidence`)."""
    qiter = index.as_retriever(k=5)
    flat = index.graph
    params = qiter.query_params
    scorer = qiter.scorer_for(flat)
    chunk_units: dict[int, list[int]] = {}
    for unit, row in enumerate(flat.unit_passage.tolist()):
        chunk_units.setdefault(int(row), []).append(unit)
    ranking = ranking_graph(index.store, flat, params.ppr_synonym_threshold)
    out: list[Evidence] = []
    for question in dataset.questions:
        if not question.gold_passage_ids:
            continue
        run = run_qiter(qiter, flat, question.text)
        q, vector, mentions, anchors = run.query, run.vector, run.mentions, run.anchors
        order, final, support, reached = run.order, run.final, run.support, run.reached
        walk = GlobalRanking.of(
            ranking, ranking.graph.full, params, vector, mentions, flat.passage_matrix, reached
        )
        walk_rows = walk.top(40) if walk.seeded else None
        anchored = {}
        for extra in WALK_ANCHORS:  # Q-Iter again, from the walk's top entities as well
            named = (ranking.graph.entity_names[e] for e in top_k(walk.entity_mass, 4 * extra))
            rows_of = [flat.entity_row[n] for n in named if n in flat.entity_row]
            more = [e for e in dict.fromkeys(rows_of) if e not in anchors][:extra]
            again = Trace()
            again.kept = qiter.search(q, [*anchors, *more], flat)
            anchored[extra] = qiter.chunk_ranking(flat, q, again, 5, deep=True)[0]
        rows = list(dict.fromkeys([*order[:30], *(walk_rows or [])]))
        units = [chunk_units.get(r, []) for r in rows]
        flat_units = [u for us in units for u in us]
        unit_cos = flat.unit_matrix[flat_units] @ vector if flat_units else np.zeros(0)
        unit_fused = scorer.score_paths(q, [(u,) for u in flat_units])
        best_cos, best_fused, at = [], [], 0
        for us in units:
            best_cos.append(float(unit_cos[at : at + len(us)].max()) if us else 0.0)
            best_fused.append(float(unit_fused[at : at + len(us)].max()) if us else 0.0)
            at += len(us)
        columns = [
            scorer.score_passages(q, rows),
            flat.passage_matrix[rows] @ vector,
            np.array(best_cos),
            np.array(best_fused),
            walk.mass[rows],
            np.array([max((s.score for s in support.get(r, [])), default=0.0) for r in rows]),
            np.array([final.get(r, 0.0) for r in rows]),
        ]
        terms = [t for t in dict.fromkeys(q.tokens)]
        idf = np.array([flat.passage_terms.idf(t) for t in terms], dtype=np.float64)
        present = flat.passage_terms.term_counts(rows, terms) > 0
        titles = [set(tokenize(split_title(flat.passage(r))[0])) for r in rows]
        in_title = np.array([[t in title for t in terms] for title in titles], dtype=np.float64)
        out.append(
            Evidence(
                {flat.passage_row[p] for p in question.gold_passage_ids},
                order,
                walk_rows,
                rows,
                np.stack([np.asarray(c, dtype=np.float64) for c in columns], axis=1),
                present.astype(np.float64),
                in_title.reshape(len(rows), len(terms)),
                np.array([len(title) for title in titles], dtype=np.float64),
                idf,
                anchored,
            )
        )
    return out


def cached_dense(dense: Callable[[], Retriever], dataset: Dataset, cache: Path) -> Run:
    """:func:`evaluate` of the dense baseline (built by ``dense`` only when not cached),
    pickled under ``cache`` (its latencies are those of the first run)."""
    where = cache / f"dense-{dataset.name}.pkl"
    if where.exists():
        with where.open("rb") as f:
            loaded: Run = pickle.load(f)
        return loaded
    run = evaluate(dense(), dataset)
    with where.open("wb") as f:
        pickle.dump(run, f)
    return run


def cached_evidence(index: ClueIndex, dataset: Dataset, cache: Path) -> list[Evidence]:
    """:func:`evidence_signals` of the set, pickled under ``cache`` next to its index (the
    file is keyed by the index's version and the query defaults)."""
    tag = (index.store.version, ClueQueryParams(), FEATURES, WALK_ANCHORS)
    key = hashlib.sha1(repr(tag).encode()).hexdigest()[:8]
    where = cache / f"evidence-{dataset.name}-{key}.pkl"
    if where.exists():
        with where.open("rb") as f:
            loaded: list[Evidence] = pickle.load(f)
        return loaded
    found = evidence_signals(index, dataset)
    with where.open("wb") as f:
        pickle.dump(found, f)
    return found


def rerank(ev: Evidence, opts: dict[str, Any]) -> list[int]:
    """The top 5 of one rerank setting from a question's cached evidence.

    ``opts``: the default fusion's ``ppr_*`` (``ppr_weight`` 0: Q-Iter alone) and
    ``ppr_keep_margin`` (:func:`keep_leader`; ``null``: off); the re-ranking of the fused top
    ``pool`` (default 5) by the fused score over its maximum plus, per :data:`FEATURES` name,
    ``w * (rrf + 1) / (rrf + rank)`` (its rank in the pool), plus ``title`` for a chunk whose
    title words all occur in the question (``title_depth``: the walk's top chunks that join
    the pool for it, with no fused score), picked greedily with ``cover`` x the idf share of
    the question terms not yet covered by the chunks picked before (from the second pick);
    ``walk_anchors`` (one of :data:`WALK_ANCHORS`): Q-Iter's ranking from the walk's top
    entities as extra anchors instead (no ``ppr_keep_margin`` then).
    """
    defaults = ClueQueryParams()
    weight = float(opts.get("ppr_weight", defaults.ppr_weight))
    k = float(opts.get("ppr_rrf_k", defaults.ppr_rrf_k))
    depth = int(opts.get("ppr_depth", defaults.ppr_depth))
    pool = int(opts.get("pool", 5))
    qiter = ev.anchored[int(opts["walk_anchors"])] if opts.get("walk_anchors") else ev.qiter
    if ev.walk is None or weight <= 0:
        fused = [(r, 1.0 / (k + i)) for i, r in enumerate(qiter[:pool], start=1)]
    else:
        fused = fuse(qiter, ev.walk[:depth], weight, k, pool)
        have = {r for r, _ in fused}
        fused += [(r, 0.0) for r in ev.walk[: int(opts.get("title_depth", 0))] if r not in have]
    rescored = any(opts.get(n) for n in (*FEATURES, "title", "cover"))
    order = _rescore(ev, fused, opts) if rescored else [r for r, _ in fused]
    margin = opts.get("ppr_keep_margin", defaults.ppr_keep_margin)
    if ev.walk is not None and weight > 0 and qiter is ev.qiter:
        scores = {r: float(ev.features[i, FEATURES.index("qiter")]) for i, r in enumerate(ev.rows)}
        order = [r for r, _ in keep_leader([(r, 0.0) for r in order], ev.qiter, scores, margin)]
    return order[:5]


def _rescore(ev: Evidence, fused: list[tuple[int, float]], opts: dict[str, Any]) -> list[int]:
    """The pool ordered by its evidence (see :func:`rerank`)."""
    rows = [r for r, _ in fused]
    where = [ev.rows.index(r) for r in rows]
    feats = ev.features[where]
    rrf = float(opts.get("rrf", 5.0))
    score = np.array([s for _, s in fused]) / max(fused[0][1], 1e-9)
    for j, name in enumerate(FEATURES):
        w = float(opts.get(name, 0.0))
        if w:
            ranks = np.empty(len(rows))
            ranks[np.argsort(-feats[:, j], kind="stable")] = np.arange(1, len(rows) + 1)
            score = score + w * (rrf + 1) / (rrf + ranks)
    in_title = ev.title_terms[where].sum(axis=1)
    contained = (ev.title_sizes[where] > 0) & (in_title >= ev.title_sizes[where])
    score = score + float(opts.get("title", 0.0)) * contained
    cover = float(opts.get("cover", 0.0))
    terms, uncovered = ev.terms[where], np.ones(ev.idf.size)
    left, picked = list(range(len(rows))), list[int]()
    total = float(ev.idf.sum()) or 1.0
    while left:
        gain = score[left]
        if picked and cover:
            gain = gain + cover * (terms[left] @ (ev.idf * uncovered)) / total
        best = left.pop(int(np.argmax(gain)))
        picked.append(rows[best])
        uncovered = uncovered * (1.0 - terms[best])
    return picked


def sweep_rerank(
    evidence: dict[str, list[Evidence]],
    dense: dict[str, Run],
    settings: dict[str, dict[str, Any]],
    sets: Sequence[str],
    select: str = "r5",
) -> None:
    """R@5, R@2 and MRR (of the top 5) of every rerank setting from the cached evidence;
    the cross-fitted choice on ``select`` over halves A, checked on B, and back (``r5``: the
    mean over the sets of R@5 - dense; ``r2`` / ``mrr``: the mean of that metric)."""
    settings = {"Q-Iter alone": {"ppr_weight": 0.0}, **settings}
    rows = []
    for label, opts in settings.items():
        metrics: dict[str, dict[str, list[float]]] = {}
        for name in sets:
            r5, r2, rr = [], [], []
            for ev in evidence[name]:
                top = rerank(ev, opts)
                r5.append(len(ev.gold & set(top)) / len(ev.gold))
                r2.append(len(ev.gold & set(top[:2])) / len(ev.gold))
                rr.append(next((1.0 / i for i, r in enumerate(top, 1) if r in ev.gold), 0.0))
            metrics[name] = {"r5": r5, "r2": r2, "mrr": rr}
        gains = {
            h: float(np.mean([_half(metrics[n]["r5"], h) - dense[n].half(h) for n in sets]))
            for h in ("A", "B")
        }
        if select != "r5":  # the mean over the sets of that metric, no dense baseline
            gains = {h: float(np.mean([_half(metrics[n][select], h) for n in sets])) for h in gains}
        rows.append((label, metrics, gains))
    head = [f"{n[:7]} R@5 A/B\tR@2\tMRR" for n in sets]
    print("\t".join(["variant", *head, f"{select} A", "B"]))
    for label, metrics, gains in rows:
        cells = [
            f"{_cell(metrics[n]['r5'])}\t{_half(metrics[n]['r2'], 'all'):.1f}\t"
            f"{_half(metrics[n]['mrr'], 'all') / 100:.3f}"
            for n in sets
        ]
        print("\t".join([label, *cells, f"{gains['A']:+.2f}", f"{gains['B']:+.2f}"]))
    base = next(r for r in rows if r[0] == "default")
    for chose, check in (("A", "B"), ("B", "A")):
        best = max(rows, key=lambda r: r[2][chose])
        print(
            f"chosen on halves {chose}: {best[0]} ({select} {best[2][chose]:+.2f}); on halves "
            f"{check}: {best[2][check]:+.2f} (default {base[2][check]:+.2f})"
        )


def _cell(values: list[float]) -> str:
    """``all (A/B)`` R@5 of one set."""
    return f"{_half(values, 'all'):.1f} ({_half(values, 'A'):.1f}/{_half(values, 'B'):.1f})"


def _half(values: list[float], which: str) -> float:
    mid = len(values) // 2
    part = {"A": values[:mid], "B": values[mid:], "all": values}[which]
    return 100.0 * float(np.mean(part))


def variants(grid: Sequence[str], named: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``default`` plus the grid's cartesian product plus the named variants."""
    out: dict[str, dict[str, Any]] = {"default": {}}
    axes = [(key, values.split(",")) for key, values in (g.split("=", 1) for g in grid)]
    for combo in itertools.product(*(values for _, values in axes)):
        opts = {key: json.loads(v) for (key, _), v in zip(axes, combo, strict=True)}
        if opts:
            out[",".join(f"{k}={v}" for k, v in opts.items())] = opts
    for item in named:
        name, _, spec = item.partition(":")
        out[name] = {k: json.loads(v) for k, v in key_values(spec.split(",")).items()}
    return out


def sweep_arguments(ap: argparse.ArgumentParser) -> None:
    """The sets, data and cache folders, ``--grid`` and ``--variant`` of the Clue sweeps."""
    ap.add_argument("sets", nargs="*", default=list(SETS))
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/clue-cache"))
    ap.add_argument("--grid", action="append", default=[], help="key=v1,v2 (JSON values)")
    ap.add_argument("--variant", action="append", default=[], help="name:key=v,key=v")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sweep_arguments(ap)
    ap.add_argument("--index-option", action="append", default=[], help="key=json")
    ap.add_argument(
        "--latency", action="store_true", help="only the interleaved dense / Clue p50 (defaults)"
    )
    ap.add_argument("--global-sweep", action="store_true", help="tune the global ranking")
    ap.add_argument("--seed-grid", action="append", default=[], help="key=v1,v2 (ppr_* seeds)")
    ap.add_argument("--fusion-grid", action="append", default=[], help="key=v1,v2 (fusion)")
    ap.add_argument(
        "--rerank-sweep", action="store_true", help="re-rank the fused top N from evidence"
    )
    ap.add_argument("--rerank-grid", action="append", default=[], help="key=v1,v2 (rerank)")
    ap.add_argument(
        "--select", choices=("r5", "r2", "mrr"), default="r5", help="metric the halves choose by"
    )
    args = ap.parse_args()
    embedder = as_embedder(None)
    embedder.embed_query("warm-up")
    index_options = {k: json.loads(v) for k, v in key_values(args.index_option).items()}
    todo = variants(args.grid, args.variant)
    results: dict[str, dict[str, Run]] = {name: {} for name in ["dense", *todo]}
    signals: dict[str, Signals] = {}
    evidence: dict[str, list[Evidence]] = {}
    for name in args.sets:
        dataset = load_dataset(args.data / name)
        index = clue_index(dataset, embedder, index_options, args.cache)

        def dense_baseline(passages: Sequence[Passage] = dataset.passages) -> Retriever:
            return DenseRetriever.from_passages(passages, embedding=embedder)

        if args.latency:
            dense = dense_baseline()
            clue = index.as_retriever(k=5)
            clue.retrieve("warm-up question")
            print(interleaved_latency(dense, clue, dataset), flush=True)
            continue
        results["dense"][name] = cached_dense(dense_baseline, dataset, args.cache)
        if args.rerank_sweep:
            evidence[name] = cached_evidence(index, dataset, args.cache)
            print(f"{name}: evidence done", flush=True)
            continue
        if args.global_sweep:
            signals[name] = global_signals(index, dataset, variants(args.seed_grid, []))
            print(f"{name}: signals done", flush=True)
            continue
        for label, opts in todo.items():
            results[label][name] = evaluate(index.as_retriever(k=5, **opts), dataset)
        print(f"{name}: {len(todo)} variants done", flush=True)
    if args.rerank_sweep:
        settings = variants(args.rerank_grid, args.variant)
        sweep_rerank(evidence, results["dense"], settings, args.sets, args.select)
    elif args.global_sweep:
        sweep_fusion(signals, results["dense"], variants(args.fusion_grid, []), args.sets)
    elif not args.latency:
        report(results, args.sets)


def report(results: dict[str, dict[str, Run]], sets: Sequence[str]) -> None:
    """Table of R@5 (all / A / B per set), R@2, p50; then the cross-fitted choice."""
    head = ["variant"]
    for name in sets:
        head += [f"{name[:7]} R@5", "A", "B", "R@2", "p50"]
    print("\t".join([*head, "mean-dense A", "mean-dense B"]))
    gains: dict[str, dict[str, float]] = {}
    dense = results["dense"]
    for label, runs in results.items():
        row = [label]
        for name in sets:
            run = runs[name]
            row += [f"{run.half(h):.1f}" for h in ("all", "A", "B")]
            row += [f"{100 * run.r2.mean():.1f}", f"{1000 * np.median(run.seconds):.0f}"]
        gains[label] = {
            h: float(np.mean([runs[n].half(h) - dense[n].half(h) for n in sets]))
            for h in ("A", "B")
        }
        print("\t".join([*row, f"{gains[label]['A']:+.1f}", f"{gains[label]['B']:+.1f}"]))
    candidates = [label for label in results if label != "dense"]
    for chose, check in (("A", "B"), ("B", "A")):
        best = max(candidates, key=lambda label: gains[label][chose])
        print(
            f"chosen on halves {chose}: {best} ({gains[best][chose]:+.1f} over dense); "
            f"on halves {check}: {gains[best][check]:+.1f} (default "
            f"{gains['default'][check]:+.1f})"
        )


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()
    main()
