"""Progress bars for long steps (indexing, embedding, parsing), on by default for big builds.

One thin wrapper around ``tqdm`` (:func:`progress`) so every step reports progress the same
way: to stderr, and not at all when disabled.

Whether an index shows bars is decided here, once for every method:

* ``show_progress=True`` forces the bars, ``show_progress=False`` turns them off;
* ``show_progress=None`` (the default of every index) shows them for a build or an insert of
  at least :data:`PROGRESS_MIN_PASSAGES` passages (a few minutes of CPU work with the default
  models) and hides them for smaller ones.

:class:`ProgressSetting` is the ``show_progress`` attribute of
:class:`~graphrag_integrations.core.index_base.BaseIndex`: it stores the user's setting and
reads as a plain ``bool`` resolved against the size of the batch being added, which
:func:`track_batch` records around each index's ``add_passages`` (the funnel of
``from_documents``, ``from_passages`` and ``insert``; ``BaseIndex`` wraps it, so methods
write nothing for it).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable, Iterator, Sized
from typing import Any, TypeVar, cast

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

#: Builds (and inserts) of at least this many passages show progress bars by default.
PROGRESS_MIN_PASSAGES = 300

_SETTING = "_show_progress_setting"
_BATCH = "_progress_batch"


def auto_progress(setting: bool | None, n_passages: int) -> bool:
    """Resolve a ``show_progress`` setting for a batch of ``n_passages`` passages.

    Parameters
    ----------
    setting : bool or None
        ``True`` / ``False`` force the bars on / off; ``None`` decides by size.
    n_passages : int
        Passages being added.

    Returns
    -------
    bool
        Whether to show progress bars.

    Examples
    --------
    >>> auto_progress(None, 10), auto_progress(None, PROGRESS_MIN_PASSAGES)
    (False, True)
    >>> auto_progress(True, 1), auto_progress(False, 10_000)
    (True, False)
    """
    if setting is not None:
        return setting
    return n_passages >= PROGRESS_MIN_PASSAGES


class ProgressSetting:
    """Descriptor: ``index.show_progress`` stores ``True | False | None``, reads as a ``bool``.

    Reading resolves the stored setting with :func:`auto_progress` against the size of the
    batch an instance is adding (recorded by :func:`track_batch`; 0 outside a build). The
    stored setting itself is :meth:`setting_of`.

    Examples
    --------
    >>> class Index:
    ...     show_progress = ProgressSetting()
    ...     @track_batch
    ...     def add_passages(self, passages):
    ...         return self.show_progress
    >>> index = Index()
    >>> index.show_progress = None
    >>> index.add_passages(["p"] * 3), index.add_passages(["p"] * PROGRESS_MIN_PASSAGES)
    (False, True)
    >>> index.show_progress = True
    >>> index.add_passages(["p"]), ProgressSetting.setting_of(index)
    (True, True)
    """

    def __get__(self, obj: object, owner: type | None = None) -> bool:
        if obj is None:
            return False
        setting = ProgressSetting.setting_of(obj)
        return auto_progress(setting, int(getattr(obj, _BATCH, 0)))

    def __set__(self, obj: object, value: bool | None) -> None:
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"show_progress must be True, False or None, got {value!r}")
        obj.__dict__[_SETTING] = value

    @staticmethod
    def setting_of(obj: object) -> bool | None:
        """The setting stored on ``obj`` (``None``: decide by batch size)."""
        return cast("bool | None", getattr(obj, "__dict__", {}).get(_SETTING))


def track_batch(method: F) -> F:
    """Decorator: record ``len(passages)`` (the first argument) while ``method`` runs.

    What :class:`ProgressSetting` resolves ``show_progress=None`` against; nested calls keep
    the outer (larger) batch. Mutations of an index are serialised by its write lock, so one
    instance attribute is enough (and worker threads of the build see it).
    """
    if getattr(method, "__progress_tracked__", False):
        return method

    @functools.wraps(method)
    def wrapped(self: Any, passages: Any = (), *args: Any, **kwargs: Any) -> Any:
        before = int(self.__dict__.get(_BATCH, 0))
        size = len(passages) if isinstance(passages, Sized) else 0
        self.__dict__[_BATCH] = max(before, size)
        try:
            return method(self, passages, *args, **kwargs)
        finally:
            self.__dict__[_BATCH] = before

    wrapped.__progress_tracked__ = True  # type: ignore[attr-defined]
    return cast(F, wrapped)


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
