"""QCG-RAG parameters (paper symbols in the field docs) and the two presets of the paper.

:class:`QCGIndexParams` shape the graph (query generation, filtering, kNN layer);
:class:`QCGQueryParams` shape retrieval. The paper's defaults (appendix B.3) are the MultiHop-RAG
setting (``h=1, k=3, n=15, gamma=1.0``); :data:`PRESETS` adds the LiHuaWorld setting
(``k=2, n=10, gamma=1.5``). Deviations added for quality are parameters whose default is the
paper's behaviour (``chunk_weight=0``, ``symmetric_knn=False``).

Examples
--------
>>> preset("lihuaworld").query.gamma
1.5
>>> QCGQueryParams(h=2).h
2
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

NodeText = Literal["query+answer", "query", "answer"]
NODE_TEXTS: tuple[str, ...] = ("query+answer", "query", "answer")


@dataclass(frozen=True)
class QCGIndexParams:
    """How the query-centric graph is built (§3.3).

    Parameters
    ----------
    M : int
        Paper ``M`` (default 20): query-answer pairs asked of the LLM per chunk.
    alpha : float
        Paper ``alpha`` (default 0.8): share of each chunk's pairs kept by extended
        Doc2Query--, ranked by ``cos(q (+) a, chunk)``; ``ceil(alpha * pairs)`` are kept.
    k_neighbors : int
        Paper ``k`` of ``KNN(q, k)`` (default 3; LiHuaWorld 2): query-query edges per query node.
    node_text : {"query+answer", "query", "answer"}
        What a query node embeds (paper default ``q (+) a``; the other two are the node
        ablation of §4.2 RQ3). Filtering always scores ``q (+) a`` as the paper does.
    symmetric_knn : bool
        Paper: ``False``, edges ``q -> q'`` for ``q'`` in ``KNN(q, k)`` and expansion follows
        them outwards. ``True`` also follows them backwards (``q'`` reaches ``q``).
    """

    M: int = field(default=20, metadata={"symbol": "M"})
    alpha: float = field(default=0.8, metadata={"symbol": "alpha"})
    k_neighbors: int = field(default=3, metadata={"symbol": "k"})
    node_text: NodeText = field(default="query+answer", metadata={"symbol": "node"})
    symmetric_knn: bool = field(default=False, metadata={"symbol": None})

    def __post_init__(self) -> None:
        if self.M < 1:
            raise ValueError(f"M must be >= 1, got {self.M}")
        if not 0.0 < self.alpha <= 1.0:
            raise ValueError(f"alpha must be in (0, 1], got {self.alpha}")
        if self.k_neighbors < 0:
            raise ValueError(f"k_neighbors must be >= 0, got {self.k_neighbors}")
        if self.node_text not in NODE_TEXTS:
            raise ValueError(f"node_text must be one of {NODE_TEXTS}, got {self.node_text!r}")


@dataclass(frozen=True)
class QCGQueryParams:
    """How a user query walks the graph (§3.4).

    Parameters
    ----------
    h : int
        Paper ``h`` (default 1): kNN hops expanded from the retrieved queries (0, 1, 2).
    n : int
        Paper ``n`` (default 15; LiHuaWorld 10): at most this many queries are retrieved, the
        ``n`` most similar among those passing ``gamma``.
    gamma : float
        Paper ``gamma`` in [0, 2] (default 1.0; LiHuaWorld 1.5): threshold on
        ``s = cos + epsilon``; 1.0 keeps every query with a non-negative cosine.
    epsilon : float
        Paper ``epsilon`` (= 1): added to the cosine.
    K : int
        Paper ``K`` (default 5): chunks returned when ``retrieve`` gets no ``k``.
    chunk_weight : float
        Deviation (default 0 = paper): a chunk's score becomes
        ``(1 - w) * mean s of its queries + w * (cos(q_u, chunk) + epsilon)``, for every
        candidate chunk (chunks are still found through queries only).
    """

    h: int = field(default=1, metadata={"symbol": "h"})
    n: int = field(default=15, metadata={"symbol": "n"})
    gamma: float = field(default=1.0, metadata={"symbol": "gamma"})
    epsilon: float = field(default=1.0, metadata={"symbol": "epsilon"})
    K: int = field(default=5, metadata={"symbol": "K"})
    chunk_weight: float = field(default=0.0, metadata={"symbol": None})

    def __post_init__(self) -> None:
        if self.h < 0:
            raise ValueError(f"h must be >= 0, got {self.h}")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if self.K < 1:
            raise ValueError(f"K must be >= 1, got {self.K}")
        if not 0.0 <= self.chunk_weight <= 1.0:
            raise ValueError(f"chunk_weight must be in [0, 1], got {self.chunk_weight}")


@dataclass(frozen=True)
class QCGPreset:
    """A named pair of index and query parameters."""

    name: str
    index: QCGIndexParams
    query: QCGQueryParams


#: The paper's two settings (appendix B.3): MultiHop-RAG (the defaults) and LiHuaWorld.
PRESETS: dict[str, QCGPreset] = {
    "multihop-rag": QCGPreset("multihop-rag", QCGIndexParams(), QCGQueryParams()),
    "lihuaworld": QCGPreset(
        "lihuaworld", QCGIndexParams(k_neighbors=2), QCGQueryParams(n=10, gamma=1.5)
    ),
}


def preset(name: str) -> QCGPreset:
    """The preset called ``name`` (``"multihop-rag"`` or ``"lihuaworld"``).

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


def split_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Split keyword options into (index params, query params, the rest).

    Examples
    --------
    >>> split_options({"M": 5, "h": 2, "llm": None})
    ({'M': 5}, {'h': 2}, {'llm': None})
    """
    index_names = {f.name for f in fields(QCGIndexParams)}
    query_names = {f.name for f in fields(QCGQueryParams)}
    idx = {k: v for k, v in options.items() if k in index_names}
    qry = {k: v for k, v in options.items() if k in query_names}
    rest = {k: v for k, v in options.items() if k not in index_names and k not in query_names}
    return idx, qry, rest
