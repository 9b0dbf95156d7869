"""The MCP server of ``graphrag-integrations serve``, on the official ``mcp`` SDK (the
``[mcp]`` extra; imported inside the functions, so the package works without it).

:func:`build_server` makes a low-level ``mcp.server.lowlevel.Server`` whose tools are the
:class:`~graphrag_integrations.cli.mcp_tools.ToolSpec` records of the served indexes: each
call runs in a worker thread (calls run concurrently; an index's readers-writer lock lets
searches run side by side and holds them back only during a write), its result is the text
for the LLM plus the structured content, checked against the tool's output schema. A failed
call is an MCP tool error (``isError``) with a one-line message, and the server goes on.

Transports: :func:`run_stdio` (the client starts the server as a subprocess) and
:func:`run_http` (streamable HTTP at ``/mcp``; on a loopback address the SDK's DNS-rebinding
protection is on; with a token, every request needs ``Authorization: Bearer <token>``).
"""

from __future__ import annotations

import hmac
import logging
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO

from graphrag_integrations.cli.mcp_tools import ServedIndex, ToolResult, ToolSpec, check_tool_name
from graphrag_integrations.errors import GraphRAGError

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult, Tool
    from starlette.applications import Starlette
    from starlette.types import Receive, Scope, Send

logger = logging.getLogger(__name__)

#: The path of the streamable HTTP endpoint.
HTTP_PATH = "/mcp"
#: Host patterns the DNS-rebinding protection accepts on a loopback address.
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
#: Errors whose message is shown to the caller as it is (anything else is logged with its
#: traceback and reported as an internal error of that type).
_EXPECTED = (GraphRAGError, ValueError, TypeError, KeyError, LookupError)


def tool_specs(served: Sequence[ServedIndex]) -> dict[str, ToolSpec]:
    """Every tool of ``served`` by name.

    Raises
    ------
    GraphRAGError
        On an invalid name or two tools of one name (give each index a ``--name``).
    """
    specs: dict[str, ToolSpec] = {}
    for index in served:
        for spec in index.tools():
            check_tool_name(spec.name)
            if spec.name in specs:
                raise GraphRAGError(
                    f"two tools are named {spec.name!r}: give each index its own --name"
                )
            specs[spec.name] = spec
    return specs


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _tool(spec: ToolSpec) -> Tool:
    from mcp.types import Tool, ToolAnnotations

    hints = ToolAnnotations(
        readOnlyHint=spec.read_only,
        destructiveHint=spec.destructive,
        idempotentHint=True,
        openWorldHint=False,
    )
    return Tool(
        name=spec.name,
        description=spec.description,
        inputSchema=spec.input_schema,
        outputSchema=spec.output_schema,
        annotations=hints,
    )


def _error(message: str) -> CallToolResult:
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=message)], isError=True)


def run_call(spec: ToolSpec, arguments: dict[str, Any]) -> ToolResult | str:
    """Run one call of ``spec``: its result, or the one-line error message."""
    start = time.perf_counter()
    try:
        result = spec.run(arguments)
    except _EXPECTED as exc:
        logger.info("%s: %s", spec.name, exc)
        return _one_line(str(exc)) or type(exc).__name__
    except Exception as exc:  # a method's own failure: keep serving, keep the traceback
        logger.exception("%s failed", spec.name)
        return _one_line(f"internal error in {spec.name}: {type(exc).__name__}: {exc}")
    logger.info("%s: %.1f ms", spec.name, 1000 * (time.perf_counter() - start))
    return result


def build_server(served: Sequence[ServedIndex], name: str = "graphrag-integrations") -> Server:
    """The MCP server of ``served`` (see the module notes).

    Raises
    ------
    GraphRAGError
        On an invalid or a duplicate tool name.
    """
    import anyio.to_thread
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult, TextContent

    from graphrag_integrations import __version__

    specs = tool_specs(served)
    tools = [_tool(spec) for spec in specs.values()]
    server: Server = Server(
        name,
        version=__version__,
        instructions="Search tools over document indexes: call a search tool with a question; "
        "the passages come best first, with ids, scores, source metadata and a short "
        "explanation.",
    )

    async def list_tools() -> list[Tool]:
        return tools

    async def call_tool(tool: str, arguments: dict[str, Any]) -> CallToolResult:
        spec = specs.get(tool)
        if spec is None:
            return _error(f"unknown tool {tool!r}; this server has {', '.join(specs)}")
        result = await anyio.to_thread.run_sync(partial(run_call, spec, arguments))
        if isinstance(result, str):
            return _error(result)
        text = TextContent(type="text", text=result.text)
        return CallToolResult(content=[text], structuredContent=result.data)

    server.list_tools()(list_tools)  # type: ignore[no-untyped-call]
    server.call_tool(validate_input=False)(call_tool)  # type: ignore[no-untyped-call]
    return server


