from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_integrations.methods.reg.subgraph import extract_subgraph, node_dde, triple_dde
from tests.unit.reg_fixtures import movie_index


def brute_dde(n: int, edges: list[tuple[int, int]], anchors: set[int], r: int, rr: int) -> list:
    x0 = [1.0 if v in anchors else 0.0 for v in range(n)]

    def spread(steps: int, arcs: list[tuple[int, int]]) -> list[list[float]]:
        """``steps`` rounds of: each node takes the mean of its in-neighbours along ``arcs``."""
        cols, x = [], x0
        for _ in range(steps):
            x = [
                (sum(x[u] for u, w in arcs if w == v) / cnt)
                if (cnt := sum(1 for _, w in arcs if w == v))
                else 0.0
                for v in range(n)
            ]
            cols.append(x)
        return cols

    cols = [x0, *spread(r, edges), *spread(rr, [(w, u) for u, w in edges])]
    return [[c[v] for c in cols] for v in range(n)]


graphs = st.integers(2, 7).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=15),
        st.sets(st.integers(0, n - 1), min_size=1, max_size=2),
        st.integers(0, 3),
        st.integers(0, 3),
    )
)


@settings(max_examples=60, deadline=None)
@given(graphs)
def test_dde_equals_brute_force(case: tuple) -> None:
    n, edges, anchors, r, rr = case
    heads = np.array([u for u, _ in edges], dtype=np.int64)
    tails = np.array([w for _, w in edges], dtype=np.int64)
    got = node_dde(n, heads, tails, np.array(sorted(anchors), dtype=np.int64), r, rr)
    assert got.shape == (n, 1 + r + rr)
    np.testing.assert_allclose(got, np.array(brute_dde(n, edges, anchors, r, rr)), atol=1e-6)


def test_multi_edges_count_per_triple() -> None:
    # two parallel triples 0->1 and one 2->1: node 1 = mean(1, 1, 0) = 2/3
    enc = node_dde(3, np.array([0, 0, 2]), np.array([1, 1, 1]), np.array([0]), 1, 0)
    assert abs(enc[1, 1] - 2 / 3) < 1e-6


def test_subgraph_hubs_are_reached_not_expanded() -> None:
    index = movie_index()
    index.insert_triples([("M1", "has_genre", "Drama"), ("M2", "has_genre", "Drama")], "extra")
    view = index.view
    colman = view.entity_row["Ronald Colman"]
    # Drama has 5 triples, the movies 4: with max_degree=4 Drama is a hub, reached at hop 2
    # and not expanded at hop 3, so Now Voyager stays out
    sub = extract_subgraph(view, [colman], hops=3, max_degree=4, max_triples=100)
    names = {view.entities[int(n)] for n in sub.nodes}
    assert "Drama" in names and "Now Voyager" not in names
    wide = extract_subgraph(view, [colman], hops=3, max_degree=100, max_triples=100)
    assert "Now Voyager" in {view.entities[int(n)] for n in wide.nodes}
    # every kept triple touches an expanded entity; the local arrays match the KG
    for i, row in enumerate(sub.rows):
        assert view.heads[row] == sub.nodes[sub.heads[i]]
        assert view.tails[row] == sub.nodes[sub.tails[i]]


def test_subgraph_triple_cap_is_deterministic() -> None:
    index = movie_index()
    view = index.view
    a = extract_subgraph(view, [view.entity_row["Kismet"]], hops=2, max_degree=50, max_triples=5)
    b = extract_subgraph(view, [view.entity_row["Kismet"]], hops=2, max_degree=50, max_triples=5)
    assert a.truncated and a.n_triples == 5
    assert a.rows.tolist() == b.rows.tolist()
    # the anchor's own triples come first
    kismet = {int(r) for r in view.out_edges[view.entity_row["Kismet"]]}
    assert kismet <= set(a.rows.tolist())
    dde = triple_dde(a, 2, 2)
    assert dde.shape == (5, 10)
