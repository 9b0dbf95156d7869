"""Evaluation-registry entry for QCG-RAG (``"qcg": "...methods.qcg.evaluation:build"``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrag_integrations.core.embeddings import Embedder
from graphrag_integrations.core.types import Passage, Retriever


def build(
    passages: list[Passage] | Sequence[Passage],
    embedder: Embedder,
    *,
    show_progress: bool = False,
    **options: Any,
) -> Retriever:
    """Build a :class:`~graphrag_integrations.methods.qcg.index.QCGIndex` over ``passages``.

    Options are :class:`QCGIndex` keywords: ``preset`` (``"multihop-rag"`` default,
    ``"lihuaworld"``), ``query_set`` (a :class:`QuerySet` or its file: no LLM for the chunks
    it covers), ``llm``, ``cache_dir``, ``max_concurrency``, ``max_tokens`` and any parameter
    (``M``, ``alpha``, ``k_neighbors``, ``node_text``, ``h``, ``n``, ``gamma``, ``K``,
    ``chunk_weight``...).

    Examples
    --------
    >>> retriever = build(passages, embedder, query_set="qcg_lihua.jsonl.gz")  # doctest: +SKIP
    >>> retriever.retrieve("Who knows about Wolfgang going to Hong Kong?", k=5)  # doctest: +SKIP
    """
    from graphrag_integrations.methods.qcg.index import QCGIndex

    return QCGIndex.from_passages(
        list(passages), embedding=embedder, show_progress=show_progress, **options
    )
