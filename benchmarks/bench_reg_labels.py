"""ReG label statistics on MetaQA: what the refinement LLM selected, against the oracle chain.

Usage (from the repository root; no LLM call, no training)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_reg_labels.py --hops 3 \\
        --refined-cache refined_3hop.jsonl --index-cache /tmp/reg-metaqa-index \\
        [--refinement choice_scoring=calibrated answer_path_fallback=all]

For the training-pool questions with a cached selection (the questions
``bench_reg_supervision.py`` trains on), with the oracle chain = the question type's relation
chain (``qa_dev_qtype.txt``): distinct q->a relation chains in the pool (``sp`` candidates),
options, how often the LLM's selection holds a q->a chain at all and the oracle one, how often
its best-scored q->a chain is the oracle one (what ``require_answer_path`` adds when the
selection holds none), ``P_q`` / ``P_a`` neighbourhood options selected, and the triples per
question and share on oracle paths (precision) of the weak, refined and oracle labels (oracle
= every q->a shortest path to any answer with the oracle chain, as ``bench_reg_supervision``).
``--refinement K=V ...`` sets :class:`RefinementParams` (the variant whose cached scores are
read), ``--variants NAME:K=V,...`` adds one report per variant (pools built once);
``position`` reports where the best-scored option sits (0 = first, 1 = last; a
position-blind labeller averages 0.5) and how often it is the first / last option (uniform:
the mean of 1 / options). A ``choice_scoring=batch`` variant fits its position prior on the
reported questions.
"""

from __future__ import annotations

import functools
import json
from statistics import mean

from bench_reg_supervision import cache_arguments

from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
from graphrag_integrations.core.params import key_values
from graphrag_integrations.evaluation.datasets import KGQuestion
from graphrag_integrations.evaluation.metaqa import (
    answerable,
    disjoint_samples,
    load_questions,
    qtype_relation_chain,
)
from graphrag_integrations.evaluation.metaqa import oracle_rows as oracle_triples
from graphrag_integrations.methods.reg.index import RegIndex, TrainingQuestion
from graphrag_integrations.methods.reg.params import RefinementParams
from graphrag_integrations.methods.reg.refinement import Refiner

SIZES = [300, 50, 200]
SEED = 0


def _no_llm(prompt: str) -> str:
    raise RuntimeError("a question without a cached refinement reached the LLM")


def main(argv: list[str] | None = None) -> None:
    ap = cache_arguments(__doc__.splitlines()[0])
    ap.add_argument("--variants", nargs="*", default=[], help="NAME:K=V,K=V label variants")
    ap.add_argument("--limit", type=int, default=None, help="first N cached questions only")
    ap.add_argument("--refinement", nargs="*", default=[], help="RefinementParams K=V")
    args = ap.parse_args(argv)
    params = _params(",".join(args.refinement))
    data = args.data / "metaqa"
    index = RegIndex.load(args.index_cache, embedding=SentenceTransformerEmbedder())
    view = index.view
    index.candidate_pool = functools.cache(index.candidate_pool)  # type: ignore[method-assign]
    qs = answerable(
        load_questions(data / f"{args.hops}-hop" / "dev.txt"),
        data / "answerable_with_reconstructed_kb.json",
    )
    cached = {
        rec["qid"]
        for rec in map(json.loads, args.refined_cache.read_text(encoding="utf-8").splitlines())
    }
    train = [q for q in disjoint_samples(qs, SIZES, seed=SEED)[0] if q.id in cached]
    train = train[: args.limit] if args.limit else train
    settings = {
        "refined": params,
        **{name: _params(opts) for name, _, opts in (v.partition(":") for v in args.variants)},
    }
    refiners = {
        name: Refiner(_no_llm, p, cache_path=args.refined_cache) for name, p in settings.items()
    }
    for refiner in refiners.values():
        if refiner.params.choice_scoring == "batch":  # the position prior of these questions
            refiner.fit_batch(view, [(q.id, q.text, index.candidate_pool(_tq(q))) for q in train])
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in refiners}
    for q, name in ((q, name) for q in train for name in refiners):
        refiner = refiners[name]
        pool = index.candidate_pool(_tq(q))
        oracle_chain = tuple(qtype_relation_chain(q.qtype))
        sp = [i for i, c in enumerate(pool.candidates) if c.kind == "sp"]
        is_oracle = {i for i in sp if pool.candidates[i].chain == oracle_chain}
        labels = refiner.refine(q.id, q.text, view, pool)
        picked = set(labels.selected) - set(labels.added)
        order = labels.order or sp
        best_sp = next((i for i in order if i in sp), None)
        oracle_rows = set(oracle_triples(pool, view, q.qtype))
        weak = set(pool.weak_triples())
        refined = set(labels.rows)
        n = len(pool.candidates)
        top = labels.order[0] if labels.order else 0

        def precision(labels: set[int], gold: set[int] = oracle_rows) -> float:
            return len(labels & gold) / len(labels) if labels else 0.0

        rows[name].append(
            {
                "sp_chains": len(sp),
                "options": len(pool.candidates),
                "selected": len(picked),
                "selected_sp": float(bool(picked & set(sp))),
                "selected_oracle": float(bool(picked & is_oracle)),
                "best_sp_is_oracle": float(best_sp in is_oracle),
                "selected_neighbourhood": float(
                    sum(pool.candidates[i].kind != "sp" for i in picked)
                ),
                "weak_triples": len(weak),
                "refined_triples": len(refined),
                "oracle_triples": len(oracle_rows),
                "weak_precision": precision(weak),
                "refined_precision": precision(refined),
                "refined_has_oracle": float(bool(refined & oracle_rows)),
                "position": top / (n - 1) if n > 1 else 0.5,
                "best_is_first": float(n > 1 and top == 0),
                "best_is_last": float(n > 1 and top == n - 1),
                "uniform_first_or_last": 1 / n if n > 1 else 0.0,
            }
        )
    for name, refiner in refiners.items():
        got = rows[name]
        summary = {k: round(mean(r[k] for r in got), 3) for k in got[0]} if got else {}
        report = {
            "hops": args.hops,
            "labels": name,
            "refinement": settings[name].to_kwargs(),
            "questions": len(got),
            "refine_stats": vars(refiner.stats),
            "mean": summary,
        }
        print(json.dumps(report), flush=True)


def _tq(q: KGQuestion) -> TrainingQuestion:
    return TrainingQuestion(q.id, q.text, (q.topic_entity,), tuple(q.answers))


def _params(options: str) -> RefinementParams:
    """``"K=V,K=V"`` as :class:`RefinementParams`."""
    return RefinementParams.from_options(key_values([kv for kv in options.split(",") if kv]))


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
