"""Reading a graph in FalkorDB: the read half of
:class:`~graphrag_integrations.core.graph.falkordb_graph.FalkorDBGraph`.

:class:`FalkorDBReads` answers the reading calls of the ``GraphBackend`` protocol (and the
``GraphStore`` extras the methods use: ``edge``, ``edges``, ``edges_between``...)
with one query each - ``neighbors_many`` and ``nodes_data`` for many nodes at once - after
flushing the writes its subclass queued; nodes the object created itself are answered from
its :class:`~graphrag_integrations.core.graph.falkordb_state.CreatedNodes` without a round trip.
Orders are ``GraphStore``'s: nodes by insertion number, neighbours by the insertion number of
the first edge linking them (``_pseq``), edges by source, neighbour, then key.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.graph import falkordb_cypher as cy
from graphrag_integrations.core.graph.falkordb_cypher import decode_string as _dec
from graphrag_integrations.core.graph.falkordb_cypher import encode_string as _enc
from graphrag_integrations.core.graph.falkordb_state import CreatedNodes
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import (
    Direction,
    EdgeKey,
    check_direction,
    edge_types,
)
from graphrag_integrations.core.graph.term_search import searchable

_PATTERNS = {"out": f"-[e:{cy.EDGE}]->", "in": f"<-[e:{cy.EDGE}]-", "both": f"-[e:{cy.EDGE}]-"}


class FalkorDBReads(ABC):
    """The reading methods of a FalkorDB graph backend (see the module docstring); the
    subclass connects, queues writes and flushes them."""

    #: Rows per ``UNWIND`` query, and queued writes that trigger a flush.
    batch_size: ClassVar[int] = 500
    _lock: threading.RLock
    _created: CreatedNodes
    _types: dict[str, str]

    @abstractmethod
    def flush(self) -> None:
        """Send the queued writes."""

    @abstractmethod
    def _query(self, text: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        """Run one query (one-line errors)."""

    @abstractmethod
    def _node_type(self, id: str) -> str | None:
        """The type of node ``id``, ``None`` if there is none."""

    def _read(self, text: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        """Flush, then query (outside the lock: readers of several threads run in parallel;
        the owning index keeps writers out while they read)."""
        with self._lock:
            self.flush()
        return self._query(text, params)

    def __len__(self) -> int:
        return int(self._read(cy.COUNT_NODES)[0][0])

    def __contains__(self, node: object) -> bool:
        if not isinstance(node, str):
            return False
        with self._lock:
            return self._node_type(node) is not None

    def number_of_edges(self, type: str | None = None) -> int:
        """Number of edges (of one type if given)."""
        if type is None:
            return int(self._read(cy.COUNT_EDGES)[0][0])
        return int(self._read(cy.COUNT_EDGES_OF_TYPE, {"type": _enc(type)})[0][0])

    def nodes(self, type: str | None = None) -> list[str]:
        """Node ids in insertion order (of one type if given)."""
        if type is None:
            rows = self._read(cy.NODE_IDS)
        else:
            rows = self._read(cy.NODE_IDS_OF_TYPE, {"type": _enc(type)})
        return [_dec(row[0]) for row in rows]

    def edges(self, type: str | None = None) -> list[EdgeKey]:
        """``(source, target, key)`` of every edge (of one type if given), in the order
        :meth:`GraphStore.edges <graphrag_integrations.core.graph.networkx_store.GraphStore.edges>`
        lists them."""
        where = "" if type is None else "WHERE e._type = $type"
        rows = self._read(cy.EDGE_KEYS.replace("<WHERE>", where), {"type": _enc(type or "")})
        return [(_dec(u), _dec(v), _dec(k)) for u, v, k in rows]

    def node(self, id: str) -> dict[str, Any]:
        """Attributes of a node (a copy; includes ``type`` and ``provenance``)."""
        return self.nodes_data([id])[id]

    def nodes_data(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """``{id: node(id)}`` for each id, in the order given, in one round trip (``KeyError``
        naming the first unknown id)."""
        wanted = list(dict.fromkeys(ids))
        with self._lock:
            found = {id: data for id in wanted if (data := self._created.data(id)) is not None}
            missing = [_enc(id) for id in wanted if id not in found]
        if missing:
            for id, props in self._read(cy.NODES_DATA, {"ids": missing}):
                found[_dec(id)] = node_record(props)
        for id in wanted:
            if id not in found:
                raise KeyError(f"unknown node {id!r}")
        return {id: found[id] for id in wanted}

    def node_type(self, id: str) -> str:
        """Type of a node."""
        return str(self.node(id)["type"])

    def provenance(self, id: str) -> set[str]:
        """Document ids a node was derived from (a copy)."""
        return set(self.node(id)["provenance"])

    def edge(self, u: str, v: str, key: str) -> dict[str, Any]:
        """Attributes of an edge (a copy; includes ``type`` and ``provenance``)."""
        rows = self._read(cy.EDGE_DATA, {"u": _enc(u), "v": _enc(v), "key": _enc(key)})
        if not rows:
            raise KeyError(f"unknown edge {(u, v, key)!r}")
        return node_record(rows[0][0])

    def edges_between(self, u: str, v: str, edge_type: str | None = None) -> list[EdgeKey]:
        """Every parallel edge ``u -> v`` (of one type if given), in insertion order."""
        where = "" if edge_type is None else "WHERE e._type = $type"
        params = {"u": _enc(u), "v": _enc(v), "type": _enc(edge_type or "")}
        return [
            (u, v, _dec(row[0]))
            for row in self._read(cy.EDGES_BETWEEN.replace("<WHERE>", where), params)
        ]

    def _adjacency(
        self,
        ids: list[str],
        edge_type: str | Iterable[str] | None,
        direction: str,
        node_type: str | None,
    ) -> dict[str, list[tuple[bool, bool, int, str, int]]]:
        """Per id: ``(is_out, is_in, order, neighbour, edge count)`` rows, one query."""
        check_direction(direction)
        types = edge_types(edge_type)
        conditions = []
        params: dict[str, Any] = {"ids": [_enc(i) for i in ids]}
        if types is not None:
            conditions.append("e._type IN $types")
            params["types"] = [_enc(t) for t in sorted(types)]
        if node_type is not None:
            conditions.append("b._type = $node_type")
            params["node_type"] = _enc(node_type)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        text = cy.NEIGHBORS.replace("<PATTERN>", _PATTERNS[direction]).replace("<WHERE>", where)
        out: dict[str, list[tuple[bool, bool, int, str, int]]] = {}
        for id, nbr, is_out, is_in, order, count in self._read(text, params):
            rows = out.setdefault(_dec(id), [])
            if nbr is not None:
                rows.append((bool(is_out), bool(is_in), int(order), _dec(nbr), int(count)))
        for id in ids:
            if id not in out:
                raise KeyError(f"unknown node {id!r}")
        return out

    def neighbors(
        self,
        id: str,
        edge_type: str | Iterable[str] | None = None,
        direction: Direction = "out",
        node_type: str | None = None,
    ) -> list[str]:
        """Distinct neighbours of ``id``, in edge insertion order (``"both"``: those along
        leaving edges, then those along entering ones), as :meth:`GraphStore.neighbors
        <graphrag_integrations.core.graph.networkx_store.GraphStore.neighbors>`.

        Raises
        ------
        KeyError
            If ``id`` is not a node.
        ValueError
            On an unknown ``direction``.
        """
        return self.neighbors_many([id], edge_type, direction, node_type)[id]

    def neighbors_many(
        self,
        ids: Iterable[str],
        edge_type: str | Iterable[str] | None = None,
        direction: Direction = "out",
        node_type: str | None = None,
    ) -> dict[str, list[str]]:
        """``{id: neighbors(id, ...)}`` for each id, in the order given, in one round trip."""
        check_direction(direction)
        wanted = list(dict.fromkeys(ids))
        types = edge_types(edge_type)
        with self._lock:
            local = {
                id: self._created.neighbors(id, types, direction, self._types.get, node_type)
                for id in wanted
            }
        asked = [id for id in wanted if local[id] is None]
        rows = self._adjacency(asked, edge_type, direction, node_type) if asked else {}
        result: dict[str, list[str]] = {}
        for id in wanted:
            if (mine := local[id]) is not None:
                result[id] = mine
                continue
            seen: dict[str, None] = {}
            if direction in ("out", "both"):
                for _, _, _, nbr, _ in sorted((r for r in rows[id] if r[0]), key=_order):
                    seen.setdefault(nbr, None)
            if direction in ("in", "both"):
                for _, _, _, nbr, _ in sorted((r for r in rows[id] if r[1]), key=_order):
                    seen.setdefault(nbr, None)
            result[id] = list(seen)
        return result

    # -- term search (core.graph.term_search.TermSearch) ----------------------------------------
    def has_term_index(self, attr: str) -> bool:
        """Whether the words of attribute ``attr`` have a full-text index ready to answer
        (one still being built does not count)."""
        prop = cy.encode_attr_name(attr)
        for properties, types, status, _ in self._read(cy.TERM_INDEXES):
            if prop in properties and "FULLTEXT" in (types.get(prop) or ()):
                return bool(status == "OPERATIONAL")
        return False

    def index_terms(self, attr: str, *, wait_s: float = 600.0) -> None:
        """Index the words of attribute ``attr`` (FalkorDB full-text index, no stop words) and
        wait until the index answers (``TimeoutError`` after ``wait_s``)."""
        if not self.has_term_index(attr):
            prop = cy.encode_attr_name(attr)
            rows = self._read(cy.TERM_INDEXES)
            if not any(prop in properties for properties, *_ in rows):
                self._create_term_index(prop, rows)
            pause, waited = 0.01, 0.0
            while not self.has_term_index(attr):
                if waited > wait_s:
                    raise TimeoutError(f"the full-text index of {attr!r} is not ready")
                time.sleep(pause)
                waited += pause
                pause = min(pause * 2, 1.0)

    def _create_term_index(self, prop: str, rows: list[list[Any]]) -> None:
        try:
            self._query(cy.TERM_INDEX_CREATE, {"prop": prop})
        except RuntimeError as error:
            if "override index configuration" not in str(error):
                raise
            # the label had a full-text index: its options stay, usable without stop words
            if any(stopwords for *_, stopwords in rows):
                raise RuntimeError(
                    f"the full-text indexes of this graph drop stop words {rows[0][-1][:5]}; "
                    "term search needs every word"
                ) from None
            self._query(cy.TERM_INDEX_ADD, {"prop": prop})

    def nodes_without(self, attr: str, type: str) -> list[str]:
        """Ids of the nodes of ``type`` lacking attribute ``attr``."""
        # the name goes inside backticks: encode_attr_name escapes any backtick in it
        text = cy.NODES_WITHOUT.replace("<PROP>", cy.encode_attr_name(attr))
        return [_dec(row[0]) for row in self._read(text, {"type": _enc(type)})]

    def nodes_with_term(self, attr: str, term: str, type: str | None = None) -> list[str]:
        """Ids of the nodes (of ``type``) whose ``attr`` holds the word ``term`` (or a
        stemmed variant); ``attr`` must be indexed (:meth:`index_terms`)."""
        if not searchable(term):
            raise ValueError(f"not a searchable word: {term[:80]!r}")
        params = {"term": term, "type": None if type is None else _enc(type)}
        return [_dec(row[0]) for row in self._read(cy.TERM_NODES, params)]

    # -- export ---------------------------------------------------------------------------
    def iter_records(self) -> Iterator[tuple[str, Any]]:
        """Every node then every edge, in insertion order, as ``("node", (id, data))`` and
        ``("edge", ((u, v, key), data))`` records, read page by page."""
        ids = self.nodes()
        for batch in batches(ids, self.batch_size):
            for id, data in self.nodes_data(batch).items():
                yield "node", (id, data)
        for batch in batches(ids, self.batch_size):
            rows = self._read(cy.OUT_EDGES, {"ids": [_enc(i) for i in batch]})
            for u, v, k, props in rows:
                yield "edge", ((_dec(u), _dec(v), _dec(k)), node_record(props))

    def to_graph_store(self) -> GraphStore:
        """A networkx :class:`~graphrag_integrations.core.graph.networkx_store.GraphStore` copy."""
        store = GraphStore()
        for kind, (ident, data) in self.iter_records():
            attrs = {a: x for a, x in data.items() if a not in ("type", "provenance")}
            if kind == "node":
                store.add_node(ident, data["type"], data["provenance"], **attrs)
            else:
                u, v, key = ident
                store.add_edge(u, v, data["type"], data["provenance"], key=key, **attrs)
        return store

    def to_graphml(self, path: str | Path) -> None:
        """Write GraphML as :meth:`GraphStore.to_graphml
        <graphrag_integrations.core.graph.networkx_store.GraphStore.to_graphml>` does (reads the
        whole graph)."""
        self.to_graph_store().to_graphml(path)

    def to_dict(self) -> dict[str, Any]:
        """The node-link form :meth:`GraphStore.to_dict
        <graphrag_integrations.core.graph.networkx_store.GraphStore.to_dict>` gives (reads the whole
        graph)."""
        return self.to_graph_store().to_dict()


def _order(row: tuple[bool, bool, int, str, int]) -> int:
    return row[2]


def node_record(props: Mapping[str, Any]) -> dict[str, Any]:
    """The ``node()`` / ``edge()`` dict of stored properties."""
    return {
        "type": _dec(props["_type"]),
        "provenance": cy.decode_prov(props.get("_prov")),
        **dict(cy.user_attrs(props)),
    }
