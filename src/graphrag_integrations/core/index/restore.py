"""What an ``upsert`` replaces, kept until it completes, and put back when it does not.

``upsert`` deletes the indexed documents whose ids it is given, then inserts the new
versions. Interrupted half-way (a server killed, a process killed), the journal's rollback
(:mod:`~graphrag_integrations.core.index.journal`) removes every document the write touched:
the new versions written so far, and what was left of the old ones. To leave the index as it
was, the old versions must then come back. So before it deletes anything, ``upsert`` adds to
its write journal the passages of the documents it replaces (:func:`passage_records`: id,
text, document id, metadata), in the graph's meta node for a database graph, in the process
for the in-process journal; the rollback
(:func:`~graphrag_integrations.core.index.rollback.roll_back`), after removing the touched
documents, puts them back through the method's own ``insert`` (:func:`restore`), each
passage cut exactly as it was (:class:`RecordedPassages` replays the recorded passages
instead of cutting the document again), so that derived state (graph nodes, vectors, Clue's
statistics, QCG's generated queries, KG-Translator's and ReG's triples) is made again as a
clean build makes it. The journal is cleared only afterwards: a rollback interrupted in turn
is done again, whole, by the next call or load. A passage comes back with the id ``doc#i`` of
its place in its document and a ``chunk_index`` (what ``insert`` gives every passage): the
ids it had unless it was indexed through ``from_passages`` under ids of another form.

Examples
--------
>>> from graphrag_integrations.core.types import Passage
>>> records = passage_records_of(
...     [Passage("a#1", "two", "a", {"t": 1, "chunk_index": 1, "start_char": 4, "end_char": 7}),
...      Passage("a#0", "one", "a", {"t": 1, "chunk_index": 0, "start_char": 0, "end_char": 3})]
... )
>>> [r["id"] for r in records]
['a#0', 'a#1']
>>> from graphrag_integrations.core.text.chunking import split_documents
>>> passages = split_documents(recorded_documents(records), RecordedPassages(records))
>>> [(p.id, p.text, dict(p.metadata)) for p in passages]  # doctest: +NORMALIZE_WHITESPACE
[('a#0', 'one', {'t': 1, 'chunk_index': 0, 'start_char': 0, 'end_char': 3}),
 ('a#1', 'two', {'t': 1, 'chunk_index': 1, 'start_char': 4, 'end_char': 7})]
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphrag_integrations.core.text.chunking import CHUNK_METADATA_KEYS, Span
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.core.types import Passage

logger = logging.getLogger(__name__)

#: A recorded passage: ``{"id", "doc_id", "text", "metadata"}`` (JSON-able).
Record = dict[str, Any]


def _order(passage: Passage) -> tuple[int, int, str]:
    """Passages of one document in the order they were cut: ``chunk_index``, else the
    number after the last ``#`` of the id, else the id."""
    index = passage.metadata.get("chunk_index")
    if isinstance(index, int) and not isinstance(index, bool):
        return (0, index, passage.id)
    found = re.search(r"#(\d+)$", passage.id)
    return (1, int(found.group(1)), passage.id) if found else (2, 0, passage.id)


def passage_records_of(passages: Iterable[Passage]) -> list[Record]:
    """The records of ``passages``, by document (first seen first) and in cut order."""
    by_doc: dict[str, list[Passage]] = {}
    for passage in passages:
        by_doc.setdefault(passage.doc_id, []).append(passage)
    return [
        {"id": p.id, "doc_id": p.doc_id, "text": p.text, "metadata": dict(p.metadata)}
        for doc_passages in by_doc.values()
        for p in sorted(doc_passages, key=_order)
    ]


def passage_records(index: Any, doc_ids: Iterable[str]) -> list[Record]:
    """The records of the passages ``index`` holds for ``doc_ids``: its
    ``passages_of_documents(doc_ids)`` where it has one (a targeted read), else its
    ``passages`` (``[]`` for an index that lists none: nothing can be put back)."""
    wanted = set(doc_ids)
    if not wanted:
        return []
    targeted = getattr(index, "passages_of_documents", None)
    if callable(targeted):
        return passage_records_of(targeted(sorted(wanted)))
    passages = getattr(index, "passages", None)
    if passages is None:
        logger.info(
            "%s lists no passages: an interrupted upsert cannot put back the documents it replaced",
            type(index).__name__,
        )
        return []
    return passage_records_of(p for p in passages if p.doc_id in wanted)


class RecordedPassages:
    """A splitter that gives back the recorded passages of a document (see the module
    notes): ``split_documents(recorded_documents(records), RecordedPassages(records))`` are
    the passages recorded, with their metadata and offsets (ids ``doc#i`` in cut order)."""

    def __init__(self, records: Sequence[Mapping[str, Any]]) -> None:
        self._spans: dict[str, list[Span]] = {}
        for record in records:
            meta = dict(record.get("metadata") or {})
            start, end = meta.get("start_char"), meta.get("end_char")
            extra = {k: v for k, v in meta.items() if k not in CHUNK_METADATA_KEYS}
            self._spans.setdefault(str(record["doc_id"]), []).append(
                (
                    str(record["text"]),
                    start if isinstance(start, int) else None,
                    end if isinstance(end, int) else None,
                    extra,
                )
            )

    def __repr__(self) -> str:
        return f"RecordedPassages({len(self._spans)} document(s))"

    def recorded_spans(self, doc: SourceDocument) -> list[Span]:
        """The recorded spans of ``doc`` (by its id)."""
        return list(self._spans.get(doc.id, []))


def recorded_documents(records: Sequence[Mapping[str, Any]]) -> list[SourceDocument]:
    """One document per recorded document id (its passages' texts joined: only its id is
    used when :class:`RecordedPassages` cuts it)."""
    texts: dict[str, list[str]] = {}
    for record in records:
        texts.setdefault(str(record["doc_id"]), []).append(str(record["text"]))
    return [SourceDocument("\n".join(parts), id=doc) for doc, parts in texts.items()]


def restore(index: Any, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Insert the recorded documents into ``index`` again through its own ``insert``, their
    passages as recorded; returns the ids inserted (those it did not hold)."""
    if not records:
        return []
    inserted: list[str] = index.insert(
        recorded_documents(records), splitter=RecordedPassages(records)
    )
    return inserted
