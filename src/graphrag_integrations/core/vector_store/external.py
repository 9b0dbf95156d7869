"""What every vector index on somebody else's store shares: checks, replace, filters, scores.

:class:`StoreVectorIndex` is the base of the adapters that put a layer in a store this package
does not own (:mod:`.langchain_vectors`, :mod:`.llamaindex_vectors`, :mod:`.falkordb`). A
subclass implements five small hooks (write, remove, search, read vectors, read records) and
gets the :class:`~graphrag_integrations.core.vector_store.protocol.VectorIndex` semantics:

* **checked input** - the same checks and messages as the in-memory index
  (:func:`~graphrag_integrations.core.vector_store.validation.check_records`);
* **replace** - ``add`` of an id already present removes the old record first, so no stale
  metadata or document survives (stores that upsert keep the old metadata otherwise);
* **filters** - the ``where`` language of :mod:`graphrag_integrations.core.retrieval.filters`: a
  subclass translates what its store expresses with the same semantics (``_native``); the
  result is always checked again on the returned metadata, and what the store cannot express
  is evaluated here on a growing candidate budget (``k``, ``4k``, ``16k``... until ``k``
  records match or the store has no more), so filtered results are the exact best matches
  among what the store ranks;
* **scores as cosine** - a store's raw score (a distance, a relevance) is turned into the
  cosine similarity by a named conversion (:data:`SCORE_CONVERSIONS`) or a callable.

Examples
--------
>>> to_cosine("cosine_distance")(0.25)
0.75
>>> round(to_cosine("squared_l2")(0.5), 3)
0.75
"""

from __future__ import annotations

import logging
import math
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.core.vector_store.protocol import MetadataValue, Where
from graphrag_integrations.core.vector_store.validation import (
    CheckedVectorIndex,
    Records,
    check_dimension,
    check_ids,
)

logger = logging.getLogger(__name__)

#: A store's raw score -> cosine similarity.
ScoreConversion = Callable[[float], float]
#: A candidate from a store: ``(id, raw score, metadata)``.
Candidate = tuple[str, float, Mapping[str, Any]]

#: How far the candidate budget grows per round when records are filtered here.
FILTER_GROWTH = 4


def _exp_neg(scale: float) -> ScoreConversion:
    def convert(s: float) -> float:
        return 1.0 - scale * (-math.log(s)) if s > 0 else -1.0

    return convert


#: The named score conversions (raw score of an L2-normalised vector store -> cosine).
SCORE_CONVERSIONS: dict[str, ScoreConversion] = {
    "cosine": float,  # the store returns the cosine similarity itself
    "cosine_distance": lambda s: 1.0 - s,  # 1 - cos (Chroma "cosine" and "ip" spaces)
    "squared_l2": lambda s: 1.0 - s / 2.0,  # |a - b|^2 = 2 - 2 cos (Chroma "l2" space)
    "l2": lambda s: 1.0 - s * s / 2.0,  # |a - b| (FAISS with sqrt, PGVector euclidean)
    "exp_neg_cosine_distance": _exp_neg(1.0),  # exp(-(1 - cos)) (LlamaIndex's Chroma store)
    "exp_neg_squared_l2": _exp_neg(0.5),  # exp(-|a - b|^2)
}


def to_cosine(score: str | ScoreConversion) -> ScoreConversion:
    """The conversion named ``score`` (one of :data:`SCORE_CONVERSIONS`) or ``score`` itself.

    Raises
    ------
    ValueError
        On an unknown name.
    """
    if callable(score):
        return score
    if score not in SCORE_CONVERSIONS:
        raise ValueError(
            f"unknown score conversion {score!r}: use one of {sorted(SCORE_CONVERSIONS)} "
            "or a callable raw score -> cosine"
        )
    return SCORE_CONVERSIONS[score]


def chroma_space(collection: Any) -> str:
    """The distance space (``"cosine"``, ``"l2"``, ``"ip"``) of a chromadb collection."""
    config = getattr(collection, "configuration_json", None) or {}
    meta = getattr(collection, "metadata", None) or {}
    space = (config.get("hnsw") or {}).get("space") or (config.get("spann") or {}).get("space")
    return str(space or meta.get("hnsw:space", "l2"))


def chroma_score(space: str, *, exp_neg: bool = False) -> str:
    """The :data:`SCORE_CONVERSIONS` name of a Chroma distance (``exp_neg``: ``exp(-d)``).

    >>> chroma_score("cosine"), chroma_score("l2", exp_neg=True)
    ('cosine_distance', 'exp_neg_squared_l2')
    """
    if space not in ("cosine", "ip", "l2"):
        raise ValueError(f"unknown chroma distance space {space!r}")
    if exp_neg:
        return "exp_neg_squared_l2" if space == "l2" else "exp_neg_cosine_distance"
    return "squared_l2" if space == "l2" else "cosine_distance"


