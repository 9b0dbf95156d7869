"""What a filtered query may use (core.retrieval.filter_scope), how bound and call filters
combine, the reads a filter needs from a graph (core.graph.filter_reads) and nearest
neighbours among allowed keys (core.index.filtered_reads)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.graph.filter_reads import (
    edges_of_documents,
    node_fields,
    provenance_documents,
)
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.index.filtered_reads import nearest_within, passage_scope
from graphrag_integrations.core.index.node_ids import node_id
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.retrieval.filter_scope import FilterCache, FilterScope
from graphrag_integrations.core.retrieval.filters import (
    AllOf,
    Comparison,
    combine_filters,
    parse_filter,
)
from graphrag_integrations.core.vector_store.chroma_collections import ChromaVectors
from graphrag_integrations.errors import InvalidArgumentError

RECORDS = [
    ("p1", "d1", {"tenant": "A", "n": 1}),
    ("p2", "d1", {"tenant": "B", "n": 2}),
    ("p3", "d2", {"tenant": "A", "n": 3.0}),
    ("p4", "d3", {"tenant": "B", "n": True}),
]


def test_a_scope_holds_the_matching_passages_and_their_documents() -> None:
    scope = FilterScope.of(parse_filter({"tenant": "A"}), RECORDS)
    assert scope.passages == {"p1", "p3"} and scope.documents == {"d1", "d2"}
    assert scope.allows("p1") and not scope.allows("p2") and len(scope) == 2
    assert scope.allows_any(["d9", "d2"]) and not scope.allows_any(["d3"])
    assert scope.kept_documents(["d3", "d2", "d1", "d2"]) == ["d1", "d2"]
    by_id = FilterScope.of(parse_filter({"passage_id": "p4"}), RECORDS)
    assert by_id.passages == {"p4"} and by_id.documents == {"d3"}
    same = FilterScope.of(parse_filter({"n": {"$in": [1, 3]}}), RECORDS)
    assert same.fingerprint == scope.fingerprint  # the same passages
    assert FilterScope.of(parse_filter({"tenant": "C"}), RECORDS).passage_hint("x") is None


def test_in_and_nin_keep_their_semantics_on_a_set_lookup() -> None:
    numbers = parse_filter({"n": {"$in": [1, 3]}})
    assert [numbers.matches(m) for _, _, m in RECORDS] == [True, False, True, False]  # True != 1
    flags = parse_filter({"n": {"$nin": [True]}})
    assert [flags.matches(m) for _, _, m in RECORDS] == [True, True, True, False]
    assert not numbers.matches({"n": [1]}) and not numbers.matches({})
    assert not flags.matches({"n": None})  # a missing key matches nothing, $nin too
    many = parse_filter({"id": {"$in": [f"p{i}" for i in range(10_000)]}})
    assert many.matches({"id": "p9999"}) and not many.matches({"id": "q1"})


def test_a_call_filter_narrows_a_bound_one_and_never_widens_it() -> None:
    bound = parse_filter({"tenant": "A"})
    assert combine_filters(bound, {}) == bound
    assert combine_filters(bound, None) == bound
    assert combine_filters(None, {"n": 1}) == Comparison("n", "eq", 1)
    both = combine_filters(bound, {"n": 1})
    assert isinstance(both, AllOf)
    assert [both.matches(m) for _, _, m in RECORDS] == [True, False, False, False]
    assert combine_filters({}, {}) == AllOf(())  # no condition at all
    assert combine_filters(None, None) is None
    with pytest.raises(InvalidArgumentError):
        combine_filters(bound, {"n": {"$near": 1}})


def test_a_filter_cache_keeps_the_last_filters_and_makes_each_once() -> None:
    cache: FilterCache[int] = FilterCache(capacity=2)
    made: list[int] = []
    wheres = [parse_filter({"n": i}) for i in range(3)]

    def make(i: int) -> Any:
        return lambda: made.append(i) or i

    assert [cache.get(w, make(i)) for i, w in enumerate(wheres)] == [0, 1, 2]
    assert cache.get(wheres[2], make(9)) == 2 and cache.get(wheres[0], make(7)) == 7  # evicted
    threads = [threading.Thread(target=cache.get, args=(wheres[1], make(5))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.get(wheres[1], make(6)) in (1, 5)


def graph_of(graph: Any) -> Any:
    graph.add_node("chunk:p1", "chunk", ("d1",), text="T1", doc_id="d1", metadata={"t": "A"})
    graph.add_node("chunk:p2", "chunk", ("d2",), text="T2", doc_id="d2", metadata={"t": "B"})
    for node, prov in (("e:a", ("d1", "d2")), ("e:b", ("d2",)), ("e:c", ("d1",))):
        graph.add_node(node, "entity", prov)
    graph.add_edge("e:a", "e:b", "r", ("d2",), key="r")
    graph.add_edge("e:a", "e:c", "r", ("d1",), key="r")
    graph.add_edge("e:a", "e:c", "s", ("d1", "d2"), key="s")
    return graph


def check_reads(graph: Any) -> None:
    assert node_fields(graph, "chunk", ("doc_id", "metadata", "absent")) == [
        ("chunk:p1", {"doc_id": "d1", "metadata": {"t": "A"}, "absent": None}),
        ("chunk:p2", {"doc_id": "d2", "metadata": {"t": "B"}, "absent": None}),
    ]
    assert edges_of_documents(graph, ["d1"]) == [
        (("e:a", "e:c", "r"), {"d1"}),
        (("e:a", "e:c", "s"), {"d1", "d2"}),
    ]
    assert [key for key, _ in edges_of_documents(graph, ["d2", "d9"])] == [
        ("e:a", "e:b", "r"),
        ("e:a", "e:c", "s"),
    ]
    assert edges_of_documents(graph, []) == []
    assert provenance_documents(graph) == {"d1", "d2"}


def test_filter_reads_of_networkx() -> None:
    check_reads(graph_of(GraphStore()))


@pytest.mark.falkordb_server
def test_filter_reads_of_falkordb_equal_networkx(falkordb_url: str) -> None:
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    graph = graph_of(FalkorDBGraph.at(falkordb_url)())
    graph.flush()
    check_reads(FalkorDBGraph.open(falkordb_url))  # nothing answered from the writer's memory


def doc_metadata(graph: Any, kind: str, key: str) -> dict[str, Any]:
    return {"doc_id": graph.node(node_id(kind, key))["doc_id"]}


def vector_store(factory: Any = None) -> IndexStore:
    store = IndexStore("toy", {"chunk": "chunks"}, factory=factory, metadata=doc_metadata)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(40, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[8] = vectors[4]  # a tie between two allowed keys
    for i in range(40):
        meta = {"tenant": "A" if i % 4 == 0 else "B"}
        store.add_node("chunk", f"p{i}", (f"d{i}",), doc_id=f"d{i}", metadata=meta)
    store.add_vectors("chunk", {f"p{i}": vectors[i] for i in range(40)})
    return store


@pytest.mark.parametrize("backend", ["memory", "chroma"])
def test_nearest_within_is_the_exact_top_k_of_the_allowed_keys(backend: str, tmp_path: Any) -> None:
    store = vector_store(None if backend == "memory" else ChromaVectors(tmp_path / "chroma"))
    scope = passage_scope(store, "chunk", parse_filter({"tenant": "A"}))
    assert scope.passages == {f"p{i}" for i in range(0, 40, 4)}
    keys = [f"p{i}" for i in range(40)]
    matrix = store.embeddings("chunk", keys)
    query = matrix[4] + 0.3 * matrix[5]
    query /= np.linalg.norm(query)
    exact = sorted((float(matrix[i] @ query) for i in range(0, 40, 4)), reverse=True)
    for k in (1, 3, 20):
        hits = nearest_within(store, "chunk", query, k, scope.passages, scope.document_hint())
        assert all(key in scope.passages for key, _ in hits)
        assert [s for _, s in hits] == pytest.approx(exact[: max(k, 2)], abs=1e-5)
    first = nearest_within(store, "chunk", query, 1, scope.passages)
    assert {key for key, _ in first} == {"p4", "p8"}  # the tie with the first comes along
    assert nearest_within(store, "chunk", query, 3, set()) == []
    assert nearest_within(store, "chunk", np.zeros(8, np.float32), 3, scope.passages) == []
