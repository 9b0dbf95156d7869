"""All storage of ReG in one place: the KG in a core ``GraphStore``, the text vectors in two
core vector indexes, and :class:`KGView`, the array view every query uses (rebuilt after
each mutation).

* nodes: one per entity, type ``"entity"``, id = the entity name;
* edges: one per triple ``head -> tail``, type and key = the relation, so parallel relations
  between two entities stay separate edges (a directed multigraph) and re-adding a triple
  only merges provenance;
* provenance = the source-document id on every node and edge, so ``delete(doc_id)`` is
  :meth:`GraphStore.remove_provenance` (an entity or triple also backed by another
  document survives);
* vectors: layer ``"entities"`` keyed by entity name (embedded from the name) and layer
  ``"relations"`` keyed by relation (embedded from :func:`relation_text`); each text is
  embedded once, when it first enters the KG, and persisted with the index.

This module is the only one of the package that touches storage, so moving it onto the core
``IndexStore`` changes nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.embeddings import Embedder, FloatMatrix
from graphrag_integrations.core.graph_store import GraphStore
from graphrag_integrations.core.vector_store import InMemoryVectorIndex
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.reg.kg import Triple

logger = logging.getLogger(__name__)

ENTITY = "entity"
GRAPH_FILE = "graph.json"
VECTORS_DIR = "vectors"
LAYERS = ("entities", "relations")
IntArray = npt.NDArray[np.int64]


def relation_text(relation: str) -> str:
    """The text a relation is embedded from: ``_`` and ``.`` become spaces.

    Examples
    --------
    >>> relation_text("people.person.place_of_birth")
    'people person place of birth'
    """
    return " ".join(relation.replace("_", " ").replace(".", " ").split())


@dataclass
class KGView:
    """Array view of the KG (canonical order: entities and triples sorted).

    Attributes
    ----------
    entities, relations : list of str
        Row -> name.
    heads, rels, tails : ndarray of int64
        Triple row -> entity / relation / entity row.
    out_edges, in_edges : list of ndarray
        Entity row -> rows of its outgoing / incoming triples.
    entity_vectors, relation_vectors : ndarray
        Row-aligned embeddings.
    """

    entities: list[str] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    heads: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    rels: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    tails: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    out_edges: list[IntArray] = field(default_factory=list)
    in_edges: list[IntArray] = field(default_factory=list)
    entity_vectors: FloatMatrix = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    relation_vectors: FloatMatrix = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    entity_row: dict[str, int] = field(default_factory=dict)
    relation_row: dict[str, int] = field(default_factory=dict)

    @property
    def n_triples(self) -> int:
        return int(self.heads.shape[0])

    def triple(self, row: int) -> Triple:
        """The ``(head, relation, tail)`` names of triple ``row``."""
        return (
            self.entities[int(self.heads[row])],
            self.relations[int(self.rels[row])],
            self.entities[int(self.tails[row])],
        )

    def triple_rows(self, triples: Iterable[Triple]) -> list[int]:
        """Rows of ``triples`` (those in the KG; the others are skipped)."""
        index = self._triple_index()
        return [index[t] for t in triples if t in index]

    def _triple_index(self) -> dict[Triple, int]:
        cached: dict[Triple, int] | None = getattr(self, "_index", None)
        if cached is None:
            cached = {self.triple(i): i for i in range(self.n_triples)}
            self._index = cached
        return cached

    def degree(self, row: int) -> int:
        """Number of triples touching entity ``row`` (in + out)."""
        return int(self.out_edges[row].shape[0] + self.in_edges[row].shape[0])


def _group(keys: IntArray, n: int) -> list[IntArray]:
    """Edge rows grouped by ``keys`` (one array per value in ``range(n)``)."""
    order = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(keys[order], np.arange(n + 1))
    return [order[bounds[i] : bounds[i + 1]].astype(np.int64) for i in range(n)]


class RegStore:
    """The KG and its text vectors (see the module docstring)."""

    def __init__(self, model_name: str, dimension: int) -> None:
        self.model_name = model_name
        self.dimension = dimension
        self.graph_store = GraphStore()
        self.vectors = {name: InMemoryVectorIndex(dimension, model_name) for name in LAYERS}
        self._view: KGView | None = None

    # -- mutation ---------------------------------------------------------------------------
    def add_triples(self, triples: Sequence[Triple], doc_id: str, embedder: Embedder) -> int:
        """Add ``triples`` under provenance ``doc_id``; embed entity and relation texts not seen
        before. Returns the number of triples new to the KG."""
        g = self.graph_store.graph
        new_entities = list(
            dict.fromkeys(
                x for h, _, t in triples for x in (h, t) if x not in self.vectors[LAYERS[0]]
            )
        )
        new_relations = list(
            dict.fromkeys(r for _, r, _ in triples if r not in self.vectors[LAYERS[1]])
        )
        if new_entities:
            self.vectors["entities"].add(new_entities, embedder.embed(new_entities))
        if new_relations:
            texts = [relation_text(r) for r in new_relations]
            self.vectors["relations"].add(new_relations, embedder.embed(texts))
        added = 0
        for h, r, t in triples:
            for node in (h, t):
                self.graph_store.add_node(node, ENTITY, provenance=(doc_id,))
            added += int(not g.has_edge(h, t, r))
            self.graph_store.add_edge(h, t, r, provenance=(doc_id,))
        self._view = None
        return added

    def remove_document(self, doc_id: str) -> bool:
        """Forget ``doc_id``; drop the vectors of entities and relations left unused."""
        removed = self.graph_store.remove_provenance(doc_id)
        if not (removed.nodes or removed.edges) and not self.has_document(doc_id):
            return False
        if removed.nodes:
            self.vectors["entities"].delete(removed.nodes)
        used = {r for *_, r in self.graph_store.graph.edges(keys=True)}
        stale = [r for r in self.vectors["relations"].ids if r not in used]
        if stale:
            self.vectors["relations"].delete(stale)
        self._view = None
        return True

    def has_document(self, doc_id: str) -> bool:
        g = self.graph_store.graph
        return any(doc_id in p for _, p in g.nodes(data="provenance")) or any(
            doc_id in p for *_, p in g.edges(keys=True, data="provenance")
        )

    def document_ids(self) -> set[str]:
        """Every source-document id in the KG."""
        out: set[str] = set()
        for *_, prov in self.graph_store.graph.edges(keys=True, data="provenance"):
            out |= prov
        return out

    def triple_provenance(self, triple: Triple) -> list[str]:
        """Sorted source-document ids of ``triple``."""
        h, r, t = triple
        return sorted(self.graph_store.edge(h, t, r)["provenance"])

    # -- derived view -----------------------------------------------------------------------
    def view(self) -> KGView:
        """The array view (built on first use after a mutation)."""
        if self._view is None:
            self._view = self._build_view()
        return self._view

    def _build_view(self) -> KGView:
        g = self.graph_store.graph
        triples = sorted((h, k, t) for h, t, k in g.edges(keys=True))
        entities = sorted(g.nodes)
        relations = sorted({r for _, r, _ in triples})
        erow = {e: i for i, e in enumerate(entities)}
        rrow = {r: i for i, r in enumerate(relations)}
        n = len(triples)
        heads = np.fromiter((erow[h] for h, _, _ in triples), np.int64, n)
        rels = np.fromiter((rrow[r] for _, r, _ in triples), np.int64, n)
        tails = np.fromiter((erow[t] for _, _, t in triples), np.int64, n)
        dim = self.dimension
        ev = self.vectors["entities"].get_embeddings(entities) if entities else np.zeros((0, dim))
        rv = (
            self.vectors["relations"].get_embeddings(relations) if relations else np.zeros((0, dim))
        )
        if ev.shape[0] != len(entities) or rv.shape[0] != len(relations):
            raise IndexMismatchError("graph and vectors disagree (corrupt index)")
        return KGView(
            entities=entities,
            relations=relations,
            heads=heads,
            rels=rels,
            tails=tails,
            out_edges=_group(heads, len(entities)),
            in_edges=_group(tails, len(entities)),
            entity_vectors=np.asarray(ev, np.float32),
            relation_vectors=np.asarray(rv, np.float32),
            entity_row=erow,
            relation_row=rrow,
        )

    # -- persistence ------------------------------------------------------------------------
    def persist(self, directory: Path) -> None:
        """Write ``graph.json`` and ``vectors/<layer>/`` into ``directory``."""
        self.graph_store.save(directory / GRAPH_FILE)
        for name, index in self.vectors.items():
            index.persist(directory / VECTORS_DIR / name)

    @classmethod
    def load(cls, directory: Path, *, model_name: str, dimension: int) -> RegStore:
        """Read what :meth:`persist` wrote; graph and vectors must agree."""
        store = cls(model_name, dimension)
        store.graph_store = GraphStore.load(directory / GRAPH_FILE)
        for name in LAYERS:
            store.vectors[name] = InMemoryVectorIndex.load(
                directory / VECTORS_DIR / name, model_name=model_name, dimension=dimension
            )
        if len(store.vectors["entities"]) != len(store.graph_store):
            raise IndexMismatchError(f"{directory}: entity vectors and graph disagree")
        store.view()
        return store
