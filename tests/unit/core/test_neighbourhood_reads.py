"""Batched edge reads: the networkx store, a real FalkorDB graph and the generic fallback agree."""

from __future__ import annotations

from typing import Any

import pytest

from graphrag_integrations.core.graph.neighbourhood_reads import edge_counts, incident_edges
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import GraphBackend

IDS = ["a", "b", "c", "loop", "lonely", "unknown"]


def fill(graph: GraphBackend) -> GraphBackend:
    """Parallel edges, a self-loop, an isolated node."""
    for n in ("a", "b", "c", "loop", "lonely"):
        graph.add_node(n, "entity", {"d"})
    for u, v, k in [("a", "b", "r"), ("a", "b", "s"), ("c", "a", "r"), ("loop", "loop", "r")]:
        graph.add_edge(u, v, k, {"d"}, key=k)
    return graph


def reads(graph: GraphBackend) -> Any:
    edges = {d: incident_edges(graph, IDS, d) for d in ("out", "in")}
    return {d: {i: sorted(e) for i, e in rows.items()} for d, rows in edges.items()}, edge_counts(
        graph, IDS
    )


class Generic:
    """A backend with only the protocol's reads plus ``edges_between``."""

    def __init__(self, graph: GraphStore) -> None:
        self._g = graph

    def __contains__(self, node: object) -> bool:
        return node in self._g

    def neighbors_many(self, *args: Any) -> dict[str, list[str]]:
        return self._g.neighbors_many(*args)

    def edges_between(self, u: str, v: str) -> list[tuple[str, str, str]]:
        return self._g.edges_between(u, v)


def test_networkx_reads() -> None:
    edges, counts = reads(fill(GraphStore()))
    assert edges["out"]["a"] == [("a", "b", "r"), ("a", "b", "s")]
    assert edges["in"]["a"] == [("c", "a", "r")]
    assert edges["out"]["loop"] == edges["in"]["loop"] == [("loop", "loop", "r")]
    assert edges["out"]["unknown"] == edges["in"]["lonely"] == []
    assert counts == {
        "a": (2, 1),
        "b": (0, 2),
        "c": (1, 0),
        "loop": (1, 1),
        "lonely": (0, 0),
        "unknown": (0, 0),
    }
    with pytest.raises(ValueError, match="direction"):
        incident_edges(GraphStore(), ["a"], "both")  # type: ignore[arg-type]


def test_generic_backend_reads_like_networkx() -> None:
    store = fill(GraphStore())
    assert reads(Generic(store)) == reads(store)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="edges_between"):
        incident_edges(object(), ["a"], "out")  # type: ignore[arg-type]


@pytest.mark.falkordb_server
def test_falkordb_reads_like_networkx(falkordb_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphrag_integrations.core.graph import neighbourhood_reads
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    graph = fill(FalkorDBGraph.at(falkordb_url)())
    expected = reads(fill(GraphStore()))
    assert reads(graph) == expected
    reopened = FalkorDBGraph.open(falkordb_url)  # nothing answered from the writer's memory
    monkeypatch.setattr(neighbourhood_reads, "batch_size", 2)  # several queries per read
    assert reads(reopened) == expected
