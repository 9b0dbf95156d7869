"""Parameter classes of the three baselines (no index-time options: ``NoParams``).

``k`` is the number of passages ``retrieve`` returns when it gets none (``retrieve(q, k)``
and ``as_retriever(k=...)`` win over it); the hybrid baseline adds its fusion options.

Examples
--------
>>> DenseQueryParams().k, BM25QueryParams(k=3).k
(5, 3)
>>> HybridQueryParams.from_options({"fusion": "rrf", "weight": "0.7"}).to_kwargs()
{'weight': 0.7, 'fusion': 'rrf', 'candidate_factor': 4, 'rrf_k': 60, 'k': 5}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from graphrag_integrations.core.params import Params, param

__all__ = [
    "BM25QueryParams",
    "DenseQueryParams",
    "HybridParams",
    "HybridQueryParams",
    "RetrieveParams",
]


@dataclass(frozen=True)
class DenseQueryParams(Params):
    """Query-time options of :class:`~graphrag_integrations.baselines.dense.DenseRetriever`."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}}

    k: int = param(5, doc="passages returned when retrieve gets no k", ge=1)


@dataclass(frozen=True)
class BM25QueryParams(DenseQueryParams):
    """Query-time options of :class:`~graphrag_integrations.baselines.bm25.BM25Retriever`
    (the same as the dense baseline's)."""


@dataclass(frozen=True)
class HybridQueryParams(Params):
    """Query-time options of :class:`~graphrag_integrations.baselines.hybrid.HybridRetriever`."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}}

    weight: float = param(0.5, doc="dense share of the fused score", ge=0.0, le=1.0)
    fusion: Literal["minmax", "rrf"] = param("minmax", doc="score fusion")
    candidate_factor: int = param(4, doc="each retriever's candidates: k * factor", ge=1)
    rrf_k: int = param(60, doc="rank offset of reciprocal rank fusion", ge=1)
    k: int = param(5, doc="passages returned when retrieve gets no k", ge=1)


#: Former names (kept importable).
RetrieveParams = DenseQueryParams
HybridParams = HybridQueryParams
