"""Where a FalkorDB graph lives: ``falkordb://`` URLs, and connecting to the server.

A graph in FalkorDB is named by a URL ``falkordb://[USER[:PASSWORD]@]HOST[:PORT]/GRAPH``
(port 6379 by default). :func:`parse_falkordb_url` reads it into a :class:`FalkorDBLocation`;
what is saved next to an index (:meth:`FalkorDBLocation.pointer`) never holds the credentials:
a password comes from the URL or from ``FALKORDB_PASSWORD`` at connection time.
:func:`connect` opens the ``falkordb`` client (the ``falkordb`` extra), checking the server
answers, with one-line errors when the client is missing or the server is unreachable.

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
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from graphrag_integrations.errors import InvalidArgumentError

SCHEME = "falkordb"
DEFAULT_PORT = 6379
PASSWORD_ENV = "FALKORDB_PASSWORD"
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

    @property
    def url(self) -> str:
        """The URL without the password."""
        user = f"{self.username}@" if self.username else ""
        return f"{SCHEME}://{user}{self.host}:{self.port}/{self.graph}"

    def pointer(self) -> dict[str, Any]:
        """What may be written to disk: host, port and graph name (no credentials)."""
        return {"host": self.host, "port": self.port, "graph": self.graph}

    def with_graph(self, graph: str) -> FalkorDBLocation:
        """The same server, another graph name."""
        return FalkorDBLocation(
            self.host, self.port, _check_graph(graph), self.username, self.password
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
    if parts.query or parts.fragment:
        raise InvalidArgumentError(f"{shown}: a graph store URL takes no '?' or '#' part")
    try:
        _check_graph(graph)
    except InvalidArgumentError as error:
        raise InvalidArgumentError(f"{shown}: {error}") from None
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    return FalkorDBLocation(parts.hostname, port, graph, username, password)


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


def connect(location: FalkorDBLocation, *, timeout_s: float = 10.0) -> Any:
    """A ``falkordb.FalkorDB`` client for ``location``'s server, checked with ``PING``.

    The password is the URL's, else ``$FALKORDB_PASSWORD``.

    Raises
    ------
    ImportError
        The ``falkordb`` client is not installed (the message says how to install it).
    ConnectionError
        The server does not answer (one line naming the server, never the password).
    """
    try:
        from falkordb import FalkorDB
    except ImportError:
        raise ImportError(
            "a FalkorDB graph store needs the falkordb client: "
            "pip install 'graphrag-integrations[falkordb]'"
        ) from None
    password = location.password or os.environ.get(PASSWORD_ENV) or None
    try:  # the client connects (and pings) as it is made
        client = FalkorDB(
            host=location.host,
            port=location.port,
            username=location.username,
            password=password,
            socket_timeout=None,
            socket_connect_timeout=timeout_s,
        )
        client.connection.ping()
    except Exception as error:  # redis raises several kinds; one line for all of them
        first = str(error).splitlines()[0] if str(error) else ""
        raise ConnectionError(
            f"FalkorDB at {location.host}:{location.port} does not answer "
            f"({type(error).__name__}: {first})"
        ) from None
    return client
