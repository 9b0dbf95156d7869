"""ReG supervision comparison on MetaQA: weak vs LLM-refined vs oracle labels, same questions.

Usage (from the repository root; the refinement cache comes from
``graphrag-integrations train --method reg --option supervision=refined`` or an earlier run;
``.jsonl.gz`` as committed in ``methods/reg/assets/`` is read too)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_reg_supervision.py \\
        --hops 3 --refined-cache refined_3hop.jsonl --index-cache /tmp/reg-metaqa-index \\
        [--epochs 20] [--test 200] [--weak-all] [--out figures.json] [--save-scorers DIR] \\
        [--max-length 2 3] [--max-triples 5000] [--refinement K=V ...] \\
        [--variants NAME:K=V,K=V ...] [--measure test|validation] [--limit N] [--skip oracle] \\
        [--seeds 42 43 44 45 46]

Samples (seed 0, MetaQA answerable dev of the hop): ``disjoint_samples(qs, [300, 50, 200])``
= training pool / validation / test (``--test N`` measures the first N of the test sample).
The refined labels are read from the cache only (no LLM call: a question without a cached
selection is an error), so the training set of every supervision is the N training questions
that have one; ``--weak-all`` also trains on all 300 with weak labels. Checkpoints are
selected with the weak (q->a shortest-path) labels of the same 50 validation questions for
every supervision. Oracle = the shortest paths whose relation chain is the question type's
(``qa_dev_qtype.txt``). Every scorer is measured on the same test questions, anchored at the
gold topic entity, with ``kgqa_metrics`` (AnsR@K over the entities of the top-K triples,
Hit@1 of the top chain, chains, chain length, tokens of the chains vs the flat top-100 triple
list, latency of ``evidence_chains``); ``--max-length L1 L2 ...`` measures every scorer with
each chain length (the first is the main row, the others under ``test_L<L>``; AnsR does not
depend on L), ``--max-triples`` sets the subgraph bound (training and test).
``--refinement K=V ...`` sets the :class:`RefinementParams` of the refined labels (the
variant whose cached scores are read; default: label scoring, best-scored q->a fallback);
``--variants NAME:K=V,...`` adds one refined run per variant (``refined[NAME]``), and
``--measure validation`` measures every scorer on the 50 validation questions instead of the
test questions - choosing a variant this way never looks at the test questions (the same
validation questions select each scorer's checkpoint). ``--limit N`` trains on the first N
training questions with a cached selection only; ``--skip NAME ...`` leaves runs out.
``--save-scorers DIR`` writes ``{weak,refined,oracle}-<h>hop.pt.gz`` + ``.json`` (provenance)
as ``methods.reg.assets`` reads them.
``--seeds S1 S2 ...`` trains every supervision once per training seed (``RegTrainParams.seed``;
same questions, labels and validation) and measures each scorer: with one seed the output is
the single-run one (default: the ``RegTrainParams`` seed, 42); with several, each run's entry
holds the per-seed rows (``seeds``), their ``summary`` (mean, sample sd, min, max of every
numeric figure) and ``paired`` differences to weak (same seed; ``seed_statistics.py``), and a
markdown table of AnsR@K and Hit@1 is printed at the end (``--save-scorers`` then
writes ``...-seed<S>``).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gzip
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from seed_statistics import (
    paired_differences,
    seed_summary,
    seed_table,
)

from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
from graphrag_integrations.core.llm import LLMClient
from graphrag_integrations.core.llm.protocol import estimate_tokens
from graphrag_integrations.core.params import key_values
from graphrag_integrations.evaluation.metaqa import (
    answerable,
    disjoint_samples,
    kgqa_metrics,
    load_questions,
    oracle_rows,
)
from graphrag_integrations.methods.reg.assets import save_scorer
from graphrag_integrations.methods.reg.index import RegIndex, TrainingQuestion
from graphrag_integrations.methods.reg.kg import Triple
from graphrag_integrations.methods.reg.params import RefinementParams, RegTrainParams
from graphrag_integrations.methods.reg.refinement import option_text, refinement_prompt

KS = [10, 20, 50, 100]
SIZES = [300, 50, 200]
SEED = 0


def _no_llm(prompt: str) -> str:
    raise RuntimeError("a question without a cached refinement reached the LLM")


def _plain_cache(path: Path) -> Path:
    """The cache as a plain JSONL file (a ``.gz`` one is decompressed to a temp file)."""
    if path.suffix != ".gz":
        return path
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as fh:
        fh.write(gzip.decompress(path.read_bytes()))
    return Path(fh.name)


def _refinement_tokens(index: RegIndex, questions: list[TrainingQuestion]) -> dict[str, float]:
    """Estimated tokens (chars / 4) the refinement of ``questions`` sends: each prompt once
    plus every ``ans: Path i`` option."""
    per_q = []
    for q in questions:
        pool = index.candidate_pool(q)
        answer = (
            [index.view.entities[pool.representative]] if pool.representative is not None else []
        )
        paths = [c.render(index.view) for c in pool.candidates]
        prompt = refinement_prompt(q.text, answer, paths)
        per_q.append(
            estimate_tokens(prompt)
            + sum(estimate_tokens(option_text(i)) for i in range(len(paths)))
        )
    return {
        "questions": len(per_q),
        "mean_tokens": sum(per_q) / max(len(per_q), 1),
        "total_tokens": float(sum(per_q)),
    }


def _refinement(options: list[str]) -> RefinementParams:
    """``["K=V", ...]`` as :class:`RefinementParams`."""
    return RefinementParams.from_options(key_values(options))


def _measure(index: RegIndex, test: list[Any], lengths: list[int]) -> dict[str, Any]:
    """``kgqa_metrics`` of the current scorer with each chain length: ``{"test": first L,
    "test_L<L>": the others}``."""
    out: dict[str, Any] = {}
    for i, length in enumerate(lengths):
        index.query_params = dataclasses.replace(index.query_params, max_length=length)
        out["test" if i == 0 else f"test_L{length}"] = kgqa_metrics(index, test, ks=KS)
    index.query_params = dataclasses.replace(index.query_params, max_length=lengths[0])
    return out


def cache_arguments(description: str) -> argparse.ArgumentParser:
    """The arguments of the ReG benchmarks over MetaQA and the caches of its refined
    questions and index: ``--data``, ``--hops``, ``--refined-cache``, ``--index-cache``."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--hops", type=int, default=2)
    ap.add_argument("--refined-cache", type=Path, required=True)
    ap.add_argument("--index-cache", type=Path, required=True)
    return ap


