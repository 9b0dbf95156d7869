"""What Q-Iter reads from a Clue-Index: the :class:`QIterView` protocol, met by two views.

* :class:`~graphrag_integrations.methods.clue.graph.ClueGraph`, the flat view: every row of
  the graph in arrays, built once per store version (the networkx ``GraphStore`` default);
* :class:`~graphrag_integrations.methods.clue.neighbourhood.NeighbourhoodView`, one per
  query: rows are the nodes the query reached, read per hop from the graph backend with
  batched reads, through a bounded cache (a database backend's default).

Rows are ``int`` handles valid within one view. Wherever Q-Iter breaks an exact tie by "graph
order" (the nearest units / entities, the canonical order of a path, the top-up of the final
chunks) it asks the view for :meth:`QIterView.order_keys`, which is the row itself in the flat
view and the same order computed from the neighbourhood in the other, so both views give the
same ids and scores.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.types import Passage

__all__ = ["IntRows", "OrderKey", "QIterView", "TermStatistics", "rank_hits"]

IntRows = npt.NDArray[np.int64]
OrderKey = tuple[int, ...]


class TermStatistics(Protocol):
    """Collection-wide BM25 statistics (``TermStats`` or ``statistics.CollectionStats``)."""

    @property
    def size(self) -> int: ...

    @property
    def avg_length(self) -> float: ...

    def idf(self, term: str) -> float: ...


class QIterView(Protocol):
    """The graph as Q-Iter's beam search and scorers see it (see the module docstring)."""

    @property
    def has_passages(self) -> bool: ...

    @property
    def has_units(self) -> bool: ...

    @property
    def has_entities(self) -> bool: ...

    @property
    def unit_terms(self) -> TermStatistics: ...

    @property
    def passage_terms(self) -> TermStatistics: ...

    # -- rows and their order -------------------------------------------------------------
    def rows_of(self, kind: str, keys: Sequence[str]) -> list[int]:
        """Rows of unit or entity ``keys`` (``IndexMismatchError`` for a key not in the graph)."""
        ...

    def order_keys(self, kind: str, rows: Sequence[int]) -> list[OrderKey]:
        """Keys sorting unit or entity rows in graph order."""
        ...

    def canonical_path(self, units: Sequence[int]) -> tuple[int, ...]:
        """Distinct unit rows sorted by text, then graph order (Algorithm 3 line 12)."""
        ...

    # -- entities and units ---------------------------------------------------------------
    def prefetch_entities(self, rows: Sequence[int]) -> None:
        """Read the units linked to these entities in one go (a hint)."""
        ...

    def linked_units(self, entity: int) -> IntRows:
        """Rows of the units mentioning ``entity``, in graph order."""
        ...

    def entity_name(self, entity: int) -> str: ...

    def prefetch_units(self, rows: Sequence[int], *, vectors: bool, data: bool) -> None:
        """Read these units' vectors and / or their data (text, chunk, entities) in one go."""
        ...

    def unit_vectors(self, rows: Sequence[int] | IntRows) -> FloatMatrix: ...

    def mentions(self, unit: int) -> list[int]:
        """Entity rows ``unit`` mentions, in mention order."""
        ...

    def chunk_of(self, unit: int) -> int: ...

    def unit_text(self, unit: int) -> str: ...

    def unit_bag(self, unit: int) -> tuple[Counter[str], int]:
        """Term counts and length in tokens of a unit's text."""
        ...

    # -- chunks ---------------------------------------------------------------------------
    def prefetch_passages(self, rows: Sequence[int]) -> None: ...

    def passage_vectors(self, rows: Sequence[int]) -> FloatMatrix: ...

    def passage_bag(self, row: int) -> tuple[Counter[str], int]: ...

    def passage(self, row: int) -> Passage: ...

    def unreached_passages(self, reached: set[int], batch: int) -> Iterator[list[int]]:
        """Rows of every chunk not in ``reached``, in graph order, ``batch`` at a time."""
        ...


def rank_hits(view: QIterView, kind: str, hits: Sequence[tuple[str, float]], k: int) -> list[int]:
    """Rows of the ``k`` best ``(key, score)`` hits of a vector index, best first; exact ties
    in graph order whatever the backend's own order.

    Examples
    --------
    >>> from graphrag_integrations.methods.clue.graph import ClueGraph
    >>> g = ClueGraph()
    >>> g.entity_row = {"a": 0, "b": 1, "c": 2}
    >>> rank_hits(g, "entity", [("c", 0.5), ("b", 0.9), ("a", 0.5)], 2)
    [1, 0]
    """
    rows = view.rows_of(kind, [key for key, _ in hits])
    scores = [score for _, score in hits]
    tied = len(set(scores)) < len(scores)
    order = view.order_keys(kind, rows) if tied else [()] * len(rows)
    ranked = sorted(zip(scores, order, rows, strict=True), key=lambda t: (-t[0], t[1]))
    return [row for _, _, row in ranked[:k]]
