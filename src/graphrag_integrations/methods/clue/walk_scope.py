"""The neighbourhood of a question that Clue-RAG's global ranking may walk
(``ppr_scope_hops``).

The walk of :mod:`~graphrag_integrations.methods.clue.global_ranking` spreads mass over the
whole chunk-entity graph. In a corpus with many passages on other subjects (distractors), a
synonym edge or a shared generic entity carries mass into chunks far from every seed, and
those chunks enter the fused top 5. A scoped walk keeps only the chunks within ``hops``
chunk steps of the seeds: hop 1 is every chunk that mentions a seed entity plus the chunks
Q-Iter reached (and the chunks with a passage seed when ``passage_seeds`` is set), hop 2
adds the chunks that share an entity with those, and so on; the walk runs on the subgraph
of those chunks and the entities they mention (their synonym edges among them), so its cost
falls with the subgraph's size.

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> from graphrag_integrations.core.retrieval.ppr_graph import PPRGraph
>>> one = np.ones((1, 2), np.float32)
>>> incidence = sp.csr_matrix(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]))
>>> g = PPRGraph.from_arrays(["a", "b"], np.ones((2, 2), np.float32), incidence,
...                          sp.csr_matrix(np.eye(2)), np.zeros(2, np.int64), one.repeat(2, 0), {})
>>> scope_passages(g, g.full, np.array([1.0, 0.0]), np.zeros(0, np.int64), 1).tolist()
[True, True, False]
>>> scope_passages(g, g.full, np.array([1.0, 0.0]), np.zeros(0, np.int64), 2).tolist()
[True, True, True]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from graphrag_integrations.core.retrieval.pagerank import personalized_pagerank, transition_matrix
from graphrag_integrations.core.retrieval.ppr_graph import GraphView, PPRGraph

__all__ = ["scope_passages", "scoped_pagerank"]

FloatVector = npt.NDArray[np.float64]
BoolVector = npt.NDArray[np.bool_]


def scope_passages(
    graph: PPRGraph,
    view: GraphView,
    entity_seeds: FloatVector,
    chunk_rows: npt.NDArray[np.int64],
    hops: int,
) -> BoolVector:
    """The chunk rows of ``view`` within ``hops`` chunk steps of the seeds: the chunks that
    mention an entity with a seed (``entity_seeds > 0``) or are in ``chunk_rows`` (hop 1),
    then the chunks sharing an entity with those, ``hops - 1`` times."""
    keep = np.zeros(graph.n_passages, dtype=np.bool_)
    keep[chunk_rows] = True
    entities = (entity_seeds > 0).astype(np.float64)
    for hop in range(hops):
        keep |= np.asarray(graph.incidence @ entities).ravel() > 0
        keep &= view.passages
        if hop + 1 < hops:
            entities = (np.asarray(graph.incidence.T @ keep.astype(np.float64)).ravel() > 0).astype(
                np.float64
            )
    return keep


def scoped_pagerank(
    graph: PPRGraph, view: GraphView, keep: BoolVector, restart: FloatVector, damping: float
) -> FloatVector:
    """Personalized PageRank over the subgraph of the kept chunk rows ``keep`` and the
    entities they mention (within ``view``), from ``restart`` (one weight per node of the
    whole graph; others than the subgraph's are dropped). Returns the mass per node of the
    whole graph (0 outside the subgraph)."""
    n = graph.n_passages
    mentioned = np.asarray(graph.incidence.T @ keep.astype(np.float64)).ravel() > 0
    nodes = np.flatnonzero(np.concatenate([keep, mentioned & view.entities]))
    sub = sp.csr_matrix(graph.adjacency[nodes][:, nodes])
    mass = np.zeros(n + len(graph.entity_names), dtype=np.float64)
    mass[nodes] = personalized_pagerank(transition_matrix(sub), restart[nodes], damping=damping)
    return mass
