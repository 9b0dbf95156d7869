"""Rolling an index back to its saved state: the unfinished batch of a killed checkpointed build.

A checkpointed build (:mod:`~graphrag_integrations.core.index.checkpoint`) saves the index after
each
finished batch. With the graph in a database (FalkorDB), a batch killed before its save has
already written part of its graph into the server, while its vectors (in the process) are
lost: the saved index's vectors then cover fewer nodes than the graph holds. The checkpoint
lists the documents of the batch it starts (``pending``); resuming, it loads the saved index
inside :func:`rolling_back` of those documents:

1. :meth:`~graphrag_integrations.core.index.store.IndexStore.load` accepts graph nodes without
   a saved vector when *every* document of their provenance is pending (nodes of the killed
   batch), and gives them a placeholder vector so that the method's load builds its views;
   any other mismatch is the usual ``IndexMismatchError``;
2. the index's ``load`` template calls :func:`roll_back` between reading the files and
   checking them against the manifest: each pending document the index holds is removed by
   the method's own ``delete`` (so derived state - Clue's statistics node, QCG's kNN lists,
   KGT's and ReG's views - follows), then whatever the pending documents still carry (a
   batch killed mid-write may leave nodes of a document not yet listed) is removed by
   :meth:`~graphrag_integrations.core.index.store.IndexStore.remove_document`;
3. every placeholder must be gone by then (else ``IndexMismatchError``: the graph holds
   nodes of the killed batch the rollback could not remove), and what was rolled back is
   logged (a warning).

Only the pending documents' contributions are removed: the documents the checkpoint lists as
done, and anything else in the graph, are kept.

A build killed in its *first* batch saved no index: the graph it made holds nothing but that
batch. The checkpoint records, before that batch, whether the database graph was empty
(:func:`database_location`, :func:`holds_data`); only then does the resume remove the pending
documents' provenance from it (:func:`roll_back_graph`; nodes left without provenance go), so
that the new build finds it empty. A graph that held data before is never touched (the build
refuses it, as without a checkpoint).

Examples
--------
>>> with rolling_back(["d3", "d4"]) as state:
...     active_rollback() is state, sorted(state.doc_ids)
(True, ['d3', 'd4'])
>>> active_rollback() is None
True
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from graphrag_integrations.core.index.flags import instance_flag
from graphrag_integrations.errors import IndexMismatchError

logger = logging.getLogger(__name__)


@dataclass
class Rollback:
    """The documents being rolled back and the placeholder vectors a load gave their nodes.

    Attributes
    ----------
    doc_ids : frozenset of str
        The pending documents (their contributions are removed).
    placeholders : list of (store, kind, keys)
        Nodes of the pending documents that had no saved vector, per store and node kind.
    journals : list
        Database graphs whose write journal (:mod:`~graphrag_integrations.core.index.journal`)
        listed documents of ``doc_ids``, or whose write log listed documents written after the
        loaded folder was persisted: their journal is cleared and the rollback logged once it
        is done.
    later : frozenset of str
        The documents of ``doc_ids`` written to a database graph after the loaded folder was
        persisted (:mod:`~graphrag_integrations.core.index.graph_changes`), other than the
        pending batch's.
    unfinished : bool
        Whether a write journal added documents (an unfinished write, in the log line).
    hidden : frozenset of str
        Documents another process still running is writing (or wrote without persisting):
        never rolled back (they are that process's), but left out of what the loaded index
        holds (:mod:`~graphrag_integrations.core.index.snapshot`); their nodes get
        placeholder vectors that stay.
    writer_running : bool
        Whether another process still running is writing the graph (or holds unpersisted
        writes): then every node without a saved vector is taken for its write (a placeholder
        vector, its documents hidden), since its journal may grow while the load reads.
    observed : list of (graph, int, tuple)
        Each database graph a load read, with its write version and write state when the
        load looked at its changes (:mod:`~graphrag_integrations.core.index.snapshot`: what
        the loaded index has seen).
    journaled : frozenset of str
        The documents of ``doc_ids`` that write journals listed (an unfinished write may have
        deleted part of them: what a load read from the folder about them is stale).
    restore : list of dict
        The passages of the documents an unfinished ``upsert`` replaced (its journal's
        records, :mod:`~graphrag_integrations.core.index.restore`): inserted again once the
        documents are rolled back.
    """

    doc_ids: frozenset[str]
    placeholders: list[tuple[Any, str, list[str]]] = field(default_factory=list)
    journals: list[Any] = field(default_factory=list)
    later: frozenset[str] = frozenset()
    unfinished: bool = False
    hidden: frozenset[str] = frozenset()
    writer_running: bool = False
    observed: list[tuple[Any, int, Any]] = field(default_factory=list)
    journaled: frozenset[str] = frozenset()
    restore: list[dict[str, Any]] = field(default_factory=list)

    def add_journal(
        self, graph: Any, doc_ids: Iterable[str], restore: Iterable[Mapping[str, Any]] = ()
    ) -> None:
        """Roll back ``doc_ids`` too (an unfinished write ``graph``'s journal records), then
        insert the passages ``restore`` again (those an unfinished ``upsert`` replaced)."""
        docs = frozenset(doc_ids)
        self._add(graph, docs)
        self.journaled = self.journaled | docs
        self.add_restore(restore)
        self.unfinished = True

    def add_restore(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Insert the passages ``records`` again after the rollback (each passage once)."""
        known = {str(record["id"]) for record in self.restore}
        for record in records:
            if str(record["id"]) not in known:
                known.add(str(record["id"]))
                self.restore.append(dict(record))

    def add_later_writes(self, graph: Any, doc_ids: Iterable[str]) -> None:
        """Roll back ``doc_ids`` too: written to ``graph`` after the folder was persisted
        (those already pending stay the pending batch's)."""
        docs = frozenset(doc_ids)
        self.later = self.later | (docs - self.doc_ids)
        self._add(graph, docs)

    def add_hidden(self, doc_ids: Iterable[str]) -> None:
        """Leave ``doc_ids`` out of the loaded index without rolling them back (a running
        process's writes; see :attr:`hidden`)."""
        self.hidden = self.hidden | (frozenset(doc_ids) - self.doc_ids)
        self.writer_running = True

    def covers(self, provenance: Iterable[str]) -> bool:
        """Whether a node with this provenance needs no saved vector: it comes from pending
        or hidden documents only (it leaves, or is never answered), or from any document while
        another process is writing (:attr:`writer_running`: its documents are then hidden).

        >>> Rollback(frozenset({"d3"}), hidden=frozenset({"d4"})).covers(["d3", "d4"])
        True
        """
        docs = set(provenance)
        return bool(docs) and (self.writer_running or docs <= self.doc_ids | self.hidden)

    def _add(self, graph: Any, docs: frozenset[str]) -> None:
        self.doc_ids = self.doc_ids | docs
        if all(g is not graph for g in self.journals):
            self.journals.append(graph)

    def owns(self, provenance: Iterable[str]) -> bool:
        """Whether a node with this provenance comes from the pending documents only.

        Examples
        --------
        >>> Rollback(frozenset({"d3"})).owns(["d3"]), Rollback(frozenset({"d3"})).owns(["d1", "d3"])
        (True, False)
        >>> Rollback(frozenset({"d3"})).owns([])  # a node of no document is nobody's batch
        False
        """
        docs = set(provenance)
        return bool(docs) and docs <= self.doc_ids


_ACTIVE: ContextVar[Rollback | None] = ContextVar("graphrag_rollback", default=None)


def active_rollback() -> Rollback | None:
    """The rollback of the current :func:`rolling_back` block, or ``None``."""
    return _ACTIVE.get()


@contextmanager
def rolling_back(doc_ids: Iterable[str]) -> Iterator[Rollback]:
    """Load indexes in this block rolled back to before the documents ``doc_ids``.

    See the module notes; outside such a block loads are strict (nothing rolled back).
    """
    state = Rollback(frozenset(doc_ids))
    token = _ACTIVE.set(state)
    try:
        yield state
    finally:
        _ACTIVE.reset(token)


def roll_back(
    index: Any, stores: Iterable[Any], *, what: str = "the unfinished batch"
) -> list[str]:
    """Remove the pending documents of the active rollback from a freshly read ``index``.

    Called by the ``load`` template after ``_read_files`` with the index's ``IndexStore``
    objects (``stores``; a no-op outside :func:`rolling_back`), and by
    :func:`~graphrag_integrations.core.index.journal.recover` (``what`` names the write in
    the log line). Returns the pending documents that had something to remove; the journals
    of the rollback are cleared afterwards.

    Raises
    ------
    IndexMismatchError
        If nodes of the pending documents without a saved vector remain afterwards.
    """
    state = _ACTIVE.get()
    if state is None:
        return []
    if not state.doc_ids:  # a write journaled before it wrote anything
        for graph in state.journals:
            graph.clear_journal()
        return []
    # the rollback's own writes: the journal it clears covers them (they start none)
    with instance_flag(index, JOURNAL_ACTIVE):
        rolled, restored = _remove_and_restore(index, stores, state)
    for graph in state.journals:
        graph.clear_journal(state.doc_ids)  # and logged: other folders see the change
    later = sorted(state.later)
    if later:
        logger.warning(
            "%s's graph changed after the folder was persisted (%d document(s) written since, "
            "by a process that ended without persisting again): loaded without them: %s "
            "(insert them again)",
            type(index).__name__,
            len(later),
            _some(later),
        )
    rolled_only = sorted(set(rolled) - state.later - set(restored))
    if rolled_only:
        logger.warning(
            "rolled back %d document(s) of %s from %s's graph: %s%s",
            len(rolled_only),
            "an unfinished write" if state.unfinished else what,
            type(index).__name__,
            _some(rolled_only),
            " (the index is as without them: run the failed call again)"
            if state.unfinished
            else "",
        )
    if restored:
        logger.warning(
            "put back %d document(s) an unfinished upsert of %s replaced, as they were: %s "
            "(run the failed call again)",
            len(restored),
            type(index).__name__,
            _some(sorted(restored)),
        )
    return sorted(set(rolled) - set(restored))


#: The instance flag of a journaled write in progress
#: (:mod:`~graphrag_integrations.core.index.journal`): writes made under it are not journaled.
JOURNAL_ACTIVE = "_journal_active"


def _remove_and_restore(
    index: Any, stores: Iterable[Any], state: Rollback
) -> tuple[list[str], list[str]]:
    """Remove the pending documents of ``state`` from ``index`` (the method's ``delete_many``,
    then leftovers in the stores), check no placeholder is left, then insert the passages of
    ``state.restore`` again; returns the documents removed and those put back."""
    from graphrag_integrations.core.graph.backends import is_in_process
    from graphrag_integrations.core.index.restore import restore

    stores = list(stores)
    pending = sorted(state.doc_ids)
    held = set(index.doc_ids())
    rolled = [doc for doc in pending if doc in held]
    index.delete_many(rolled)  # the method's own path: its derived state follows
    unlisted = [doc for doc in pending if doc not in held]
    leftovers = False
    for store in stores:
        # an in-process graph read from its saved file is never half-written; one whose own
        # write failed in this process (its journal in the rollback) may be
        journaled = any(journal is store.journal for journal in state.journals)
        if is_in_process(type(store.graph)) and not journaled:
            continue
        for doc in unlisted:  # leftovers of a batch killed mid-write (not yet a document)
            if store.remove_document(doc):
                leftovers = True
                if doc not in rolled:
                    rolled.append(doc)
        store.drop_orphan_vectors()  # of graph writes another index rolled back already
    after_failed_write = getattr(index, "_after_failed_write", None)
    if (leftovers or state.unfinished) and callable(after_failed_write):
        # what the method summed up from half-written documents: read from the graph again
        after_failed_write()
    for store, kind, keys in state.placeholders:
        left = [key for key in keys if store.has(kind, key)]
        if left:
            raise IndexMismatchError(
                f"rolling back the unfinished batch left {len(left)} {kind} node(s) without a "
                f"vector, e.g. {left[:3]} (corrupt index)"
            )
    return rolled, restore(index, state.restore)


def _some(ids: list[str], shown: int = 10) -> str:
    """The first ``shown`` ids, comma-separated, and how many more.

    >>> _some(["a", "b", "c"], shown=2)
    'a, b (and 1 more)'
    """
    more = f" (and {len(ids) - shown} more)" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def database_location(graph_store: Any) -> Any:
    """The ``FalkorDBLocation`` a ``graph_store=`` argument names, or ``None`` for an
    in-process graph, none, or a backend bound to replace what its graph holds (a build
    through it clears the graph anyway).

    Examples
    --------
    >>> database_location(None), database_location("networkx")
    (None, None)
    >>> database_location("falkordb://127.0.0.1:6390/papers").url
    'falkordb://127.0.0.1:6390/papers'
    """
    if graph_store is None:
        return None
    from graphrag_integrations.core.graph.backends import is_in_process, resolve_graph_backend

    backend = resolve_graph_backend(graph_store)
    bound = getattr(backend, "bound_location", None)
    if is_in_process(backend) or not callable(bound) or getattr(backend, "_bound_overwrite", False):
        return None
    return bound()


def holds_data(location: Any) -> bool:
    """Whether the FalkorDB graph at ``location`` exists and holds nodes (besides the marker
    this package writes in a graph it makes)."""
    from graphrag_integrations.core.graph import falkordb_cypher as cy
    from graphrag_integrations.core.graph.falkordb_connection import connect

    client = connect(location)
    try:
        if location.graph not in client.list_graphs():
            return False
        rows = client.select_graph(location.graph).query(cy.COUNT_FOREIGN).result_set
        return bool(rows and int(rows[0][0]))
    finally:
        client.connection.close()


def roll_back_graph(location: Any, doc_ids: Iterable[str]) -> dict[str, int]:
    """Remove the provenance ``doc_ids`` from the FalkorDB graph at ``location`` (nodes and
    edges left without any go); returns the nodes and edges removed. Nothing when the graph
    does not exist.

    Only for a graph the checkpoint found empty before its first batch (module notes).
    """
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    if not holds_data(location):
        return {"nodes": 0, "edges": 0}
    graph = FalkorDBGraph.open(location)
    nodes = edges = 0
    for doc in sorted(set(doc_ids)):
        removed = graph.remove_provenance(doc)
        nodes, edges = nodes + len(removed.nodes), edges + len(removed.edges)
    graph.flush()
    logger.warning(
        "rolled back what an unfinished build wrote into %s: %d node(s) and %d edge(s) of %d "
        "document(s) removed",
        location.url,
        nodes,
        edges,
        len(set(doc_ids)),
    )
    return {"nodes": nodes, "edges": edges}
