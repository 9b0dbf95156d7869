"""The readers-writer lock every index holds, so a query never sees half a mutation.

Each :class:`~graphrag_integrations.core.index.base.BaseIndex` instance owns one
:class:`ReadWriteLock`, created lazily on first use by :func:`lock_of` (a subclass that does
not call ``super().__init__()`` still gets one). ``BaseIndex.__init_subclass__`` wraps the
subclass's mutating methods (``insert``, ``delete``, ``upsert``, ``add_passages``) with
:func:`writer` and its reading methods (``retrieve``, ``persist``, ``doc_ids``) with
:func:`reader`, so every method inherits the protection without writing it:

* queries run in parallel (readers never block each other) and see the index before or after
  a mutation, never in between;
* mutations are serialised: two threads inserting at once run one after the other, so the
  second one sees what the first added (an already indexed document is skipped once);
* writer-preferring: a waiting writer holds back new readers, so a stream of queries cannot
  starve an ``insert``;
* re-entrant: a reader may read again (a method's ``retrieve`` calling a wrapped retriever's),
  the writer thread may write again (``upsert`` calling ``delete`` then ``insert``) and read
  (an ``insert`` that queries or rebuilds a view). A reader asking for the write lock would
  wait for itself forever, so it raises :class:`LockUpgradeError` instead.

Lock order: the index lock first, then any lock of the index's parts (the
:class:`~graphrag_integrations.core.index.store.IndexStore` lock of ``writing()`` and
``derived``); code holding a part's lock never calls a wrapped index method. A retriever
reading an index it does not own (Clue's ``QIter``) takes ``read_locked(index)`` for a query.
The lock is per thread: a writer must not wait for worker threads that call wrapped methods of
the same index.

The lock pickles and deep-copies as a new, free lock, so indexes stay picklable whatever their
``__getstate__``.

Examples
--------
>>> class Box:
...     def __init__(self) -> None:
...         self.items: list[str] = []
...     @writer
...     def add(self, item: str) -> None:
...         self.items.append(item)
...     @reader
...     def count(self) -> int:
...         return len(self.items)
>>> box = Box()
>>> box.add("a")
>>> box.count()
1
>>> with read_locked(box):
...     box.count()
1
>>> with read_locked(box):
...     box.add("b")
Traceback (most recent call last):
...
graphrag_integrations.core.index.locking.LockUpgradeError: this thread holds the read lock of Box; \
taking its write lock would wait forever (release the read lock first)
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Literal, TypeVar, cast

__all__ = [
    "LockUpgradeError",
    "ReadWriteLock",
    "guard_methods",
    "is_guarded",
    "lock_of",
    "read_locked",
    "reader",
    "write_locked",
    "writer",
]

F = TypeVar("F", bound=Callable[..., Any])

#: Instance attribute (in ``__dict__``) holding an object's lock.
LOCK_ATTRIBUTE = "_graphrag_rwlock"
#: Attribute marking a wrapped method with its role (``"read"`` / ``"write"``).
GUARD_ATTRIBUTE = "__graphrag_lock__"

_creation = threading.Lock()


class LockUpgradeError(RuntimeError):
    """A thread holding an index's read lock asked for its write lock (it would deadlock)."""


class ReadWriteLock:
    """A writer-preferring, re-entrant readers-writer lock (see the module docstring).

    Examples
    --------
    >>> lock = ReadWriteLock()
    >>> with lock.read(), lock.read():  # re-entrant reads
    ...     lock.readers
    1
    >>> with lock.write():
    ...     with lock.read():  # the writer may read
    ...         lock.writer_active
    True
    >>> lock.readers, lock.writer_active
    (0, False)
    """

    def __init__(self, owner: str = "index") -> None:
        self.owner = owner
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0  # threads holding a counted read
        self._writer: int | None = None  # ident of the writing thread
        self._writer_depth = 0
        self._waiting_writers = 0
        self._local = threading.local()  # per thread: read depth, whether counted

    # -- state (diagnostics and tests) -------------------------------------------------
    @property
    def readers(self) -> int:
        """Threads holding the read lock (not counting reads inside the writer)."""
        return self._readers

    @property
    def writer_active(self) -> bool:
        """Whether a thread holds the write lock."""
        return self._writer is not None

    def _depth(self) -> int:
        return cast(int, getattr(self._local, "depth", 0))

    # -- reading ---------------------------------------------------------------------------
    def acquire_read(self) -> None:
        """Take the read lock (waits while a writer holds it or waits for it)."""
        depth = self._depth()
        if depth:
            self._local.depth = depth + 1
            return
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:  # a read inside this thread's write
                self._local.depth, self._local.counted = 1, False
                return
            while self._writer is not None or self._waiting_writers:
                self._cond.wait()
            self._readers += 1
        self._local.depth, self._local.counted = 1, True

    def release_read(self) -> None:
        """Release one :meth:`acquire_read` of this thread."""
        depth = self._depth()
        if not depth:
            raise RuntimeError(f"release_read of {self.owner}'s lock without acquire_read")
        self._local.depth = depth - 1
        if depth > 1 or not self._local.counted:
            return
        with self._cond:
            self._readers -= 1
            if not self._readers:
                self._cond.notify_all()

    # -- writing ---------------------------------------------------------------------------
    def acquire_write(self) -> None:
        """Take the write lock (waits for the readers; new readers wait meanwhile).

        Raises
        ------
        LockUpgradeError
            If this thread holds the read lock (outside a write of its own).
        """
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._writer_depth += 1
                return
            if self._depth():
                raise LockUpgradeError(
                    f"this thread holds the read lock of {self.owner}; taking its write lock "
                    "would wait forever (release the read lock first)"
                )
            self._waiting_writers += 1
            try:
                while self._writer is not None or self._readers:
                    self._cond.wait()
            finally:
                self._waiting_writers -= 1
                if self._writer is not None or self._readers:  # interrupted: let readers in
                    self._cond.notify_all()
            self._writer, self._writer_depth = me, 1

    def release_write(self) -> None:
        """Release one :meth:`acquire_write` of this thread."""
        with self._cond:
            if self._writer != threading.get_ident():
                raise RuntimeError(f"release_write of {self.owner}'s lock by a non-writer thread")
            self._writer_depth -= 1
            if self._writer_depth:
                return
            self._writer = None
            if self._depth() and not self._local.counted:  # reads taken inside outlive it
                self._readers += 1
                self._local.counted = True
            self._cond.notify_all()

    # -- context managers --------------------------------------------------------------------
    @contextmanager
    def read(self) -> Iterator[None]:
        """``with lock.read():`` - hold the read lock for the block."""
        self.acquire_read()
        try:
            yield
        finally:
            self.release_read()

    @contextmanager
    def write(self) -> Iterator[None]:
        """``with lock.write():`` - hold the write lock for the block."""
        self.acquire_write()
        try:
            yield
        finally:
            self.release_write()

    def __reduce__(self) -> tuple[type[ReadWriteLock], tuple[str]]:
        """Pickle / deep-copy as a new, free lock (a held lock is process-local state)."""
        return (type(self), (self.owner,))

    def __repr__(self) -> str:
        return (
            f"ReadWriteLock({self.owner!r}, readers={self._readers}, "
            f"writer={self.writer_active}, waiting_writers={self._waiting_writers})"
        )


