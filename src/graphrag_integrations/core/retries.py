"""Bounded retries of calls to a server (a graph database, a vector store over HTTP) and
their one-line errors.

:func:`retrying` runs a call; when it meets a *transient* error (what the caller's
``transient`` predicate accepts: a timeout, a refused or dropped connection...) the call is
tried again, up to ``retries`` times, with exponential backoff (:data:`BACKOFF_S` doubling, at
most :data:`MAX_BACKOFF_S` s; `tenacity <https://tenacity.readthedocs.io>`_). Once the retries
are spent the error is raised as one line (:func:`network_error`): the builtin
``TimeoutError`` when the server did not answer in time, else ``ConnectionError``, naming the
server (never a password), what was being done and the client's own message. Any other error
is raised at once, unchanged.

With a read timeout ``T`` and ``R`` retries a call gives up after at most ``(R + 1) * T``
seconds plus the backoff (``< R * MAX_BACKOFF_S``).

Examples
--------
>>> server = Server("Chroma server at 127.0.0.1:1", timeout_s=60.0, retries=1)
>>> calls = []
>>> def flaky() -> str:
...     calls.append(1)
...     if len(calls) == 1:
...         raise ConnectionResetError("reset by peer")
...     return "ok"
>>> retrying(server, flaky, "query", backoff_s=0.0), len(calls)
('ok', 2)
>>> def refused() -> None:
...     raise ConnectionRefusedError("refused")
>>> retrying(server, refused, "add", backoff_s=0.0)
Traceback (most recent call last):
...
ConnectionError: Chroma server at 127.0.0.1:1: add: connection failed, 2 attempts \
(ConnectionRefusedError: refused)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import tenacity

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: First wait before a retry (seconds); doubled at each next one.
BACKOFF_S = 0.2
#: Longest wait between two attempts (seconds).
MAX_BACKOFF_S = 2.0


def _socket_error(error: BaseException) -> bool:
    return isinstance(error, OSError)


def _builtin_timeout(error: BaseException) -> bool:
    return isinstance(error, TimeoutError)


@dataclass(frozen=True)
class Server:
    """What a retry needs to know of the server it calls.

    Attributes
    ----------
    name : str
        How errors and log lines name the server (``"FalkorDB at HOST:PORT (graph G)"``).
    timeout_s : float
        The read timeout of one attempt (seconds; named in the timeout error).
    retries : int
        How often a call that met a transient error is tried again.
    transient : callable
        ``transient(error)``: whether a retry may help (default: any ``OSError``).
    timed_out : callable
        ``timed_out(error)``: whether the error is a timeout (``TimeoutError``) rather than a
        connection failure (default: the builtin ``TimeoutError``).
    timeout_hint : str
        The end of the timeout error: how to allow longer calls.
    """

    name: str
    timeout_s: float
    retries: int
    transient: Callable[[BaseException], bool] = _socket_error
    timed_out: Callable[[BaseException], bool] = _builtin_timeout
    timeout_hint: str = "raise the timeout for longer calls"


def one_line(error: BaseException) -> str:
    """``Type: first line of the message``.

    >>> one_line(ValueError("a\\nb"))
    'ValueError: a'
    """
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


def network_error(server: Server, error: BaseException, what: str, attempts: int) -> OSError:
    """The one-line ``TimeoutError`` / ``ConnectionError`` for a transient ``error`` that
    outlived its retries."""
    where = f"{server.name}: {what}"
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if server.timed_out(error):
        return TimeoutError(
            f"{where}: no answer within {server.timeout_s:g} s, {tries} ({one_line(error)}; "
            f"{server.timeout_hint})"
        )
    return ConnectionError(f"{where}: connection failed, {tries} ({one_line(error)})")


def retrying(
    server: Server,
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
    attempts = server.retries + 1
    retry: tenacity.Retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(attempts),
        wait=tenacity.wait_exponential(multiplier=backoff_s, max=MAX_BACKOFF_S),
        retry=tenacity.retry_if_exception(server.transient),
        before_sleep=_log_retry(server, what),
        reraise=True,
    )
    try:
        return retry(call)
    except Exception as error:
        if server.transient(error):
            raise network_error(server, error, what, attempts) from None
        raise


def _log_retry(server: Server, what: str) -> Callable[[Any], None]:
    def log(state: Any) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        logger.info(
            "%s: %s failed (%s); retry %d of %d",
            server.name,
            what,
            one_line(error) if error is not None else "?",
            state.attempt_number,
            server.retries,
        )

    return log
