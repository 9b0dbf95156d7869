"""Least-recently-used caches: :class:`LRUCache` (a bounded ordered dict) and
:class:`VersionedLRU` (a thread-safe one emptied when the owning store's version changes).

No installed library offers an LRU with explicit use, insertion and trimming (``functools``
caches calls, not records), so the package keeps this one and every bounded record cache
builds on it: the per-query neighbourhood reads (ReG, KG-Translator, Clue-RAG), the
translator's relation constraints and token ids, the nodes a FalkorDB graph object created.

Examples
--------
>>> cache: LRUCache[str, int] = LRUCache(2)
>>> cache.add("a", 1); cache.add("b", 2); cache.use("a"); cache.add("c", 3)
1
>>> list(cache.items())
[('a', 1), ('c', 3)]
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Generic, TypeVar

__all__ = ["LRUCache", "VersionedLRU"]

K = TypeVar("K")
V = TypeVar("V")


class LRUCache(OrderedDict[K, V]):
    """An ordered dict of at most ``capacity`` entries after :meth:`add` or :meth:`trim`,
    least recently used first. Plain dict reads (``cache[key]``, ``get``, ``in``) do not
    count as a use; :meth:`use` does. Not thread-safe (its owner locks).

    Parameters
    ----------
    capacity : int
        Most entries kept (may be changed; it applies from the next :meth:`add` or
        :meth:`trim`).
    """

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity

    def use(self, key: K) -> V:
        """The value of ``key``, now the most recently used (``KeyError`` if absent)."""
        self.move_to_end(key)
        return self[key]

    def add(self, key: K, value: V) -> None:
        """Store ``value`` as the most recently used, dropping the least recently used
        entries beyond the capacity."""
        self[key] = value
        self.move_to_end(key)
        self.trim()

    def trim(self) -> None:
        """Drop the least recently used entries beyond the capacity."""
        while len(self) > self.capacity:
            self.popitem(last=False)


class VersionedLRU(Generic[V]):
    """At most ``capacity`` records by key (least recently used dropped first), for one
    version of a store: :meth:`check` empties it when the version it is given changed.
    Thread-safe.

    Examples
    --------
    >>> cache: VersionedLRU[int] = VersionedLRU(2)
    >>> cache.check(0); cache.put({"a": 1, "b": 2, "c": 3}); cache.get(["a", "c"])
    {'c': 3}
    >>> cache.check(1); len(cache)
    0
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.version: int | None = None
        self._lru: LRUCache[str, V] = LRUCache(capacity)
        self._lock = threading.Lock()

    @property
    def capacity(self) -> int:
        """Most records kept (settable; applies from the next :meth:`put`)."""
        return self._lru.capacity

    @capacity.setter
    def capacity(self, capacity: int) -> None:
        self._lru.capacity = capacity

    def __len__(self) -> int:
        return len(self._lru)

    def check(self, version: int) -> None:
        """Empty the cache if ``version`` is not the one its records were read at."""
        with self._lock:
            if version != self.version:
                self._lru.clear()
                self.version = version

    def get(self, keys: Sequence[str]) -> dict[str, V]:
        """The cached records of ``keys`` (marked as recently used)."""
        with self._lock:
            return {key: self._lru.use(key) for key in keys if key in self._lru}

    def put(self, records: Mapping[str, V]) -> None:
        """Store ``records``, dropping the least recently used beyond the capacity."""
        with self._lock:
            for key, value in records.items():
                self._lru.add(key, value)
