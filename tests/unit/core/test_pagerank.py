"""Personalized PageRank against networkx's pagerank with the same personalization."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from graphrag_integrations.core.retrieval.pagerank import (
    personalized_pagerank,
    transition_matrix,
)
from graphrag_integrations.errors import InvalidArgumentError


def _random_graph(n: int, seed: int) -> nx.DiGraph:
    rng = np.random.default_rng(seed)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    for u in range(n):
        for v in rng.choice(n, size=3, replace=False):
            if u != v and rng.random() < 0.7:
                graph.add_edge(u, int(v), weight=float(rng.uniform(0.1, 2.0)))
    return graph


@pytest.mark.parametrize("damping", [0.0, 0.5, 0.85])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_networkx(damping: float, seed: int) -> None:
    graph = _random_graph(30, seed)
    adjacency = nx.to_scipy_sparse_array(graph, nodelist=range(30), weight="weight")
    seeds = np.zeros(30)
    seeds[[1, 7, 12]] = [0.2, 1.0, 0.5]
    ours = personalized_pagerank(
        transition_matrix(adjacency), seeds, damping=damping, tol=1e-12, max_iter=1000
    )
    personalization = {i: float(seeds[i]) for i in range(30)}
    # networkx sends dangling mass by `dangling`; ours restarts it at the seeds
    theirs = nx.pagerank(
        graph,
        alpha=damping,
        personalization=personalization,
        dangling=personalization,
        weight="weight",
        tol=1e-14,
        max_iter=1000,
    )
    assert np.allclose(ours, [theirs[i] for i in range(30)], atol=1e-8)
    assert ours.sum() == pytest.approx(1.0)


def test_no_seed_gives_zero_and_bad_arguments_raise() -> None:
    t = transition_matrix(sp.csr_matrix(np.ones((3, 3))))
    assert personalized_pagerank(t, np.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(InvalidArgumentError, match="damping"):
        personalized_pagerank(t, np.ones(3), damping=1.0)
    with pytest.raises(InvalidArgumentError, match="entries"):
        personalized_pagerank(t, np.ones(2))
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        transition_matrix(sp.csr_matrix(-np.ones((2, 2))))
