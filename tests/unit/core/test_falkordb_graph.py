"""FalkorDBGraph on a real FalkorDB server: what the shared protocol tests of
test_graph_store.py do not cover (same results as GraphStore under random edits, exact value
round trips, one round trip per batched read, new-graph refusal, pointer files, copies)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.graph import falkordb_cypher as cy
from graphrag_integrations.core.graph.backends import resolve_graph_backend
from graphrag_integrations.core.graph.falkordb_connection import connect, parse_falkordb_url
from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.errors import (
    IndexExistsError,
    IndexMismatchError,
    IndexNotFoundError,
    InvalidArgumentError,
)

pytestmark = pytest.mark.falkordb_server


@pytest.fixture
def url(falkordb_url: str) -> str:
    """A fresh graph on the session server, deleted afterwards (``falkordb_url``, conftest)."""
    return falkordb_url


def _snapshot(g: Any) -> dict[str, Any]:
    """Everything the protocol can observe, in order."""
    nodes = g.nodes()
    out: dict[str, Any] = {
        "nodes": nodes,
        "typed": {t: g.nodes(t) for t in ("a", "b")},
        "edges": g.edges(),
        "len": len(g),
        "n_edges": g.number_of_edges(),
        "n_r": g.number_of_edges("r"),
        "data": g.nodes_data(nodes),
        "edge_data": {e: g.edge(*e) for e in g.edges()},
    }
    for direction in ("out", "in", "both"):
        out[direction] = g.neighbors_many(nodes, direction=direction)
        out[direction + "_r"] = g.neighbors_many(nodes, "r", direction, node_type="a")
    return out


class _SmallBatches(FalkorDBGraph):
    batch_size = 3  # flushes (and UNWIND batches) cut through merges of the same edge pair


@pytest.mark.parametrize("backend", [FalkorDBGraph, _SmallBatches])
def test_random_edits_give_graphstore_results(url: str, backend: type[FalkorDBGraph]) -> None:
    """Adds, re-adds, parallel and self-loop edges, removals and re-adds in random order:
    every result and every observable order equals the networkx store's."""
    random_edits(backend(url), seed=7)


def random_edits(ours: FalkorDBGraph, seed: int) -> None:
    """Apply the same random edits to ``ours`` and a GraphStore, comparing all along."""
    rng = random.Random(seed)
    ref = GraphStore()
    ids = [f"n{i}" for i in range(9)]
    docs = ["d1", "d2", "d3"]
    for step in range(260):
        op = rng.random()
        if op < 0.3:
            node = rng.choice(ids)
            kind = "a" if int(node[1:]) % 3 else "b"
            prov = rng.sample(docs, rng.randint(0, 2))
            attrs = {"w": rng.randint(0, 5)} if rng.random() < 0.5 else {}
            for g in (ours, ref):
                g.add_node(node, kind, prov, **attrs)
        elif op < 0.75:
            u, v = rng.choice(ids), rng.choice(ids)
            etype = rng.choice(["r", "s"])
            key = rng.choice([None, None, "k1", "k2"])
            prov = rng.sample(docs, rng.randint(0, 2))
            results: list[object] = []
            for g in (ours, ref):
                try:
                    results.append(g.add_edge(u, v, etype, prov, key=key, at=step))
                except (KeyError, ValueError) as error:
                    results.append(type(error))
            assert results[0] == results[1], (step, u, v, etype, key)
        elif op < 0.85:
            existing = ref.edges()
            picked = [*rng.sample(existing, min(len(existing), 2)), ("n0", "n1", "nope")]
            assert ours.remove_edges(picked) == ref.remove_edges(picked)
        else:
            doc = rng.choice(docs)
            assert ours.remove_provenance(doc) == ref.remove_provenance(doc), step
        if step % 40 == 39:
            assert _snapshot(ours) == _snapshot(ref), step
    assert _snapshot(ours) == _snapshot(ref)
    assert ours.to_graph_store() == ref
    ours.flush()
    assert _snapshot(FalkorDBGraph.open(ours.location)) == _snapshot(ref)  # no write caches


