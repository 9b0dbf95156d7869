"""core.index.locking and the lock every BaseIndex inherits (issue 12, concurrency)."""

from __future__ import annotations

import copy
import pickle
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.index.locking import (
    LockUpgradeError,
    ReadWriteLock,
    guard_methods,
    is_guarded,
    lock_of,
    read_locked,
    write_locked,
)
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.testing.compliance.concurrency import loop_ticks

WAIT = 10.0  # upper bound of every wait: a deadlock fails the test instead of hanging it


def started(target: Any, *args: Any) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def joined(*threads: threading.Thread) -> None:
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive(), "deadlock"


# -- the lock ---------------------------------------------------------------------------------
def test_readers_do_not_block_each_other() -> None:
    lock = ReadWriteLock()
    both_inside = threading.Barrier(2, timeout=WAIT)

    def read() -> None:
        with lock.read():
            both_inside.wait()  # breaks (BrokenBarrierError) if the second reader is held back

    joined(started(read), started(read))
    assert lock.readers == 0


def test_a_writer_excludes_readers_and_other_writers() -> None:
    lock = ReadWriteLock()
    events: list[str] = []
    with lock.write():
        r = started(lambda: (lock.acquire_read(), events.append("read"), lock.release_read()))
        w = started(lambda: (lock.acquire_write(), events.append("write"), lock.release_write()))
        time.sleep(0.2)
        assert events == []
        events.append("released")
    joined(r, w)
    assert events[0] == "released" and sorted(events[1:]) == ["read", "write"]


def test_a_waiting_writer_holds_back_new_readers_but_not_reentrant_ones() -> None:
    lock = ReadWriteLock()
    order: list[str] = []
    lock.acquire_read()
    w = started(lambda: (lock.acquire_write(), order.append("writer"), lock.release_write()))
    while not lock._waiting_writers:  # the writer queued behind our read
        time.sleep(0.01)
    r = started(lambda: (lock.acquire_read(), order.append("new reader"), lock.release_read()))
    time.sleep(0.2)
    assert order == []  # the new reader waits behind the writer
    lock.acquire_read()  # re-entrant: must not wait for the writer (that would deadlock)
    lock.release_read()
    lock.release_read()
    joined(w, r)
    assert order == ["writer", "new reader"]


def test_the_writer_may_write_again_and_read_and_keep_reading_after() -> None:
    lock = ReadWriteLock()
    lock.acquire_write()
    lock.acquire_write()
    lock.acquire_read()
    lock.release_write()
    assert lock.writer_active
    lock.release_write()  # downgrade: the read taken inside the write is now a plain read
    assert (lock.writer_active, lock.readers) == (False, 1)
    w = started(lambda: (lock.acquire_write(), lock.release_write()))
    time.sleep(0.1)
    assert w.is_alive()  # a writer waits for the downgraded reader
    lock.release_read()
    joined(w)


def test_a_reader_asking_for_the_write_lock_gets_an_error_not_a_deadlock() -> None:
    lock = ReadWriteLock("MyIndex")
    with lock.read(), pytest.raises(LockUpgradeError, match="MyIndex"):
        lock.acquire_write()
    with lock.write():  # still usable
        pass


def test_releasing_an_unheld_lock_raises() -> None:
    lock = ReadWriteLock()
    with pytest.raises(RuntimeError, match="without acquire_read"):
        lock.release_read()
    with pytest.raises(RuntimeError, match="non-writer"):
        lock.release_write()


def test_lock_of_creates_one_lock_per_object_even_under_a_race() -> None:
    class Thing:
        pass

    things = [Thing() for _ in range(50)]
    seen: list[list[ReadWriteLock]] = [[], []]
    threads = [started(lambda s=s: s.extend(lock_of(t) for t in things)) for s in seen]
    joined(*threads)
    assert all(a is b for a, b in zip(*seen, strict=True))
    assert len({id(lock) for lock in seen[0]}) == len(things)

    class Slotted:
        __slots__ = ()

    with pytest.raises(TypeError, match="__dict__"):
        lock_of(Slotted())


