"""What keys KG-Translator's global query structures, kept without reading the whole graph.

Constrained decoding needs two global things: the entry-entity tries (built from the entry
entities' display names) and the graph fingerprint that keys their persisted cache
(``constraints/<tokenizer>/``) and the translator's response cache; ``stats()`` needs the
Table 5 counts. With the graph in a database, a query process must get them without scanning
the graph, so :class:`ParseKGSummary` holds them and is maintained incrementally:

* ``head`` part (a few numbers, read at load): the counts of Table 5 and the fingerprint;
* ``tables`` part (read only when needed: an insert or delete, the document ids, or tries
  to build because no constraint cache matches): per entity the counts of its surface forms
  and labels and of its head / tail hyperrelations, and the passage ids of each document.

The fingerprint is order independent: the sum modulo 2**128 of a 128-bit hash of every
hyperrelation ``(key, relation)`` and every entity ``(key, display name, label)``, so an
insert adds terms and a delete subtracts them (:func:`item_hash`). The flat view computes the
same sum from the whole graph (:meth:`ParseKGView.fingerprint
<graphrag_integrations.methods.kgt.store.ParseKGView.fingerprint>`).

Both parts are persisted with the index (``parsekg/summary.json`` and
``parsekg/tables.json``); an index written before they existed is scanned once instead.

Examples
--------
>>> s = ParseKGSummary.empty()
>>> s.add_passage("p1", "d1")
>>> s.add_rel("r1", "## is a city.", [("paris", "Paris", "GPE", "head")])
>>> s.stats(frozenset()).entry_entities, s.name("paris"), s.entries("forward", frozenset())
(1, 'Paris', ['paris'])
>>> s.remove_rel("r1", "## is a city.", [("paris", "Paris", "GPE", "head")])
>>> s.remove_passage("p1", "d1")
>>> s.fingerprint() == ParseKGSummary.empty().fingerprint(), s.stats(frozenset()).entities
(True, 0)
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrag_integrations.core.persistence import atomic_write_json
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.kgt.parsekg import ParseKGStats

logger = logging.getLogger(__name__)

SUMMARY_DIR = "parsekg"
HEAD_FILE = "summary.json"
TABLES_FILE = "tables.json"
_MOD = 1 << 128
#: One mention as stored on a hyperrelation node: ``(entity key, text, label, role)``.
MentionRow = Sequence[str]


def item_hash(*parts: str) -> int:
    """128-bit hash of one fingerprint term (parts joined by NUL).

    Examples
    --------
    >>> item_hash("r", "k", "text") == item_hash("r", "k", "text") != item_hash("r", "k", "t")
    True
    """
    return int.from_bytes(
        hashlib.blake2b("\0".join(parts).encode(), digest_size=16).digest(), "big"
    )


def rel_term(key: str, relation: str) -> int:
    """Fingerprint term of a hyperrelation."""
    return item_hash("r", key, relation)


def entity_term(key: str, name: str, label: str) -> int:
    """Fingerprint term of an entity (its display name and label)."""
    return item_hash("e", key, name, label)


def fingerprint_hex(total: int) -> str:
    """The fingerprint string of a term sum."""
    return f"{total % _MOD:032x}"


def majority(counts: Counter[str]) -> str:
    """The most frequent key (ties: the smallest).

    >>> majority(Counter({"b": 2, "a": 2, "c": 1}))
    'a'
    """
    best = max(counts.values())
    return min(name for name, c in counts.items() if c == best)


@dataclass
class EntityCounts:
    """Surface forms, labels and head / tail hyperrelation counts of one entity."""

    names: Counter[str] = field(default_factory=Counter)
    labels: Counter[str] = field(default_factory=Counter)
    heads: int = 0
    tails: int = 0

    def term(self, key: str) -> int:
        return entity_term(key, majority(self.names), majority(self.labels)) if self.names else 0

    def to_list(self) -> list[Any]:
        return [dict(self.names), dict(self.labels), self.heads, self.tails]

    @classmethod
    def from_list(cls, row: Sequence[Any]) -> EntityCounts:
        return cls(Counter(row[0]), Counter(row[1]), int(row[2]), int(row[3]))


@dataclass
class _Tables:
    entities: dict[str, EntityCounts] = field(default_factory=dict)
    documents: dict[str, list[str]] = field(default_factory=dict)


class ParseKGSummary:
    """Counts, fingerprint and (on demand) entity / document tables of a ParseKG.

    Parameters
    ----------
    head : dict
        ``passages``, ``rels``, ``entities``, ``entry_entities``, ``head_incidences``,
        ``tail_incidences`` and ``fingerprint`` (the term sum, an int).
    tables : callable, optional
        Returns the tables when first needed (reads ``tables.json`` or scans the graph).
    """

    def __init__(
        self, head: dict[str, int], tables: Callable[[], _Tables] | _Tables | None = None
    ) -> None:
        self.head = dict(head)
        self._tables = tables if tables is not None else _Tables()

    @classmethod
    def empty(cls) -> ParseKGSummary:
        """The summary of an empty graph."""
        keys = ("passages", "rels", "entities", "entry_entities", "head_incidences",
                "tail_incidences", "fingerprint")  # fmt: skip
        return cls(dict.fromkeys(keys, 0), _Tables())

    @property
    def tables(self) -> _Tables:
        """The entity and document tables (read on first use)."""
        if not isinstance(self._tables, _Tables):
            self._tables = self._tables()
        return self._tables

    @property
    def tables_loaded(self) -> bool:
        """Whether the tables are in memory."""
        return isinstance(self._tables, _Tables)

    # -- reading ----------------------------------------------------------------------------
    def fingerprint(self) -> str:
        """The graph fingerprint (see the module docstring)."""
        return fingerprint_hex(self.head["fingerprint"])

    def stats(self, excluded: frozenset[str]) -> ParseKGStats:
        """Table 5 figures (``excluded``: unused, the entry count is of forward entries)."""
        h = self.head
        return ParseKGStats(
            passages=h["passages"],
            sentences=h["rels"],
            entities=h["entities"],
            hyperrelations=h["rels"],
            entry_entities=h["entry_entities"],
            non_entry_entities=h["entities"] - h["entry_entities"],
            head_incidences=h["head_incidences"],
            tail_incidences=h["tail_incidences"],
        )

    def entries(self, direction: str, excluded: frozenset[str]) -> list[str]:
        """Sorted entry entities: heads (``"forward"``) or tails of an allowed label."""
        ents = self.tables.entities
        if direction == "forward":
            return sorted(k for k, e in ents.items() if e.heads)
        return sorted(k for k, e in ents.items() if e.tails and majority(e.labels) not in excluded)

    def name(self, key: str) -> str:
        """Display name of an entity (its most frequent surface form)."""
        return majority(self.tables.entities[key].names)

    def document_ids(self) -> set[str]:
        """Ids of the indexed documents."""
        return set(self.tables.documents)

    def passages_of(self, doc_id: str) -> list[str]:
        """Passage ids of a document (empty if unknown)."""
        return list(self.tables.documents.get(doc_id, ()))

    # -- maintenance ------------------------------------------------------------------------
    def add_passage(self, passage_id: str, doc_id: str) -> None:
        """Count a new passage."""
        self.tables.documents.setdefault(doc_id, []).append(passage_id)
        self.head["passages"] += 1

    def remove_passage(self, passage_id: str, doc_id: str) -> None:
        """Forget a passage."""
        docs = self.tables.documents
        kept = [p for p in docs.get(doc_id, ()) if p != passage_id]
        if kept:
            docs[doc_id] = kept
        else:
            docs.pop(doc_id, None)
        self.head["passages"] -= 1

    def add_rel(self, key: str, relation: str, mentions: Iterable[MentionRow]) -> None:
        """Count a new hyperrelation and its mentions ``(entity, text, label, role)``."""
        self._change(key, relation, mentions, +1)

    def remove_rel(self, key: str, relation: str, mentions: Iterable[MentionRow]) -> None:
        """Forget a hyperrelation (the inverse of :meth:`add_rel`)."""
        self._change(key, relation, mentions, -1)

    def _change(self, key: str, relation: str, mentions: Iterable[MentionRow], sign: int) -> None:
        h, ents = self.head, self.tables.entities
        h["rels"] += sign
        h["fingerprint"] = (h["fingerprint"] + sign * rel_term(key, relation)) % _MOD
        rows = list(mentions)
        roles: dict[str, str] = {}
        for ent, _text, _label, role in rows:
            roles.setdefault(ent, role)
        before = {e: ents[e].term(e) if e in ents else 0 for e in roles}
        for ent, text, label, _role in rows:
            counts = ents.setdefault(ent, EntityCounts())
            counts.names[text] += sign
            counts.labels[label] += sign
        for ent, role in roles.items():
            counts = ents[ent]
            was_entry = counts.heads > 0
            if role == "head":
                counts.heads += sign
                h["head_incidences"] += sign
            else:
                counts.tails += sign
                h["tail_incidences"] += sign
            counts.names = +counts.names  # drops zero counts
            counts.labels = +counts.labels
            h["entry_entities"] += int(counts.heads > 0) - int(was_entry)
            if before[ent] == 0 and counts.names:
                h["entities"] += 1
            elif before[ent] != 0 and not counts.names:
                h["entities"] -= 1
                del ents[ent]
            after = counts.term(ent) if counts.names else 0
            h["fingerprint"] = (h["fingerprint"] - before[ent] + after) % _MOD

    # -- persistence ------------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        """Write ``parsekg/summary.json`` and ``parsekg/tables.json`` into ``directory``."""
        out = directory / SUMMARY_DIR
        out.mkdir(parents=True, exist_ok=True)
        head = {**self.head, "fingerprint": fingerprint_hex(self.head["fingerprint"])}
        atomic_write_json(out / HEAD_FILE, head, indent=None)
        tables = self.tables
        atomic_write_json(
            out / TABLES_FILE,
            {
                "entities": {k: e.to_list() for k, e in tables.entities.items()},
                "documents": tables.documents,
            },
            indent=None,
        )

    @classmethod
    def load(cls, directory: Path) -> ParseKGSummary | None:
        """The summary :meth:`save` wrote in ``directory`` (tables read on first use);
        ``None`` when the index has none (written before summaries existed)."""
        source = directory / SUMMARY_DIR / HEAD_FILE
        if not source.is_file():
            return None
        try:
            head = json.loads(source.read_text(encoding="utf-8"))
            head["fingerprint"] = int(head["fingerprint"], 16)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise IndexMismatchError(f"{source}: unreadable ParseKG summary ({exc})") from exc
        tables_file = directory / SUMMARY_DIR / TABLES_FILE

        def tables() -> _Tables:
            try:
                data = json.loads(tables_file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise IndexMismatchError(f"{tables_file}: unreadable ({exc})") from exc
            return _Tables(
                {k: EntityCounts.from_list(v) for k, v in data["entities"].items()},
                {k: list(v) for k, v in data["documents"].items()},
            )

        return cls(head, tables)

    @classmethod
    def scan(
        cls,
        passages: Iterable[tuple[str, str]],
        rels: Iterable[tuple[str, str, Sequence[MentionRow]]],
    ) -> ParseKGSummary:
        """The summary of a whole graph: ``(passage id, doc id)`` and ``(rel key, relation,
        mentions)`` of every passage and hyperrelation (a one-off for indexes without one)."""
        out = cls.empty()
        for pid, doc in passages:
            out.add_passage(pid, doc)
        for key, relation, mentions in rels:
            out.add_rel(key, relation, mentions)
        return out
