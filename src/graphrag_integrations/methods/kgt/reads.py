"""KG-Translator's per-query graph reads: a query reads only the part of the ParseKG it uses.

With a database graph backend (FalkorDB) the flat
:class:`~graphrag_integrations.methods.kgt.store.ParseKGView` would copy every passage (with
its text), every hyperrelation and every entity into the query process. A
:class:`ParseKGReads` has the same reading interface but reads on demand, with the backend's
batched calls, and keeps what it read in a bounded LRU (:class:`NodeCache`, ``cache_nodes``
records, dropped when the graph changes):

* an entity's ``R+`` / ``R-``: one ``neighbors_many(entities, "head", "out")`` /
  ``neighbors_many(entities, "tail", "in")`` (relation translation of that entity);
* an entity's display name and label: its ``R+`` and ``R-`` hyperrelations' mentions (the
  majority over all its occurrences, as the flat view computes it);
* hyperrelations (relation texts for the entity's relation index, sentences and passages for
  clue tracing) and passages (ranking, results): one ``nodes_data`` per batch.

The global parts - counts, fingerprint, entry entities - come from the maintained
:class:`~graphrag_integrations.methods.kgt.summary.ParseKGSummary`, never from a graph scan;
the entry tries from the persisted constraint cache. Same answers as the flat view: the same
hyperrelations in the same (sorted) order, the same majority rule, the same texts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.lru import VersionedLRU
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.kgt.parsekg import ParseKGStats
from graphrag_integrations.methods.kgt.store import (
    ENTITY,
    HEAD,
    PASSAGE,
    REL,
    TAIL,
    EntityInfo,
    RelInfo,
)
from graphrag_integrations.methods.kgt.summary import ParseKGSummary, majority

__all__ = ["DEFAULT_CACHE_NODES", "NodeCache", "ParseKGReads"]

#: Records a :class:`NodeCache` keeps by default.
DEFAULT_CACHE_NODES = 4096


class NodeCache:
    """An LRU of at most ``capacity`` records (thread-safe; the core
    :class:`~graphrag_integrations.core.lru.VersionedLRU`); :attr:`reads`
    counts backend calls.

    Examples
    --------
    >>> cache = NodeCache(2)
    >>> cache.put("a", 1); cache.put("b", 2); cache.put("c", 3)
    >>> cache.get("a") is None, cache.get("c"), len(cache)
    (True, 3, 2)
    >>> cache.cached("", ["b", "x", "c"])
    ({'b': 2, 'c': 3}, ['x'])
    """

    def __init__(self, capacity: int = DEFAULT_CACHE_NODES) -> None:
        if capacity < 1:
            raise ValueError(f"cache_nodes must be >= 1, got {capacity}")
        self.capacity = capacity
        self.reads: Counter[str] = Counter()
        self._lru: VersionedLRU[Any] = VersionedLRU(capacity)

    def __len__(self) -> int:
        return len(self._lru)

    def get(self, key: str) -> Any:
        """The record of ``key`` (``None`` if absent), made most recently used."""
        return self._lru.get([key]).get(key)

    def put(self, key: str, value: Any) -> None:
        """Keep ``value`` under ``key`` (evicts the least recently used past capacity)."""
        self._lru.put({key: value})

    def cached(self, prefix: str, keys: Iterable[str]) -> tuple[dict[str, Any], list[str]]:
        """The records kept under ``prefix + key`` of ``keys``, and the keys without one (in
        order): what a batched read still has to fetch."""
        keys = list(keys)
        hits = self._lru.get([prefix + k for k in keys])
        found = {k: hits[prefix + k] for k in keys if prefix + k in hits}
        return found, [k for k in keys if k not in found]


class _Reads(Mapping[str, Any]):
    """A read-only mapping over one node kind, read in batches through the cache."""

    def __init__(self, owner: ParseKGReads, kind: str) -> None:
        self.owner = owner
        self.kind = kind

    def __getitem__(self, key: str) -> Any:
        return self.many([key])[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self.owner.present(self.kind, [key]))

    def __iter__(self) -> Iterator[str]:
        return iter(node_key(n) for n in self.owner.graph.nodes(self.kind))

    def __len__(self) -> int:
        return self.owner.count(self.kind)

    def many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The records of ``keys`` (a ``KeyError`` names the first unknown one)."""
        return self.owner.records(self.kind, list(dict.fromkeys(keys)))