# -- what BaseIndex subclasses inherit --------------------------------------------------------
class ListIndex(BaseIndex):
    """A minimal index: passages in a list; ``insert`` optionally slow. No ``__init__`` call
    of the base class, on purpose."""

    method = "list"

    def __init__(self, delay: float = 0.0) -> None:
        self.items: list[Passage] = []
        self.delay = delay
        self.inside: list[str] = []  # what ran while another call was inside

    @classmethod
    def from_documents(cls, documents: Iterable[Any], **kwargs: Any) -> ListIndex:
        index = cls(**kwargs)
        index.insert(documents)
        return index

    @classmethod
    def from_passages(cls, passages: Sequence[Passage], **kwargs: Any) -> ListIndex:
        return cls.from_documents([p.text for p in passages], **kwargs)

    def doc_ids(self) -> list[str]:
        return sorted({p.doc_id for p in self.items})

    def insert(self, documents: Iterable[Any], **load_options: Any) -> list[str]:
        added = []
        for text in documents:
            if any(p.doc_id == text for p in self.items):
                continue
            time.sleep(self.delay)  # check, then act: racy without the lock
            self.items = [*self.items, Passage(text, text, text)]
            added.append(text)
        return added

    def delete(self, doc_id: str) -> bool:
        time.sleep(self.delay)
        kept = [p for p in self.items if p.doc_id != doc_id]
        if len(kept) == len(self.items):
            return self._unknown_document(doc_id)
        self.items = kept
        return True

    def persist(self, path: str | Path, *, overwrite: bool = False) -> None:
        Path(path).write_text("\n".join(p.text for p in self.items), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path, **kwargs: Any) -> ListIndex:
        return cls.from_documents(Path(path).read_text(encoding="utf-8").split("\n"))

    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        return [RetrievedPassage(p, 1.0) for p in self.items[: k or self.default_k]]


class RetrieveMixin:
    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        return []


class MixedIndex(RetrieveMixin, ListIndex):  # type: ignore[misc]
    """``retrieve`` comes from a mixin that is no BaseIndex."""


class Upserting(ListIndex):
    def upsert(self, text: str) -> None:
        self.delete(text)
        self.insert([text])


def test_subclass_methods_are_wrapped_once_with_their_role() -> None:
    assert is_guarded(ListIndex.insert) == "write"
    assert is_guarded(ListIndex.delete) == "write"
    assert is_guarded(ListIndex.retrieve) == "read"
    assert is_guarded(ListIndex.persist) == "read"
    assert is_guarded(MixedIndex.retrieve) == "read"  # found through the MRO
    assert is_guarded(Upserting.upsert) == "write"
    assert is_guarded(BaseIndex.aretrieve) is None
    assert ListIndex.insert.__name__ == "insert"
    assert ListIndex.insert.__wrapped__.__qualname__ == "ListIndex.insert"  # type: ignore[attr-defined]
    inherited = Upserting.__dict__.get("insert")
    assert inherited is None  # the parent's wrapper is reused, not wrapped again


def test_an_async_guarded_method_is_refused_at_class_creation() -> None:
    with pytest.raises(TypeError, match="plain method"):

        class AsyncInsert(ListIndex):
            async def insert(self, documents: Any, **options: Any) -> list[str]:  # type: ignore[override]
                return []

    with pytest.raises(TypeError, match="plain method"):
        guard_methods(
            type("G", (), {"retrieve": lambda self: (yield)}), readers=["retrieve"], writers=[]
        )


def test_a_reader_inside_a_writer_and_an_upsert_inside_a_writer_work() -> None:
    index = Upserting.from_documents(["a", "b"])
    with write_locked(index):
        index.upsert("a")  # re-entrant writer calling two writers
        assert [h.id for h in index.retrieve("q")] == ["b", "a"]  # reader inside the writer
    with read_locked(index), pytest.raises(LockUpgradeError):
        index.insert(["c"])


