"""ReG's anchors: the KG entities a query names, in the whole KG or a filtered one.

:class:`EntityAnchoring` is the part of
:class:`~graphrag_integrations.methods.reg.index.RefinedSubgraphRetriever` that links a query
to its topic entities (:mod:`~graphrag_integrations.methods.reg.linking`: ``[bracketed]``
names, else the longest named spans, else the entity nearest the query embedding), reading the
whole-graph view, the per-query neighbourhood reads of a database graph
(:mod:`~graphrag_integrations.methods.reg.neighbourhood`) or, under a metadata filter, the KG
of the matching documents (:mod:`~graphrag_integrations.methods.reg.scope`).
"""

from __future__ import annotations

import logging
from collections.abc import Container

import numpy as np

from graphrag_integrations.core.encoders.embeddings import Embedder
from graphrag_integrations.methods.reg.linking import (
    BRACKET,
    bracketed,
    link_table,
    named_entities,
)
from graphrag_integrations.methods.reg.neighbourhood import NeighbourhoodReads
from graphrag_integrations.methods.reg.store import KGView, RegStore

__all__ = ["EntityAnchoring"]

logger = logging.getLogger(__name__)


class EntityAnchoring:
    """Mixin: the KG views of an index and the linking of queries to their anchors."""

    store: RegStore
    embedder: Embedder
    stats: dict[str, int]
    _linker: tuple[KGView, dict[tuple[str, ...], list[int]]] | None
    _reads: NeighbourhoodReads | None

    @property
    def view(self) -> KGView:
        """The KG's array view (the whole graph: queries of a database graph do not use it,
        see :attr:`neighbourhood`)."""
        return self.store.view()

    @property
    def neighbourhood(self) -> NeighbourhoodReads | None:
        """The per-query reads of a database graph
        (:mod:`~graphrag_integrations.methods.reg.neighbourhood`); ``None`` when queries use
        the whole-graph :attr:`view` (``store.reads_lazily`` is false: networkx)."""
        if not self.store.reads_lazily:
            return None
        if self._reads is None or self._reads.store is not self.store:
            self._reads = NeighbourhoodReads(self.store)
        return self._reads

    def has_entity(self, name: str) -> bool:
        """Whether ``name`` is an entity of the KG."""
        reads = self.neighbourhood
        if reads is None:
            return name in self.view.entity_row
        return name in reads.names().known

    # -- anchors -----------------------------------------------------------------------------
    def link_entities(self, query: str) -> list[str]:
        """The query's anchor entities (see the module docstring)."""
        reads = self.neighbourhood
        if reads is not None:
            return self._link_read(reads, query)
        view = self.view
        if self._linker is None or self._linker[0] is not view:
            self._linker = (view, link_table(view.entities))
        return self._link_view(view, self._linker[1], query)

    def _link_view(
        self, view: KGView, table: dict[tuple[str, ...], list[int]], query: str
    ) -> list[str]:
        """:meth:`link_entities` in ``view`` (``table``: its link table)."""
        found = _known_bracketed(query, view.entity_row)
        if found:
            return found
        linked = named_entities(view.entities, table, query)
        if linked:
            return linked
        self.stats["entity_fallback"] += 1
        q = self.embedder.embed([BRACKET.sub(r"\1", query)])[0]
        best = int(np.argmax(view.entity_vectors @ q)) if view.entities else -1
        if best < 0:
            return []
        logger.warning(
            "no KG entity named in %r; anchoring at the nearest entity %r",
            query,
            view.entities[best],
        )
        return [view.entities[best]]

    def _link_read(self, reads: NeighbourhoodReads, query: str) -> list[str]:
        """:meth:`link_entities` from the entity names alone (no view)."""
        names = reads.names()
        found = _known_bracketed(query, names.known)
        if found:
            return found
        linked = named_entities(names.names, names.table, query)
        if linked:
            return linked
        self.stats["entity_fallback"] += 1
        best = reads.nearest_entity(self.embedder.embed([BRACKET.sub(r"\1", query)])[0])
        if best is None:
            return []
        logger.warning("no KG entity named in %r; anchoring at the nearest entity %r", query, best)
        return [best]


def _known_bracketed(query: str, known: Container[str]) -> list[str]:
    """The ``[bracketed]`` names of ``query`` that are KG entities (``known``); the others are
    named in a warning."""
    names = bracketed(query)
    missing = [b for b in names if b not in known]
    if missing:
        logger.warning("bracketed entities not in the KG: %s", missing)
    return [b for b in names if b in known]