ODD_VALUES: dict[str, Any] = {
    "text": "plain",
    "nul": "a\x00b",
    "marker": "\x02looks encoded",
    "separator": "a\x01b",
    "spaces": " padded\t",
    "quotes": 'it\'s "quoted" \\ back\nslash `tick` $param',
    "unicode": "Zürich 東京 😀",
    "surrogate": "bad \ud800 half",
    "empty": "",
    "int": 7,
    "big": 2**70,
    "neg": -(2**63),
    "float": 0.1,
    "precise": 1.0000000000000002,
    "inf": math.inf,
    "none": None,
    "bool": True,
    "list": [1, "a", [2.5, None]],
    "tuple": (1, ("x", 2)),
    "set": {"p", "q"},
    "frozen": frozenset({1}),
    "dict": {"a": {"b": [1, 2]}, "c": (3,)},
    "int_keys": {1: "one", "\x02": "marker key"},
    "weird name `%60` %": "name escaped",
}


def test_attribute_values_round_trip_exactly(url: str) -> None:
    g = FalkorDBGraph(url)
    g.add_node("x", "t", ["d\x00oc"], **ODD_VALUES)
    g.add_node("\x01odd id\x00", "t\x00ype")
    _ = g.add_edge("x", "\x01odd id\x00", "rel", key="k`ey", **ODD_VALUES)
    data = g.node("x")
    assert data == {"type": "t", "provenance": {"d\x00oc"}, **ODD_VALUES}
    assert all(type(data[k]) is type(v) for k, v in ODD_VALUES.items())
    assert list(data)[2:] == list(ODD_VALUES)  # attribute order kept
    assert g.edge("x", "\x01odd id\x00", "k`ey")["tuple"] == (1, ("x", 2))
    assert g.neighbors("x") == ["\x01odd id\x00"]
    assert g.nodes("t\x00ype") == ["\x01odd id\x00"]
    with pytest.raises(TypeError, match="attribute 'blob': a object cannot be stored"):
        g.add_node("x", "t", blob=object())
    assert "blob" not in g.node("x")


def test_ids_the_server_index_would_confuse_stay_distinct(url: str) -> None:
    """FalkorDB's index ignores whitespace at the ends and splits at "\x01": an exact
    lookup of "a" would also find "a " - the encoding keeps every id apart."""
    g = FalkorDBGraph(url)
    ids = ["a", "a ", " a", "\ta", "a\x01b", "a\x02", "\x02a"]
    for i, id in enumerate(ids):
        g.add_node(id, "t" if i % 2 else " t", n=i)
    g.flush()
    reopened = FalkorDBGraph.open(url)  # no write cache: every lookup goes to the server
    assert reopened.nodes() == ids
    assert [reopened.node(id)["n"] for id in ids] == list(range(len(ids)))
    assert all(id in reopened for id in ids) and "b" not in reopened
    assert reopened.nodes("t") == ids[1::2]
    with pytest.raises(ValueError, match="already has type ' t'"):
        reopened.add_node("a", "t")


def test_batched_reads_take_one_round_trip(url: str) -> None:
    g = FalkorDBGraph(url)
    for i in range(30):
        g.add_node(f"n{i}", "t")
        if i:
            g.add_edge(f"n{i - 1}", f"n{i}", "r")
    g.flush()
    g = FalkorDBGraph.open(url)  # a reader: nothing it wrote to answer from
    queries: list[str] = []
    real = g._graph.query

    def counted(text: str, params: Any = None) -> Any:
        queries.append(text)
        return real(text, params)

    g._graph.query = counted
    ids = [f"n{i}" for i in range(30)]
    assert len(g.neighbors_many(ids, direction="both")) == 30
    assert len(g.nodes_data(ids)) == 30
    assert len(queries) == 2
    with pytest.raises(KeyError, match="unknown node 'zz'"):
        g.neighbors_many(["n1", "zz", "yy"])


