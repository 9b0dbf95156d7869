"""What a filtered query may use: the passages matching a filter and their documents.

A metadata filter is an access boundary: a filtered query answers as if the index held only
the passages that match. A method derives the allowed set once per query (a
:class:`FilterScope`, cached per index version by :class:`ScopeCache`) and every stage keeps
only what it allows:

* a passage is allowed when its metadata matches (:func:`~graphrag_integrations.core.retrieval.
  filters.passage_metadata`: its metadata plus ``doc_id`` and ``passage_id``);
* anything derived from one passage (a sentence, a generated question, a hyperedge) is allowed
  with that passage (:meth:`FilterScope.allows`);
* anything derived from several documents (a triple, an entity) is usable when one of them is
  an allowed document (:meth:`FilterScope.allows_any`); it then reports only those
  (:meth:`FilterScope.kept_documents`), never the others.

Examples
--------
>>> from graphrag_integrations.core.retrieval.filters import parse_filter
>>> scope = FilterScope.of(parse_filter({"tenant": "A"}),
...                        [("p1", "d1", {"tenant": "A"}), ("p2", "d2", {"tenant": "B"})])
>>> scope.allows("p1"), scope.allows("p2"), scope.kept_documents(["d2", "d1"])
(True, False, ['d1'])
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from graphrag_integrations.core.lru import LRUCache
from graphrag_integrations.core.retrieval.filters import Comparison, MetadataFilter

__all__ = ["SCOPES_KEPT", "FilterCache", "FilterScope", "PassageRecord", "ScopeCache"]

T = TypeVar("T")

#: ``(passage id, document id, metadata)`` of one passage: what a filter is evaluated on.
PassageRecord = tuple[str, str, Mapping[str, Any]]
#: Filters whose scopes a :class:`ScopeCache` keeps (least recently used dropped first).
SCOPES_KEPT = 32


@dataclass(frozen=True)
class FilterScope:
    """The passages (and their documents) a filter lets a query use.

    Parameters
    ----------
    where : MetadataFilter
        The filter.
    passages : frozenset of str
        Ids of the matching passages.
    documents : frozenset of str
        Ids of their documents.
    """

    where: MetadataFilter
    passages: frozenset[str]
    documents: frozenset[str]
    fingerprint: str = field(default="", compare=False)

    @classmethod
    def of(cls, where: MetadataFilter, records: Iterable[PassageRecord]) -> FilterScope:
        """The scope of ``where`` over ``records`` (every passage of an index)."""
        passages: set[str] = set()
        documents: set[str] = set()
        for passage_id, doc_id, metadata in records:
            if where.matches({**metadata, "doc_id": doc_id, "passage_id": passage_id}):
                passages.add(passage_id)
                documents.add(doc_id)
        digest = hashlib.sha256()
        for passage_id in sorted(passages):
            digest.update(passage_id.encode("utf-8", "surrogatepass") + b"\0")
        return cls(where, frozenset(passages), frozenset(documents), digest.hexdigest()[:16])

    def __len__(self) -> int:
        return len(self.passages)

    def allows(self, passage_id: str) -> bool:
        """Whether the passage matches (and so what only it contributed may be used)."""
        return passage_id in self.passages

    def allows_any(self, doc_ids: Iterable[str]) -> bool:
        """Whether one of ``doc_ids`` (the provenance of a node, triple...) is allowed."""
        return any(doc in self.documents for doc in doc_ids)

    def kept_documents(self, doc_ids: Iterable[str]) -> list[str]:
        """The allowed ones among ``doc_ids``, sorted (what an output may name)."""
        return sorted({doc for doc in doc_ids if doc in self.documents})

    def passage_hint(self, key: str) -> MetadataFilter | None:
        """``{key: {"$in": [allowed passage ids]}}`` (``None`` when none is allowed): how a
        vector store whose records carry their passage id under ``key`` restricts a search.

        Examples
        --------
        >>> scope = FilterScope(Comparison("n", "eq", 1), frozenset({"p2", "p1"}), frozenset())
        >>> scope.passage_hint("chunk_id")
        Comparison(key='chunk_id', operator='in', value=('p1', 'p2'))
        """
        return Comparison(key, "in", tuple(sorted(self.passages))) if self.passages else None

    def document_hint(self, key: str = "doc_id") -> MetadataFilter | None:
        """``{key: {"$in": [allowed document ids]}}`` (``None`` when none is allowed)."""
        return Comparison(key, "in", tuple(sorted(self.documents))) if self.documents else None


class FilterCache(Generic[T]):
    """What was derived from the last :data:`SCOPES_KEPT` filters, by filter (thread-safe;
    made per index version, so a change of the index starts a new cache).

    Examples
    --------
    >>> from graphrag_integrations.core.retrieval.filters import parse_filter
    >>> cache: FilterCache[int] = FilterCache()
    >>> made = []
    >>> where = parse_filter({"n": 1})
    >>> cache.get(where, lambda: made.append(1) or len(made)), cache.get(where, lambda: 9)
    (1, 1)
    """

    def __init__(self, capacity: int = SCOPES_KEPT) -> None:
        self._items: LRUCache[MetadataFilter, T] = LRUCache(capacity)
        self._lock = threading.Lock()

    def get(self, where: MetadataFilter, make: Callable[[], T]) -> T:
        """The item of ``where``, made by ``make()`` the first time (outside the lock: two
        threads may both make it, with the same result)."""
        with self._lock:
            if where in self._items:
                return self._items.use(where)
        item = make()
        with self._lock:
            self._items.add(where, item)
        return item


class ScopeCache(FilterCache[FilterScope]):
    """The :class:`FilterScope` of the last :data:`SCOPES_KEPT` filters over one version of an
    index.

    Examples
    --------
    >>> from graphrag_integrations.core.retrieval.filters import parse_filter
    >>> cache, reads = ScopeCache(), []
    >>> def records():
    ...     reads.append(1)
    ...     return [("p1", "d1", {"n": 1})]
    >>> where = parse_filter({"n": 1})
    >>> cache.scope(where, records).passages == cache.scope(where, records).passages, len(reads)
    (True, 1)
    """

    def scope(
        self, where: MetadataFilter, records: Callable[[], Iterable[PassageRecord]]
    ) -> FilterScope:
        """The scope of ``where``, computed from ``records()`` the first time."""
        return self.get(where, lambda: FilterScope.of(where, records()))
