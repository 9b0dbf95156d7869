"""A typed, directed multigraph with per-document provenance: the protocol and its networkx store.

Graph-RAG methods build graphs of passages, entities, clues and queries. They reach the graph
only through :class:`GraphBackend`, a small protocol; :class:`GraphStore` (a
``networkx.MultiDiGraph``: edge direction and parallel relations between the same two nodes
are both kept) is its default implementation and adds paths, subgraphs and GraphML export.

What a backend must implement (a database-backed store plugs in by following this, without
touching the methods; :class:`~graphrag_integrations.core.index.store.IndexStore` takes the
backend class):

* **nodes and edges are typed** - ``add_node(id, type, provenance, **attrs)`` and
  ``add_edge(u, v, type, provenance, key=None, **attrs)``; an edge is identified by
  ``(u, v, key)`` with ``key`` defaulting to ``type``. Re-adding an existing node or edge
  *merges*: provenance sets are unioned, attributes updated, the position in the insertion
  order kept; a different type for an existing id or key is a ``ValueError``, an edge to an
  unknown node a ``KeyError``;
* **provenance** - every node and edge records the set of source-document ids it was derived
  from; ``remove_provenance(doc_id)`` drops ``doc_id`` from every set, removes the nodes and
  edges whose set became empty (a removed node takes its remaining edges with it) and returns
  them as :class:`Removed`. Nodes and edges without provenance, or still backed by another
  document, stay (this is every index's ``delete(doc_id)``); ``remove_edges(edges)`` removes
  the given ``(u, v, key)`` edges whatever their provenance (a method rewriting derived edges,
  e.g. QCG-RAG's kNN lists) and returns those that existed, in the order given; a later
  ``add_edge`` of the same edge puts it last in the insertion order;
* **ordering** - ``nodes(type)`` lists node ids in insertion order and ``neighbors(...)`` lists
  distinct neighbours in edge insertion order; removal keeps the relative order of what
  remains. Q-Iter relies on this: its rows follow node insertion order and entity rows follow
  the first mention (edge order of ``mentions``), so an index after ``insert`` + ``delete``
  is laid out exactly like one built without the deleted document;
* **reading** - ``node(id)`` returns a copy of the attributes including ``type`` and
  ``provenance`` (``KeyError`` for an unknown node), ``len`` counts nodes, ``in`` tests a
  node id, ``number_of_edges(type)`` counts edges;
* **batched reading** - ``neighbors_many(ids, ...)`` is ``{id: neighbors(id, ...)}`` and
  ``nodes_data(ids)`` is ``{id: node(id)}`` for many nodes at once (a ``KeyError`` names the
  first unknown id), in the order given, duplicates once: a database backend answers each in
  one round trip, so a query reads a neighbourhood per hop instead of the whole graph;
* **persistence** - ``save(path)`` writes the whole graph (with provenance) to the file
  ``path`` and the class method ``load(path)`` reads it back (``IndexNotFoundError`` when
  missing, ``IndexMismatchError`` when unreadable or of a newer format). A database backend
  may write a small pointer file (connection and graph name) instead of the data.
"""

from __future__ import annotations

import io
import json
import logging
from collections import deque
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from graphrag_integrations.core.persistence import atomic_write_bytes, atomic_write_json
from graphrag_integrations.errors import IndexMismatchError, IndexNotFoundError

logger = logging.getLogger(__name__)

Direction = Literal["out", "in", "both"]
EdgeKey = tuple[str, str, str]
_DIRECTIONS = ("out", "in", "both")
_RESERVED = ("type", "provenance")
#: Layout version of the JSON written by :meth:`GraphStore.save`.
GRAPH_FORMAT_VERSION = 1
# strings up to this length read from a saved graph are shared between the records that repeat
# them (ids, types, provenance, labels); longer ones (texts) are unique anyway
_SHARED_STRING_MAX = 200


@dataclass(frozen=True)
class Removed:
    """What :meth:`GraphStore.remove_provenance` removed.

    Attributes
    ----------
    nodes : list of str
        Removed node ids.
    edges : list of (source, target, key)
        Removed edges, including those that went with a removed node.
    """

    nodes: list[str] = field(default_factory=list)
    edges: list[EdgeKey] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.nodes or self.edges)