class ParseKGReads:
    """The reading interface of :class:`~graphrag_integrations.methods.kgt.store.ParseKGView`,
    answered by per-query graph reads (see the module docstring).

    Parameters
    ----------
    graph : GraphBackend
        The ParseKG graph.
    summary : ParseKGSummary
        Counts, fingerprint and entry entities of the graph.
    excluded_head_labels : iterable of str
        Labels that are never reverse entries.
    generation : int
        The store generation it reads.
    cache_nodes : int
        Records kept (passages, hyperrelations, entities and relation lists together).
    """

    lazy = True

    def __init__(
        self,
        graph: GraphBackend,
        summary: ParseKGSummary,
        excluded_head_labels: Iterable[str],
        generation: int = 0,
        cache_nodes: int = DEFAULT_CACHE_NODES,
    ) -> None:
        self.graph = graph
        self.summary = summary
        self.excluded = frozenset(excluded_head_labels)
        self.generation = generation
        self.cache = NodeCache(cache_nodes)
        self.passages: Mapping[str, Passage] = _Reads(self, PASSAGE)
        self.rels: Mapping[str, RelInfo] = _Reads(self, REL)
        self.entities: Mapping[str, EntityInfo] = _Reads(self, ENTITY)
        self._entries: dict[str, list[str]] = {}

    # -- the flat view's interface -----------------------------------------------------------
    @property
    def forward_entries(self) -> list[str]:
        """Entities that start forward translation (from the summary's tables)."""
        return self._entry_list("forward")

    @property
    def reverse_entries(self) -> list[str]:
        """Entities that start reverse translation (from the summary's tables)."""
        return self._entry_list("reverse")

    def _entry_list(self, direction: str) -> list[str]:
        if direction not in self._entries:
            self._entries[direction] = self.summary.entries(direction, self.excluded)
        return self._entries[direction]

    def names(self, keys: Sequence[str]) -> list[str]:
        """Display names of entry entities (from the summary's tables)."""
        return [self.summary.name(k) for k in keys]

    def rels_of(self, entity: str, direction: str) -> tuple[str, ...]:
        """``R+`` (``"forward"``) or ``R-`` (``"reverse"``) of ``entity``, sorted."""
        return self.rel_lists([entity], direction)[entity]

    def rel_lists(self, entities: Sequence[str], direction: str) -> dict[str, tuple[str, ...]]:
        """``rels_of`` of several entities, one batched read for those not cached."""
        tag = "+" if direction == "forward" else "-"
        out, todo = self.cache.cached(tag, dict.fromkeys(entities))
        if todo:
            self.cache.reads[f"rels{tag}"] += 1
            edge, way = (HEAD, "out") if direction == "forward" else (TAIL, "in")
            known = self.present(ENTITY, todo)  # an unknown entity has no hyperrelations
            ids = [node_id(ENTITY, e) for e in known]
            got = self.graph.neighbors_many(ids, edge, way, REL) if ids else {}  # type: ignore[arg-type]
            for ent in todo:
                rels = tuple(sorted(node_key(r) for r in got.get(node_id(ENTITY, ent), ())))
                self.cache.put(f"{tag}{ent}", rels)
                out[ent] = rels
        return out

    def prefetch(self, jobs: Sequence[tuple[str, str]]) -> None:
        """Read what the relation translation of ``(entity, direction)`` jobs needs in few
        batches: the entities' ``R+`` and ``R-``, then their hyperrelations (names, texts)."""
        ents = list(dict.fromkeys(e for e, _ in jobs))
        if ents:
            self.records(ENTITY, [e for e in ents if e in set(self.present(ENTITY, ents))])

    def stats(self) -> ParseKGStats:
        """Table 5 figures (from the summary)."""
        return self.summary.stats(self.excluded)

    def fingerprint(self) -> str:
        """The graph fingerprint (from the summary)."""
        return self.summary.fingerprint()

    # -- reads ---------------------------------------------------------------------------------
    def count(self, kind: str) -> int:
        """Number of passages, hyperrelations or entities (from the summary)."""
        return self.summary.head[{PASSAGE: "passages", REL: "rels", ENTITY: "entities"}[kind]]

    def present(self, kind: str, keys: Sequence[str]) -> list[str]:
        """The keys among ``keys`` with a node of ``kind``."""
        hits = {k for k in keys if self.cache.get(f"{kind}:{k}") is not None}
        hits |= {k for k in keys if self.cache.get(f"?{kind}:{k}") is not None}
        rest = [k for k in keys if k not in hits]
        if rest:
            self.cache.reads["exists"] += 1
            try:
                self.graph.nodes_data([node_id(kind, k) for k in rest])
                found = set(rest)
            except KeyError:  # some are unknown: ask one by one
                found = {k for k in rest if node_id(kind, k) in self.graph}
            for k in found:
                self.cache.put(f"?{kind}:{k}", True)
            hits |= found
        return [k for k in keys if k in hits]

    def records(self, kind: str, keys: Sequence[str]) -> dict[str, Any]:
        """Records of ``kind`` for ``keys`` (cached ones first, the rest in one batch)."""
        if kind == ENTITY:
            return self._entities(keys)
        out, todo = self.cache.cached(f"{kind}:", keys)
        if todo:
            self.cache.reads[kind] += 1
            data = self.graph.nodes_data([node_id(kind, k) for k in todo])
            for key in todo:
                d = data.get(node_id(kind, key))
                if d is None:
                    raise KeyError(key)
                record = _passage(key, d) if kind == PASSAGE else _rel(key, d)
                self.cache.put(f"{kind}:{key}", record)
                out[key] = record
        return {k: out[k] for k in keys}

    def _entities(self, keys: Sequence[str]) -> dict[str, EntityInfo]:
        out, todo = self.cache.cached(f"{ENTITY}:", keys)
        if todo:
            outs = self.rel_lists(todo, "forward")
            ins = self.rel_lists(todo, "reverse")
            rels = self.records(REL, sorted({r for k in todo for r in (*outs[k], *ins[k])}))
            for key in todo:
                names: Counter[str] = Counter()
                labels: Counter[str] = Counter()
                for rel in (*outs[key], *ins[key]):
                    for ent, text, label, _role in rels[rel].mentions:
                        if ent == key:
                            names[text] += 1
                            labels[label] += 1
                if not names:
                    raise KeyError(key)
                info = EntityInfo(key, majority(names), majority(labels), outs[key], ins[key])
                self.cache.put(f"{ENTITY}:{key}", info)
                out[key] = info
        return {k: out[k] for k in keys}


def _passage(key: str, d: Mapping[str, Any]) -> Passage:
    return Passage(key, d["text"], d["doc_id"], d["metadata"])


def _rel(key: str, d: Mapping[str, Any]) -> RelInfo:
    heads = tuple(sorted({m[0] for m in d["mentions"] if m[3] == HEAD}))
    tails = tuple(sorted({m[0] for m in d["mentions"] if m[3] != HEAD}))
    mentions = tuple(tuple(m) for m in d["mentions"])
    return RelInfo(key, d["relation"], d["sentence"], d["passage_id"], heads, tails, mentions)