async def _serve_stdio(server: Server, stdout: BinaryIO) -> None:
    from io import TextIOWrapper

    import anyio
    from mcp.server.stdio import stdio_server

    out = anyio.wrap_file(TextIOWrapper(stdout, encoding="utf-8"))
    async with stdio_server(stdout=out) as (read, write):
        await server.run(read, write, server.create_initialization_options())


def run_stdio(server: Server, stdout: BinaryIO) -> None:
    """Serve over stdio until the client closes standard input; the messages go to
    ``stdout`` (see :func:`graphrag_integrations.cli.serve.protocol_stdout`)."""
    import anyio

    anyio.run(_serve_stdio, server, stdout)


class StaticTokenVerifier:
    """The SDK's ``TokenVerifier`` for one shared bearer token (compared in constant time)."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        """An access token for ``token`` if it is the server's, else ``None``."""
        from mcp.server.auth.provider import AccessToken

        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token=token, client_id="bearer", scopes=[])


class _Endpoint:
    """The ASGI app of the MCP endpoint: every request goes to the session manager."""

    def __init__(self, handle: Callable[[Scope, Receive, Send], Any]) -> None:
        self._handle = handle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._handle(scope, receive, send)


def http_app(server: Server, *, token: str | None, loopback_host: str | None) -> Starlette:
    """The streamable HTTP app (endpoint :data:`HTTP_PATH`) of ``server``.

    Parameters
    ----------
    token : str, optional
        When given, a request without ``Authorization: Bearer <token>`` gets 401.
    loopback_host : str, optional
        The loopback address the server is bound to: only ``Host`` / ``Origin`` headers of
        loopback names and this address pass (the SDK's DNS-rebinding protection). ``None``:
        bound elsewhere, no such check (the token protects the server).
    """
    from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware
    from starlette.routing import Route

    hosts: list[str] = []
    if loopback_host is not None:
        bound = f"[{loopback_host}]" if ":" in loopback_host else loopback_host
        hosts = list(dict.fromkeys([*_LOOPBACK_HOSTS, f"{bound}:*"]))
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=loopback_host is not None,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{host}" for host in hosts],
    )
    manager = StreamableHTTPSessionManager(app=server, security_settings=security)
    endpoint: Any = _Endpoint(manager.handle_request)
    middleware: list[Middleware] = []
    if token is not None:
        endpoint = RequireAuthMiddleware(endpoint, required_scopes=[])
        backend = BearerAuthBackend(StaticTokenVerifier(token))  # type: ignore[arg-type]
        middleware.append(Middleware(AuthenticationMiddleware, backend=backend))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(
        routes=[Route(HTTP_PATH, endpoint=endpoint)], middleware=middleware, lifespan=lifespan
    )


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free one).

    Raises
    ------
    GraphRAGError
        When the address cannot be bound (in use, not this machine's).
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise GraphRAGError(f"--host {host}: {exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise GraphRAGError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def _not_a_closed_stream(record: logging.LogRecord) -> bool:
    """Drop the SDK's ``ClosedResourceError`` traceback logged each time an HTTP client
    ends its session (its stream writer finds the session's stream closed); keep the rest."""
    import anyio

    error = record.exc_info[1] if record.exc_info else None
    return not isinstance(error, anyio.ClosedResourceError)


def run_http(
    server: Server,
    sock: socket.socket,
    *,
    token: str | None,
    loopback_host: str | None,
    log_level: str = "warning",
) -> None:
    """Serve streamable HTTP on the bound ``sock`` until SIGINT / SIGTERM (see
    :func:`http_app` for ``token`` and ``loopback_host``)."""
    import asyncio

    import uvicorn

    app = http_app(server, token=token, loopback_host=loopback_host)
    logging.getLogger("mcp.server.streamable_http").addFilter(_not_a_closed_stream)
    config = uvicorn.Config(app, log_level=log_level, lifespan="on")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


def url_of(sock: socket.socket) -> str:
    """The endpoint URL of a bound socket, e.g. ``http://127.0.0.1:8000/mcp``."""
    host, port = sock.getsockname()[:2]
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}{HTTP_PATH}"


def announce(message: str) -> None:
    """One line on stderr (stdout may carry the protocol)."""
    print(message, file=sys.stderr, flush=True)
