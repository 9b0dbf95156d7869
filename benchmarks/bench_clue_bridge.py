"""Second-hop ("bridge") queries from Clue's first chunks, fused into its ranking (issue 31).

In the spirit of multi-hop dense retrieval (MDR) and IRCoT's retrieval step, with no training
and no LLM: for each of the default fused ranking's top ``m`` chunks ``c``, a bridge query is
the question joined with ``c`` (``text``: its whole text, ``unit``: its unit nearest the
question, ``title``: its title; one encode each) or the question's vector plus / minus ``c``'s
(``plus``, ``minus``, ``uplus``: plus its nearest unit's vector; no encode). Every chunk is
scored by cosine with it (``chunk``: the index's chunk vectors; ``unit``: the best of the
chunk's units), the ``m`` chunks themselves left out, and the bridge ranking joins the
default reciprocal-rank fusion (Q-Iter's ranking + the walk's top 5) with weight ``w`` / ``m``
per chunk and constant ``bk`` (its top ``depth``); the default's first ``freeze`` chunks stay
where they are, then ``ppr_keep_margin`` as in Clue. ``pool`` (> 0): the bridge rankings keep
only Q-Iter's chunks and the walk's top ``pool``; ``fill`` (> 0): the default's first
``5 - fill`` chunks, then the bridge rankings' chunks in turn (no fusion).

Usage (from the repository root; indexes, dense runs and the ``--rerank-sweep`` evidence of
``bench_clue_tune.py`` are reused from ``--cache``, the bridge rankings are cached there too)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_clue_bridge.py \
        --grid variant='"text"','"plus"' --grid m=1,2 --grid w=0.5,1 [--latency]

Constants are cross-fitted as in ``bench_clue_tune.py``: the setting with the best mean over
the three sets of R@5 minus dense on halves A (first 50 questions) is checked on halves B,
and the reverse. ``--latency`` times, question by question in turn, dense, Clue (defaults)
and the bridge step on Clue's answer (``--latency-variant`` / ``--latency-m``): p50 of wall
and ``time.process_time``. ``--reach``: where the gold chunks the default misses are in the
bridge rankings and in the walk's.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from bench_clue_tune import (
    FEATURES,
    Evidence,
    Run,
    _cell,
    _half,
    cached_dense,
    cached_evidence,
    clue_index,
    rerank,
    sweep_arguments,
    variants,
)

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix, as_embedder
from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.core.text.chunking import split_title
from graphrag_integrations.core.types import Retriever
from graphrag_integrations.evaluation.datasets import Dataset, load_dataset
from graphrag_integrations.methods.clue.global_ranking import keep_leader
from graphrag_integrations.methods.clue.graph import ClueGraph
from graphrag_integrations.methods.clue.params import ClueQueryParams

#: Bridge queries built with the encoder (one encode per chunk) and by vector arithmetic.
ENCODED = ("text", "unit", "title")
ARITHMETIC = ("plus", "minus", "uplus")
VARIANTS = (*ENCODED, *ARITHMETIC)
TARGETS = ("chunk", "unit")
MAX_M = 3
DEPTH = 20  # bridge ranking rows kept per (question, chunk, variant, target)


@dataclass
class Bridge:
    """One question: the default fused order's first :data:`MAX_M` chunks (``seeds``) and,
    per ``(variant, target)``, one bridge ranking per seed (top :data:`DEPTH` rows, the seeds
    left out)."""

    seeds: list[int]
    ranked: dict[tuple[str, str], list[list[int]]]


class BridgeQueries:
    """Bridge query vectors and rankings over one Clue index's flat view."""

    def __init__(self, flat: ClueGraph, embedder: Embedder) -> None:
        self.flat = flat
        self.embedder = embedder
        owner = np.asarray(flat.unit_passage, dtype=np.int64)
        self.unit_order = np.argsort(owner, kind="stable")
        sorted_owner = owner[self.unit_order]
        self.starts = np.flatnonzero(np.r_[True, sorted_owner[1:] != sorted_owner[:-1]])
        self.unit_rows = sorted_owner[self.starts]
        self.units_of = dict(
            zip(self.unit_rows.tolist(), np.split(self.unit_order, self.starts[1:]), strict=True)
        )

    def nearest_unit(self, row: int, question: FloatMatrix) -> int | None:
        """The chunk's unit nearest the question (``None``: the chunk has no unit)."""
        units = self.units_of.get(row)
        if units is None or units.size == 0:
            return None
        return int(units[int(np.argmax(self.flat.unit_matrix[units] @ question))])

    def texts(
        self, variant: str, question: str, vector: FloatMatrix, rows: Sequence[int]
    ) -> list[str]:
        """The texts to encode for an :data:`ENCODED` variant."""
        out = []
        for row in rows:
            passage = self.flat.passage(row)
            if variant == "text":
                extra = passage.text
            elif variant == "title":
                extra = split_title(passage)[0]
            else:
                unit = self.nearest_unit(row, vector)
                extra = self.flat.unit_text(unit) if unit is not None else passage.text
            out.append(f"{question} {extra}")
        return out

    def vectors(
        self, variant: str, question: str, vector: FloatMatrix, rows: Sequence[int]
    ) -> FloatMatrix:
        """One bridge query vector per chunk row (rows of the result)."""
        if variant in ENCODED:
            return self.embedder.embed(self.texts(variant, question, vector, rows))
        out = []
        for row in rows:
            if variant == "uplus":
                unit = self.nearest_unit(row, vector)
                other = self.flat.unit_matrix[unit] if unit is not None else vector * 0
            else:
                other = self.flat.passage_matrix[row]
            sign = -0.5 if variant == "minus" else 1.0
            v = vector + sign * other
            out.append(v / max(float(np.linalg.norm(v)), 1e-9))
        return np.stack(out).astype(np.float32)

    def rankings(
        self, bridge: FloatMatrix, target: str, leave_out: Sequence[int]
    ) -> list[list[int]]:
        """Per bridge vector, the chunk rows best first (top :data:`DEPTH`, ``leave_out``
        excluded): by chunk cosine or by the best unit cosine of each chunk."""
        if target == "chunk":
            scores = np.asarray(self.flat.passage_matrix @ bridge.T, dtype=np.float64)
        else:
            per_unit = np.asarray(self.flat.unit_matrix @ bridge.T, dtype=np.float64)
            best = np.maximum.reduceat(per_unit[self.unit_order], self.starts, axis=0)
            scores = np.full((len(self.flat.passage_ids), bridge.shape[0]), -np.inf)
            scores[self.unit_rows] = best
        scores[list(leave_out)] = -np.inf
        return [[int(r) for r in top_k(scores[:, j], DEPTH)] for j in range(bridge.shape[0])]


