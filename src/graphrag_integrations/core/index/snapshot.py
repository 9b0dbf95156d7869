"""What an index reads while other processes write its database graph: its own documents.

An index whose graph lives in a database (FalkorDB) shares that graph with every process
that opened the same index, while its vectors (and the method's views) are its own. When
another process writes the graph, the graph holds documents this index has no vectors for;
when it writes *while* this index loads, the graph holds a write that is not finished. A
reader must then see the state before those writes, never an error or half of a write.

So each such index keeps a :class:`Snapshot`: the documents it holds and the graph's write
state (:meth:`~graphrag_integrations.core.graph.falkordb_write_log.FalkorDBWriteLog.write_state`:
the write version and whether a write journal is present), taken when it is loaded and
updated by its own writes. Before a read (``retrieve``, ``doc_ids``) it compares the graph's
state with the one it saw (one small read); once they differ - another process wrote or is
writing - the index answers from its own documents only: ``retrieve`` runs with the filter
``doc_id in <its documents>`` ANDed to the caller's (a filter is an access boundary in every
method: :mod:`~graphrag_integrations.core.retrieval.filter_scope`), and ``doc_ids`` lists its
documents. It stays so until it is loaded again (which reads the other writes, or rolls back
those of a process that ended).

A load while another process holds an unfinished or an unpersisted write (its journal, or
documents logged after the folder's persist, by a process still running) loads the folder's
state: those documents are *hidden* (their nodes get a placeholder vector, never answered
since they are outside the documents the index holds) rather than refused
(:mod:`~graphrag_integrations.core.index.graph_changes`).

Such an index refuses ``persist`` with one line: its vectors lack what the graph now holds,
so the folder would not match its graph. Persist from the process that wrote, or load again.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from graphrag_integrations.core.index.flags import instance_flag
from graphrag_integrations.core.index.store import index_stores_of
from graphrag_integrations.core.retrieval.filters import (
    AllOf,
    Comparison,
    MetadataFilter,
)
from graphrag_integrations.errors import IndexMismatchError

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

_STATE = "_reader_snapshot"
_MARK = "__narrowed__"
_RAW = "_reader_snapshot_raw"  # inside take / after_write: reads see the whole graph


@dataclass
class Snapshot:
    """What an index has seen of its database graphs.

    Attributes
    ----------
    seen : tuple
        The ``write_state()`` of each database graph when the index last saw it.
    since : tuple of (graph, int)
        Each graph with the write version the index is current to: writes logged after it
        by another graph object (another process, or another index) are not the index's.
    hidden : frozenset of str
        Documents of a running writer the load left out.
    foreign : bool
        Whether the graphs hold writes the index does not have (reads then use
        :attr:`docs` only).
    docs : frozenset of str or None
        The documents the index holds, computed when first needed (:func:`documents`).
    """

    seen: tuple[Any, ...]
    since: tuple[tuple[Any, int], ...]
    hidden: frozenset[str] = frozenset()
    foreign: bool = False
    docs: frozenset[str] | None = None


def database_graphs(index: Any) -> list[Any]:
    """The graphs of ``index``'s stores that report a write state (database graphs)."""
    graphs = [store.graph for store in index_stores_of(index)]
    return [g for g in graphs if callable(getattr(g, "write_state", None))]


def _states(graphs: list[Any]) -> tuple[Any, ...]:
    return tuple(graph.write_state() for graph in graphs)


def own_write(index: Any) -> Any:
    """Within the block (a write of ``index``, or its rollback), its reads see the whole
    graph, and its own journal and writes are not taken for another process's."""
    return instance_flag(index, _RAW)


def raw_doc_ids(index: Any) -> list[str]:
    """``index.doc_ids()`` as the method computes it (not narrowed to the snapshot)."""
    with instance_flag(index, _RAW):
        return list(index.doc_ids())


def take(
    index: Any, hidden: Iterable[str] = (), observed: Iterable[tuple[Any, int, Any]] = ()
) -> None:
    """Record what ``index`` has seen of its database graphs (nothing for an index without
    one); its documents are computed when first needed.

    ``hidden``: documents of another process's writes the load left out (module notes).
    ``observed``: ``(graph, write version, write state)`` when the load looked at the
    graph's changes: writes another process began or logged since are not the index's (a
    write that started while the folder was read: the index has no vectors for it).
    """
    graphs = database_graphs(index)
    if not graphs:
        index.__dict__.pop(_STATE, None)
        return
    versions = {id(graph): version for graph, version, _ in observed}
    since = tuple(
        (graph, versions[id(graph)] if id(graph) in versions else graph.write_version())
        for graph in graphs
    )
    hide = frozenset(hidden)
    moved = any(_written_elsewhere(graph, version) for graph, version in since)
    index.__dict__[_STATE] = Snapshot(_states(graphs), since, hide, foreign=bool(hide) or moved)
    if hide or moved:
        _mark_stores(index)


def _mark_stores(index: Any) -> None:
    """Tell ``index``'s stores that other writers changed their graph (their vector reads
    then take a node without a vector for another writer's)."""
    for store in index_stores_of(index):
        store.other_writers = True


def _written_elsewhere(graph: Any, version: int) -> set[str]:
    """The documents of ``graph``'s write journal and of the writes logged after ``version``
    by another graph object than ``graph`` (its own writes and rollbacks are the index's)."""
    docs: set[str] = set()
    record = graph.read_journal()
    if record is not None:  # never the index's own: its writes read the graph raw
        docs |= set(record.get("docs", []))
    for entry in graph.written_since(version) or []:
        if not graph.logged_by_me(entry):
            docs |= set(entry.get("docs", []))
    return docs


