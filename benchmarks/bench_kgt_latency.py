"""KG-Translator query latency on a persisted index: wall and CPU per query, optional profile.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=src \
        python benchmarks/bench_kgt_latency.py INDEX_DIR musique-100 --skip 50 --n 5 \
        [--translator musique-100-a] [--preset paper-musique] [--profile FILE] \
        [--translator-dtype bfloat16] [--early-stopping] [--threads 2] [--embed-all] \
        [--beam-loop transformers] [--rrf]

``--preset default`` times the product defaults (RRF, early stopping, ``auto-fast``).

``INDEX_DIR`` is a persisted ``ParseKGTranslatorRetriever`` (built and persisted there when
missing, lazy passage vectors). The translator, constraint indexes, embedder and spaCy are
loaded before timing; each line gives one query's wall and CPU (process) time, the traced
passages (Ctx) and the returned ids, then p50 / p95, the translator's usage and the load
average. ``--embed-all`` embeds the passages not yet embedded before timing (and persists
them), so a query measures translation + tracing + ranking, the steady state of lazy vectors.
``--profile`` writes a cProfile of the queries and prints the top entries.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import time
from dataclasses import replace
from pathlib import Path
from typing import get_args

import numpy as np


def main(argv: list[str] | None = None) -> None:
    import torch

    from graphrag_integrations.core.encoders.embeddings import as_embedder
    from graphrag_integrations.evaluation.datasets import load_dataset
    from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
    from graphrag_integrations.methods.kgt.params import PRESETS, KGTQueryParams

    dtypes = next(s for s in KGTQueryParams.specs() if s.name == "translator_dtype")
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("index")
    ap.add_argument("dataset")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--skip", type=int, default=50)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--preset", default="paper-musique")
    ap.add_argument("--translator", default="musique-100-a")
    ap.add_argument("--profile", default=None)
    ap.add_argument(
        "--translator-dtype",
        default=None,
        choices=get_args(dtypes.type),
        help="default: the preset's (paper presets: auto = bfloat16 on a CPU with AVX-512 BF16 "
        "/ AMX, else float32; default: auto-fast = bfloat16 there, else int8-smooth)",
    )
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    ap.add_argument(
        "--early-stopping", action="store_true", help="early stopping (else the preset's)"
    )
    ap.add_argument(
        "--beam-loop",
        default="pruned",
        choices=["pruned", "transformers"],
        help="beam search: settled rows leave the batch (default) or transformers' generate",
    )
    ap.add_argument(
        "--rrf",
        action="store_true",
        help="the product mode: fusion=rrf, fusion_k=5, fusion_weight=0.5 (adds a dense search)",
    )
    ap.add_argument(
        "--embed-all",
        action="store_true",
        help="embed every passage before timing (steady state of lazy vectors; persisted)",
    )
    a = ap.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    data = load_dataset(Path(a.data) / a.dataset)
    embedder = as_embedder(None)
    if not (Path(a.index) / "manifest.json").is_file():
        ParseKGTranslatorRetriever.from_passages(data.passages, embedding=embedder).persist(a.index)
    params = PRESETS[a.preset]  # "default": the product defaults; "paper-*": the paper mode
    if a.translator_dtype is not None:
        params = replace(params, translator_dtype=a.translator_dtype)
    if a.early_stopping:
        params = replace(params, early_stopping=True)
    if a.rrf:
        params = replace(params, fusion="rrf", fusion_k=5.0, fusion_weight=0.5)
    kgt = ParseKGTranslatorRetriever.load(
        a.index, embedding=embedder, translator=a.translator, query_params=params
    )
    kgt.lm.beam_loop = a.beam_loop
    if a.embed_all and kgt.store.missing_vectors(kgt.view.passages):
        kgt._passage_vectors(list(kgt.view.passages))
        kgt.persist(a.index, overwrite=True)
    t0 = time.perf_counter()
    kgt.lm.model  # noqa: B018 - load before timing
    kgt.constraint_indexes  # noqa: B018
    kgt.embedder.embed(["warm-up"])
    kgt.parser.parse("Warm-up sentence by Ada Lovelace.")
    print("load", round(time.perf_counter() - t0, 1), flush=True)
    walls, cpus = [], []
    prof = cProfile.Profile() if a.profile else None
    for q in data.questions[a.skip : a.skip + a.n]:
        t0, c0 = time.perf_counter(), time.process_time()
        if prof:
            prof.enable()
        res = kgt.retrieve(q.text, k=5)
        if prof:
            prof.disable()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        ctx = res[0].explanation["traced_passages"] if res else 0
        print(
            f"{walls[-1]:.2f}s wall {cpus[-1]:.2f}s cpu ctx={ctx} ids={[r.id for r in res]}",
            flush=True,
        )
    usage = kgt.client.usage
    print(
        json.dumps(
            {
                "wall_p50_p95": [round(float(np.percentile(walls, p)), 2) for p in (50, 95)],
                "cpu_p50_p95": [round(float(np.percentile(cpus, p)), 2) for p in (50, 95)],
                "usage": {
                    "calls": usage.calls,
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                },
                "load_average": os.getloadavg(),
                "translator": kgt.lm.model_name,
                "threads": torch.get_num_threads(),
                "beam_loop": a.beam_loop,
            }
        )
    )
    if prof and a.profile:
        prof.dump_stats(a.profile)
        pstats.Stats(a.profile).sort_stats("cumulative").print_stats(35)


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
