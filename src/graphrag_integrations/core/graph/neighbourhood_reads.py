"""Batched reads of the edges at given nodes, for query-time neighbourhood reads.

The ``GraphBackend`` protocol's batched ``neighbors_many`` gives the distinct neighbours of
nodes, not the edges: a method whose edges carry what it needs in their keys (ReG: one edge
per triple, key = the relation) must read the edges themselves. Two batched reads do it for
the backends the package ships, without reading the rest of the graph:

* :func:`incident_edges`: ``{id: [(source, target, key), ...]}`` of the edges leaving
  (``"out"``) or entering (``"in"``) each node;
* :func:`edge_counts`: ``{id: (edges leaving, edges entering)}`` (parallel edges count
  separately, a self-loop once each way), to skip reading the edges of hubs.

The networkx :class:`~graphrag_integrations.core.graph.networkx_store.GraphStore` answers from its
graph; a FalkorDB graph with one Cypher query per :attr:`batch_size` nodes; any other backend
with ``neighbors_many`` plus its ``edges_between`` (one call per neighbour). Edge order is not
specified (callers sort). Unknown nodes have no edges.

:class:`~graphrag_integrations.core.lru.VersionedLRU` is the bounded cache of such reads.

Examples
--------
>>> from graphrag_integrations.core.graph.networkx_store import GraphStore
>>> g = GraphStore()
>>> for n in ("a", "b"):
...     g.add_node(n, "entity")
>>> _ = g.add_edge("a", "b", "r", key="r"), g.add_edge("a", "b", "s", key="s")
>>> incident_edges(g, ["a", "b"], "out")
{'a': [('a', 'b', 'r'), ('a', 'b', 's')], 'b': []}
>>> edge_counts(g, ["a", "b"])
{'a': (2, 0), 'b': (0, 2)}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.graph import falkordb_cypher as cy
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import EdgeKey, GraphBackend

__all__ = ["batch_size", "edge_counts", "falkordb_reader", "incident_edges"]

#: Nodes per query of a database backend.
batch_size = 500

# Cypher over the FalkorDB layout of core.graph.falkordb_cypher (labels NODE / EDGE)
_OUT = (
    f"UNWIND $ids AS id MATCH (a:{cy.NODE} {{_id: id}})-[e:{cy.EDGE}]->(b:{cy.NODE}) "
    "RETURN a._id, b._id, e._key"
)
_IN = (
    f"UNWIND $ids AS id MATCH (b:{cy.NODE})-[e:{cy.EDGE}]->(a:{cy.NODE} {{_id: id}}) "
    "RETURN b._id, a._id, e._key"
)
_COUNTS = (
    f"UNWIND $ids AS id MATCH (a:{cy.NODE} {{_id: id}}) OPTIONAL MATCH (a)-[e:{cy.EDGE}]->() "
    f"WITH id, a, count(e) AS o OPTIONAL MATCH (a)<-[f:{cy.EDGE}]-() RETURN id, o, count(f)"
)


def falkordb_reader(graph: GraphBackend) -> Any:
    """``graph`` if it is a FalkorDB backend (imported lazily), else ``None``: whether a
    batched read can be one Cypher query."""
    if not hasattr(graph, "_read"):
        return None
    from graphrag_integrations.core.graph.falkordb_reads import FalkorDBReads

    return graph if isinstance(graph, FalkorDBReads) else None


def _rows(db: Any, text: str, ids: Sequence[str]) -> list[list[Any]]:
    out: list[list[Any]] = []
    for batch in batches(ids, batch_size):
        out += db._read(text, {"ids": [cy.encode_string(i) for i in batch]})
    return out


def incident_edges(
    graph: GraphBackend, ids: Sequence[str], direction: Literal["out", "in"]
) -> dict[str, list[EdgeKey]]:
    """``{id: edges}``: the ``(source, target, key)`` of the edges leaving or entering each
    of ``ids`` (see the module docstring).

    Raises
    ------
    ValueError
        On a ``direction`` other than ``"out"`` / ``"in"``.
    TypeError
        A backend offering neither a batched edge read nor ``edges_between``.
    """
    if direction not in ("out", "in"):
        raise ValueError(f"direction must be 'out' or 'in', got {direction!r}")
    wanted = list(dict.fromkeys(ids))
    out: dict[str, list[EdgeKey]] = {i: [] for i in wanted}
    if isinstance(graph, GraphStore):
        nx = graph.graph
        for i in wanted:
            if i in nx:
                edges = (
                    nx.out_edges(i, keys=True) if direction == "out" else nx.in_edges(i, keys=True)
                )
                out[i] = [(u, v, k) for u, v, k in edges]
        return out
    db = falkordb_reader(graph)
    if db is not None:
        dec = cy.decode_string
        for u, v, k in _rows(db, _OUT if direction == "out" else _IN, wanted):
            edge = (dec(u), dec(v), dec(k))
            out[edge[0] if direction == "out" else edge[1]].append(edge)
        return out
    between: Callable[[str, str], list[EdgeKey]] | None = getattr(graph, "edges_between", None)
    if between is None:
        raise TypeError(f"{type(graph).__name__} offers no edge reads (edges_between)")
    present = [i for i in wanted if i in graph]
    for i, nbrs in graph.neighbors_many(present, None, direction).items():
        out[i] = [e for n in nbrs for e in (between(i, n) if direction == "out" else between(n, i))]
    return out


def edge_counts(graph: GraphBackend, ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """``{id: (edges leaving, edges entering)}`` for each of ``ids`` (``(0, 0)`` for an
    unknown node)."""
    wanted = list(dict.fromkeys(ids))
    if isinstance(graph, GraphStore):
        nx = graph.graph
        return {
            i: (int(nx.out_degree(i)), int(nx.in_degree(i))) if i in nx else (0, 0) for i in wanted
        }
    db = falkordb_reader(graph)
    if db is not None:
        counts = {i: (0, 0) for i in wanted}
        for i, n_out, n_in in _rows(db, _COUNTS, wanted):
            counts[cy.decode_string(i)] = (int(n_out), int(n_in))
        return counts
    leaving, entering = incident_edges(graph, wanted, "out"), incident_edges(graph, wanted, "in")
    return {i: (len(leaving[i]), len(entering[i])) for i in wanted}
