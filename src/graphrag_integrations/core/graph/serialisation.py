"""A networkx graph store written out and read back: the JSON node-link records
:meth:`GraphStore.save <graphrag_integrations.core.graph.networkx_store.GraphStore.save>` writes
(with provenance, versioned by :data:`GRAPH_FORMAT_VERSION`), their checks on the way in, and
the GraphML export.

Examples
--------
>>> from graphrag_integrations.core.graph.networkx_store import GraphStore
>>> g = GraphStore()
>>> g.add_node("paris", "entity", provenance={"d1"})
>>> records = graph_records(g.graph)
>>> records["format_version"], records["nodes"][0]["provenance"]
(1, ['d1'])
>>> copy = GraphStore()
>>> add_records(copy, records, source="example", consume=False)
>>> copy == g
True
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphrag_integrations.core.graph.protocol import RESERVED, GraphBackend
from graphrag_integrations.core.persistence import atomic_write_bytes
from graphrag_integrations.errors import IndexMismatchError, IndexNotFoundError

#: Layout version of the JSON written by :meth:`GraphStore.save
#: <graphrag_integrations.core.graph.networkx_store.GraphStore.save>`.
GRAPH_FORMAT_VERSION = 1
# strings up to this length read from a saved graph are shared between the records that repeat
# them (ids, types, provenance, labels); longer ones (texts) are unique anyway
_SHARED_STRING_MAX = 200


def graph_records(graph: Any) -> dict[str, Any]:
    """JSON-ready node-link form of the ``networkx.MultiDiGraph`` ``graph`` of a store."""
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
                "attrs": {a: x for a, x in d.items() if a not in RESERVED},
            }
            for n, d in graph.nodes(data=True)
        ],
        "edges": [
            {
                "source": u,
                "target": v,
                "key": k,
                "type": d["type"],
                "provenance": sorted(d["provenance"]),
                "attrs": {a: x for a, x in d.items() if a not in RESERVED},
            }
            for u, v, k, d in graph.edges(keys=True, data=True)
        ],
    }


def add_records(store: GraphBackend, data: Any, *, source: str, consume: bool) -> None:
    """Add the node-link records ``data`` (:func:`graph_records`) to ``store``.

    Equal strings (ids, types, provenance, short attribute values) become one shared object,
    and with ``consume`` each record is dropped from ``data`` once added, so the parsed JSON is
    freed while the graph grows.

    Raises
    ------
    IndexMismatchError
        If the records are malformed (``source`` names them).
    """
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


def check_format(data: Any, source: str) -> None:
    """Raise ``IndexMismatchError`` unless ``data`` is a saved graph of a supported version."""
    version = data.get("format_version") if isinstance(data, Mapping) else None
    if not isinstance(version, int):
        raise IndexMismatchError(f"{source}: not a saved GraphStore (no format_version)")
    if version > GRAPH_FORMAT_VERSION:
        raise IndexMismatchError(
            f"{source}: graph format version {version} is newer than supported "
            f"{GRAPH_FORMAT_VERSION}; upgrade graphrag-integrations"
        )


def read_graph_file(path: Path) -> Any:
    """The records of the saved graph at ``path`` (:func:`check_format` passed); a missing
    file raises ``IndexNotFoundError``, one that is not JSON or not a saved graph of a
    supported version ``IndexMismatchError``."""
    if not path.is_file():
        raise IndexNotFoundError(f"no saved graph at {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexMismatchError(f"{path} is not valid JSON: {exc}") from exc
    check_format(data, str(path))
    return data


def write_graphml(graph: Any, path: str | Path) -> None:
    """Write the ``networkx.MultiDiGraph`` ``graph`` of a store as GraphML to ``path``,
    atomically (what :meth:`GraphStore.to_graphml
    <graphrag_integrations.core.graph.networkx_store.GraphStore.to_graphml>` writes)."""
    import networkx as nx

    safe = nx.MultiDiGraph()
    for node, data in graph.nodes(data=True):
        safe.add_node(node, **_graphml_attrs(data))
    for u, v, k, data in graph.edges(keys=True, data=True):
        safe.add_edge(u, v, key=k, **_graphml_attrs(data))
    buffer = io.BytesIO()
    nx.write_graphml(safe, buffer, encoding="utf-8")
    atomic_write_bytes(path, buffer.getvalue())


def _graphml_value(value: Any) -> str | int | float | bool | None:
    """A GraphML-storable scalar: collections become JSON strings, ``None`` is dropped."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (set, frozenset)):
        return json.dumps(sorted(value, key=str), default=str, ensure_ascii=False)
    return json.dumps(value, default=str, ensure_ascii=False, sort_keys=True)


def _graphml_attrs(data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in data.items():
        safe = _graphml_value(value)
        if safe is not None:
            out[name] = safe
    return out