def documents(index: Any, snapshot: Snapshot) -> frozenset[str]:
    """The documents ``index`` holds: those it lists, without the hidden ones and those other
    writers wrote since the snapshot (computed once, then kept by its own writes)."""
    if snapshot.docs is None:
        # listed first: another writer journals (or logs) a document before its data reaches
        # the graph, so a write that lands while the list is read is found by the reads below
        listed = frozenset(raw_doc_ids(index))
        elsewhere: set[str] = set()
        for graph, version in snapshot.since:
            elsewhere |= _written_elsewhere(graph, version)
        snapshot.docs = listed - snapshot.hidden - elsewhere
    return snapshot.docs


def visible(index: Any) -> frozenset[str] | None:
    """The documents a read of ``index`` may use, or ``None`` for all of them (no other
    writer changed its graph since it saw it). Takes the snapshot on the first read of an
    index that has none (a fresh build)."""
    if index.__dict__.get(_RAW):
        return None
    snapshot: Snapshot | None = index.__dict__.get(_STATE)
    if snapshot is None:
        if database_graphs(index):
            take(index)
        return None
    if not snapshot.foreign and _states(database_graphs(index)) != snapshot.seen:
        snapshot.foreign = True
        _mark_stores(index)
        logger.info(
            "%s: another process wrote (or is writing) its graph: answering from the "
            "documents it holds until it is loaded again",
            type(index).__name__,
        )
    return documents(index, snapshot) if snapshot.foreign else None


def narrowed(index: Any, where: MetadataFilter | None) -> MetadataFilter | None:
    """``where`` AND ``doc_id in <the documents visible>`` when the index reads its snapshot
    (:func:`visible`), else ``where`` unchanged."""
    docs = visible(index)
    if docs is None:
        return where
    own = _own_filter(docs)
    return own if where is None else AllOf((where, own))


@functools.lru_cache(maxsize=4)
def _own_filter(docs: frozenset[str]) -> Comparison:
    """``doc_id in docs`` (made once per set of documents: queries reuse it)."""
    return Comparison("doc_id", "in", tuple(sorted(docs)))


def read_consistently(index: Any, where: MetadataFilter | None, run: Callable[[Any], T]) -> T:
    """``run(filter)`` with ``where`` narrowed to the documents ``index`` holds when it reads
    its snapshot (:func:`narrowed`); when another process began writing the graph while the
    read ran (an error, or a graph state changed by its end), the read runs again narrowed,
    so it never answers (or fails) from half of that write."""
    scoped = narrowed(index, where)
    try:
        result = run(scoped)
    except Exception:
        if scoped is not where or visible(index) is None:
            raise
        return run(narrowed(index, where))
    if scoped is where and visible(index) is not None:
        return run(narrowed(index, where))
    return result


def before_write(index: Any) -> None:
    """Before a write of ``index``: notice other writers' writes since the snapshot, and then
    fix the documents it holds (:func:`after_write` adds and removes its own)."""
    if visible(index) is None:
        return
    snapshot: Snapshot = index.__dict__[_STATE]
    documents(index, snapshot)


def after_write(index: Any, before: Iterable[str]) -> None:
    """After a write of ``index`` (or the rollback of one): its documents and the graphs'
    state as the write left them (``before``: what it listed when the write began)."""
    snapshot: Snapshot | None = index.__dict__.get(_STATE)
    if snapshot is None:
        return
    if snapshot.foreign:  # the graph's documents include others': keep its own, its writes
        held, after = frozenset(before), frozenset(raw_doc_ids(index))
        snapshot.docs = (documents(index, snapshot) - (held - after)) | (after - held)
    snapshot.seen = _states(database_graphs(index))


def after_rollback(index: Any, rolled: Iterable[str]) -> None:
    """After ``index`` rolled back its failed write (``rolled``: the documents removed)."""
    snapshot: Snapshot | None = index.__dict__.get(_STATE)
    if snapshot is None:
        return
    if snapshot.foreign:
        snapshot.docs = documents(index, snapshot) - frozenset(rolled)
    snapshot.seen = _states(database_graphs(index))


def narrowed_doc_ids(func: F) -> F:
    """Wrap a ``doc_ids`` implementation: the documents the index holds when it reads its
    snapshot (:func:`visible`), else what it returns."""

    @functools.wraps(func)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        ids = func(self, *args, **kwargs)
        docs = visible(self)
        return ids if docs is None else [doc for doc in ids if doc in docs]

    setattr(run, _MARK, True)
    return run  # type: ignore[return-value]


def narrow_methods(cls: type) -> None:
    """Wrap ``cls``'s own ``doc_ids`` (once) with :func:`narrowed_doc_ids`."""
    attr = cls.__dict__.get("doc_ids")
    if inspect.isfunction(attr) and not getattr(attr, _MARK, False):
        cls.doc_ids = narrowed_doc_ids(attr)  # type: ignore[attr-defined]


def check_persist(index: Any) -> None:
    """Refuse (one line) to persist an index reading its snapshot (module notes)."""
    snapshot: Snapshot | None = index.__dict__.get(_STATE)
    if snapshot is not None and not index.__dict__.get(_RAW) and visible(index) is not None:
        raise IndexMismatchError(
            f"{type(index).__name__}: another process wrote its graph since this index was "
            "loaded, and its vectors lack those writes; persist from the process that wrote, "
            "or load the index again, then persist"
        )
