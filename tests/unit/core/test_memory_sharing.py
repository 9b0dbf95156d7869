"""Memory sharing without changing answers: views share the vector matrices (copy-on-write),
a loaded graph shares its strings and provenance sets, BM25 row counts are computed on demand.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.vector_store.memory import InMemoryVectorIndex
from graphrag_integrations.methods.clue.graph import TermStats, tokenize
from graphrag_integrations.methods.clue.store import CHUNK, ENTITY, UNIT
from tests.unit.clue_fixtures import CORPUS, documents
from tests.unit.methods.clue.test_clue_index import answers, build


def test_matrix_view_is_read_only_and_survives_every_mutation() -> None:
    index = InMemoryVectorIndex(dimension=3, model_name="toy")
    index.add(["a", "b", "c"], [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    view = index.matrix_view()
    before = view.copy()
    with pytest.raises(ValueError):
        view[0, 0] = 5.0
    index.add(["b"], [[1, 1, 0]])  # replaces a row: copy-on-write
    index.add(["d"], [[1, 0, 1]])  # appends past the view's end
    assert np.array_equal(view, before)
    index.delete(["a"])
    assert np.array_equal(view, before)
    # the index itself moved on
    assert index.ids == ["b", "c", "d"]
    assert np.allclose(index.get_embeddings(["b"]), [[2**-0.5, 2**-0.5, 0]])
    assert index.query([1, 1, 0], k=1)[0][0] == "b"


def test_replacing_a_row_without_a_view_out_writes_in_place() -> None:
    index = InMemoryVectorIndex(dimension=2, model_name="toy")
    index.add(["a", "b"], [[1, 0], [0, 1]])
    view = index.matrix_view()
    index.add(["a"], [[0, 1]])  # copies once...
    second = index.matrix_view()
    assert not np.shares_memory(view, second)
    index.delete(["b"])
    assert np.array_equal(second, [[0, 1], [0, 1]])


def test_clue_view_shares_the_store_matrices() -> None:
    index = build()
    g = index.graph
    for kind, matrix, keys in (
        (CHUNK, g.passage_matrix, g.passage_ids),
        (UNIT, g.unit_matrix, g.unit_ids),
        (ENTITY, g.entity_matrix, g.entity_names),
    ):
        shared = index.store.shared_embeddings(kind, keys)
        assert shared is not None and np.shares_memory(matrix, shared)
        assert np.array_equal(matrix, index.store.embeddings(kind, keys))
        assert not matrix.flags.writeable


def test_a_held_view_is_unchanged_and_answers_equal_those_without_one() -> None:
    held_index, plain = build(), build()
    held = held_index.graph
    snapshot = [m.copy() for m in (held.passage_matrix, held.unit_matrix, held.entity_matrix)]
    for index in (held_index, plain):
        index.delete("Paris")
        assert answers(index) == answers(build(CORPUS[:-1]))
        index.insert(documents(CORPUS[-1:]))
        index.upsert(documents(CORPUS[:1]))  # deletes, then appends rows again
        index.store.vectors["units"].add(  # a row replaced in place (copy-on-write)
            [index.graph.unit_ids[0]], index.graph.unit_matrix[:1].copy()
        )
    for old, now in zip(
        snapshot, (held.passage_matrix, held.unit_matrix, held.entity_matrix), strict=True
    ):
        assert np.array_equal(old, now)
    assert answers(held_index) == answers(plain)
    assert held_index.graph.unit_ids == plain.graph.unit_ids


def _graph() -> GraphStore:
    g = GraphStore()
    for name in ("a", "b", "c"):
        g.add_node(name, "entity", ("d1", "d2"), label="X")
    g.add_edge("a", "b", "rel", ("d1", "d2"))
    g.add_edge("b", "c", "rel", ("d2",))
    return g


def test_shared_provenance_is_never_changed_through_another_holder(tmp_path: Path) -> None:
    g = _graph()
    g.save(tmp_path / "g.json")
    for store in (g, GraphStore.load(tmp_path / "g.json")):
        store.add_node("a", "entity", ("d3",))
        assert store.provenance("a") == {"d1", "d2", "d3"}
        assert store.provenance("b") == store.provenance("c") == {"d1", "d2"}
        store.add_edge("a", "b", "rel", ("d3",))
        assert store.edge("b", "c", "rel")["provenance"] == {"d2"}
        removed = store.remove_provenance("d2")
        assert removed.edges == [("b", "c", "rel")]
        assert store.provenance("a") == {"d1", "d3"}
        assert store.provenance("b") == store.provenance("c") == {"d1"}
        assert store.edge("a", "b", "rel")["provenance"] == {"d1", "d3"}
        copy = store.node("b")["provenance"]
        copy.add("zzz")  # a copy: the store is not changed
        assert store.provenance("b") == {"d1"}


def test_loaded_graph_equals_saved_and_shares_repeated_strings(tmp_path: Path) -> None:
    g = _graph()
    g.save(tmp_path / "g.json")
    loaded = GraphStore.load(tmp_path / "g.json")
    assert loaded == g
    a, b = loaded.graph.nodes["a"], loaded.graph.nodes["b"]
    assert a["label"] is b["label"] and a["provenance"] is b["provenance"]
    target = next(iter(loaded.graph.succ["a"]))
    assert target is next(n for n in loaded.graph.nodes if n == "b")


def test_on_demand_term_counts_equal_the_stored_ones() -> None:
    rng = random.Random(7)
    words = ["forest", "cup", "won", "the", "F.C.", "1979", "Paris", "é"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(50)]
    eager = TermStats.build([tokenize(t) for t in texts])
    lazy = TermStats.from_texts(texts)
    assert lazy.size == eager.size == 50
    assert np.array_equal(lazy.lengths, eager.lengths) and lazy.df == eager.df
    assert lazy.avg_length == eager.avg_length
    for row in rng.sample(range(50), 50):
        assert lazy.counts[row] == eager.counts[row]
    assert lazy.counts[np.int64(3)] == eager.counts[3]  # numpy row indexes too
