"""All-or-nothing writes for an index whose graph lives in a database server.

An index with a database graph (FalkorDB) keeps part of its state in the server (the graph,
written at once) and part in the process (in-memory vector layers, the method's views). A
write the server or the process stops half-way would leave the two apart. The index's
``insert``, ``upsert``, ``delete`` and ``delete_many`` are therefore *journaled*
(:func:`journal_methods`, applied by ``BaseIndex.__init_subclass__`` to every index):

1. before the write, each database graph of the index records a journal in its meta node
   (:mod:`~graphrag_integrations.core.graph.falkordb_journal`: who writes, and every document
   the write touches, recorded before its data reaches the server);
2. the write runs; when it completes, the journal is cleared;
3. when it fails, the journal stays, and the write is rolled back at once if the server
   answers, else **on the next call** of the index (a write, or a query: :func:`recover`) or
   **at the next load** of a folder persisted from it
   (:meth:`~graphrag_integrations.core.index.store.IndexStore.load`): every document the
   journal lists is removed through the method's own ``delete_many`` (and what a document not
   yet registered left in the graph through ``remove_document``), exactly as a killed
   checkpointed batch is (:mod:`~graphrag_integrations.core.index.rollback`), and one warning
   names them.

A write that fails in this process also drops, before its rollback, the in-process state
the method derived from it (``BaseIndex._after_failed_write``: KG-Translator's summary), and
its rollback adds the documents the index lists that it did not before the write (documents
with nothing in the graph to journal them by, e.g. ReG's texts without a triple).

The index is then the index without those documents: an interrupted ``insert`` left nothing,
an interrupted ``delete`` / ``delete_many`` is completed. An ``upsert`` records the passages
of the documents it replaces in its journal before it deletes them (:func:`keep_replaced`),
and its rollback inserts them again through the method's own ``insert``, cut as they were
(:mod:`~graphrag_integrations.core.index.restore`): an interrupted ``upsert`` leaves the
index as it was. Running the failed call again gives the index a clean build gives.

A journal written by another process that is still running (or, from another host, less than
:data:`~graphrag_integrations.core.graph.falkordb_journal.STALE_AFTER_S` s ago) is never rolled
back: a write raises :class:`~graphrag_integrations.errors.IndexMismatchError` (one writer at a
time); a load gives the state before that write
(:mod:`~graphrag_integrations.core.index.snapshot`).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from graphrag_integrations.core.graph.falkordb_journal import abandoned
from graphrag_integrations.core.index import snapshot
from graphrag_integrations.core.index.locking import is_guarded
from graphrag_integrations.core.index.restore import passage_records
from graphrag_integrations.core.index.rollback import JOURNAL_ACTIVE, roll_back, rolling_back
from graphrag_integrations.core.index.store import index_stores_of
from graphrag_integrations.errors import IndexMismatchError

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

#: The index methods journaled (those an index has).
JOURNALED = ("insert", "upsert", "delete", "delete_many")
#: Methods whose journal leaves out the documents the index already holds (they add).
_ADDING = frozenset({"insert", "upsert"})
_MARK = "__journaled__"
# instance flags (in __dict__): inside a journaled write / a failed write not yet recovered
_ACTIVE = JOURNAL_ACTIVE
_FAILED = "_journal_failed"
# the documents the index held before its failed write (what its rollback returns it to)
_HELD = "_journal_held"


def journal_graphs(index: Any) -> list[Any]:
    """The write journals of ``index``'s stores: a database graph keeps its own (in its meta
    node); an in-process graph whose vectors are kept outside the process (a vector server)
    has the store's in-process journal
    (:mod:`~graphrag_integrations.core.index.store_journal`); a store all in the process has
    none (nothing can fail half-way between two places)."""
    journals: list[Any] = []
    for store in index_stores_of(index):
        if callable(getattr(store.graph, "begin_journal", None)):
            journals.append(store.graph)
        elif store.keeps_vectors_outside():
            journals.append(store.journal)
    return journals


def live_writer_error(where: str, record: dict[str, Any]) -> IndexMismatchError:
    """The one-line error for a journal whose writer is still running."""
    return IndexMismatchError(
        f"{where}: process {record.get('pid')} on {record.get('host')} is writing this graph "
        f"({record.get('op')} of {len(record.get('docs', []))} document(s)); one writer at a "
        "time: try again when it has finished"
    )


def recover(index: Any) -> list[str]:
    """Roll back the unfinished write a journal of ``index``'s graphs records (module notes);
    returns the documents removed (``[]``: nothing to do).

    Raises
    ------
    IndexMismatchError
        A journal of a writer still running (another process).
    """
    docs: set[str] = set()
    restore: list[dict[str, Any]] = []
    dirty = []
    for graph in journal_graphs(index):
        record = graph.read_journal()
        if graph.unfinished_journal is not None:  # this object's failed write (maybe loaded
            # and rolled back by another index since, which cleared the server's copy)
            local = graph.unfinished_journal
            record = {
                **local,
                "docs": sorted({*local["docs"], *(record or {}).get("docs", [])}),
                "restore": [*local.get("restore", []), *(record or {}).get("restore", [])],
            }
        if record is None:
            continue
        if not abandoned(record):
            raise live_writer_error(getattr(graph.location, "url", repr(graph)), record)
        docs.update(record.get("docs", []))
        restore.extend(record.get("restore", []))
        dirty.append(graph)
    held = index.__dict__.pop(_HELD, None)
    if not dirty:
        index.__dict__.pop(_FAILED, None)
        return []
    index.__dict__[_ACTIVE] = True
    try:
        with snapshot.own_write(index), rolling_back(docs) as state:
            state.journals.extend(dirty)
            state.unfinished = True
            state.add_restore(restore)  # what an unfinished upsert replaced: put back
            stores = index_stores_of(index)
            for store in stores:  # nodes whose vector may not have reached a vector server
                if any(journal is store.journal for journal in dirty):
                    store.placeholders_for_journal(state)
            if held is not None:  # this object's failed write: documents it added in the
                # process only (no graph content to journal them by, e.g. ReG's texts)
                state.doc_ids |= set(snapshot.raw_doc_ids(index)) - held
            rolled = roll_back(index, stores, what="an unfinished write")
        snapshot.after_rollback(index, rolled)
    finally:
        index.__dict__[_ACTIVE] = False
    index.__dict__.pop(_FAILED, None)
    return rolled


def journaled(func: F) -> F:
    """Wrap an index write method with the journal (module notes). Nested journaled calls
    (``upsert`` calling ``delete`` and ``insert``, a rollback's ``delete_many``) run inside the
    outer one's journal."""
    name = func.__name__

    @functools.wraps(func)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        graphs = journal_graphs(self)
        if not graphs or self.__dict__.get(_ACTIVE):
            return func(self, *args, **kwargs)
        recover(self)  # an earlier write of this index (or of a dead process) left a journal
        snapshot.before_write(self)  # another process's writes since this index saw the graph
        held = snapshot.raw_doc_ids(self)
        exclude = held if name in _ADDING else ()
        args, kwargs, removing = _removed_ids(name, args, kwargs)
        self.__dict__[_ACTIVE] = True
        try:
            with snapshot.own_write(self):  # its reads see its own journal and writes
                for graph in graphs:
                    graph.begin_journal(name, exclude, removing, held=held)
                result = func(self, *args, **kwargs)
                for graph in graphs:
                    graph.end_journal()
            snapshot.after_write(self, held)
        except BaseException as error:
            self.__dict__[_ACTIVE] = False
            self.__dict__[_FAILED] = True
            self.__dict__[_HELD] = frozenset(held)
            for graph in graphs:
                graph.discard_pending()
            self._after_failed_write()  # the method's in-process state of the failed write
            if isinstance(error, Exception):
                _recover_now(self, name, error)
            raise
        self.__dict__[_ACTIVE] = False
        return result

    setattr(run, _MARK, True)
    return run  # type: ignore[return-value]


def keep_replaced(index: Any, doc_ids: Iterable[str]) -> None:
    """Inside a journaled ``upsert``, before it deletes the documents ``doc_ids`` it
    replaces: record their passages in the journals of ``index``'s graphs, so that a
    rollback puts them back (:mod:`~graphrag_integrations.core.index.restore`). Nothing for
    an index without a journal."""
    graphs = journal_graphs(index)
    if not graphs or not index.__dict__.get(_ACTIVE):
        return
    with snapshot.own_write(index):
        records = passage_records(index, doc_ids)
    for graph in graphs:
        graph.journal_restore(records)


def _removed_ids(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any], list[str]]:
    """The documents a ``delete`` / ``delete_many`` call removes (journaled before it runs, so
    an interrupted one is completed), with the call's arguments (an iterator of ids made a
    list)."""
    key = {"delete": "doc_id", "delete_many": "doc_ids"}.get(name)
    if key is None:
        return args, kwargs, []
    value = args[0] if args else kwargs.get(key)
    ids = [value] if name == "delete" else list(value or [])
    if name == "delete_many":
        if args:
            args = (ids, *args[1:])
        else:
            kwargs = {**kwargs, key: ids}
    return args, kwargs, [i for i in ids if isinstance(i, str)]


