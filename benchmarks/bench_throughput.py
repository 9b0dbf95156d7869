"""Wall-clock figures of the large-input unit cases (machine-dependent, so not asserted there).

* Clue chunk-selection knapsack over 100,000 items
  (``tests/unit/methods/clue/test_clue_knapsack.py``);
* loading a 5 MB text file (``tests/unit/core/test_documents.py``);
* chunking 5 MB with the word tokenizer and, with ``--hf``, with the default MiniLM
  tokenizer (``tests/unit/core/test_chunking.py``).

Usage (from the repository root)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \\
        python benchmarks/bench_throughput.py [--hf]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from graphrag_integrations.core.text.chunking import TokenChunker, documents_to_passages
from graphrag_integrations.core.text.documents import SourceDocument, load_documents
from graphrag_integrations.methods.clue.knapsack import solve_knapsack
from graphrag_integrations.testing.word_tokenizer import WordTokenizer

PARAGRAPH = "Marie Curie was born in Warsaw. She moved to Paris in 1891 to study.\n\n"
FIVE_MB = PARAGRAPH * (5_000_000 // len(PARAGRAPH) + 1)


def knapsack_seconds(n: int = 100_000) -> float:
    rng = np.random.default_rng(1)
    weights = rng.integers(20, 401, n)
    values = rng.random(n) * 60
    start = time.perf_counter()
    solution = solve_knapsack(values, weights, int(np.ceil(0.5 * weights.sum())))
    seconds = time.perf_counter() - start
    assert solution.gap < 1e-6
    return seconds


def load_seconds() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.txt"
        path.write_text(FIVE_MB, encoding="utf-8")
        start = time.perf_counter()
        (doc,) = load_documents(path)
        seconds = time.perf_counter() - start
    assert len(doc.text) == len(FIVE_MB)
    return seconds


def chunk_seconds(chunker: TokenChunker) -> tuple[float, int]:
    chunker.split("warm up")
    start = time.perf_counter()
    passages = documents_to_passages([SourceDocument(FIVE_MB, id="big")], chunker)
    return time.perf_counter() - start, len(passages)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--hf", action="store_true", help="also chunk with the MiniLM tokenizer")
    args = ap.parse_args(argv)
    print(f"knapsack, 100,000 items: {knapsack_seconds():.2f}s")
    print(f"load_documents, 5 MB file: {load_seconds():.2f}s")
    seconds, n = chunk_seconds(TokenChunker(256, 32, tokenizer=WordTokenizer()))
    print(f"chunking 5 MB (word tokenizer, 256/32): {seconds:.2f}s, {n} passages")
    if args.hf:
        seconds, n = chunk_seconds(TokenChunker())
        print(f"chunking 5 MB (MiniLM tokenizer, defaults): {seconds:.2f}s, {n} passages")
    return 0


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    raise SystemExit(main())
