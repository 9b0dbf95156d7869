"""What a :class:`~graphrag_integrations.core.graph.falkordb_graph.FalkorDBGraph` knows without
asking the server, and the orders of networkx it reproduces.

* :class:`Pending` - a queued node or edge write, merged with later writes of the same one
  until the graph flushes;
* :class:`CreatedNodes` - the nodes the graph object created (bounded, least recently written
  dropped first): their data and whole adjacency, laid out as ``networkx`` lays out a
  ``MultiDiGraph`` (neighbour -> key -> type, dicts in insertion order), so ``node()`` and
  ``neighbors()`` of them need no round trip. Every edge at such a node was added by the
  same object (it was new, and one object writes a graph at a time), so the adjacency is
  complete;
* :func:`removal_listing` - the order ``networkx`` reports the edges of nodes removed one
  after the other.

Examples
--------
>>> created = CreatedNodes(10)
>>> created.remember("a", True, "t", {"d"}, {"x": 1})
>>> created.remember("b", True, "t", set(), {})
>>> created.link("a", "b", "r", "r")
>>> created.neighbors("b", None, "in", lambda id: "t", None)
['a']
>>> created.data("a")
{'type': 't', 'provenance': {'d'}, 'x': 1}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from graphrag_integrations.core.lru import LRUCache

EdgeKey = tuple[str, str, str]


@dataclass
class Pending:
    """A queued node or edge write (merged with later writes of the same one)."""

    type: str
    seq: int
    prov: set[str]
    attrs: dict[str, Any]


@dataclass
class _Created:
    data: dict[str, Any]
    succ: dict[str, dict[str, str]]
    pred: dict[str, dict[str, str]]


class CreatedNodes:
    """Data and adjacency of up to ``size`` nodes created by one graph object (see the
    module docstring)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._nodes: LRUCache[str, _Created] = LRUCache(size)

    def remember(
        self, id: str, new: bool, type: str, prov: set[str], attrs: dict[str, Any]
    ) -> None:
        """Record an ``add_node``: merged into a known node, kept for a ``new`` one."""
        known = self._nodes.get(id)
        if known is not None:
            known.data["provenance"] = known.data["provenance"] | prov
            known.data.update(attrs)
            self._nodes.use(id)
        elif new and self.size > 0:
            self._nodes.add(id, _Created({"type": type, "provenance": set(prov), **attrs}, {}, {}))

    def link(self, u: str, v: str, key: str, type: str) -> None:
        """Record an ``add_edge`` (a re-added edge keeps its place)."""
        if (known_u := self._nodes.get(u)) is not None:
            known_u.succ.setdefault(v, {}).setdefault(key, type)
        if (known_v := self._nodes.get(v)) is not None:
            known_v.pred.setdefault(u, {}).setdefault(key, type)

    def unlink(self, edge: EdgeKey) -> None:
        """Record a removed edge."""
        u, v, key = edge
        for node, other, outgoing in ((u, v, True), (v, u, False)):
            known = self._nodes.get(node)
            if known is not None:
                adjacent = known.succ if outgoing else known.pred
                keys = adjacent.get(other, {})
                keys.pop(key, None)
                if not keys:
                    adjacent.pop(other, None)

    def clear(self) -> None:
        """Forget everything (after a change made on the server side)."""
        self._nodes.clear()

    def data(self, id: str) -> dict[str, Any] | None:
        """A copy of a known node's data (``None`` when not known)."""
        known = self._nodes.get(id)
        if known is None:
            return None
        return {**known.data, "provenance": set(known.data["provenance"])}

    def neighbors(
        self,
        id: str,
        types: frozenset[str] | None,
        direction: str,
        type_of: Callable[[str], str | None],
        node_type: str | None,
    ) -> list[str] | None:
        """``neighbors`` of a known node, as ``GraphStore`` lists them; ``None`` when ``id``
        is not known or a neighbour's type (``type_of``) is needed and unknown."""
        known = self._nodes.get(id)
        if known is None:
            return None
        sides = {"out": [known.succ], "in": [known.pred], "both": [known.succ, known.pred]}
        seen: dict[str, None] = {}
        for adjacent in sides[direction]:
            for nbr, keys in adjacent.items():
                if types is not None and not any(t in types for t in keys.values()):
                    continue
                if node_type is not None:
                    nbr_type = type_of(nbr)
                    if nbr_type is None:
                        return None
                    if nbr_type != node_type:
                        continue
                seen.setdefault(nbr, None)
        return list(seen)


def removal_listing(gone: list[str], incident: Iterable[tuple[EdgeKey, int, int]]) -> list[EdgeKey]:
    """The edges at the nodes ``gone`` in the order networkx reports them when the nodes
    are removed one after the other: each node's entering edges, then its leaving ones
    (a self-loop once), by neighbour (``pair_seq``, the first edge between the two) then
    key (``seq``) insertion order; an edge listed once.

    Parameters
    ----------
    gone : list of str
        Removed node ids, in removal order.
    incident : iterable of ((u, v, key), pair_seq, seq)
        Every remaining edge at one of them.

    Examples
    --------
    >>> removal_listing(["a"], [(("b", "a", "r"), 5, 5), (("a", "c", "r"), 1, 1),
    ...                         (("x", "a", "r"), 2, 2)])
    [('x', 'a', 'r'), ('b', 'a', 'r'), ('a', 'c', 'r')]
    """
    at: dict[str, list[tuple[int, int, EdgeKey, bool]]] = {}
    for edge, pair_seq, seq in incident:
        u, v, _ = edge
        at.setdefault(u, []).append((pair_seq, seq, edge, False))
        at.setdefault(v, []).append((pair_seq, seq, edge, True))
    listed: list[EdgeKey] = []
    done: set[EdgeKey] = set()
    for node in gone:
        mine = at.get(node, [])
        entering = sorted((p, q, e) for p, q, e, is_in in mine if is_in)
        leaving = sorted((p, q, e) for p, q, e, is_in in mine if not is_in and e[0] != e[1])
        for *_, edge in entering + leaving:
            if edge not in done:
                done.add(edge)
                listed.append(edge)
    return listed
