"""Q-Iter under a metadata filter: the graph as a filtered query may see it.

A filtered Q-Iter query runs on a :class:`ScopedView` of its view (the flat
:class:`~graphrag_integrations.methods.clue.graph.ClueGraph` or a
:class:`~graphrag_integrations.methods.clue.neighbourhood.NeighbourhoodView`): the same rows,
but only the allowed ones are ever handed out, so every stage works on the matching chunks:

* a chunk is allowed when its metadata matches (the
  :class:`~graphrag_integrations.core.retrieval.filter_scope.FilterScope` over the chunk
  nodes), a knowledge unit with its chunk, an entity when an allowed unit mentions it (an
  entity other documents mention too stays a connector; their units are never reached);
* anchoring asks the vector layers for the nearest allowed units and entities only
  (:meth:`ScopedView.nearest`), the beam search expands an anchor into its allowed units only
  (:meth:`ScopedView.linked_units`), and the top-up draws from allowed chunks only (the scan,
  the nearest chunks and the chunks holding a query word).

What is allowed is computed once per filter and index version: boolean masks over the flat
view's rows (numpy, no per-row Python), or with a database graph the allowed unit and entity
keys, read from the allowed chunks with two batched reads. The lexical half of the default
scorer keeps the collection statistics of the whole index (BM25 idf): scores of a filtered
query may differ from an index of the matching chunks alone, its passages never come from
elsewhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.index.filtered_reads import nearest_within, passage_scope
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.retrieval.filter_scope import FilterCache, FilterScope
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.clue.graph import ClueGraph
from graphrag_integrations.methods.clue.neighbourhood import NeighbourhoodView
from graphrag_integrations.methods.clue.schema import CHUNK, CONTAINS, ENTITY, MENTIONS, UNIT
from graphrag_integrations.methods.clue.statistics import CollectionStats
from graphrag_integrations.methods.clue.view import (
    IntRows,
    OrderKey,
    QIterView,
    TermStatistics,
    rank_hits,
)

__all__ = ["FlatMasks", "ScopedView", "scoped_view"]

_CACHE = "clue-filters"


@dataclass(frozen=True)
class FlatMasks:
    """Allowed rows of a :class:`ClueGraph`: one boolean per chunk, unit and entity."""

    chunks: npt.NDArray[np.bool_]
    units: npt.NDArray[np.bool_]
    entities: npt.NDArray[np.bool_]

    @classmethod
    def of(cls, graph: ClueGraph, scope: FilterScope) -> FlatMasks:
        """The masks of ``scope`` over ``graph`` (a unit with its chunk, an entity when an
        allowed unit mentions it)."""
        chunks = np.fromiter(
            (pid in scope.passages for pid in graph.passage_ids), np.bool_, len(graph.passage_ids)
        )
        units = chunks[graph.unit_passage] if graph.n_units else np.zeros(0, np.bool_)
        entities = np.zeros(graph.n_entities, np.bool_)
        mentions = graph.unit_entities
        for row in np.flatnonzero(units):
            entities[mentions[row]] = True
        return cls(chunks, units, entities)


@dataclass(frozen=True)
class AllowedKeys:
    """Allowed chunk, unit and entity keys of a database graph (read from the allowed chunks)."""

    scope: FilterScope
    units: frozenset[str]
    entities: frozenset[str]

    @classmethod
    def of(cls, store: IndexStore, scope: FilterScope) -> AllowedKeys:
        graph = store.graph
        chunks = [node_id(CHUNK, key) for key in sorted(scope.passages)]
        contained = graph.neighbors_many(chunks, CONTAINS) if chunks else {}
        units = sorted({u for us in contained.values() for u in us})
        mentioned = graph.neighbors_many(units, MENTIONS) if units else {}
        entities = {node_key(e) for es in mentioned.values() for e in es}
        return cls(scope, frozenset(node_key(u) for u in units), frozenset(entities))


def _flat_cache(
    store: IndexStore, previous: FilterCache[FlatMasks] | None
) -> FilterCache[FlatMasks]:
    return FilterCache()


def _keys_cache(
    store: IndexStore, previous: FilterCache[AllowedKeys] | None
) -> FilterCache[AllowedKeys]:
    return FilterCache()


def scoped_view(store: IndexStore, view: QIterView, where: MetadataFilter) -> ScopedView:
    """``view`` as a query filtered by ``where`` sees it (what is allowed: cached per filter
    and store version)."""
    scope = passage_scope(store, CHUNK, where)
    if isinstance(view, ClueGraph):
        masks = store.derived(f"{_CACHE}:flat", _flat_cache).get(
            where, lambda: FlatMasks.of(view, scope)
        )
        return FlatScopedView(view, scope, masks)
    if isinstance(view, NeighbourhoodView):
        keys = store.derived(f"{_CACHE}:keys", _keys_cache).get(
            where, lambda: AllowedKeys.of(store, scope)
        )
        return NeighbourhoodScopedView(view, store, keys)
    raise TypeError(f"no filtered Q-Iter view of {type(view).__name__}")


class ScopedView:
    """A :class:`~graphrag_integrations.methods.clue.view.QIterView` restricted to the rows a
    filter allows (see the module docstring); every other read goes to the view it wraps."""

    def __init__(self, view: QIterView, scope: FilterScope) -> None:
        self.view = view
        self.scope = scope

    # -- what the filter decides -----------------------------------------------------------
    def allowed_units(self, rows: IntRows) -> IntRows:
        """The allowed ones among unit ``rows`` (order kept)."""
        raise NotImplementedError

    def passage_allowed(self, row: int) -> bool:
        """Whether chunk ``row`` is allowed."""
        raise NotImplementedError

    def nearest(self, kind: str, vector: FloatMatrix, k: int) -> list[int]:
        """Rows of the ``k`` allowed units or entities nearest ``vector``, best first (exact
        ties in graph order)."""
        raise NotImplementedError

    # -- the protocol, restricted ----------------------------------------------------------
    @property
    def has_passages(self) -> bool:
        return bool(self.scope.passages) and self.view.has_passages

    def linked_units(self, entity: int) -> IntRows:
        return self.allowed_units(self.view.linked_units(entity))

    def unreached_passages(self, reached: set[int], batch: int) -> Iterator[list[int]]:
        for rows in self.view.unreached_passages(reached, batch):
            kept = [r for r in rows if self.passage_allowed(r)]
            if kept:
                yield kept

    # -- the protocol, delegated -----------------------------------------------------------
    @property
    def has_units(self) -> bool:
        return self.view.has_units

    @property
    def has_entities(self) -> bool:
        return self.view.has_entities

    @property
    def unit_terms(self) -> TermStatistics:
        return self.view.unit_terms

    @property
    def passage_terms(self) -> TermStatistics:
        return self.view.passage_terms

    def rows_of(self, kind: str, keys: Sequence[str]) -> list[int]:
        return self.view.rows_of(kind, keys)

    def order_keys(self, kind: str, rows: Sequence[int]) -> list[OrderKey]:
        return self.view.order_keys(kind, rows)

    def canonical_path(self, units: Sequence[int]) -> tuple[int, ...]:
        return self.view.canonical_path(units)

    def prefetch_entities(self, rows: Sequence[int]) -> None:
        self.view.prefetch_entities(rows)

    def entity_name(self, entity: int) -> str:
        return self.view.entity_name(entity)

    def prefetch_units(self, rows: Sequence[int], *, vectors: bool, data: bool) -> None:
        self.view.prefetch_units(rows, vectors=vectors, data=data)

    def unit_vectors(self, rows: Sequence[int] | IntRows) -> FloatMatrix:
        return self.view.unit_vectors(rows)

    def mentions(self, unit: int) -> list[int]:
        return self.view.mentions(unit)

    def chunk_of(self, unit: int) -> int:
        return self.view.chunk_of(unit)

    def unit_text(self, unit: int) -> str:
        return self.view.unit_text(unit)

    def unit_bag(self, unit: int) -> tuple[Counter[str], int]:
        return self.view.unit_bag(unit)

    def prefetch_passages(self, rows: Sequence[int]) -> None:
        self.view.prefetch_passages(rows)

    def passage_vectors(self, rows: Sequence[int]) -> FloatMatrix:
        return self.view.passage_vectors(rows)

    def passage_bag(self, row: int) -> tuple[Counter[str], int]:
        return self.view.passage_bag(row)

    def passage(self, row: int) -> Passage:
        return self.view.passage(row)


class FlatScopedView(ScopedView):
    """A :class:`ScopedView` of the flat :class:`ClueGraph` (masks over its rows)."""

    view: ClueGraph

    def __init__(self, view: ClueGraph, scope: FilterScope, masks: FlatMasks) -> None:
        super().__init__(view, scope)
        self.masks = masks

    def allowed_units(self, rows: IntRows) -> IntRows:
        return rows[self.masks.units[rows]]

    def passage_allowed(self, row: int) -> bool:
        return bool(self.masks.chunks[row])

    def nearest(self, kind: str, vector: FloatMatrix, k: int) -> list[int]:
        g = self.view
        matrix, mask = (
            (g.unit_matrix, self.masks.units)
            if kind == UNIT
            else (g.entity_matrix, self.masks.entities)
        )
        rows = np.flatnonzero(mask)
        if not rows.size or not np.any(vector):
            return []
        scores = matrix[rows] @ np.asarray(vector, np.float32)
        return [int(rows[i]) for i in top_k(scores, k)]  # ties: lower row (graph order)


class NeighbourhoodScopedView(ScopedView):
    """A :class:`ScopedView` of a per-query
    :class:`~graphrag_integrations.methods.clue.neighbourhood.NeighbourhoodView` (allowed keys;
    the vector searches restricted in the vector layers), with the top-up's reads."""

    view: NeighbourhoodView

    def __init__(self, view: NeighbourhoodView, store: IndexStore, keys: AllowedKeys) -> None:
        super().__init__(view, keys.scope)
        self.store = store
        self.keys = keys

    def allowed_units(self, rows: IntRows) -> IntRows:
        allowed = self.keys.units
        keep = [i for i, r in enumerate(rows.tolist()) if self.view.unit_key(r) in allowed]
        return rows[keep]

    def passage_allowed(self, row: int) -> bool:
        return self.scope.allows(self.view.passage_key(row))

    def nearest(self, kind: str, vector: FloatMatrix, k: int) -> list[int]:
        if kind == UNIT:  # unit records carry their chunk: the layer can restrict the search
            hint = self.scope.passage_hint("chunk_id")
            hits = nearest_within(self.store, UNIT, vector, k, self.keys.units, hint)
        else:
            hits = nearest_within(self.store, ENTITY, vector, k, self.keys.entities)
        return rank_hits(self.view, kind, hits, k)

    def unreached_passages(self, reached: set[int], batch: int) -> Iterator[list[int]]:
        return self.view.unreached_passages(reached, batch, self.scope)

    # -- the top-up's view (methods.clue.top_up.TopUpView) ----------------------------------
    @property
    def can_search_terms(self) -> bool:
        return self.view.can_search_terms

    @property
    def passage_terms(self) -> CollectionStats:
        return self.view.passage_terms

    def passages_with_term(self, term: str) -> list[int]:
        return [r for r in self.view.passages_with_term(term) if self.passage_allowed(r)]

    def nearest_passages(self, vector: FloatMatrix, m: int) -> list[int]:
        return self.view.nearest_passages(vector, m, self.scope)

    def passage_order(self, rows: Sequence[int]) -> list[OrderKey]:
        return self.view.passage_order(rows)
