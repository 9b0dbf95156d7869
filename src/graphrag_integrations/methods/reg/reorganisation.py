"""Structure-aware post-retrieval re-organisation (paper 4.2, appendix E.4).

**Chain expansion** (Algorithm 1, both directions). Query-anchored triples (an anchor as head
or tail) start chains at their anchor; a chain grows by one retrieved non-anchored triple
that continues at its current end entity, breadth first, up to ``max_length`` triples. Like
Algorithm 1, a ``(start anchor, end entity)`` pair is extended only once (``T_vis``); a chain
never revisits an entity. With ``strict_direction`` (the paper) a chain only follows triples
head->tail (the query entity heads the first triple) or only tail->head (the query entity is
the tail of the last triple when read left to right); without it a chain may mix the two, so
"films starring X directed by D" (``(M, starred_actors, X)``, ``(M, directed_by, D)``) forms
the chain ``X <- [starred_actors] <- M -> [directed_by] -> D``. A chain that is a strict
prefix of another kept chain is dropped (Algorithm 1 keeps it; ``keep_prefixes=True``
restores that).

**Scores.** A chain scores the mean of its triples' scores.

**Merging** (E.4.2): chains from one anchor with one directed relation chain are merged
(multi-answer merging; targets ordered by path score); then, for several anchors, merged
chains from distinct anchors whose targets overlap are placed together and their targets
become the intersection (multi-entity merging, greedy by score, n-ary).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from graphrag_integrations.methods.reg.candidates import (
    Path,
    RelationChain,
    Step,
    path_entities,
    relation_chain,
    render_chain,
    step_ends,
)
from graphrag_integrations.methods.reg.params import RegQueryParams
from graphrag_integrations.methods.reg.store import KGView


@dataclass
class MergedChain:
    """Chains from one anchor sharing a relation chain."""

    source: int
    chain: RelationChain
    paths: list[Path]
    path_scores: list[float]

    @property
    def score(self) -> float:
        return max(self.path_scores)

    def targets(self, view: KGView) -> list[int]:
        """End entities, best path first."""
        return list(dict.fromkeys(path_entities(view, self.source, p)[-1] for p in self.paths))

    def render(self, view: KGView) -> str:
        return render_chain(view, self.source, self.chain, self.paths)


@dataclass
class EvidenceChain:
    """One returned unit: one merged chain, or several merged across anchors."""

    parts: list[MergedChain]
    targets: list[int]
    score: float
    rows: list[int] = field(default_factory=list)

    def render(self, view: KGView) -> str:
        return "\n".join(p.render(view) for p in self.parts)


def expand_chains(
    view: KGView,
    rows: Sequence[int],
    scores: Sequence[float],
    anchors: Sequence[int],
    *,
    max_length: int,
    strict_direction: bool,
    keep_prefixes: bool = False,
) -> list[tuple[int, Path, float]]:
    """``(anchor, path, score)`` of every evidence chain (see the module docstring)."""
    if max_length < 1:
        raise ValueError(f"max_length must be >= 1, got {max_length}")
    anchor_set = set(anchors)
    score = dict(zip((int(r) for r in rows), (float(s) for s in scores), strict=True))
    steps_from: dict[int, list[Step]] = defaultdict(list)
    queue: deque[tuple[int, Path]] = deque()
    for r in sorted(score, key=lambda r: (-score[r], r)):
        h, t = int(view.heads[r]), int(view.tails[r])
        anchored = False
        if h in anchor_set:
            queue.append((h, ((r, True),)))
            anchored = True
        if t in anchor_set and t != h:
            queue.append((t, ((r, False),)))
            anchored = True
        if not anchored:
            steps_from[h].append((r, True))
            steps_from[t].append((r, False))
    visited: set[tuple[int, int]] = set()
    out: list[tuple[int, Path]] = []
    seen: set[tuple[int, Path]] = set()
    while queue:
        src, path = queue.popleft()
        if (src, path) in seen:
            continue
        seen.add((src, path))
        out.append((src, path))
        if len(path) >= max_length:
            continue
        ents = path_entities(view, src, path)
        for step in steps_from[ents[-1]]:
            if strict_direction and step[1] != path[0][1]:
                continue
            end = step_ends(view, step)[1]
            if end in ents or (src, end) in visited:
                continue
            visited.add((src, end))
            queue.append((src, (*path, step)))
    if not keep_prefixes:
        prefixes = {(s, p[:i]) for s, p in out for i in range(1, len(p))}
        out = [c for c in out if c not in prefixes]
    return [(s, p, sum(score[r] for r, _ in p) / len(p)) for s, p in out]


def merge_chains(
    view: KGView,
    chains: Sequence[tuple[int, Path, float]],
    *,
    multi_answer: bool,
    multi_entity: bool,
) -> list[EvidenceChain]:
    """Multi-answer then multi-entity merging; best first."""
    merged: dict[tuple[int, RelationChain, int], MergedChain] = {}
    for i, (src, path, s) in enumerate(sorted(chains, key=lambda c: -c[2])):
        key = (src, relation_chain(view, path), 0 if multi_answer else i)
        if key in merged:
            merged[key].paths.append(path)
            merged[key].path_scores.append(s)
        else:
            merged[key] = MergedChain(src, key[1], [path], [s])
    ordered = sorted(merged.values(), key=lambda m: -m.score)
    groups: list[EvidenceChain] = []
    used: set[int] = set()
    for i, first in enumerate(ordered):
        if i in used:
            continue
        used.add(i)
        parts, targets = [first], first.targets(view)
        if multi_entity:
            for j in range(i + 1, len(ordered)):
                other = ordered[j]
                if j in used or other.source in {p.source for p in parts}:
                    continue
                common = [t for t in targets if t in set(other.targets(view))]
                if common:
                    parts.append(other)
                    targets = common
                    used.add(j)
        rows = list(dict.fromkeys(r for p in parts for path in p.paths for r, _ in path))
        groups.append(EvidenceChain(parts, targets, max(p.score for p in parts), rows))
    return sorted(groups, key=lambda g: -g.score)


def reorganise(
    view: KGView,
    rows: Sequence[int],
    scores: Sequence[float],
    anchors: Sequence[int],
    params: RegQueryParams,
) -> list[EvidenceChain]:
    """Chain expansion then merging (the whole re-organisation step)."""
    chains = expand_chains(
        view,
        rows,
        scores,
        anchors,
        max_length=params.max_length,
        strict_direction=params.strict_direction,
        keep_prefixes=params.keep_prefixes,
    )
    return merge_chains(
        view,
        chains,
        multi_answer=params.multi_answer_merging,
        multi_entity=params.multi_entity_merging,
    )
