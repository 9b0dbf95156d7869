"""``graphrag-integrations serve`` as a real process, through real clients and transports.

The official ``mcp`` client session over stdio (the client starts the server) and over
streamable HTTP (with a bearer token); ``langchain-mcp-adapters`` and LlamaIndex's
``McpToolSpec`` loading the tools; 20 concurrent calls with bad calls among them; start-up
errors. Every server process is bounded in time and stopped (``stdio_client`` closes its
process; the HTTP server is terminated, then killed). Results are compared with the
in-process ``retrieve`` of the same index (same ids, same order).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.cli.query import _load_index
from graphrag_integrations.testing.server_process import stop_process
from tests.unit.cli.mcp_results import one_line_error, result_ids

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "data" / "sample_corpus"
QUESTION = "Who directed Maximum Overdrive?"
TOOL = "search_sample"
LIMIT_S = 120  # every client exchange with a server process


def _queries() -> list[str]:
    """20 different queries: the sample questions, then sample document titles."""
    questions = json.loads((SAMPLE.parent / "sample_questions.json").read_text("utf-8"))
    titles = [p.read_text("utf-8").splitlines()[0] for p in sorted(SAMPLE.glob("*.txt"))]
    return ([q["question"] for q in questions] + titles)[:20]


def _env(**extra: str) -> dict[str, str]:
    """This environment with the checkout's sources first, no inherited token, ``extra``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("GRAPHRAG_INTEGRATIONS_MCP_TOKEN", None)
    return {**env, **extra}


