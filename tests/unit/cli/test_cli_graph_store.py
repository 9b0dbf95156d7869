"""``--graph-store``: index, query, show and eval with the graph in a real FalkorDB server
(the session's ``falkordb_server``), and its one-line errors."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations import cli
from graphrag_integrations.core.graph.falkordb_connection import connect, parse_falkordb_url
from graphrag_integrations.evaluation.registry import get_registration
from graphrag_integrations.testing.graph_store_compliance import drop_graphs
from graphrag_integrations.testing.server_process import free_port
from tests.conftest import FakeEmbedder

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "eval"
QUESTION = "Who designed the Analytical Engine?"
OPTION_TOO = ("--option", "graph_store=falkordb://h/x")
CLUE_OPTION_TOO = ("--option", "clue.graph_store=falkordb://h/x")


@pytest.fixture
def graph(falkordb_server: Any) -> Iterator[str]:
    """A graph name of this test on the session server (its graphs deleted afterwards)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    client = connect(parse_falkordb_url(falkordb_server.url(name)))
    try:
        ours = [g for g in client.list_graphs() if g.startswith(name)]
    finally:
        client.connection.close()
    drop_graphs(falkordb_server, ours)


def _index(out: Path, *extra: str) -> int:
    argv = ["index", "--method", "clue", "--input", str(FIX / "musique"), "--out", str(out)]
    return cli.main([*argv, "--no-progress", *extra])


def _query(index: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> list[Any]:
    assert cli.main(["query", "--index", str(index), QUESTION, "-k", "3", "--json", *extra]) == 0
    rows: list[Any] = json.loads(capsys.readouterr().out)
    return rows


@pytest.mark.falkordb_server
def test_index_query_and_show_with_the_graph_in_falkordb(
    fake_embedder: FakeEmbedder,
    falkordb_server: Any,
    graph: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = falkordb_server.url(graph)
    assert _index(tmp_path / "nx") == 0
    assert _index(tmp_path / "falkor", "--graph-store", url) == 0
    assert "indexed 4 passages" in capsys.readouterr().out
    files = {p.name for p in (tmp_path / "falkor").iterdir()}
    assert "graph.pointer.json" in files and "graph.json" not in files
    pointer = json.loads((tmp_path / "falkor" / "graph.pointer.json").read_text())
    assert pointer["graph"] == graph and pointer["port"] == falkordb_server.port
    expected = _query(tmp_path / "nx", capsys)
    assert _query(tmp_path / "falkor", capsys) == expected
    # the graph where it is now (here: the same place)
    assert _query(tmp_path / "falkor", capsys, "--graph-store", url) == expected
    page = tmp_path / "q.html"
    argv = ["show", "--index", str(tmp_path / "falkor"), QUESTION, "--out", str(page)]
    assert cli.main([*argv, "--no-open", "--graph-store", url]) == 0
    assert page.is_file()


@pytest.mark.falkordb_server
def test_index_refuses_a_graph_that_holds_data_unless_overwrite(
    fake_embedder: FakeEmbedder,
    falkordb_server: Any,
    graph: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = falkordb_server.url(graph)
    assert _index(tmp_path / "a", "--graph-store", url) == 0
    capsys.readouterr()
    assert _index(tmp_path / "b", "--graph-store", url) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds" in err and "pass --overwrite" in err, err
    assert not (tmp_path / "b").exists()
    assert _index(tmp_path / "b", "--graph-store", url, "--overwrite") == 0


@pytest.mark.falkordb_server
def test_eval_gives_each_graph_method_a_graph_of_its_own(
    fake_embedder: FakeEmbedder,
    falkordb_server: Any,
    graph: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["eval", "--method", "bm25,clue", "--dataset", str(FIX / "musique"), "--no-progress"]
    assert cli.main([*base, "--json", str(tmp_path / "nx.json")]) == 0
    url = falkordb_server.url(graph)
    assert cli.main([*base, "--graph-store", url, "--json", str(tmp_path / "f.json")]) == 0
    out = capsys.readouterr().out
    assert f"clue: graph in {falkordb_server.url(graph + '_clue_musique')}" in out
    assert "bm25: graph" not in out
    client = connect(parse_falkordb_url(url))
    try:
        assert [g for g in client.list_graphs() if g.startswith(graph)] == [f"{graph}_clue_musique"]
    finally:
        client.connection.close()
    nx, falkor = (json.loads((tmp_path / f).read_text())["results"] for f in ("nx.json", "f.json"))
    assert {m: r["R@5"] for m, r in falkor.items()} == {m: r["R@5"] for m, r in nx.items()}
    # a second run finds the graph full
    assert cli.main([*base, "--graph-store", url]) == 2
    assert "pass --overwrite" in capsys.readouterr().err
    assert cli.main([*base, "--graph-store", url, "--overwrite"]) == 0


@pytest.mark.falkordb_server
def test_query_names_an_unreachable_server_in_one_line(
    fake_embedder: FakeEmbedder,
    falkordb_server: Any,
    graph: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--graph-store`` says where the graph is now; here nothing answers there."""
    assert _index(tmp_path / "idx", "--graph-store", falkordb_server.url(graph)) == 0
    capsys.readouterr()
    moved = f"falkordb://127.0.0.1:{free_port()}/{graph}"
    assert cli.main(["query", "--index", str(tmp_path / "idx"), QUESTION, "--graph-store", moved])
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "does not answer" in err, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["index", "--method", "clue", "--graph-store", "neo4j://h/g"], "graph_store: expected"),
        (["index", "--method", "clue", "--graph-store", "falkordb://h:99999/g"], "port"),
        (["index", "--method", "bm25", "--graph-store", "falkordb://h/g"], "bm25 keeps no graph"),
        (
            ["index", "--method", "clue", "--graph-store", "falkordb://h/g", *OPTION_TOO],
            "--graph-store and --option graph_store",
        ),
        (["eval", "--method", "clue", "--overwrite"], "--overwrite applies to the graphs"),
        (["eval", "--method", "clue", "--graph-store", "bolt://h/g"], "graph_store: expected"),
        (
            ["eval", "--method", "clue", "--graph-store", "falkordb://h/g", *CLUE_OPTION_TOO],
            "--graph-store and --option clue.graph_store",
        ),
    ],
)
def test_graph_store_mistakes_are_one_line_errors_before_any_work(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if argv[0] == "index":
        argv = [*argv, "--input", str(FIX / "musique"), "--out", str(tmp_path / "idx")]
    else:
        argv = [*argv, "--dataset", str(FIX / "musique")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "idx").exists()


def test_query_of_an_index_without_a_graph_refuses_a_graph_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["index", "--method", "bm25", "--input", str(FIX / "musique"), "--out"]
    assert cli.main([*argv, str(tmp_path / "idx")]) == 0
    capsys.readouterr()
    argv = ["query", "--index", str(tmp_path / "idx"), "x", "--graph-store", "falkordb://h/g"]
    assert cli.main(argv) == 2
    assert "a bm25 index keeps no graph" in capsys.readouterr().err


@pytest.mark.parametrize("method", ["clue", "qcg", "kgt", "reg", "reg-weak"])
def test_every_graph_method_takes_a_graph_store_url_as_an_option(method: str) -> None:
    reg = get_registration(method)
    opts = reg.parse_options({"graph_store": "falkordb://h:1/g"}, cli=True)
    assert opts.objects == {"graph_store": "falkordb://h:1/g"}
