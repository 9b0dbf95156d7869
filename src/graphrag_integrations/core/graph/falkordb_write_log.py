"""The write log of a FalkorDB graph: which documents each finished write changed.

The graph is durable at once, an index's in-process vectors only at ``persist``: a write
after the last ``persist`` of a folder leaves the graph ahead of that folder. So that a
``load`` of the folder can tell which documents differ (and reconcile them,
:mod:`~graphrag_integrations.core.index.graph_changes`), every journaled write
(:mod:`~graphrag_integrations.core.graph.falkordb_journal`), when it ends or is rolled back,
appends to a log in the graph's meta node: the documents it touched, a version number (one
more than the last), and who wrote (host, process, and a token of the graph object). A persist
records the version the graph had (:meth:`FalkorDBWriteLog.write_version`); a load asks what
was written after it (:meth:`FalkorDBWriteLog.written_since`).

The log keeps the entries of the last :data:`MAX_LOGGED_DOCS` documents written: a folder
persisted before the oldest kept entry can no longer be reconciled (``written_since`` says
``None``).

Examples
--------
>>> log = appended(empty_log(), ["d2", "d1"], "w1")
>>> log = appended(log, ["d3"], "w1")
>>> log["version"], [e["docs"] for e in log["entries"]]
(2, [['d1', 'd2'], ['d3']])
>>> [e["docs"] for e in changes_since(log, 1)], changes_since(log, 2)
([['d3']], [])
>>> changes_since(appended(log, ["d4"], "w1", max_docs=1), 1) is None  # trimmed past 1
True
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import uuid
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from graphrag_integrations.core.graph import falkordb_cypher as cy

logger = logging.getLogger(__name__)

#: Documents the log remembers (the oldest entries go first past this).
MAX_LOGGED_DOCS = 100_000

#: Graph objects of this process that wrote (token -> object), so a load in the same process
#: can tell a writer that still exists from one that was dropped.
_WRITERS: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def empty_log() -> dict[str, Any]:
    """The log of a graph nothing was logged for (version 0)."""
    return {"version": 0, "first": 1, "entries": []}


def appended(
    log: Mapping[str, Any], docs: Iterable[str], writer: str, *, max_docs: int = MAX_LOGGED_DOCS
) -> dict[str, Any]:
    """``log`` with one more entry (the next version) for ``docs`` written by ``writer``
    (this host and process), the oldest entries dropped past ``max_docs`` documents."""
    version = int(log.get("version", 0)) + 1
    entry = {
        "v": version,
        "docs": sorted(set(docs)),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "writer": writer,
        "at": time.time(),
    }
    entries = [*log.get("entries", []), entry]
    first = int(log.get("first", 1))
    while len(entries) > 1 and sum(len(e["docs"]) for e in entries) > max_docs:
        first = int(entries.pop(0)["v"]) + 1
    return {"version": version, "first": first, "entries": entries}


def changes_since(log: Mapping[str, Any], version: int) -> list[dict[str, Any]] | None:
    """The entries written after ``version`` (oldest first); ``None`` when the log no longer
    holds all of them."""
    if version + 1 < int(log.get("first", 1)):
        return None
    return [e for e in log.get("entries", []) if int(e["v"]) > version]


def writer_running(entry: Mapping[str, Any], stale_after: float) -> bool:
    """Whether the writer of a log entry may still hold the written documents in its
    in-process layers: the graph object that wrote, in this process; the process, on this
    host; on another host, an entry younger than ``stale_after`` seconds."""
    if entry.get("host") != socket.gethostname():
        return time.time() - float(entry.get("at", 0.0)) < stale_after
    pid = int(entry.get("pid", -1))
    if pid == os.getpid():
        return entry.get("writer") in _WRITERS
    return process_alive(pid)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (also another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


class FalkorDBWriteLog:
    """Mixin of the FalkorDB graph backend: the write log (module notes)."""

    _writer_token: str | None = None

    def _query(self, text: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        raise NotImplementedError

    def read_write_log(self) -> dict[str, Any]:
        """The log in the graph's meta node (an empty one when none was written)."""
        rows = self._query(cy.WRITES_READ)
        if not rows or not rows[0][0]:
            return empty_log()
        try:
            log = json.loads(rows[0][0])
        except ValueError:
            logger.warning("ignoring an unreadable write log: %r", rows[0][0][:200])
            return empty_log()
        return log if isinstance(log, dict) else empty_log()

    def write_version(self) -> int:
        """The version of the graph's documents: the number of writes logged so far."""
        return int(self.read_write_log().get("version", 0))

    def log_write(self, docs: Iterable[str]) -> None:
        """Append a write of ``docs`` by this object to the log (nothing for no document)."""
        docs = sorted(set(docs))
        if not docs:
            return
        if self._writer_token is None:
            self._writer_token = uuid.uuid4().hex
            _WRITERS[self._writer_token] = self
        log = appended(self.read_write_log(), docs, self._writer_token)
        self._query(cy.WRITES_WRITE, {"writes": json.dumps(log), "version": log["version"]})

    def logged_by_me(self, entry: Mapping[str, Any]) -> bool:
        """Whether this graph object wrote the log entry ``entry``."""
        return self._writer_token is not None and entry.get("writer") == self._writer_token

    def write_state(self) -> tuple[int | None, int | None]:
        """``(write version, journal revision)`` in one small read: what a reader compares to
        tell that another process wrote, or is writing, the graph
        (:mod:`~graphrag_integrations.core.index.snapshot`): every finished write bumps the
        version, every update of a write journal (begun, grown, cleared) its revision.
        ``None`` where nothing was recorded yet."""
        rows = self._query(cy.WRITE_STATE)
        if not rows:
            return None, None
        version, revision = rows[0][0], rows[0][1]
        return (
            None if version is None else int(version),
            None if revision is None else int(revision),
        )

    def written_since(self, version: int) -> list[dict[str, Any]] | None:
        """The log entries after ``version`` (what :func:`changes_since` says)."""
        return changes_since(self.read_write_log(), version)
