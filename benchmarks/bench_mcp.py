"""Tool-call overhead of ``graphrag-integrations serve`` over the in-process ``retrieve``.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_mcp.py \
        [--index DIR] [--calls 200] [-k 5] [--http]

Without ``--index`` a BM25 index of ``examples/data/sample_corpus`` is built in a temporary
folder. The same queries (the sample questions and document titles, cycled) run one after
the other: first ``retrieve(query, k)`` on the index loaded in this process through the
command's own loading path, then as MCP tool calls through the official client session to a
``serve`` subprocess over stdio (and, with ``--http``, over streamable HTTP on 127.0.0.1).
Printed per path: p50 / p95 latency of a call, the overhead (p50 of the MCP call minus p50
of ``retrieve``) and the ratio of the two p50s, all from this one run. The first 10 calls of
each path are a warm-up and are not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import numpy as np
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.cli.query import _load_index
from graphrag_integrations.testing.server_process import stop_process

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "data" / "sample_corpus"
WARM_UP = 10


def queries(count: int) -> list[str]:
    """``count`` queries: the sample questions, then the sample titles, cycled."""
    questions = json.loads((SAMPLE.parent / "sample_questions.json").read_text("utf-8"))
    titles = [p.read_text("utf-8").splitlines()[0] for p in sorted(SAMPLE.glob("*.txt"))]
    pool = [q["question"] for q in questions] + titles
    return [pool[i % len(pool)] for i in range(count)]


def percentiles(seconds: Sequence[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    ms = 1000 * np.asarray(seconds)
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def in_process(index: Path, texts: Sequence[str], k: int) -> list[float]:
    """Seconds of each ``retrieve`` call on the index loaded as ``serve`` loads it."""
    _, retriever, _ = _load_index(index, None)
    times = []
    for i, text in enumerate([*texts[:WARM_UP], *texts]):
        start = time.perf_counter()
        retriever.retrieve(text, k)
        if i >= WARM_UP:
            times.append(time.perf_counter() - start)
    return times


async def timed_calls(
    call: Callable[[str], Awaitable[object]], texts: Sequence[str]
) -> list[float]:
    """Seconds of each sequential ``call(query)`` after the warm-up."""
    times = []
    for i, text in enumerate([*texts[:WARM_UP], *texts]):
        start = time.perf_counter()
        await call(text)
        if i >= WARM_UP:
            times.append(time.perf_counter() - start)
    return times


def serve_argv(index: Path, *extra: str) -> list[str]:
    """``python -m graphrag_integrations.cli serve --index INDEX *extra``."""
    return [
        sys.executable,
        "-m",
        "graphrag_integrations.cli",
        "serve",
        "--index",
        str(index),
        *extra,
    ]


async def over_stdio(index: Path, texts: Sequence[str], k: int, env: dict[str, str]) -> list[float]:
    """Seconds of each tool call to a ``serve`` subprocess over stdio."""
    command, *args = serve_argv(index)
    params = StdioServerParameters(command=command, args=args, env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        (tool,) = (await session.list_tools()).tools
        return await timed_calls(
            lambda q: session.call_tool(tool.name, {"query": q, "k": k}), texts
        )


async def over_http(index: Path, texts: Sequence[str], k: int, env: dict[str, str]) -> list[float]:
    """Seconds of each tool call to a ``serve --http`` subprocess on 127.0.0.1."""
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(
            serve_argv(index, "--http", "--port", "0"),
            env=env,
            stdin=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            deadline = time.monotonic() + 120
            url = None
            while url is None:
                log.seek(0)
                found = re.search(r"at (http://\S+/mcp)", log.read())
                url = found.group(1) if found else None
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the HTTP server did not start")
                await asyncio.sleep(0.1)
            async with (
                streamable_http_client(url) as (read, write, _),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                (tool,) = (await session.list_tools()).tools

                async def call(q: str) -> object:
                    return await session.call_tool(tool.name, {"query": q, "k": k})

                return await timed_calls(call, texts)
        finally:
            stop_process(proc, timeout_s=20)


def report(name: str, times: Sequence[float], base_p50: float) -> None:
    p50, p95 = percentiles(times)
    overhead = p50 - base_p50
    ratio = p50 / base_p50 if base_p50 > 0 else float("inf")
    print(f"{name:<22} {p50:>9.2f} {p95:>9.2f} {overhead:>+13.2f} {ratio:>8.1f}x")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--index", type=Path, help="index folder (default: BM25 of the sample)")
    parser.add_argument("--calls", type=int, default=200, help="timed calls per path")
    parser.add_argument("-k", type=int, default=5, help="passages per call")
    parser.add_argument("--http", action="store_true", help="also time streamable HTTP")
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    texts = queries(args.calls)
    with tempfile.TemporaryDirectory() as tmp:
        index = args.index
        if index is None:
            index = Path(tmp) / "sample"
            BM25Retriever.from_documents([SAMPLE]).persist(index)
        base = in_process(index, texts, args.k)
        paths = {"MCP stdio": asyncio.run(over_stdio(index, texts, args.k, env))}
        if args.http:
            paths["MCP streamable HTTP"] = asyncio.run(over_http(index, texts, args.k, env))
    base_p50, _ = percentiles(base)
    print(f"{args.calls} calls, k={args.k}, index {args.index or 'BM25 of the sample corpus'}")
    print(f"{'path':<22} {'p50 ms':>9} {'p95 ms':>9} {'overhead ms':>13} {'ratio':>9}")
    report("in-process retrieve", base, base_p50)
    for name, times in paths.items():
        report(name, times, base_p50)


if __name__ == "__main__":
    main()
