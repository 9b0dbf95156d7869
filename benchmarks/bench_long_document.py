"""Default chunking of one long document (issue 12: a 512 KB document came back as one
522,630-character passage; a 5 MB one did not index in 30 minutes).

Builds the BM25 baseline over one 512 KB document and the dense baseline (model-free
``FakeEmbedder``) over one 5 MB document with the default splitter, and prints passages,
the longest passage, build time, ``delete`` time and peak RSS (``docs/reference/chunking.md``).

Usage (from the repository root)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 PYTHONPATH=src python benchmarks/bench_long_document.py
"""

from __future__ import annotations

import resource
import time

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.testing.compliance.chunking import random_prose
from graphrag_integrations.testing.fake_embedder import FakeEmbedder


def report(label: str, build: type[BaseIndex], text: str, **kwargs: object) -> None:
    start = time.perf_counter()
    index = build.from_documents([SourceDocument(text, id="long")], **kwargs)
    seconds = time.perf_counter() - start
    passages = index.passages  # type: ignore[attr-defined]
    start = time.perf_counter()
    assert index.delete("long") is True
    deleted = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{label}: {len(text):,} chars -> {len(passages):,} passages, longest "
        f"{max(len(p.text) for p in passages):,} chars, build {seconds:.1f} s, delete "
        f"{deleted:.2f} s, peak RSS {rss:.0f} MB"
    )


def main() -> None:
    report("bm25, 512 KB", BM25Retriever, random_prose(512 * 1024))
    report(
        "dense + FakeEmbedder, 5 MB",
        DenseRetriever,
        random_prose(5 * 1024 * 1024),
        embedding=FakeEmbedder(),
    )


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
