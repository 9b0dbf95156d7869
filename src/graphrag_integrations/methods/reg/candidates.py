"""Multi-faceted candidate generation (paper 4.1) and structural merging (appendix E.2).

Paths live on the KG's directed multigraph (:class:`~.store.KGView`): a path is a tuple of
steps ``(triple row, forward)``; a step may follow its triple head->tail (``forward``) or
tail->head, so "films starring X" (``(film, starred_actors, X)``) is reachable from ``X``
while every triple keeps its stored direction, and parallel relations are distinct steps.

* ``P_sp``: every shortest path (step count) from each topic entity to each answer, up to
  ``max_path_length`` steps and ``max_paths`` per pair (hitting the cap is counted);
* ``P_q``: query-centric neighbourhood, the one-hop triples of each topic entity;
* ``P_a``: answer-centric neighbourhood of the representative answer ``a*``: its outgoing
  triples (its attributes). **Attribute-less answers** (no outgoing triple, e.g. MetaQA's
  people, years, genres) use their incoming triples instead, except the last steps of its
  ``P_sp`` paths (already candidates) - unless more than ``neighbourhood_cap`` remain: such a
  hub answer (a genre with thousands of films) gets no ``P_a`` (``PoolStats.hub_answer``),
  since "some films of this genre" is no evidence. At most ``neighbourhood_cap`` triples per
  entity, round-robin over relation types, so every relation type appears.

Structural merging: (I) **answer merging** keeps one representative ``a*`` (nearest, then
fewest shortest paths, then name) for ``P_sp`` and ``P_a``; (II) **relation-chain merging**
groups paths with the same source entity and the same directed relation chain
``((r1, fwd1), ...)`` into one candidate. :class:`PoolStats` reports the pool before and
after merging (Table 1).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from graphrag_integrations.methods.reg.kg import Triple
from graphrag_integrations.methods.reg.params import RegIndexParams
from graphrag_integrations.methods.reg.store import KGView

logger = logging.getLogger(__name__)

Step = tuple[int, bool]
"""``(triple row, forward)``."""
Path = tuple[Step, ...]
RelationChain = tuple[tuple[str, bool], ...]
#: Entities shown per chain position of a merged candidate in the prompt.
SHOWN_PER_POSITION = 3


def step_ends(view: KGView, step: Step) -> tuple[int, int]:
    """``(from, to)`` entity rows of a step."""
    row, forward = step
    h, t = int(view.heads[row]), int(view.tails[row])
    return (h, t) if forward else (t, h)


def path_entities(view: KGView, source: int, path: Path) -> list[int]:
    """Entity rows visited by ``path`` from ``source`` (length ``len(path) + 1``)."""
    out = [source]
    for step in path:
        a, b = step_ends(view, step)
        if a != out[-1]:
            raise ValueError(f"step {step} does not continue at entity row {out[-1]}")
        out.append(b)
    return out


def relation_chain(view: KGView, path: Path) -> RelationChain:
    """The directed relation chain of a path."""
    return tuple((view.relations[int(view.rels[row])], fwd) for row, fwd in path)


def _incident(view: KGView, node: int) -> Iterable[Step]:
    for row in view.out_edges[node]:
        yield int(row), True
    for row in view.in_edges[node]:
        yield int(row), False


def distances(view: KGView, source: int, max_depth: int, targets: set[int]) -> dict[int, int]:
    """Undirected BFS distances from ``source`` (stops at ``max_depth`` or once every target
    has its distance and the current layer is complete)."""
    dist = {source: 0}
    frontier = [source]
    depth = 0
    while frontier and depth < max_depth and not targets <= dist.keys():
        depth += 1
        nxt: list[int] = []
        for node in frontier:
            for step in _incident(view, node):
                other = step_ends(view, step)[1]
                if other not in dist:
                    dist[other] = depth
                    nxt.append(other)
        frontier = nxt
    return dist


def shortest_paths(
    view: KGView,
    source: int,
    target: int,
    max_length: int,
    max_paths: int,
    dist: dict[int, int] | None = None,
) -> tuple[list[Path], bool]:
    """All shortest paths ``source -> target`` (steps in either direction), and whether
    ``max_paths`` cut the enumeration. ``dist``: :func:`distances` from ``source`` computed
    once for several targets (it must have reached ``target`` if ``target`` is reachable)."""
    if source == target:
        return [], False
    if dist is None:
        dist = distances(view, source, max_length, {target})
    if target not in dist:
        return [], False
    out: list[Path] = []
    capped = False

    def back(node: int, suffix: Path) -> None:
        nonlocal capped
        if len(out) >= max_paths:
            capped = True
            return
        if node == source:
            out.append(suffix)
            return
        d = dist[node]
        for row, fwd in _incident(view, node):
            # (row, fwd) seen from ``node``; the step INTO node goes the other way.
            step = (row, not fwd)
            prev = step_ends(view, step)[0]
            if dist.get(prev) == d - 1:
                back(prev, (step, *suffix))

    back(target, ())
    return sorted(out), capped


@dataclass
class Candidate:
    """One (merged) candidate: paths from ``source`` sharing a relation chain."""

    kind: str  # "sp", "query" or "answer"
    source: int
    chain: RelationChain
    paths: list[Path] = field(default_factory=list)

    def triples(self, view: KGView) -> list[int]:
        """Triple rows of all member paths (first-seen order)."""
        return list(dict.fromkeys(row for p in self.paths for row, _ in p))

    def render(self, view: KGView) -> str:
        """The candidate as a prompt line (:func:`render_chain`, 3 entities per position)."""
        return render_chain(view, self.source, self.chain, self.paths, SHOWN_PER_POSITION)


def render_chain(
    view: KGView,
    source: int,
    chain: RelationChain,
    paths: Sequence[Path],
    shown: int | None = None,
) -> str:
    """``h -> [r] -> t -> ...``, ``<- [r] <-`` for a step against its triple; several paths
    with one relation chain join the distinct entities of each position with ``"; "`` (at most
    ``shown`` of them, then ``"..."``).

    Examples
    --------
    >>> from graphrag_integrations.methods.reg.store import KGView
    >>> import numpy as np
    >>> v = KGView(entities=["A", "M", "X"], relations=["directed_by", "starred"],
    ...            heads=np.array([1, 1]), rels=np.array([0, 1]), tails=np.array([0, 2]))
    >>> render_chain(v, 2, (("starred", False), ("directed_by", True)), [((1, False), (0, True))])
    'X <- [starred] <- M -> [directed_by] -> A'
    """
    columns: list[list[str]] = [[] for _ in range(len(chain) + 1)]
    for path in paths:
        for pos, ent in enumerate(path_entities(view, source, path)):
            name = view.entities[ent]
            if name not in columns[pos]:
                columns[pos].append(name)
    parts = [_join(columns[0], shown)]
    for (rel, fwd), col in zip(chain, columns[1:], strict=True):
        parts.append(f"-> [{rel}] ->" if fwd else f"<- [{rel}] <-")
        parts.append(_join(col, shown))
    return " ".join(parts)


def render_triple(triple: Sequence[str]) -> str:
    """One triple as ``h -> [r] -> t`` (the unchained form of :func:`render_chain`).

    Examples
    --------
    >>> render_triple(("Kismet", "directed_by", "William Dieterle"))
    'Kismet -> [directed_by] -> William Dieterle'
    """
    head, relation, tail = triple
    return f"{head} -> [{relation}] -> {tail}"


def _join(names: Sequence[str], shown: int | None) -> str:
    if shown is None or len(names) <= shown:
        return "; ".join(names)
    return "; ".join([*names[:shown], "..."])


@dataclass(frozen=True)
class PoolStats:
    """Candidate-pool size before and after structural merging (Table 1)."""

    raw: int
    merged: int
    capped: bool
    hub_answer: bool = False


@dataclass
class CandidatePool:
    """A training question's candidates and what grounding needs later."""

    candidates: list[Candidate]
    sp_paths: dict[tuple[int, int], list[Path]]  # (topic, answer) -> all shortest paths
    representative: int | None
    stats: PoolStats

    def weak_triples(self) -> list[int]:
        """Triple rows of every q->a shortest path (the weak supervision)."""
        return list(dict.fromkeys(row for ps in self.sp_paths.values() for p in ps for row, _ in p))


