"""Bounded retries of FalkorDB calls, and their one-line errors.

Every call the package makes to a FalkorDB server goes through :func:`retrying`: a call that
meets a *transient* error (:func:`is_transient`: a socket timeout, a refused or dropped
connection, a server still loading its data after a restart) is retried up to the location's
``retries`` times with exponential backoff (:data:`BACKOFF_S` doubling, at most
:data:`MAX_BACKOFF_S` s; `tenacity <https://tenacity.readthedocs.io>`_), then raised as one
line: the builtin ``TimeoutError`` when the server did not answer in time, else
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

import logging
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import tenacity

logger = logging.getLogger(__name__)

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


#: First wait before a retry (seconds); doubled at each next one.
BACKOFF_S = 0.2
#: Longest wait between two attempts (seconds).
MAX_BACKOFF_S = 2.0
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


def one_line(error: BaseException) -> str:
    """``Type: first line of the message``.

    >>> one_line(ValueError("a\\nb"))
    'ValueError: a'
    """
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


def network_error(
    location: FalkorDBLocation, error: BaseException, what: str, attempts: int
) -> OSError:
    """The one-line ``TimeoutError`` / ``ConnectionError`` for a transient ``error`` that
    outlived its retries."""
    where = f"FalkorDB at {location.host}:{location.port} (graph {location.graph}): {what}"
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if _timed_out(error):
        return TimeoutError(
            f"{where}: no answer within {location.timeout_s:g} s, {tries} ({one_line(error)}; "
            "raise ?timeout= in the URL for longer queries)"
        )
    return ConnectionError(f"{where}: connection failed, {tries} ({one_line(error)})")


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
    attempts = location.retries + 1
    retry: tenacity.Retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(attempts),
        wait=tenacity.wait_exponential(multiplier=backoff_s, max=MAX_BACKOFF_S),
        retry=tenacity.retry_if_exception(is_transient),
        before_sleep=_log_retry(location, what),
        reraise=True,
    )
    try:
        return retry(call)
    except Exception as error:
        if is_transient(error):
            raise network_error(location, error, what, attempts) from None
        raise


def _log_retry(location: FalkorDBLocation, what: str) -> Callable[[Any], None]:
    def log(state: Any) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        logger.info(
            "FalkorDB at %s:%d: %s failed (%s); retry %d of %d",
            location.host,
            location.port,
            what,
            one_line(error) if error is not None else "?",
            state.attempt_number,
            location.retries,
        )

    return log