def test_writes_are_buffered_until_a_read_or_flush(url: str) -> None:
    g = FalkorDBGraph(url)
    other = FalkorDBGraph.open(url)
    g.add_node("a", "t", ["d"])
    g.add_node("b", "t")
    g.add_edge("a", "b", "r")
    assert len(other) == 0  # still queued in g
    with pytest.raises(KeyError):  # checked at once, from the write cache
        g.add_edge("a", "c", "r")
    g.flush()
    assert other.nodes() == ["a", "b"] and other.neighbors("a") == ["b"]


def test_a_new_index_refuses_a_graph_with_data(url: str) -> None:
    first = FalkorDBGraph(url)
    first.add_node("a", "t")
    first.flush()
    backend = FalkorDBGraph.at(url)
    with pytest.raises(IndexExistsError, match=r"holds 1 nodes; pass overwrite=True") as error:
        backend()
    assert "\n" not in str(error.value)
    assert FalkorDBGraph.open(url).nodes() == ["a"]  # untouched
    from_object = resolve_graph_backend(FalkorDBGraph.open(url))  # a graph object: its place
    assert issubclass(from_object, FalkorDBGraph)
    with pytest.raises(IndexExistsError):
        from_object()
    replaced = resolve_graph_backend(url, overwrite=True)()
    assert len(replaced) == 0
    # someone else's graph (no meta node of ours) is refused the same way
    client = connect(parse_falkordb_url(url))
    client.select_graph(parse_falkordb_url(url).graph).query("CREATE (:Person {name: 'x'})")
    with pytest.raises(IndexExistsError, match="holds 1 nodes"):
        FalkorDBGraph(url)
    # an empty graph of ours is reused without asking
    replaced = FalkorDBGraph(url, overwrite=True)
    assert len(FalkorDBGraph(url)) == 0
    with pytest.raises(InvalidArgumentError, match="needs a location"):
        FalkorDBGraph()


def test_pointer_file_save_and_load(url: str, tmp_path: Path) -> None:
    with_password = url.replace("falkordb://", "falkordb://someone:s3cret@")
    g = FalkorDBGraph.at(url)()
    g.add_node("a", "t", ["d"], label="A")
    g.add_node("b", "t")
    _ = g.add_edge("a", "b", "r", ["d"])
    path = tmp_path / "graph.pointer.json"
    g.save(path)
    text = path.read_text(encoding="utf-8")
    assert "s3cret" not in text and "someone" not in text
    pointer = json.loads(text)
    assert pointer["graph"] == parse_falkordb_url(url).graph
    assert (pointer["nodes"], pointer["edges"], pointer["graph_id"]) == (2, 1, g.graph_id)
    back = FalkorDBGraph.load(path)  # a new client
    assert back.nodes_data(["a", "b"]) == g.nodes_data(["a", "b"])
    assert back.neighbors("a") == ["b"]
    back.add_node("c", "t")  # an opened graph checks the server for nodes it has not seen
    with pytest.raises(ValueError, match="already has type 't'"):
        back.add_node("a", "u")
    assert back.add_edge("c", "a", "r") == "r"
    back.flush()
    assert FalkorDBGraph.open(url).neighbors("a", direction="in") == ["c"]
    assert "s3cret" not in repr(FalkorDBGraph.at(with_password))
    # the graph replaced since: refused
    FalkorDBGraph(url, overwrite=True)
    with pytest.raises(IndexMismatchError, match="now holds another graph"):
        FalkorDBGraph.load(path)
    # gone
    FalkorDBGraph.open(url)._graph.delete()
    with pytest.raises(IndexMismatchError, match="does not exist"):
        FalkorDBGraph.load(path)
    with pytest.raises(IndexNotFoundError):
        FalkorDBGraph.load(tmp_path / "missing.json")
    (tmp_path / "g.json").write_text(json.dumps({"format_version": 1, "nodes": []}))
    with pytest.raises(IndexMismatchError, match="not a FalkorDB graph pointer"):
        FalkorDBGraph.load(tmp_path / "g.json")


