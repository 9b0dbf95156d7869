"""A graph backend in FalkorDB: the :class:`~graphrag_integrations.core.graph.protocol.GraphBackend`
protocol over openCypher, so every method keeps its graph in a database server.

:class:`FalkorDBGraph` has the semantics of the networkx
:class:`~graphrag_integrations.core.graph.networkx_store.GraphStore` (the contract is
:mod:`~graphrag_integrations.core.graph.protocol`'s): typed nodes and edges, merging re-adds,
provenance sets and ``remove_provenance``, insertion order of nodes and of edges
(``neighbors`` lists neighbours in the order networkx does), ``remove_edges``, counts and
copies. The layout in the database and the encoding of
attribute values are in :mod:`~graphrag_integrations.core.graph.falkordb_cypher`; the connection is
:func:`~graphrag_integrations.core.graph.falkordb_connection.connect` (the ``falkordb`` extra).

* **Where**: ``FalkorDBGraph.at("falkordb://HOST:PORT/GRAPH")`` is the backend *class* an
  index takes (``graph_store=`` resolves to it): its no-argument constructor opens that graph
  for a new index and refuses one that already holds data (``IndexExistsError``) unless made
  with ``overwrite=True``, which clears it. Nothing else ever deletes a graph.
* **Writes are buffered**: ``add_node`` / ``add_edge`` check their arguments at once (type
  changes, unknown nodes) and queue the change; :meth:`FalkorDBGraph.flush` sends the queue
  as ``UNWIND`` batches, which happens when it is long, before every read, and at the end of
  each :meth:`~graphrag_integrations.core.index.store.IndexStore.writing` batch. Checks use a
  cache of the node types this object wrote, complete for a graph it created, so a build
  makes no round trip per call; on a graph it opened, a node it has not seen is looked up.
* **Reads** are one query each; ``neighbors_many`` and ``nodes_data`` read many nodes in one
  round trip.
* **Persistence**: :meth:`FalkorDBGraph.save` writes a small pointer file (host, port, graph
  name, the graph's id; never credentials) and :meth:`FalkorDBGraph.load` reconnects to it
  (the password from ``FALKORDB_PASSWORD``, or from the URL of the class given to
  :meth:`~graphrag_integrations.core.index.store.IndexStore.load`). The data lives in the
  server: what an index does to the graph after its last ``persist`` is kept there.
* **One writer**: the write caches assume no other process writes the same graph at the
  same time (readers in other processes are fine).

Examples
--------
>>> from graphrag_integrations.testing.falkordb_server import FalkorDBServer
>>> with FalkorDBServer() as server:  # doctest: +SKIP
...     Backend = FalkorDBGraph.at(server.url("papers"))
...     g = Backend()
...     g.add_node("paris", "entity", {"d1"}, label="Paris")
...     g.add_node("france", "entity", {"d1"})
...     _ = g.add_edge("paris", "france", "capital_of", {"d1"})
...     g.neighbors("paris")
['france']
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.graph import falkordb_cypher as cy
from graphrag_integrations.core.graph.falkordb_connection import (
    FalkorDBLocation,
    connect,
    location_from_pointer,
    parse_falkordb_url,
)
from graphrag_integrations.core.graph.falkordb_cypher import decode_string as _dec
from graphrag_integrations.core.graph.falkordb_cypher import encode_string as _enc
from graphrag_integrations.core.graph.falkordb_identity import graph_identity, identity_error
from graphrag_integrations.core.graph.falkordb_journal import FalkorDBJournal
from graphrag_integrations.core.graph.falkordb_reads import FalkorDBReads
from graphrag_integrations.core.graph.falkordb_state import CreatedNodes, Pending, removal_listing
from graphrag_integrations.core.graph.protocol import (
    EdgeKey,
    GraphBackend,
    Removed,
    check_edge,
    check_node,
    check_same_type,
)
from graphrag_integrations.core.persistence import atomic_write_json
from graphrag_integrations.core.retries import one_line, retrying
from graphrag_integrations.errors import (
    IndexExistsError,
    IndexMismatchError,
    IndexNotFoundError,
    InvalidArgumentError,
)

logger = logging.getLogger(__name__)

#: ``"backend"`` of a pointer file written by :meth:`FalkorDBGraph.save`.
POINTER_BACKEND = "falkordb"


class FalkorDBGraph(FalkorDBJournal, FalkorDBReads):
    """A :class:`~graphrag_integrations.core.graph.protocol.GraphBackend` holding its graph in
    FalkorDB (see the module docstring).

    Parameters
    ----------
    location : str or FalkorDBLocation, optional
        ``falkordb://[USER[:PASSWORD]@]HOST[:PORT]/GRAPH``; ``None``: the location of a class
        made by :meth:`at` (an error otherwise).
    overwrite : bool, optional
        Clear a graph that already holds data instead of refusing it; ``None``: the class's
        (``False`` unless made by ``at(..., overwrite=True)``).

    Raises
    ------
    IndexExistsError
        The graph holds data and ``overwrite`` is false (nothing changed).
    ConnectionError
        The server does not answer (one line).

    Attributes
    ----------
    location : FalkorDBLocation
        The server and graph name.
    graph_id : str
        An id made when the graph was created for an index (saved in the pointer file).
    """

    #: The graph lives outside the process: an index writes a pointer file, not the data.
    remote: ClassVar[bool] = True
    #: Nodes this object created whose attributes and edges it keeps to answer ``node()`` and
    #: ``neighbors()`` without a round trip (least recently written dropped first); ``0``: none.
    node_cache_size: ClassVar[int] = 10_000
    _bound: ClassVar[FalkorDBLocation | None] = None
    _bound_overwrite: ClassVar[bool] = False

    location: FalkorDBLocation
    graph_id: str

    def __init__(
        self, location: str | FalkorDBLocation | None = None, *, overwrite: bool | None = None
    ) -> None:
        where = _location(location) if location is not None else type(self)._bound
        if where is None:
            raise InvalidArgumentError(
                "FalkorDBGraph needs a location: FalkorDBGraph('falkordb://HOST:PORT/GRAPH') "
                "or the class FalkorDBGraph.at(url)"
            )
        self._connect(where)
        self._create(type(self)._bound_overwrite if overwrite is None else overwrite)

    @classmethod
    def at(
        cls, location: str | FalkorDBLocation, *, overwrite: bool = False
    ) -> type[FalkorDBGraph]:
        """A subclass bound to ``location``: what an index's ``graph_store`` takes.

        Its no-argument constructor opens the graph for a new index (refusing one that holds
        data unless ``overwrite``); its :meth:`load` prefers this location (and its
        credentials) when a pointer names the same graph. Nothing is contacted here.

        Examples
        --------
        >>> Backend = FalkorDBGraph.at("falkordb://127.0.0.1:6390/papers")
        >>> Backend.bound_location().url, Backend.remote
        ('falkordb://127.0.0.1:6390/papers', True)
        """
        where = _location(location)
        name = f"{cls.__name__}At"
        attrs = {"_bound": where, "_bound_overwrite": overwrite, "__module__": cls.__module__}
        attrs["__doc__"] = f"{cls.__name__} bound to {where.url} (overwrite={overwrite})."
        return type(name, (cls,), attrs)

    @classmethod
    def bound_location(cls) -> FalkorDBLocation | None:
        """The location a class made by :meth:`at` is bound to (``None`` for the base class)."""
        return cls._bound

    @classmethod
    def open(cls, location: str | FalkorDBLocation) -> FalkorDBGraph:
        """The existing graph an index made at ``location``, to read and change it.

        Raises
        ------
        IndexMismatchError
            The graph does not exist, or was not made by this package.
        ConnectionError
            The server does not answer (one line).
        """
        self = cls.__new__(cls)
        self._connect(_location(location))
        self._open_existing()
        return self

    # -- connection and layout -------------------------------------------------------------
    def _connect(self, location: FalkorDBLocation) -> None:
        self.location = location
        self.graph_id = ""  # checked on every new connection once set (_check_identity)
        self._client = connect(location, on_connect=self._check_identity)
        self._graph = self._client.select_graph(location.graph)
        self._lock = threading.RLock()
        self._nodes: dict[str, Pending] = {}
        self._edges: dict[EdgeKey, Pending] = {}
        # node id -> type of every node known to exist; complete for a graph made here
        self._types: dict[str, str] = {}
        # (u, v, key) -> type of the known edges whose type is not their key
        self._keyed: dict[EdgeKey, str] = {}
        self._complete = False
        # full data of nodes created here (what the server holds, queued writes included)
        self._created = CreatedNodes(self.node_cache_size)
        self._next_seq: int | None = None

    def _check_identity(self, connection: Any) -> None:
        """On every new connection (the first and each reconnect), before anything is sent
        on it: the graph must still be the one this object made or opened
        (:mod:`~graphrag_integrations.core.graph.falkordb_identity`)."""
        expected = self.graph_id
        if not expected:  # still creating or opening the graph
            return
        found = graph_identity(connection, self.location.graph)
        if found != expected:
            connection.disconnect()
            raise identity_error(self.location, found, expected)

    def _query(self, text: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        args = dict(params) if params else None
        try:
            return retrying(
                self.location.server,
                lambda: list(self._graph.query(text, args).result_set),
                "query",
            )
        except (OSError, IndexMismatchError):
            raise
        except Exception as error:  # a Cypher error: one line
            raise RuntimeError(
                f"FalkorDB graph {self.location.url}: query failed ({one_line(error)})"
            ) from None

    def _exists(self) -> bool:
        return self.location.graph in retrying(
            self.location.server, self._client.list_graphs, "list graphs"
        )

    def _create(self, overwrite: bool) -> None:
        """Make the graph empty and ours: refuse data unless ``overwrite``."""
        if self._exists():
            held = int(self._query(cy.COUNT_FOREIGN)[0][0])
            if held and not overwrite:
                raise IndexExistsError(
                    f"{self.location.url} holds {held} nodes; pass overwrite=True / "
                    "--overwrite to replace it"
                )
            if held:
                logger.warning("replacing the %d nodes of %s", held, self.location.url)
            retrying(self.location.server, self._graph.delete, "delete graph")
        for text in cy.INDEXES:
            self._query(text)
        graph_id = uuid.uuid4().hex
        self._query(cy.META_WRITE, {"layout": cy.LAYOUT_VERSION, "graph_id": graph_id})
        self.graph_id = graph_id
        self._complete = True
        self._next_seq = 1

    def _open_existing(self) -> None:
        if not self._exists():
            raise IndexMismatchError(f"{self.location.url}: the graph does not exist (gone?)")
        rows = self._query(cy.META_READ)
        if not rows:
            raise IndexMismatchError(
                f"{self.location.url}: not a graph made by graphrag-integrations (no meta node)"
            )
        layout, graph_id = rows[0]
        if not isinstance(layout, int) or layout > cy.LAYOUT_VERSION:
            raise IndexMismatchError(
                f"{self.location.url}: graph layout {layout!r} is newer than supported "
                f"{cy.LAYOUT_VERSION}; upgrade graphrag-integrations"
            )
        self.graph_id = str(graph_id)
        indexed = {(label, prop) for label, props in self._query(cy.INDEXED) for prop in props}
        for key, text in cy.PROV_INDEXES.items():
            if key not in indexed:  # a graph made by an older version
                self._query(text)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location.url!r})"

    # -- building --------------------------------------------------------------------------
    def _seq(self) -> int:
        if self._next_seq is None:
            row = self._query(cy.MAX_SEQ)[0]
            self._next_seq = max(int(row[0] or 0), int(row[1] or 0)) + 1
        self._next_seq += 1
        return self._next_seq - 1

    def _has_node(self, id: object) -> bool:
        return isinstance(id, str) and self._node_type(id) is not None

    def _node_type(self, id: str) -> str | None:
        """The type of node ``id`` (queued, cached or in the server), ``None`` if none."""
        pending = self._nodes.get(id)
        if pending is not None:
            return pending.type
        known = self._types.get(id)
        if known is not None or self._complete:
            return known
        rows = self._query(cy.NODE_TYPES, {"ids": [_enc(id)]})
        if not rows:
            return None
        self._types[id] = found = str(_dec(rows[0][1]))
        return found

    def _edge_type(self, edge: EdgeKey) -> str | None:
        """The type of an edge if it exists with a type other than its key (else ``None``)."""
        pending = self._edges.get(edge)
        if pending is not None:
            return pending.type
        known = self._keyed.get(edge)
        if known is not None or self._complete:
            return known
        rows = self._query(cy.EDGE_TYPES, {"rows": [[_enc(x) for x in edge]]})
        if not rows:
            return None
        found = str(_dec(rows[0][3]))
        if found != edge[2]:
            self._keyed[edge] = found
        return found

    def add_node(self, id: str, type: str, provenance: Iterable[str] = (), **attrs: Any) -> None:
        """Add a node, or merge into an existing one (as :meth:`GraphStore.add_node
        <graphrag_integrations.core.graph.networkx_store.GraphStore.add_node>`).

        Raises
        ------
        ValueError
            If the node exists with another type, or an id/type is empty.
        TypeError
            If an attribute value cannot be stored (see
            :mod:`~graphrag_integrations.core.graph.falkordb_cypher`).
        """
        prov, extra = check_node(id, type, provenance, attrs)
        stored = cy.encode_attrs(extra, f"node {id!r}")
        with self._lock:
            known = self._node_type(id)
            check_same_type(f"node {id!r}", known, type)
            pending = self._nodes.get(id)
            if pending is None:
                self._nodes[id] = Pending(type, self._seq(), prov, stored)
            else:
                pending.prov |= prov
                pending.attrs.update(stored)
            self._types[id] = type
            self._created.remember(id, known is None, type, prov, extra)
            self._flush_if_full()

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
        """Add a directed edge ``u -> v``, or merge into the existing one with the same key;
        returns the edge key (arguments, checks and errors as :meth:`GraphStore.add_edge
        <graphrag_integrations.core.graph.networkx_store.GraphStore.add_edge>`)."""
        with self._lock:
            edge_key, prov, extra = check_edge(
                u, v, type, key, provenance, attrs, exists=self._has_node
            )
            stored = cy.encode_attrs(extra, f"edge {(u, v, edge_key)!r}")
            edge = (u, v, edge_key)
            check_same_type(f"edge {edge!r}", self._edge_type(edge), type)
            pending = self._edges.get(edge)
            if pending is None:
                self._edges[edge] = Pending(type, self._seq(), prov, stored)
            else:
                pending.prov |= prov
                pending.attrs.update(stored)
            if type != edge_key:
                self._keyed[edge] = type
            self._created.link(u, v, edge_key, type)
            self._flush_if_full()
        return edge_key

    def discard_pending(self) -> None:
        """After a failed write: drop the queued writes and everything known without asking
        the server (what it holds is read again), so nothing of the failed write is sent
        later and no cache answers for it."""
        with self._lock:
            self._nodes.clear()
            self._edges.clear()
            self._types.clear()
            self._keyed.clear()
            self._created.clear()
            self._complete = False
            self._next_seq = None

    def _flush_if_full(self) -> None:
        if len(self._nodes) + len(self._edges) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        """Send the queued writes (nodes first, then edges) in ``UNWIND`` batches.

        A failed flush keeps the queue (sending it again is harmless: writes merge).
        """
        with self._lock:
            if self._journal is not None and (self._nodes or self._edges):
                self._journal_cover(p.prov for p in (*self._nodes.values(), *self._edges.values()))
            if self._nodes:
                rows = [
                    {
                        "id": _enc(id),
                        "type": _enc(p.type),
                        "seq": p.seq,
                        "prov": [_enc(d) for d in sorted(p.prov)],
                        "attrs": p.attrs,
                    }
                    for id, p in self._nodes.items()
                ]
                for batch in batches(rows, self.batch_size):
                    self._query(cy.MERGE_NODES, {"rows": batch})
                self._nodes.clear()
            if self._edges:
                first: dict[tuple[str, str], int] = {}
                for (u, v, _), p in self._edges.items():
                    first[u, v] = min(first.get((u, v), p.seq), p.seq)
                rows = [
                    {
                        "u": _enc(u),
                        "v": _enc(v),
                        "key": _enc(k),
                        "type": _enc(p.type),
                        "seq": p.seq,
                        "ps": first[u, v],
                        "prov": [_enc(d) for d in sorted(p.prov)],
                        "attrs": p.attrs,
                    }
                    for (u, v, k), p in self._edges.items()
                ]
                for batch in batches(rows, self.batch_size):
                    self._query(cy.MERGE_EDGES, {"rows": batch})
                self._edges.clear()

    # -- deletion --------------------------------------------------------------------------
    def remove_provenance(self, doc_id: str) -> Removed:
        """Forget document ``doc_id`` (as :meth:`GraphStore.remove_provenance
        <graphrag_integrations.core.graph.networkx_store.GraphStore.remove_provenance>`: the same
        nodes and edges removed, reported in the same order)."""
        doc = {"doc": _enc(doc_id)}
        with self._lock:
            self._journal_cover([[doc_id]], removing=True)
            rows = self._read(cy.PROV_EDGES, doc)
            removed_edges = [(_dec(u), _dec(v), _dec(k)) for u, v, k, n in rows if n == 1]
            if rows:
                self._query(cy.PROV_EDGES_DELETE, doc)
                self._query(cy.PROV_EDGES_UPDATE, doc)
            node_rows = self._query(cy.PROV_NODES, doc)
            gone = [id for id, n in node_rows if n == 1]
            if gone:
                removed_edges += self._edges_of_removed(gone)
                for batch in batches(gone, self.batch_size):
                    self._query(cy.DELETE_NODES, {"ids": batch})
            if node_rows:
                self._query(cy.PROV_NODES_UPDATE, doc)
            removed_nodes = [_dec(id) for id in gone]
            for node in removed_nodes:
                self._types.pop(node, None)
            self._created.clear()  # provenance changed
            for edge in removed_edges:
                self._keyed.pop(edge, None)
        if removed_nodes or removed_edges:
            logger.debug(
                "removed %d nodes and %d edges of document %r",
                len(removed_nodes),
                len(removed_edges),
                doc_id,
            )
        return Removed(removed_nodes, removed_edges)

    def _edges_of_removed(self, gone: list[str]) -> list[EdgeKey]:
        """The remaining edges of the nodes ``gone`` (stored ids), in networkx's order."""
        incident: list[tuple[EdgeKey, int, int]] = []
        for batch in batches(gone, self.batch_size):
            for u, v, k, pair_seq, seq in self._query(cy.INCIDENT_EDGES, {"ids": batch}):
                incident.append(((_dec(u), _dec(v), _dec(k)), int(pair_seq), int(seq)))
        return removal_listing([_dec(id) for id in gone], incident)

    def remove_edges(self, edges: Iterable[EdgeKey]) -> list[EdgeKey]:
        """Remove the edges ``(u, v, key)`` whatever their provenance (unknown ones skipped);
        returns those that existed, in the order given."""
        wanted = list(dict.fromkeys((u, v, k) for u, v, k in edges))
        if not wanted:
            return []
        rows = [[_enc(u), _enc(v), _enc(k), i] for i, (u, v, k) in enumerate(wanted)]
        done: set[int] = set()
        with self._lock:
            self.flush()
            for batch in batches(rows, self.batch_size):
                done.update(int(row[0]) for row in self._query(cy.DELETE_EDGES, {"rows": batch}))
            removed = [edge for i, edge in enumerate(wanted) if i in done]
            for edge in removed:
                self._keyed.pop(edge, None)
                self._created.unlink(edge)
        return removed

    def remove_nodes(self, ids: Iterable[str]) -> list[str]:
        """Remove the nodes ``ids`` and their edges whatever their provenance (unknown ones
        skipped); returns those that existed, in the order given. For nodes an index keeps
        as a cache (:meth:`~graphrag_integrations.core.index.store.IndexStore.load`'s
        ``cached_kinds``)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        with self._lock:
            self.flush()
            found: set[str] = set()
            for batch in batches([_enc(id) for id in wanted], self.batch_size):
                found.update(_dec(row[0]) for row in self._query(cy.NODE_TYPES, {"ids": batch}))
            gone = [id for id in wanted if id in found]
            stored = [_enc(id) for id in gone]
            for edge in self._edges_of_removed(stored) if stored else ():
                self._keyed.pop(edge, None)
            for batch in batches(stored, self.batch_size):
                self._query(cy.DELETE_NODES, {"ids": batch})
            for node in gone:
                self._types.pop(node, None)
            self._created.clear()  # adjacency of the remaining nodes changed
        return gone

    # -- copying and persistence -----------------------------------------------------------
    def copy_from(self, source: GraphBackend) -> None:
        """Add every node and edge of ``source`` (a ``GraphStore`` or another
        ``FalkorDBGraph``) with provenance and attributes, in its insertion order, in
        batches: re-homing a saved networkx graph into FalkorDB.

        Neighbour order afterwards is that of ``GraphStore.load`` of the same graph (edges
        added in ``edges()`` order).
        """
        for kind, (ident, data) in _records(source):
            attrs = {a: x for a, x in data.items() if a not in ("type", "provenance")}
            if kind == "node":
                self.add_node(ident, data["type"], data["provenance"], **attrs)
            else:
                u, v, key = ident
                self.add_edge(u, v, data["type"], data["provenance"], key=key, **attrs)
        self.flush()

    def save(self, path: str | Path) -> None:
        """Flush, then write the pointer file ``path`` (atomically): backend, layout, host,
        port, graph name, graph id, and node / edge counts. Never the credentials."""
        with self._lock:
            self.flush()
            pointer = {
                "backend": POINTER_BACKEND,
                "layout": cy.LAYOUT_VERSION,
                **self.location.pointer(),
                "graph_id": self.graph_id,
                "nodes": len(self),
                "edges": self.number_of_edges(),
            }
        atomic_write_json(path, pointer)

    @classmethod
    def load(cls, path: str | Path) -> FalkorDBGraph:
        """Reconnect to the graph a pointer file names (or, on a class bound by :meth:`at`,
        to the graph it is bound to: where the saved one is now).

        Raises
        ------
        IndexNotFoundError
            If the file does not exist.
        IndexMismatchError
            If it is not a FalkorDB pointer, or the graph is gone or now another one.
        ConnectionError
            The server does not answer (one line).
        """
        pointer = read_pointer(path)
        where = location_from_pointer(pointer, source=str(path))
        if cls._bound is not None:
            # the caller says where the graph is now (the server may have moved) and with
            # which credentials; the graph id below still guards against another graph
            where = cls._bound
        graph = cls.open(where)
        if pointer.get("graph_id") and graph.graph_id != pointer["graph_id"]:
            raise IndexMismatchError(
                f"{path}: {where.url} now holds another graph (id {graph.graph_id}, the index "
                f"saved {pointer['graph_id']}): it was replaced since"
            )
        return graph


def read_pointer(path: str | Path) -> dict[str, Any]:
    """The content of a pointer file written by :meth:`FalkorDBGraph.save`.

    Raises
    ------
    IndexNotFoundError
        If the file does not exist.
    IndexMismatchError
        If it is not JSON or not a FalkorDB pointer.
    """
    src = Path(path)
    if not src.is_file():
        raise IndexNotFoundError(f"no saved graph pointer at {src}")
    try:
        data = json.loads(src.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise IndexMismatchError(f"{src} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("backend") != POINTER_BACKEND:
        raise IndexMismatchError(f"{src}: not a FalkorDB graph pointer")
    if not isinstance(data.get("layout"), int) or data["layout"] > cy.LAYOUT_VERSION:
        raise IndexMismatchError(
            f"{src}: graph layout {data.get('layout')!r} is newer than supported "
            f"{cy.LAYOUT_VERSION}; upgrade graphrag-integrations"
        )
    try:
        location_from_pointer(data, source=str(src))
    except InvalidArgumentError as exc:
        raise IndexMismatchError(str(exc)) from None
    return data


def _location(location: str | FalkorDBLocation) -> FalkorDBLocation:
    if isinstance(location, FalkorDBLocation):
        return location
    if isinstance(location, str):
        return parse_falkordb_url(location)
    raise InvalidArgumentError(
        f"a FalkorDB location is a falkordb://HOST:PORT/GRAPH URL, got {location!r}"
    )


def _records(source: GraphBackend) -> Iterator[tuple[str, Any]]:
    """Node then edge records of a backend with ``iter_records`` or ``edges`` / ``edge``."""
    own = getattr(source, "iter_records", None)
    if callable(own):
        yield from own()
        return
    edges, edge = getattr(source, "edges", None), getattr(source, "edge", None)
    if not (callable(edges) and callable(edge)):
        raise InvalidArgumentError(
            f"cannot copy a {type(source).__name__}: it lists no edges (edges() / edge())"
        )
    ids = source.nodes()
    for batch in batches(ids, 1000):
        for id, data in source.nodes_data(batch).items():
            yield "node", (id, data)
    for u, v, k in edges():
        yield "edge", ((u, v, k), edge(u, v, k))
