"""The FalkorDB server launcher: a real server answers Cypher, and stops with its folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_integrations.testing.falkordb_server import (
    FalkorDBServer,
    FalkorDBServerError,
    falkordb_binaries,
)

pytestmark = pytest.mark.falkordb_server


def test_session_server_answers_cypher(falkordb_server: FalkorDBServer) -> None:
    from falkordb import FalkorDB

    graph = FalkorDB(host=falkordb_server.host, port=falkordb_server.port).select_graph("t_ping")
    try:
        rows = graph.query("CREATE (n:N {name: 'x'}) RETURN n.name").result_set
        assert rows == [["x"]]
    finally:
        graph.delete()
    assert falkordb_server.url("g") == f"falkordb://127.0.0.1:{falkordb_server.port}/g"


def test_own_server_stops_and_removes_its_folder(falkordb_server: FalkorDBServer) -> None:
    with FalkorDBServer(threads=1) as server:
        assert server.running
        folder = server.directory
        assert folder.is_dir()
    assert not server.running
    assert not folder.exists()


def test_missing_binaries_are_one_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FALKORDB_REDIS_SERVER", str(tmp_path / "none"))
    monkeypatch.setenv("FALKORDB_MODULE", str(tmp_path / "none.so"))
    assert falkordb_binaries() is None
    with pytest.raises(FalkorDBServerError, match="falkordb-server"):
        FalkorDBServer().start()
