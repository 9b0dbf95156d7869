"""What a database graph changed behind a persisted folder, and what its load rolls back.

A folder persisted from an index whose graph lives in FalkorDB holds the in-process part (the
vector layers, the method's files) of one moment; the graph goes on changing. When
:meth:`~graphrag_integrations.core.index.store.IndexStore.load` opens such a graph inside the
load template (which always runs a :func:`~graphrag_integrations.core.index.rollback.rolling_back`
block), :func:`changes_to_roll_back` adds to that rollback:

1. **an unfinished write** - the documents of the graph's write journal
   (:mod:`~graphrag_integrations.core.graph.falkordb_journal`) when its writer is gone; a
   writer still running keeps its write: its documents are *hidden* from the loaded index
   instead (:mod:`~graphrag_integrations.core.index.snapshot`: the state before its write);
2. **writes after the persist** - ``store.json`` records the graph's write version at persist
   (:mod:`~graphrag_integrations.core.graph.falkordb_write_log`); every document a write
   logged since then differs between the graph and the folder (inserted: in the graph, not in
   the vectors; deleted: the other way round; upserted: stale vectors). They are rolled back
   like an unfinished write: the graph's part through the method's own ``delete_many``, and
   the saved vectors of nodes the graph no longer has are dropped (:func:`drop_gone_vectors`).
   The index loads as the folder minus those documents, with one warning naming them; an
   index merely behind its graph is never called corrupt. When the process that wrote them
   still runs (it holds them in its own vectors and may persist them), they are hidden instead
   of rolled back: the index loads as the folder, reading its own documents only.

The rollback is logged in the graph's write log too, so other folders of the same graph see it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from graphrag_integrations.core.graph.falkordb_journal import STALE_AFTER_S, abandoned
from graphrag_integrations.core.graph.falkordb_write_log import MAX_LOGGED_DOCS, writer_running
from graphrag_integrations.core.index.rollback import Rollback
from graphrag_integrations.errors import IndexMismatchError

logger = logging.getLogger(__name__)


class GraphMoved(IndexMismatchError):
    """Another process wrote the graph while a load read it (the load tries again)."""


def check_unmoved(src: Path, graph: Any, rollback: Rollback | None, error: str) -> None:
    """Raise :class:`GraphMoved` (naming ``error``, what the load found) when ``graph``'s
    write state changed since ``rollback`` observed it: another process began or ended a
    write while the folder was read."""
    for seen, _, state in rollback.observed if rollback is not None else ():
        if seen is graph and graph.write_state() != state:
            raise GraphMoved(f"{src}: its graph changed while it was read ({error})")


def check_moved(src: Path, observed: list[tuple[Any, int, Any]], error: BaseException) -> None:
    """After ``error`` while a load read ``src``: raise :class:`GraphMoved` from it when a
    graph the load observed changed since (another process's write met half-way)."""
    for graph, _, state in observed:
        if graph.write_state() != state:
            text = str(error).splitlines()[0] if str(error) else ""
            raise GraphMoved(
                f"{src}: its graph changed while it was read ({type(error).__name__}: {text})"
            ) from error


def graph_version(graph: Any) -> int | None:
    """The write version of a database graph (recorded at persist), ``None`` for a graph
    without a write log (in-process)."""
    version = getattr(graph, "write_version", None)
    return int(version()) if callable(version) else None


def changes_to_roll_back(
    src: Path, graph: Any, rollback: Rollback | None, persisted_version: int | None
) -> Rollback | None:
    """``rollback`` with what ``graph`` changed behind the folder ``src`` (module notes), or
    ``None`` when there is nothing to roll back. Outside a load template (``rollback`` is
    ``None``) nothing is looked at.

    Raises
    ------
    IndexMismatchError
        More writes since the persist than the graph's log keeps.
    """
    if rollback is None:
        return None
    if callable(getattr(graph, "write_state", None)):  # what the loaded index will have seen
        rollback.observed.append((graph, graph.write_version(), graph.write_state()))
    read_journal = getattr(graph, "read_journal", None)
    record = read_journal() if callable(read_journal) else None
    if record is not None:
        if abandoned(record):
            rollback.add_journal(graph, record.get("docs", []), record.get("restore", []))
        else:
            _hide(src, rollback, record.get("docs", []), record, "is writing")
    since = getattr(graph, "written_since", None)
    if persisted_version is not None and callable(since):
        _add_later_writes(src, graph, rollback, since(persisted_version))
    return rollback if rollback.doc_ids or rollback.hidden else None


def _hide(
    src: Path, rollback: Rollback, docs: list[str], writer: dict[str, Any], what: str
) -> None:
    """Leave a running process's documents out of the loaded index (logged)."""
    rollback.add_hidden(docs)
    logger.warning(
        "%s: process %s on %s %s its graph (%d document(s), e.g. %s): loaded as the folder "
        "holds it, without them",
        src,
        writer.get("pid"),
        writer.get("host"),
        what,
        len(docs),
        sorted(docs)[:3],
    )


def _add_later_writes(
    src: Path, graph: Any, rollback: Rollback, entries: list[dict[str, Any]] | None
) -> None:
    if entries is None:
        raise IndexMismatchError(
            f"{src}: its graph changed by more than the {MAX_LOGGED_DOCS:,} documents its write "
            "log keeps since this folder was persisted; persist after writes, or rebuild the "
            "index (`graphrag-integrations index --overwrite`)"
        )
    if not entries:
        return
    # writes of a resumed checkpoint's unfinished batch are rolled back as such, whoever wrote
    running = [
        e
        for e in entries
        if not set(e.get("docs", [])) <= rollback.doc_ids and writer_running(e, STALE_AFTER_S)
    ]
    if running:  # that process holds them in its own vectors: its state, not this folder's
        docs = sorted({d for e in running for d in e.get("docs", [])})
        _hide(src, rollback, docs, running[-1], "wrote after this folder was persisted to")
        entries = [e for e in entries if e not in running]
    if entries:
        rollback.add_later_writes(graph, (d for e in entries for d in e.get("docs", [])))


def drop_gone_vectors(
    src: Path, kind: str, index: Any, keys: list[str], rollback: Rollback
) -> None:
    """After writes that followed the persist (``rollback.later``, ``rollback.hidden``: a
    running process's, or an unfinished write a journal records, which may have deleted part
    of its documents): drop the saved vectors of ``kind`` whose node the graph no longer has
    (documents deleted or replaced since)."""
    if not rollback.later and not rollback.hidden and not rollback.unfinished:
        return
    present = set(keys)
    gone = [key for key in index.ids if key not in present]
    if gone:
        logger.info(
            "%s: dropping %d saved %s vector(s) of nodes deleted from the graph since the persist",
            src,
            len(gone),
            kind,
        )
        index.delete(gone)