def test_copy_from_a_saved_networkx_graph(url: str, tmp_path: Path) -> None:
    ref = GraphStore()
    for n in ("c", "a", "b"):
        ref.add_node(n, "t", [f"d{n}"], name=n.upper())
    ref.add_edge("c", "b", "r", ["dc"])
    ref.add_edge("a", "b", "r", ["da"], weight=0.5)
    ref.add_edge("a", "b", "s", ["db"], key="s2")
    ref.add_edge("a", "a", "loop")
    ref.save(tmp_path / "g.json")
    loaded = GraphStore.load(tmp_path / "g.json")
    g = FalkorDBGraph(url)
    g.copy_from(loaded)
    assert g.to_graph_store() == ref
    assert _snapshot(g) == _snapshot(loaded)
    again = FalkorDBGraph(url.rsplit("/", 1)[0] + f"/{parse_falkordb_url(url).graph}_2")
    again.copy_from(g)  # FalkorDB to FalkorDB, page by page
    assert _snapshot(again) == _snapshot(loaded)
    again._graph.delete()
    g.to_graphml(tmp_path / "g.graphml")
    assert (tmp_path / "g.graphml").read_bytes() == _graphml(ref, tmp_path)


def _graphml(graph: GraphStore, tmp_path: Path) -> bytes:
    graph.to_graphml(tmp_path / "ref.graphml")
    return (tmp_path / "ref.graphml").read_bytes()


def test_remove_nodes_takes_their_edges_and_nothing_else(url: str) -> None:
    g = FalkorDBGraph(url)
    for node in ("a", "b", "c"):
        g.add_node(node, "t", ["d"])
    g.add_edge("a", "b", "r", ["d"])
    g.add_edge("b", "c", "s", ["d"], key="k")
    g.add_edge("a", "c", "r", ["d"])
    g.add_node("q", "t")  # still queued: flushed first
    assert g.remove_nodes(["b", "zz", "q", "b"]) == ["b", "q"]
    assert g.nodes() == ["a", "c"] and g.edges() == [("a", "c", "r")]
    assert "b" not in g and g.neighbors("a") == ["c"]
    g.add_node("b", "u")  # gone from the write caches: another type is fine now
    g.add_edge("b", "c", "s", key="k")
    g.flush()
    assert FalkorDBGraph.open(url).neighbors("b") == ["c"]
    assert g.remove_nodes([]) == []


def test_forgetting_a_document_reads_it_through_the_provenance_indexes(url: str) -> None:
    g = FalkorDBGraph.at(url)()
    for doc in ("d1", "d2"):
        g.add_node(f"{doc}-a", "t", {doc})
        g.add_node("shared", "t", {doc})
        g.add_edge(f"{doc}-a", "shared", "r", {doc})
    g.flush()
    location = parse_falkordb_url(url)
    raw = connect(location).select_graph(location.graph)
    plan = str(raw.explain(cy.PROV_EDGES, {"doc": "d1"})) + str(
        raw.explain(cy.PROV_NODES, {"doc": "d1"})
    )
    assert "Label Scan" not in plan and plan.count("Index Scan") == 2
    # a graph made before the indexes existed gets them when opened
    raw.query("DROP INDEX ON :Node(_prov)")
    raw.query("DROP INDEX FOR ()-[e:EDGE]-() ON (e._prov)")
    reopened = FalkorDBGraph.open(url)
    indexed = {(label, tuple(props)) for label, props in raw.query(cy.INDEXED).result_set}
    assert {label for label, props in indexed if "_prov" in props} == {"Node", "EDGE"}
    removed = reopened.remove_provenance("d1")
    assert removed.nodes == ["d1-a"] and removed.edges == [("d1-a", "shared", "r")]
    assert reopened.provenance("shared") == {"d2"}
