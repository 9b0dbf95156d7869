"""Where a FalkorDB graph lives: ``falkordb://`` URLs, and connecting to the server.

A graph in FalkorDB is named by a URL
``falkordb://[USER[:PASSWORD]@]HOST[:PORT]/GRAPH[?timeout=S&connect_timeout=S&retries=N]``
(port 6379 by default). :func:`parse_falkordb_url` reads it into a :class:`FalkorDBLocation`;
what is saved next to an index (:meth:`FalkorDBLocation.pointer`) never holds the credentials:
a password comes from the URL or from ``FALKORDB_PASSWORD`` at connection time.
:func:`connect` opens the ``falkordb`` client (the ``falkordb`` extra), checking the server
answers, with one-line errors when the client is missing or the server is unreachable.

**No call waits forever.** Every socket has a connect timeout (``connect_timeout``, default
:data:`DEFAULT_CONNECT_TIMEOUT_S` s) and a read timeout (``timeout``, default
:data:`DEFAULT_TIMEOUT_S` s: the longest one query may take); a call that meets a transient
error (timeout, refused or dropped connection, a server still loading its data) is retried
``retries`` times (default :data:`DEFAULT_RETRIES`) with exponential backoff
(:mod:`~graphrag_integrations.core.graph.falkordb_retry`), then fails with one line
(``TimeoutError`` / ``ConnectionError``). The graph's writes are idempotent (``MERGE``, ``SET``,
provenance added once), so a retried write is the same write.

Examples
--------
>>> loc = parse_falkordb_url("falkordb://alice:secret@127.0.0.1:6390/papers")
>>> loc.host, loc.port, loc.graph, loc.username
('127.0.0.1', 6390, 'papers', 'alice')
>>> loc.url  # no password
'falkordb://alice@127.0.0.1:6390/papers'
>>> sorted(loc.pointer())
['graph', 'host', 'port']
>>> parse_falkordb_url("falkordb://db.example/g").port
6379
>>> slow = parse_falkordb_url("falkordb://127.0.0.1/g?timeout=120&retries=0")
>>> slow.timeout_s, slow.connect_timeout_s, slow.retries, slow.url
(120.0, 5.0, 0, 'falkordb://127.0.0.1:6379/g?timeout=120&retries=0')
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from graphrag_integrations.core.graph.falkordb_retry import is_transient, timed_out
from graphrag_integrations.core.retries import Server, retrying
from graphrag_integrations.errors import InvalidArgumentError

SCHEME = "falkordb"
DEFAULT_PORT = 6379
PASSWORD_ENV = "FALKORDB_PASSWORD"
#: Seconds one query may take before it fails (``?timeout=``).
DEFAULT_TIMEOUT_S = 60.0
#: Seconds to open a connection (``?connect_timeout=``).
DEFAULT_CONNECT_TIMEOUT_S = 5.0
#: Retries of a call that met a transient error (``?retries=``).
DEFAULT_RETRIES = 2
_OPTIONS = {"timeout": "timeout_s", "connect_timeout": "connect_timeout_s", "retries": "retries"}
# FalkorDB graph names are Redis keys; keep them to what is safe in a URL path and a file
_GRAPH_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,200}$")


@dataclass(frozen=True)
class FalkorDBLocation:
    """A FalkorDB server and a graph name on it (see :func:`parse_falkordb_url`)."""

    host: str
    port: int
    graph: str
    username: str | None = None
    password: str | None = field(default=None, repr=False, compare=False)
    #: Seconds one query may take (socket read timeout).
    timeout_s: float = field(default=DEFAULT_TIMEOUT_S, compare=False)
    #: Seconds to open a connection.
    connect_timeout_s: float = field(default=DEFAULT_CONNECT_TIMEOUT_S, compare=False)
    #: Retries of a call that met a transient error.
    retries: int = field(default=DEFAULT_RETRIES, compare=False)

    @property
    def url(self) -> str:
        """The URL without the password (with the connection options that are not defaults)."""
        user = f"{self.username}@" if self.username else ""
        options = [
            f"{name}={_shown(getattr(self, attr))}"
            for name, attr in _OPTIONS.items()
            if getattr(self, attr) != getattr(FalkorDBLocation, attr)
        ]
        query = "?" + "&".join(options) if options else ""
        return f"{SCHEME}://{user}{self.host}:{self.port}/{self.graph}{query}"

    def pointer(self) -> dict[str, Any]:
        """What may be written to disk: host, port and graph name (no credentials)."""
        return {"host": self.host, "port": self.port, "graph": self.graph}

    def with_graph(self, graph: str) -> FalkorDBLocation:
        """The same server, another graph name."""
        return replace(self, graph=_check_graph(graph))

    @property
    def server(self) -> Server:
        """What :func:`~graphrag_integrations.core.retries.retrying` retries a call to this
        server against: the transient errors of
        :mod:`~graphrag_integrations.core.graph.falkordb_retry`, no password in the name."""
        return Server(
            f"FalkorDB at {self.host}:{self.port} (graph {self.graph})",
            timeout_s=self.timeout_s,
            retries=self.retries,
            transient=is_transient,
            timed_out=timed_out,
            timeout_hint="raise ?timeout= in the URL for longer queries",
        )


def is_falkordb_url(value: object) -> bool:
    """Whether ``value`` is a string starting with ``falkordb://``.

    >>> is_falkordb_url("falkordb://h/g"), is_falkordb_url("graph.json")
    (True, False)
    """
    return isinstance(value, str) and value.lower().startswith(f"{SCHEME}://")


def _check_graph(graph: str) -> str:
    if not _GRAPH_NAME.match(graph):
        raise InvalidArgumentError(
            f"FalkorDB graph name {graph!r}: use 1-200 letters, digits, '_', '-' or '.'"
        )
    return graph


def parse_falkordb_url(url: str) -> FalkorDBLocation:
    """Read ``falkordb://[USER[:PASSWORD]@]HOST[:PORT]/GRAPH``.

    Raises
    ------
    InvalidArgumentError
        Another scheme, no host, a bad port, or no / a bad graph name (one line, the URL shown
        without its password).
    """
    if not is_falkordb_url(url):
        raise InvalidArgumentError(
            f"a graph store URL looks like falkordb://HOST:PORT/GRAPH, got {url!r}"
        )
    parts = urlsplit(url)
    shown = parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1]).geturl()
    if not parts.hostname:
        raise InvalidArgumentError(f"{shown}: no host (falkordb://HOST:PORT/GRAPH)")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise InvalidArgumentError(f"{shown}: the port is not a number in 1-65535") from None
    graph = unquote(parts.path.lstrip("/"))
    if not graph:
        raise InvalidArgumentError(f"{shown}: no graph name (falkordb://HOST:PORT/GRAPH)")
    if parts.fragment:
        raise InvalidArgumentError(f"{shown}: a graph store URL takes no '#' part")
    try:
        _check_graph(graph)
        options = _connection_options(parts.query)
    except InvalidArgumentError as error:
        raise InvalidArgumentError(f"{shown}: {error}") from None
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    return FalkorDBLocation(parts.hostname, port, graph, username, password, **options)


def _shown(value: float) -> str:
    """A number as the URL shows it (``120.0`` as ``120``)."""
    return str(int(value)) if float(value).is_integer() else str(value)


def _connection_options(query: str) -> dict[str, Any]:
    """The ``?timeout=&connect_timeout=&retries=`` options of a URL (``InvalidArgumentError``
    for another key or a bad value)."""
    options: dict[str, Any] = {}
    for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
        if key not in _OPTIONS:
            raise InvalidArgumentError(
                f"unknown option {key!r} (a graph store URL takes {', '.join(_OPTIONS)})"
            )
        try:
            number = int(value) if key == "retries" else float(value)
        except ValueError:
            number = -1
        if number < 0 or (key != "retries" and not 0 < number < 1e6):
            kind = "an int >= 0" if key == "retries" else "a number of seconds > 0"
            raise InvalidArgumentError(f"option {key}={value!r}: use {kind}")
        options[_OPTIONS[key]] = number
    return options


def location_from_pointer(pointer: Any, *, source: str = "pointer") -> FalkorDBLocation:
    """The location a :meth:`FalkorDBLocation.pointer` dict names (``InvalidArgumentError``
    when it lacks a field)."""
    try:
        host, port, graph = str(pointer["host"]), int(pointer["port"]), str(pointer["graph"])
    except (KeyError, TypeError, ValueError):
        raise InvalidArgumentError(
            f"{source}: not a FalkorDB pointer (host, port, graph)"
        ) from None
    return FalkorDBLocation(host, port, _check_graph(graph))


def with_options_of(location: FalkorDBLocation, source: FalkorDBLocation) -> FalkorDBLocation:
    """``location`` with the connection options (timeouts, retries) of ``source``."""
    return replace(
        location,
        timeout_s=source.timeout_s,
        connect_timeout_s=source.connect_timeout_s,
        retries=source.retries,
    )


def connect(
    location: FalkorDBLocation,
    *,
    timeout_s: float | None = None,
    on_connect: Callable[[Any], None] | None = None,
) -> Any:
    """A ``falkordb.FalkorDB`` client for ``location``'s server, checked with ``PING``.

    The password is the URL's, else ``$FALKORDB_PASSWORD``. Sockets get the location's read
    and connect timeouts (``timeout_s`` overrides the connect timeout); the client itself
    does not retry: callers retry through
    :func:`~graphrag_integrations.core.retries.retrying` (the ``PING`` here
    does).

    Parameters
    ----------
    location : FalkorDBLocation
        The server (and its connection options).
    timeout_s : float, optional
        Connect timeout instead of the location's.
    on_connect : callable, optional
        ``on_connect(connection)`` runs on every new connection of the client (the first and
        every reconnect) after its handshake, before any command is sent on it: what
        :class:`~graphrag_integrations.core.graph.falkordb_graph.FalkorDBGraph` checks its
        graph with. What it raises is raised by the call that connected.

    Raises
    ------
    ImportError
        The ``falkordb`` client is not installed (the message says how to install it).
    ConnectionError, TimeoutError
        The server does not answer (one line naming the server, never the password).
    """
    try:
        from falkordb import FalkorDB
    except ImportError:
        raise ImportError(
            "a FalkorDB graph store needs the falkordb client: "
            "pip install 'graphrag-integrations[falkordb]'"
        ) from None
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    password = location.password or os.environ.get(PASSWORD_ENV) or None

    def handshake(connection: Any) -> None:
        connection.on_connect()
        if on_connect is not None:
            on_connect(connection)

    def make() -> Any:  # the client talks to the server as it is made (INFO), then PING
        client = FalkorDB(
            host=location.host,
            port=location.port,
            username=location.username,
            password=password,
            socket_timeout=location.timeout_s,
            socket_connect_timeout=location.connect_timeout_s if timeout_s is None else timeout_s,
            retry=Retry(NoBackoff(), 0),  # ours: bounded, with backoff (falkordb_retry)
            connect_func=handshake,
        )
        client.connection.ping()
        return client

    return retrying(location.server, make, "does not answer")