def _serve(*argv: str) -> list[str]:
    return ["-m", "graphrag_integrations.cli", "serve", *argv]


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BM25 index of the sample corpus, in a folder named ``sample``."""
    path = tmp_path_factory.mktemp("indexes") / "sample"
    BM25Retriever.from_documents([SAMPLE]).persist(path)
    return path


def _retrieve_ids(path: Path, query: str, k: int) -> list[str]:
    _, retriever, _ = _load_index(path, None)
    return [hit.id for hit in retriever.retrieve(query, k)]


@asynccontextmanager
async def stdio_session(log: Path, *argv: str) -> AsyncIterator[ClientSession]:
    """A client session with ``serve *argv`` started over stdio (its stderr in ``log``)."""
    params = StdioServerParameters(command=sys.executable, args=_serve(*argv), env=_env())
    with log.open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=timedelta(seconds=60)) as session,
        ):
            await session.initialize()
            yield session


@contextmanager
def http_server(log: Path, *argv: str, env: dict[str, str]) -> Iterator[str]:
    """``serve --http --port 0 *argv`` as a process: its endpoint URL, then it is stopped."""
    command = [sys.executable, *_serve("--http", "--port", "0", *argv)]
    with log.open("w", encoding="utf-8") as errlog:
        proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stderr=errlog)
    try:
        deadline = time.monotonic() + LIMIT_S
        while not (found := re.search(r"at (http://\S+/mcp)", log.read_text("utf-8"))):
            assert proc.poll() is None, log.read_text("utf-8")
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield found.group(1)
    finally:
        stop_process(proc, timeout_s=20)


async def test_stdio_lists_one_tool_and_returns_what_retrieve_returns(
    sample_index: Path, tmp_path: Path
) -> None:
    with anyio.fail_after(LIMIT_S):
        async with stdio_session(tmp_path / "server.log", "--index", str(sample_index)) as client:
            (tool,) = (await client.list_tools()).tools
            assert tool.name == TOOL and "60 documents" in (tool.description or "")
            results = {
                (query, k): await client.call_tool(TOOL, {"query": query, "k": k})
                for query in _queries()[:6]
                for k in (1, 5)
            }
            first = await client.call_tool(TOOL, {"query": QUESTION, "k": 2})
    for (query, k), result in results.items():
        assert result_ids(result) == _retrieve_ids(sample_index, query, k)
    assert first.structuredContent is not None
    top = first.structuredContent["passages"][0]
    assert top["metadata"]["file_name"] == "Maximum_Overdrive.txt"
    assert "written and directed by Stephen King" in getattr(first.content[0], "text", "")
    assert "serving search_sample over stdio" in (tmp_path / "server.log").read_text("utf-8")


async def _concurrent_calls(client: ClientSession, index: Path) -> None:
    """20 good calls at once with bad calls among them, then one more good call."""
    queries = _queries()
    bad: list[tuple[dict[str, Any], str]] = [
        ({"query": "Leland", "filter": {"file_name": {"$like": "x"}}}, "unknown filter operator"),
        ({"query": ""}, "query is empty"),
        ({"query": "Leland", "k": 0}, "k must be an integer >= 1, got 0"),
    ]
    calls = [client.call_tool(TOOL, {"query": q, "k": 3}) for q in queries]
    calls[5:5] = [client.call_tool(TOOL, arguments) for arguments, _ in bad]
    results = await asyncio.gather(*calls)
    errors = results[5 : 5 + len(bad)]
    good = results[:5] + results[5 + len(bad) :]
    assert len(good) == 20
    for query, result in zip(queries, good, strict=True):
        assert result_ids(result) == _retrieve_ids(index, query, 3)
    for (_, message), result in zip(bad, errors, strict=True):
        assert message in one_line_error(result)
    after = await client.call_tool(TOOL, {"query": QUESTION, "k": 1})
    assert result_ids(after) == _retrieve_ids(index, QUESTION, 1)


async def test_stdio_20_concurrent_calls_and_bad_calls_keep_the_server_up(
    sample_index: Path, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    with anyio.fail_after(LIMIT_S):
        async with stdio_session(log, "--index", str(sample_index)) as client:
            await _concurrent_calls(client, sample_index)
    assert "Traceback" not in log.read_text("utf-8")


async def test_http_needs_the_token_and_returns_what_retrieve_returns(
    sample_index: Path, tmp_path: Path
) -> None:
    env = _env(GRAPHRAG_INTEGRATIONS_MCP_TOKEN="s3cret-token")
    log = tmp_path / "server.log"
    with http_server(log, "--index", str(sample_index), env=env) as url:
        assert url.startswith("http://127.0.0.1:")
        with anyio.fail_after(LIMIT_S):
            async with httpx.AsyncClient() as plain:
                for headers in ({}, {"Authorization": "Bearer wrong"}):
                    refused = await plain.post(url, json={}, headers=headers)
                    assert refused.status_code == 401
            auth = {"Authorization": "Bearer s3cret-token"}
            async with (
                httpx.AsyncClient(headers=auth, timeout=60) as http,
                streamable_http_client(url, http_client=http) as (read, write, _),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                assert [tool.name for tool in (await client.list_tools()).tools] == [TOOL]
                await _concurrent_calls(client, sample_index)
    assert "Traceback" not in log.read_text("utf-8")


async def test_langchain_mcp_adapters_load_the_tool(sample_index: Path) -> None:
    from langchain_core.messages import ToolCall, ToolMessage
    from langchain_mcp_adapters.client import MultiServerMCPClient

    connection: Any = {
        "transport": "stdio",
        "command": sys.executable,
        "args": _serve("--index", str(sample_index)),
        "env": _env(),
    }
    with anyio.fail_after(LIMIT_S):
        (tool,) = await MultiServerMCPClient({"sample": connection}).get_tools()
        call = ToolCall(name=TOOL, args={"query": QUESTION, "k": 3}, id="call-1", type="tool_call")
        message = await tool.ainvoke(call)
        failed = await tool.ainvoke({**call, "args": {"query": "", "k": 3}, "id": "call-2"})
    assert tool.name == TOOL and set(tool.args) == {"query", "k", "filter"}
    assert isinstance(message, ToolMessage) and message.status == "success"
    text = "".join(block["text"] for block in message.content if isinstance(block, dict))
    assert "written and directed by Stephen King" in text
    passages = message.artifact["structured_content"]["passages"]
    assert [row["id"] for row in passages] == _retrieve_ids(sample_index, QUESTION, 3)
    assert isinstance(failed, ToolMessage) and failed.status == "error"
    assert "query is empty" in str(failed.content)


async def test_llama_index_mcp_tool_spec_loads_the_tool(sample_index: Path) -> None:
    from llama_index.tools.mcp import BasicMCPClient, McpToolSpec

    client = BasicMCPClient(
        sys.executable, args=_serve("--index", str(sample_index)), env=_env(), timeout=60
    )
    with anyio.fail_after(LIMIT_S):
        (tool,) = await McpToolSpec(client=client).to_tool_list_async()
        output = await tool.acall(query=QUESTION, k=3)
    assert tool.metadata.name == TOOL
    assert set(tool.metadata.get_parameters_dict()["properties"]) == {"query", "k", "filter"}
    result = output.raw_output
    assert isinstance(result, CallToolResult)
    assert result_ids(result) == _retrieve_ids(sample_index, QUESTION, 3)
    assert "written and directed by Stephen King" in str(output.content)


@pytest.mark.parametrize("case", ["missing", "corrupted"])
def test_a_bad_index_stops_the_start_with_one_line(
    case: str, sample_index: Path, tmp_path: Path
) -> None:
    path = tmp_path / "index"
    if case == "corrupted":
        shutil.copytree(sample_index, path)
        with (path / "passages.json").open("r+b") as fh:
            fh.seek(10)
            fh.write(b"#")
    command = [sys.executable, *_serve("--index", str(path))]
    done = subprocess.run(
        command, env=_env(), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    expected = "passages.json: checksum mismatch" if case == "corrupted" else "no index at"
    assert done.stderr.count("\n") == 1 and expected in done.stderr


@pytest.mark.slow
async def test_console_script_serves_a_clue_index_with_the_default_models(tmp_path: Path) -> None:
    """The acceptance path: ``graphrag-integrations serve --index <dir>`` on a Clue-RAG index
    built with the offline default models lists one tool that returns the right passage
    first (the walk alone puts "Leland, North Carolina", which names the film, first; Q-Iter's
    lead keeps the film's passage first: ``ppr_keep_margin``, docs/lab/clue.md)."""
    from graphrag_integrations import ClueIndex

    corpus = tmp_path / "films"
    corpus.mkdir()
    names = ["Maximum_Overdrive", "Leland_North_Carolina", "Chuck_Rowland", "Blennerville"]
    for name in names:
        shutil.copy(SAMPLE / f"{name}.txt", corpus)
    index_dir = tmp_path / "films_index"
    ClueIndex.from_documents(corpus).persist(index_dir)
    script = Path(sys.executable).parent / "graphrag-integrations"
    env = _env(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    params = StdioServerParameters(command=str(script), args=["serve", "--index", str(index_dir)])
    params.env = env
    with anyio.fail_after(300), (tmp_path / "server.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=timedelta(seconds=120)) as client,
        ):
            await client.initialize()
            (tool,) = (await client.list_tools()).tools
            result = await client.call_tool(tool.name, {"query": QUESTION, "k": 2})
    assert tool.name == "search_films_index" and "method clue" in (tool.description or "")
    assert result.structuredContent is not None
    passages = result.structuredContent["passages"]
    assert passages[0]["metadata"]["file_name"] == "Maximum_Overdrive.txt"
    assert all(p["explanation"].startswith("method=clue") for p in passages)
    assert result_ids(result) == _retrieve_ids(index_dir, QUESTION, 2)
