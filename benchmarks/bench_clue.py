"""Measure Clue-RAG Q-Iter against the dense baseline on the 100-question dev sets.

Usage (from the worktree root)::

    PYTHONPATH=src HF_HUB_OFFLINE=1 python benchmarks/bench_clue.py musique hotpotqa \
        [--distractors] [--variants default,paper,...] [--limit 100]

Embeddings are cached on disk (``--cache``) by text, so variants re-use one index build; the
first build reports passages/s and the NLP / embedding / graph time split (cold cache).
This script predates the evaluation harness and may be replaced by the CLI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphrag_integrations.core.embeddings import FloatMatrix, SentenceTransformerEmbedder
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.qiter import QIter

DATA = Path("/work/shared/data")

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "paper": {"preset": "paper"},
    "paper-mean": {"renormalize_query": False, "lexical_weight": 0.0, "path_weight": 0.0},
    "no-lexical": {"lexical_weight": 0.0, "path_weight": 0.0},
    "lex0.3-pw0": {"lexical_weight": 0.3, "path_weight": 0.0},
    "lex0.5-pw0": {"path_weight": 0.0},
    "encode": {"path_vector": "encode"},
    "raw-phi": {"renormalize_query": False},
    "no-SA": {"spreading_activation": False},
    "no-KA": {"knowledge_anchoring": False},
    "no-QU": {"query_updating": False},
    "lex0.3-pw0.5": {"lexical_weight": 0.3},
    "pw1": {"path_weight": 1.0},
    "lex0.7": {"lexical_weight": 0.7},
}


class CachedEmbedder:
    """Embedder wrapper caching vectors by text in one .npz file (benchmark only)."""

    def __init__(self, inner: SentenceTransformerEmbedder, path: Path) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.path = path
        self.cache: dict[str, FloatMatrix] = {}
        if path.exists():
            data = np.load(path, allow_pickle=False)
            keys = json.loads(str(data["keys"]))
            self.cache = dict(zip(keys, data["vecs"], strict=True))
        self.misses = 0

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str], *, show_progress: bool = False) -> FloatMatrix:
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            self.misses += len(todo)
            for t, v in zip(todo, self.inner.embed(todo, show_progress=show_progress), strict=True):
                self.cache[t] = v
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)

    def embed_query(self, text: str) -> FloatMatrix:
        return self.embed([text])[0]

    def save(self) -> None:
        keys = list(self.cache)
        np.savez(self.path, keys=json.dumps(keys), vecs=np.stack([self.cache[k] for k in keys]))


def key(title: str, text: str) -> str:
    return hashlib.sha1(f"{title}\x00{text}".encode()).hexdigest()[:16]


def passage(title: str, text: str) -> Passage:
    k = key(title, text)
    return Passage(k, f"{title}\n{text}", k, {"title": title})


def load(name: str) -> tuple[list[Passage], list[tuple[str, set[str]]]]:
    if name == "musique":
        corpus = json.loads((DATA / "musique-100/corpus.json").read_text())
        passages = [passage(p["title"], p["text"]) for p in corpus]
        qs = json.loads((DATA / "musique-100/questions.json").read_text())
        gold = [
            (
                q["question"],
                {
                    key(p["title"], p["paragraph_text"])
                    for p in q["paragraphs"]
                    if p["is_supporting"]
                },
            )
            for q in qs
        ]
    else:
        corpus = json.loads((DATA / "hotpotqa-100/corpus.json").read_text())
        passages = [passage(t, "".join(s)) for t, s in corpus.items()]
        by_title = {p.metadata["title"]: p.id for p in passages}
        qs = json.loads((DATA / "hotpotqa-100/questions.json").read_text())
        gold = [(q["question"], {by_title[t] for t, _ in q["supporting_facts"]}) for q in qs]
    ids = {p.id for p in passages}
    missing = sum(len(g - ids) for _, g in gold)
    assert missing == 0, f"{missing} gold passages not in corpus"
    return list({p.id: p for p in passages}.values()), gold


def distractors() -> list[Passage]:
    corpus = json.loads((DATA / "2wiki-corpus/corpus.json").read_text())
    return [passage(p["title"], p["text"]) for p in corpus]


def recall(ranked: list[str], gold: set[str], k: int) -> float:
    return len(set(ranked[:k]) & gold) / len(gold)


def evaluate(fn: Any, gold: list[tuple[str, set[str]]]) -> dict[str, float]:
    r2, r5, lat = [], [], []
    for question, g in gold:
        t = time.perf_counter()
        ranked = fn(question)
        lat.append(time.perf_counter() - t)
        r2.append(recall(ranked, g, 2))
        r5.append(recall(ranked, g, 5))
    lat.sort()
    return {
        "R@2": 100 * statistics.mean(r2),
        "R@5": 100 * statistics.mean(r5),
        "p50": lat[len(lat) // 2],
        "p95": lat[int(0.95 * (len(lat) - 1))],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("datasets", nargs="+", choices=["musique", "hotpotqa"])
    ap.add_argument("--variants", default="default,paper")
    ap.add_argument("--distractors", action="store_true")
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--cache", default="/tmp/clue_bench_emb.npz")
    ap.add_argument("--index-option", action="append", default=[], help="key=json")
    args = ap.parse_args()
    emb = CachedEmbedder(SentenceTransformerEmbedder(), Path(args.cache))
    index_opts = {k: json.loads(v) for k, v in (o.split("=", 1) for o in args.index_option)}
    for name in args.datasets:
        passages, gold = load(name)
        gold = gold[: args.limit]
        if args.distractors:
            passages = list({p.id: p for p in [*passages, *distractors()]}.values())
        t = time.perf_counter()
        misses = emb.misses
        index = ClueIndex.from_passages(passages, embedding=emb, **index_opts)
        build = time.perf_counter() - t
        emb.save()
        g = index.graph
        print(
            f"\n== {name}{' +2wiki' if args.distractors else ''}: {len(passages)} passages, "
            f"{g.n_units} units, {g.n_entities} entities; build {build:.1f}s "
            f"({len(passages) / build:.1f} passages/s, {emb.misses - misses} embeddings computed) "
            f"split " + ", ".join(f"{k} {v:.1f}s" for k, v in index.timings.items()),
            flush=True,
        )

        def dense(question: str, g: Any = g) -> list[str]:
            scores = g.passage_matrix @ emb.embed_query(question)
            return [g.passage_ids[i] for i in np.argsort(-scores)[:5]]

        res = evaluate(dense, gold)
        print(f"{'dense':12s} R@2 {res['R@2']:5.1f}  R@5 {res['R@5']:5.1f}", flush=True)
        for variant in args.variants.split(","):
            opts = dict(VARIANTS[variant])
            qiter = QIter.paper(index) if opts.pop("preset", None) else QIter(index, **opts)
            res = evaluate(lambda q, r=qiter: [h.id for h in r.retrieve(q)], gold)
            print(
                f"{variant:12s} R@2 {res['R@2']:5.1f}  R@5 {res['R@5']:5.1f}  "
                f"p50 {res['p50']:.3f}s  p95 {res['p95']:.3f}s",
                flush=True,
            )
        emb.save()


if __name__ == "__main__":
    main()
