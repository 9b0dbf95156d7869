"""Bounded retries of FalkorDB calls, and their one-line errors.

Every call the package makes to a FalkorDB server goes through :func:`retrying` (the
package's :func:`~graphrag_integrations.core.retries.retrying` with FalkorDB's errors): a call
that meets a *transient* error (:func:`is_transient`: a socket timeout, a refused or dropped
connection, a server still loading its data after a restart) is retried up to the location's
``retries`` times with exponential backoff (``BACKOFF_S`` doubling, at most
``MAX_BACKOFF_S`` s of :mod:`~graphrag_integrations.core.retries`; tenacity), then raised as
one line: the builtin ``TimeoutError`` when the server did not answer in time, else
``ConnectionError``, naming the server (never a password), what was being done and the
client's own message. Any other error (a Cypher error, a lost graph) is raised at once.

With the location's read timeout ``T`` and ``R`` retries a call gives up after at most
``(R + 1) * T`` seconds plus the backoff (``< R * MAX_BACKOFF_S``).

Examples
--------
>>> from graphrag_integrations.core.graph.falkordb_connection import parse_falkordb_url
>>> where = parse_falkordb_url("falkordb://127.0.0.1:1/g?retries=1")
>>> calls = []
>>> def flaky() -> str:
...     calls.append(1)
...     if len(calls) == 1:
...         raise ConnectionResetError("reset by peer")
...     return "ok"
>>> retrying(where, flaky, "query", backoff_s=0.0), len(calls)
('ok', 2)
>>> def silent() -> None:
...     raise TimeoutError("timed out")
>>> retrying(where, silent, "query", backoff_s=0.0)
Traceback (most recent call last):
...
TimeoutError: FalkorDB at 127.0.0.1:1 (graph g): query: no answer within 60 s, 2 attempts \
(TimeoutError: timed out; raise ?timeout= in the URL for longer queries)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from graphrag_integrations.core import retries
from graphrag_integrations.core.retries import BACKOFF_S

T = TypeVar("T")


class FalkorDBLocation(Protocol):
    """What a retry needs of a
    :class:`~graphrag_integrations.core.graph.falkordb_connection.FalkorDBLocation`."""

    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def graph(self) -> str: ...
    @property
    def timeout_s(self) -> float: ...
    @property
    def retries(self) -> int: ...


# what redis raises when the server is away, slow or restarting (its own classes)
_TRANSIENT = frozenset({"ConnectionError", "TimeoutError", "BusyLoadingError"})
_TIMEOUTS = frozenset({"TimeoutError"})


def is_transient(error: BaseException) -> bool:
    """Whether ``error`` may go away on a retry: a socket error, or redis's connection,
    timeout or busy-loading errors.

    >>> is_transient(ConnectionRefusedError()), is_transient(ValueError("bad cypher"))
    (True, False)
    """
    return isinstance(error, OSError) or type(error).__name__ in _TRANSIENT


def _timed_out(error: BaseException) -> bool:
    return isinstance(error, TimeoutError) or type(error).__name__ in _TIMEOUTS


def _server(location: FalkorDBLocation) -> retries.Server:
    return retries.Server(
        f"FalkorDB at {location.host}:{location.port} (graph {location.graph})",
        timeout_s=location.timeout_s,
        retries=location.retries,
        transient=is_transient,
        timed_out=_timed_out,
        timeout_hint="raise ?timeout= in the URL for longer queries",
    )


def retrying(
    location: FalkorDBLocation,
    call: Callable[[], T],
    what: str,
    *,
    backoff_s: float = BACKOFF_S,
) -> T:
    """``call()``, retried on transient errors (module notes); ``what`` names it in errors.

    Raises
    ------
    TimeoutError, ConnectionError
        One line, once the retries are spent.
    """
    return retries.retrying(_server(location), call, what, backoff_s=backoff_s)