def _recover_now(index: Any, name: str, error: Exception) -> None:
    """After a failed write: roll it back now if the server answers, else leave it to the
    next call or load (logged)."""
    try:
        recover(index)
    except Exception as again:
        logger.warning(
            "%s.%s failed (%s: %s); its partial write is rolled back at the next call or load "
            "(now: %s)",
            type(index).__name__,
            name,
            type(error).__name__,
            str(error).splitlines()[0] if str(error) else "",
            str(again).splitlines()[0] if str(again) else type(again).__name__,
        )


def recovers_first(func: F) -> F:
    """Wrap a read method (``retrieve``, ``doc_ids``, ``persist``; outside its read lock):
    after a failed write of this index that is not rolled back yet, roll it back first (under
    the write lock)."""

    @functools.wraps(func)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.__dict__.get(_FAILED) and not self.__dict__.get(_ACTIVE):  # not from recover
            with self.rwlock.write():
                if self.__dict__.get(_FAILED):
                    recover(self)
        return func(self, *args, **kwargs)

    setattr(run, _MARK, True)
    return run  # type: ignore[return-value]


def journal_methods(cls: type, names: Iterable[str] = JOURNALED, *, guarded: bool) -> None:
    """Wrap the methods ``names`` that ``cls`` has (own or inherited) with :func:`journaled`
    (``guarded=False``: before the lock wrappers) or, for queries (``guarded=True``), with
    :func:`recovers_first` (after them); each implementation is wrapped once."""
    wrap = recovers_first if guarded else journaled
    for name in names:
        attr = inspect.getattr_static(cls, name, None)
        if (
            not inspect.isfunction(attr)
            or inspect.iscoroutinefunction(attr)  # refused by the lock wrappers
            or getattr(attr, "__isabstractmethod__", False)
            or getattr(attr, _MARK, False)
            or (not guarded and is_guarded(attr))
        ):
            continue
        setattr(cls, name, wrap(attr))
