"""Cutting a sequence into consecutive batches (Python 3.12's ``itertools.batched`` for the
package's Python 3.10+, on sequences: a batch is a slice, not a tuple).

Examples
--------
>>> list(slices(5, 2))
[slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
>>> list(batches(["a", "b", "c"], 2))
[['a', 'b'], ['c']]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar, overload

__all__ = ["batches", "slices"]

T = TypeVar("T")


def slices(length: int, size: int) -> Iterator[slice]:
    """Consecutive slices of ``size`` covering ``range(length)`` (the last may be shorter):
    the batches of several parallel sequences (ids, vectors, metadata) at once."""
    if size < 1:
        raise ValueError(f"batch size must be >= 1, got {size}")
    for start in range(0, length, size):
        yield slice(start, min(start + size, length))


@overload
def batches(items: list[T], size: int) -> Iterator[list[T]]: ...
@overload
def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]: ...
def batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """``items`` in consecutive slices of ``size`` (the last may be shorter; a list gives
    lists)."""
    return (items[part] for part in slices(len(items), size))
