"""A graph lost or replaced behind an index's back is detected at the next call: the server
restarted empty, the graph deleted, or another index's graph in its place. One line naming
the URL and how to rebuild; nothing is written into the empty server."""

from __future__ import annotations

import pytest

from graphrag_integrations.core.graph.falkordb_connection import connect, parse_falkordb_url
from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.testing.falkordb_server import FalkorDBServer

pytestmark = pytest.mark.falkordb_server
FAST = "?timeout=5&connect_timeout=2&retries=1"


def _graph(server: FalkorDBServer, name: str) -> FalkorDBGraph:
    graph = FalkorDBGraph(server.url(name) + FAST)
    graph.add_node("a", "entity", {"d1"})
    graph.add_node("b", "entity", {"d1"})
    graph.add_edge("a", "b", "r", {"d1"})
    graph.flush()
    return graph


def test_a_server_restarted_empty_is_a_one_line_error_for_reads_and_writes(
    killable_falkordb: FalkorDBServer,
) -> None:
    graph = _graph(killable_falkordb, "lost")
    killable_falkordb.restart(empty=True)
    with pytest.raises(IndexMismatchError, match="the graph is gone") as info:
        graph.nodes()
    message = str(info.value)
    assert "\n" not in message and graph.location.url in message and "--overwrite" in message
    graph.add_node("c", "entity", {"d2"})  # queued: the flush must not reach the server
    with pytest.raises(IndexMismatchError, match="the graph is gone"):
        graph.flush()
    client = connect(parse_falkordb_url(killable_falkordb.url("lost")))
    assert "lost" not in client.list_graphs()  # nothing partial written


def test_a_graph_replaced_by_another_index_is_detected(killable_falkordb: FalkorDBServer) -> None:
    graph = _graph(killable_falkordb, "swap")
    FalkorDBGraph(killable_falkordb.url("swap"), overwrite=True)  # another index takes it
    killable_falkordb.restart()  # the first object's connection is new after this
    with pytest.raises(IndexMismatchError, match="replaced by another index"):
        graph.nodes()


def test_a_restart_with_the_data_is_not_an_error(killable_falkordb: FalkorDBServer) -> None:
    graph = _graph(killable_falkordb, "kept")
    killable_falkordb.restart()
    assert graph.nodes() == ["a", "b"]
