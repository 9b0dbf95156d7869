"""Vector layers in FalkorDB's own vector index: one server for the graph and the vectors.

:class:`FalkorDBVectorIndex` keeps one layer as nodes of one label in a FalkorDB graph: the
vector in a ``vecf32`` property under a ``CREATE VECTOR INDEX`` (HNSW, cosine), the id under a
range index, each metadata value in a property ``m.<key>`` (what filters read) and the whole
metadata as JSON (what comes back). Scores are ``1 - cosine distance`` as the server computes
it in ``float32``.

* **search** - without a filter, ``CALL db.idx.vector.queryNodes(label, 'v', k, vecf32(q))``
  (approximate: ``hnsw={"efRuntime": ...}``, 200 by default, trades speed for recall;
  ``exact=True`` always ranks every record). With a filter FalkorDB can express with our
  semantics (``==``, ``!=``, numeric order, ``in``, ``nin``, ``and`` / ``or`` / ``not``; a
  record without the key never matches a comparison), the matching records are ranked
  exactly in one Cypher query (``vec.cosineDistance``); other filters are evaluated on the
  returned metadata (over-fetch).
* **layout** - :class:`FalkorDBVectors` (the ``vector_index=`` factory) puts every layer of
  an index in one graph named ``<graph of the URL>-<first 16 hex digits of the index id>``,
  a label per layer, plus one ``GIVectorLayer`` node per layer recording the owner (index id,
  layer), embedding model, dimension and the content checksum of the persisted copy it
  holds, exactly as
  :class:`~graphrag_integrations.core.vector_store.chroma_collections.ChromaVectors` does for
  Chroma collections: loading the same index again reuses the graph, a graph of
  another index is refused, and only :meth:`FalkorDBVectors.drop` removes anything.
* **connection** - :mod:`graphrag_integrations.core.graph.falkordb_connection` (``falkordb://``
  URLs; the password never written anywhere; :meth:`FalkorDBVectorIndex.pointer` is what may
  be saved).

Examples
--------
>>> vector_graph_name("papers", "0123456789abcdef0123")
'papers-0123456789abcdef'
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Mapping
from typing import Any

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.graph.falkordb_connection import (
    FalkorDBLocation,
    connect,
    parse_falkordb_url,
)
from graphrag_integrations.core.retries import retrying
from graphrag_integrations.core.retrieval.filters import (
    AllOf,
    AnyOf,
    Comparison,
    MetadataFilter,
    NoneOf,
)
from graphrag_integrations.core.vector_store.external import Candidate, StoreVectorIndex
from graphrag_integrations.core.vector_store.validation import Records
from graphrag_integrations.errors import IndexMismatchError

logger = logging.getLogger(__name__)

#: Label of the node recording a layer's owner, model, dimension and content checksum.
META_LABEL = "GIVectorLayer"
#: Records written per query.
BATCH = 1000
#: HNSW settings of a new layer. FalkorDB's own ``efRuntime`` default (10) found 32 % of the
#: exact top-10 of 2,000 random 384-d vectors; 200 finds 98.6 % (docs/lab/vector-stores.md).
DEFAULT_HNSW = {"M": 16, "efConstruction": 200, "efRuntime": 200}
_LAYER = re.compile(r"^[A-Za-z0-9_]{1,100}$")
_CYPHER_ORDER = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_FIX = "use another URL graph, pass overwrite=True to replace it, or drop it (FalkorDBVectors.drop)"


def vector_graph_name(graph: str, index_id: str) -> str:
    """The graph holding the vector layers of index ``index_id`` (see the module docstring)."""
    return f"{graph}-{index_id[:16]}"


def _prop(name: str) -> str:
    """A property access ``n.`name``` with backticks escaped."""
    return "n.`" + name.replace("`", "``") + "`"


class _Cypher:
    """A filter translated into a Cypher condition with its parameters."""

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}

    def value(self, value: Any) -> str:
        name = f"f{len(self.params)}"
        self.params[name] = list(value) if isinstance(value, tuple) else value
        return "$" + name

    def condition(self, node: MetadataFilter) -> str | None:
        if isinstance(node, (AllOf, AnyOf, NoneOf)):
            parts = [self.condition(f) for f in node.filters]
            if any(p is None for p in parts) or not parts:
                return None
            if isinstance(node, NoneOf):
                return "NOT (" + " OR ".join(f"({p})" for p in parts) + ")"
            joiner = " AND " if isinstance(node, AllOf) else " OR "
            return joiner.join(f"({p})" for p in parts)
        assert isinstance(node, Comparison)
        prop, op, value = _prop("m." + node.key), node.operator, node.value
        if op in ("eq", "ne"):
            return f"coalesce({prop} {'=' if op == 'eq' else '<>'} {self.value(value)}, false)"
        if op in _CYPHER_ORDER and isinstance(value, (int, float)) and not isinstance(value, bool):
            return f"coalesce({prop} {_CYPHER_ORDER[op]} {self.value(value)}, false)"
        if op in ("in", "nin"):
            test = f"{prop} IN {self.value(value)}"
            return f"coalesce({test}, false)" if op == "in" else f"coalesce(NOT ({test}), false)"
        return None


def cypher_filter(where: MetadataFilter) -> tuple[str, dict[str, Any]] | None:
    """``(condition, parameters)`` of ``where`` on node ``n``, or ``None`` if not expressible.

    Examples
    --------
    >>> from graphrag_integrations.core.retrieval.filters import parse_filter
    >>> condition, params = cypher_filter(parse_filter({"lang": "en", "year": {"$gt": 2000}}))
    >>> condition
    '(coalesce(n.`m.lang` = $f0, false)) AND (coalesce(n.`m.year` > $f1, false))'
    >>> params
    {'f0': 'en', 'f1': 2000}
    >>> cypher_filter(parse_filter({"title": {"$contains": "ee"}})) is None
    True
    """
    cypher = _Cypher()
    condition = cypher.condition(where)
    return None if condition is None else (condition, cypher.params)


class FalkorDBVectorIndex(StoreVectorIndex):
    """One vector layer in FalkorDB (see the module docstring).

    Parameters
    ----------
    location : str or FalkorDBLocation
        ``falkordb://HOST:PORT/GRAPH``: the server and the graph holding the layer.
    layer : str
        The layer (its label: letters, digits, ``_``).
    dimension : int
        Length of every vector.
    model_name : str
        Embedding model that produced the vectors (recorded, checked when reopened).
    owner : str, optional
        The index id the layer belongs to; an existing layer recording another owner is
        refused. ``None``: no owner check.
    overwrite : bool
        Delete the layer's existing records (whatever they are) and start empty.
    exact : bool
        Rank every record on each query (exact top-k) instead of the HNSW index.
    hnsw : mapping, optional
        ``M``, ``efConstruction``, ``efRuntime`` of a new vector index (defaults:
        :data:`DEFAULT_HNSW`; fixed once the layer exists).
    client : falkordb.FalkorDB, optional
        A connected client to reuse (else
        :func:`~graphrag_integrations.core.graph.falkordb_connection.connect`).

    Raises
    ------
    IndexMismatchError
        If the layer exists with another owner, embedding model or dimension.
    """

    def __init__(
        self,
        location: str | FalkorDBLocation,
        layer: str,
        *,
        dimension: int,
        model_name: str,
        owner: str | None = None,
        overwrite: bool = False,
        exact: bool = False,
        hnsw: Mapping[str, int] | None = None,
        client: Any = None,
    ) -> None:
        super().__init__(dimension, model_name, track_ids=False)
        if not _LAYER.match(layer):
            raise ValueError(f"layer name {layer!r}: use 1-100 letters, digits or '_'")
        self.location = parse_falkordb_url(location) if isinstance(location, str) else location
        self.layer = layer
        self.label = f"`L_{layer}`"
        self.owner = owner
        self.exact = exact
        self.client = client if client is not None else connect(self.location)
        self.graph = self.client.select_graph(self.location.graph)
        if overwrite:
            self._drop_layer()
        self._open(dict(hnsw or {}))

    def __repr__(self) -> str:
        return f"FalkorDBVectorIndex({self.location.url!r}, {self.layer!r})"

    def pointer(self) -> dict[str, Any]:
        """What may be saved to find the layer again (no credentials)."""
        return {**self.location.pointer(), "layer": self.layer}

    def _q(self, query: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        args = dict(params or {})
        return retrying(
            self.location.server,
            lambda: list(self.graph.query(query, args).result_set),
            "vector query",
        )

    def _open(self, hnsw: dict[str, int]) -> None:
        rows = self._q(
            f"MATCH (m:{META_LABEL} {{layer: $layer}}) "
            "RETURN m.index_id, m.model, m.dimension, m.checksum",
            {"layer": self.layer},
        )
        where = f"FalkorDB graph {self.location.graph!r}, layer {self.layer!r}"
        if rows:
            index_id, model, dimension, checksum = rows[0]
            if self.owner is not None and index_id != self.owner:
                raise IndexMismatchError(
                    f"{where} holds the vectors of index {index_id or '(none)'}, not of "
                    f"{self.owner}; {_FIX}"
                )
            if model != self.model_name or int(dimension) != self.dimension:
                raise IndexMismatchError(
                    f"{where} holds {dimension}-d vectors of {model!r}, not {self.dimension}-d "
                    f"of {self.model_name!r}; {_FIX}"
                )
            self._checksum: str | None = checksum or None
            return
        self._q(
            f"CREATE (:{META_LABEL} {{layer: $layer, index_id: $owner, model: $model, "
            "dimension: $dim, checksum: ''})",
            {
                "layer": self.layer,
                "owner": self.owner or "",
                "model": self.model_name,
                "dim": self.dimension,
            },
        )
        options = {**DEFAULT_HNSW, **hnsw}
        extra = "".join(f", {k}: {int(v)}" for k, v in options.items())
        self._q(
            f"CREATE VECTOR INDEX FOR (n:{self.label}) ON (n.v) OPTIONS "
            f"{{dimension: {self.dimension}, similarityFunction: 'cosine'{extra}}}"
        )
        self._q(f"CREATE INDEX FOR (n:{self.label}) ON (n.id)")
        self._checksum = None

    # -- content checksum (as ChromaVectorIndex) -------------------------------------------
    @property
    def content_checksum(self) -> str | None:
        """Checksum of the persisted index this layer holds a copy of (``None``: unknown)."""
        return self._checksum

    def set_content_checksum(self, checksum: str | None) -> None:
        """Record (or clear) the checksum of the persisted index whose vectors it holds."""
        self._q(
            f"MATCH (m:{META_LABEL} {{layer: $layer}}) SET m.checksum = $c",
            {"layer": self.layer, "c": checksum or ""},
        )
        self._checksum = checksum or None

    def _changing(self) -> None:
        if self._checksum is not None:
            self.set_content_checksum(None)

    def clear(self) -> None:
        """Remove every record of the layer (the layer, its indexes and owner stay)."""
        self._changing()
        self._q(f"MATCH (n:{self.label}) DELETE n")

    def _drop_layer(self) -> None:
        self._q(f"MATCH (n:{self.label}) DELETE n")
        self._q(f"MATCH (m:{META_LABEL} {{layer: $layer}}) DELETE m", {"layer": self.layer})
        for statement in (
            f"DROP VECTOR INDEX FOR (n:{self.label}) ON (n.v)",
            f"DROP INDEX FOR (n:{self.label}) ON (n.id)",
        ):
            try:
                self._q(statement)
            except Exception as error:  # no such index: nothing to drop
                logger.debug("%s: %s", statement, error)

    def drop(self) -> None:
        """Delete the layer: its records, indexes and owner node (this object is unusable)."""
        self._drop_layer()
        logger.info("dropped FalkorDB vector layer %r of graph %r", self.layer, self.location.graph)

    # -- hooks -----------------------------------------------------------------------------
    def _count(self) -> int:
        return int(self._q(f"MATCH (n:{self.label}) RETURN count(n)")[0][0])

    def _write(self, records: Records) -> None:
        self._changing()
        rows = [
            {
                "id": i,
                "v": v,
                "p": {
                    "meta": json.dumps(m, sort_keys=True),
                    **({"doc": d} if d is not None else {}),
                    **{f"m.{k}": x for k, x in m.items()},
                },
            }
            for i, v, m, d in records.rows()
        ]
        for batch in batches(rows, BATCH):
            self._q(
                # the vector last: a node whose properties change after its vector is indexed
                # stays in the HNSW graph twice, and queries then return fewer than k nodes
                f"UNWIND $rows AS r CREATE (n:{self.label} {{id: r.id}}) "
                "SET n += r.p, n.v = vecf32(r.v)",
                {"rows": batch},
            )

    def _remove(self, ids: list[str]) -> None:
        self._changing()
        for batch in batches(ids, BATCH):
            self._q(
                f"UNWIND $ids AS i MATCH (n:{self.label} {{id: i}}) DELETE n",
                {"ids": batch},
            )

    def _native(self, where: MetadataFilter) -> Any:
        return cypher_filter(where)

    def _search(self, query: FloatMatrix, n: int, native: Any) -> list[Candidate]:
        params: dict[str, Any] = {"q": query.tolist(), "n": n}
        if native is None and not self.exact:
            rows = self._q(
                "CALL db.idx.vector.queryNodes($label, 'v', $n, vecf32($q)) YIELD node, score "
                "RETURN node.id, score, node.meta",
                {**params, "label": f"L_{self.layer}"},
            )
            if len(rows) < n and len(rows) < self._count():
                logger.info(
                    "%r: the HNSW index returned %d < %d nodes: ranking all", self, len(rows), n
                )
                return self._search(query, n, ("true", {}))
        else:
            condition, extra = native if native is not None else ("true", {})
            rows = self._q(
                f"MATCH (n:{self.label}) WHERE {condition} "
                "WITH n, vec.cosineDistance(n.v, vecf32($q)) AS d ORDER BY d, n.id LIMIT $n "
                "RETURN n.id, d, n.meta",
                {**params, **extra},
            )
        return [(str(i), 1.0 - float(d), json.loads(meta or "{}")) for i, d, meta in rows]

    def _vectors(self, ids: list[str]) -> dict[str, Any]:
        rows = self._q(
            f"UNWIND $ids AS i MATCH (n:{self.label} {{id: i}}) RETURN n.id, n.v", {"ids": ids}
        )
        return {str(i): v for i, v in rows}

    def _records(self, ids: list[str]) -> dict[str, tuple[Mapping[str, Any], str | None]]:
        rows = self._q(
            f"UNWIND $ids AS i MATCH (n:{self.label} {{id: i}}) RETURN n.id, n.meta, n.doc",
            {"ids": ids},
        )
        return {str(i): (json.loads(meta or "{}"), doc) for i, meta, doc in rows}


class FalkorDBVectors:
    """Factory putting each vector layer of an index in FalkorDB (see the module docstring).

    Parameters
    ----------
    url : str
        ``falkordb://HOST:PORT/GRAPH``; the layers of index ``ID`` go to graph
        ``GRAPH-<ID[:16]>`` (:func:`vector_graph_name`).
    overwrite : bool
        Replace layers of that graph holding another index's vectors instead of refusing them.
    **options
        Passed to :class:`FalkorDBVectorIndex` (``exact``, ``hnsw``).

    Examples
    --------
    ``ClueIndex.from_documents(docs, embedding=..., vector_index=FalkorDBVectors(
    "falkordb://127.0.0.1:6379/papers"))``
    """

    def __init__(self, url: str, *, overwrite: bool = False, **options: Any) -> None:
        self.location = parse_falkordb_url(url)
        self.overwrite = overwrite
        self.options = options
        self._client: Any = None
        self._anonymous_id = uuid.uuid4().hex

    @property
    def client(self) -> Any:
        """The ``falkordb.FalkorDB`` client every layer uses (connected on first use)."""
        if self._client is None:
            self._client = connect(self.location)
        return self._client

    def graph_name(self, index_id: str) -> str:
        """The graph holding the layers of index ``index_id``."""
        return vector_graph_name(self.location.graph, index_id)

    def open_layer(
        self, layer: str, dimension: int, model_name: str, *, index_id: str, method: str = ""
    ) -> FalkorDBVectorIndex:
        """Open (or create) ``layer`` of index ``index_id``.

        Raises
        ------
        IndexMismatchError
            If the layer holds another index's vectors (and not ``overwrite``), or another
            embedding model or dimension.
        """
        location = self.location.with_graph(self.graph_name(index_id))
        return FalkorDBVectorIndex(
            location,
            layer,
            dimension=dimension,
            model_name=model_name,
            owner=index_id,
            overwrite=self.overwrite,
            client=self.client,
            **self.options,
        )

    def __call__(self, layer: str, dimension: int, model_name: str) -> FalkorDBVectorIndex:
        """A layer of an anonymous index (a random id made once per factory)."""
        return self.open_layer(layer, dimension, model_name, index_id=self._anonymous_id)

    def drop(self, index_id: str) -> bool:
        """Delete the graph holding the layers of ``index_id``; ``False`` if there was none."""
        name = self.graph_name(index_id)
        where = self.location.with_graph(name)
        if name not in retrying(where.server, self.client.list_graphs, "list graphs"):
            return False
        retrying(where.server, self.client.select_graph(name).delete, "delete vector graph")
        logger.info("dropped FalkorDB vector graph %r", name)
        return True

    def __repr__(self) -> str:
        return f"FalkorDBVectors({self.location.url!r})"