def bridge_signals(
    index_flat: ClueGraph, embedder: Embedder, dataset: Dataset, evidence: list[Evidence]
) -> list[Bridge]:
    """Every question's :class:`Bridge` from the default fused top 5 (``rerank(ev, {})``)."""
    queries = BridgeQueries(index_flat, embedder)
    questions = [q for q in dataset.questions if q.gold_passage_ids]
    out = []
    for question, ev in zip(questions, evidence, strict=True):
        seeds = rerank(ev, {})[:MAX_M]
        vector = embedder.embed([question.text])[0]
        ranked = {}
        for variant in VARIANTS:
            bridge = queries.vectors(variant, question.text, vector, seeds)
            for target in TARGETS:
                ranked[variant, target] = queries.rankings(bridge, target, seeds)
        out.append(Bridge(seeds, ranked))
    return out


def cached_bridge(
    flat: ClueGraph, embedder: Embedder, dataset: Dataset, evidence: list[Evidence], cache: Path
) -> list[Bridge]:
    """:func:`bridge_signals`, pickled under ``cache`` (keyed by the evidence's seeds)."""
    seeds = [rerank(ev, {})[:MAX_M] for ev in evidence]
    key = hashlib.sha1(repr((seeds, VARIANTS, TARGETS, DEPTH)).encode()).hexdigest()[:8]
    where = cache / f"bridge-{dataset.name}-{key}.pkl"
    if where.exists():
        with where.open("rb") as f:
            loaded: list[Bridge] = pickle.load(f)
        return loaded
    found = bridge_signals(flat, embedder, dataset, evidence)
    with where.open("wb") as f:
        pickle.dump(found, f)
    return found


