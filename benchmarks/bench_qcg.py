"""QCG-RAG benchmarks: the Doc2Query pilot (SmolLM2 speed / JSON parse rate) and retrieval.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
        python benchmarks/bench_qcg.py pilot [--chunks 10] [--M 20] [--max-tokens 1024] \
        [--out /tmp/qcg_pilot.jsonl.gz]
    python benchmarks/bench_qcg.py latency [--queries 10000] [--preset P] [--compare P2 ...]
    python benchmarks/bench_qcg.py ablation [--query-set FILE]     # h, fusion, candidates
    python benchmarks/bench_qcg.py lihua-ablation [--query-set FILE]  # the same on LiHuaWorld
    python benchmarks/bench_qcg.py lihua-hops                       # kNN locality, what h=1 adds

``pilot`` sends ``--chunks`` LiHuaWorld chunks (1,200-token chunking, evenly spread over the
year) to the offline SmolLM2-135M-Instruct and reports tokens/s, chunks/s and how its replies
parsed; ``latency`` times retrieval on a synthetic graph of ``--queries`` query nodes against
the dense baseline over the same chunks; ``ablation`` compares QCG variants with dense and
BM25 in one process on the HotpotQA closed sub-corpus (commands and figures: ``docs/lab/qcg.md``).
The query sets these read are built by ``python -m
graphrag_integrations.evaluation.qcg_query_sets generate|snapshot`` (docs/lab/qcg.md, "Building
query sets").
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
    explanations (query embedding excluded for both methods). ``--compare`` presets (same
    index parameters) are timed on the same index, question by question in turn.
    """
    import dataclasses
    import random
    import statistics

    from tests.conftest import FakeEmbedder

    from graphrag_integrations.baselines.dense import DenseRetriever
    from graphrag_integrations.core.types import Passage
    from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex
    from graphrag_integrations.methods.qcg.params import QCGIndexParams, QCGQueryParams

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
        chunks,
        embedding=emb,
        llm=fake_llm,
        max_concurrency=1,
        index_params=QCGIndexParams.from_options({"preset": args.preset}),
        query_params=QCGQueryParams.from_options({"preset": args.preset, "h": args.h}),
    )
    build = time.perf_counter() - start
    dense = DenseRetriever(chunks, embedding=emb)
    questions = [sentence() for _ in range(args.repeat)]
    for q in questions:
        emb.embed_query(q)  # query vectors cached: time the index, not the embedder
    from graphrag_integrations.methods.qcg.params import preset as qcg_preset

    modes = {args.preset: index.query_params}
    for name in args.compare:
        extra = qcg_preset(name)
        if extra.index != qcg_preset(args.preset).index:
            raise SystemExit(f"--compare {name}: other index parameters than {args.preset}")
        modes[name] = dataclasses.replace(extra.query, h=args.h)
    for params in modes.values():  # build the lazy views (BM25) outside the timed loop
        index.query_params = params
        index.retrieve(questions[0])
    times: dict[str, list[float]] = {name: [] for name in [*modes, "dense"]}
    for q in questions:  # interleaved, so a change of machine load hits every mode alike
        for name, params in modes.items():
            index.query_params = params
            t = time.perf_counter()
            index.retrieve(q, k=5)
            times[name].append(time.perf_counter() - t)
        t = time.perf_counter()
        dense.retrieve(q, k=5)
        times["dense"].append(time.perf_counter() - t)
    p50 = {name: round(1000 * statistics.median(ts), 2) for name, ts in times.items()}
    print(
        json.dumps(
            {
                "chunks": len(chunks),
                "query_nodes": len(index.graph),
                "preset": args.preset,
                "h": args.h,
                "build_s": round(build, 1),
                "qcg_p50_ms": p50[args.preset],
                "dense_p50_ms": p50["dense"],
                "ratio_qcg_over_dense": round(p50[args.preset] / p50["dense"], 2),
                "p50_ms": p50,
            }
        )
    )


