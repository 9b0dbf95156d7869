"""Flags an index carries on itself while a block runs (a write, a rollback, a raw read)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["instance_flag"]


@contextmanager
def instance_flag(obj: Any, name: str) -> Iterator[None]:
    """Within the block, ``obj.__dict__[name]`` is ``True``; after it, what it was before.

    Nested blocks of the same flag restore the outer block's value, so an inner block ends
    without clearing a flag an outer block still holds.

    Examples
    --------
    >>> class Index: ...
    >>> index = Index()
    >>> with instance_flag(index, "_busy"):
    ...     with instance_flag(index, "_busy"):
    ...         pass
    ...     index.__dict__["_busy"]
    True
    >>> index.__dict__["_busy"]
    False
    """
    outer = obj.__dict__.get(name, False)
    obj.__dict__[name] = True
    try:
        yield
    finally:
        obj.__dict__[name] = outer
