"""The write journal a FalkorDB graph keeps in its meta node while an index writes.

Graph and vectors cannot share a transaction, so an index write into a database graph
(``insert``, ``upsert``, ``delete``, ``delete_many``) is *journaled*
(:mod:`~graphrag_integrations.core.index.journal` wraps them): before the write,
:meth:`FalkorDBJournal.begin_journal` records in the graph's meta node who writes (host, pid)
and what (``op``); before each batch of writes reaches the server, the documents whose
provenance it carries are added to the journal (:meth:`FalkorDBJournal._journal_cover`), and
before a document's provenance is removed, that document; :meth:`FalkorDBJournal.end_journal`
clears it once the whole write is done. A journal found afterwards therefore lists every
document an unfinished write touched: removing those documents (through the method's own
``delete``) leaves the index as a build without them. An ``upsert`` also records the
passages of the documents it replaces before it deletes them
(:meth:`FalkorDBJournal.journal_restore`), which the rollback inserts again
(:mod:`~graphrag_integrations.core.index.restore`).

Documents the index held before an ``insert`` are left out of its journal (``exclude``): an
insert may merge into nodes of older documents, which a rollback must keep.

Clearing a journal (a write that ended, or one rolled back) appends its documents to the
graph's write log (:mod:`~graphrag_integrations.core.graph.falkordb_write_log`), which a load
of a folder persisted before the write reads.

Examples
--------
>>> record = journal_record("insert", ["d2", "d1"])
>>> sorted(record), record["docs"]
(['docs', 'host', 'op', 'pid', 'started'], ['d1', 'd2'])
>>> abandoned(record)  # this process wrote it and is not writing now
True
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphrag_integrations.core.graph import falkordb_cypher as cy
from graphrag_integrations.core.graph.falkordb_write_log import FalkorDBWriteLog, process_alive

logger = logging.getLogger(__name__)

#: A journal written on another host is treated as abandoned after this many seconds.
STALE_AFTER_S = 3600.0


def journal_record(op: str, docs: Iterable[str]) -> dict[str, Any]:
    """The JSON-able journal of a write ``op`` by this process touching ``docs``."""
    return {
        "op": op,
        "docs": sorted(set(docs)),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": time.time(),
    }


def abandoned(record: Mapping[str, Any]) -> bool:
    """Whether the write that left ``record`` is over: written by this process (which is not
    inside a journaled write when it asks), by a process of this host that is gone, or on
    another host more than :data:`STALE_AFTER_S` seconds ago."""
    pid = int(record.get("pid", -1))
    if record.get("host") == socket.gethostname():
        return pid == os.getpid() or not process_alive(pid)
    return time.time() - float(record.get("started", 0.0)) > STALE_AFTER_S


class FalkorDBJournal(FalkorDBWriteLog):
    """Mixin of :class:`~graphrag_integrations.core.graph.falkordb_graph.FalkorDBGraph`: the
    write journal (module notes)."""

    _journal: dict[str, Any] | None = None
    _journal_exclude: frozenset[str] = frozenset()
    # the documents held before the write, and those the write added or removed
    _journal_held: frozenset[str] = frozenset()
    _journal_subject: frozenset[str] = frozenset()
    # the passages an upsert replaces (kept apart from the journal's JSON: written once)
    _journal_restore: tuple[dict[str, Any], ...] = ()

    def flush(self) -> None:
        raise NotImplementedError

    def discard_pending(self) -> None:
        raise NotImplementedError

    def read_journal(self) -> dict[str, Any] | None:
        """The journal in the graph's meta node (``None``: no unfinished write), with the
        passages an upsert replaces under ``"restore"`` when it recorded any."""
        rows = self._query(cy.JOURNAL_READ)
        if not rows or not rows[0][0]:
            return None
        try:
            record = json.loads(rows[0][0])
            restore = json.loads(rows[0][1]) if len(rows[0]) > 1 and rows[0][1] else None
        except ValueError:
            logger.warning("ignoring an unreadable write journal: %r", rows[0][0][:200])
            return None
        if not isinstance(record, dict):
            return None
        return {**record, "restore": restore} if isinstance(restore, list) else record

    @property
    def unfinished_journal(self) -> dict[str, Any] | None:
        """The journal of a write through this object that began and did not end (a copy),
        or ``None``."""
        if self._journal is None:
            return None
        if self._journal_restore:
            return {**self._journal, "restore": list(self._journal_restore)}
        return dict(self._journal)

    def begin_journal(
        self,
        op: str,
        exclude: Iterable[str] = (),
        removing: Iterable[str] = (),
        held: Iterable[str] | None = None,
    ) -> None:
        """Record that write ``op`` starts (before it sends anything): the documents it
        removes (``removing``) at once; documents of ``exclude`` are never added to it.
        ``held``: the documents the index holds before the write (default ``exclude``), to
        tell the documents the write is about from those it only re-merges (the write log)."""
        self.flush()  # anything queued before belongs to no write of this journal
        removing = list(removing)
        self._journal = journal_record(op, removing)
        self._journal_exclude = frozenset(exclude)
        self._journal_held = self._journal_exclude if held is None else frozenset(held)
        self._journal_subject = frozenset(removing)
        self._journal_restore = ()
        self._query(
            cy.JOURNAL_RESTORE_WRITE, {"journal": json.dumps(self._journal), "restore": None}
        )

    def end_journal(self) -> None:
        """The write is complete: flush what it queued, then clear the journal."""
        if self._journal is not None:
            self.flush()
        self.clear_journal()

    def clear_journal(self, docs: Iterable[str] = ()) -> None:
        """Remove the journal from the meta node (after a completed write or a recovery) and
        log the write: the documents it was about (added or removed, not those whose nodes
        it merely merged into) and ``docs`` (those a recovery rolled back)."""
        written = {*docs, *self._journal_subject}
        self._journal = None
        self._journal_subject = frozenset()
        self._journal_restore = ()
        self.log_write(written)
        self._query(cy.JOURNAL_RESTORE_WRITE, {"journal": None, "restore": None})

    def journal_restore(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Before an ``upsert`` deletes the documents it replaces: add their passages
        (``records``, what a rollback inserts again) and their ids to the journal (one round
        trip); nothing outside a write."""
        if self._journal is None or not records:
            return
        docs = {str(record["doc_id"]) for record in records}
        self._journal_subject |= docs
        self._journal["docs"] = sorted(set(self._journal["docs"]) | docs)
        self._journal_restore = (*self._journal_restore, *map(dict, records))
        restore = json.dumps(self._journal_restore, default=str)  # metadata of any type
        self._query(
            cy.JOURNAL_RESTORE_WRITE, {"journal": json.dumps(self._journal), "restore": restore}
        )

    def _write_journal(self) -> None:
        assert self._journal is not None
        self._query(cy.JOURNAL_WRITE, {"journal": json.dumps(self._journal)})

    def _journal_cover(
        self, provenance: Iterable[Iterable[str]], *, removing: bool = False
    ) -> None:
        """Before writes carrying ``provenance`` reach the server (or, ``removing``, before a
        document's provenance is removed): add their documents to the journal (one round trip
        when it grows). ``exclude`` applies to added provenance only."""
        if self._journal is None:
            return
        docs = {doc for prov in provenance for doc in prov}
        self._journal_subject |= docs if removing else docs - self._journal_held  # a new set
        held = set(self._journal["docs"])
        skip = frozenset() if removing else self._journal_exclude
        new = docs - held - skip
        if new:
            self._journal["docs"] = sorted(held | new)
            self._write_journal()
