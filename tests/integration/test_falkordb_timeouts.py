"""No call to FalkorDB waits forever: a silent port and a frozen server (``SIGSTOP``) give a
one-line ``TimeoutError`` after the configured timeout and retries; a server back from a
restart answers the same object again.

The time bounds asserted are the configured ones with a wide margin (a loaded machine): what
is tested is that the call gives up, not how fast.
"""

from __future__ import annotations

import time

import pytest

from graphrag_integrations.core.graph.falkordb_connection import parse_falkordb_url
from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
from graphrag_integrations.testing.falkordb_server import FalkorDBServer
from graphrag_integrations.testing.server_process import SilentServer

#: Short timeouts for the tests: 1 s per attempt, 2 attempts.
FAST = "?timeout=1&connect_timeout=1&retries=1"
#: What the configured timeouts allow, with a wide margin for a loaded machine.
BOUND_S = 30.0


def test_a_silent_port_times_out_with_one_line() -> None:
    with SilentServer() as silent:
        start = time.monotonic()
        with pytest.raises(TimeoutError, match="no answer within 1 s, 2 attempts") as info:
            FalkorDBGraph(silent.url("g") + FAST)
        assert time.monotonic() - start < BOUND_S
    assert "\n" not in str(info.value)
    assert f"127.0.0.1:{silent.port}" in str(info.value)


@pytest.mark.falkordb_server
def test_a_frozen_server_times_out_then_answers_again(killable_falkordb: FalkorDBServer) -> None:
    graph = FalkorDBGraph(killable_falkordb.url("frozen") + FAST)
    graph.add_node("a", "entity", {"d1"})
    graph.flush()
    killable_falkordb.pause()
    try:
        start = time.monotonic()
        with pytest.raises(TimeoutError, match="no answer within 1 s") as info:
            graph.nodes()
        assert time.monotonic() - start < BOUND_S
        assert "\n" not in str(info.value)
    finally:
        killable_falkordb.resume()
    assert graph.nodes() == ["a"]


@pytest.mark.falkordb_server
def test_a_restarted_server_is_reconnected_with_its_data(
    killable_falkordb: FalkorDBServer,
) -> None:
    graph = FalkorDBGraph(killable_falkordb.url("restart") + FAST)
    graph.add_node("a", "entity", {"d1"})
    graph.flush()
    killable_falkordb.restart()  # kill -9, then the append-only file
    assert graph.nodes() == ["a"]


def test_the_url_options_reach_the_location() -> None:
    loc = parse_falkordb_url("falkordb://127.0.0.1:7000/g?timeout=2.5&connect_timeout=3&retries=4")
    assert (loc.timeout_s, loc.connect_timeout_s, loc.retries) == (2.5, 3.0, 4)
    assert parse_falkordb_url(loc.url) == loc
    assert parse_falkordb_url(loc.url).timeout_s == 2.5
    assert loc.with_graph("h").retries == 4
