"""Registrations, parameters and evaluation builders of the three baselines.

``dense`` and ``bm25`` have no index-time options (BM25 uses the ``bm25s`` defaults) and one
query-time option, the default ``k``; ``hybrid`` adds its fusion options. Importing this
module is cheap: the builders import the retrievers on first call.

Examples
--------
>>> [r.name for r in REGISTRATIONS]
['dense', 'bm25', 'hybrid']
>>> HYBRID.parse_options({"fusion": "rrf", "weight": "0.7"}).query_params.to_kwargs()
{'weight': 0.7, 'fusion': 'rrf', 'candidate_factor': 4, 'rrf_k': 60, 'k': 5}
>>> hits = build_bm25(None, passages=[Passage("a", "Paris is in France.", "a"),
...                                  Passage("b", "Rome is in Italy.", "b")])
>>> hits.retrieve("Where is Rome?", k=1)[0].id
'b'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from graphrag_integrations.core.params import NoParams, Params, param
from graphrag_integrations.core.registry import MethodRegistration
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import EmptyCorpusError

if TYPE_CHECKING:
    from graphrag_integrations.baselines.bm25 import BM25Retriever
    from graphrag_integrations.baselines.dense import DenseRetriever
    from graphrag_integrations.baselines.hybrid import HybridRetriever

__all__ = [
    "BM25",
    "DENSE",
    "HYBRID",
    "REGISTRATIONS",
    "HybridParams",
    "RetrieveParams",
    "build_bm25",
    "build_dense",
    "build_hybrid",
]


@dataclass(frozen=True)
class RetrieveParams(Params):
    """Query-time options of :class:`DenseRetriever` and :class:`BM25Retriever`."""

    k: int = param(5, doc="default number of passages of retrieve", ge=1)


@dataclass(frozen=True)
class HybridParams(Params):
    """Query-time options of :class:`~graphrag_integrations.baselines.hybrid.HybridRetriever`."""

    weight: float = param(0.5, doc="dense share of the fused score", ge=0.0, le=1.0)
    fusion: Literal["minmax", "rrf"] = param("minmax", doc="score fusion")
    candidate_factor: int = param(4, doc="each retriever's candidates: k * factor", ge=1)
    rrf_k: int = param(60, doc="rank offset of reciprocal rank fusion", ge=1)
    k: int = param(5, doc="default number of passages of retrieve", ge=1)


def _check(passages: Sequence[Passage]) -> None:
    if not passages:
        raise EmptyCorpusError("no passages to index")


def build_dense(
    embedder: Any,
    *,
    passages: Sequence[Passage],
    index_params: Params | None = None,
    query_params: RetrieveParams | None = None,
    show_progress: bool = False,
) -> DenseRetriever:
    """Dense retriever over ``passages`` with the shared ``embedder``."""
    from graphrag_integrations.baselines.dense import DenseRetriever

    _check(passages)
    params = query_params or RetrieveParams()
    return DenseRetriever(passages, embedder, show_progress=show_progress, **params.to_kwargs())


def build_bm25(
    embedder: Any,
    *,
    passages: Sequence[Passage],
    index_params: Params | None = None,
    query_params: RetrieveParams | None = None,
    show_progress: bool = False,
) -> BM25Retriever:
    """BM25 retriever over ``passages`` (``embedder`` is unused: BM25 is lexical)."""
    from graphrag_integrations.baselines.bm25 import BM25Retriever

    params = query_params or RetrieveParams()
    return BM25Retriever.from_passages(passages, **params.to_kwargs())


def build_hybrid(
    embedder: Any,
    *,
    passages: Sequence[Passage],
    index_params: Params | None = None,
    query_params: HybridParams | None = None,
    show_progress: bool = False,
) -> HybridRetriever:
    """Hybrid (dense + BM25) retriever over ``passages``."""
    from graphrag_integrations.baselines.hybrid import HybridRetriever

    params = query_params or HybridParams()
    return HybridRetriever.from_passages(
        passages, embedder, show_progress=show_progress, **params.to_kwargs()
    )


_MODULE = "graphrag_integrations.baselines"

DENSE = MethodRegistration(
    name="dense",
    index_class=f"{_MODULE}.dense:DenseRetriever",
    builder=f"{_MODULE}.registration:build_dense",
    index_params=NoParams,
    query_params=RetrieveParams,
    description="cosine over passage embeddings",
)
BM25 = MethodRegistration(
    name="bm25",
    index_class=f"{_MODULE}.bm25:BM25Retriever",
    builder=f"{_MODULE}.registration:build_bm25",
    index_params=NoParams,
    query_params=RetrieveParams,
    description="lexical BM25 (bm25s)",
)
HYBRID = MethodRegistration(
    name="hybrid",
    index_class=f"{_MODULE}.hybrid:HybridRetriever",
    builder=f"{_MODULE}.registration:build_hybrid",
    index_params=NoParams,
    query_params=HybridParams,
    description="dense and BM25 scores fused per query",
)

#: What :mod:`graphrag_integrations.evaluation.registry` reads from this module.
REGISTRATIONS: tuple[MethodRegistration, ...] = (DENSE, BM25, HYBRID)