def ablation(args: argparse.Namespace) -> None:
    """QCG against dense, BM25 and the hybrid baseline on the closed sub-corpus of a
    HotpotQA-100 query set, with the hop ablation (h = 0 / 1 / 2), the chunk-similarity
    fusion (``chunk_weight``, ``chunk_candidates``) and its hybrid chunk side
    (``chunk_similarity="hybrid"``, h = 0 / 1), all in one process: one embedder, one QCG
    build, the query parameters changed between runs.

    The questions are those the query set covers (``extra["questions_done"]``), the corpus
    their context passages (the ``snapshot`` sub-corpus); a complete set gives HotpotQA-100.
    """
    import dataclasses
    import tempfile

    from graphrag_integrations.core.encoders.embeddings import as_embedder
    from graphrag_integrations.evaluation.datasets import load_dataset
    from graphrag_integrations.evaluation.harness import evaluate_retriever
    from graphrag_integrations.evaluation.registry import get_registration
    from graphrag_integrations.methods.qcg.generation import QuerySet

    qs = QuerySet.load(args.query_set)
    raw = json.loads((args.data / "hotpotqa-100" / "questions.json").read_text())
    done = set(qs.extra.get("questions_done", [q["_id"] for q in raw]))
    chosen = [q for q in raw if q["_id"] in done]
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "hotpotqa100_covered.json"
        file.write_text(json.dumps(chosen), encoding="utf-8")
        dataset = load_dataset(file)
    emb = as_embedder(args.embedding)
    emb.embed_query("warm-up")
    ks = (2, 5, 10)
    rows: dict[str, dict[str, Any]] = {}

    def score(name: str, retriever: Any, index_s: float = 0.0) -> None:
        res = evaluate_retriever(name, retriever, dataset, ks=ks, index_s=index_s)
        rows[name] = res.to_json()

    for base in ("dense", "bm25", "hybrid"):
        reg = get_registration(base)
        start = time.perf_counter()
        retriever = reg.build(emb, {"passages": dataset.passages}, reg.parse_options({}))
        score(base, retriever, time.perf_counter() - start)
    reg = get_registration("qcg")
    start = time.perf_counter()
    index = reg.build(
        emb,
        {"passages": dataset.passages},
        reg.parse_options(
            {"query_set": str(args.query_set), "missing": "skip", "answerless": args.answerless}
        ),
    )
    built = time.perf_counter() - start
    paper = index.query_params
    w, c = args.chunk_weight, args.chunk_candidates
    variants: list[tuple[str, dict[str, Any]]] = [
        ("qcg h=0", {"h": 0}),
        ("qcg h=1 (paper)", {"h": 1}),
        ("qcg h=2", {"h": 2}),
        (f"qcg h=1 w={w:g}", {"h": 1, "chunk_weight": w}),
        (f"qcg h=1 c={c}", {"h": 1, "chunk_candidates": c}),
        *(
            (f"qcg h={h} w={w:g} c={c}", {"h": h, "chunk_weight": w, "chunk_candidates": c})
            for h in (0, 1, 2)
        ),
        *(
            (
                f"qcg h={h} w={w:g} c={c} hybrid",
                {"h": h, "chunk_weight": w, "chunk_candidates": c, "chunk_similarity": "hybrid"},
            )
            for h in (0, 1)
        ),
    ]
    for label, overrides in variants:
        index.query_params = dataclasses.replace(paper, **overrides)
        score(label, index, built)
    print(
        f"HotpotQA-100 closed sub-corpus: {len(dataset.questions)} questions, "
        f"{len(dataset.passages)} passages; query set {args.query_set} "
        f"({qs.model}, M={qs.M}, {sum(len(p) for p in qs.pairs.values())} pairs, "
        f"partial={qs.extra.get('partial')}); QCG graph: {len(index.graph)} query nodes, "
        f"{index.generation_report()['skipped_chunks']} passages without a set entry"
    )
    dense5 = rows["dense"]["R@5"]
    header = f"{'method':<31}{'R@2':>7}{'R@5':>7}{'R@10':>7}{'p50 ms':>8}{'R@5/dense':>11}"
    print(header)
    print("-" * len(header))
    for name, row in rows.items():
        ratio = row["R@5"] / dense5 if dense5 else float("nan")
        print(
            f"{name:<31}{row['R@2']:>7.1f}{row['R@5']:>7.1f}{row['R@10']:>7.1f}"
            f"{row['latency_p50_ms']:>8.1f}{ratio:>11.2f}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


def lihua_ablation(args: argparse.Namespace) -> None:
    """dense, BM25, the hybrid baseline (dense + BM25) and QCG on LiHuaWorld in one run
    (``eval``'s LiHuaWorld path), plus QCG rows on the same index: h = 0 / 2 (the preset's
    h = 1 is the ``qcg`` row), the fusion deviations alone and with h = 0 / 1 / 2, and both
    with the hybrid chunk side (``chunk_similarity="hybrid"``) at h = 0 / 1. A partial query
    set means its closed sub-corpus for every row (said in the title line)."""
    from graphrag_integrations.evaluation.lihuaworld_run import (
        format_lihua_report,
        run_lihuaworld_eval,
    )

    w, c = args.chunk_weight, args.chunk_candidates
    fused = {"chunk_weight": w, "chunk_candidates": c}
    variants: dict[str, tuple[str, dict[str, Any]]] = {
        "qcg h=0": ("qcg", {"h": 0}),
        "qcg h=2": ("qcg", {"h": 2}),
        f"qcg w={w:g}": ("qcg", {"chunk_weight": w}),
        f"qcg c={c}": ("qcg", {"chunk_candidates": c}),
        **{f"qcg h={h} w={w:g} c={c}": ("qcg", {"h": h, **fused}) for h in (0, 1, 2)},
        **{
            f"qcg h={h} w={w:g} c={c} hybrid": (
                "qcg",
                {"h": h, **fused, "chunk_similarity": "hybrid"},
            )
            for h in (0, 1)
        },
    }
    qcg_options = {"answerless": args.answerless}
    if args.query_set:
        qcg_options["query_set"] = str(args.query_set)
    options = {"qcg": qcg_options}
    report = run_lihuaworld_eval(
        args.data / "lihuaworld",
        ["dense", "bm25", "hybrid", "qcg"],
        queries=args.queries,
        chunking=args.chunking,
        embedder=args.embedding,
        ks=(5, 10),
        options=options,
        variants=variants,
        show_progress=False,
    )
    print(format_lihua_report(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report.to_json(), indent=1, default=str), encoding="utf-8")


def lihua_hops(args: argparse.Namespace) -> None:
    """Why hops help or not on LiHuaWorld: how many kNN edges stay inside one chat, and what
    h = 1 adds to h = 0 on the Multi questions (chunks returned, evidence chats found,
    expanded queries and how many of them belong to an evidence chat)."""
    import dataclasses

    from graphrag_integrations.evaluation.lihuaworld import load_questions
    from graphrag_integrations.evaluation.qcg_query_sets import lihuaworld_chunks
    from graphrag_integrations.methods.qcg.generation import QuerySet
    from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex
    from graphrag_integrations.methods.qcg.params import QCGIndexParams, QCGQueryParams
    from graphrag_integrations.methods.qcg.registration import QUERY_SET_DIR

    chunks, _ = lihuaworld_chunks(args.data, "1200/100")
    qs = QuerySet.load(args.query_set or QUERY_SET_DIR / "lihuaworld.jsonl.gz")
    index = QueryCentricGraphIndex.from_passages(
        chunks,
        query_set=qs,
        index_params=QCGIndexParams.from_options(
            {"preset": "lihuaworld", "missing": "skip", "answerless": args.answerless}
        ),
        query_params=QCGQueryParams.from_options({"preset": "lihuaworld"}),
    )
    chat = {p.id: p.doc_id for p in chunks}
    store = index.store
    edges = [(q, n) for q, ns in store.knn().items() for n in ns]
    same = sum(chat[store.chunk_of(q)] == chat[store.chunk_of(n)] for q, n in edges)
    print(
        json.dumps(
            {
                "query_nodes": len(index.graph),
                "knn_edges": len(edges),
                "same_chat_share": round(same / max(1, len(edges)), 3),
            }
        )
    )
    questions = load_questions(args.data / "lihuaworld" / "queries-dev.json", set(chat.values()))
    totals = dict.fromkeys(
        (
            "questions",
            "chunks_h0",
            "chunks_h1",
            "evidence_chats_h0",
            "evidence_chats_h1",
            "hop1_queries",
            "hop1_in_evidence_chat",
        ),
        0,
    )
    for q in questions.questions:
        if q.type != "Multi" or not q.evidence.gold:
            continue
        gold = set(q.evidence.gold)
        totals["questions"] += 1
        for h in (0, 1):
            index.query_params = dataclasses.replace(index.query_params, h=h)
            hits = index.retrieve(q.text, k=5)
            totals[f"chunks_h{h}"] += len(hits)
            totals[f"evidence_chats_h{h}"] += len({hit.passage.doc_id for hit in hits} & gold)
        expanded = [x for hit in hits for x in hit.explanation["queries"] if x["hop"] >= 1]
        totals["hop1_queries"] += len(expanded)
        totals["hop1_in_evidence_chat"] += sum(
            chat[store.chunk_of(x["id"])] in gold for x in expanded
        )
    print(json.dumps(totals))


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
    lat.add_argument("--preset", default="multihop-rag", help="QCG preset, e.g. fused-hybrid")
    lat.add_argument(
        "--compare",
        action="append",
        default=[],
        help="another preset's query parameters timed on the same index, interleaved",
    )
    lat.add_argument("--repeat", type=int, default=50)
    ab = sub.add_parser("ablation")
    ab.add_argument("--data", type=Path, default=Path("../shared/data"))
    ab.add_argument(
        "--query-set",
        type=Path,
        default=Path("src/graphrag_integrations/data/qcg/hotpotqa100.jsonl.gz"),
    )
    ab.add_argument("--embedding", default=None)
    ab.add_argument("--chunk-weight", type=float, default=0.3)
    ab.add_argument("--chunk-candidates", type=int, default=10)
    ab.add_argument("--json", type=Path, default=None)
    ab.add_argument("--answerless", choices=("drop", "keep"), default="drop")
    la = sub.add_parser("lihua-ablation")
    la.add_argument("--data", type=Path, default=Path("../shared/data"))
    la.add_argument("--query-set", type=Path, default=None, help="default: the committed set")
    la.add_argument("--queries", type=Path, default=None)
    la.add_argument("--chunking", default="1200/100")
    la.add_argument("--embedding", default=None)
    la.add_argument("--chunk-weight", type=float, default=0.3)
    la.add_argument("--chunk-candidates", type=int, default=10)
    la.add_argument("--json", type=Path, default=None)
    la.add_argument("--answerless", choices=("drop", "keep"), default="drop")
    lh = sub.add_parser("lihua-hops")
    lh.add_argument("--data", type=Path, default=Path("../shared/data"))
    lh.add_argument("--query-set", type=Path, default=None, help="default: the committed set")
    lh.add_argument("--answerless", choices=("drop", "keep"), default="drop")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.command == "pilot":
        pilot(args)
    elif args.command == "latency":
        latency(args)
    elif args.command == "ablation":
        ablation(args)
    elif args.command == "lihua-ablation":
        lihua_ablation(args)
    elif args.command == "lihua-hops":
        lihua_hops(args)


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
