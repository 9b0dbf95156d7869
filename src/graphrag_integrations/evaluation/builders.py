"""Evaluation builders of the baselines.

Signature: ``build(passages, embedder, *, show_progress, **options)``.

Each returns a ready :class:`~graphrag_integrations.core.types.Retriever` over exactly the
passages given, so every method in one run shares the corpus and the embedder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.hybrid import HybridRetriever
from graphrag_integrations.core.embeddings import Embedder
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import EmptyCorpusError


def _check(passages: Sequence[Passage]) -> None:
    if not passages:
        raise EmptyCorpusError("no passages to index")


def build_dense(
    passages: Sequence[Passage], embedder: Embedder, *, show_progress: bool = False, **options: Any
) -> DenseRetriever:
    """Dense retriever over ``passages`` with the shared ``embedder``.

    Examples
    --------
    >>> build_dense(passages, embedder)  # doctest: +SKIP
    """
    _check(passages)
    return DenseRetriever(passages, embedder, show_progress=show_progress, **options)


def build_bm25(
    passages: Sequence[Passage], embedder: Embedder, *, show_progress: bool = False, **options: Any
) -> BM25Retriever:
    """BM25 retriever over ``passages`` (``embedder`` is unused: BM25 is lexical).

    Examples
    --------
    >>> build_bm25(passages, embedder)  # doctest: +SKIP
    """
    return BM25Retriever.from_passages(passages, **options)


def build_hybrid(
    passages: Sequence[Passage], embedder: Embedder, *, show_progress: bool = False, **options: Any
) -> HybridRetriever:
    """Hybrid (dense + BM25) retriever; options go to :class:`HybridRetriever` (weight, fusion).

    Examples
    --------
    >>> build_hybrid(passages, embedder, fusion="rrf")  # doctest: +SKIP
    """
    return HybridRetriever.from_passages(passages, embedder, show_progress=show_progress, **options)
