"""GraphStore: typed multigraph, direction, provenance, GraphML and JSON round trips.

The protocol tests (building, neighbourhoods, provenance removal) run against every
backend: the networkx ``GraphStore`` and ``FalkorDBGraph`` on the real server of the
``falkordb_server`` fixture (the ``backend`` fixture); the rest are ``GraphStore``'s own.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import Removed
from graphrag_integrations.core.graph.serialisation import GRAPH_FORMAT_VERSION
from graphrag_integrations.errors import IndexMismatchError, IndexNotFoundError

Backend = Callable[[], Any]


@pytest.fixture(params=["networkx", pytest.param("falkordb", marks=pytest.mark.falkordb_server)])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """Makes empty graphs of one backend (FalkorDB graphs are deleted afterwards)."""
    if request.param == "networkx":
        yield GraphStore
        return
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    server = request.getfixturevalue("falkordb_server")
    made: list[FalkorDBGraph] = []

    def make() -> FalkorDBGraph:
        made.append(FalkorDBGraph(server.url(f"t_{uuid.uuid4().hex[:12]}")))
        return made[-1]

    yield make
    for graph in made:
        graph._graph.delete()


def _kg(backend: Backend = GraphStore) -> Any:
    """Two documents about Paris; d1 and d2 overlap on 'france'."""
    g = backend()
    g.add_node("paris", "entity", {"d1"}, label="Paris")
    g.add_node("france", "entity", {"d1", "d2"})
    g.add_node("seine", "entity", {"d2"})
    g.add_node("p1", "passage", {"d1"}, text="Paris is the capital of France.")
    g.add_edge("paris", "france", "capital_of", {"d1"})
    g.add_edge("paris", "france", "located_in", {"d1", "d2"}, weight=0.5)
    g.add_edge("seine", "paris", "flows_through", {"d2"})
    g.add_edge("p1", "paris", "mentions", {"d1"})
    g.add_edge("p1", "france", "mentions", {"d1"})
    return g


# -- building ------------------------------------------------------------------------------
def test_typed_nodes_and_counts(backend: Backend) -> None:
    g = _kg(backend)
    assert len(g) == 4
    assert g.nodes() == ["paris", "france", "seine", "p1"]
    assert g.nodes(type="passage") == ["p1"]
    assert g.node_type("p1") == "passage"
    assert g.node("paris") == {"type": "entity", "provenance": {"d1"}, "label": "Paris"}
    assert g.number_of_edges() == 5
    assert g.number_of_edges(type="mentions") == 2
    assert "paris" in g
    assert "rome" not in g
    assert [] not in g


def test_parallel_typed_edges_are_kept(backend: Backend) -> None:
    g = _kg(backend)
    assert sorted(g.edges_between("paris", "france")) == [
        ("paris", "france", "capital_of"),
        ("paris", "france", "located_in"),
    ]
    assert g.edges_between("paris", "france", "located_in") == [("paris", "france", "located_in")]
    assert g.edge("paris", "france", "located_in")["weight"] == 0.5
    # explicit keys give parallel edges of the same type
    g.add_edge("paris", "france", "capital_of", {"d3"}, key="capital_of#2", since=987)
    assert g.number_of_edges(type="capital_of") == 2
    assert len(g.edges_between("paris", "france")) == 3
    assert g.edges("capital_of") == [
        ("paris", "france", "capital_of"),
        ("paris", "france", "capital_of#2"),
    ]


def test_readding_unions_provenance_and_updates_attrs(backend: Backend) -> None:
    g = _kg(backend)
    g.add_node("paris", "entity", {"d3"}, label="Paris, FR", population=2)
    assert g.provenance("paris") == {"d1", "d3"}
    assert g.node("paris")["label"] == "Paris, FR"
    assert g.node("paris")["population"] == 2
    key = g.add_edge("paris", "france", "capital_of", ["d3", "d4"])
    assert key == "capital_of"
    assert g.edge("paris", "france", "capital_of")["provenance"] == {"d1", "d3", "d4"}
    assert g.number_of_edges() == 5
    # returned attribute dicts are copies
    g.node("paris")["provenance"].add("zzz")
    assert "zzz" not in g.provenance("paris")


def test_building_errors(backend: Backend) -> None:
    g = _kg(backend)
    with pytest.raises(ValueError, match="already has type 'entity'"):
        g.add_node("paris", "passage")
    with pytest.raises(KeyError, match="unknown node 'rome'"):
        g.add_edge("paris", "rome", "near")
    with pytest.raises(ValueError, match="already has type 'capital_of'"):
        g.add_edge("paris", "france", "near", key="capital_of")
    with pytest.raises(TypeError, match="not the string"):
        g.add_node("x", "entity", "d1")
    with pytest.raises(ValueError, match="non-empty string"):
        g.add_node("", "entity")
    with pytest.raises(ValueError, match="non-empty string"):
        g.add_node("x", "entity", [""])
    with pytest.raises(ValueError, match="non-empty string"):
        g.add_edge("paris", "france", "")
    with pytest.raises(KeyError):
        g.node("nope")
    with pytest.raises(KeyError):
        g.edge("paris", "france", "nope")
    # a failed add changes nothing
    assert len(g) == 4
    assert g.number_of_edges() == 5


# -- neighbourhoods ------------------------------------------------------------------------
def test_neighbors_direction_and_types(backend: Backend) -> None:
    g = _kg(backend)
    assert g.neighbors("paris") == ["france"]  # parallel edges -> one neighbour
    assert g.neighbors("paris", direction="in") == ["seine", "p1"]
    assert g.neighbors("paris", direction="both") == ["france", "seine", "p1"]
    assert g.neighbors("france") == []
    assert g.neighbors("france", direction="in") == ["paris", "p1"]
    assert g.neighbors("france", edge_type="mentions", direction="in") == ["p1"]
    assert g.neighbors("france", edge_type=["capital_of", "mentions"], direction="in") == [
        "paris",
        "p1",
    ]
    assert g.neighbors("paris", direction="both", node_type="passage") == ["p1"]
    assert g.neighbors("paris", edge_type="flows_through") == []
    with pytest.raises(KeyError):
        g.neighbors("rome")
    with pytest.raises(ValueError, match="direction"):
        g.neighbors("paris", direction="sideways")  # type: ignore[arg-type]


# -- provenance removal --------------------------------------------------------------------
def test_remove_provenance(backend: Backend) -> None:
    g = _kg(backend)
    removed = g.remove_provenance("d1")
    assert isinstance(removed, Removed)
    assert sorted(removed.nodes) == ["p1", "paris"]
    assert sorted(removed.edges) == [
        ("p1", "france", "mentions"),
        ("p1", "paris", "mentions"),
        ("paris", "france", "capital_of"),
        ("paris", "france", "located_in"),
        ("seine", "paris", "flows_through"),
    ]
    assert g.nodes() == ["france", "seine"]
    assert g.provenance("france") == {"d2"}
    assert g.number_of_edges() == 0


def test_remove_provenance_keeps_shared_and_unsourced(backend: Backend) -> None:
    g = _kg(backend)
    g.add_node("global", "root")  # no provenance: never removed
    g.add_edge("global", "france", "has")
    removed = g.remove_provenance("d2")
    assert removed.nodes == ["seine"]
    assert removed.edges == [("seine", "paris", "flows_through")]
    assert g.edge("paris", "france", "located_in")["provenance"] == {"d1"}
    assert g.provenance("france") == {"d1"}
    assert "global" in g
    assert g.remove_provenance("d2") == Removed()
    assert not g.remove_provenance("unknown-doc")


def test_remove_provenance_self_loop_reported_once(backend: Backend) -> None:
    g = backend()
    g.add_node("a", "entity", {"d"})
    g.add_edge("a", "a", "self", {"other"})
    removed = g.remove_provenance("d")
    assert removed.nodes == ["a"]
    assert removed.edges == [("a", "a", "self")]
    assert len(g) == 0


# -- export and persistence ----------------------------------------------------------------
def test_graphml_round_trip(tmp_path: Path) -> None:
    g = _kg()
    g.add_node("paris", "entity", aliases=["Paname", "City of Light"], info={"pop": 2}, gone=None)
    path = tmp_path / "out" / "graph.graphml"
    g.to_graphml(path)
    back = nx.read_graphml(path)
    assert isinstance(back, nx.MultiDiGraph)
    assert set(back.nodes()) == set(g.nodes())
    assert set(back.edges(keys=True)) == set(g.edges())
    paris = back.nodes["paris"]
    assert paris["type"] == "entity"
    assert json.loads(paris["provenance"]) == ["d1"]
    assert json.loads(paris["aliases"]) == ["Paname", "City of Light"]
    assert json.loads(paris["info"]) == {"pop": 2}
    assert "gone" not in paris
    assert paris["label"] == "Paris"
    assert json.loads(back.nodes["france"]["provenance"]) == ["d1", "d2"]
    located = back.edges["paris", "france", "located_in"]
    assert located["weight"] == 0.5
    assert json.loads(located["provenance"]) == ["d1", "d2"]
    # the store itself is unchanged by the export
    assert g.provenance("france") == {"d1", "d2"}


def test_save_load_equality(tmp_path: Path) -> None:
    g = _kg()
    g.add_edge("paris", "france", "capital_of", {"d3"}, key="k2", note="parallel")
    path = tmp_path / "g.json"
    g.save(path)
    loaded = GraphStore.load(path)
    assert loaded == g
    assert loaded.edges() == g.edges()
    assert loaded.nodes() == g.nodes()
    assert loaded.edge("paris", "france", "k2")["note"] == "parallel"
    loaded.add_node("paris", "entity", {"d9"})
    assert loaded != g
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format_version"] == GRAPH_FORMAT_VERSION
    assert data["nodes"][1] == {
        "id": "france",
        "type": "entity",
        "provenance": ["d1", "d2"],
        "attrs": {},
    }
    assert [p.name for p in tmp_path.iterdir()] == ["g.json"]


def test_save_unserialisable_attribute_keeps_previous(tmp_path: Path) -> None:
    g = _kg()
    path = tmp_path / "g.json"
    g.save(path)
    g.add_node("paris", "entity", blob=object())
    with pytest.raises(TypeError):
        g.save(path)
    assert GraphStore.load(path) == _kg()


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError):
        GraphStore.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    with pytest.raises(IndexMismatchError, match="not valid JSON"):
        GraphStore.load(bad)
    bad.write_text(json.dumps({"nodes": []}))
    with pytest.raises(IndexMismatchError, match="not a saved GraphStore"):
        GraphStore.load(bad)
    bad.write_text(json.dumps({"format_version": GRAPH_FORMAT_VERSION + 1, "nodes": []}))
    with pytest.raises(IndexMismatchError, match="newer than supported"):
        GraphStore.load(bad)
    bad.write_text(
        json.dumps(
            {
                "format_version": 1,
                "nodes": [],
                "edges": [
                    {"source": "a", "target": "b", "key": "r", "type": "r", "provenance": []}
                ],
            }
        )
    )
    with pytest.raises(IndexMismatchError, match="malformed"):
        GraphStore.load(bad)


def test_empty_graph_round_trips(tmp_path: Path) -> None:
    g = GraphStore()
    g.save(tmp_path / "e.json")
    assert GraphStore.load(tmp_path / "e.json") == g
    assert len(GraphStore.load(tmp_path / "e.json")) == 0
    g.to_graphml(tmp_path / "e.graphml")
    assert nx.read_graphml(tmp_path / "e.graphml").number_of_nodes() == 0
