"""The single-process executor (the default): batches prepared one after the other here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from graphrag_integrations.core.index.executors.protocol import BatchDone
from graphrag_integrations.core.progress import LLMProgress

T = TypeVar("T")
R = TypeVar("R")

#: Passages per batch of a checkpointed local build through an executor.
DEFAULT_BATCH_SIZE = 256


class LocalExecutor:
    """Prepare every batch in this process, in order (today's build).

    Parameters
    ----------
    batch_size : int
        Passages per batch when a build is cut into batches (checkpointed builds).

    Examples
    --------
    >>> LocalExecutor().map(len, [[1, 2], [3]], show_progress=False)
    [2, 1]
    """

    name = "local"

    def __init__(self, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        self.batch_size = batch_size

    def __repr__(self) -> str:
        return f"LocalExecutor(batch_size={self.batch_size})"

    def map(
        self,
        prepare: Callable[[Sequence[T]], R],
        batches: Sequence[Sequence[T]],
        *,
        done: BatchDone | None = None,
        desc: str = "Preparing",
        show_progress: bool = True,
    ) -> list[R]:
        """``[prepare(b) for b in batches]``, calling ``done(i, result)`` after each."""
        results: list[R] = []
        total = sum(len(b) for b in batches)
        with LLMProgress(total, desc, unit="passage", enabled=show_progress) as bar:
            for i, batch in enumerate(batches):
                result = prepare(batch)
                if done is not None:
                    done(i, result)
                results.append(result)
                bar.update(len(batch))
        return results
