"""What an executor runs and what an index offers it: the two protocols of a split build.

A build is split in two (see :mod:`graphrag_integrations.core.index.executors`):

* ``index.preparer()`` returns a :class:`Preparer`: a picklable callable that turns one batch
  of passages into a picklable *prepared* result (chunk parses, knowledge units, embeddings,
  LLM replies...), without touching the index's stores. It holds only settings and lazily
  loaded models, so an executor can ship it to worker processes, where each worker loads its
  models once;
* ``index.merge(prepared)`` adds the prepared results of every batch, given in input order,
  to the index's graph and vectors, once, in the calling process.

An :class:`Executor` runs a preparer over batches and returns the results in input order.
``index.add_passages(passages)`` of a method with a split build is
``index.merge([index.preparer()(passages)])``, so a build through any executor gives the
index of the single-process build.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from graphrag_integrations.core.types import Passage

T = TypeVar("T")
R = TypeVar("R")

#: Called by :meth:`Executor.map` for every batch done: ``(batch position, its result)``, in
#: completion order (checkpoints write the result there).
BatchDone = Callable[[int, Any], None]


@runtime_checkable
class Preparer(Protocol):
    """The per-document half of a build: ``preparer(passages) -> prepared`` (picklable both)."""

    def __call__(self, passages: Sequence[Passage]) -> Any:
        """Prepare one batch (pure: the same batch gives the same result)."""
        ...


@runtime_checkable
class SplitBuild(Protocol):
    """An index whose build an executor can run: a :class:`Preparer` and a merge."""

    def preparer(self) -> Preparer:
        """A picklable preparer with this index's build settings and models."""
        ...

    def merge(self, prepared: Sequence[Any]) -> None:
        """Add the prepared results of every batch (input order) to the index."""
        ...


@runtime_checkable
class Executor(Protocol):
    """Runs a preparer over batches; results come back in input order.

    Attributes
    ----------
    name : str
        ``"local"``, ``"ray"``... (in logs and checkpoints).
    batch_size : int
        Passages per batch a build hands to :meth:`map`.
    """

    name: str
    batch_size: int

    def map(
        self,
        prepare: Callable[[Sequence[T]], R],
        batches: Sequence[Sequence[T]],
        *,
        done: BatchDone | None = None,
        desc: str = "Preparing",
        show_progress: bool = True,
    ) -> list[R]:
        """``[prepare(b) for b in batches]``, wherever it runs; ``done(i, result)`` as each
        batch finishes; progress (batches done, passages/s, ETA) when ``show_progress``."""
        ...