def test_mutations_serialise_and_queries_wait_for_a_whole_mutation() -> None:
    index = ListIndex.from_documents([])
    index.delay = 0.05
    results: list[list[str]] = []
    outcomes: list[list[str]] = []
    writers = [
        started(lambda d=d: outcomes.append(index.insert(d))) for d in (["x", "y"], ["y", "z"])
    ]

    def query() -> None:
        while any(w.is_alive() for w in writers):
            results.append([h.id for h in index.retrieve("q", k=9)])
            time.sleep(0.005)

    readers = [started(query) for _ in range(2)]
    joined(*writers, *readers)
    assert sorted(p.id for p in index.items) == ["x", "y", "z"]  # y once
    assert sorted(map(tuple, outcomes)) in ([("x", "y"), ("z",)], [("x",), ("y", "z")])
    states = {(), ("x", "y"), ("y", "z"), ("x", "y", "z"), ("y", "z", "x")}
    assert all(tuple(r) in states for r in results), results  # never after one of two docs


def test_pickle_and_deepcopy_give_a_fresh_free_lock() -> None:
    index = ListIndex.from_documents(["a"])
    with index.rwlock.write():
        restored = pickle.loads(pickle.dumps(index))
        duplicate = copy.deepcopy(index)
    for other in (restored, duplicate):
        assert other.rwlock is not index.rwlock
        assert not other.rwlock.writer_active
        assert [h.id for h in other.retrieve("q")] == ["a"]
        assert other.insert(["b"]) == ["b"]


async def test_ainsert_and_adelete_do_not_block_the_event_loop() -> None:
    index = ListIndex.from_documents(["a"])
    index.delay = 0.3
    async with loop_ticks() as ticks:
        assert await index.ainsert(["b"]) == ["b"]
        after_insert = ticks()
        assert await index.adelete("a") is True
        assert await index.adelete("a") is False
        after_delete = ticks()
    assert after_insert >= 10  # ~30 expected in 0.3 s; 0 if insert ran in the loop
    assert after_delete - after_insert >= 20
    assert [p.id for p in index.items] == ["b"]


# -- IndexStore views and the index lock ------------------------------------------------------
class StoreIndex(ListIndex):
    """Vectors in an IndexStore with a derived view; ``insert`` rebuilds the view by querying
    itself (a reader inside the writer), as ClueIndex does."""

    method = "store"

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__(delay)
        self.store = IndexStore("toy", {"doc": "docs"})
        self.builds = 0

    def _view(self, store: IndexStore, previous: Any) -> tuple[str, ...]:
        self.builds += 1
        time.sleep(self.delay)
        keys = store.keys("doc")
        assert len(store.embeddings("doc", keys)) == len(keys)
        return tuple(keys)

    def insert(self, documents: Iterable[Any], **load_options: Any) -> list[str]:
        added = []
        for i, text in enumerate(documents):
            with self.store.writing():
                self.store.add_node("doc", text, (text,))
                time.sleep(self.delay)
                vector = np.zeros(4)
                vector[i % 4] = 1.0
                self.store.add_vectors("doc", {text: vector})
            added.append(text)
        self.retrieve("rebuild the view now")
        return added

    def delete(self, doc_id: str) -> bool:
        return bool(self.store.remove_document(doc_id)) or self._unknown_document(doc_id)

    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        keys = self.store.derived("keys", self._view)
        return [RetrievedPassage(Passage(key, key, key), 1.0) for key in keys]


def test_a_writer_rebuilding_a_view_while_readers_query_does_not_deadlock() -> None:
    index = StoreIndex()
    index.delay = 0.01
    batches = [[f"a{i}", f"b{i}"] for i in range(4)]
    states = {()}
    done: list[str] = []
    for batch in batches:
        done = done + batch
        states.add(tuple(done))
    seen: list[tuple[str, ...]] = []
    stop = threading.Event()

    def query() -> None:
        while not stop.is_set():
            seen.append(tuple(h.id for h in index.retrieve("q")))

    readers = [started(query) for _ in range(3)]
    writer = started(lambda: [index.insert(b) for b in batches])
    joined(writer)
    stop.set()
    joined(*readers)
    assert seen and set(seen) <= states, set(seen) - states  # whole inserts only
    assert index.store.derived("keys", index._view) == tuple(done)