class StoreVectorIndex(CheckedVectorIndex):
    """A :class:`~graphrag_integrations.core.vector_store.protocol.VectorIndex` on a store
    reached through five hooks (see the module docstring).

    Parameters
    ----------
    dimension : int
        Length of every vector.
    model_name : str
        Embedding model that produced the vectors.
    track_ids : bool
        Keep the set of ids this object added (and not deleted): ``len`` counts them and a
        query returns only them, so records of a store shared with other data are never
        returned, counted or deleted. For stores that cannot count one collection.

    Attributes
    ----------
    client_side_filters : int
        Queries whose filter (or part of it) was evaluated here on a growing budget.
    """

    def __init__(self, dimension: int, model_name: str, *, track_ids: bool) -> None:
        self.dimension = check_dimension(dimension)
        self.model_name = model_name
        self._ids: dict[str, None] | None = {} if track_ids else None
        self.client_side_filters = 0

    # -- hooks -----------------------------------------------------------------------------
    @abstractmethod
    def _write(self, records: Records) -> None:
        """Add new records (their ids are not in the store)."""

    @abstractmethod
    def _remove(self, ids: list[str]) -> None:
        """Remove records (ids not present are ignored)."""

    @abstractmethod
    def _search(self, query: FloatMatrix, n: int, native: Any) -> list[Candidate]:
        """Up to ``n`` candidates best first, restricted by the store's filter ``native``."""

    @abstractmethod
    def _vectors(self, ids: list[str]) -> dict[str, Any]:
        """The stored vectors of the ``ids`` found (``{id: vector}``)."""

    @abstractmethod
    def _records(self, ids: list[str]) -> dict[str, tuple[Mapping[str, Any], str | None]]:
        """``{id: (metadata, document)}`` of the ``ids`` found."""

    def _native(self, where: MetadataFilter) -> Any:
        """The store's form of ``where`` with the same semantics, or ``None`` (filter here)."""
        return None

    def _count(self) -> int:
        """Records in the store (used when ids are not tracked)."""
        raise NotImplementedError

    # -- the protocol ----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._ids) if self._ids is not None else self._count()

    def __contains__(self, id_: object) -> bool:
        if self._ids is not None:
            return id_ in self._ids
        return isinstance(id_, str) and bool(self._records([id_]))

    def _add(self, records: Records) -> None:
        if not records.ids:
            return
        self._remove(records.ids)  # a whole-record replace, whatever the store's upsert keeps
        self._write(records)
        if self._ids is not None:
            self._ids.update(dict.fromkeys(records.ids))

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the records with these ids (ids not present are ignored)."""
        id_list = check_ids(ids)
        if self._ids is not None:
            id_list = [i for i in id_list if i in self._ids]  # never another writer's records
        if not id_list:
            return
        self._remove(id_list)
        if self._ids is not None:
            for i in id_list:
                del self._ids[i]

    def _query(
        self, q: FloatMatrix, k: int, flt: MetadataFilter | None, where: Where | None
    ) -> list[tuple[str, float]]:
        """The store's search, with the filter translated or evaluated here (module notes)."""
        if self._ids is not None and not self._ids:
            return []  # (an untracked store answers an empty search: no count round trip)
        native = self._native(flt) if flt is not None else None
        exact = flt is None or native is not None
        if not exact:
            self.client_side_filters += 1
            logger.info("%r: filter %r evaluated on the returned metadata", self, where)
        budget = k
        while True:
            candidates = self._search(q, budget, native)
            kept = [
                (id_, score)
                for id_, score, meta in candidates
                if (self._ids is None or id_ in self._ids) and (flt is None or flt.matches(meta))
            ]
            if len(kept) >= k or len(candidates) < budget:
                return kept[:k]
            budget *= FILTER_GROWTH

    def get_embeddings(self, ids: Sequence[str]) -> FloatMatrix:
        """Stored vectors of ``ids`` in the order given; raises ``KeyError`` for unknown ids."""
        id_list = list(ids)
        if not id_list:
            return np.zeros((0, self.dimension), dtype=np.float32)
        wanted = [i for i in dict.fromkeys(id_list) if self._ids is None or i in self._ids]
        found = self._vectors(wanted) if wanted else {}
        missing = [i for i in id_list if i not in found]
        if missing:
            raise KeyError(f"unknown ids: {missing[:5]}")
        return np.asarray([found[i] for i in id_list], dtype=np.float32).reshape(
            len(id_list), self.dimension
        )

    def _record(self, id_: str) -> tuple[Mapping[str, Any], str | None]:
        found = self._records([id_]) if self._ids is None or id_ in self._ids else {}
        if id_ not in found:
            raise KeyError(f"unknown id: {id_!r}")
        return found[id_]

    def get_metadata(self, id_: str) -> dict[str, MetadataValue]:
        """Metadata of one record (a copy); raises ``KeyError`` for an unknown id."""
        return dict(self._record(id_)[0])

    def get_document(self, id_: str) -> str | None:
        """Document text of one record; raises ``KeyError`` for an unknown id."""
        return self._record(id_)[1]

    @property
    def ids(self) -> list[str] | None:
        """The ids this object holds, in insertion order (``None`` when not tracked)."""
        return None if self._ids is None else list(self._ids)
