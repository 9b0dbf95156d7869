"""All storage of KG-Translator: the ParseKG and passage vectors on the core ``IndexStore``.

:class:`ParseKGStore` is KG-Translator's schema over a core
:class:`~graphrag_integrations.core.index.store.IndexStore` (graph backend + vector layer,
persistence and checks, derived views). The directed hypergraph of the paper is encoded
bipartitely:

* nodes ``passage:<id>`` (``text``, ``doc_id``, ``metadata``), ``rel:<hyperedge id>``
  (``relation`` = masked sentence, ``sentence``, ``passage_id``, ``position`` and
  ``mentions`` = ``[[entity key, surface text, spaCy label, "head" | "tail"], ...]``) and
  ``entity:<normalised name>``;
* edges ``passage -> rel`` (``contains``), ``entity -> rel`` (``head``: the entity is in
  ``H_r``) and ``rel -> entity`` (``tail``: in ``T_r``);
* nodes ``pvec:<passage id>`` mark the passages that have a vector (layer ``"passages"``):
  with lazy passage vectors only the passages traced so far are embedded, and the store's
  load check (every node of a layer has exactly one vector) holds for the marked subset.
  The vectors are a cache (``cached_kinds`` of the core load): marks a query wrote into a
  database graph after the last persist have no saved vector and are removed at load
  (the passages are embedded again when needed);
* provenance = document id on every node and edge, so ``delete(doc_id)`` is
  ``remove_document``: a hyperedge disappears with its passage, an entity with its last
  incidence (orphaned entities are removed), a vector with its passage.

:class:`ParseKGView` is the derived, read-only query-time view (entity display names and
labels, out- and in-hyperrelations, entry entities): the store's derived view ``"parsekg"``,
rebuilt after an insert or delete (not when lazy vectors are added). It reads the graph only
through the ``GraphBackend`` protocol. The constraint cache (tokenised hyperrelations and
entity tries, see :mod:`~graphrag_integrations.methods.kgt.constraints`) depends on the LM's
tokenizer, so it is a side directory ``constraints/<tokenizer fingerprint>/`` of the index
(:func:`save_constraint_cache`), checked against :meth:`ParseKGView.fingerprint` on load.

With a database graph backend (or ``graph_view="neighbourhood"``) queries do not build the flat
view: :attr:`ParseKGStore.view` is a per-query reader
(:class:`~graphrag_integrations.methods.kgt.reads.ParseKGReads`) and the counts, fingerprint and
entry entities come from the :class:`~graphrag_integrations.methods.kgt.summary.ParseKGSummary`
the store maintains on insert and delete and persists with the index (``parsekg/``).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from graphrag_integrations.core import batching
from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.graph.backends import is_in_process
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.filtered_reads import nearest_within
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.index.store_base import VectorIndexFactory
from graphrag_integrations.core.persistence import atomic_write_json
from graphrag_integrations.core.retrieval.filter_scope import FilterScope
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import IndexMismatchError, IndexNotFoundError
from graphrag_integrations.methods.kgt.parsekg import Hyperedge, ParseKGStats
from graphrag_integrations.methods.kgt.summary import (
    ParseKGSummary,
    entity_term,
    fingerprint_hex,
    rel_term,
)

logger = logging.getLogger(__name__)

PASSAGE, REL, ENTITY, PASSAGE_VECTOR = "passage", "rel", "entity", "pvec"
CONTAINS, HEAD, TAIL = "contains", "head", "tail"
#: Vector layers of the store: the embedded passages.
LAYERS = {PASSAGE_VECTOR: "passages"}
CONSTRAINTS_DIR = "constraints"
VIEW = "parsekg"
READS = "parsekg-reads"


@dataclass(frozen=True)
class EntityInfo:
    """Query-time view of one entity.

    Attributes
    ----------
    key : str
        Normalised name (graph key).
    name : str
        Display name: its most frequent surface form (ties: smallest string).
    label : str
        Most frequent spaCy label (ties: smallest).
    out_rels, in_rels : tuple of str
        Hyperedge ids where it is a head (``R+``) / a tail (``R-``), sorted.
    """

    key: str
    name: str
    label: str
    out_rels: tuple[str, ...]
    in_rels: tuple[str, ...]


@dataclass(frozen=True)
class RelInfo:
    """Query-time view of one hyperedge."""

    id: str
    relation: str
    sentence: str
    passage_id: str
    heads: tuple[str, ...]
    tails: tuple[str, ...]
    #: ``(entity, text, label, role)`` rows (filled by per-query reads, empty in the flat view).
    mentions: tuple[tuple[str, ...], ...] = ()


def read_many(mapping: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """``{key: mapping[key]}``, in one batched read when ``mapping`` is a per-query reader.

    >>> read_many({"a": 1, "b": 2}, ["b"])
    {'b': 2}
    """
    many = getattr(mapping, "many", None)
    if many is not None:
        return dict(many(keys))
    return {k: mapping[k] for k in dict.fromkeys(keys)}


def _majority(counts: Counter[str]) -> str:
    best = max(counts.values())
    return min(name for name, c in counts.items() if c == best)


class ParseKGView:
    """Derived query-time arrays of a ParseKG graph (see the module docstring).

    Parameters
    ----------
    graph : GraphBackend
        The ParseKG graph.
    excluded_head_labels : iterable of str
        Labels that are never entries (also applied to reverse-translation entries).
    generation : int
        The :attr:`ParseKGStore.generation` it was built from.
    """

    lazy = False

    def __init__(
        self, graph: GraphBackend, excluded_head_labels: Iterable[str], generation: int = 0
    ) -> None:
        passages: dict[str, Passage] = {}
        for node in graph.nodes(PASSAGE):
            d = graph.node(node)
            key = node_key(node)
            passages[key] = Passage(key, d["text"], d["doc_id"], d["metadata"])
        rels = ((node_key(node), graph.node(node)) for node in graph.nodes(REL))
        entities = [node_key(node) for node in graph.nodes(ENTITY)]
        self._fill(passages, rels, entities, excluded_head_labels, generation)

    @classmethod
    def of(
        cls,
        passages: dict[str, Passage],
        rels: Iterable[tuple[str, Mapping[str, Any]]],
        excluded_head_labels: Iterable[str],
        generation: int = 0,
    ) -> ParseKGView:
        """The view of some passages and their hyperrelations (``(key, rel node data)``):
        the ParseKG of just those (entities in order of first incidence)."""
        view = cls.__new__(cls)
        view._fill(passages, rels, None, excluded_head_labels, generation)
        return view

    def _fill(
        self,
        passages: dict[str, Passage],
        rel_nodes: Iterable[tuple[str, Mapping[str, Any]]],
        entity_keys: Iterable[str] | None,
        excluded_head_labels: Iterable[str],
        generation: int,
    ) -> None:
        excluded = frozenset(excluded_head_labels)
        self.generation = generation
        self.passages = passages
        self.rels: dict[str, RelInfo] = {}
        out_rels: dict[str, list[str]] = {}
        in_rels: dict[str, list[str]] = {}
        names: dict[str, Counter[str]] = {}
        labels: dict[str, Counter[str]] = {}
        for key, d in rel_nodes:
            heads: list[str] = []
            tails: list[str] = []
            for ent, text, label, role in d["mentions"]:
                (heads if role == HEAD else tails).append(ent)
                names.setdefault(ent, Counter())[text] += 1
                labels.setdefault(ent, Counter())[label] += 1
            for ent in dict.fromkeys(heads):
                out_rels.setdefault(ent, []).append(key)
            for ent in dict.fromkeys(tails):
                in_rels.setdefault(ent, []).append(key)
            self.rels[key] = RelInfo(
                key, d["relation"], d["sentence"], d["passage_id"],
                tuple(sorted(set(heads))), tuple(sorted(set(tails))),
            )  # fmt: skip
        self.entities: dict[str, EntityInfo] = {}
        for key in names if entity_keys is None else entity_keys:
            if key not in names:  # an entity without incidences cannot exist after delete
                logger.warning("entity %r has no incidence; left out of the view", key)
                continue
            self.entities[key] = EntityInfo(
                key,
                _majority(names[key]),
                _majority(labels[key]),
                tuple(sorted(out_rels.get(key, ()))),
                tuple(sorted(in_rels.get(key, ()))),
            )
        #: Entities that can start forward translation (``H``: heads somewhere).
        self.forward_entries = sorted(k for k, e in self.entities.items() if e.out_rels)
        #: Entities that can start reverse translation (tails of an allowed type).
        self.reverse_entries = sorted(
            k for k, e in self.entities.items() if e.in_rels and e.label not in excluded
        )

    def rels_of(self, entity: str, direction: str) -> tuple[str, ...]:
        """``R+`` (``"forward"``) or ``R-`` (``"reverse"``) of ``entity`` (empty if unknown)."""
        info = self.entities.get(entity)
        if info is None:
            return ()
        return info.out_rels if direction == "forward" else info.in_rels

    def names(self, keys: Sequence[str]) -> list[str]:
        """Display names of ``keys``."""
        return [self.entities[k].name for k in keys]

    def stats(self) -> ParseKGStats:
        """Table 5 figures of the current graph."""
        heads = sum(len(r.heads) for r in self.rels.values())
        tails = sum(len(r.tails) for r in self.rels.values())
        entry = len(self.forward_entries)
        return ParseKGStats(
            passages=len(self.passages),
            sentences=len(self.rels),
            entities=len(self.entities),
            hyperrelations=len(self.rels),
            entry_entities=entry,
            non_entry_entities=len(self.entities) - entry,
            head_incidences=heads,
            tail_incidences=tails,
        )

    def fingerprint(self) -> str:
        """Hash of the hyperrelation texts and entity names (keys the constraint cache): the
        order-independent sum :class:`~graphrag_integrations.methods.kgt.summary.ParseKGSummary`
        maintains."""
        total = sum(rel_term(k, r.relation) for k, r in self.rels.items())
        total += sum(entity_term(k, e.name, e.label) for k, e in self.entities.items())
        return fingerprint_hex(total)


def _vector_metadata(graph: GraphBackend, kind: str, key: str) -> dict[str, Any]:
    return {"doc_id": graph.node(node_id(PASSAGE, key))["doc_id"]}


class ParseKGStore:
    """The ParseKG and the passage vectors of one index, on a core ``IndexStore``.

    Parameters
    ----------
    model_name : str
        Embedding model of the passage vectors.
    excluded_head_labels : iterable of str
        F.2 type filter (for the derived view's reverse entries).
    factory : VectorIndexFactory, optional
        Vector backend of the ``"passages"`` layer (default: in memory).
    graph : GraphBackend class, optional
        Graph backend (default: networkx ``GraphStore``).

    Examples
    --------
    >>> store = ParseKGStore("toy", ())
    >>> len(store.index_store.graph), store.dimension, store.view.stats().passages
    (0, 0, 0)
    """

    def __init__(
        self,
        model_name: str,
        excluded_head_labels: Iterable[str],
        *,
        factory: VectorIndexFactory | None = None,
        graph: type[GraphBackend] | None = None,
        store: IndexStore | None = None,
    ) -> None:
        self.index_store = store or IndexStore(
            model_name, LAYERS, factory=factory, graph=graph, metadata=_vector_metadata
        )
        self.excluded_head_labels = frozenset(excluded_head_labels)
        #: Bumped by every graph change (insert / delete), not by added lazy vectors.
        self.generation = 0
        #: Per-query reads (:mod:`~graphrag_integrations.methods.kgt.reads`) instead of the
        #: flat view: ``None`` = with a database graph backend.
        self.per_query: bool | None = None
        #: Records the per-query reads cache.
        self.cache_nodes = 4096
        self._all_embedded = -1  # the generation in which every passage had a vector
        #: The per-query reader class (:class:`~graphrag_integrations.methods.kgt.reads.
        #: ParseKGReads`, set by the retriever: the reader module builds on this one).
        self.reads_class: Callable[..., Any] | None = None
        # counts / fingerprint / entries, maintained by add and remove_document once made (a new
        # database graph starts with it; otherwise it is read or scanned when first needed)
        self._summary_lock = threading.RLock()
        self._summary: ParseKGSummary | None = (
            ParseKGSummary.empty()
            if store is None and not is_in_process(type(self.index_store.graph))
            else None
        )

    @property
    def reads_per_query(self) -> bool:
        """Whether queries read the graph per query (:attr:`per_query`, by default whether the
        graph is in a database) instead of building the flat view."""
        if self.per_query is not None:
            return self.per_query
        return not is_in_process(type(self.index_store.graph))

    @property
    def summary(self) -> ParseKGSummary:
        """Counts, fingerprint and entity / document tables (scanned once if unknown)."""
        with self._summary_lock:
            if self._summary is None:
                self._summary = self._scan_summary()
            return self._summary

    def forget_summary(self) -> None:
        """Drop the in-process summary (scanned again from the graph when next needed): after
        a write that failed half-way, it may count what never reached the graph."""
        with self._summary_lock:
            self._summary = None
            self.generation += 1

    def _scan_summary(self) -> ParseKGSummary:
        """The summary of the whole graph, read in batches (an index without a stored one)."""
        graph = self.index_store.graph
        logger.debug("computing the ParseKG summary from the whole graph")

        def batches(kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
            for batch in batching.batches(graph.nodes(kind), 1024):
                yield from graph.nodes_data(batch).items()

        passages = [(node_key(n), d["doc_id"]) for n, d in batches(PASSAGE)]
        rels = ((node_key(n), d["relation"], d["mentions"]) for n, d in batches(REL))
        return ParseKGSummary.scan(passages, rels)

    @property
    def dimension(self) -> int:
        """Vector dimension (0 before the first vectors)."""
        return self.index_store.dimension

    @property
    def view(self) -> ParseKGView:
        """The derived query-time view of the current graph (per-query reads when
        :attr:`reads_per_query`)."""
        if not self.reads_per_query:
            return self.index_store.derived(VIEW, self._build_view)
        reads = self.index_store.derived(READS, self._build_reads)
        reads.cache.capacity = self.cache_nodes  # type: ignore[attr-defined]
        return reads

    def _build_view(self, store: IndexStore, previous: ParseKGView | None) -> ParseKGView:
        if previous is not None and previous.generation == self.generation:
            return previous  # only lazy vectors were added: the graph is unchanged
        return ParseKGView(store.graph, self.excluded_head_labels, self.generation)

    def _build_reads(self, store: IndexStore, previous: ParseKGView | None) -> ParseKGView:
        if previous is not None and previous.generation == self.generation:
            return previous
        if self.reads_class is None:
            raise RuntimeError("per-query reads need ParseKGStore.reads_class (kgt.reads)")
        reads = self.reads_class(
            store.graph, self.summary, self.excluded_head_labels, self.generation, self.cache_nodes
        )
        return cast(ParseKGView, reads)  # the same reading interface

    def has_passage(self, passage_id: str) -> bool:
        """Whether the passage is indexed."""
        return self.index_store.has(PASSAGE, passage_id)

    def document_ids(self) -> set[str]:
        """Ids of the indexed documents."""
        if self.reads_per_query:
            return self.summary.document_ids()
        return {p.doc_id for p in self.view.passages.values()}

    # -- mutation --------------------------------------------------------------------------
    def add(
        self,
        passages: Sequence[Passage],
        edges: Sequence[Hyperedge],
        vectors: Mapping[str, FloatMatrix],
    ) -> None:
        """Add passages, their hyperedges and the passage vectors given (by passage id)."""
        s = self.index_store
        with s.writing():
            self.generation += 1
            if self._summary is not None:
                for p in passages:
                    self._summary.add_passage(p.id, p.doc_id)
            for p in passages:
                s.add_node(
                    PASSAGE, p.id, (p.doc_id,), text=p.text, doc_id=p.doc_id,
                    metadata=dict(p.metadata),
                )  # fmt: skip
            for e in edges:
                prov = (e.doc_id,)
                heads = set(e.heads)
                mentions = [
                    [m.key, m.text, m.label, HEAD if m.key in heads else TAIL] for m in e.mentions
                ]
                rel = s.add_node(
                    REL, e.id, prov, relation=e.relation, sentence=e.sentence,
                    passage_id=e.passage_id, position=e.position, mentions=mentions,
                )  # fmt: skip
                if self._summary is not None:
                    self._summary.add_rel(e.id, e.relation, mentions)
                s.add_edge(node_id(PASSAGE, e.passage_id), rel, CONTAINS, prov)
                for m in e.mentions:
                    ent = s.add_node(ENTITY, m.key, prov)
                    if m.key in heads:
                        s.add_edge(ent, rel, HEAD, prov)
                    else:
                        s.add_edge(rel, ent, TAIL, prov)
            self.add_vectors([p for p in passages if p.id in vectors], vectors)

    def add_vectors(self, passages: Sequence[Passage], vectors: Mapping[str, FloatMatrix]) -> None:
        """Store the vectors of ``passages`` (lazy mode adds them when first needed)."""
        if not passages:
            return
        with self.index_store.writing():
            for p in passages:
                self.index_store.add_node(PASSAGE_VECTOR, p.id, (p.doc_id,))
            self.index_store.add_vectors(
                PASSAGE_VECTOR, {p.id: np.asarray(vectors[p.id], np.float32) for p in passages}
            )

    def check_node_count(self, where: object) -> int:
        """Per-query reads after a load: the graph's node count (one count query) must be the
        summary's passages + hyperrelations + entities + embedded passages; returns the
        number of embedded passages.

        Raises
        ------
        IndexMismatchError
            The graph holds other nodes than the index recorded (changed outside it, e.g. a
            killed build's unfinished batch).
        """
        head = self.summary.head
        vectors = len(self.index_store.keys(PASSAGE_VECTOR))
        expected = head["passages"] + head["rels"] + head["entities"] + vectors
        found = len(self.index_store.graph)
        if found != expected:
            raise IndexMismatchError(
                f"{where}: the graph holds {found} nodes, the index recorded {expected} "
                "(the graph was changed outside this index)"
            )
        return vectors

    def missing_vectors(self, ids: Iterable[str]) -> list[str]:
        """The passage ids among ``ids`` without a stored vector."""
        return [i for i in ids if not self.index_store.has_vector(PASSAGE_VECTOR, i)]

    def vector_count(self) -> int:
        """Number of embedded passages."""
        return len(self.index_store.keys(PASSAGE_VECTOR))

    def passages_without_vector(self) -> list[str]:
        """Every passage id without a stored vector (per-query reads: from a listing of the
        passage ids, not read again in a generation once every passage had one)."""
        if not self.reads_per_query:
            return self.missing_vectors(self.view.passages)
        if self._all_embedded == self.generation:
            return []
        missing = self.missing_vectors(self.index_store.keys(PASSAGE))
        if not missing:
            self._all_embedded = self.generation
        return missing

    def remove_document(self, doc_id: str) -> int:
        """Forget ``doc_id``: its passages, hyperedges, incidences, orphaned entities, vectors.

        Returns the number of passages removed.
        """
        with self.index_store.writing():
            self.generation += 1
            gone = self._document_rels(doc_id) if self._summary is not None else None
            removed = self.index_store.remove_document(doc_id)
            if gone is not None and self._summary is not None:
                passages, rels = gone
                for key, d in rels.items():
                    self._summary.remove_rel(key, d["relation"], d["mentions"])
                for pid in passages:
                    self._summary.remove_passage(pid, doc_id)
        return len(removed.get(PASSAGE, []))

    def _document_rels(self, doc_id: str) -> tuple[list[str], dict[str, dict[str, Any]]]:
        """Before a delete: the document's passages and the data of their hyperrelations
        (what the summary subtracts), in two batched reads."""
        assert self._summary is not None
        graph = self.index_store.graph
        passages = self._summary.passages_of(doc_id)
        nodes = [node_id(PASSAGE, p) for p in passages]
        got = graph.neighbors_many(nodes, CONTAINS, "out", REL) if nodes else {}
        rels = [r for n in nodes for r in got.get(n, ())]
        data = graph.nodes_data(rels) if rels else {}
        return passages, {node_key(r): d for r, d in data.items()}

    # -- vectors ---------------------------------------------------------------------------
    def passage_vectors(self, ids: Sequence[str]) -> FloatMatrix:
        """Stored vectors of ``ids``, in order."""
        if not ids:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self.index_store.embeddings(PASSAGE_VECTOR, list(ids))

    def nearest_passages(
        self, vector: FloatMatrix, k: int, allowed: FilterScope | None = None
    ) -> list[tuple[str, float]]:
        """The ``k`` embedded passages (of ``allowed``) nearest ``vector`` (cosine; ties by
        passage id)."""
        if k <= 0 or not self.vector_count():
            return []
        if allowed is None:
            hits = self.index_store.nearest(PASSAGE_VECTOR, vector, k)
        else:
            hint = allowed.document_hint()  # the layer's records carry doc_id
            hits = nearest_within(
                self.index_store, PASSAGE_VECTOR, vector, k, allowed.passages, hint
            )
        return sorted(hits, key=lambda h: (-h[1], h[0]))[:k]

    # -- persistence -----------------------------------------------------------------------
    def persist(self, directory: Path) -> None:
        """Write ``graph.json`` (or the database pointer), ``vectors/`` and the summary
        (``parsekg/``) into the (fresh) ``directory``."""
        self.index_store.persist(directory)
        # an in-process graph's summary is computed for the file only (not kept and maintained)
        (self._summary or self._scan_summary()).save(directory)

    @classmethod
    def load(
        cls,
        directory: Path,
        *,
        model_name: str,
        dimension: int,
        excluded_head_labels: Iterable[str],
        factory: VectorIndexFactory | None = None,
        graph: type[GraphBackend] | None = None,
    ) -> ParseKGStore:
        """Read what :meth:`persist` wrote (the core store checks graph and vectors agree).

        Raises
        ------
        IndexNotFoundError
            Missing graph or vectors.
        IndexMismatchError
            Vectors of another model/dimension or for other passages.
        """
        store = IndexStore.load(
            directory, model_name=model_name, dimension=dimension, layers=LAYERS,
            factory=factory, graph=graph, metadata=_vector_metadata,
            cached_kinds=(PASSAGE_VECTOR,),
        )  # fmt: skip
        stray = set(store.keys(PASSAGE_VECTOR)) - set(store.keys(PASSAGE))
        if stray:
            raise IndexMismatchError(
                f"{directory}: {len(stray)} passage vectors without a passage (corrupt index)"
            )
        out = cls(model_name, excluded_head_labels, store=store)
        # an in-process graph is its own summary; a database graph written after the persist
        # (store.later_writes, being rolled back) is summed up afresh from the graph
        if not is_in_process(type(store.graph)) and not store.later_writes:
            out._summary = ParseKGSummary.load(directory)
        return out


# -- constraint cache ------------------------------------------------------------------------
def save_constraint_cache(
    directory: Path,
    *,
    fingerprint: str,
    rel_tokens: Mapping[str, Sequence[int]] | None,
    tries: Mapping[str, Any],
    entity_tokens: Mapping[str, Mapping[str, Sequence[int]]],
) -> None:
    """Write the tokenised hyperrelations and entity tries of one tokenizer.

    ``directory`` is ``<index>/constraints/<tokenizer fingerprint>``; ``tries`` maps a
    direction to a :class:`~graphrag_integrations.core.constraints.TokenTrie`.
    ``rel_tokens=None``: the hyperrelations are not cached (per-query reads tokenise those of
    the translated entities); a flat view reading this cache tokenises them all.
    """
    directory.mkdir(parents=True, exist_ok=True)
    for direction, trie in tries.items():
        trie.save(directory / f"entities-{direction}.marisa")
    atomic_write_json(
        directory / "tokens.json",
        {
            "graph": fingerprint,
            "rels": None if rel_tokens is None else {k: list(v) for k, v in rel_tokens.items()},
            "entities": {d: {k: list(v) for k, v in m.items()} for d, m in entity_tokens.items()},
            "tries": sorted(tries),
        },
        indent=None,
    )


CachedConstraints = tuple[
    dict[str, tuple[int, ...]], dict[str, Any], dict[str, dict[str, tuple[int, ...]]]
]
"""``(hyperrelation tokens, tries by direction, entity tokens by direction)``."""


def load_constraint_cache(
    directory: Path, *, fingerprint: str, rels: bool = True
) -> CachedConstraints | None:
    """Read a cache written by :func:`save_constraint_cache`; ``None`` if absent or stale.

    Stale = written for another graph (``fingerprint`` differs); logged. ``rels=False``: the
    hyperrelation tokens are not wanted (per-query reads; an empty mapping is returned);
    ``rels=True`` and a cache without them: ``None``.
    """
    from graphrag_integrations.core.constraints import TokenTrie

    source = directory / "tokens.json"
    if not source.is_file():
        return None
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        logger.warning("unreadable constraint cache %s (%s); rebuilding it", source, exc)
        return None
    if data.get("graph") != fingerprint:
        logger.info("constraint cache %s is for another graph; rebuilding it", directory)
        return None
    try:
        tries = {d: TokenTrie.load(directory / f"entities-{d}.marisa") for d in data["tries"]}
    except (IndexNotFoundError, IndexMismatchError) as exc:
        logger.warning("constraint cache %s: %s; rebuilding it", directory, exc)
        return None
    if rels and data["rels"] is None:
        logger.info("constraint cache %s holds no hyperrelations; rebuilding it", directory)
        return None
    rel_tokens = {k: tuple(v) for k, v in data["rels"].items()} if rels else {}
    entities = {d: {k: tuple(v) for k, v in m.items()} for d, m in data["entities"].items()}
    return rel_tokens, tries, entities