def bridged(ev: Evidence, br: Bridge, opts: dict[str, Any]) -> list[int]:
    """The top 5 of one setting (module docstring; ``w`` 0: the default)."""
    defaults = ClueQueryParams()
    default = rerank(ev, {})
    w = float(opts.get("w", 0.0))
    if w <= 0 or ev.walk is None:
        return default
    k, weight = defaults.ppr_rrf_k, defaults.ppr_weight
    m = int(opts.get("m", 1))
    chosen = br.ranked[str(opts.get("variant", "text")), str(opts.get("target", "chunk"))][:m]
    if int(opts.get("pool", 0)) > 0:  # only Q-Iter's chunks and the walk's top ``pool``
        allowed = {*ev.qiter, *ev.walk[: int(opts["pool"])]}
        chosen = [[r for r in ranking if r in allowed] for ranking in chosen]
    fill = int(opts.get("fill", 0))
    if fill > 0:  # the default's first 5 - fill, then the bridge rankings in turn
        top = default[: 5 - fill]
        turns = (ranking[i] for i in range(DEPTH) for ranking in chosen if i < len(ranking))
        for row in turns:
            if len(top) < 5 and row not in top:
                top.append(row)
        return top
    bk, depth = float(opts.get("bk", 3.0)), int(opts.get("depth", 5))
    scores: dict[int, float] = {}
    for rank, row in enumerate(ev.qiter, start=1):
        scores[row] = scores.get(row, 0.0) + 1.0 / (k + rank)
    for rank, row in enumerate(ev.walk[: defaults.ppr_depth], start=1):
        scores[row] = scores.get(row, 0.0) + weight / (k + rank)
    for ranking in chosen:
        for rank, row in enumerate(ranking[:depth], start=1):
            scores[row] = scores.get(row, 0.0) + (w / m) / (bk + rank)
    freeze = default[: int(opts.get("freeze", 1))]
    at = {r: i for i, r in enumerate(scores)}  # ties: Q-Iter's order, the walk's, the bridge's
    rest = sorted((r for r in scores if r not in freeze), key=lambda r: (-scores[r], at[r]))
    ranked = [*freeze, *rest][:5]
    qscores = {r: float(ev.features[i, FEATURES.index("qiter")]) for i, r in enumerate(ev.rows)}
    kept = keep_leader([(r, 0.0) for r in ranked], ev.qiter, qscores, defaults.ppr_keep_margin)
    return [r for r, _ in kept]


def reach(evidence: dict[str, list[Evidence]], bridges: dict[str, list[Bridge]]) -> None:
    """Per variant and target: the share of the gold chunks missing from the default top 5
    that the bridge rankings of the first ``m`` chunks hold in their top 1 / 5 / 20 (union
    over the ``m`` rankings; all three sets together), ``m`` = 1 and 3, and of the top 5's
    the share the walk's top 20 does not hold already."""
    print("variant\ttarget\tm\tmissed gold in bridge top 1 / 5 / 20 (%)\ttop 5, not walk top 20")
    for variant in VARIANTS:
        for target in TARGETS:
            for m in (1, MAX_M):
                found, new, missed = np.zeros(3), 0, 0
                for name in evidence:
                    for ev, br in zip(evidence[name], bridges[name], strict=True):
                        lost = ev.gold - set(rerank(ev, {}))
                        missed += len(lost)
                        for i, depth in enumerate((1, 5, 20)):
                            held = {
                                r for rank in br.ranked[variant, target][:m] for r in rank[:depth]
                            }
                            found[i] += len(lost & held)
                            if depth == 5:
                                new += len(lost & held - set((ev.walk or [])[:20]))
                share = " / ".join(f"{100 * x / max(missed, 1):.1f}" for x in found)
                fresh = 100 * new / max(missed, 1)
                print(f"{variant}\t{target}\t{m}\t{share} (of {missed})\t{fresh:.1f}")
    walk = np.zeros(2)
    for name in evidence:
        for ev in evidence[name]:
            lost = ev.gold - set(rerank(ev, {}))
            walk += [len(lost & set((ev.walk or [])[:depth])) for depth in (10, 20)]
    print(
        "the walk's top 10 / 20 hold " + " / ".join(f"{100 * x / max(missed, 1):.1f}" for x in walk)
    )