def lock_of(obj: object) -> ReadWriteLock:
    """The lock of ``obj``, created on first use (thread-safe; stored in its ``__dict__``).

    Raises
    ------
    TypeError
        If ``obj`` has no ``__dict__`` (a ``__slots__`` class without one).

    Examples
    --------
    >>> class Thing: ...
    >>> thing = Thing()
    >>> lock_of(thing) is lock_of(thing)
    True
    """
    try:
        state = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        raise TypeError(
            f"{type(obj).__name__} has no __dict__ to hold its readers-writer lock"
        ) from None
    lock = state.get(LOCK_ATTRIBUTE)
    if lock is None:
        with _creation:
            lock = state.get(LOCK_ATTRIBUTE)
            if lock is None:
                lock = state[LOCK_ATTRIBUTE] = ReadWriteLock(type(obj).__name__)
    return cast(ReadWriteLock, lock)


def read_locked(obj: object) -> AbstractContextManager[None]:
    """``with read_locked(index):`` - hold ``index``'s read lock (e.g. a retriever's query)."""
    return lock_of(obj).read()


def write_locked(obj: object) -> AbstractContextManager[None]:
    """``with write_locked(index):`` - hold ``index``'s write lock for several mutations."""
    return lock_of(obj).write()


def _guard(method: F, role: Literal["read", "write"]) -> F:
    if inspect.iscoroutinefunction(method) or inspect.isgeneratorfunction(method):
        raise TypeError(
            f"{method.__qualname__} cannot hold a thread lock across yields or awaits; make it "
            "a plain method (the async variants run it in a worker thread)"
        )

    if role == "read":

        @functools.wraps(method)
        def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
            lock = lock_of(self)
            lock.acquire_read()
            try:
                return method(self, *args, **kwargs)
            finally:
                lock.release_read()

    else:

        @functools.wraps(method)
        def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
            lock = lock_of(self)
            lock.acquire_write()
            try:
                return method(self, *args, **kwargs)
            finally:
                lock.release_write()

    setattr(locked, GUARD_ATTRIBUTE, role)
    return cast(F, locked)


def reader(method: F) -> F:
    """Decorator: ``method`` runs under its instance's read lock."""
    return _guard(method, "read")


def writer(method: F) -> F:
    """Decorator: ``method`` runs under its instance's write lock."""
    return _guard(method, "write")


def is_guarded(method: object) -> str | None:
    """``"read"`` / ``"write"`` for a method wrapped by :func:`reader` / :func:`writer`.

    Examples
    --------
    >>> is_guarded(writer(lambda self: None)), is_guarded(len)
    ('write', None)
    """
    role = getattr(method, GUARD_ATTRIBUTE, None)
    return role if role in ("read", "write") else None


def guard_methods(cls: type, *, readers: Iterable[str], writers: Iterable[str]) -> None:
    """Wrap the methods ``readers`` / ``writers`` that ``cls`` has (own or inherited).

    Methods already wrapped, abstract ones and names ``cls`` lacks are left alone, so calling
    it for every subclass wraps each implementation once, mixins included.

    Examples
    --------
    >>> class Index:
    ...     def insert(self) -> str:
    ...         return "inserted"
    >>> guard_methods(Index, readers=["retrieve"], writers=["insert"])
    >>> is_guarded(Index.insert), Index().insert()
    ('write', 'inserted')
    """
    for names, wrap in ((writers, writer), (readers, reader)):
        for name in names:
            attr = inspect.getattr_static(cls, name, None)
            if (
                not inspect.isfunction(attr)
                or getattr(attr, "__isabstractmethod__", False)
                or is_guarded(attr)
            ):
                continue
            setattr(cls, name, wrap(attr))
