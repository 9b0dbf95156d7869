"""What a retry of a FalkorDB call needs: the transient errors, and the server to name.

Every call the package makes to a FalkorDB server runs as
``retrying(location.server, call, what)``: the package's
:func:`~graphrag_integrations.core.retries.retrying` (module notes there: bounded retries with
exponential backoff, then one line) against the server of a
:class:`~graphrag_integrations.core.graph.falkordb_connection.FalkorDBLocation`. A call
that meets a *transient* error (:func:`is_transient`: a socket timeout, a refused or dropped
connection, a server still loading its data after a restart) is retried up to the location's
``retries`` times, then raised as one line: the builtin ``TimeoutError`` when the server did
not answer in time, else ``ConnectionError``, naming the server (never a password), what was
being done and the client's own message. Any other error (a Cypher error, a lost graph) is
raised at once.

With the location's read timeout ``T`` and ``R`` retries a call gives up after at most
``(R + 1) * T`` seconds plus the backoff (``< R * MAX_BACKOFF_S``).

Examples
--------
>>> from graphrag_integrations.core.graph.falkordb_connection import parse_falkordb_url
>>> from graphrag_integrations.core.retries import retrying
>>> where = parse_falkordb_url("falkordb://127.0.0.1:1/g?retries=1")
>>> def silent() -> None:
...     raise TimeoutError("timed out")
>>> retrying(where.server, silent, "query", backoff_s=0.0)
Traceback (most recent call last):
...
TimeoutError: FalkorDB at 127.0.0.1:1 (graph g): query: no answer within 60 s, 2 attempts \
(TimeoutError: timed out; raise ?timeout= in the URL for longer queries)
"""

from __future__ import annotations

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


def timed_out(error: BaseException) -> bool:
    """Whether ``error`` is a timeout: the builtin one, or redis's."""
    return isinstance(error, TimeoutError) or type(error).__name__ in _TIMEOUTS
