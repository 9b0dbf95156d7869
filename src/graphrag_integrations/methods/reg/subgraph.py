"""Bounded per-question subgraphs and Directional Distance Encoding (DDE, as in SubgraphRAG).

**Subgraph bound.** Starting from the anchor (topic) entities, a breadth-first expansion over
both edge directions collects every triple touching an expanded entity, for ``hops`` rounds.
An entity with more than ``max_degree`` triples is a *hub* (MetaQA's genres, years, tags and
languages have thousands): it is reached - the triple leading to it is kept - but never
expanded through, unless it is an anchor itself. The expansion stops at ``max_triples``
triples (entities and their triples are visited in KG row order, so the cut is
deterministic; :attr:`Subgraph.truncated` says it happened).

**DDE.** On the subgraph, ``x0`` is the one-hot "is an anchor" column. Forward round ``k``
sets each entity to the mean of ``x_{k-1}`` over its incoming triples (``head -> tail``, so
from the heads), reverse rounds to the mean over its outgoing triples (from the tails), both
chains starting from ``x0``; an entity without such triples gets 0. Multi-edges count once
per triple. An entity's encoding is ``[x0, f1..fR, r1..rR']``; a triple's is
``[enc(head), enc(tail)]``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.methods.reg.store import IntArray, KGView

N = TypeVar("N", bound=Hashable)
R = TypeVar("R", bound=Hashable)


@dataclass(frozen=True)
class Subgraph:
    """A question's triples in local form.

    Attributes
    ----------
    rows : ndarray
        KG triple rows, sorted.
    nodes : ndarray
        KG entity rows of the local nodes, sorted.
    heads, tails : ndarray
        Local node index of each triple's head / tail.
    anchors : ndarray
        Local node indexes of the anchors.
    truncated : bool
        ``max_triples`` cut the expansion.
    """

    rows: IntArray
    nodes: IntArray
    heads: IntArray
    tails: IntArray
    anchors: IntArray
    truncated: bool

    @property
    def n_triples(self) -> int:
        return int(self.rows.shape[0])


def extract_subgraph(
    view: KGView, anchors: Sequence[int], *, hops: int, max_degree: int, max_triples: int
) -> Subgraph:
    """The bounded subgraph around ``anchors`` (see the module docstring)."""

    def incident(node: int) -> Iterator[tuple[int, int, int]]:
        rows = np.concatenate((view.out_edges[node], view.in_edges[node]))
        return zip(rows.tolist(), view.heads[rows].tolist(), view.tails[rows].tolist(), strict=True)

    rows, truncated = expand(
        [int(a) for a in anchors],
        hops=hops,
        max_degree=max_degree,
        max_triples=max_triples,
        degree=view.degree,
        incident=incident,
    )
    return subgraph_of(view, sorted(rows), anchors, truncated)


def expand(
    anchors: Sequence[N],
    *,
    hops: int,
    max_degree: int,
    max_triples: int,
    degree: Callable[[N], int],
    incident: Callable[[N], Iterable[tuple[R, N, N]]],
    prefetch: Callable[[list[N], set[N]], None] | None = None,
) -> tuple[list[R], bool]:
    """The breadth-first expansion of the module docstring over any KG: ``(triples in the
    order reached, truncated)``.

    ``degree(node)``: triples touching ``node``; ``incident(node)``: its ``(triple, head,
    tail)``, outgoing then incoming, each in KG order; ``prefetch(frontier, anchors)``, if
    given, is called before each hop (a batched read of what the hop needs).
    """
    if hops < 1 or max_triples < 1 or max_degree < 1:
        raise ValueError("hops, max_degree and max_triples must be >= 1")
    seen_rows: dict[R, None] = {}
    reached = dict.fromkeys(anchors)
    anchor_set = set(reached)
    frontier = list(reached)
    truncated = False
    for _ in range(hops):
        if prefetch is not None:
            prefetch(frontier, anchor_set)
        nxt: list[N] = []
        for node in frontier:
            if node not in anchor_set and degree(node) > max_degree:
                continue
            for r, head, tail in incident(node):
                if r in seen_rows:
                    continue
                if len(seen_rows) >= max_triples:
                    truncated = True
                    break
                seen_rows[r] = None
                for end in (head, tail):
                    if end not in reached:
                        reached[end] = None
                        nxt.append(end)
            if truncated:
                break
        if truncated:
            break
        frontier = nxt
    return list(seen_rows), truncated


def subgraph_of(
    view: KGView, rows: Sequence[int], anchors: Sequence[int], truncated: bool
) -> Subgraph:
    """The :class:`Subgraph` of the (sorted) triple ``rows`` of ``view`` and the anchor
    entity rows ``anchors``."""
    kept = np.array(rows, dtype=np.int64)
    anchor_set = {int(a) for a in anchors}
    ends = np.concatenate(
        (view.heads[kept], view.tails[kept], np.array(sorted(anchor_set), np.int64))
    )
    nodes = np.unique(ends)
    local = {int(n): i for i, n in enumerate(nodes)}
    return Subgraph(
        rows=kept,
        nodes=nodes,
        heads=np.array([local[int(h)] for h in view.heads[kept]], dtype=np.int64),
        tails=np.array([local[int(t)] for t in view.tails[kept]], dtype=np.int64),
        anchors=np.array(sorted(local[a] for a in anchor_set), dtype=np.int64),
        truncated=truncated,
    )


def _mean_propagate(
    x: npt.NDArray[np.float64], src: IntArray, dst: IntArray, n: int
) -> npt.NDArray[np.float64]:
    total = np.zeros(n, dtype=np.float64)
    count = np.zeros(n, dtype=np.float64)
    np.add.at(total, dst, x[src])
    np.add.at(count, dst, 1.0)
    return np.divide(total, count, out=np.zeros(n), where=count > 0)


def node_dde(
    n_nodes: int, heads: IntArray, tails: IntArray, anchors: IntArray, rounds: int, reverse: int
) -> FloatMatrix:
    """Entity encodings ``(n_nodes, 1 + rounds + reverse)``.

    Examples
    --------
    >>> import numpy as np
    >>> enc = node_dde(3, np.array([0, 1]), np.array([1, 2]), np.array([0]), 2, 1)
    >>> enc.tolist()
    [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]
    """
    x0 = np.zeros(n_nodes, dtype=np.float64)
    x0[anchors] = 1.0
    cols = [x0]
    x = x0
    for _ in range(rounds):
        x = _mean_propagate(x, heads, tails, n_nodes)
        cols.append(x)
    x = x0
    for _ in range(reverse):
        x = _mean_propagate(x, tails, heads, n_nodes)
        cols.append(x)
    return np.stack(cols, axis=1).astype(np.float32)


def triple_dde(sub: Subgraph, rounds: int, reverse: int) -> FloatMatrix:
    """``[enc(head), enc(tail)]`` per subgraph triple, ``(n_triples, 2 * (1 + R + R'))``."""
    enc = node_dde(int(sub.nodes.shape[0]), sub.heads, sub.tails, sub.anchors, rounds, reverse)
    return np.concatenate((enc[sub.heads], enc[sub.tails]), axis=1)
