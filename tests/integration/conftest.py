"""A real Chroma server for the tests marked ``chroma_server``.

:func:`chroma_server` (session scope) starts ``chroma run --host 127.0.0.1 --port <free port>
--path <tmp dir>`` once, waits for its heartbeat, and stops it at the end of the session (and
kills it if it does not stop, or if the start fails). Without the ``chroma`` executable the
tests skip, unless ``GRAPHRAG_REQUIRE_CHROMA_SERVER=1`` (set by ``.ci/test.sh``) makes that a
failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REQUIRE_ENV = "GRAPHRAG_REQUIRE_CHROMA_SERVER"
START_TIMEOUT_S = 90.0


@dataclass(frozen=True)
class ChromaServer:
    """Where the test server listens."""

    host: str
    port: int
    path: Path


def chroma_executable() -> str | None:
    """The ``chroma`` CLI next to this Python (the venv's), else on ``PATH``."""
    beside = Path(sys.executable).parent / "chroma"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("chroma")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _alive(port: int) -> bool:
    url = f"http://127.0.0.1:{port}/api/v2/heartbeat"
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:  # loopback only
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=15)


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """A ``chroma run`` server on 127.0.0.1 for the whole session (see the module notes)."""
    exe = chroma_executable()
    if exe is None:
        reason = "the `chroma` executable (chromadb's CLI) is not installed"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{reason}, and {REQUIRE_ENV}=1 requires the Chroma server tests")
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("chroma-server")
    port = _free_port()
    log_path = root / "server.log"
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    command = [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(root / "db")]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _alive(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-2000:]
                pytest.fail(f"`{' '.join(command)}` did not start (exit {proc.poll()}):\n{tail}")
            time.sleep(0.25)
        yield ChromaServer("127.0.0.1", port, root / "db")
    finally:
        _stop(proc)
