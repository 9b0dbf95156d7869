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
from dataclasses import dataclass
from typing import Any

from graphrag_integrations.baselines.params import (
    BM25QueryParams,
    DenseQueryParams,
    HybridParams,
    HybridQueryParams,
    RetrieveParams,
)
from graphrag_integrations.baselines.ppr_params import PPRIndexParams, PPRQueryParams
from graphrag_integrations.core.params import NoParams, Params
from graphrag_integrations.core.registry import MethodRegistration, import_target
from graphrag_integrations.core.types import Passage

__all__ = [
    "BM25",
    "DENSE",
    "HYBRID",
    "PPR",
    "REGISTRATIONS",
    "BM25QueryParams",
    "BaselineBuilder",
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


_MODULE = "graphrag_integrations.baselines"


@dataclass(frozen=True)
class BaselineBuilder:
    """The evaluation builder of a baseline: ``cls.from_passages(passages, ...)`` with the
    parameters (the query params as the class's own), and the shared embedder and
    ``show_progress`` when the baseline embeds.

    Parameters
    ----------
    index_class : str
        ``"module:Class"`` of the retriever (imported on the first call).
    embeds : bool
        Whether it takes ``embedding`` and ``show_progress`` (BM25 is lexical: no).
    """

    index_class: str
    embeds: bool = True

    def __call__(
        self,
        embedder: Any,
        *,
        passages: Sequence[Passage],
        index_params: Params | None = None,
        query_params: Params | None = None,
        show_progress: bool = False,
    ) -> Any:
        """The retriever over ``passages`` (``EmptyCorpusError`` if there is none)."""
        cls = import_target(self.index_class, self.index_class)
        params = cls.query_params_class()(**query_params.values()) if query_params else None
        shared = {"embedding": embedder, "show_progress": show_progress} if self.embeds else {}
        return cls.from_passages(passages, index_params=index_params, query_params=params, **shared)


#: Dense retriever over the passages with the shared embedder.
build_dense = BaselineBuilder(f"{_MODULE}.dense:DenseRetriever")
#: BM25 retriever over the passages (the embedder is unused: BM25 is lexical).
build_bm25 = BaselineBuilder(f"{_MODULE}.bm25:BM25Retriever", embeds=False)
#: Hybrid (dense + BM25) retriever over the passages.
build_hybrid = BaselineBuilder(f"{_MODULE}.hybrid:HybridRetriever")
#: Personalized-PageRank retriever over the passages with the shared embedder.
build_ppr = BaselineBuilder(f"{_MODULE}.ppr:PPRRetriever")

DENSE = MethodRegistration(
    name="dense",
    index_class=build_dense.index_class,
    builder=f"{_MODULE}.registration:build_dense",
    index_params=NoParams,
    query_params=DenseQueryParams,
    description="cosine over passage embeddings",
)
BM25 = MethodRegistration(
    name="bm25",
    index_class=build_bm25.index_class,
    builder=f"{_MODULE}.registration:build_bm25",
    index_params=NoParams,
    query_params=BM25QueryParams,
    description="lexical BM25 (bm25s)",
)
HYBRID = MethodRegistration(
    name="hybrid",
    index_class=build_hybrid.index_class,
    builder=f"{_MODULE}.registration:build_hybrid",
    index_params=NoParams,
    query_params=HybridQueryParams,
    description="dense and BM25 scores fused per query",
)

PPR = MethodRegistration(
    name="ppr",
    index_class=build_ppr.index_class,
    builder=f"{_MODULE}.registration:build_ppr",
    index_params=PPRIndexParams,
    query_params=PPRQueryParams,
    description="HippoRAG 2 personalized PageRank over passages and spaCy entities (no LLM)",
)

#: What :mod:`graphrag_integrations.evaluation.registry` reads from this module.
REGISTRATIONS: tuple[MethodRegistration, ...] = (DENSE, BM25, HYBRID, PPR)
