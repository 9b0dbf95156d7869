"""The ``serve`` command: persisted indexes as an MCP server (:func:`cmd_serve`).

Every argument is checked before an index loads; each index loads once, through the same
path as ``query`` (:func:`graphrag_integrations.cli.query._load_index`: the method is read
from the folder's manifest), then the server runs until the client closes stdin (stdio) or
the process gets SIGINT / SIGTERM (HTTP). The tools: :mod:`~graphrag_integrations.cli.mcp_tools`;
the server and transports: :mod:`~graphrag_integrations.cli.mcp_server`.

Options
    ``--option KEY=VALUE`` applies to every index, ``--option METHOD.KEY=VALUE`` to the indexes
    of that method. ``--name`` / ``--description``, when given, are given once per ``--index``
    (in order). ``--filter JSON`` is ANDed with every call's filter; such a tenant server is
    read-only (``--allow-writes`` is refused: a delete by document id could reach another
    tenant's documents).
HTTP
    ``--host`` defaults to 127.0.0.1; any other than a loopback address needs a bearer token
    (``--token`` or the :data:`TOKEN_ENV` environment variable, which keeps it out of the
    process list).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from graphrag_integrations.cli.mcp_tools import (
    ServedIndex,
    check_tool_name,
    derived_description,
    derived_tool_name,
)
from graphrag_integrations.cli.query import _load_index, _read_manifest
from graphrag_integrations.errors import GraphRAGError, InvalidArgumentError

if TYPE_CHECKING:
    from graphrag_integrations.core.retrieval.filters import MetadataFilter

#: The environment variable holding the HTTP bearer token (``--token`` wins).
TOKEN_ENV = "GRAPHRAG_INTEGRATIONS_MCP_TOKEN"
#: The default ``--port``.
DEFAULT_PORT = 8000
#: ``--host`` default.
DEFAULT_HOST = "127.0.0.1"


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback address (127.0.0.0/8, ::1).

    Examples
    --------
    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def server_filter(text: str | None) -> MetadataFilter | None:
    """``--filter``: the JSON text of a LangChain dict filter, parsed and checked.

    Examples
    --------
    >>> server_filter('{"tenant": "acme"}')
    Comparison(key='tenant', operator='eq', value='acme')
    >>> server_filter('{"tenant": }')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.InvalidArgumentError: --filter is not JSON: Expecting value: ...
    """
    from graphrag_integrations.core.retrieval.filters import parse_filter

    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidArgumentError(f"--filter is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"--filter must be a JSON object, got {text!r}")
    try:
        return parse_filter(value)
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(f"--filter: {exc}") from None


def _per_index(values: Sequence[str] | None, count: int, flag: str) -> list[str | None]:
    if not values:
        return [None] * count
    if len(values) != count:
        raise GraphRAGError(f"{flag} is given {len(values)} time(s) for {count} --index")
    return list(values)


def options_for(method: str, items: Sequence[str]) -> list[str]:
    """The ``--option`` items that apply to an index of ``method``: unprefixed ones and those
    prefixed with ``method.``.

    Examples
    --------
    >>> options_for("clue", ["k=3", "clue.h=2", "qcg.h=1"])
    ['k=3', 'clue.h=2']
    """
    out = []
    for item in items:
        key = item.partition("=")[0]
        prefix, dot, _ = key.rpartition(".")
        if not dot or prefix == method:
            out.append(item)
    return out


def check_http_arguments(args: argparse.Namespace) -> str | None:
    """The bearer token of ``args`` (``--token``, else :data:`TOKEN_ENV`), after checking the
    HTTP options.

    Raises
    ------
    GraphRAGError
        ``--host`` / ``--port`` / ``--token`` without ``--http``, a port out of range, an
        empty token, or a non-loopback host without a token.
    """
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV)
    if not args.http:
        for flag, value in (("--host", args.host), ("--port", args.port), ("--token", args.token)):
            if value is not None:
                raise GraphRAGError(f"{flag} needs --http (the default transport is stdio)")
        return None
    if args.port is not None and not 0 <= args.port <= 65535:
        raise GraphRAGError(f"--port must be 0-65535, got {args.port}")
    if token is not None and not token.strip():
        raise GraphRAGError(f"the bearer token (--token or {TOKEN_ENV}) is empty")
    host = args.host or DEFAULT_HOST
    if token is None and not is_loopback(host):
        raise GraphRAGError(
            f"--host {host} is not a loopback address: set a bearer token (--token or "
            f"{TOKEN_ENV}) so that only your clients can call the server"
        )
    return token


def protocol_stdout() -> BinaryIO:
    """Keep file descriptor 1 for the MCP messages: they go to a duplicate of it, and fd 1
    (so ``print`` and native libraries) then writes to stderr, where the client shows it as
    the server's log instead of reading it as a broken message."""
    import sys

    sys.stdout.flush()
    protocol = os.dup(1)
    os.dup2(2, 1)
    return os.fdopen(protocol, "wb", buffering=0)


