"""The query kNN layer and Doc2Query-- filtering: exact, order-free, repaired like a rebuild."""

from __future__ import annotations

import numpy as np
import pytest

from graphrag_integrations.methods.qcg.filtering import keep_count, top_alpha
from graphrag_integrations.methods.qcg.graph import QueryGraph, knn_lists, repair_knn


def unit_rows(n: int, d: int = 8, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def brute_knn(ids: list[str], m: np.ndarray, k: int) -> dict[str, list[str]]:
    sims = np.round(m.astype(np.float64) @ m.astype(np.float64).T, 6)
    out = {}
    for i, q in enumerate(ids):
        others = [(-sims[i, j], ids[j]) for j in range(len(ids)) if j != i]
        out[q] = [qid for _, qid in sorted(others)[:k]]
    return out


def test_knn_matches_brute_force() -> None:
    ids = [f"q{i:03d}" for i in range(60)]
    m = unit_rows(60)
    assert knn_lists(ids, m, 3) == brute_knn(ids, m, 3)
    assert knn_lists(ids[:3], m[:3], 5) == brute_knn(ids[:3], m[:3], 2)  # fewer than k others
    assert knn_lists(ids[:1], m[:1], 3) == {"q000": []}


def test_ties_are_broken_by_id_not_by_row_order() -> None:
    m = np.array([[1, 0], [1, 0], [1, 0], [0, 1]], dtype=np.float32)
    assert knn_lists(["a", "b", "c", "d"], m, 1) == {"a": ["b"], "b": ["a"], "c": ["a"], "d": ["a"]}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_repair_after_insert_and_delete_equals_rebuild(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = [f"q{i:03d}" for i in range(80)]
    m = unit_rows(80, seed=seed)
    m[5] = m[6]  # a duplicate vector: ties must not depend on the order of insertion
    old = sorted(rng.choice(80, 50, replace=False).tolist())
    old_ids = [ids[i] for i in old]
    lists = knn_lists(old_ids, m[old], 3)
    # insert the other 30
    added = set(ids) - set(old_ids)
    lists.update(repair_knn(ids, m, 3, lists, added, set()))
    assert lists == knn_lists(ids, m, 3)
    # delete 20
    removed = {ids[i] for i in rng.choice(80, 20, replace=False).tolist()}
    keep = [i for i, q in enumerate(ids) if q not in removed]
    kept_ids = [ids[i] for i in keep]
    current = {q: v for q, v in lists.items() if q not in removed}
    current.update(repair_knn(kept_ids, m[keep], 3, current, set(), removed))
    assert current == knn_lists(kept_ids, m[keep], 3)


def test_repair_touches_only_what_can_change() -> None:
    ids = [f"q{i:03d}" for i in range(40)]
    m = unit_rows(40, seed=3)
    lists = knn_lists(ids[:-1], m[:-1], 2)
    changed = repair_knn(ids, m, 2, lists, {ids[-1]}, set())
    full = knn_lists(ids, m, 2)
    assert ids[-1] in changed
    assert len(changed) < len(ids)  # most lists are untouched
    assert all(full[q] == lists[q] for q in ids[:-1] if q not in changed)


def test_query_graph_in_edges() -> None:
    g = QueryGraph.build(["a", "b", "c"], unit_rows(3), ["x", "x", "y"], {"a": ["b"], "c": ["b"]})
    assert g.out_rows == [[1], [], [1]] and g.in_rows == [[], [0, 2], []]


def test_keep_count_and_top_alpha() -> None:
    assert [keep_count(n, 0.8) for n in (0, 1, 5, 20, 21)] == [0, 1, 4, 16, 17]
    with pytest.raises(ValueError):
        keep_count(3, 0.0)
    chunk = np.array([1.0, 0.0], dtype=np.float32)
    angles = np.array([0.1, 1.2, 0.5, 0.9, 0.3])
    pairs = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    assert top_alpha(pairs, chunk, 0.6) == [0, 2, 4]
    assert top_alpha(pairs, chunk, 1.0) == [0, 1, 2, 3, 4]
