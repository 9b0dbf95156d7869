"""Progress bars for long steps (indexing, embedding, parsing, LLM calls).

One thin wrapper around ``tqdm`` (:func:`progress`) so every step reports progress the same
way: to stderr, and not at all when disabled. LLM work (query generation, knowledge-unit
extraction, supervision refinement) reports through :class:`LLMProgress` instead: calls done /
total, elapsed time, ETA and tokens so far / estimated total, as a ``tqdm`` bar on a terminal
and as plain lines (every :data:`LOG_INTERVAL` seconds or :data:`LOG_FRACTION` of the work)
when stderr is a file or a pipe.

Whether an index shows bars is decided here, once for every method:

* ``show_progress=True`` forces the bars, ``show_progress=False`` turns them off;
* ``show_progress=None`` (the default of every index) shows them for a build or an insert of
  at least :data:`PROGRESS_MIN_PASSAGES` passages (a few minutes of CPU work with the default
  models) and hides them for smaller ones - except for LLM work, which shows its progress from
  the first call whatever the corpus size (a local model can spend minutes on one passage):
  :meth:`ProgressSetting.llm`.

:class:`ProgressSetting` is the ``show_progress`` attribute of
:class:`~graphrag_integrations.core.index.base.BaseIndex`: it stores the user's setting and
reads as a plain ``bool`` resolved against the size of the batch being added, which
:func:`track_batch` records around each index's ``add_passages`` (the funnel of
``from_documents``, ``from_passages`` and ``insert``; ``BaseIndex`` wraps it, so methods
write nothing for it).
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from typing import IO, Any, TypeVar, cast

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

    @staticmethod
    def llm(obj: object) -> bool:
        """Whether LLM work of ``obj`` shows progress: always, unless ``show_progress=False``.

        >>> class Index:
        ...     show_progress = ProgressSetting()
        >>> index = Index()
        >>> index.show_progress = None
        >>> ProgressSetting.llm(index), index.show_progress
        (True, False)
        >>> index.show_progress = False
        >>> ProgressSetting.llm(index)
        False
        """
        return ProgressSetting.setting_of(obj) is not False


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


#: Without a terminal, :class:`LLMProgress` writes a line at least every this many seconds...
LOG_INTERVAL = 30.0
#: ... and every time this fraction of the work is done.
LOG_FRACTION = 0.1


def format_count(n: float) -> str:
    """A token count with a unit: ``"950"``, ``"12.3k"``, ``"475k"``, ``"1.9M"`` (tqdm's
    ``format_sizeof`` gives ``"42.0"`` and ``"5.00k"``: three digits of a size, not a count).

    Examples
    --------
    >>> format_count(950), format_count(12_345), format_count(474_977), format_count(1.9e6)
    ('950', '12.3k', '475k', '1.9M')
    """
    if n < 1000:
        return f"{n:.0f}"
    if n < 100_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n / 1000:.0f}k"
    return f"{n / 1e6:.1f}M"


class LLMProgress:
    """Progress of a batch of LLM work: done / total, elapsed, ETA, tokens so far / estimate.

    Shown from the start (``0/total``, before the first call returns), whatever the size of
    the batch. On a terminal it is a ``tqdm`` bar (elapsed and ETA by ``tqdm``, tokens in the
    postfix), redrawn every second; otherwise (a log file, a pipe, a notebook's captured
    stderr) plain lines, one at the start, one after the first item (the first measured ETA),
    then one every :data:`LOG_INTERVAL` seconds (also while no item finishes: a heartbeat
    thread, :meth:`beat`) or :data:`LOG_FRACTION` of the work, and one at the end.
    Thread-safe: :meth:`update` may be called from worker threads.

    The token total is estimated from the tokens used per item so far once an item is done
    (before that: ``estimated_tokens``, if given).

    Parameters
    ----------
    total : int
        Items to do (calls, chunks, questions: ``unit``).
    desc : str
        Label of the work (e.g. ``"Doc2Query"``).
    enabled : bool
        ``False``: shows nothing.
    unit : str
        What an item is (``"call"``, ``"chunk"``...), pluralised with ``s``.
    tokens : callable, optional
        Returns the tokens used so far by this work (e.g. from the client's ``usage``).
    estimated_tokens : int, optional
        Token total expected before any item is done.
    header : str, optional
        A line written before the bar (e.g. the cost estimate of the work).
    file : text stream, optional
        Where to write (default: ``sys.stderr`` at creation).
    tty : bool, optional
        Force the bar (``True``) or the lines (``False``); default: ``file.isatty()``.
    interval : float
        Seconds between lines without a terminal.
    clock : callable
        Monotonic seconds (tests pass a fake clock).

    Examples
    --------
    >>> import io
    >>> out, used, now = io.StringIO(), [0], [0.0]
    >>> with LLMProgress(2, "Doc2Query", tokens=lambda: used[0], file=out,
    ...                  clock=lambda: now[0]) as bar:
    ...     used[0], now[0] = 600, 40.0
    ...     bar.update()
    ...     used[0], now[0] = 1300, 85.0
    ...     bar.update()
    >>> print(out.getvalue().strip())
    Doc2Query: 0/2 calls (0%), elapsed 00:00
    Doc2Query: 1/2 calls (50%), elapsed 00:40, ETA 00:40, tokens 600/~1.2k
    Doc2Query: 2/2 calls (100%), elapsed 01:25, tokens 1.3k
    """

    def __init__(
        self,
        total: int,
        desc: str,
        *,
        enabled: bool = True,
        unit: str = "call",
        tokens: Callable[[], int] | None = None,
        estimated_tokens: int | None = None,
        header: str | None = None,
        file: IO[str] | None = None,
        tty: bool | None = None,
        interval: float = LOG_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = max(0, int(total))
        self.desc = desc
        self.enabled = enabled
        self.unit = unit
        self.done = 0
        self._tokens = tokens
        self._tokens0 = tokens() if tokens is not None else 0
        self.estimated_tokens = estimated_tokens
        self._file = file if file is not None else sys.stderr
        self._clock = clock
        self._start = clock()
        self._interval = interval
        self._last_line = self._start
        self._last_fraction = 0
        self._lock = threading.Lock()
        self._bar: Any = None
        self._closed = False
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None
        if not enabled:
            return
        if tty is None:
            isatty = getattr(self._file, "isatty", None)
            tty = bool(isatty()) if callable(isatty) else False
        if header:
            self._file.write(header + "\n")
            self._file.flush()
        if tty:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self.total, desc=desc, unit=unit, file=self._file, dynamic_ncols=True
            )
            self._bar.set_postfix_str(self._token_text(), refresh=True)
        else:
            self._write_line(final=False)
        self._heartbeat = threading.Thread(target=self._beat, name="llm-progress", daemon=True)
        self._heartbeat.start()

    def _beat(self) -> None:
        """The heartbeat thread: :meth:`beat` every second (bar) or interval (lines)."""
        period = 1.0 if self._bar is not None else self._interval
        while not self._stop.wait(min(period, threading.TIMEOUT_MAX)):
            self.beat()

    def beat(self) -> None:
        """Between updates: redraw the bar (the elapsed time moves on), or write a line when
        none was written for :data:`LOG_INTERVAL` seconds, so a long first call or batch is not
        silent. Called by a background thread while the work runs."""
        with self._lock:
            if self._closed or not self.enabled:
                return
            if self._bar is not None:
                self._bar.refresh()
            elif self._clock() - self._last_line >= self._interval:
                self._write_line(final=False)

    @property
    def tokens(self) -> int:
        """Tokens used by this work so far."""
        return self._tokens() - self._tokens0 if self._tokens is not None else 0

    def token_estimate(self) -> int | None:
        """Expected token total: measured per item once one is done, else the given estimate."""
        if self.done and self.tokens:
            return round(self.tokens / self.done * self.total)
        return self.estimated_tokens

    def eta(self) -> float | None:
        """Seconds left at the rate so far (``None`` before the first item)."""
        if not self.done:
            return None
        elapsed = self._clock() - self._start
        return elapsed / self.done * max(0, self.total - self.done)

    def _token_text(self) -> str:
        if self._tokens is None:
            return ""
        estimate = self.token_estimate()
        if self.done >= self.total or estimate is None:
            return f"tokens {format_count(self.tokens)}" if self.done else ""
        return f"tokens {format_count(self.tokens)}/~{format_count(estimate)}"

    def status(self) -> str:
        """One line: ``desc: done/total units (pct), elapsed, ETA, tokens so far/~estimate``
        (times as the ``tqdm`` bar shows them, ``[H:]MM:SS``)."""
        from tqdm import tqdm

        pct = 100 * self.done // self.total if self.total else 100
        parts = [
            f"{self.desc}: {self.done}/{self.total} {self.unit}s ({pct}%)",
            f"elapsed {tqdm.format_interval(round(self._clock() - self._start))}",
        ]
        eta = self.eta()
        if eta is not None and self.done < self.total:
            parts.append(f"ETA {tqdm.format_interval(round(eta))}")
        tokens = self._token_text()
        if tokens:
            parts.append(tokens)
        return ", ".join(parts)

    def _step(self) -> int:
        """How many :data:`LOG_FRACTION` steps of the work are done (integer arithmetic)."""
        return self.done * round(1 / LOG_FRACTION) // self.total if self.total else 0

    def _write_line(self, *, final: bool) -> None:
        self._file.write(self.status() + "\n")
        self._file.flush()
        self._last_line = self._clock()
        if not final:
            self._last_fraction = self._step()

    def update(self, n: int = 1) -> None:
        """Record ``n`` more items done."""
        if n <= 0:
            return
        with self._lock:
            self.done = min(self.total, self.done + n) if self.total else self.done + n
            if not self.enabled or self._closed:
                return
            if self._bar is not None:
                self._bar.update(n)
                self._bar.set_postfix_str(self._token_text(), refresh=False)
                return
            if self.done >= self.total:
                return  # the final line is written by close()
            fraction = self._step()
            first = self.done == n
            due = self._clock() - self._last_line >= self._interval
            if first or due or fraction > self._last_fraction:
                self._write_line(final=False)

    def close(self) -> None:
        """Finish: stop the heartbeat, close the bar or write the last line."""
        self._stop.set()
        if self._heartbeat is not None and self._heartbeat is not threading.current_thread():
            self._heartbeat.join()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if not self.enabled:
                return
            if self._bar is not None:
                self._bar.set_postfix_str(self._token_text(), refresh=False)
                self._bar.close()
            else:
                self._write_line(final=True)

    def __enter__(self) -> LLMProgress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def llm_progress(
    items: Iterable[T],
    desc: str,
    *,
    total: int | None = None,
    enabled: bool = True,
    unit: str = "call",
    tokens: Callable[[], int] | None = None,
    estimated_tokens: int | None = None,
    header: str | None = None,
) -> Iterator[T]:
    """Iterate over ``items`` (one LLM-backed step each) with an :class:`LLMProgress`.

    Examples
    --------
    >>> list(llm_progress(["q1", "q2"], "Refinement", unit="question", enabled=False))
    ['q1', 'q2']
    """
    items = list(items) if total is None and not isinstance(items, Sized) else items
    size = total if total is not None else len(cast("Sized", items))
    with LLMProgress(
        size,
        desc,
        enabled=enabled,
        unit=unit,
        tokens=tokens,
        estimated_tokens=estimated_tokens,
        header=header,
    ) as bar:
        for item in items:
            yield item
            bar.update()
