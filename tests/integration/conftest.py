"""Real Chroma servers for the tests marked ``chroma_server``.

:func:`chroma_server` (session scope) starts ``chroma run --host 127.0.0.1 --port <free port>
--path <tmp dir>`` once (:class:`~graphrag_integrations.testing.chroma_server.ChromaServer`),
waits for its heartbeat, and stops it at the end of the session (and kills it if it does not
stop, or if the start fails); :func:`killable_chroma` is a server of one test, which the test
may kill, restart and freeze. Without the ``chroma`` executable the tests skip, unless
``GRAPHRAG_REQUIRE_CHROMA_SERVER=1`` (set by ``.ci/test.sh``) makes that a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from graphrag_integrations.testing.chroma_server import (
    ChromaServer,
    ChromaServerError,
    chroma_executable,
)

REQUIRE_ENV = "GRAPHRAG_REQUIRE_CHROMA_SERVER"


def _require_chroma() -> None:
    if chroma_executable() is None:
        reason = "the `chroma` executable (chromadb's CLI) is not installed"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{reason}, and {REQUIRE_ENV}=1 requires the Chroma server tests")
        pytest.skip(reason)


def _started(server: ChromaServer) -> ChromaServer:
    try:
        return server.start()
    except ChromaServerError as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """A ``chroma run`` server on 127.0.0.1 for the whole session (see the module notes)."""
    _require_chroma()
    server = _started(ChromaServer(directory=tmp_path_factory.mktemp("chroma-server")))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def killable_chroma() -> Iterator[ChromaServer]:
    """A Chroma server of this test alone (its data in a temporary folder) that the test may
    kill, restart and freeze; always stopped at the end."""
    _require_chroma()
    server = _started(ChromaServer())
    try:
        yield server
    finally:
        server.stop()