@runtime_checkable
class GraphBackend(Protocol):
    """What :class:`~graphrag_integrations.core.index.store.IndexStore` and the methods need
    from a graph store (semantics in the module docstring); :class:`GraphStore` implements it.

    Examples
    --------
    >>> isinstance(GraphStore(), GraphBackend)
    True
    """

    def __len__(self) -> int: ...

    def __contains__(self, node: object) -> bool: ...

    def add_node(
        self, id: str, type: str, provenance: Iterable[str] = (), **attrs: Any
    ) -> None: ...

    def add_edge(
        self,
        u: str,
        v: str,
        type: str,
        provenance: Iterable[str] = (),
        *,
        key: str | None = None,
        **attrs: Any,
    ) -> str: ...

    def nodes(self, type: str | None = None) -> list[str]: ...

    def node(self, id: str) -> dict[str, Any]: ...

    def neighbors(
        self,
        id: str,
        edge_type: str | Iterable[str] | None = None,
        direction: Direction = "out",
        node_type: str | None = None,
    ) -> list[str]: ...

    def neighbors_many(
        self,
        ids: Iterable[str],
        edge_type: str | Iterable[str] | None = None,
        direction: Direction = "out",
        node_type: str | None = None,
    ) -> dict[str, list[str]]: ...

    def nodes_data(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]: ...

    def number_of_edges(self, type: str | None = None) -> int: ...

    def remove_provenance(self, doc_id: str) -> Removed: ...

    def remove_edges(self, edges: Iterable[EdgeKey]) -> list[EdgeKey]: ...

    def save(self, path: str | Path) -> None: ...

    @classmethod
    def load(cls, path: str | Path) -> GraphBackend: ...


def _check_id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string, got {value!r}")
    return value


def _provenance(provenance: Iterable[str]) -> set[str]:
    if isinstance(provenance, str):
        raise TypeError(
            f"provenance must be an iterable of document ids, not the string {provenance!r} "
            "(wrap a single id in a tuple)"
        )
    out = set(provenance)
    for doc_id in out:
        _check_id(doc_id, "a provenance document id")
    return out


def _check_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    bad = [name for name in attrs if name in _RESERVED]
    if bad:
        raise ValueError(f"attribute names {bad} are reserved")
    return dict(attrs)


def _check_direction(direction: str) -> None:
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be one of {_DIRECTIONS}, got {direction!r}")


def _edge_types(edge_type: str | Iterable[str] | None) -> frozenset[str] | None:
    if edge_type is None:
        return None
    if isinstance(edge_type, str):
        return frozenset((edge_type,))
    return frozenset(edge_type)