def load_served(
    path: Path,
    args: argparse.Namespace,
    *,
    name: str | None,
    description: str | None,
    where: MetadataFilter | None,
) -> ServedIndex:
    """Load the index in ``path`` (as ``query`` does) and describe it for the server."""
    from graphrag_integrations.evaluation.registry import get_registration

    reg = get_registration(_read_manifest(path).method)
    options = options_for(reg.name, args.option)
    index, retriever, manifest = _load_index(path, args.embedding, options)
    tool = check_tool_name(name or derived_tool_name(path))
    about = description or derived_description(
        tool, manifest.method, reg.description, len(index.doc_ids())
    )
    return ServedIndex(
        name=tool,
        description=about,
        path=path,
        method=manifest.method,
        index=index,
        retriever=retriever,
        where=where,
        max_k=args.max_k,
        writable=args.allow_writes,
    )


def tool_names(args: argparse.Namespace) -> list[str]:
    """The search tool name of each ``--index`` (``--name``, else derived from the folder),
    checked: valid, and with the write tools' names, all different.

    Raises
    ------
    GraphRAGError
        On an invalid name, a ``--name`` count that is not the ``--index`` count, or two
        tools of one name.
    """
    given = _per_index(args.name, len(args.index), "--name")
    names = [name or derived_tool_name(path) for name, path in zip(given, args.index, strict=True)]
    seen: set[str] = set()
    for name in names:
        tools = [name, f"{name}_insert", f"{name}_delete"] if args.allow_writes else [name]
        for tool in tools:
            check_tool_name(tool)
            if tool in seen:
                raise GraphRAGError(f"two tools are named {tool!r}: give each index a --name")
            seen.add(tool)
    return names


def check_arguments(args: argparse.Namespace) -> tuple[str | None, MetadataFilter | None]:
    """The bearer token and the server filter, after every check that loads no index (the
    manifests are read: a folder without an index fails here).

    Raises
    ------
    GraphRAGError
        On any bad argument (see the module notes), or without the ``mcp`` package.
    """
    from importlib.util import find_spec

    if find_spec("mcp") is None:
        raise GraphRAGError("serve needs the MCP SDK: pip install 'graphrag-integrations[mcp]'")
    token = check_http_arguments(args)
    where = server_filter(args.filter)
    if where is not None and args.allow_writes:
        raise GraphRAGError(
            "--allow-writes with --filter: a server with a fixed filter is read-only (a "
            "delete by document id could reach documents outside the filter)"
        )
    if args.max_k < 1:
        raise GraphRAGError(f"--max-k must be >= 1, got {args.max_k}")
    tool_names(args)
    _per_index(args.description, len(args.index), "--description")
    prefixes = {item.partition("=")[0].rpartition(".")[0] for item in args.option} - {""}
    methods = {_read_manifest(path).method for path in args.index}
    unknown = sorted(prefixes - methods)
    if unknown:
        raise GraphRAGError(f"--option {unknown[0]}.*: no served index is a {unknown[0]} index")
    return token, where


def load_all(args: argparse.Namespace, where: MetadataFilter | None) -> list[ServedIndex]:
    """Load every ``--index`` of ``args`` (checked by :func:`check_arguments`), in order."""
    texts = _per_index(args.description, len(args.index), "--description")
    return [
        load_served(path, args, name=name, description=text, where=where)
        for path, name, text in zip(args.index, tool_names(args), texts, strict=True)
    ]


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the indexes of ``--index`` as MCP tools (see the module notes)."""
    from graphrag_integrations.cli.mcp_server import (
        announce,
        bind,
        build_server,
        run_http,
        run_stdio,
        tool_specs,
        url_of,
    )

    token, where = check_arguments(args)
    host = args.host or DEFAULT_HOST
    sock = bind(host, DEFAULT_PORT if args.port is None else args.port) if args.http else None
    stdout = None if args.http else protocol_stdout()
    try:
        served = load_all(args, where)
        tools = ", ".join(tool_specs(served))
        server = build_server(served)
        if sock is not None:
            if not args.quiet:
                announce(f"serving {tools} at {url_of(sock)}")
            level = "info" if args.verbose else "warning"
            loopback = host.strip("[]") if is_loopback(host) else None
            run_http(server, sock, token=token, loopback_host=loopback, log_level=level)
        else:
            assert stdout is not None
            if not args.quiet:
                announce(f"serving {tools} over stdio")
            run_stdio(server, stdout)
    except KeyboardInterrupt:
        return 0
    finally:
        if sock is not None:
            sock.close()
    return 0
