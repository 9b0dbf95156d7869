"""Graph node ids of an index store: ``"<kind>:<key>"``, so the id spaces of the node kinds
(``chunk``, ``entity``, ``query``...) never collide."""

from __future__ import annotations


def node_id(kind: str, key: str) -> str:
    """Graph node id of the node ``key`` of kind ``kind``.

    Examples
    --------
    >>> node_id("entity", "nottingham forest")
    'entity:nottingham forest'
    """
    if not kind or ":" in kind:
        raise ValueError(f"node kind must be non-empty and free of ':', got {kind!r}")
    return f"{kind}:{key}"


def node_key(node: str) -> str:
    """The key inside a node id (inverse of :func:`node_id`).

    Examples
    --------
    >>> node_key("unit:ab12")
    'ab12'
    """
    return node.split(":", 1)[1]


def node_kind(node: str) -> str:
    """The kind inside a node id.

    Examples
    --------
    >>> node_kind("unit:ab12")
    'unit'
    """
    return node.split(":", 1)[0]
