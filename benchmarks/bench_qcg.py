"""QCG-RAG benchmarks: the Doc2Query pilot (SmolLM2 speed / JSON parse rate) and retrieval.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
        python benchmarks/bench_qcg.py pilot [--chunks 10] [--M 20] [--max-tokens 1024] \
        [--out /tmp/qcg_pilot.jsonl.gz]
    python benchmarks/bench_qcg.py latency [--queries 10000]
    python benchmarks/bench_qcg.py lihuaworld --query-set FILE [--limit 150]

``pilot`` sends ``--chunks`` LiHuaWorld chunks (1,200-token chunking, evenly spread over the
year) to the offline SmolLM2-135M-Instruct and reports tokens/s, chunks/s and how its replies
parsed; ``latency`` times retrieval on a synthetic graph of ``--queries`` query nodes against
the dense baseline over the same chunks; ``lihuaworld`` scores QCG (from a generated query set)
and the dense baseline with the LiHuaWorld harness (evidence Recall@K per question type).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any


def _chunks(data: Path, n: int, chunk_size: int, overlap: int) -> list[Any]:
    from graphrag_integrations.evaluation.lihuaworld import chunk_lihuaworld, load_chat_documents

    passages = chunk_lihuaworld(load_chat_documents(data / "lihuaworld"), chunk_size, overlap)
    step = max(1, len(passages) // n)
    return passages[::step][:n]


def pilot(args: argparse.Namespace) -> None:
    """One chunk at a time, printing a JSON line per chunk (figures survive an interrupt)."""
    import torch

    from graphrag_integrations.core.llm import LLMClient, TransformersLLM
    from graphrag_integrations.methods.qcg.generation import (
        DOC2QUERY_PROMPT,
        SMALL_MODEL_PROMPT,
        Doc2QueryGenerator,
        QuerySet,
    )

    torch.set_num_threads(1)
    chunks = _chunks(args.data, args.chunks, 1200, 100)
    template = SMALL_MODEL_PROMPT if args.template == "small" else DOC2QUERY_PROMPT
    llm = TransformersLLM(max_new_tokens=args.max_tokens)
    client = LLMClient(llm, cache_dir=args.cache, max_concurrency=1, max_retries=0)
    gen = Doc2QueryGenerator(client, M=args.M, template=template, max_tokens=args.max_tokens)
    _ = llm.tokenizer  # load outside the timed section
    qs = QuerySet({}, model=client.model_name, prompt_hash=gen.prompt_hash, M=args.M)
    total = 0.0
    for chunk in chunks:
        before = client.usage.as_dict()
        start = time.perf_counter()
        pairs = gen.generate([chunk.text])[0]
        took = time.perf_counter() - start
        total += took
        after = client.usage.as_dict()
        qs.update([(chunk.text, pairs)])
        qs.save(args.out)
        done = {k: after[k] - before[k] for k in ("calls", "prompt_tokens", "completion_tokens")}
        row = {"chunk": chunk.id, "seconds": round(took, 1), **done, "pairs": len(pairs)}
        row["completion_tok_s"] = round(done["completion_tokens"] / took, 2) if took else None
        row["example"] = [f"{p.query} -> {p.answer}" for p in pairs[:2]]
        print(json.dumps(row), flush=True)
    usage = client.usage.as_dict()
    summary = {
        "template": args.template,
        "M": args.M,
        "max_tokens": args.max_tokens,
        "chunks": len(chunks),
        "seconds": round(total, 1),
        "chunks_per_s": round(len(chunks) / total, 4) if total else None,
        "completion_tokens_per_s": round(usage["completion_tokens"] / total, 2) if total else None,
        "total_tokens_per_s": round(usage["total_tokens"] / total, 2) if total else None,
        "usage": usage,
        "stats": gen.stats.as_dict(),
        "query_set": str(args.out),
        "reparsed_query_set_pairs_per_chunk": [len(v) for v in qs.pairs.values()],
    }
    print(json.dumps(summary, indent=1), flush=True)


def latency(args: argparse.Namespace) -> None:
    """Retrieval latency of a QueryCentricGraphIndex (>= ``--queries`` query nodes) vs dense.

    Chunks are synthetic sentences, pairs come from a deterministic fake generator (no LLM)
    and vectors from the hashing embedder of the tests (384 dimensions), so the figure is the
    index's own cost: scoring every query node, top-n, h-hop expansion, chunk ranking and
    explanations (query embedding excluded for both methods).
    """
    import random
    import statistics

    from tests.conftest import FakeEmbedder

    from graphrag_integrations.baselines.dense import DenseRetriever
    from graphrag_integrations.core.types import Passage
    from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex

    rng = random.Random(0)
    words = [f"w{i}" for i in range(3000)]
    per_chunk = 20
    n_chunks = -(-args.queries // 16)  # alpha = 0.8 keeps 16 of 20

    def sentence() -> str:
        return " ".join(rng.choice(words) for _ in range(10)) + "."

    chunks = [
        Passage(f"c{i:05d}", " ".join(sentence() for _ in range(8)), f"d{i}")
        for i in range(n_chunks)
    ]

    def fake_llm(prompt: str) -> str:
        chunk = prompt.rsplit("---Input chunk---\n", 1)[1].strip()
        sents = chunk.split(". ")
        items = [
            {
                "index": j,
                "query": f"question {j}: what about {sents[j % len(sents)][:30]}?",
                "answer": sents[(j + 1) % len(sents)][:40],
            }
            for j in range(per_chunk)
        ]
        return json.dumps(items)

    class Cached(FakeEmbedder):
        def __init__(self) -> None:
            super().__init__(384)
            self.query_vecs: dict[str, Any] = {}

        def embed_query(self, text: str) -> Any:
            if text not in self.query_vecs:
                self.query_vecs[text] = super().embed_query(text)
            return self.query_vecs[text]

    emb = Cached()
    start = time.perf_counter()
    index = QueryCentricGraphIndex.from_passages(
        chunks, embedding=emb, llm=fake_llm, max_concurrency=1, h=args.h
    )
    build = time.perf_counter() - start
    dense = DenseRetriever(chunks, embedding=emb)
    questions = [sentence() for _ in range(args.repeat)]
    for q in questions:
        emb.embed_query(q)  # query vectors cached: time the index, not the embedder
    rows = {}
    for name, retriever in (("qcg", index), ("dense", dense)):
        times = []
        for q in questions:
            t = time.perf_counter()
            retriever.retrieve(q, k=5)
            times.append(time.perf_counter() - t)
        rows[name] = 1000 * statistics.median(times)
    print(
        json.dumps(
            {
                "chunks": len(chunks),
                "query_nodes": len(index.graph),
                "h": args.h,
                "build_s": round(build, 1),
                "qcg_p50_ms": round(rows["qcg"], 2),
                "dense_p50_ms": round(rows["dense"], 2),
                "ratio_qcg_over_dense": round(rows["qcg"] / rows["dense"], 2),
            }
        )
    )


def generate(args: argparse.Namespace) -> None:
    """Resumable offline generation on HotpotQA-100, question by question.

    Questions ``--start`` to ``--end`` are taken in file order, ``--group`` at a time; each
    group's context passages (10 per question) that the output query set lacks are sent to the
    generator in batches, then the query set is rewritten with the questions it now covers
    (``extra["questions_done"]``), so any prefix of the run is a closed sub-corpus. A rerun
    (or a run seeded with ``--seed`` query sets, e.g. the committed artefact) skips what is
    done; the SQLite cache (``--cache``) keeps every finished batch across crashes.
    """
    import datetime
    import hashlib

    import torch

    from graphrag_integrations.core.llm import LLMClient, TransformersLLM
    from graphrag_integrations.evaluation.datasets import load_dataset
    from graphrag_integrations.methods.qcg.generation import (
        SMALL_MODEL_PROMPT,
        Doc2QueryGenerator,
        QuerySet,
    )

    torch.set_num_threads(1)
    folder = args.data / "hotpotqa-100"
    dataset = load_dataset(folder)
    by_title = {str(p.metadata["title"]): p for p in dataset.passages}
    raw = json.loads((folder / "questions.json").read_text())
    llm = TransformersLLM(max_new_tokens=args.max_tokens)
    client = LLMClient(llm, cache_dir=args.cache, batch_size=args.batch_size, max_retries=1)
    gen = Doc2QueryGenerator(
        client, M=args.M, template=SMALL_MODEL_PROMPT, max_tokens=args.max_tokens
    )
    qs = QuerySet.load(args.out) if args.out.exists() else None
    if qs is None:
        qs = QuerySet({}, model=client.model_name, prompt_hash=gen.prompt_hash, M=args.M)
    for seed in args.seed:
        qs.pairs.update(QuerySet.load(seed).pairs)
    done = set(qs.extra.get("questions_done", []))
    qs.extra.update(
        {
            "dataset": "hotpotqa-100",
            "alpha": 0.8,
            "max_tokens": args.max_tokens,
            "template": "SMALL_MODEL_PROMPT",
            "decoding": "greedy, SmolLM2-135M-Instruct fp32 CPU, 1 torch thread",
            "corpus_passages": len(dataset.passages),
        }
    )
    _ = llm.tokenizer
    items = raw[args.start : args.end]
    for g in range(0, len(items), args.group):
        group = [q for q in items[g : g + args.group] if q["_id"] not in done]
        if not group:
            continue
        titles = list(dict.fromkeys(str(t) for q in group for t, _ in q["context"]))
        texts = [by_title[t].text for t in titles if qs.get(by_title[t].text) is None]
        before = client.usage.as_dict()
        stats0 = gen.stats.as_dict()
        start = time.perf_counter()
        if texts:
            qs.update(zip(texts, gen.generate(texts), strict=True))
        took = time.perf_counter() - start
        done.update(q["_id"] for q in group)
        qs.extra["questions_done"] = sorted(done)
        qs.extra["passages_done"] = len(qs.pairs)
        qs.extra["updated"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        qs.save(args.out)
        after = client.usage.as_dict()
        stats = gen.stats.as_dict()
        used = {k: after[k] - before[k] for k in ("calls", "prompt_tokens", "completion_tokens")}
        row = {
            "questions": [q["_id"] for q in group],
            "passages": len(texts),
            "seconds": round(took, 1),
            **used,
            **{k: stats[k] - stats0[k] for k in ("pairs", "retried", "failed", "dropped_pairs")},
            "completion_tok_s": round(used["completion_tokens"] / took, 2) if took else None,
            "total_tok_s": round((used["prompt_tokens"] + used["completion_tokens"]) / took, 1)
            if took
            else None,
            "questions_done": len(done),
            "query_set_sha": hashlib.sha256(args.out.read_bytes()).hexdigest()[:12],
        }
        print(json.dumps(row), flush=True)


def snapshot(args: argparse.Namespace) -> None:
    """Merge the per-process query sets into the committed artefact and write the closed
    sub-corpus (the questions every set covers, with their context passages) as a HotpotQA
    questions file for ``eval``."""
    import datetime

    from graphrag_integrations.methods.qcg.generation import QuerySet

    sets = [QuerySet.load(p) for p in args.sets]
    first = sets[0]
    merged = QuerySet({}, model=first.model, prompt_hash=first.prompt_hash, M=first.M)
    done: list[str] = []
    for qs in sets:
        if (qs.model, qs.prompt_hash, qs.M) != (first.model, first.prompt_hash, first.M):
            raise SystemExit("the query sets come from different generators")
        merged.pairs.update(qs.pairs)
        done += qs.extra.get("questions_done", [])
    raw = json.loads((args.data / "hotpotqa-100" / "questions.json").read_text())
    chosen = [q for q in raw if q["_id"] in set(done)]
    extra = {
        k: v
        for k, v in first.extra.items()
        if k not in ("questions_done", "updated", "passages_done")
    }
    pairs = [len(p) for p in merged.pairs.values()]
    extra.update(
        {
            "questions_done": sorted(done),
            "questions_total": len(raw),
            "passages_covered": len(merged.pairs),
            "passages_without_pairs": sum(1 for n in pairs if n == 0),
            "pairs": sum(pairs),
            "snapshot": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "command": "python benchmarks/bench_qcg.py generate (see docs/qcg.md)",
            "partial": len(done) < len(raw),
        }
    )
    merged.extra = extra
    merged.save(args.out)
    args.questions.write_text(json.dumps(chosen), encoding="utf-8")
    print(json.dumps({k: v for k, v in extra.items() if k != "questions_done"}, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pilot")
    p.add_argument("--data", type=Path, default=Path("../shared/data"))
    p.add_argument("--chunks", type=int, default=10)
    p.add_argument("--M", type=int, default=20)
    p.add_argument("--max-tokens", type=int, default=1024)
    p.add_argument("--template", choices=("paper", "small"), default="paper")
    p.add_argument("--cache", default="/tmp/qcg_pilot_cache")
    p.add_argument("--out", type=Path, default=Path("/tmp/qcg_pilot.jsonl.gz"))
    lat = sub.add_parser("latency")
    lat.add_argument("--queries", type=int, default=10_000)
    lat.add_argument("--h", type=int, default=1)
    lat.add_argument("--repeat", type=int, default=50)
    gen = sub.add_parser("generate")
    gen.add_argument("--data", type=Path, default=Path("../shared/data"))
    gen.add_argument("--start", type=int, default=0)
    gen.add_argument("--end", type=int, default=100)
    gen.add_argument("--group", type=int, default=2)
    gen.add_argument("--M", type=int, default=5)
    gen.add_argument("--max-tokens", type=int, default=128)
    gen.add_argument("--batch-size", type=int, default=8)
    gen.add_argument("--cache", default="runs/qcg/cache")
    gen.add_argument("--out", type=Path, default=Path("runs/qcg/hotpotqa100.jsonl.gz"))
    gen.add_argument("--seed", type=Path, action="append", default=[])
    snap = sub.add_parser("snapshot")
    snap.add_argument("sets", type=Path, nargs="+")
    snap.add_argument("--data", type=Path, default=Path("../shared/data"))
    snap.add_argument(
        "--out", type=Path, default=Path("src/graphrag_integrations/data/qcg/hotpotqa100.jsonl.gz")
    )
    snap.add_argument("--questions", type=Path, default=Path("runs/qcg/hotpotqa100_covered.json"))
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.command == "pilot":
        pilot(args)
    elif args.command == "latency":
        latency(args)
    elif args.command == "generate":
        generate(args)
    elif args.command == "snapshot":
        snapshot(args)


if __name__ == "__main__":
    main()
