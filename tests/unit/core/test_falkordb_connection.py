"""falkordb:// URLs: parsing, one-line errors, pointers without credentials, connecting."""

from __future__ import annotations

import pytest

from graphrag_integrations.core.graph.falkordb_connection import (
    connect,
    location_from_pointer,
    parse_falkordb_url,
)
from graphrag_integrations.errors import InvalidArgumentError
from graphrag_integrations.testing.falkordb_server import FalkorDBServer
from graphrag_integrations.testing.server_process import free_port


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("redis://h:1/g", "looks like falkordb://"),
        ("falkordb://:6379/g", "no host"),
        ("falkordb://h:99999/g", "port"),
        ("falkordb://h:1/", "no graph name"),
        ("falkordb://h:1/a b", "graph name"),
        ("falkordb://u:pw@h:1/g?x=1", "unknown option"),
        ("falkordb://u:pw@h:1/g#x", "takes no"),
        ("falkordb://h:1/g?timeout=0", "seconds > 0"),
        ("falkordb://h:1/g?retries=-1", "int >= 0"),
        ("falkordb://h:1/g?timeout=abc", "seconds > 0"),
    ],
)
def test_bad_urls_are_one_line_errors(url: str, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message) as info:
        parse_falkordb_url(url)
    assert "\n" not in str(info.value)
    assert "pw" not in str(info.value)


def test_pointer_round_trip_drops_credentials() -> None:
    loc = parse_falkordb_url("falkordb://bob:p%40ss@localhost:7000/my.graph")
    assert loc.password == "p@ss"
    assert "p@ss" not in repr(loc) and "p@ss" not in loc.url
    back = location_from_pointer(loc.pointer())
    assert (back.host, back.port, back.graph, back.password) == (
        "localhost",
        7000,
        "my.graph",
        None,
    )
    with pytest.raises(InvalidArgumentError, match="not a FalkorDB pointer"):
        location_from_pointer({"host": "h"})


def test_unreachable_server_is_one_line() -> None:
    loc = parse_falkordb_url(f"falkordb://127.0.0.1:{free_port()}/g")
    with pytest.raises(ConnectionError, match="does not answer") as info:
        connect(loc, timeout_s=2)
    assert "\n" not in str(info.value)


@pytest.mark.falkordb_server
def test_connect_reaches_a_real_server(falkordb_server: FalkorDBServer) -> None:
    client = connect(parse_falkordb_url(falkordb_server.url("t_connect")))
    graph = client.select_graph("t_connect")
    try:
        assert graph.query("RETURN 1 + 1").result_set == [[2]]
    finally:
        graph.query("CREATE ()")
        graph.delete()