def sweep(
    evidence: dict[str, list[Evidence]],
    bridges: dict[str, list[Bridge]],
    dense: dict[str, Run],
    settings: dict[str, dict[str, Any]],
    sets: Sequence[str],
    show: int,
) -> None:
    """R@5 (all (A / B)) and R@2 per set of every setting; the best ``show`` by halves A,
    the best of each variant, and the cross-fitted choices."""
    rows = []
    for label, opts in settings.items():
        r5s: dict[str, list[float]] = {}
        r2s: dict[str, list[float]] = {}
        for name in sets:
            r5, r2 = [], []
            for ev, br in zip(evidence[name], bridges[name], strict=True):
                top = bridged(ev, br, opts)
                r5.append(len(ev.gold & set(top)) / len(ev.gold))
                r2.append(len(ev.gold & set(top[:2])) / len(ev.gold))
            r5s[name], r2s[name] = r5, r2
        gains = {
            h: float(np.mean([_half(r5s[n], h) - dense[n].half(h) for n in sets]))
            for h in ("A", "B")
        }
        r2mean = {h: float(np.mean([_half(r2s[n], h) for n in sets])) for h in ("A", "B")}
        rows.append((label, opts, r5s, r2s, gains, r2mean))
    head = [f"{n[:7]} R@5 all (A/B)\tR@2" for n in sets]
    print("\t".join(["setting", *head, "-dense A", "B", "R@2 A", "B"]))

    def line(row: tuple[Any, ...]) -> str:
        label, _, r5s, r2s, gains, r2mean = row
        cells = [f"{_cell(r5s[n])}\t{_half(r2s[n], 'all'):.1f}" for n in sets]
        means = [f"{gains['A']:+.2f}", f"{gains['B']:+.2f}", f"{r2mean['A']:.2f}"]
        return "\t".join([label, *cells, *means, f"{r2mean['B']:.2f}"])

    base = rows[0]
    print(line(base))
    print(f"-- best {show} by halves A")
    for row in sorted(rows[1:], key=lambda r: -r[4]["A"])[:show]:
        print(line(row))
    print(f"-- best {show} by halves B")
    for row in sorted(rows[1:], key=lambda r: -r[4]["B"])[:show]:
        print(line(row))
    print("-- best of each variant x target by halves A")
    for variant in VARIANTS:
        for target in TARGETS:
            mine = [
                r
                for r in rows[1:]
                if (r[1].get("variant"), r[1].get("target")) == (variant, target)
            ]
            if mine:
                print(line(max(mine, key=lambda r: r[4]["A"])))
    above = [r for r in rows[1:] if r[4]["A"] > base[4]["A"] and r[4]["B"] > base[4]["B"]]
    print(f"-- settings above the default on both halves: {len(above)} of {len(rows) - 1}")
    for row in sorted(above, key=lambda r: -(r[4]["A"] + r[4]["B"]))[:show]:
        print(line(row))
    for name in sets:  # in-sample ceiling of the grid, per set
        best = max(rows, key=lambda r: _half(r[2][name], "all"))
        print(f"in-sample best on {name}: {_cell(best[2][name])} ({best[0]})")
    for chose, check in (("A", "B"), ("B", "A")):
        best = max(rows, key=lambda r: r[4][chose])
        print(
            f"chosen on halves {chose}: {best[0]} ({best[4][chose]:+.2f}); on halves {check}: "
            f"{best[4][check]:+.2f} (default {base[4][check]:+.2f}); per set all: "
            + ", ".join(f"{n} {_half(best[2][n], 'all'):.1f}" for n in sets)
        )