def main(argv: list[str] | None = None) -> None:
    ap = cache_arguments(__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--test", type=int, default=SIZES[2])
    ap.add_argument("--weak-all", action="store_true", help="also train weak on all 300")
    ap.add_argument("--no-untrained", action="store_true", help="skip the zero-shot row")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--save-scorers", type=Path, default=None)
    ap.add_argument("--max-length", type=int, nargs="+", default=[2], help="chain lengths L")
    ap.add_argument("--max-triples", type=int, default=None, help="subgraph bound")
    ap.add_argument("--refinement", nargs="*", default=[], help="RefinementParams K=V")
    ap.add_argument("--variants", nargs="*", default=[], help="NAME:K=V,K=V refined variants")
    ap.add_argument("--measure", choices=["test", "validation"], default="test")
    ap.add_argument("--limit", type=int, default=None, help="first N cached questions only")
    ap.add_argument("--skip", nargs="*", default=[], help="runs not to train (weak, oracle, ...)")
    ap.add_argument(
        "--seeds", type=int, nargs="+", default=[RegTrainParams().seed], help="training seeds"
    )
    args = ap.parse_args(argv)
    refinement = _refinement(args.refinement)
    variants = {
        name: _refinement(opts.split(",") if opts else [])
        for name, _, opts in (v.partition(":") for v in args.variants)
    }
    data = args.data / "metaqa"
    t0 = time.perf_counter()
    embedder = SentenceTransformerEmbedder()
    index = RegIndex.load(args.index_cache, embedding=embedder)
    bound = {"max_triples": args.max_triples} if args.max_triples else {}
    index.query_params = dataclasses.replace(
        index.query_params, subgraph_hops=max(2, args.hops), **bound
    )
    print(f"index loaded in {time.perf_counter() - t0:.1f}s", flush=True)
    # every supervision (weak, each refined variant, oracle) reads the same pools: build once
    index.candidate_pool = functools.cache(index.candidate_pool)  # type: ignore[method-assign]
    qs = answerable(
        load_questions(data / f"{args.hops}-hop" / "dev.txt"),
        data / "answerable_with_reconstructed_kb.json",
    )
    train, val, test = disjoint_samples(qs, SIZES, seed=SEED)
    test = test[: args.test] if args.measure == "test" else val
    cache = _plain_cache(args.refined_cache)
    cached = {
        json.loads(line)["qid"]
        for line in cache.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    as_t = [TrainingQuestion(q.id, q.text, (q.topic_entity,), tuple(q.answers)) for q in train]
    val_t = [TrainingQuestion(q.id, q.text, (q.topic_entity,), tuple(q.answers)) for q in val]
    refined_t = [q for q in as_t if q.id in cached][: args.limit]
    view = index.view
    weak_all = index.supervision((as_t if args.weak_all else refined_t) + val_t, mode="weak")
    sups = {
        name: index.supervision(
            refined_t, mode="refined", llm=LLMClient(_no_llm), cache_path=cache, refinement=params
        )
        for name, params in {"refined": refinement, **variants}.items()
    }
    sup = sups["refined"]
    oracle: dict[str, list[Triple]] = {}
    qtypes = {q.id: q.qtype for q in train}
    for q in refined_t:
        rows = oracle_rows(index.candidate_pool(q), view, qtypes[q.id])
        oracle[q.id] = [view.triple(r) for r in rows]
    val_labels = {q.id: weak_all.labels[q.id] for q in val_t}
    stats = sup.refine_stats
    n_ref = max(len(refined_t), 1)
    prompt_hash = hashlib.sha256(refinement_prompt("", [], []).encode()).hexdigest()[:16]
    results: dict[str, Any] = {
        "set": f"MetaQA {args.hops}-hop dev (answerable)",
        "command": " ".join(["python", "benchmarks/bench_reg_supervision.py", *sys.argv[1:]]),
        "train_refined": len(refined_t),
        "validation": len(val_t),
        "measured_on": args.measure,
        "test": len(test),
        "refinement": refinement.to_kwargs(),
        "variants": {name: params.to_kwargs() for name, params in variants.items()},
        "refine_stats": dataclasses.asdict(stats) if stats else None,
        "refinement_tokens_estimated": _refinement_tokens(index, refined_t),
        "label_triples_mean": {
            "weak": sum(len(weak_all.labels[q.id]) for q in refined_t) / n_ref,
            **{
                name: sum(len(s.labels[q.id]) for q in refined_t) / n_ref
                for name, s in sups.items()
            },
            "oracle": sum(len(oracle[q.id]) for q in refined_t) / n_ref,
        },
        "pool": sup.pool_summary(),
    }
    print("setup", json.dumps(results), flush=True)
    runs: dict[str, tuple[list[TrainingQuestion], dict[str, list[Triple]]]] = {
        "weak": (refined_t, {q.id: weak_all.labels[q.id] for q in refined_t}),
        "refined": (refined_t, sup.labels),
        "oracle": (refined_t, oracle),
        **{f"refined[{name}]": (refined_t, sups[name].labels) for name in variants},
    }
    if args.weak_all:
        runs["weak-all"] = (as_t, {q.id: weak_all.labels[q.id] for q in as_t})
    several = len(args.seeds) > 1
    per_seed: dict[str, list[dict[str, Any]]] = {}
    # seed-major: an interrupted run still holds paired rows of every supervision
    for seed in args.seeds:
        for name, (questions, labels) in runs.items():
            if name in args.skip:
                continue
            cpu = time.process_time()
            report = index.train(
                questions,
                labels,
                validation=val_t,
                validation_labels=val_labels,
                params=RegTrainParams(epochs=args.epochs, seed=seed),
            )
            cpu = time.process_time() - cpu
            measured = _measure(index, test, args.max_length)
            row = {
                "seed": seed,
                "train_questions": len(questions),
                "train_s": report.seconds,
                "train_cpu_s": cpu,
                "best_epoch": report.best_epoch,
                "val_recall": report.best_recall,
                **measured,
            }
            per_seed.setdefault(name, []).append(row)
            if not several:
                results[name] = row
            print(f"{name} seed={seed}" if several else name, json.dumps(row), flush=True)
            if args.out and several:  # partial results survive an interruption
                args.out.write_text(json.dumps({**results, "per_seed": per_seed}, indent=2))
            if args.save_scorers is not None and index.scorer is not None:
                labeller = {
                    "refined": refinement,
                    **{f"refined[{n}]": v for n, v in variants.items()},
                }
                refined = name in labeller
                meta = {
                    "supervision": name,
                    "hops": args.hops,
                    "dataset": "MetaQA (../shared/data/metaqa): kb.txt, "
                    f"{args.hops}-hop/dev.txt answerable subset",
                    "kg_triples": view.n_triples,
                    "samples": f"disjoint_samples(answerable {args.hops}-hop dev, {SIZES}, "
                    f"seed={SEED}): train / validation / test",
                    "train_ids": [q.id for q in questions],
                    "validation_ids": [q.id for q in val_t],
                    "validation_labels": "weak (q->a shortest paths) for every supervision",
                    "embedding": embedder.model_name,
                    "llm": "SmolLM2-135M-Instruct (offline), float32" if refined else None,
                    "prompt_hash": prompt_hash if refined else None,
                    "refinement": labeller[name].to_kwargs() if refined else None,
                    "params": {"epochs": args.epochs, **index.scorer.config(), **bound},
                    "best_epoch": report.best_epoch,
                    "val_recall": report.best_recall,
                    "train_s": round(report.seconds, 1),
                    "train_cpu_s": round(cpu, 1),
                    "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "command": results["command"],
                }
                stem = f"{name}-{args.hops}hop" + (f"-seed{seed}" if several else "")
                save_scorer(index.scorer, args.save_scorers / stem, meta)
    if several:
        compared = [f"test.AnsR@{k}" for k in KS] + ["test.Hit@1"]
        for name, seed_rows in per_seed.items():
            results[name] = {"seeds": seed_rows, "summary": seed_summary(seed_rows)}
            if name != "weak" and "weak" in per_seed:
                results[name]["paired"] = paired_differences(seed_rows, per_seed["weak"], compared)
        print(f"seeds {args.seeds}, {args.measure} questions: mean ± sd [min, max]")
        print(seed_table({n: results[n]["summary"] for n in per_seed}, compared), flush=True)
        paired = {f"{n} - weak": results[n]["paired"] for n in per_seed if "paired" in results[n]}
        if paired:
            print("paired by seed:")
            print(seed_table(paired, compared), flush=True)
    if not args.no_untrained:
        index.scorer = None
        results["untrained"] = _measure(index, test, args.max_length)
        print("untrained", json.dumps(results["untrained"]), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
