"""ReG refinement on MetaQA: LLM-refined labels for the training pool, with their cost.

Usage (from the repository root; resumes from the committed caches)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_reg_refine.py \\
        --index-cache /tmp/reg-metaqa-index --work DIR --plan 2:100 3:100 1:100 \\
        [--deadline 05:45] [--llm NAME] [--dtype bfloat16] [--refinement choice_scoring=content ...]

For each ``H:N`` of ``--plan`` in turn, the first N questions of the training pool
(``disjoint_samples(answerable H-hop dev, [300, 50, 200], seed=0)[0]``, the sample
``bench_reg_supervision.py`` trains on) get refined labels through
``RegIndex.supervision(mode="refined")`` (default :class:`RefinementParams`: choice mode,
appendix-G prompt), appended to ``DIR/refined-Hhop.jsonl``. A missing cache is first seeded
from ``methods/reg/assets/refined-Hhop-supervision.jsonl.gz``, so already refined questions
are cache hits. ``--deadline HH:MM`` (UTC) stops before a new question starts after that time
(the cache stays consistent: one line per finished question). Every question that called the
LLM adds a line to ``DIR/refine-cost.jsonl``: wall and process CPU seconds, prompt tokens (the
model's tokenizer: prompt + options), options, model name. ``--refinement K=V ...`` sets
:class:`RefinementParams` (e.g. ``choice_scoring=content``: its scores are added to the same
cache under their own keys; ``choice_scoring=calibrated`` adds only the content-free baselines,
one per option count; ``choice_scoring=permuted`` only the reversed-order label scores, one
scoring per question, in the label records). ``--dtype`` loads the local model in that
precision (its model name gets a ``[dtype]`` suffix; use one precision for every label of a
set).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import time
from pathlib import Path

from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
from graphrag_integrations.core.llm import LLMClient, TransformersLLM
from graphrag_integrations.core.params import key_values
from graphrag_integrations.evaluation.metaqa import answerable, disjoint_samples, load_questions
from graphrag_integrations.methods.reg.index import RegIndex, TrainingQuestion
from graphrag_integrations.methods.reg.params import RefinementParams

ARTEFACTS = Path(__file__).resolve().parents[1] / "src/graphrag_integrations/methods/reg/assets"
SIZES = [300, 50, 200]
SEED = 0


def _plan(items: list[str]) -> list[tuple[int, int]]:
    """``["2:100", "3:100"]`` -> ``[(2, 100), (3, 100)]``."""
    out = []
    for item in items:
        hops, _, n = item.partition(":")
        out.append((int(hops), int(n)))
    return out


def _past(deadline: str | None) -> bool:
    if not deadline:
        return False
    now = dt.datetime.now(dt.timezone.utc)
    hh, mm = (int(x) for x in deadline.split(":"))
    return (now.hour, now.minute) >= (hh, mm)


def _seed_cache(cache: Path, hops: int) -> None:
    committed = ARTEFACTS / f"refined-{hops}hop-supervision.jsonl.gz"
    if not cache.exists() and committed.is_file():
        cache.write_bytes(gzip.decompress(committed.read_bytes()))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--index-cache", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--plan", nargs="+", required=True, help="HOPS:N items, in order")
    ap.add_argument("--deadline", default=None, help="HH:MM UTC: start no question after it")
    ap.add_argument("--llm", default=None, help="LLM name or path (default: offline SmolLM2)")
    ap.add_argument("--dtype", default=None, help="local model precision (default float32)")
    ap.add_argument("--refinement", nargs="*", default=[], help="RefinementParams K=V")
    args = ap.parse_args(argv)
    params = RefinementParams.from_options(key_values(args.refinement))
    data = args.data / "metaqa"
    args.work.mkdir(parents=True, exist_ok=True)
    index = RegIndex.load(args.index_cache, embedding=SentenceTransformerEmbedder())
    llm = LLMClient(TransformersLLM(args.llm, dtype=args.dtype) if args.dtype else args.llm)
    cost_log = args.work / "refine-cost.jsonl"
    for hops, n in _plan(args.plan):
        qs = answerable(
            load_questions(data / f"{hops}-hop" / "dev.txt"),
            data / "answerable_with_reconstructed_kb.json",
        )
        pool = disjoint_samples(qs, SIZES, seed=SEED)[0][:n]
        cache = args.work / f"refined-{hops}hop.jsonl"
        _seed_cache(cache, hops)
        for q in pool:
            if _past(args.deadline):
                print(f"deadline {args.deadline} reached", flush=True)
                return
            tq = TrainingQuestion(q.id, q.text, (q.topic_entity,), tuple(q.answers))
            calls, tokens = llm.usage.calls, llm.usage.prompt_tokens
            wall, cpu = time.perf_counter(), time.process_time()
            sup = index.supervision(
                [tq], mode="refined", llm=llm, cache_path=cache, refinement=params
            )
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            if llm.usage.calls == calls:
                continue
            stats = sup.refine_stats
            rec = {
                "hops": hops,
                "qid": q.id,
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "prompt_tokens": llm.usage.prompt_tokens - tokens,
                "options": sup.pool_stats[q.id].merged,
                "labels": len(sup.labels[q.id]),
                "answer_path_added": stats.answer_path_added if stats else None,
                "model": llm.model_name,
                "scoring": params.choice_scoring,
                "utc": time.strftime("%H:%M:%S", time.gmtime()),
            }
            with cost_log.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec) + "\n")
            print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
