"""Which graph backend an index uses: resolving a ``graph_store=`` specification.

Every graph index keeps its graph in a
:class:`~graphrag_integrations.core.graph.protocol.GraphBackend`. Users name it with a
:data:`GraphStoreSpec`, which :func:`resolve_graph_backend` turns into the backend class the
:class:`~graphrag_integrations.core.index.store.IndexStore` instantiates:

* ``None`` or ``"networkx"`` - the in-process
  :class:`~graphrag_integrations.core.graph.networkx_store.GraphStore` (the default);
* ``"falkordb://[USER[:PASSWORD]@]HOST[:PORT]/GRAPH"`` - that graph in a FalkorDB server
  (:class:`~graphrag_integrations.core.graph.falkordb_graph.FalkorDBGraph`; the ``falkordb`` extra).
  A new index refuses a graph that already holds data unless ``overwrite=True``;
* a ``FalkorDBGraph`` object - the graph it is connected to (same rule);
* a backend class (``GraphStore``, a subclass, or any class following the protocol) - itself.

Examples
--------
>>> from graphrag_integrations.core.graph.networkx_store import GraphStore
>>> resolve_graph_backend(None) is GraphStore
True
>>> resolve_graph_backend("networkx") is GraphStore
True
>>> resolve_graph_backend(GraphStore) is GraphStore
True
>>> resolve_graph_backend("neo4j://x")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
graphrag_integrations.errors.InvalidArgumentError: graph_store: expected None, 'networkx', ...
"""

from __future__ import annotations

from typing import TypeAlias, Union, cast

from graphrag_integrations.core.graph.falkordb_connection import is_falkordb_url, parse_falkordb_url
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.errors import InvalidArgumentError

#: The names of the in-process backend.
NETWORKX = "networkx"

GraphStoreSpec: TypeAlias = Union[str, GraphBackend, "type[GraphBackend]", None]
"""What ``graph_store=`` takes (see the module docstring)."""

_ACCEPTED = (
    "None, 'networkx', a falkordb://HOST:PORT/GRAPH URL, a FalkorDBGraph or a GraphBackend class"
)


def is_in_process(backend: type[GraphBackend]) -> bool:
    """Whether ``backend`` keeps its graph in this process (its ``save`` writes the data).

    >>> from graphrag_integrations.core.graph.networkx_store import GraphStore
    >>> is_in_process(GraphStore)
    True
    """
    return not getattr(backend, "remote", False)


def resolve_graph_backend(spec: GraphStoreSpec, *, overwrite: bool = False) -> type[GraphBackend]:
    """The backend class a ``graph_store=`` specification names (see the module docstring).

    Parameters
    ----------
    spec : str, GraphBackend, GraphBackend class or None
        What the user passed.
    overwrite : bool
        For a FalkorDB graph: allow a new index to replace the data the graph already holds
        (otherwise making the index raises ``IndexExistsError``).

    Returns
    -------
    type of GraphBackend
        A class whose no-argument constructor opens an empty graph for a new index.

    Raises
    ------
    InvalidArgumentError
        A string that is neither ``"networkx"`` nor a valid ``falkordb://`` URL, or an object
        that is not a backend (one line naming what is accepted).
    ImportError
        A FalkorDB specification without the ``falkordb`` client installed.
    """
    if spec is None:
        return GraphStore
    if isinstance(spec, str):
        if spec.strip().lower() == NETWORKX:
            return GraphStore
        if is_falkordb_url(spec):
            location = parse_falkordb_url(spec)  # a bad URL fails before any import
            from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

            return FalkorDBGraph.at(location, overwrite=overwrite)
        raise InvalidArgumentError(f"graph_store: expected {_ACCEPTED}, got {spec!r}")
    if isinstance(spec, type):
        if _is_backend_class(spec):
            return spec
        raise InvalidArgumentError(
            f"graph_store: the class {spec.__name__} does not follow the GraphBackend protocol "
            f"(expected {_ACCEPTED})"
        )
    if isinstance(spec, GraphBackend):
        at = getattr(type(spec), "at", None)  # a database graph: FalkorDBGraph.at(location)
        bound = getattr(spec, "location", None)
        if callable(at) and bound is not None:
            return cast("type[GraphBackend]", at(bound, overwrite=overwrite))
        raise InvalidArgumentError(
            f"graph_store: pass the class {type(spec).__name__}, not an object of it "
            "(an index makes its own graph)"
        )
    raise InvalidArgumentError(f"graph_store: expected {_ACCEPTED}, got {spec!r}")


_PROTOCOL_METHODS = (
    "__len__",
    "__contains__",
    "add_node",
    "add_edge",
    "nodes",
    "node",
    "neighbors",
    "neighbors_many",
    "nodes_data",
    "number_of_edges",
    "remove_provenance",
    "remove_edges",
    "save",
    "load",
)


def _is_backend_class(cls: type) -> bool:
    return all(callable(getattr(cls, name, None)) for name in _PROTOCOL_METHODS)
