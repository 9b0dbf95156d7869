"""Start a real Chroma server (``chroma run``) on 127.0.0.1 for tests and benchmarks.

:class:`ChromaServer` runs chromadb's own CLI, ``chroma run --host 127.0.0.1 --port <port>
--path <folder>/db``, with telemetry off, waits (a bounded loop) until its heartbeat answers,
and stops it (``SIGTERM``, then ``SIGKILL``). Its data lives in the folder, so a server killed
with ``kill -9`` (:meth:`~ChromaServer.kill`) and restarted on the same port
(:meth:`~ChromaServer.restart`) has what it wrote; ``restart(empty=True)`` deletes it first;
:meth:`~ChromaServer.pause` / :meth:`~ChromaServer.resume` freeze and thaw it (the process
handling of :class:`~graphrag_integrations.testing.server_process.ServerProcess`).

Examples
--------
>>> from graphrag_integrations.testing.chroma_server import ChromaServer, chroma_executable
>>> if chroma_executable() is not None:  # doctest: +SKIP
...     with ChromaServer() as server:
...         factory = ChromaVectors(host=server.host, port=server.port)
"""

from __future__ import annotations

import os
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from graphrag_integrations.testing.server_process import ServerProcess, ServerStartError

#: Seconds :meth:`ChromaServer.start` waits for the first heartbeat.
START_TIMEOUT_S = 90.0


class ChromaServerError(ServerStartError):
    """The server could not be started (the message ends with its log's tail)."""


def chroma_executable() -> str | None:
    """The ``chroma`` CLI next to this Python (the venv's), else on ``PATH``."""
    beside = Path(sys.executable).parent / "chroma"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("chroma")


class ChromaServer(ServerProcess):
    """A ``chroma run`` server on 127.0.0.1 (see the module docstring).

    Its arguments and attributes are the :class:`ServerProcess` ones (``port``,
    ``directory``: the log and ``db/``, ``host``), and :attr:`path`, the data folder.
    """

    label = "Chroma"
    start_timeout_s = START_TIMEOUT_S
    start_error = ChromaServerError

    @property
    def path(self) -> Path:
        """The server's data folder (``--path``)."""
        return self.directory / "db"

    def command(self) -> Sequence[str]:
        exe = chroma_executable()
        if exe is None:
            raise ChromaServerError("the `chroma` executable (chromadb's CLI) is not installed")
        return [exe, "run", "--host", self.host, "--port", str(self.port), "--path", str(self.path)]

    def environment(self) -> Mapping[str, str]:
        return {**os.environ, "ANONYMIZED_TELEMETRY": "False"}

    def answers(self) -> bool:
        url = f"http://{self.host}:{self.port}/api/v2/heartbeat"
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:  # loopback only
                return bool(reply.status == 200)
        except (urllib.error.URLError, OSError):
            return False
