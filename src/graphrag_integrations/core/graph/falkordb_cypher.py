"""How :class:`~graphrag_integrations.core.graph.falkordb_graph.FalkorDBGraph` lays a graph out in
FalkorDB: the openCypher texts, and the encoding of values Cypher cannot hold exactly.

Layout: every graph node is a ``(:Node)`` with the properties ``_id``, ``_type``, ``_prov``
(the provenance, a list of document ids) and ``_seq`` (its insertion number); every edge a
``[:EDGE]`` with ``_key``, ``_type``, ``_prov``, ``_seq`` and ``_pseq``, the insertion number
of the first edge still linking the same two nodes in that direction (neighbours are listed
in that order, as ``networkx`` lists them). One ``(:GraphragMeta)`` node records the layout
version and the graph's id (what a saved pointer is checked against). User attributes are
stored as properties named ``~NAME`` so they never collide with these.

Values: integers (64-bit), booleans and plain strings are stored as they are; anything else -
floats (the server's replies round them), ``None``, lists, tuples, dicts, sets, strings a
query header cannot carry (a NUL, a lone surrogate), strings FalkorDB's index would not look
up exactly (with ``"\\x01"``, or whitespace at either end) and those starting with the
marker - is stored as the marker ``"\\x02"`` followed by JSON (ASCII, so none of those
characters) in which tuples, sets and dicts with non-string keys are tagged, so every value
reads back equal and of the same type. Ids and types go through the same string encoding.

Examples
--------
>>> decode_value(encode_value((1, "a", {2: None})))
(1, 'a', {2: None})
>>> encode_value("plain"), encode_value(3)
('plain', 3)
>>> decode_value(encode_value(0.1)) == 0.1
True
>>> decode_attr_name(encode_attr_name("weird `name`"))
'weird `name`'
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any

#: Version of the layout above (stored on the meta node).
LAYOUT_VERSION = 1
NODE = "Node"
EDGE = "EDGE"
META = "GraphragMeta"
MARK = "\x02"
_ATTR = "~"
_INT64 = (-(2**63), 2**63 - 1)
_TUPLE, _SET, _FROZENSET, _DICT = f"{MARK}t", f"{MARK}s", f"{MARK}f", f"{MARK}d"

# -- values ---------------------------------------------------------------------------------


def _plain_string(value: str) -> bool:
    # FalkorDB's string indexes treat "\x01" as a separator and ignore whitespace at either
    # end (an index lookup of "a" also finds "a " and "a\x01b"): such strings are encoded
    if "\x00" in value or "\x01" in value or value.startswith(MARK):
        return False
    if value[:1].isspace() or value[-1:].isspace():
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def encode_string(value: str) -> str:
    """A string as stored: itself, or the marker and its JSON when it cannot be sent as is."""
    return value if _plain_string(value) else MARK + json.dumps(value)


def decode_string(value: Any) -> Any:
    """The inverse of :func:`encode_string` (other values unchanged)."""
    if isinstance(value, str) and value.startswith(MARK):
        return json.loads(value[1:])
    return value


def _tagged(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, list):
        return [_tagged(v, where) for v in value]
    if isinstance(value, tuple):
        return {_TUPLE: [_tagged(v, where) for v in value]}
    if isinstance(value, (set, frozenset)):
        tag = _FROZENSET if isinstance(value, frozenset) else _SET
        return {tag: [_tagged(v, where) for v in value]}
    if isinstance(value, Mapping):
        if all(isinstance(k, str) and not k.startswith(MARK) for k in value):
            return {k: _tagged(v, where) for k, v in value.items()}
        return {_DICT: [[_tagged(k, where), _tagged(v, where)] for k, v in value.items()]}
    raise TypeError(
        f"{where}: a {type(value).__name__} cannot be stored in FalkorDB "
        "(use str, int, float, bool, None, list, tuple, dict or set)"
    )


def _untagged(value: Any) -> Any:
    if isinstance(value, list):
        return [_untagged(v) for v in value]
    if isinstance(value, dict):
        if len(value) == 1:
            ((tag, inner),) = value.items()
            if tag == _TUPLE:
                return tuple(_untagged(v) for v in inner)
            if tag == _SET:
                return {_untagged(v) for v in inner}
            if tag == _FROZENSET:
                return frozenset(_untagged(v) for v in inner)
            if tag == _DICT:
                return {_untagged(k): _untagged(v) for k, v in inner}
        return {k: _untagged(v) for k, v in value.items()}
    return value


def encode_value(value: Any, where: str = "attribute") -> Any:
    """An attribute value as stored (see the module docstring; ``TypeError`` for a value of
    another type, naming ``where``)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and _INT64[0] <= value <= _INT64[1]:
        return int(value)
    if isinstance(value, str):
        return encode_string(value)
    if isinstance(value, float) and not math.isfinite(value):
        return MARK + json.dumps(value)
    return MARK + json.dumps(_tagged(value, where), ensure_ascii=True, allow_nan=True)


def decode_value(value: Any) -> Any:
    """The inverse of :func:`encode_value`."""
    if isinstance(value, str) and value.startswith(MARK):
        return _untagged(json.loads(value[1:]))
    return value


