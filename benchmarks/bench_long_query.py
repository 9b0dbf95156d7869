"""Query time against question length, with the query bound (``max_query_chars``).

Usage (from the repository root)::

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=src \\
        python benchmarks/bench_long_query.py [--methods dense,bm25,clue,kgt] \\
        [--lengths 2000,8000,52800] [--repeats 3]

Builds each method over the sample corpus (``examples/data/sample_corpus``, 60 documents) with
the default models (MiniLM; KG-Translator: the untuned SmolLM2-135M translator) and times
``retrieve(question, k=5)`` for a real question and for that question padded with filler text
to each length (``testing.compliance.query_bound.long_question``), median of ``--repeats`` runs
after a warm-up. Every index cuts the question to its ``max_query_chars`` (one warning, here
silenced): the ratio to the short question stays bounded whatever the length.
QCG-RAG and ReG (no LLM in their query path; built from LLM query sets / triples) are
covered by the compliance case instead. Results: ``docs/reference/failures.md``.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[1] / "examples" / "data" / "sample_corpus"
QUESTION = "Who directed the film shot near Leland, North Carolina in 1986?"


def build(method: str) -> Any:
    """The index of ``method`` over :data:`CORPUS` with the default models."""
    from graphrag_integrations import (
        BM25Retriever,
        ClueIndex,
        DenseRetriever,
        HybridRetriever,
        ParseKGTranslatorRetriever,
    )

    classes: dict[str, Any] = {
        "dense": DenseRetriever,
        "bm25": BM25Retriever,
        "hybrid": HybridRetriever,
        "clue": ClueIndex,
        "kgt": ParseKGTranslatorRetriever,
    }
    return classes[method].from_documents(CORPUS)


def timed(index: Any, question: str, repeats: int) -> float:
    """Median seconds of ``index.retrieve(question, k=5)`` over ``repeats`` runs."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        index.retrieve(question, k=5)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    from graphrag_integrations.core.threads import apply_thread_limit
    from graphrag_integrations.testing.compliance.query_bound import long_question

    apply_thread_limit()
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--methods", default="dense,bm25,clue,kgt")
    ap.add_argument("--lengths", default="2000,8000,52800")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    lengths = [int(x) for x in a.lengths.split(",")]
    logging.getLogger("graphrag_integrations.core.validation").setLevel(logging.ERROR)
    print(
        "| method | max_query_chars | short s | "
        + " | ".join(f"{n:,} chars s (x)" for n in lengths)
        + " |"
    )
    print("|---|---|---|" + "---|" * len(lengths))
    for method in a.methods.split(","):
        index = build(method)
        index.retrieve(QUESTION, k=5)  # warm-up: models, views, constraint indexes
        short = timed(index, QUESTION, a.repeats)
        cells = []
        for n in lengths:
            t = timed(index, long_question(QUESTION, n), a.repeats)
            cells.append(f"{t:.2f} ({t / short:.1f}x)")
        print(
            f"| {method} | {index.max_query_chars:,} | {short:.2f} | " + " | ".join(cells) + " |",
            flush=True,
        )


if __name__ == "__main__":
    main()
