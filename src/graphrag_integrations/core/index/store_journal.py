"""The write journal of an index store whose graph is in the process and whose vectors are
not (a Chroma server, FalkorDB vector layers, a LangChain / LlamaIndex store).

Such a write changes two places that cannot share a transaction: the in-process graph (which
never fails half-way) and the vector server (which may: killed, unreachable, timed out). The
write journal of a database graph lives in the graph's meta node
(:mod:`~graphrag_integrations.core.graph.falkordb_journal`); here it lives **in the process**,
in :class:`StoreJournal` (``store.journal``), because everything it protects does:

* the graph, and the method's views, are in the process: a process that ends takes them with
  it, and the next ``load`` starts again from the folder persisted last;
* the vector server keeps what the failed write sent, but a load does not trust it: the
  first write to a Chroma collection clears its content checksum, so a load of the folder
  refills the collection from the folder's vectors
  (:mod:`~graphrag_integrations.core.index.store_loading`), and FalkorDB vector layers the
  same way.

So only the process that failed has something to repair, and it is this journal's to say
what: :mod:`~graphrag_integrations.core.index.journal` records the write in it
(:meth:`StoreJournal.begin_journal`, the same interface as a FalkorDB graph's journal), every
node and edge the store writes adds its provenance (:meth:`StoreJournal.cover`, called by
:class:`~graphrag_integrations.core.index.store_base.StoreBase`), and the nodes the write
created are remembered (:meth:`StoreJournal.created`). After a failure the rollback gives the
created nodes a placeholder vector (so that the method's views, which need every vector, can
be built) and removes the journal's documents through the method's own ``delete_many``.

Examples
--------
>>> journal = StoreJournal()
>>> journal.begin_journal("insert", exclude=["d1"])
>>> journal.cover([["d1", "d2"]])
>>> journal.created("chunk", "d2#0")
>>> journal.read_journal()["docs"], journal.created_nodes()
(['d2'], {'chunk': ['d2#0']})
>>> journal.end_journal()
>>> journal.read_journal() is None
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphrag_integrations.core.graph.falkordb_journal import journal_record


class StoreJournal:
    """The in-process write journal of one store (module notes).

    It has the interface :mod:`~graphrag_integrations.core.index.journal` uses of a
    database graph's journal: ``begin_journal``, ``end_journal``, ``clear_journal``,
    ``read_journal``, ``unfinished_journal``, ``discard_pending``.
    """

    #: No server location: the journal of this process (errors name it by ``repr``).
    location = None

    def __init__(self) -> None:
        self._record: dict[str, Any] | None = None
        self._exclude: frozenset[str] = frozenset()
        self._created: dict[str, list[str]] = {}

    def __repr__(self) -> str:
        state = "idle" if self._record is None else f"{self._record['op']} in progress"
        return f"StoreJournal({state})"

    @property
    def recording(self) -> bool:
        """Whether a write is recorded (begun and not ended, or failed and not rolled back)."""
        return self._record is not None

    def begin_journal(
        self,
        op: str,
        exclude: Iterable[str] = (),
        removing: Iterable[str] = (),
        held: Iterable[str] | None = None,
    ) -> None:
        """Record that write ``op`` starts; the documents it removes (``removing``) at once;
        documents of ``exclude`` (those the index held before an insert) are never added.
        ``held`` is accepted for the interface (a database graph's write log)."""
        self._record = journal_record(op, removing)
        self._exclude = frozenset(exclude)
        self._created = {}

    def cover(self, provenance: Iterable[Iterable[str]], *, removing: bool = False) -> None:
        """Add the documents of written provenance (or, ``removing``, of a document whose
        provenance is being removed) to the journal; nothing outside a write."""
        if self._record is None:
            return
        docs = {doc for prov in provenance for doc in prov}
        if not removing:
            docs -= self._exclude
        if not docs <= set(self._record["docs"]):
            self._record["docs"] = sorted(set(self._record["docs"]) | docs)

    def journal_restore(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Before an ``upsert`` deletes the documents it replaces: keep their passages
        (``records``, what a rollback inserts again) and add their ids to the journal."""
        if self._record is None or not records:
            return
        docs = {str(record["doc_id"]) for record in records}
        self._record["docs"] = sorted(set(self._record["docs"]) | docs)
        self._record["restore"] = [*self._record.get("restore", []), *map(dict, records)]

    def created(self, kind: str, key: str) -> None:
        """Remember that the write created node ``key`` of ``kind``."""
        if self._record is not None:
            self._created.setdefault(kind, []).append(key)

    def created_nodes(self) -> dict[str, list[str]]:
        """The nodes the recorded write created, per kind (a copy)."""
        return {kind: list(keys) for kind, keys in self._created.items()}

    def end_journal(self) -> None:
        """The write is complete: forget it."""
        self.clear_journal()

    def clear_journal(self, docs: Iterable[str] = ()) -> None:
        """Forget the recorded write (completed, or rolled back)."""
        self._record = None
        self._exclude = frozenset()
        self._created = {}

    def read_journal(self) -> dict[str, Any] | None:
        """The recorded write (a copy), ``None`` when there is none."""
        return None if self._record is None else dict(self._record)

    @property
    def unfinished_journal(self) -> dict[str, Any] | None:
        """Same as :meth:`read_journal`: the journal is this process's alone."""
        return self.read_journal()

    def discard_pending(self) -> None:
        """Nothing is queued: every write of the store was sent when it was made."""
        return None
