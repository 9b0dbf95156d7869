"""ReG's storage schema on the core :class:`~graphrag_integrations.core.index.store.IndexStore`
and :class:`KGView`, the array view every query uses (a derived view of the store, rebuilt
after each mutation).

* nodes: one per entity (kind ``"entity"``, key = the entity name) and one per relation (kind
  ``"relation"``, key = the relation), so the two vector layers of the store hold the entity
  names (layer ``"entities"``) and the relation texts (layer ``"relations"``,
  :func:`relation_text`); each text is embedded once, when it first enters the KG, and
  persisted with the index;
* edges: one per triple ``head -> tail`` between entity nodes, type and key = the relation, so
  parallel relations between two entities stay separate edges (a directed multigraph) and
  re-adding a triple only merges provenance;
* provenance = the source-document id on every node and edge, so ``delete(doc_id)`` is
  :meth:`IndexStore.remove_document` (an entity, relation or triple also backed by another
  document survives).

The graph is the core networkx :class:`~graphrag_integrations.core.graph.networkx_store.GraphStore`
by default, or a backend with its ``edges`` / ``edge`` / ``provenance`` methods (FalkorDB's):
the view enumerates every edge (``GraphStore.edges``), which the ``GraphBackend`` protocol
does not offer. With a database graph (:attr:`RegStore.reads_lazily`) queries do not build
the view: they read the neighbourhood of their anchors
(:mod:`~graphrag_integrations.methods.reg.neighbourhood`); training still uses the view.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix
from graphrag_integrations.core.graph.backends import is_in_process
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.node_ids import node_id, node_key
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.reg.kg import Triple

logger = logging.getLogger(__name__)

ENTITY = "entity"
RELATION = "relation"
#: ``{node kind: vector layer}`` of the store.
LAYERS: Mapping[str, str] = {ENTITY: "entities", RELATION: "relations"}
VIEW = "kg_view"
COUNT = "kg_triple_count"
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

    @classmethod
    def over(
        cls,
        triples: Sequence[Triple],
        entities: list[str],
        relations: list[str],
        entity_vectors: FloatMatrix,
        relation_vectors: FloatMatrix,
        relation_row: dict[str, int] | None = None,
    ) -> KGView:
        """The view of ``triples`` over ``entities`` and ``relations`` (each in view order,
        with its row-aligned vectors); ``relation_row`` when the caller already has it.

        Examples
        --------
        >>> v = KGView.over([("a", "r", "b")], ["a", "b"], ["r"], np.eye(2), np.ones((1, 2)))
        >>> v.triple(0), v.degree(0), [e.tolist() for e in v.in_edges]
        (('a', 'r', 'b'), 1, [[], [0]])
        """
        erow = {e: i for i, e in enumerate(entities)}
        rrow = {r: i for i, r in enumerate(relations)} if relation_row is None else relation_row
        n = len(triples)
        heads = np.fromiter((erow[h] for h, _, _ in triples), np.int64, n)
        rels = np.fromiter((rrow[r] for _, r, _ in triples), np.int64, n)
        tails = np.fromiter((erow[t] for _, _, t in triples), np.int64, n)
        return cls(
            entities=entities,
            relations=relations,
            heads=heads,
            rels=rels,
            tails=tails,
            out_edges=_group(heads, len(entities)),
            in_edges=_group(tails, len(entities)),
            entity_vectors=np.asarray(entity_vectors, np.float32),
            relation_vectors=np.asarray(relation_vectors, np.float32),
            entity_row=erow,
            relation_row=rrow,
        )


def _vectors_of(
    keys: list[str], known: Mapping[str, Any], embed: Callable[[list[str]], FloatMatrix]
) -> FloatMatrix | None:
    """The vectors of ``keys`` (rows in order): ``known`` ones looked up, the others embedded
    (one call); ``None`` for no key."""
    if not keys:
        return None
    missing = [k for k in keys if k not in known]
    if len(missing) == len(keys):
        return np.asarray(embed(keys))
    fresh = dict(zip(missing, embed(missing), strict=True)) if missing else {}
    return np.stack([np.asarray(known[k] if k in known else fresh[k]) for k in keys])


def _group(keys: IntArray, n: int) -> list[IntArray]:
    """Edge rows grouped by ``keys`` (one array per value in ``range(n)``)."""
    order = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(keys[order], np.arange(n + 1))
    return [order[bounds[i] : bounds[i + 1]].astype(np.int64) for i in range(n)]


class RegStore:
    """The KG and its text vectors on one :class:`IndexStore` (see the module docstring).

    Examples
    --------
    >>> from graphrag_integrations.testing import FakeEmbedder
    >>> store = RegStore("fake")
    >>> store.add_triples([("A", "r", "B"), ("B", "r", "C")], "d1", FakeEmbedder())
    2
    >>> view = store.view()
    >>> view.entities, view.n_triples, store.document_ids()
    (['A', 'B', 'C'], 2, {'d1'})
    >>> store.remove_document("d1"), store.view().n_triples
    (True, 0)
    """

    def __init__(
        self,
        model_name: str,
        store: IndexStore | None = None,
        *,
        graph: type[GraphBackend] | None = None,
    ) -> None:
        self.model_name = model_name
        self.index_store = store or IndexStore(model_name, LAYERS, graph=graph or GraphStore)
        #: Whether queries read per-query neighbourhoods (:attr:`reads_lazily`); ``None``:
        #: when the graph is in a database. ``True`` makes an in-process graph read that way.
        self.neighbourhood_reads: bool | None = None

    @property
    def reads_lazily(self) -> bool:
        """Whether queries read the neighbourhood of their anchors
        (:mod:`~graphrag_integrations.methods.reg.neighbourhood`) instead of the whole-graph
        :meth:`view`: :attr:`neighbourhood_reads`, by default whether the graph is in a
        database (not :func:`~graphrag_integrations.core.graph.backends.is_in_process`)."""
        if self.neighbourhood_reads is not None:
            return self.neighbourhood_reads
        return not is_in_process(type(self.index_store.graph))

    @property
    def n_triples(self) -> int:
        """Number of triples (with a database graph one count per store version; no view is
        built)."""
        if self.reads_lazily:
            return self.index_store.derived(COUNT, _count_triples)
        return self.view().n_triples

    @property
    def graph(self) -> GraphStore:
        """The networkx graph store (entity and relation nodes, triple edges)."""
        return cast(GraphStore, self.index_store.graph)

    @property
    def dimension(self) -> int:
        return self.index_store.dimension

    # -- mutation ---------------------------------------------------------------------------
    def add_triples(
        self,
        triples: Sequence[Triple],
        doc_id: str,
        embedder: Embedder,
        vectors: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> int:
        """Add ``triples`` under provenance ``doc_id``; embed entity and relation texts not seen
        before (``vectors``: ``{"entities": {name: vector}, "relations": {relation: vector}}``
        already computed, e.g. by a preparer; the others are embedded here). Returns the number
        of triples new to the KG."""
        store = self.index_store
        new_entities = list(
            dict.fromkeys(x for h, _, t in triples for x in (h, t) if not store.has(ENTITY, x))
        )
        new_relations = list(dict.fromkeys(r for _, r, _ in triples if not store.has(RELATION, r)))
        known = vectors or {}
        entity_vectors = _vectors_of(
            new_entities, known.get(LAYERS[ENTITY], {}), lambda names: embedder.embed(names)
        )
        relation_vectors = _vectors_of(
            new_relations,
            known.get(LAYERS[RELATION], {}),
            lambda rels: embedder.embed([relation_text(r) for r in rels]),
        )
        graph = self.graph
        before = graph.number_of_edges()
        with store.writing():
            for h, r, t in triples:
                store.add_node(RELATION, r, (doc_id,))
                hid = store.add_node(ENTITY, h, (doc_id,))
                tid = store.add_node(ENTITY, t, (doc_id,))
                store.add_edge(hid, tid, r, (doc_id,), key=r)
            if entity_vectors is not None:
                store.add_vectors(ENTITY, dict(zip(new_entities, entity_vectors, strict=True)))
            if relation_vectors is not None:
                store.add_vectors(RELATION, dict(zip(new_relations, relation_vectors, strict=True)))
        return graph.number_of_edges() - before

    def remove_document(self, doc_id: str) -> bool:
        """Forget ``doc_id`` (nodes left without provenance lose their vectors); ``False`` if
        nothing carried it."""
        if doc_id not in self.document_ids():
            return False
        self.index_store.remove_document(doc_id)
        return True

    def document_ids(self) -> set[str]:
        """Every source-document id in the KG."""
        out: set[str] = set()
        graph = self.graph
        for node in graph.nodes(ENTITY):
            out |= graph.provenance(node)
        return out

    def triple_provenance(self, triple: Triple) -> list[str]:
        """Sorted source-document ids of ``triple``."""
        h, r, t = triple
        return sorted(self.graph.edge(node_id(ENTITY, h), node_id(ENTITY, t), r)["provenance"])

    # -- derived view -----------------------------------------------------------------------
    def view(self) -> KGView:
        """The array view (rebuilt on first use after a mutation)."""
        return self.index_store.derived(VIEW, _build_view)

    def whole_view(self) -> KGView:
        """The array view of the whole KG: :meth:`view`, or when queries read neighbourhoods
        (:attr:`reads_lazily`) one built for the caller and not kept."""
        return _build_view(self.index_store) if self.reads_lazily else self.view()

    # -- persistence ------------------------------------------------------------------------
    def persist(self, directory: str | Path) -> None:
        """:meth:`IndexStore.persist` (``graph.json`` and ``vectors/<layer>/``) into the
        (fresh) ``directory``; the index's ``persist`` writes the manifest around it."""
        self.index_store.persist(directory)

    @classmethod
    def load(
        cls,
        directory: Path,
        *,
        model_name: str,
        dimension: int,
        graph: type[GraphBackend] | None = None,
    ) -> RegStore:
        """Read what :meth:`persist` wrote; graph and vectors must agree. ``graph``: the
        backend class to open (``None``: the one the index was written with)."""
        store = cls(
            model_name,
            IndexStore.load(
                directory,
                model_name=model_name,
                dimension=dimension,
                layers=LAYERS,
                graph=graph,
            ),
        )
        if not store.reads_lazily:
            store.view()
        return store


def _count_triples(store: IndexStore, previous: int | None = None) -> int:
    return store.graph.number_of_edges()


def _build_view(store: IndexStore, previous: Any = None) -> KGView:
    graph = cast(GraphStore, store.graph)
    triples = sorted((node_key(u), k, node_key(v)) for u, v, k in graph.edges())
    entities = sorted(node_key(n) for n in graph.nodes(ENTITY))
    relations = sorted({r for _, r, _ in triples})
    dim = store.dimension
    ev = store.embeddings(ENTITY, entities) if entities else np.zeros((0, dim), np.float32)
    rv = store.embeddings(RELATION, relations) if relations else np.zeros((0, dim), np.float32)
    if ev.shape[0] != len(entities) or rv.shape[0] != len(relations):
        raise IndexMismatchError("graph and vectors disagree (corrupt index)")
    return KGView.over(triples, entities, relations, ev, rv)
