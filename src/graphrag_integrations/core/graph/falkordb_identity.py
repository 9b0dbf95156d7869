"""Is the graph still ours? The check a FalkorDB graph backend
(:class:`~graphrag_integrations.core.graph.falkordb_graph.FalkorDBGraph`) makes on every new
connection.

A FalkorDB server can come back from a restart without the graph (no persistence, a flushed
database), or another index can have replaced it. The Redis client reconnects by itself, so
without a check an index would go on reading an empty graph (and its in-process layers would
answer as if nothing happened) or write a partial graph into an empty server.

:func:`graph_identity` reads, on a connection that has just completed its handshake and
before any command of the caller is sent on it, whether the graph exists and the id its meta
node holds (two round trips). :func:`identity_error` is the one-line
:class:`~graphrag_integrations.errors.IndexMismatchError` when it is gone or another one,
naming the URL and how to rebuild.

Examples
--------
>>> from graphrag_integrations.core.graph.falkordb_connection import parse_falkordb_url
>>> where = parse_falkordb_url("falkordb://127.0.0.1:6379/papers")
>>> print(identity_error(where, None, "ab12"))  # doctest: +NORMALIZE_WHITESPACE
falkordb://127.0.0.1:6379/papers: the graph is gone (the server restarted without its data, or
the graph was deleted); rebuild it: `graphrag-integrations index --overwrite` (or
from_documents(..., graph_store=URL)) from the source documents, or X.load(path,
graph_store=URL) from a folder persisted with the networkx graph
"""

from __future__ import annotations

from typing import Any

from graphrag_integrations.core.graph import falkordb_cypher as cy
from graphrag_integrations.core.graph.falkordb_connection import FalkorDBLocation
from graphrag_integrations.errors import IndexMismatchError

#: ``graph_identity`` of a graph that exists but has no meta node (not made by this package).
NO_META = ""

_REBUILD = (
    "rebuild it: `graphrag-integrations index --overwrite` (or from_documents(..., "
    "graph_store=URL)) from the source documents, or X.load(path, graph_store=URL) from a "
    "folder persisted with the networkx graph"
)


def graph_identity(connection: Any, graph: str) -> str | None:
    """The graph id in ``graph``'s meta node, read on a raw ``connection``: ``None`` when the
    graph does not exist, :data:`NO_META` when it has no meta node."""
    connection.send_command("GRAPH.LIST")
    names = connection.read_response()
    if graph not in (names or []):
        return None
    connection.send_command("GRAPH.RO_QUERY", graph, cy.META_READ)
    reply = connection.read_response()
    if isinstance(reply, Exception):
        raise reply
    rows = reply[1] if isinstance(reply, list) and len(reply) > 1 else []
    return str(rows[0][1]) if rows and rows[0][1] is not None else NO_META


def identity_error(
    location: FalkorDBLocation, found: str | None, expected: str
) -> IndexMismatchError:
    """The one-line error for a graph that is gone (``found`` ``None``) or not the one
    this index made (``found`` another id than ``expected``)."""
    if found is None:
        what = "the graph is gone (the server restarted without its data, or the graph was deleted)"
    elif found == NO_META:
        what = "the graph now holds data not made by graphrag-integrations (replaced)"
    else:
        what = f"the graph was replaced by another index's (id {found}, this index's {expected})"
    return IndexMismatchError(f"{location.url}: {what}; {_REBUILD}")