def encode_attr_name(name: str) -> str:
    """The property name of the user attribute ``name`` (``~`` + ``name``, with ``%`` and
    the backtick the query header cannot carry percent-escaped)."""
    return _ATTR + name.replace("%", "%25").replace("`", "%60").replace("\x00", "%00")


def decode_attr_name(prop: str) -> str:
    """The inverse of :func:`encode_attr_name`."""
    return prop[1:].replace("%00", "\x00").replace("%60", "`").replace("%25", "%")


def encode_attrs(attrs: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``{property name: stored value}`` of user attributes."""
    return {
        encode_attr_name(k): encode_value(v, f"{where} attribute {k!r}") for k, v in attrs.items()
    }


def user_attrs(props: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """The ``(name, value)`` of the user attributes among stored properties, in order."""
    for prop, value in props.items():
        if prop.startswith(_ATTR):
            yield decode_attr_name(prop), decode_value(value)


def decode_prov(values: Any) -> set[str]:
    """A stored provenance list as a set of document ids."""
    return {decode_string(v) for v in values or ()}


# -- query texts ----------------------------------------------------------------------------
# provenance lists are indexed (FalkorDB indexes each element of an array), so forgetting a
# document reads its own nodes and edges, not the whole graph; graphs made before these
# two existed get them when opened
PROV_INDEXES = {
    (NODE, "_prov"): f"CREATE INDEX FOR (n:{NODE}) ON (n._prov)",
    (EDGE, "_prov"): f"CREATE INDEX FOR ()-[e:{EDGE}]-() ON (e._prov)",
}
INDEXES = (
    f"CREATE INDEX FOR (n:{NODE}) ON (n._id)",
    f"CREATE INDEX FOR (n:{NODE}) ON (n._type)",
    *PROV_INDEXES.values(),
)
INDEXED = "CALL db.indexes() YIELD label, properties RETURN label, properties"
META_READ = f"MATCH (m:{META}) RETURN m.layout, m.graph_id"
META_WRITE = f"MERGE (m:{META}) SET m.layout = $layout, m.graph_id = $graph_id"
COUNT_FOREIGN = f"MATCH (n) WHERE NOT n:{META} RETURN count(n)"
MAX_SEQ = (
    f"OPTIONAL MATCH (n:{NODE}) WITH max(n._seq) AS a "
    f"OPTIONAL MATCH ()-[e:{EDGE}]->() RETURN a, max(e._seq)"
)

# one row per node of the buffer (ids distinct within a batch)
MERGE_NODES = f"""UNWIND $rows AS r
MERGE (n:{NODE} {{_id: r.id}})
ON CREATE SET n._type = r.type, n._seq = r.seq, n._prov = r.prov
ON MATCH SET n._prov = n._prov + [x IN r.prov WHERE NOT x IN n._prov]
SET n += r.attrs"""

# one row per edge of the buffer (edges distinct within a batch; ``ps`` is the smallest
# ``seq`` of the batch's rows between the same two nodes, used when none links them yet)
MERGE_EDGES = f"""UNWIND $rows AS r
MATCH (a:{NODE} {{_id: r.u}})
MATCH (b:{NODE} {{_id: r.v}})
OPTIONAL MATCH (a)-[p:{EDGE}]->(b)
WITH a, b, r, min(p._pseq) AS ps
MERGE (a)-[e:{EDGE} {{_key: r.key}}]->(b)
ON CREATE SET e._type = r.type, e._seq = r.seq, e._pseq = coalesce(ps, r.ps), e._prov = r.prov
ON MATCH SET e._prov = e._prov + [x IN r.prov WHERE NOT x IN e._prov]
SET e += r.attrs"""

NODE_TYPES = f"UNWIND $ids AS id MATCH (n:{NODE} {{_id: id}}) RETURN id, n._type"
NODES_DATA = f"UNWIND $ids AS id MATCH (n:{NODE} {{_id: id}}) RETURN id, properties(n)"
NODE_IDS = f"MATCH (n:{NODE}) RETURN n._id ORDER BY n._seq"
NODE_IDS_OF_TYPE = f"MATCH (n:{NODE}) WHERE n._type = $type RETURN n._id ORDER BY n._seq"
COUNT_NODES = f"MATCH (n:{NODE}) RETURN count(n)"
COUNT_EDGES = f"MATCH ()-[e:{EDGE}]->() RETURN count(e)"
COUNT_EDGES_OF_TYPE = f"MATCH ()-[e:{EDGE}]->() WHERE e._type = $type RETURN count(e)"
EDGE_KEYS = f"""MATCH (a:{NODE})-[e:{EDGE}]->(b:{NODE}) <WHERE>
RETURN a._id, b._id, e._key ORDER BY a._seq, e._pseq, e._seq"""
EDGE_TYPES = f"""UNWIND $rows AS r
MATCH (a:{NODE} {{_id: r[0]}})-[e:{EDGE} {{_key: r[2]}}]->(b:{NODE} {{_id: r[1]}})
RETURN r[0], r[1], r[2], e._type"""
EDGE_DATA = f"""MATCH (a:{NODE} {{_id: $u}})-[e:{EDGE} {{_key: $key}}]->(b:{NODE} {{_id: $v}})
RETURN properties(e)"""
EDGES_BETWEEN = f"""MATCH (a:{NODE} {{_id: $u}})-[e:{EDGE}]->(b:{NODE} {{_id: $v}}) <WHERE>
RETURN e._key ORDER BY e._seq"""
# <PATTERN>: -[e]->, <-[e]- or -[e]-; <WHERE>: the edge / neighbour type filter
NEIGHBORS = f"""UNWIND $ids AS id
MATCH (a:{NODE} {{_id: id}})
OPTIONAL MATCH (a)<PATTERN>(b:{NODE}) <WHERE>
RETURN id, b._id, startNode(e) = a, endNode(e) = a, min(e._pseq), count(e)"""

# deletion of a document's provenance: edges first, then nodes (as GraphStore does)
PROV_EDGES = f"""MATCH ()-[e:{EDGE}]->() WHERE $doc IN e._prov
WITH e, startNode(e) AS a
RETURN a._id, endNode(e)._id, e._key, size(e._prov) ORDER BY a._seq, e._pseq, e._seq"""
PROV_EDGES_DELETE = f"MATCH ()-[e:{EDGE}]->() WHERE $doc IN e._prov AND size(e._prov) = 1 DELETE e"
PROV_EDGES_UPDATE = (
    f"MATCH ()-[e:{EDGE}]->() WHERE $doc IN e._prov SET e._prov = [x IN e._prov WHERE x <> $doc]"
)
PROV_NODES = f"MATCH (n:{NODE}) WHERE $doc IN n._prov RETURN n._id, size(n._prov) ORDER BY n._seq"
INCIDENT_EDGES = f"""UNWIND $ids AS id
MATCH (a:{NODE} {{_id: id}})-[e:{EDGE}]-(b:{NODE})
RETURN DISTINCT startNode(e)._id, endNode(e)._id, e._key, e._pseq, e._seq"""
DELETE_NODES = f"UNWIND $ids AS id MATCH (n:{NODE} {{_id: id}}) DETACH DELETE n"
PROV_NODES_UPDATE = (
    f"MATCH (n:{NODE}) WHERE $doc IN n._prov SET n._prov = [x IN n._prov WHERE x <> $doc]"
)
DELETE_EDGES = f"""UNWIND $rows AS r
MATCH (a:{NODE} {{_id: r[0]}})-[e:{EDGE} {{_key: r[2]}}]->(b:{NODE} {{_id: r[1]}})
DELETE e RETURN r[3]"""
OUT_EDGES = f"""UNWIND $ids AS id
MATCH (a:{NODE} {{_id: id}})-[e:{EDGE}]->(b:{NODE})
RETURN a._id, b._id, e._key, properties(e) ORDER BY a._seq, e._pseq, e._seq"""

# term search (core.graph.term_search): a full-text index over one user attribute of (:Node),
# with no stop words; <PROP> is the attribute's property name (encode_attr_name), quoted
TERM_INDEX_CREATE = (
    f"CALL db.idx.fulltext.createNodeIndex({{label: '{NODE}', stopwords: [], "
    "language: 'english'}, $prop)"
)
# once a label had a full-text index its options stay (a new one must not restate them)
TERM_INDEX_ADD = f"CALL db.idx.fulltext.createNodeIndex('{NODE}', $prop)"
TERM_INDEXES = (
    "CALL db.indexes() YIELD label, properties, types, status, stopwords "
    f"WHERE label = '{NODE}' RETURN properties, types, status, stopwords"
)
TERM_NODES = (
    f"CALL db.idx.fulltext.queryNodes('{NODE}', $term) YIELD node "
    "WHERE $type IS NULL OR node._type = $type RETURN node._id"
)
NODES_WITHOUT = f"MATCH (n:{NODE}) WHERE n._type = $type AND n.`<PROP>` IS NULL RETURN n._id"

# the write journal of an index's unfinished write (falkordb_journal): JSON in the meta node,
# and apart (written once, not with every growth of the journal) the passages an upsert replaces
JOURNAL_READ = f"MATCH (m:{META}) RETURN m.journal, m.journal_restore"
JOURNAL_WRITE = (
    f"MATCH (m:{META}) SET m.journal = $journal, m.journal_rev = coalesce(m.journal_rev, 0) + 1"
)
JOURNAL_RESTORE_WRITE = (
    f"MATCH (m:{META}) SET m.journal = $journal, m.journal_restore = $restore, "
    "m.journal_rev = coalesce(m.journal_rev, 0) + 1"
)
# the write log of finished writes (falkordb_write_log): JSON in the meta node
WRITES_READ = f"MATCH (m:{META}) RETURN m.writes"
WRITES_WRITE = f"MATCH (m:{META}) SET m.writes = $writes, m.write_version = $version"
# what a reader compares to tell another process's writes: the version of the finished
# writes, the revision of the journal (it changes with every journal update)
WRITE_STATE = f"MATCH (m:{META}) RETURN m.write_version, m.journal_rev"
