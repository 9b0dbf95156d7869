"""core.index.store_journal: what the in-process journal of a store records, and which
stores' writes are journaled in the process."""

from __future__ import annotations

import numpy as np

from graphrag_integrations.core.index.journal import journal_graphs
from graphrag_integrations.core.index.rollback import rolling_back
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.vector_store import InMemoryVectorIndex, VectorIndex


def _outside(layer: str, dimension: int, model_name: str) -> VectorIndex:
    """A factory other than the in-memory default (what a vector server's factory is)."""
    return InMemoryVectorIndex(dimension, model_name)


def _store() -> IndexStore:
    store = IndexStore("toy", {"entity": "entities"}, factory=_outside)
    store.add_node("entity", "paris", ("d1",))
    store.add_vectors("entity", {"paris": np.array([1.0, 0.0])})
    return store


def test_a_write_records_its_documents_and_the_nodes_it_created() -> None:
    store = _store()
    journal = store.journal
    journal.begin_journal("insert", exclude=["d1"])
    store.add_node("entity", "paris", ("d1", "d2"))  # merged into: not created
    store.add_node("entity", "rome", ("d3",))
    store.add_edge("entity:paris", "entity:rome", "near", ("d4",))
    record = journal.read_journal()
    assert record is not None and record["op"] == "insert"
    assert record["docs"] == ["d2", "d3", "d4"]  # d1 was held before the insert
    assert journal.created_nodes() == {"entity": ["rome"]}
    journal.end_journal()
    assert journal.read_journal() is None and journal.created_nodes() == {}


def test_a_delete_records_the_documents_it_removes() -> None:
    store = _store()
    store.journal.begin_journal("delete_many", removing=["d9"])
    store.remove_document("d1")
    record = store.journal.read_journal()
    assert record is not None and record["docs"] == ["d1", "d9"]


def test_nothing_is_recorded_outside_a_write() -> None:
    store = _store()
    store.add_node("entity", "rome", ("d3",))
    assert store.journal.read_journal() is None
    assert store.journal.created_nodes() == {}


def test_created_nodes_get_placeholders_before_a_rollback() -> None:
    store = _store()
    store.journal.begin_journal("insert", exclude=["d1"])
    store.add_node("entity", "rome", ("d3",))  # its vector never arrived
    with rolling_back(["d3"]) as state:
        store.placeholders_for_journal(state)
    assert state.placeholders == [(store, "entity", ["rome"])]
    assert store.embeddings("entity", ["rome"]).shape == (1, 2)


class _Index:
    def __init__(self, store: IndexStore) -> None:
        self.store = store


def test_only_an_in_process_graph_with_vectors_outside_is_journaled_in_the_process() -> None:
    outside = _store()
    assert journal_graphs(_Index(outside)) == [outside.journal]
    assert journal_graphs(_Index(IndexStore("toy", {"entity": "entities"}))) == []
