"""QCG-RAG parameters (paper symbols in the field docs) and the two presets of the paper.

:class:`QCGIndexParams` shape the graph (query generation, filtering, kNN layer);
:class:`QCGQueryParams` shape retrieval. The paper's defaults (appendix B.3) are the MultiHop-RAG
setting (``h=1, k=3, n=15, gamma=1.0``: presets ``paper`` and ``multihop-rag``);
:data:`PRESETS` adds the LiHuaWorld setting (``k=2, n=10, gamma=1.5``: ``lihuaworld``).

The defaults (preset ``default``, equal to ``fused-hybrid``) are the paper's values plus one
quality deviation, measured best on the development sets with the offline 135M generator:
chunks compete with their own dense + BM25 similarity (``chunk_weight=0.3``,
``chunk_candidates=10``, ``chunk_similarity="hybrid"``; LiHuaWorld dev R@5 78.2 / 72.9 Single
/ Multi against dense 72.3 / 56.2, where the paper preset gives 15.1 / 17.7). With a weak
generator the paper's query-nodes-only retrieval loses to plain vector search;
``preset="paper"`` reproduces it exactly (``chunk_weight=0``, ``chunk_candidates=0``,
``chunk_similarity="dense"``). ``symmetric_knn`` stays off (the paper's).

Examples
--------
>>> preset("lihuaworld").query.gamma
1.5
>>> QCGQueryParams(h=2).h
2
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from graphrag_integrations.core.params import Params, param

__all__ = [
    "NODE_TEXTS",
    "PRESETS",
    "QCGIndexParams",
    "QCGPreset",
    "QCGQueryParams",
    "preset",
]

NodeText = Literal["query+answer", "query", "answer"]
NODE_TEXTS: tuple[str, ...] = ("query+answer", "query", "answer")

#: Option values of the paper's LiHuaWorld setting (appendix B.3), per parameter class.
_LIHUA_INDEX: dict[str, Any] = {"k_neighbors": 2}
_LIHUA_QUERY: dict[str, Any] = {"n": 10, "gamma": 1.5}
#: The paper's retrieval: query nodes only (the quality deviations below switched off).
_PAPER_QUERY: dict[str, Any] = {
    "chunk_weight": 0.0,
    "chunk_candidates": 0,
    "chunk_similarity": "dense",
}
#: The quality deviation (not the paper): chunk similarity fused in, chunks as candidates.
_FUSED: dict[str, Any] = {"chunk_weight": 0.3, "chunk_candidates": 10, "chunk_similarity": "dense"}
#: The same with the chunk side scored by the core's dense + BM25 fusion: the defaults.
_FUSED_HYBRID: dict[str, Any] = {**_FUSED, "chunk_similarity": "hybrid"}


@dataclass(frozen=True)
class QCGIndexParams(Params):
    """How the query-centric graph is built (§3.3); presets ``multihop-rag`` / ``lihuaworld``.

    ``node_text`` ``query`` / ``answer`` are the node ablation of §4.2 RQ3 (filtering always
    scores ``q (+) a``); ``symmetric_knn=True`` is a deviation (the paper's ``E_intra`` edges
    ``q -> q'`` for ``q'`` in ``KNN(q, k)`` are followed outwards only). ``answerless="keep"``
    is a deviation for weak generators: a question generated without an answer becomes a
    query-only node (its text is the question whatever ``node_text`` says) and competes in
    Doc2Query-- with the chunk's answered pairs.
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "default": {},
        "paper": {},
        "multihop-rag": {},
        "lihuaworld": _LIHUA_INDEX,
        "fused": {},
        "lihuaworld-fused": _LIHUA_INDEX,
        "fused-hybrid": {},
        "lihuaworld-fused-hybrid": _LIHUA_INDEX,
    }

    M: int = param(20, symbol="M", doc="query-answer pairs asked of the LLM per chunk", ge=1)
    alpha: float = param(
        0.8,
        symbol="α",
        doc="Doc2Query--: share of a chunk's pairs kept (top ceil(α·pairs) by cos(q⊕a, chunk))",
        gt=0.0,
        le=1.0,
    )
    k_neighbors: int = param(3, symbol="k", doc="query-query kNN edges per query node", ge=0)
    node_text: Literal["query+answer", "query", "answer"] = param(
        "query+answer", symbol="q⊕a", doc="what a query node embeds (RQ3 ablation)"
    )
    symmetric_knn: bool = param(
        False, doc="deviation: also expand along incoming kNN edges (paper: False)"
    )
    answerless: Literal["drop", "keep"] = param(
        "drop",
        doc="deviation: questions the generator gave without an answer are dropped (paper: "
        "nodes are q⊕a) or kept as query-only nodes",
    )
    missing: Literal["generate", "skip"] = param(
        "generate",
        doc="chunks the query set lacks: generate their pairs, or index them without (logged)",
    )