def _graphml_value(value: Any) -> str | int | float | bool | None:
    """A GraphML-storable scalar: collections become JSON strings, ``None`` is dropped."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (set, frozenset)):
        return json.dumps(sorted(value, key=str), default=str, ensure_ascii=False)
    return json.dumps(value, default=str, ensure_ascii=False, sort_keys=True)


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
        _check_id(id, "node id")
        _check_id(type, "node type")
        prov = _provenance(provenance)
        extra = _check_attrs(attrs)
        if id in self._g:
            data = self._g.nodes[id]
            if data["type"] != type:
                raise ValueError(f"node {id!r} already has type {data['type']!r}, not {type!r}")
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
        for node in (u, v):
            if node not in self._g:
                raise KeyError(f"unknown node {node!r}: add_node it before adding edges")
        _check_id(type, "edge type")
        edge_key = _check_id(type if key is None else key, "edge key")
        prov = _provenance(provenance)
        extra = _check_attrs(attrs)
        if self._g.has_edge(u, v, edge_key):
            data = self._g.edges[u, v, edge_key]
            if data["type"] != type:
                raise ValueError(
                    f"edge {(u, v, edge_key)!r} already has type {data['type']!r}, not {type!r}"
                )
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

    def _adjacent(
        self, node: str, edge_types: frozenset[str] | None, direction: str
    ) -> Iterator[str]:
        """Neighbour ids (with repeats for parallel edges) along allowed edges."""
        if direction in ("out", "both"):
            for _, nbr, t in self._g.out_edges(node, data="type"):
                if edge_types is None or t in edge_types:
                    yield nbr
        if direction in ("in", "both"):
            for nbr, _, t in self._g.in_edges(node, data="type"):
                if edge_types is None or t in edge_types:
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
        _check_direction(direction)
        seen: dict[str, None] = {}
        for nbr in self._adjacent(id, _edge_types(edge_type), direction):
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

    def degree(
        self,
        id: str,
        edge_type: str | Iterable[str] | None = None,
        direction: Direction = "both",
    ) -> int:
        """Number of edges at ``id`` (parallel edges count separately; a self-loop counts
        once per direction)."""
        self._node_data(id)
        _check_direction(direction)
        return sum(1 for _ in self._adjacent(id, _edge_types(edge_type), direction))

    # -- paths -----------------------------------------------------------------------------
    def shortest_path(
        self,
        u: str,
        v: str,
        edge_types: str | Iterable[str] | None = None,
        direction: Direction = "out",
    ) -> list[str] | None:
        """Fewest-hop node path from ``u`` to ``v`` (breadth first), or ``None`` if none.

        Raises
        ------
        KeyError
            If ``u`` or ``v`` is not a node.
        """
        self._node_data(u)
        self._node_data(v)
        _check_direction(direction)
        types = _edge_types(edge_types)
        parents: dict[str, str | None] = {u: None}
        queue = deque([u])
        while queue:
            node = queue.popleft()
            if node == v:
                path = [v]
                while (parent := parents[path[-1]]) is not None:
                    path.append(parent)
                return path[::-1]
            for nbr in self._adjacent(node, types, direction):
                if nbr not in parents:
                    parents[nbr] = node
                    queue.append(nbr)
        return None

    def paths(
        self,
        source: str,
        max_hops: int,
        *,
        target: str | None = None,
        edge_types: str | Iterable[str] | None = None,
        direction: Direction = "out",
        limit: int | None = None,
    ) -> list[list[str]]:
        """Simple paths (no repeated node) of 1 to ``max_hops`` edges starting at ``source``.

        Parameters
        ----------
        source : str
            Start node.
        max_hops : int
            Longest path, in edges.
        target : str, optional
            Keep only paths ending there.
        edge_types, direction
            As in :meth:`neighbors`.
        limit : int, optional
            Stop after this many paths (path counts grow exponentially with ``max_hops``).

        Returns
        -------
        list of list of str
            Node sequences, depth first in edge insertion order; parallel edges between the
            same two nodes give one path.
        """
        self._node_data(source)
        if target is not None:
            self._node_data(target)
        _check_direction(direction)
        if max_hops < 0:
            raise ValueError(f"max_hops must be >= 0, got {max_hops}")
        types = _edge_types(edge_types)
        found: list[list[str]] = []
        path = [source]
        on_path = {source}

        def walk() -> bool:  # returns False once the limit is reached
            for nbr in dict.fromkeys(self._adjacent(path[-1], types, direction)):
                if nbr in on_path:
                    continue
                path.append(nbr)
                if target is None or nbr == target:
                    found.append(list(path))
                    if limit is not None and len(found) >= limit:
                        return False
                if len(path) <= max_hops and (target is None or nbr != target):
                    on_path.add(nbr)
                    keep_going = walk()
                    on_path.discard(nbr)
                    if not keep_going:
                        return False
                path.pop()
            return True

        if max_hops > 0 and (limit is None or limit > 0):
            walk()
        return found

    def subgraph(self, nodes: Iterable[str]) -> GraphStore:
        """A new store holding ``nodes`` (unknown ids ignored) and the edges among them."""
        out = GraphStore()
        out._g = self._g.subgraph(list(nodes)).copy()
        for _, data in out._g.nodes(data=True):
            data["provenance"] = out._shared(data["provenance"])
        for *_, data in out._g.edges(keys=True, data=True):
            data["provenance"] = out._shared(data["provenance"])
        return out

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
        import networkx as nx

        safe = nx.MultiDiGraph()
        for node, data in self._g.nodes(data=True):
            safe.add_node(node, **_graphml_attrs(data))
        for u, v, k, data in self._g.edges(keys=True, data=True):
            safe.add_edge(u, v, key=k, **_graphml_attrs(data))
        buffer = io.BytesIO()
        nx.write_graphml(safe, buffer, encoding="utf-8")
        atomic_write_bytes(path, buffer.getvalue())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready node-link form (what :meth:`save` writes)."""
        from graphrag_integrations import __version__

        return {
            "format_version": GRAPH_FORMAT_VERSION,
            "package_version": __version__,
            "directed": True,
            "multigraph": True,
            "nodes": [
                {
                    "id": n,
                    "type": d["type"],
                    "provenance": sorted(d["provenance"]),
                    "attrs": {a: x for a, x in d.items() if a not in _RESERVED},
                }
                for n, d in self._g.nodes(data=True)
            ],
            "edges": [
                {
                    "source": u,
                    "target": v,
                    "key": k,
                    "type": d["type"],
                    "provenance": sorted(d["provenance"]),
                    "attrs": {a: x for a, x in d.items() if a not in _RESERVED},
                }
                for u, v, k, d in self._g.edges(keys=True, data=True)
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "graph") -> GraphStore:
        """Rebuild a store from :meth:`to_dict` output.

        Raises
        ------
        IndexMismatchError
            If the layout is newer than supported or malformed.
        """
        _check_format(data, source)
        return cls._from_records(data, source=source, consume=False)

    @classmethod
    def _from_records(cls, data: Any, *, source: str, consume: bool) -> GraphStore:
        """Build from node-link records; equal strings (ids, types, provenance, short attribute
        values) become one shared object, and with ``consume`` each record is dropped from
        ``data`` once added, so the parsed JSON is freed while the graph grows."""
        store = cls()
        shared: dict[str, str] = {}

        def one(value: Any) -> Any:
            if isinstance(value, str) and len(value) <= _SHARED_STRING_MAX:
                return shared.setdefault(value, value)
            return value

        def many(values: Any) -> Any:  # a string is passed on as is, for add_*'s error
            return values if isinstance(values, str) else [one(v) for v in values]

        try:
            nodes, edges = data["nodes"], data["edges"]
            for i, n in enumerate(nodes):
                attrs = {a: one(x) for a, x in n.get("attrs", {}).items()}
                store.add_node(one(n["id"]), one(n["type"]), many(n["provenance"]), **attrs)
                if consume:
                    nodes[i] = None
            for i, e in enumerate(edges):
                store.add_edge(
                    one(e["source"]),
                    one(e["target"]),
                    one(e["type"]),
                    many(e["provenance"]),
                    key=one(e["key"]),
                    **{a: one(x) for a, x in e.get("attrs", {}).items()},
                )
                if consume:
                    edges[i] = None
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise IndexMismatchError(f"{source}: malformed graph data: {exc!r}") from exc
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
        if not src.is_file():
            raise IndexNotFoundError(f"no saved graph at {src}")
        try:
            data = json.loads(src.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise IndexMismatchError(f"{src} is not valid JSON: {exc}") from exc
        _check_format(data, str(src))
        return cls._from_records(data, source=str(src), consume=True)


def _check_format(data: Any, source: str) -> None:
    """Raise ``IndexMismatchError`` unless ``data`` is a saved graph of a supported version."""
    version = data.get("format_version") if isinstance(data, Mapping) else None
    if not isinstance(version, int):
        raise IndexMismatchError(f"{source}: not a saved GraphStore (no format_version)")
    if version > GRAPH_FORMAT_VERSION:
        raise IndexMismatchError(
            f"{source}: graph format version {version} is newer than supported "
            f"{GRAPH_FORMAT_VERSION}; upgrade graphrag-integrations"
        )


def _graphml_attrs(data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in data.items():
        safe = _graphml_value(value)
        if safe is not None:
            out[name] = safe
    return out
