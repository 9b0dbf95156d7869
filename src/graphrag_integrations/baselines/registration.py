"""Registrations, parameters and evaluation builders of the four baselines.

``dense`` and ``bm25`` have no index-time options (BM25 uses the ``bm25s`` defaults) and one
query-time option, the default ``k``; ``hybrid`` adds its fusion options (the classes are in
:mod:`graphrag_integrations.baselines.params`); ``ppr`` (HippoRAG 2's personalized PageRank
without an LLM) has its own (:mod:`graphrag_integrations.baselines.ppr_params`). Importing
this module is cheap: the builders import the retrievers on first call.

Examples
--------
>>> [r.name for r in REGISTRATIONS]
['dense', 'bm25', 'hybrid', 'ppr']
>>> HYBRID.parse_options({"fusion": "rrf", "weight": "0.7"}).query_params.to_kwargs()
{'weight': 0.7, 'fusion': 'rrf', 'candidate_factor': 4, 'rrf_k': 60, 'k': 5}
>>> hits = build_bm25(None, passages=[Passage("a", "Paris is in France.", "a"),
...                                  Passage("b", "Rome is in Italy.", "b")])
>>> hits.retrieve("Where is Rome?", k=1)[0].id
'b'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphrag_integrations.baselines.params import (
    BM25QueryParams,
    DenseQueryParams,
    HybridParams,
    HybridQueryParams,
    RetrieveParams,
)
from graphrag_integrations.baselines.ppr_params import PPRIndexParams, PPRQueryParams
from graphrag_integrations.core.params import NoParams, Params
from graphrag_integrations.core.registry import MethodRegistration
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import EmptyCorpusError

if TYPE_CHECKING:
    from graphrag_integrations.baselines.bm25 import BM25Retriever
    from graphrag_integrations.baselines.dense import DenseRetriever
    from graphrag_integrations.baselines.hybrid import HybridRetriever
    from graphrag_integrations.baselines.ppr import PPRRetriever

__all__ = [
    "BM25",
    "DENSE",
    "HYBRID",
    "PPR",
    "REGISTRATIONS",
    "BM25QueryParams",
    "DenseQueryParams",
    "HybridParams",
    "HybridQueryParams",
    "PPRIndexParams",
    "PPRQueryParams",
    "RetrieveParams",
    "build_bm25",
    "build_dense",
    "build_hybrid",
    "build_ppr",
]


def _check(passages: Sequence[Passage]) -> None:
    if not passages:
        raise EmptyCorpusError("no passages to index")


def build_dense(
    embedder: Any,
    *,
    passages: Sequence[Passage],
    index_params: Params | None = None,
    query_params: DenseQueryParams | None = None,
    show_progress: bool = False,
) -> DenseRetriever:
    """Dense retriever over ``passages`` with the shared ``embedder``."""
    from graphrag_integrations.baselines.dense import DenseRetriever

    _check(passages)
    return DenseRetriever(
        passages, embedder, query_params=query_params, show_progress=show_progress
    )


def build_bm25(
    embedder: Any,
    *,
    passages: Sequence[Passage],
    index_params: Params | None = None,
    query_params: BM25QueryParams | None = None,
    show_progress: bool = False,
) -> BM25Retriever:
    """BM25 retriever over ``passages`` (``embedder`` is unused: BM25 is lexical)."""
    from graphrag_integrations.baselines.bm25 import BM25Retriever

    params = BM25QueryParams(**query_params.values()) if query_params else None
    return BM25Retriever.from_passages(passages, query_params=params)


def build_hybrid(
    embedder: Any,
    *,
    passages: Sequence[Passage],
    index_params: Params | None = None,
    query_params: HybridQueryParams | None = None,
    show_progress: bool = False,
) -> HybridRetriever:
    """Hybrid (dense + BM25) retriever over ``passages``."""
    from graphrag_integrations.baselines.hybrid import HybridRetriever

    return HybridRetriever.from_passages(
        passages, embedder, query_params=query_params, show_progress=show_progress
    )


def build_ppr(
    embedder: Any,
    *,
    passages: Sequence[Passage],
    index_params: PPRIndexParams | None = None,
    query_params: PPRQueryParams | None = None,
    show_progress: bool = False,
) -> PPRRetriever:
    """Personalized-PageRank retriever over ``passages`` with the shared ``embedder``."""
    from graphrag_integrations.baselines.ppr import PPRRetriever

    _check(passages)
    return PPRRetriever(
        passages,
        embedder,
        index_params=index_params,
        query_params=query_params,
        show_progress=show_progress,
    )


_MODULE = "graphrag_integrations.baselines"

DENSE = MethodRegistration(
    name="dense",
    index_class=f"{_MODULE}.dense:DenseRetriever",
    builder=f"{_MODULE}.registration:build_dense",
    index_params=NoParams,
    query_params=DenseQueryParams,
    description="cosine over passage embeddings",
)
BM25 = MethodRegistration(
    name="bm25",
    index_class=f"{_MODULE}.bm25:BM25Retriever",
    builder=f"{_MODULE}.registration:build_bm25",
    index_params=NoParams,
    query_params=BM25QueryParams,
    description="lexical BM25 (bm25s)",
)
HYBRID = MethodRegistration(
    name="hybrid",
    index_class=f"{_MODULE}.hybrid:HybridRetriever",
    builder=f"{_MODULE}.registration:build_hybrid",
    index_params=NoParams,
    query_params=HybridQueryParams,
    description="dense and BM25 scores fused per query",
)

PPR = MethodRegistration(
    name="ppr",
    index_class=f"{_MODULE}.ppr:PPRRetriever",
    builder=f"{_MODULE}.registration:build_ppr",
    index_params=PPRIndexParams,
    query_params=PPRQueryParams,
    description="HippoRAG 2 personalized PageRank over passages and spaCy entities (no LLM)",
)

#: What :mod:`graphrag_integrations.evaluation.registry` reads from this module.
REGISTRATIONS: tuple[MethodRegistration, ...] = (DENSE, BM25, HYBRID, PPR)
