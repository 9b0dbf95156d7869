"""A real server process on 127.0.0.1 for tests and benchmarks, that a test may kill,
restart and freeze.

:class:`ServerProcess` is what the launchers of the package's test servers share
(:class:`~graphrag_integrations.testing.falkordb_server.FalkorDBServer`,
:class:`~graphrag_integrations.testing.chroma_server.ChromaServer`): a free port, a working
folder (temporary unless given, removed by :meth:`~ServerProcess.stop`) with the server's log,
a start that waits (a bounded loop) until the server answers, and for fault-injection tests
:meth:`~ServerProcess.kill` (``kill -9``), :meth:`~ServerProcess.restart` on the same port,
with its data or empty, and :meth:`~ServerProcess.pause` / :meth:`~ServerProcess.resume`
(``SIGSTOP`` / ``SIGCONT``). :class:`SilentServer` is a port that accepts connections and
never answers. :func:`stop_process` stops any other child process.

Each server runs in its own process group (``start_new_session``), so a signal reaches the
server and any process it started.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TypeVar

#: Seconds :meth:`ServerProcess.stop` waits after ``SIGTERM`` (and then after ``SIGKILL``).
STOP_TIMEOUT_S = 15.0

S = TypeVar("S", bound="ServerProcess")


def stop_process(proc: subprocess.Popen[bytes], timeout_s: float = STOP_TIMEOUT_S) -> None:
    """Stop a child process: ``SIGTERM``, then ``SIGKILL`` if it still runs ``timeout_s``
    seconds later."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 at the time of the call."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerStartError(RuntimeError):
    """The server could not be started (the message ends with its log's tail)."""


class ServerProcess:
    """A server process on 127.0.0.1 (module notes); subclasses say how to start it
    (:meth:`command`) and how to tell that it answers (:meth:`answers`).

    Parameters
    ----------
    port : int, optional
        Port to listen on; ``None``: a free one.
    directory : str or Path, optional
        Working folder (log, data); ``None``: a temporary folder removed by :meth:`stop`.

    Attributes
    ----------
    host : str
        Always ``"127.0.0.1"``.
    port : int
        The listening port.
    """

    host = "127.0.0.1"
    #: What messages call the server.
    label = "server"
    #: Seconds :meth:`start` waits for the server to answer.
    start_timeout_s = 60.0
    #: The error :meth:`start` raises.
    start_error: type[RuntimeError] = ServerStartError

    def __init__(self, *, port: int | None = None, directory: str | Path | None = None) -> None:
        self.port = port if port is not None else free_port()
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix=f"{self.label.lower()}-"))
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def log_path(self) -> Path:
        """The server's log file."""
        return self.directory / "server.log"

    def command(self) -> Sequence[str]:
        """The command line that starts the server (raise :attr:`start_error` when it
        cannot)."""
        raise NotImplementedError

    def environment(self) -> Mapping[str, str] | None:
        """The server's environment (``None``: this process's)."""
        return None

    def answers(self) -> bool:
        """Whether the server answers (polled by :meth:`start`)."""
        raise NotImplementedError

    def start(self: S) -> S:
        """Start the server and wait until it answers (:attr:`start_error` otherwise)."""
        command = list(self.command())
        self.directory.mkdir(parents=True, exist_ok=True)
        env = self.environment()
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=None if env is None else dict(env),
            )
        deadline = time.monotonic() + self.start_timeout_s
        while not self.answers():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                code = self._proc.poll()
                self.stop(remove=False)
                tail = self._log_tail()
                if self._own_dir:
                    shutil.rmtree(self.directory, ignore_errors=True)
                raise self.start_error(
                    f"{self.label} did not start on port {self.port} (exit {code}):\n{tail}"
                )
            time.sleep(0.1)
        return self

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self, *, remove: bool = True) -> None:
        """Stop the server (``SIGTERM``, then ``SIGKILL``) and remove a temporary folder
        (unless ``remove=False``)."""
        self.resume()  # a frozen server cannot handle SIGTERM
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=STOP_TIMEOUT_S)
        if remove and self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    def kill(self) -> None:
        """``kill -9`` the server (its folder and data are kept)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=STOP_TIMEOUT_S)

    def restart(self: S, *, empty: bool = False) -> S:
        """Kill the server if it runs and start it again on the same port: with its data, or
        ``empty`` (every file of its folder but the log deleted first)."""
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

    def __enter__(self: S) -> S:
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