def _neighbourhood(
    view: KGView, node: int, steps: Iterable[Step], cap: int, kind: str
) -> list[Candidate]:
    """At most ``cap`` one-step candidates from ``node``, taken round-robin over relation
    types (so the cap keeps every relation) in KG order within a type."""
    groups: dict[tuple[int, bool], list[Step]] = defaultdict(list)
    for s in sorted(steps, key=lambda s: (int(view.rels[s[0]]), not s[1], s[0])):
        groups[(int(view.rels[s[0]]), s[1])].append(s)
    queues = list(groups.values())
    picked: list[Step] = []
    depth = 0
    while len(picked) < cap and any(depth < len(q) for q in queues):
        for q in queues:
            if depth < len(q) and len(picked) < cap:
                picked.append(q[depth])
        depth += 1
    return [Candidate(kind, node, relation_chain(view, (s,)), [(s,)]) for s in picked]


def merge_by_relation_chain(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Relation-chain merging (E.2 II): one candidate per (kind, source, chain).

    Examples
    --------
    >>> a = Candidate("sp", 0, (("r", True),), [((1, True),)])
    >>> b = Candidate("sp", 0, (("r", True),), [((2, True),)])
    >>> [len(c.paths) for c in merge_by_relation_chain([a, b])]
    [2]
    """
    merged: dict[tuple[str, int, RelationChain], Candidate] = {}
    for c in candidates:
        key = (c.kind, c.source, c.chain)
        if key in merged:
            merged[key].paths.extend(p for p in c.paths if p not in merged[key].paths)
        else:
            merged[key] = Candidate(c.kind, c.source, c.chain, list(c.paths))
    return list(merged.values())


def build_pool(
    view: KGView,
    topics: Sequence[str],
    answers: Sequence[str],
    params: RegIndexParams | None = None,
) -> CandidatePool:
    """The candidate pool of one training question (see the module docstring).

    Topic entities and answers missing from the KG are skipped (logged at debug level).
    """
    params = params or RegIndexParams()
    t_rows = [view.entity_row[t] for t in dict.fromkeys(topics) if t in view.entity_row]
    a_rows = [view.entity_row[a] for a in dict.fromkeys(answers) if a in view.entity_row]
    missing = len(set(topics)) + len(set(answers)) - len(t_rows) - len(a_rows)
    if missing:
        logger.debug("%d topic/answer entities are not in the KG", missing)
    sp: dict[tuple[int, int], list[Path]] = {}
    capped = False
    for t in t_rows:
        dist = distances(view, t, params.max_path_length, set(a_rows))  # once for all answers
        for a in a_rows:
            paths, cut = shortest_paths(view, t, a, params.max_path_length, params.max_paths, dist)
            capped |= cut
            if paths:
                sp[(t, a)] = paths
    representative: int | None = None
    if sp:
        representative = min(
            {a for _, a in sp},
            key=lambda a: (
                min(len(ps[0]) for (_, b), ps in sp.items() if b == a),
                sum(len(ps) for (_, b), ps in sp.items() if b == a),
                view.entities[a],
            ),
        )
    raw: list[Candidate] = []
    hub_answer = False
    for (t, a), paths in sp.items():
        if params.answer_merging and a != representative:
            continue
        raw += [Candidate("sp", t, relation_chain(view, p), [p]) for p in paths]
    n_raw = sum(len(ps) for ps in sp.values())
    for t in t_rows:
        nb = _neighbourhood(view, t, _incident(view, t), params.neighbourhood_cap, "query")
        raw += nb
        n_raw += len(nb)
    answer_rows = (
        [representative]
        if (params.answer_merging and representative is not None)
        else (a_rows if not params.answer_merging else [])
    )
    for a in answer_rows:
        last = {p[-1][0] for (_, b), ps in sp.items() if b == a for p in ps}
        steps = [(int(r), True) for r in view.out_edges[a]]
        if not steps:
            incoming = [(int(r), False) for r in view.in_edges[a] if int(r) not in last]
            if len(incoming) > params.neighbourhood_cap:
                hub_answer = True  # a hub's in-neighbourhood says nothing about the answer
                incoming = []
            steps = incoming
        # an answer-centric candidate starts at the answer
        nb = _neighbourhood(view, a, steps, params.neighbourhood_cap, "answer")
        raw += nb
        n_raw += len(nb)
    candidates = merge_by_relation_chain(raw) if params.relation_merging else raw
    return CandidatePool(
        candidates, sp, representative, PoolStats(n_raw, len(candidates), capped, hub_answer)
    )


def ground(
    view: KGView,
    pool: CandidatePool,
    selected: Iterable[int],
    *,
    all_answers: bool = True,
) -> list[int]:
    """Triple rows of the selected candidates (the refined supervision ``G+``).

    With ``all_answers``, a selected ``P_sp`` candidate labels every shortest path (to any
    answer, from its source) with the same relation chain, undoing answer merging for the
    labels.
    """
    rows: dict[int, None] = {}
    for i in selected:
        cand = pool.candidates[i]
        if cand.kind == "sp" and all_answers:
            for (t, _), paths in pool.sp_paths.items():
                if t == cand.source:
                    for p in paths:
                        if relation_chain(view, p) == cand.chain:
                            rows.update(dict.fromkeys(r for r, _ in p))
        rows.update(dict.fromkeys(cand.triples(view)))
    return list(rows)


def triples_of(view: KGView, rows: Iterable[int]) -> list[Triple]:
    """Names of triple rows."""
    return [view.triple(r) for r in rows]
