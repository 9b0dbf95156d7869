"""resolve_graph_backend: what ``graph_store=`` accepts, and one-line errors for the rest."""

from __future__ import annotations

import pytest

from graphrag_integrations.core.graph.backends import is_in_process, resolve_graph_backend
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.errors import InvalidArgumentError


class _MyStore(GraphStore):
    pass


@pytest.mark.parametrize("spec", [None, "networkx", "NetworkX"])
def test_default_names_give_the_networkx_store(spec: str | None) -> None:
    assert resolve_graph_backend(spec) is GraphStore


def test_a_backend_class_is_used_as_is() -> None:
    assert resolve_graph_backend(_MyStore) is _MyStore
    assert is_in_process(_MyStore)


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("neo4j://h/g", "expected None, 'networkx', a falkordb://"),
        ("falkordb://h", "no graph name"),
        (42, "expected None"),
        (dict, "does not follow the GraphBackend protocol"),
        (GraphStore(), "pass the class GraphStore, not an object"),
    ],
)
def test_anything_else_is_a_one_line_error(spec: object, match: str) -> None:
    with pytest.raises(InvalidArgumentError, match=match) as error:
        resolve_graph_backend(spec)  # type: ignore[arg-type]
    assert "\n" not in str(error.value)