def latency(
    dense: Retriever,
    clue: Retriever,
    queries: BridgeQueries,
    dataset: Dataset,
    variant: str,
    m: int,
) -> str:
    """p50 wall and ``process_time`` of dense, Clue and the bridge step on Clue's answer
    (encode or arithmetic, the cosine scan, the fusion's extra term), question by question."""
    flat = queries.flat
    wall: dict[str, list[float]] = {"dense": [], "clue": [], "bridge": []}
    cpu: dict[str, list[float]] = {"dense": [], "clue": [], "bridge": []}
    target = "chunk"
    for q in dataset.questions:
        for name in ("dense", "clue"):
            start, started = time.perf_counter(), time.process_time()
            hits = (dense if name == "dense" else clue).retrieve(q.text, k=5)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - started)
        start, started = time.perf_counter(), time.process_time()
        seeds = [flat.passage_row[h.passage.id] for h in hits[:m]]
        vector = queries.embedder.embed([q.text])[0]  # Clue holds it already: not counted below
        wall_q, cpu_q = time.perf_counter() - start, time.process_time() - started
        bridge = queries.vectors(variant, q.text, vector, seeds)
        queries.rankings(bridge, target, seeds)
        wall["bridge"].append(time.perf_counter() - start - wall_q)
        cpu["bridge"].append(time.process_time() - started - cpu_q)
    p50 = {
        (kind, name): 1000 * float(np.median(values[name]))
        for kind, values in (("wall", wall), ("cpu", cpu))
        for name in values
    }
    return (
        f"{dataset.name} ({variant}, m {m}, {m if variant in ENCODED else 0} extra encodes): "
        + "; ".join(
            f"{kind} p50 dense {p50[kind, 'dense']:.1f} ms, clue {p50[kind, 'clue']:.1f}, bridge "
            f"+{p50[kind, 'bridge']:.1f} (clue + bridge / dense "
            f"{(p50[kind, 'clue'] + p50[kind, 'bridge']) / p50[kind, 'dense']:.2f}x, clue alone "
            f"{p50[kind, 'clue'] / p50[kind, 'dense']:.2f}x)"
            for kind in ("wall", "cpu")
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sweep_arguments(ap)
    ap.add_argument("--show", type=int, default=12, help="rows printed per list")
    ap.add_argument("--latency", action="store_true", help="only time dense, Clue, bridge")
    ap.add_argument("--reach", action="store_true", help="missed gold in the bridge rankings")
    ap.add_argument("--latency-variant", default="text", choices=VARIANTS)
    ap.add_argument("--latency-m", type=int, default=2)
    args = ap.parse_args()
    embedder = as_embedder(None)
    embedder.embed_query("warm-up")
    dense: dict[str, Run] = {}
    evidence: dict[str, list[Evidence]] = {}
    bridges: dict[str, list[Bridge]] = {}
    for name in args.sets:
        dataset = load_dataset(args.data / name)
        index = clue_index(dataset, embedder, {}, args.cache)
        if args.latency:
            clue = index.as_retriever(k=5)
            clue.retrieve("warm-up question")
            baseline = DenseRetriever.from_passages(dataset.passages, embedding=embedder)
            queries = BridgeQueries(index.graph, embedder)
            print(
                latency(baseline, clue, queries, dataset, args.latency_variant, args.latency_m),
                flush=True,
            )
            continue

        def dense_baseline(ds: Dataset = dataset) -> Retriever:
            return DenseRetriever.from_passages(ds.passages, embedding=embedder)

        dense[name] = cached_dense(dense_baseline, dataset, args.cache)
        evidence[name] = cached_evidence(index, dataset, args.cache)
        bridges[name] = cached_bridge(index.graph, embedder, dataset, evidence[name], args.cache)
        print(f"{name}: bridge rankings done", flush=True)
    if args.reach:
        reach(evidence, bridges)
    elif not args.latency:
        sweep(evidence, bridges, dense, variants(args.grid, args.variant), args.sets, args.show)


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()
    main()
