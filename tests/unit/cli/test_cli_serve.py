"""``graphrag-integrations serve``: the MCP tools through the official client session on the
SDK's in-memory transport (the real transports, stdio and HTTP, are in
``tests/integration/test_mcp_server.py``), argument checks, every method's index served.

Each server here is built the way ``serve`` builds it (:func:`check_arguments`,
:func:`load_all`, :func:`build_server`) from parsed command-line arguments.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from graphrag_integrations import cli
from graphrag_integrations.cli.mcp_server import build_server
from graphrag_integrations.cli.parser import build_parser
from graphrag_integrations.cli.query import _load_index
from graphrag_integrations.cli.serve import check_arguments, load_all
from graphrag_integrations.evaluation import registry
from tests.conftest import FakeEmbedder
from tests.unit.cli.mcp_results import one_line_error, result_ids
from tests.unit.cli.method_fixtures import QUESTION, index_options, method_input

ROOT = Path(__file__).resolve().parents[3]
CITIES = {
    "paris.txt": "Paris is the capital of France and sits on the Seine.",
    "rome.txt": "Rome is the capital of Italy, a city on the Tiber.",
    "berlin.txt": "Berlin is the capital of Germany, a city on the Spree.",
    "curie.txt": "Marie Curie won the Nobel Prize in Physics for work on radioactivity.",
}
QUERIES = ("capital city on a river", "Nobel Prize physics", "Where is Rome?")


@pytest.fixture(scope="module")
def cities(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cities")
    for name, text in CITIES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _index(method: str, source: Path, out: Path, *extra: str) -> Path:
    argv = ["index", "--method", method, "--input", str(source), "--out", str(out), *extra]
    assert cli.main([*argv, "--no-progress"]) == 0
    return out


@pytest.fixture(scope="module")
def bm25_dir(cities: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _index("bm25", cities, tmp_path_factory.mktemp("bm25") / "cities")


@asynccontextmanager
async def session(*argv: str) -> AsyncIterator[ClientSession]:
    """A client session on the server ``serve *argv`` would run (in memory)."""
    args = build_parser().parse_args(["serve", *argv])
    _, where = check_arguments(args)
    server = build_server(load_all(args, where))
    async with create_connected_server_and_client_session(server) as client:
        yield client


def _retrieve_ids(path: Path, query: str, k: int, **kwargs: Any) -> list[str]:
    """The ids the in-process ``retrieve`` of the index in ``path`` returns."""
    _, retriever, _ = _load_index(path, None)
    return [hit.id for hit in retriever.retrieve(query, k, **kwargs)]


async def test_one_tool_per_index_named_from_the_folder_or_given(
    bm25_dir: Path, cities: Path, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    dense = _index("dense", cities, tmp_path / "dense")
    given = "Cities by meaning"
    argv = ["--index", str(bm25_dir), "--index", str(dense)]
    argv += ["--name", "cities_words", "--name", "cities_meaning"]
    async with session(*argv, "--description", "x", "--description", given) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == ["cities_meaning", "cities_words"]
    assert tools["cities_meaning"].description == given
    schema = tools["cities_words"].inputSchema
    assert schema["required"] == ["query"] and set(schema["properties"]) == {"query", "k", "filter"}
    assert schema["properties"]["k"]["default"] == 5 and schema["properties"]["k"]["maximum"] == 50
    assert tools["cities_words"].annotations is not None
    assert tools["cities_words"].annotations.readOnlyHint is True

    async with session("--index", str(dense)) as client:
        (tool,) = (await client.list_tools()).tools
    assert tool.name == "search_dense"
    assert tool.description is not None
    assert "method dense" in tool.description and "4 documents" in tool.description


@pytest.mark.parametrize("method", ["bm25", "dense", "hybrid"])
async def test_search_returns_what_retrieve_returns(
    method: str, cities: Path, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    path = _index(method, cities, tmp_path / method)
    async with session("--index", str(path)) as client:
        for query in QUERIES:
            for k in (1, 3):
                result = await client.call_tool(f"search_{method}", {"query": query, "k": k})
                expected = _retrieve_ids(path, query, k)
                assert result_ids(result) == expected and len(expected) == k
        result = await client.call_tool(f"search_{method}", {"query": "Where is Rome?"})
    assert result.structuredContent is not None
    first = result.structuredContent["passages"][0]
    assert result.structuredContent["k"] == 5 and len(result.structuredContent["passages"]) == 4
    assert first["metadata"]["file_name"] == "rome.txt" and first["rank"] == 1
    assert first["explanation"].startswith(f"method={method}")
    text = getattr(result.content[0], "text", "")
    assert f"passage {first['id']}" in text and CITIES["rome.txt"] in text


async def test_server_filter_is_anded_and_a_call_cannot_widen_it(bm25_dir: Path) -> None:
    tenant = json.dumps({"file_name": {"$in": ["rome.txt", "berlin.txt"]}})
    async with session("--index", str(bm25_dir), "--filter", tenant) as client:
        tool = "search_cities"
        names = {"rome.txt", "berlin.txt"}

        async def files(arguments: dict[str, Any]) -> set[str]:
            result = await client.call_tool(tool, {"query": "capital city", "k": 4, **arguments})
            assert not result.isError, result.content
            assert result.structuredContent is not None
            return {row["metadata"]["file_name"] for row in result.structuredContent["passages"]}

        assert await files({}) == names
        for wider in ({}, None, "", {"file_name": "paris.txt"}, {"$or": [{"doc_id": {"$ne": ""}}]}):
            assert await files({"filter": wider}) <= names
        assert await files({"filter": {"file_name": "paris.txt"}}) == set()
        assert await files({"filter": {"file_name": "rome.txt"}}) == {"rome.txt"}
        assert await files({"filter": '{"file_name": "berlin.txt"}'}) == {"berlin.txt"}
        result = await client.call_tool(tool, {"query": "capital city", "k": 4})
    assert result_ids(result) == _retrieve_ids(
        bm25_dir, "capital city", 4, filter=json.loads(tenant)
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": ""}, "query is empty"),
        ({"query": "   "}, "query is empty"),
        ({}, "query is missing"),
        ({"query": 3}, "query must be a string"),
        ({"query": "Rome", "k": 0}, "k must be an integer >= 1, got 0"),
        ({"query": "Rome", "k": -2}, "k must be an integer >= 1, got -2"),
        ({"query": "Rome", "k": "3"}, "k must be an integer >= 1, got str '3'"),
        ({"query": "Rome", "k": 51}, "k must be <= 50 on this server, got 51"),
        ({"query": "Rome", "filter": {"year": {"$around": 2}}}, "unknown filter operator"),
        ({"query": "Rome", "filter": [1]}, "a metadata filter must be a dict"),
        ({"query": "Rome", "filter": "lang=en"}, "filter is not JSON"),
        ({"query": "Rome", "filter": {"$and": []}}, "$and takes a non-empty list"),
        ({"query": "Rome", "top": 3}, "unknown argument(s) top"),
    ],
)
async def test_bad_arguments_are_one_line_errors_and_the_server_keeps_serving(
    bm25_dir: Path, arguments: dict[str, Any], message: str
) -> None:
    async with session("--index", str(bm25_dir)) as client:
        assert message in one_line_error(await client.call_tool("search_cities", arguments))
        unknown = one_line_error(await client.call_tool("search_towns", {"query": "Rome"}))
        assert unknown == "unknown tool 'search_towns'; this server has search_cities"
        result = await client.call_tool("search_cities", {"query": "Where is Rome?", "k": 1})
    assert result_ids(result) == _retrieve_ids(bm25_dir, "Where is Rome?", 1)


async def test_read_only_unless_allow_writes(bm25_dir: Path, tmp_path: Path) -> None:
    async with session("--index", str(bm25_dir)) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == ["search_cities"]
        refused = await client.call_tool("search_cities_insert", {"documents": [{"text": "x"}]})
    assert one_line_error(refused).startswith("unknown tool 'search_cities_insert'")

    path = Path(shutil.copytree(bm25_dir, tmp_path / "cities"))  # the module's index stays
    oslo = {"text": "Oslo is the capital of Norway.", "id": "oslo", "metadata": {"title": "Oslo"}}
    async with session("--index", str(path), "--allow-writes") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert sorted(tools) == ["search_cities", "search_cities_delete", "search_cities_insert"]
        assert tools["search_cities_delete"].annotations is not None
        assert tools["search_cities_delete"].annotations.destructiveHint is True
        added = await client.call_tool("search_cities_insert", {"documents": [oslo]})
        assert added.structuredContent == {
            "index": "search_cities",
            "inserted": ["oslo"],
            "skipped": 0,
        }
        assert _retrieve_ids(path, "Oslo Norway", 1) == ["oslo#0"]  # persisted: a fresh load
        hit = await client.call_tool("search_cities", {"query": "Oslo Norway", "k": 1})
        assert result_ids(hit) == ["oslo#0"]
        again = await client.call_tool("search_cities_insert", {"documents": [oslo]})
        assert again.structuredContent is not None and again.structuredContent["skipped"] == 1
        bad = await client.call_tool("search_cities_insert", {"documents": [{"id": "x"}]})
        assert "documents[0].text must be a non-empty string" in one_line_error(bad)
        gone = await client.call_tool("search_cities_delete", {"doc_ids": ["oslo", "nowhere"]})
        assert gone.structuredContent == {
            "index": "search_cities",
            "deleted": ["oslo"],
            "not_found": ["nowhere"],
        }
        after = await client.call_tool("search_cities", {"query": "Oslo Norway", "k": 4})
        assert "oslo#0" not in result_ids(after)
    assert "oslo#0" not in _retrieve_ids(path, "Oslo Norway", 4)


def _method_params() -> list[Any]:
    return list(registry.method_names())


@pytest.mark.parametrize("method", _method_params())
async def test_every_methods_index_is_served(
    method: str,
    fake_embedder: FakeEmbedder,
    corpus: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    reg = registry.get_registration(method)
    options = index_options(method, request)
    out = _index(method, method_input(reg, corpus), tmp_path / "index", *options)
    async with session("--index", str(out)) as client:
        (tool,) = (await client.list_tools()).tools
        result = await client.call_tool(tool.name, {"query": QUESTION, "k": 2})
    ids = result_ids(result)
    assert ids and ids == _retrieve_ids(out, QUESTION, 2)


def _serve_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert cli.main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")
    return err.strip()


def test_bad_serve_arguments_are_one_line_errors_before_serving(
    bm25_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GRAPHRAG_INTEGRATIONS_MCP_TOKEN", raising=False)
    index = ["--index", str(bm25_dir)]
    missing = tmp_path / "nowhere"
    assert f"no index at {missing}" in _serve_error(capsys, "--index", str(missing))
    assert "--host 0.0.0.0 is not a loopback address" in _serve_error(
        capsys, *index, "--http", "--host", "0.0.0.0"
    )
    assert "--token needs --http" in _serve_error(capsys, *index, "--token", "t")
    assert "--port must be 0-65535" in _serve_error(capsys, *index, "--http", "--port", "70000")
    assert "--filter is not JSON" in _serve_error(capsys, *index, "--filter", "{tenant: a}")
    assert "--filter: unknown filter operator" in _serve_error(
        capsys, *index, "--filter", '{"a": {"$x": 1}}'
    )
    assert "read-only" in _serve_error(capsys, *index, "--filter", '{"a": 1}', "--allow-writes")
    assert "--name is given 2 time(s) for 1 --index" in _serve_error(
        capsys, *index, "--name", "a", "--name", "b"
    )
    assert "tool name 'a b' must be" in _serve_error(capsys, *index, "--name", "a b")
    assert "two tools are named 'search_cities'" in _serve_error(capsys, *index, *index)
    assert "no served index is a clue index" in _serve_error(capsys, *index, "--option", "clue.h=2")
    assert "--max-k must be >= 1" in _serve_error(capsys, *index, "--max-k", "0")
    http = ["--http", "--port", "0"]
    assert "unknown option 'bm25.kk'" in _serve_error(capsys, *index, "--option", "kk=2", *http)


def test_without_the_mcp_extra_serve_says_how_to_install_it(
    bm25_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a)
    )
    err = _serve_error(capsys, "--index", str(bm25_dir))
    assert err == "error: serve needs the MCP SDK: pip install 'graphrag-integrations[mcp]'"


def test_a_corrupted_index_is_a_one_line_error(
    bm25_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damaged = Path(shutil.copytree(bm25_dir, tmp_path / "damaged"))
    with (damaged / "passages.json").open("ab") as fh:
        fh.write(b" ")
    # --http: the load fails after the port is bound (stdio would take this process's stdout)
    err = _serve_error(capsys, "--index", str(damaged), "--http", "--port", "0")
    assert "passages.json: checksum mismatch" in err


def test_protocol_stdout_keeps_prints_off_the_protocol_stream() -> None:
    code = (
        "from graphrag_integrations.cli.serve import protocol_stdout\n"
        "out = protocol_stdout()\n"
        "print('a library talking', flush=True)\n"
        'out.write(b\'{"jsonrpc": "2.0"}\\n\')\n'
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, timeout=60, check=True
    )
    assert done.stdout == b'{"jsonrpc": "2.0"}\n'
    assert b"a library talking" in done.stderr
