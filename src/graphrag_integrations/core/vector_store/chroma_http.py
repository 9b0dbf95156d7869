"""Timeouts and bounded retries for a Chroma server over HTTP.

``chromadb.HttpClient`` waits for ever (its ``httpx`` session has no timeout) and raises
whatever ``httpx`` raised, once. A client made here (what
:class:`~graphrag_integrations.core.vector_store.chroma.ChromaVectorIndex` and
:class:`~graphrag_integrations.core.vector_store.chroma_collections.ChromaVectors` make for
``host=``) instead:

* checks the server first with one ``heartbeat`` under the same timeouts and retries, so a
  dead, silent or frozen server fails at once with one line, not inside chromadb's set-up;
* sends every request of the client through :class:`RetryingTransport`: a connect timeout
  (:data:`DEFAULT_CONNECT_TIMEOUT_S`), a read timeout (:data:`DEFAULT_TIMEOUT_S`) and, for a
  transient error (a timeout, a refused or dropped connection: :func:`is_transient`), up to
  ``retries`` more attempts (:data:`DEFAULT_RETRIES`) with exponential backoff
  (:func:`~graphrag_integrations.core.retries.retrying`), then one line: ``TimeoutError`` or
  ``ConnectionError`` naming the server and the request.

The package's Chroma writes can be sent twice: an ``add`` deletes the records of its ids
first, ``delete`` and collection metadata updates are idempotent, so a retried request is the
same request. A call fails after at most ``(retries + 1) * timeout`` seconds plus the backoff.

The transport is installed on the ``httpx`` session of the chromadb client
(``client._server._session``, chromadb's own attribute: checked, and a warning without
timeouts where a chromadb version has none).

Examples
--------
>>> settings = HTTPSettings(timeout_s=5, connect_timeout_s=1, retries=0)
>>> settings.server("127.0.0.1", 8000).name
'Chroma server at 127.0.0.1:8000'
>>> HTTPSettings(retries=-1)
Traceback (most recent call last):
...
ValueError: Chroma HTTP retries must be >= 0, got -1
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from graphrag_integrations.core.retries import Server, retrying

logger = logging.getLogger(__name__)

#: Longest one request may wait for its answer (seconds).
DEFAULT_TIMEOUT_S = 60.0
#: Longest a connection may take to open (seconds).
DEFAULT_CONNECT_TIMEOUT_S = 5.0
#: Attempts after the first for a request that met a transient error.
DEFAULT_RETRIES = 2
_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def is_transient(error: BaseException) -> bool:
    """Whether a retry may help: a timeout, a refused, reset or dropped connection.

    >>> is_transient(httpx.ConnectError("refused")), is_transient(ValueError("bad id"))
    (True, False)
    """
    return isinstance(
        error, (httpx.NetworkError, httpx.TimeoutException, httpx.RemoteProtocolError, OSError)
    )


def _timed_out(error: BaseException) -> bool:
    return isinstance(error, (httpx.TimeoutException, TimeoutError))


@dataclass(frozen=True)
class HTTPSettings:
    """Timeouts and retries of a Chroma server client (see the module notes).

    Parameters
    ----------
    timeout_s : float
        Read (and write) timeout of one request, seconds.
    connect_timeout_s : float
        Connect timeout, seconds.
    retries : int
        Attempts after the first for a transient error.
    """

    timeout_s: float = DEFAULT_TIMEOUT_S
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES

    def __post_init__(self) -> None:
        for name in ("timeout_s", "connect_timeout_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"Chroma HTTP {name} must be a number > 0, got {value!r}")
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"Chroma HTTP retries must be >= 0, got {self.retries!r}")

    def server(self, host: str, port: int) -> Server:
        """The :class:`~graphrag_integrations.core.retries.Server` of ``host:port``."""
        return Server(
            f"Chroma server at {host}:{port}",
            timeout_s=float(self.timeout_s),
            retries=self.retries,
            transient=is_transient,
            timed_out=_timed_out,
            timeout_hint="raise timeout= of ChromaVectors / ChromaVectorIndex for longer calls",
        )

    def timeouts(self) -> dict[str, float]:
        """The ``httpx`` timeout extension of a request."""
        read = float(self.timeout_s)
        return {"connect": float(self.connect_timeout_s), "read": read, "write": read, "pool": read}


class RetryingTransport(httpx.BaseTransport):
    """An ``httpx`` transport sending each request through ``inner`` with the timeouts of
    ``settings`` and bounded retries (module notes); the answer's body is read inside the
    attempt, so a connection dropped half-way through it is retried too."""

    def __init__(
        self, inner: httpx.BaseTransport, settings: HTTPSettings, host: str, port: int
    ) -> None:
        self.inner = inner
        self.settings = settings
        self.target = settings.server(host, port)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.extensions = {**request.extensions, "timeout": self.settings.timeouts()}
        return retrying(self.target, lambda: self._attempt(request), _what(request))

    def _attempt(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        try:
            response.read()
        except BaseException:
            response.close()
            raise
        return response

    def close(self) -> None:
        self.inner.close()


def _what(request: httpx.Request) -> str:
    """``METHOD`` and the last path segment that is not an id, of a request.

    >>> _what(httpx.Request("POST", "http://h/api/v2/collections/0c3e0d5e-1b6e-4f7e-9d2a-1f2e3d4c5b6a/add"))
    'POST add'
    >>> _what(httpx.Request("PUT", "http://h/api/v2/collections/0c3e0d5e-1b6e-4f7e-9d2a-1f2e3d4c5b6a"))
    'PUT collections'
    """
    parts = [p for p in request.url.path.split("/") if p and not _ID.fullmatch(p)]
    return f"{request.method} {parts[-1] if parts else '/'}"


def http_client(
    host: str,
    port: int,
    ssl: bool,
    headers: Mapping[str, str] | None,
    settings: HTTPSettings,
    chroma_settings: Any,
) -> Any:
    """A ``chromadb.HttpClient`` of ``host:port`` with the timeouts and retries of
    ``settings`` (module notes); ``chroma_settings`` are chromadb's ``Settings``.

    Raises
    ------
    TimeoutError, ConnectionError
        One line, when the server's heartbeat fails after the retries.
    """
    import chromadb

    scheme = "https" if ssl else "http"
    api_path = getattr(chroma_settings, "chroma_server_api_default_path", None) or "/api/v2"
    api_path = str(getattr(api_path, "value", api_path))  # an enum in chromadb 1.x
    heartbeat = f"{scheme}://{host}:{port}{api_path.rstrip('/')}/heartbeat"
    transport = RetryingTransport(httpx.HTTPTransport(), settings, host, port)
    with httpx.Client(transport=transport, headers=dict(headers or {})) as probe:
        probe.get(heartbeat)
    client = chromadb.HttpClient(
        host=host, port=port, ssl=ssl, headers=dict(headers or {}), settings=chroma_settings
    )
    install(client, settings, host, port)
    return client


def install(client: Any, settings: HTTPSettings, host: str, port: int) -> bool:
    """Send every request of the chromadb HTTP ``client`` through :class:`RetryingTransport`;
    ``False`` (logged) when the client has no ``httpx`` session where chromadb keeps it."""
    session = getattr(getattr(client, "_server", None), "_session", None)
    if not isinstance(session, httpx.Client) or not hasattr(session, "_transport"):
        logger.warning(
            "chromadb's HTTP client has no httpx session at client._server._session: requests "
            "to %s:%s have no timeout and no retries",
            host,
            port,
        )
        return False
    if isinstance(session._transport, RetryingTransport):
        return True
    session._transport = RetryingTransport(session._transport, settings, host, port)
    mounts = getattr(session, "_mounts", {})
    for pattern, mounted in list(mounts.items()):
        if mounted is not None and not isinstance(mounted, RetryingTransport):
            mounts[pattern] = RetryingTransport(mounted, settings, host, port)
    return True
