"""The compliance suite with the graph in FalkorDB: :class:`FalkorDBComplianceTests`.

Mixed in before a method's :class:`~graphrag_integrations.testing.compliance.IndexComplianceTests`
subclass, it gives every index the suite builds a fresh graph (``graph_store=
"falkordb://127.0.0.1:PORT/<name>"``) on a real FalkorDB server, and deletes the graphs of a
test when it ends. The server is the ``falkordb_server`` fixture the test session provides (a
:class:`~graphrag_integrations.testing.falkordb_server.FalkorDBServer`; this package's
``tests/conftest.py`` starts one per session)::

    from graphrag_integrations.testing.graph_store_compliance import FalkorDBComplianceTests
    from tests.compliance import test_clue  # not imported by name: pytest would collect it twice


    class TestClueFalkorDB(FalkorDBComplianceTests, test_clue.TestClueCompliance):
        pass

A build that resumes a checkpoint (``checkpoint_dir=``) gets the graph of the build it
resumes (the name is derived from the checkpoint folder), as a user re-running the same
command would.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

#: Prefix of the graphs the suite makes (``<prefix>_<32 hex digits>``).
GRAPH_PREFIX = "compliance"


class FalkorDBComplianceTests:
    """Mixin: each index of the compliance suite keeps its graph in its own FalkorDB graph.

    Needs the ``falkordb_server`` fixture (see the module docstring). Graphs are named
    :data:`GRAPH_PREFIX` ``_<hex>`` and deleted at the end of the test that made them.
    """

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.falkordb_server]
    _falkordb: Any = None
    _graphs: list[str]

    @pytest.fixture(autouse=True)
    def _falkordb_graphs(self, falkordb_server: Any) -> Iterator[None]:
        """Bind the session's server to this test; delete its graphs afterwards."""
        self._falkordb = falkordb_server
        self._graphs = []
        try:
            yield
        finally:
            drop_graphs(falkordb_server, self._graphs)

    def make_graph_store(self, options: dict[str, Any]) -> Any:
        """A new graph for each build; a checkpointed build's graph is its folder's."""
        if self._falkordb is None:
            raise RuntimeError("FalkorDBComplianceTests needs the falkordb_server fixture")
        checkpoint = options.get("checkpoint_dir")
        if checkpoint is not None:
            digest = hashlib.sha256(str(checkpoint).encode()).hexdigest()[:32]
            name = f"{GRAPH_PREFIX}_{digest}"
        else:
            name = f"{GRAPH_PREFIX}_{uuid.uuid4().hex}"
        if name not in self._graphs:
            self._graphs.append(name)
        return self._falkordb.url(name)


def drop_graphs(server: Any, names: list[str]) -> list[str]:
    """Delete the graphs ``names`` that exist on ``server`` (a ``FalkorDBServer``); returns
    those deleted. Other graphs are never touched."""
    from graphrag_integrations.core.falkordb_connection import connect, parse_falkordb_url

    if not names:
        return []
    client = connect(parse_falkordb_url(server.url(names[0])))
    try:
        existing = set(client.list_graphs())
        dropped = [name for name in names if name in existing]
        for name in dropped:
            client.select_graph(name).delete()
    finally:
        client.connection.close()
    return dropped
