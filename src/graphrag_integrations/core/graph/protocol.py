"""What a graph store is: the :class:`GraphBackend` protocol, its types and the argument checks
every backend shares.

Graph-RAG methods build graphs of passages, entities, clues and queries. They reach the graph
only through :class:`GraphBackend`, a small protocol; the networkx
:class:`~graphrag_integrations.core.graph.networkx_store.GraphStore` (a
``networkx.MultiDiGraph``: edge direction and parallel relations between the same two nodes
are both kept) is its default implementation, and
:class:`~graphrag_integrations.core.graph.falkordb_graph.FalkorDBGraph` keeps the graph in
FalkorDB.

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

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

Direction = Literal["out", "in", "both"]
EdgeKey = tuple[str, str, str]
DIRECTIONS = ("out", "in", "both")
#: Attribute names a node or edge keeps for itself (``add_node(..., type=...)`` is refused).
RESERVED = ("type", "provenance")


@dataclass(frozen=True)
class Removed:
    """What :meth:`GraphBackend.remove_provenance` removed.

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
    from a graph store (semantics in the module docstring); the networkx
    :class:`~graphrag_integrations.core.graph.networkx_store.GraphStore` implements it.

    Examples
    --------
    >>> from graphrag_integrations.core.graph.networkx_store import GraphStore
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


def check_id(value: Any, what: str) -> str:
    """``value`` if it is a non-empty string (an id, type or key), else ``ValueError``."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string, got {value!r}")
    return value


def check_provenance(provenance: Iterable[str]) -> set[str]:
    """The set of document ids ``provenance`` (``TypeError`` for a bare string)."""
    if isinstance(provenance, str):
        raise TypeError(
            f"provenance must be an iterable of document ids, not the string {provenance!r} "
            "(wrap a single id in a tuple)"
        )
    out = set(provenance)
    for doc_id in out:
        check_id(doc_id, "a provenance document id")
    return out


def check_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``attrs`` (``ValueError`` for a :data:`RESERVED` name)."""
    bad = [name for name in attrs if name in RESERVED]
    if bad:
        raise ValueError(f"attribute names {bad} are reserved")
    return dict(attrs)


def check_node(
    id: str, type: str, provenance: Iterable[str], attrs: Mapping[str, Any]
) -> tuple[set[str], dict[str, Any]]:
    """The checked provenance and attributes of ``add_node(id, type, provenance, **attrs)``.

    Raises
    ------
    ValueError, TypeError
        As :func:`check_id`, :func:`check_provenance`, :func:`check_attrs`.
    """
    check_id(id, "node id")
    check_id(type, "node type")
    return check_provenance(provenance), check_attrs(attrs)


def check_edge(
    u: str,
    v: str,
    type: str,
    key: str | None,
    provenance: Iterable[str],
    attrs: Mapping[str, Any],
    *,
    exists: Callable[[Any], bool],
) -> tuple[str, set[str], dict[str, Any]]:
    """The edge key (``key``, default ``type``), provenance and attributes of
    ``add_edge(u, v, type, provenance, key=key, **attrs)``, checked.

    Raises
    ------
    KeyError
        If ``u`` or ``v`` is not a node (``exists(node)`` is false).
    ValueError, TypeError
        As :func:`check_id`, :func:`check_provenance`, :func:`check_attrs`.
    """
    for node in (u, v):
        if not exists(node):
            raise KeyError(f"unknown node {node!r}: add_node it before adding edges")
    check_id(type, "edge type")
    edge_key = check_id(type if key is None else key, "edge key")
    return edge_key, check_provenance(provenance), check_attrs(attrs)


def check_same_type(what: str, known: str | None, type: str) -> None:
    """``ValueError`` when ``what`` (a node or an edge) is known (``known``: its type) with a
    type other than ``type``."""
    if known is not None and known != type:
        raise ValueError(f"{what} already has type {known!r}, not {type!r}")


def check_direction(direction: str) -> None:
    """``ValueError`` unless ``direction`` is one of :data:`DIRECTIONS`."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")


def edge_types(edge_type: str | Iterable[str] | None) -> frozenset[str] | None:
    """``edge_type`` (one type or many) as a set; ``None`` (every type) stays ``None``."""
    if edge_type is None:
        return None
    if isinstance(edge_type, str):
        return frozenset((edge_type,))
    return frozenset(edge_type)
