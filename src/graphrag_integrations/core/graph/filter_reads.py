"""The reads a metadata filter needs from a graph, in one query each on FalkorDB.

A filtered query first learns which passages it may use
(:class:`~graphrag_integrations.core.retrieval.filter_scope.FilterScope`): it evaluates the
filter on every passage's metadata, so it reads the ``doc_id`` and ``metadata`` attributes of
every passage node - not their texts - with :func:`node_fields`. A knowledge-graph method
whose triples carry document provenance reads the triples of the allowed documents only with
:func:`edges_of_documents` (FalkorDB: one query per batch of documents over the indexed
provenance lists, so the other tenants' triples are never read).

The networkx :class:`~graphrag_integrations.core.graph.networkx_store.GraphStore` answers from its
graph; FalkorDB with Cypher (layout of :mod:`~graphrag_integrations.core.graph.falkordb_cypher`);
any other backend through the ``GraphBackend`` protocol (``nodes`` + batched ``nodes_data``,
``edges`` + ``edge``).

Examples
--------
>>> from graphrag_integrations.core.graph.networkx_store import GraphStore
>>> g = GraphStore()
>>> g.add_node("chunk:p1", "chunk", ("d1",), text="...", doc_id="d1", metadata={"lang": "en"})
>>> node_fields(g, "chunk", ("doc_id", "metadata"))
[('chunk:p1', {'doc_id': 'd1', 'metadata': {'lang': 'en'}})]
>>> g.add_node("a", "entity", ("d1", "d2")); g.add_node("b", "entity", ("d2",))
>>> _ = g.add_edge("a", "b", "r", ("d2",), key="r")
>>> edges_of_documents(g, ["d2"])
[(('a', 'b', 'r'), {'d2'})]
>>> sorted(provenance_documents(g))
['d1', 'd2']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.graph import falkordb_cypher as cy
from graphrag_integrations.core.graph.neighbourhood_reads import falkordb_reader
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import EdgeKey, GraphBackend

__all__ = ["BATCH", "edges_of_documents", "node_fields", "provenance_documents"]

#: Nodes or documents per query of a database backend.
BATCH = 1000

_EDGES_OF_DOCUMENTS = f"""UNWIND $docs AS d
MATCH (a:{cy.NODE})-[e:{cy.EDGE}]->(b:{cy.NODE}) WHERE d IN e._prov
RETURN DISTINCT a._id, b._id, e._key, e._prov"""
_PROVENANCE = f"MATCH (n:{cy.NODE}) UNWIND n._prov AS d RETURN DISTINCT d"


def node_fields(
    graph: GraphBackend, type: str, fields: Sequence[str]
) -> list[tuple[str, dict[str, Any]]]:
    """``(node id, {field: value})`` of every node of ``type``, in insertion order (a field the
    node lacks is ``None``)."""
    if isinstance(graph, GraphStore):
        nodes = graph.graph.nodes
        return [(n, {f: nodes[n].get(f) for f in fields}) for n in graph.nodes(type)]
    db = falkordb_reader(graph)
    if db is not None:
        props = ", ".join(f"n.`{cy.encode_attr_name(f)}`" for f in fields)
        text = f"MATCH (n:{cy.NODE}) WHERE n._type = $type RETURN n._id, {props} ORDER BY n._seq"
        return [
            (
                cy.decode_string(row[0]),
                dict(zip(fields, map(cy.decode_value, row[1:]), strict=True)),
            )
            for row in db._read(text, {"type": cy.encode_string(type)})
        ]
    ids = graph.nodes(type)
    out: list[tuple[str, dict[str, Any]]] = []
    for batch in batches(ids, BATCH):
        data = graph.nodes_data(batch)
        out += [(n, {f: data[n].get(f) for f in fields}) for n in batch]
    return out


def edges_of_documents(
    graph: GraphBackend, doc_ids: Iterable[str]
) -> list[tuple[EdgeKey, set[str]]]:
    """Every edge one of ``doc_ids`` contributed, with its whole provenance, sorted by key."""
    docs = sorted(set(doc_ids))
    if not docs:
        return []
    wanted = set(docs)
    found: dict[EdgeKey, set[str]] = {}
    if isinstance(graph, GraphStore):
        for u, v, k, prov in graph.graph.edges(keys=True, data="provenance"):
            if not wanted.isdisjoint(prov):
                found[(u, v, k)] = set(prov)
        return sorted(found.items())
    db = falkordb_reader(graph)
    if db is not None:
        for batch in batches(docs, BATCH):
            encoded = [cy.encode_string(d) for d in batch]
            for u, v, k, prov in db._read(_EDGES_OF_DOCUMENTS, {"docs": encoded}):
                key = (cy.decode_string(u), cy.decode_string(v), cy.decode_string(k))
                found[key] = cy.decode_prov(prov)
        return sorted(found.items())
    for u, v, k in getattr(graph, "edges")():  # noqa: B009 - GraphStore's, not the protocol's
        prov = set(getattr(graph, "edge")(u, v, k)["provenance"])  # noqa: B009
        if not wanted.isdisjoint(prov):
            found[(u, v, k)] = prov
    return sorted(found.items())


def provenance_documents(graph: GraphBackend) -> set[str]:
    """Every document id in the provenance of a node (FalkorDB: one query)."""
    if isinstance(graph, GraphStore):
        return {doc for _, prov in graph.graph.nodes(data="provenance") for doc in prov}
    db = falkordb_reader(graph)
    if db is not None:
        return {cy.decode_string(row[0]) for row in db._read(_PROVENANCE)}
    ids = graph.nodes()
    out: set[str] = set()
    for batch in batches(ids, BATCH):
        for data in graph.nodes_data(batch).values():
            out |= set(data["provenance"])
    return out
