"""All storage of KG-Translator: the ParseKG, the passage vectors and the constraint cache.

(One module on purpose, so it can move onto the core ``IndexStore`` in one change.)

:class:`ParseKGStore` keeps the directed hypergraph of the paper in a core
:class:`~graphrag_integrations.core.graph_store.GraphStore`, with a bipartite encoding of the
hyperedges:

* nodes ``passage:<id>`` (``text``, ``doc_id``, ``metadata``), ``rel:<hyperedge id>``
  (``relation`` = masked sentence, ``sentence``, ``passage_id``, ``position``) and
  ``entity:<normalised name>``;
* edges ``passage -> rel`` (``contains``), ``entity -> rel`` (``head``: the entity is in
  ``H_r``) and ``rel -> entity`` (``tail``: in ``T_r``); the incidence edges carry the
  mention's surface text and spaCy label;
* provenance = document id on every node and edge, so ``delete(doc_id)`` is
  ``remove_provenance``: a hyperedge disappears with its passage and an entity with its last
  incidence (orphaned entities are removed).

Passage vectors (for ranking the traced passages and for the dense top-up) live in a core
:class:`~graphrag_integrations.core.vector_store.InMemoryVectorIndex`.

:class:`ParseKGView` is the derived, read-only query-time cache (entity display names and
labels, out- and in-hyperrelations, entry entities), rebuilt after each mutation. The
constraint cache (tokenised hyperrelations and entity tries, see
:mod:`~graphrag_integrations.methods.kgt.constraints`) is persisted next to the graph under
``constraints/<tokenizer fingerprint>/`` by :func:`save_constraint_cache`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphrag_integrations.core.embeddings import FloatMatrix
from graphrag_integrations.core.graph_store import GraphStore
from graphrag_integrations.core.persistence import atomic_write_json
from graphrag_integrations.core.types import Passage
from graphrag_integrations.core.vector_store import InMemoryVectorIndex
from graphrag_integrations.errors import IndexMismatchError, IndexNotFoundError
from graphrag_integrations.methods.kgt.parsekg import Hyperedge, ParseKGStats

logger = logging.getLogger(__name__)

PASSAGE, REL, ENTITY = "passage", "rel", "entity"
CONTAINS, HEAD, TAIL = "contains", "head", "tail"
GRAPH_FILE = "graph.json"
VECTORS_DIR = "vectors"
CONSTRAINTS_DIR = "constraints"


def node_id(kind: str, key: str) -> str:
    """Graph node id of a passage, hyperrelation or entity.

    Examples
    --------
    >>> node_id(ENTITY, "paris")
    'entity:paris'
    """
    return f"{kind}:{key}"


def node_key(node: str) -> str:
    """Inverse of :func:`node_id`.

    Examples
    --------
    >>> node_key("rel:ab")
    'ab'
    """
    return node.split(":", 1)[1]


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


def _majority(counts: Counter[str]) -> str:
    best = max(counts.values())
    return min(name for name, c in counts.items() if c == best)


class ParseKGView:
    """Derived query-time arrays of a :class:`ParseKGStore` (rebuilt after each mutation).

    Parameters
    ----------
    store : ParseKGStore
        The source of truth.
    excluded_head_labels : iterable of str
        Labels that are never entries (also applied to reverse-translation entries).
    """

    def __init__(self, store: ParseKGStore, excluded_head_labels: Iterable[str]) -> None:
        g = store.graph_store.graph
        excluded = frozenset(excluded_head_labels)
        self.passages: dict[str, Passage] = {}
        self.rels: dict[str, RelInfo] = {}
        out_rels: dict[str, list[str]] = {}
        in_rels: dict[str, list[str]] = {}
        names: dict[str, Counter[str]] = {}
        labels: dict[str, Counter[str]] = {}
        for node, data in g.nodes(data=True):
            kind, key = node.split(":", 1)
            if kind == PASSAGE:
                self.passages[key] = Passage(key, data["text"], data["doc_id"], data["metadata"])
            elif kind == ENTITY:
                out_rels[key], in_rels[key] = [], []
                names[key], labels[key] = Counter(), Counter()
        for u, v, data in g.edges(data=True):
            etype = data["type"]
            if etype == CONTAINS:
                continue
            ent, rel = (u, v) if etype == HEAD else (v, u)
            ekey, rkey = node_key(ent), node_key(rel)
            (out_rels if etype == HEAD else in_rels)[ekey].append(rkey)
            names[ekey][data["mention"]] += 1
            labels[ekey][data["label"]] += 1
        for node, data in g.nodes(data=True):
            kind, key = node.split(":", 1)
            if kind != REL:
                continue
            heads = sorted(node_key(u) for u, _, t in g.in_edges(node, data="type") if t == HEAD)
            tails = sorted(node_key(v) for _, v, t in g.out_edges(node, data="type") if t == TAIL)
            self.rels[key] = RelInfo(
                key, data["relation"], data["sentence"], data["passage_id"], tuple(heads),
                tuple(tails),
            )  # fmt: skip
        self.entities: dict[str, EntityInfo] = {}
        for key in out_rels:
            if not names[key]:  # an entity node without incidences cannot exist after delete
                logger.warning("entity %r has no incidence; left out of the view", key)
                continue
            self.entities[key] = EntityInfo(
                key,
                _majority(names[key]),
                _majority(labels[key]),
                tuple(sorted(out_rels[key])),
                tuple(sorted(in_rels[key])),
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
        """Hash of the hyperrelation texts and entity names (keys the constraint cache)."""
        h = hashlib.blake2b(digest_size=16)
        for key in sorted(self.rels):
            h.update(f"r\0{key}\0{self.rels[key].relation}\n".encode())
        for key in sorted(self.entities):
            e = self.entities[key]
            h.update(f"e\0{key}\0{e.name}\0{e.label}\n".encode())
        return h.hexdigest()


class ParseKGStore:
    """The ParseKG (GraphStore) and the passage vectors of one index.

    Parameters
    ----------
    model_name : str
        Embedding model of the passage vectors.

    Examples
    --------
    >>> store = ParseKGStore("toy")
    >>> len(store.graph_store), store.dimension
    (0, 0)
    """

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self.graph_store = GraphStore()
        self.vectors: InMemoryVectorIndex | None = None
        self.dimension = 0

    def has_passage(self, passage_id: str) -> bool:
        """Whether the passage is indexed."""
        return node_id(PASSAGE, passage_id) in self.graph_store

    def has_document(self, doc_id: str) -> bool:
        """Whether some node comes from ``doc_id``."""
        return any(doc_id in p for _, p in self.graph_store.graph.nodes(data="provenance"))

    # -- mutation --------------------------------------------------------------------------
    def add(
        self,
        passages: Sequence[Passage],
        edges: Sequence[Hyperedge],
        vectors: Mapping[str, FloatMatrix],
    ) -> None:
        """Add passages, their hyperedges and the passage vectors given (by passage id)."""
        g = self.graph_store
        for p in passages:
            g.add_node(
                node_id(PASSAGE, p.id),
                PASSAGE,
                (p.doc_id,),
                text=p.text,
                doc_id=p.doc_id,
                metadata=dict(p.metadata),
            )
        for e in edges:
            rel = node_id(REL, e.id)
            prov = (e.doc_id,)
            g.add_node(
                rel,
                REL,
                prov,
                relation=e.relation,
                sentence=e.sentence,
                passage_id=e.passage_id,
                position=e.position,
            )
            g.add_edge(node_id(PASSAGE, e.passage_id), rel, CONTAINS, prov)
            heads = set(e.heads)
            for m in e.mentions:
                ent = node_id(ENTITY, m.key)
                g.add_node(ent, ENTITY, prov)
                if m.key in heads:
                    g.add_edge(ent, rel, HEAD, prov, mention=m.text, label=m.label)
                else:
                    g.add_edge(rel, ent, TAIL, prov, mention=m.text, label=m.label)
        self.add_vectors([p for p in passages if p.id in vectors], vectors)

    def add_vectors(self, passages: Sequence[Passage], vectors: Mapping[str, FloatMatrix]) -> None:
        """Store the vectors of ``passages`` (lazy mode adds them when first needed)."""
        if not passages:
            return
        matrix = np.stack([vectors[p.id] for p in passages]).astype(np.float32)
        self._vectors(int(matrix.shape[1])).add(
            [p.id for p in passages], matrix, [{"doc_id": p.doc_id} for p in passages]
        )

    def missing_vectors(self, ids: Iterable[str]) -> list[str]:
        """The passage ids among ``ids`` without a stored vector."""
        have = self.vectors
        return [i for i in ids if have is None or i not in have]

    def _vectors(self, dimension: int) -> InMemoryVectorIndex:
        if self.vectors is None:
            self.dimension = dimension
            self.vectors = InMemoryVectorIndex(dimension, self.model_name)
        elif dimension != self.dimension:
            raise ValueError(f"vector dimension {dimension} != index dimension {self.dimension}")
        return self.vectors

    def remove_document(self, doc_id: str) -> int:
        """Forget ``doc_id``: its passages, hyperedges, incidences and orphaned entities.

        Returns the number of passages removed.
        """
        removed = self.graph_store.remove_provenance(doc_id)
        passages = [node_key(n) for n in removed.nodes if n.startswith(PASSAGE + ":")]
        if passages and self.vectors is not None:
            self.vectors.delete(passages)
        return len(passages)

    # -- vectors ---------------------------------------------------------------------------
    def passage_vectors(self, ids: Sequence[str]) -> FloatMatrix:
        """Stored vectors of ``ids``, in order."""
        if not ids or self.vectors is None:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self.vectors.get_embeddings(list(ids))

    def nearest_passages(self, vector: FloatMatrix, k: int) -> list[tuple[str, float]]:
        """The ``k`` passages nearest ``vector`` (exact cosine)."""
        if self.vectors is None or not len(self.vectors) or k <= 0:
            return []
        return self.vectors.query(vector, min(k, len(self.vectors)))

    # -- persistence -----------------------------------------------------------------------
    def persist(self, directory: Path) -> None:
        """Write ``graph.json`` and ``vectors/`` into the (fresh) ``directory``."""
        self.graph_store.save(directory / GRAPH_FILE)
        if self.vectors is not None:
            self.vectors.persist(directory / VECTORS_DIR)

    @classmethod
    def load(
        cls, directory: Path, *, model_name: str, dimension: int, complete: bool = True
    ) -> ParseKGStore:
        """Read what :meth:`persist` wrote; passages and vectors must agree.

        ``complete=False`` (lazy passage vectors) accepts vectors for a subset of passages.

        Raises
        ------
        IndexNotFoundError
            Missing graph or vectors.
        IndexMismatchError
            Vectors of another model/dimension or for other passages.
        """
        store = cls(model_name)
        store.graph_store = GraphStore.load(directory / GRAPH_FILE)
        keys = {node_key(n) for n in store.graph_store.nodes(PASSAGE)}
        if keys and (complete or (directory / VECTORS_DIR).is_dir()):
            index = InMemoryVectorIndex.load(
                directory / VECTORS_DIR, model_name=model_name, dimension=dimension
            )
            ids = set(index.ids)
            if (ids != keys) if complete else not ids <= keys:
                raise IndexMismatchError(
                    f"{directory}: {len(index)} passage vectors for {len(keys)} passages "
                    "(corrupt index)"
                )
            store.vectors = index
            store.dimension = dimension
        return store


# -- constraint cache ------------------------------------------------------------------------
def save_constraint_cache(
    directory: Path,
    *,
    fingerprint: str,
    rel_tokens: Mapping[str, Sequence[int]],
    tries: Mapping[str, Any],
    entity_tokens: Mapping[str, Mapping[str, Sequence[int]]],
) -> None:
    """Write the tokenised hyperrelations and entity tries of one tokenizer.

    ``directory`` is ``<index>/constraints/<tokenizer fingerprint>``; ``tries`` maps a
    direction to a :class:`~graphrag_integrations.core.constraints.TokenTrie`.
    """
    directory.mkdir(parents=True, exist_ok=True)
    for direction, trie in tries.items():
        trie.save(directory / f"entities-{direction}.marisa")
    atomic_write_json(
        directory / "tokens.json",
        {
            "graph": fingerprint,
            "rels": {k: list(v) for k, v in rel_tokens.items()},
            "entities": {d: {k: list(v) for k, v in m.items()} for d, m in entity_tokens.items()},
            "tries": sorted(tries),
        },
        indent=None,
    )


CachedConstraints = tuple[
    dict[str, tuple[int, ...]], dict[str, Any], dict[str, dict[str, tuple[int, ...]]]
]
"""``(hyperrelation tokens, tries by direction, entity tokens by direction)``."""


def load_constraint_cache(directory: Path, *, fingerprint: str) -> CachedConstraints | None:
    """Read a cache written by :func:`save_constraint_cache`; ``None`` if absent or stale.

    Stale = written for another graph (``fingerprint`` differs); logged.
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
    rels = {k: tuple(v) for k, v in data["rels"].items()}
    entities = {d: {k: tuple(v) for k, v in m.items()} for d, m in data["entities"].items()}
    return rels, tries, entities
