"""The networkx graph store: :class:`GraphStore`, a typed, directed multigraph with per-document
provenance, the default :class:`~graphrag_integrations.core.graph.protocol.GraphBackend`.

It follows the protocol's rules (:mod:`~graphrag_integrations.core.graph.protocol`: typed
nodes and edges merged on re-add, provenance and ``remove_provenance``, insertion order,
batched reads, ``save`` / ``load``) on a ``networkx.MultiDiGraph`` (edge direction and parallel
relations between the same two nodes are both kept), and adds GraphML export; the JSON it
saves is :mod:`~graphrag_integrations.core.graph.serialisation`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from graphrag_integrations.core.graph.protocol import (
    Direction,
    EdgeKey,
    Removed,
    check_direction,
    check_edge,
    check_node,
    check_same_type,
    edge_types,
)
from graphrag_integrations.core.graph.serialisation import (
    add_records,
    check_format,
    graph_records,
    read_graph_file,
    write_graphml,
)
from graphrag_integrations.core.persistence import atomic_write_json

logger = logging.getLogger(__name__)


class GraphStore:
    """Typed directed multigraph with per-document provenance.

    Node ids are strings; an edge is identified by ``(source, target, key)`` where ``key``
    defaults to the edge type, so one relation type links two nodes once (re-adding it merges
    provenance and attributes) while different relation types - or explicit keys - give
    parallel edges.

    Examples
    --------
    >>> g = GraphStore()
    >>> g.add_node("paris", "entity", provenance={"doc1"})
    >>> g.add_node("france", "entity", provenance={"doc1", "doc2"})
    >>> g.add_edge("paris", "france", "capital_of", provenance={"doc1"})
    'capital_of'
    >>> g.neighbors("paris")
    ['france']
    >>> g.neighbors("france", direction="in")
    ['paris']
    >>> removed = g.remove_provenance("doc1")
    >>> removed.nodes, len(g)
    (['paris'], 1)
    """

    def __init__(self) -> None:
        import networkx as nx

        self._g: Any = nx.MultiDiGraph()
        # provenance is stored as immutable sets shared between the nodes and edges holding
        # the same documents (most hold exactly one): one object per distinct set
        self._provs: dict[frozenset[str], frozenset[str]] = {}

    def _shared(self, provenance: Iterable[str]) -> frozenset[str]:
        prov = frozenset(provenance)
        return self._provs.setdefault(prov, prov)

    # -- building --------------------------------------------------------------------------
    @property
    def graph(self) -> Any:
        """The underlying ``networkx.MultiDiGraph`` (read it; change it through this class)."""
        return self._g

    def add_node(self, id: str, type: str, provenance: Iterable[str] = (), **attrs: Any) -> None:
        """Add a node, or merge into an existing one.

        Re-adding a node unions its provenance and updates its attributes.

        Raises
        ------
        ValueError
            If the node exists with another type, or an id/type is empty.
        """
        prov, extra = check_node(id, type, provenance, attrs)
        if id in self._g:
            data = self._g.nodes[id]
            check_same_type(f"node {id!r}", data["type"], type)
            data["provenance"] = self._shared(data["provenance"] | prov)
            data.update(extra)
        else:
            self._g.add_node(id, type=type, provenance=self._shared(prov), **extra)

    def add_edge(
        self,
        u: str,
        v: str,
        type: str,
        provenance: Iterable[str] = (),
        *,
        key: str | None = None,
        **attrs: Any,
    ) -> str:
        """Add a directed edge ``u -> v``, or merge into the existing one with the same key.

        Parameters
        ----------
        u, v : str
            Existing node ids.
        type : str
            Relation type.
        provenance : iterable of str
            Source-document ids; unioned with the edge's existing ones.
        key : str, optional
            Edge key (defaults to ``type``); distinct keys give parallel edges.
        **attrs
            Stored on the edge (updated on re-add).

        Returns
        -------
        str
            The edge key.

        Raises
        ------
        KeyError
            If ``u`` or ``v`` is not a node.
        ValueError
            If the edge key exists with another type.
        """
        edge_key, prov, extra = check_edge(
            u, v, type, key, provenance, attrs, exists=self._g.__contains__
        )
        if self._g.has_edge(u, v, edge_key):
            data = self._g.edges[u, v, edge_key]
            check_same_type(f"edge {(u, v, edge_key)!r}", data["type"], type)
            data["provenance"] = self._shared(data["provenance"] | prov)
            data.update(extra)
        else:
            self._g.add_edge(u, v, key=edge_key, type=type, provenance=self._shared(prov), **extra)
        return edge_key

    # -- reading ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self._g.number_of_nodes())

    def __contains__(self, node: object) -> bool:
        return isinstance(node, Hashable) and node in self._g

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphStore):
            return NotImplemented
        return self._canonical() == other._canonical()

    __hash__ = None  # type: ignore[assignment]

    def _canonical(self) -> tuple[dict[str, Any], dict[EdgeKey, Any]]:
        nodes = {n: dict(d) for n, d in self._g.nodes(data=True)}
        edges = {(u, v, k): dict(d) for u, v, k, d in self._g.edges(keys=True, data=True)}
        return nodes, edges

    def number_of_edges(self, type: str | None = None) -> int:
        """Number of edges (of one type if given)."""
        if type is None:
            return int(self._g.number_of_edges())
        return sum(1 for *_, t in self._g.edges(data="type") if t == type)

    def nodes(self, type: str | None = None) -> list[str]:
        """Node ids in insertion order (of one type if given)."""
        return [n for n, t in self._g.nodes(data="type") if type is None or t == type]

    def edges(self, type: str | None = None) -> list[EdgeKey]:
        """``(source, target, key)`` of every edge (of one type if given)."""
        return [
            (u, v, k)
            for u, v, k, t in self._g.edges(keys=True, data="type")
            if type is None or t == type
        ]

    def node(self, id: str) -> dict[str, Any]:
        """Attributes of a node (a copy; includes ``type`` and ``provenance``)."""
        data = self._node_data(id)
        return {**data, "provenance": set(data["provenance"])}

    def edge(self, u: str, v: str, key: str) -> dict[str, Any]:
        """Attributes of an edge (a copy; includes ``type`` and ``provenance``)."""
        if not self._g.has_edge(u, v, key):
            raise KeyError(f"unknown edge {(u, v, key)!r}")
        data = self._g.edges[u, v, key]
        return {**data, "provenance": set(data["provenance"])}

    def node_type(self, id: str) -> str:
        """Type of a node."""
        return str(self._node_data(id)["type"])

    def provenance(self, id: str) -> set[str]:
        """Document ids a node was derived from (a copy)."""
        return set(self._node_data(id)["provenance"])

    def edges_between(self, u: str, v: str, edge_type: str | None = None) -> list[EdgeKey]:
        """Every parallel edge ``u -> v`` (of one type if given)."""
        if not self._g.has_edge(u, v):
            return []
        return [
            (u, v, k)
            for k, d in self._g[u][v].items()
            if edge_type is None or d["type"] == edge_type
        ]

    def _node_data(self, id: str) -> Any:
        if id not in self._g:
            raise KeyError(f"unknown node {id!r}")
        return self._g.nodes[id]

    def _adjacent(self, node: str, types: frozenset[str] | None, direction: str) -> Iterator[str]:
        """Neighbour ids (with repeats for parallel edges) along allowed edges."""
        if direction in ("out", "both"):
            for _, nbr, t in self._g.out_edges(node, data="type"):
                if types is None or t in types:
                    yield nbr
        if direction in ("in", "both"):
            for nbr, _, t in self._g.in_edges(node, data="type"):
                if types is None or t in types:
                    yield nbr

    def neighbors(
        self,
        id: str,
        edge_type: str | Iterable[str] | None = None,
        direction: Direction = "out",
        node_type: str | None = None,
    ) -> list[str]:
        """Distinct neighbours of ``id``, in edge insertion order.

        Parameters
        ----------
        id : str
            The node.
        edge_type : str or iterable of str, optional
            Follow only edges of these types.
        direction : {"out", "in", "both"}
            Follow edges leaving ``id``, entering it, or both.
        node_type : str, optional
            Keep only neighbours of this type.

        Raises
        ------
        KeyError
            If ``id`` is not a node.
        ValueError
            On an unknown ``direction``.
        """
        self._node_data(id)
        check_direction(direction)
        seen: dict[str, None] = {}
        for nbr in self._adjacent(id, edge_types(edge_type), direction):
            if node_type is None or self._g.nodes[nbr]["type"] == node_type:
                seen.setdefault(nbr, None)
        return list(seen)

    def neighbors_many(
        self,
        ids: Iterable[str],
        edge_type: str | Iterable[str] | None = None,
        direction: Direction = "out",
        node_type: str | None = None,
    ) -> dict[str, list[str]]:
        """``{id: neighbors(id, edge_type, direction, node_type)}`` for each id, in the order given.

        Examples
        --------
        >>> g = GraphStore()
        >>> for n in ("a", "b", "c"):
        ...     g.add_node(n, "t")
        >>> _ = g.add_edge("a", "b", "r"), g.add_edge("c", "b", "r")
        >>> g.neighbors_many(["b", "a"], direction="in")
        {'b': ['a', 'c'], 'a': []}
        """
        return {
            id: self.neighbors(id, edge_type, direction, node_type) for id in dict.fromkeys(ids)
        }

    def nodes_data(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """``{id: node(id)}`` for each id, in the order given (``KeyError`` for an unknown one)."""
        return {id: self.node(id) for id in dict.fromkeys(ids)}

    # -- deletion --------------------------------------------------------------------------
    def remove_provenance(self, doc_id: str) -> Removed:
        """Forget document ``doc_id``.

        ``doc_id`` is dropped from every provenance set; an edge or node whose set becomes
        empty is removed (a removed node takes its remaining edges with it). Nodes and edges
        added without provenance, or still backed by another document, stay.

        Returns
        -------
        Removed
            The nodes and edges removed.
        """
        removed_edges: list[EdgeKey] = []
        for u, v, k, data in list(self._g.edges(keys=True, data=True)):
            if doc_id in data["provenance"]:
                data["provenance"] = self._shared(data["provenance"] - {doc_id})
                if not data["provenance"]:
                    self._g.remove_edge(u, v, k)
                    removed_edges.append((u, v, k))
        removed_nodes: list[str] = []
        for node, data in list(self._g.nodes(data=True)):
            if doc_id in data["provenance"]:
                data["provenance"] = self._shared(data["provenance"] - {doc_id})
                if not data["provenance"]:
                    removed_edges.extend(self._g.in_edges(node, keys=True))
                    removed_edges.extend(
                        e for e in self._g.out_edges(node, keys=True) if e[0] != e[1]
                    )
                    self._g.remove_node(node)
                    removed_nodes.append(node)
        self._provs = {p: p for p in self._provs if doc_id not in p}
        if removed_nodes or removed_edges:
            logger.debug(
                "removed %d nodes and %d edges of document %r",
                len(removed_nodes),
                len(removed_edges),
                doc_id,
            )
        return Removed(removed_nodes, removed_edges)

    def remove_edges(self, edges: Iterable[EdgeKey]) -> list[EdgeKey]:
        """Remove the edges ``(u, v, key)`` whatever their provenance (unknown ones skipped).

        Returns
        -------
        list of (source, target, key)
            The edges that existed and were removed, in the order given.

        Examples
        --------
        >>> g = GraphStore()
        >>> g.add_node("a", "q"); g.add_node("b", "q"); g.add_node("c", "q")
        >>> _ = g.add_edge("a", "b", "similar", ["d"]); _ = g.add_edge("a", "c", "similar")
        >>> g.remove_edges([("a", "b", "similar"), ("a", "x", "similar")])
        [('a', 'b', 'similar')]
        >>> _ = g.add_edge("a", "b", "similar"); g.neighbors("a", "similar")
        ['c', 'b']
        """
        removed: list[EdgeKey] = []
        for u, v, key in edges:
            if self._g.has_edge(u, v, key):
                self._g.remove_edge(u, v, key)
                removed.append((u, v, key))
        return removed

    # -- export and persistence ------------------------------------------------------------
    def to_graphml(self, path: str | Path) -> None:
        """Write GraphML readable by ``networkx.read_graphml`` and tools such as Gephi.

        Scalar attributes are kept; sets (sorted), lists, tuples and dicts become JSON
        strings; ``None`` values are left out. Edge keys become GraphML edge ids.
        """
        write_graphml(self._g, path)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready node-link form (what :meth:`save` writes)."""
        return graph_records(self._g)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "graph") -> GraphStore:
        """Rebuild a store from :meth:`to_dict` output.

        Raises
        ------
        IndexMismatchError
            If the layout is newer than supported or malformed.
        """
        check_format(data, source)
        return cls._from_records(data, source=source, consume=False)

    @classmethod
    def _from_records(cls, data: Any, *, source: str, consume: bool) -> GraphStore:
        """A new store of the node-link records ``data`` (see
        :func:`~graphrag_integrations.core.graph.serialisation.add_records`)."""
        store = cls()
        add_records(store, data, source=source, consume=consume)
        return store

    def save(self, path: str | Path) -> None:
        """Write the graph as JSON (node-link with provenance) to file ``path``, atomically.

        Attribute values must be JSON-serialisable; they load back as JSON types (a tuple
        comes back as a list).

        Raises
        ------
        TypeError
            If an attribute is not JSON-serialisable (nothing is written).
        """
        atomic_write_json(path, self.to_dict(), indent=None)

    @classmethod
    def load(cls, path: str | Path) -> GraphStore:
        """Read a graph written by :meth:`save`.

        Raises
        ------
        IndexNotFoundError
            If the file does not exist.
        IndexMismatchError
            If it is not valid JSON, not a saved graph, or of a newer format.
        """
        src = Path(path)
        return cls._from_records(read_graph_file(src), source=str(src), consume=True)
