"""Measure Clue-RAG Q-Iter against the dense baseline on the 100-question dev sets.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    HF_HUB_OFFLINE=1 python benchmarks/bench_clue.py musique hotpotqa \
        [--distractors] [--variants default,paper,...] [--limit 100]

Embeddings are cached on disk (``--cache``) by text, so variants re-use one index build; the
first build reports passages/s and the NLP / embedding / graph time split (cold cache).
Data loading and scoring are the evaluation harness's (same figures as
``graphrag-integrations eval``); what this script adds is one index build shared by the
ablation variants.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core.encoders.embeddings import FloatMatrix, SentenceTransformerEmbedder
from graphrag_integrations.core.params import key_values
from graphrag_integrations.evaluation.datasets import load_dataset
from graphrag_integrations.evaluation.harness import evaluate_retriever
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.params import ClueIndexParams
from graphrag_integrations.methods.clue.qiter import QIter

ALIASES = {"musique": "musique-100", "hotpotqa": "hotpotqa-100"}

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("datasets", nargs="+", help="dataset folders or names under --data")
    ap.add_argument("--data", type=Path, default=Path("../shared/data"), help="benchmark root")
    ap.add_argument("--variants", default="default,paper")
    ap.add_argument("--distractors", action="store_true", help="add the 2Wiki corpus")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--cache", default="/tmp/clue_bench_emb.npz")
    ap.add_argument("--index-option", action="append", default=[], help="key=json")
    args = ap.parse_args()
    emb = CachedEmbedder(SentenceTransformerEmbedder(), Path(args.cache))
    index_opts = {k: json.loads(v) for k, v in key_values(args.index_option).items()}
    for name in args.datasets:
        path = Path(name) if Path(name).exists() else args.data / ALIASES.get(name, name)
        dataset = load_dataset(
            path,
            distractors=args.data / "2wiki-corpus" if args.distractors else None,
            limit=args.limit,
        )
        t = time.perf_counter()
        misses = emb.misses
        index = ClueIndex.from_passages(
            dataset.passages, embedding=emb, index_params=ClueIndexParams(**index_opts)
        )
        build = time.perf_counter() - t
        emb.save()
        g = index.graph
        print(
            f"\n== {dataset.name}: {len(dataset.passages)} passages, {g.n_units} units, "
            f"{g.n_entities} entities; build {build:.1f}s "
            f"({len(dataset.passages) / build:.1f} passages/s, "
            f"{emb.misses - misses} embeddings computed) split "
            + ", ".join(f"{k} {v:.1f}s" for k, v in index.timings.items()),
            flush=True,
        )
        dense = DenseRetriever.from_passages(dataset.passages, embedding=emb)
        rows: list[tuple[str, Any]] = [("dense", dense)]
        for variant in args.variants.split(","):
            opts = dict(VARIANTS[variant])
            preset = opts.pop("preset", None)
            rows.append((variant, QIter.paper(index) if preset else QIter(index, **opts)))
        for label, retriever in rows:
            res = evaluate_retriever(label, retriever, dataset).to_json()
            print(
                f"{label:12s} R@2 {res['R@2']:5.1f}  R@5 {res['R@5']:5.1f}  "
                f"p50 {(res['latency_p50_ms'] or 0) / 1000:.3f}s  "
                f"p95 {(res['latency_p95_ms'] or 0) / 1000:.3f}s",
                flush=True,
            )
        emb.save()


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
