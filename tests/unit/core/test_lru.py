"""The LRU caches every bounded record cache builds on."""

from __future__ import annotations

import pytest

from graphrag_integrations.core.lru import LRUCache, VersionedLRU


def test_lru_cache_drops_the_least_recently_used() -> None:
    cache: LRUCache[str, int] = LRUCache(2)
    cache.add("a", 1)
    cache.add("b", 2)
    assert cache.get("a") == 1 and list(cache) == ["a", "b"]  # a plain read is not a use
    assert cache.use("a") == 1 and list(cache) == ["b", "a"]
    cache.add("c", 3)
    assert dict(cache) == {"a": 1, "c": 3}
    cache.add("a", 4)  # a new value is a use too
    cache.add("d", 5)
    assert dict(cache) == {"a": 4, "d": 5}
    with pytest.raises(KeyError):
        cache.use("b")


def test_lru_cache_trims_to_a_changed_capacity() -> None:
    cache: LRUCache[int, int] = LRUCache(5)
    for i in range(5):
        cache[i] = i  # plain writes: kept until the next trim
    cache.capacity = 2
    assert len(cache) == 5
    cache.trim()
    assert list(cache) == [3, 4]
    empty: LRUCache[int, int] = LRUCache(0)
    empty.add(1, 1)
    assert len(empty) == 0


def test_versioned_lru() -> None:
    cache: VersionedLRU[int] = VersionedLRU(2)
    cache.check(3)
    cache.put({"a": 1, "b": 2})
    assert cache.get(["a"]) == {"a": 1}  # a is now the most recent
    cache.put({"c": 3})
    assert cache.get(["a", "b", "c"]) == {"a": 1, "c": 3}
    cache.check(3)
    assert len(cache) == 2
    cache.check(4)
    assert len(cache) == 0
    cache.capacity = 1
    cache.put({"x": 1, "y": 2})
    assert cache.get(["x", "y"]) == {"y": 2}
    with pytest.raises(ValueError, match="capacity"):
        VersionedLRU(0)