@dataclass(frozen=True)
class QCGQueryParams(Params):
    """How a user query walks the graph (§3.4); presets ``multihop-rag`` / ``lihuaworld``.

    ``s = cos + ε``; the ``n`` most similar queries with ``s >= γ`` are retrieved, expanded
    ``h`` hops over the kNN edges, and a chunk scores the mean ``s`` of its retrieved queries.
    ``chunk_weight`` is a deviation (default 0.3; paper 0): a chunk scores
    ``(1 - w) * mean s + w * (cos(q_u, chunk) + ε)``. ``chunk_candidates`` (default 10; paper
    0) adds the ``c`` chunks most similar to the user query to the candidates; one that
    no retrieved query reached scores its own ``cos(q_u, chunk) + ε`` (the chunk stands in
    for its missing query nodes), so chunks the generator left without queries stay
    reachable. Preset ``fused`` (MultiHop-RAG values plus both) and ``lihuaworld-fused``.

    ``chunk_similarity`` (a deviation; only read when ``chunk_weight`` or
    ``chunk_candidates`` is on) says where the chunk side comes from: ``"dense"`` is
    ``cos(q_u, chunk)``; ``"hybrid"`` (default) is the core's dense + BM25 fusion
    (:class:`~graphrag_integrations.core.retrieval.fusion.ScoreFusion` with the ``hybrid``
    baseline's
    defaults): the ``c`` candidates are the hybrid baseline's top ``c`` and a chunk's own
    similarity is its fused score mapped onto the candidates' cosine range
    (:meth:`~graphrag_integrations.core.retrieval.fusion.ScoreFusion.on_dense_scale`), so it mixes
    with
    ``s`` like a cosine. Presets ``fused-hybrid`` and ``lihuaworld-fused-hybrid``.
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "default": {},
        "paper": _PAPER_QUERY,
        "multihop-rag": _PAPER_QUERY,
        "lihuaworld": {**_LIHUA_QUERY, **_PAPER_QUERY},
        "fused": _FUSED,
        "lihuaworld-fused": {**_LIHUA_QUERY, **_FUSED},
        "fused-hybrid": _FUSED_HYBRID,
        "lihuaworld-fused-hybrid": {**_LIHUA_QUERY, **_FUSED_HYBRID},
    }

    h: int = param(1, symbol="h", doc="kNN hops expanded from the retrieved queries", ge=0)
    n: int = param(15, symbol="n", doc="most similar queries kept among those passing γ", ge=1)
    gamma: float = param(1.0, symbol="γ", doc="threshold on s = cos + ε", ge=0.0, le=2.0)
    epsilon: float = param(1.0, symbol="ε", doc="added to the cosine")
    K: int = param(5, symbol="K", doc="chunks returned when retrieve gets no k", ge=1)
    chunk_weight: float = param(
        0.3, doc="deviation: weight of the chunk's own similarity (paper: 0)", ge=0.0, le=1.0
    )
    chunk_candidates: int = param(
        10,
        doc="deviation: the c chunks most similar to the query also compete, scored by their "
        "own s when no query matched them (paper: 0)",
        ge=0,
    )
    chunk_similarity: Literal["dense", "hybrid"] = param(
        "hybrid",
        doc="deviation: the chunk side of chunk_weight / chunk_candidates is the dense cosine "
        "or the dense + BM25 fusion of the hybrid baseline, on the cosine scale",
    )


@dataclass(frozen=True)
class QCGPreset:
    """A named pair of index and query parameters."""

    name: str
    index: QCGIndexParams
    query: QCGQueryParams


#: The paper's two settings (appendix B.3): MultiHop-RAG (``paper``) and LiHuaWorld.
PRESETS: dict[str, QCGPreset] = {
    name: QCGPreset(
        name,
        QCGIndexParams.from_options({"preset": name}),
        QCGQueryParams.from_options({"preset": name}),
    )
    for name in QCGIndexParams.PRESETS
}


def preset(name: str) -> QCGPreset:
    """The preset called ``name`` (``"paper"`` = ``"multihop-rag"``, ``"lihuaworld"``...).

    Raises
    ------
    ValueError
        For an unknown name.
    """
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(
            f"unknown QCG preset {name!r}; expected one of {sorted(PRESETS)}"
        ) from None
