"""Progress bars for long steps (indexing, embedding, parsing).

One thin wrapper around ``tqdm`` so every step reports progress the same way: to stderr,
and not at all when the caller passes ``enabled=False``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def progress(
    iterable: Iterable[T],
    desc: str,
    total: int | None = None,
    enabled: bool = True,
) -> Iterator[T]:
    """Iterate over ``iterable`` while showing a ``tqdm`` progress bar on stderr.

    Parameters
    ----------
    iterable : Iterable
        What to iterate over; its items are yielded unchanged.
    desc : str
        Label shown before the bar (e.g. ``"Parsing passages"``).
    total : int, optional
        Number of items, for iterables without ``len()`` (generators); taken from
        ``len(iterable)`` when available.
    enabled : bool
        ``False`` shows nothing and costs nothing beyond the iteration itself.

    Returns
    -------
    Iterator
        The items of ``iterable``, in order.

    Examples
    --------
    >>> list(progress(range(3), "Counting", enabled=False))
    [0, 1, 2]
    >>> sum(progress((x * x for x in range(4)), "Squares", total=4, enabled=False))
    14
    """
    if not enabled:
        return iter(iterable)
    from tqdm import tqdm

    bar: Iterable[T] = tqdm(iterable, desc=desc, total=total, file=sys.stderr, dynamic_ncols=True)
    return iter(bar)
