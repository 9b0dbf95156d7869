"""The Clue-Index on the core stores: GraphStore graph, VectorIndex vectors, persistence."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.core.text.nlp import normalize_entity
from graphrag_integrations.core.vector_store import InMemoryVectorIndex
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.params import ClueIndexParams
from graphrag_integrations.methods.clue.qiter import QIter, Trace
from graphrag_integrations.methods.clue.scoring import Query
from graphrag_integrations.methods.clue.store import (
    CHUNK,
    CONTAINS,
    ENTITY,
    MENTIONS,
    UNIT,
    ChromaVectors,
    node_id,
)
from tests.conftest import FakeEmbedder
from tests.unit.clue_fixtures import CORPUS, documents
from tests.unit.methods.clue.test_clue_index import answers

FOREST = node_id(ENTITY, normalize_entity("Nottingham Forest"))
CLOUGH = node_id(ENTITY, normalize_entity("Brian Clough"))


class RecordingIndex(InMemoryVectorIndex):
    """An in-memory index that records the calls Q-Iter and the cache refresh make."""

    def __init__(self, dimension: int, model_name: str) -> None:
        super().__init__(dimension, model_name)
        self.queries = 0
        self.fetched: list[list[str]] = []

    def query(self, embedding: Any, k: int, where: Any = None) -> list[tuple[str, float]]:
        self.queries += 1
        return super().query(embedding, k, where)

    def get_embeddings(self, ids: Sequence[str]) -> Any:
        self.fetched.append(list(ids))
        return super().get_embeddings(ids)


def recording(layer: str, dimension: int, model_name: str) -> RecordingIndex:
    return RecordingIndex(dimension, model_name)


def build(
    items: Sequence[tuple[str, str]] = CORPUS,
    *,
    vector_index: Any = None,
    graph_store: Any = None,
    **options: Any,
) -> ClueIndex:
    """A Clue index over ``items``; ``options`` are ClueIndexParams fields."""
    return ClueIndex.from_documents(
        documents(items),
        embedding=FakeEmbedder(),
        vector_index=vector_index,
        graph_store=graph_store,
        index_params=ClueIndexParams(**options),
    )


@pytest.fixture(scope="module")
def index() -> ClueIndex:
    return build()


def test_graph_store_holds_the_three_layers_with_provenance(index: ClueIndex) -> None:
    gs = index.graph_store
    g = index.graph
    assert len(gs.nodes(CHUNK)) == len(g.passages) == len(CORPUS)
    assert len(gs.nodes(UNIT)) == g.n_units
    assert len(gs.nodes(ENTITY)) == g.n_entities
    assert gs.number_of_edges(CONTAINS) == g.n_units
    assert gs.number_of_edges(MENTIONS) == sum(len(u.entities) for u in g.units)
    for u in g.units:
        unit = node_id(UNIT, u.id)
        assert gs.provenance(unit) == {u.doc_id}
        assert gs.neighbors(unit, CONTAINS, direction="in") == [node_id(CHUNK, u.passage_id)]
        assert gs.neighbors(unit, MENTIONS) == [node_id(ENTITY, n) for n in u.entities]
        assert gs.edge(node_id(CHUNK, u.passage_id), unit, CONTAINS)["provenance"] == {u.doc_id}
    assert gs.node(FOREST)["label"] == g.entity_labels[normalize_entity("Nottingham Forest")]
    # "Nottingham Forest" is the title of one document and mentioned by another
    assert gs.provenance(FOREST) == {"Nottingham Forest", "Brian Clough"}


def test_vectors_live_in_core_vector_indexes(index: ClueIndex) -> None:
    vi = index.vector_indexes
    g = index.graph
    assert set(vi) == {"chunks", "units", "entities"}
    assert len(vi["chunks"]) == len(g.passages)
    assert len(vi["units"]) == g.n_units
    assert len(vi["entities"]) == g.n_entities
    assert np.array_equal(vi["units"].get_embeddings(g.unit_ids), g.unit_matrix)
    assert np.array_equal(vi["entities"].get_embeddings(g.entity_names), g.entity_matrix)
    assert vi["units"].get_metadata(g.unit_ids[0])["doc_id"] == g.units[0].doc_id


def test_delete_goes_through_provenance_and_keeps_shared_entities() -> None:
    idx = build()
    idx.delete("Brian Clough")
    gs = idx.graph_store
    assert FOREST in gs and gs.provenance(FOREST) == {"Nottingham Forest"}
    assert CLOUGH not in gs  # only that document mentioned it
    assert normalize_entity("Brian Clough") not in idx.vector_indexes["entities"]
    assert all("Brian Clough" not in gs.provenance(n) for n in gs.nodes())
    for layer, kind in (("chunks", CHUNK), ("units", UNIT), ("entities", ENTITY)):
        assert len(idx.vector_indexes[layer]) == len(gs.nodes(kind))


def test_anchoring_queries_the_vector_indexes(index: ClueIndex) -> None:
    idx = build(vector_index=recording)
    units, entities = idx.vector_indexes["units"], idx.vector_indexes["entities"]
    qiter = QIter(idx, K=2)
    question = "Where was the manager of Nottingham Forest born?"
    vector = idx.embedder.embed([question])[0]
    q = Query(question, vector, ())
    anchors = qiter.anchor(q, idx.embedder.embed(["nottingham forest", "brian clough"]), Trace())
    assert units.queries >= 1  # knowledge anchoring (more only to resolve boundary ties)
    assert entities.queries >= 2  # spreading activation: one per query entity
    # same rows as an exact search over the cached matrix with ties broken by row
    g = idx.graph
    assert idx.nearest_units(vector, 2) == top_k(g.unit_matrix @ vector, 2)
    expected = {e for u in top_k(g.unit_matrix @ vector, 2) for e in g.unit_entities[u].tolist()}
    assert expected <= set(anchors)


def test_nearest_returns_boundary_ties_by_graph_row() -> None:
    same = "The same sentence appears in both documents."
    idx = build([("A", same), ("B", same), ("C", "Something else entirely.")], title_prefix=False)
    g = idx.graph
    vector = g.unit_matrix[0]
    assert np.array_equal(g.unit_matrix[1], vector)  # an exact tie between rows 0 and 1
    assert len(idx.store.nearest(UNIT, vector, 1)) == 2  # the tie at the boundary is kept
    assert idx.nearest_units(vector, 1) == [0]
    assert idx.nearest_units(vector, 3) == top_k(g.unit_matrix @ vector, 3)


def test_zero_query_vector_has_no_neighbours(
    index: ClueIndex, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert index.nearest_entities(np.zeros(64, dtype=np.float32), 3) == []
    assert "zero entity query vector" in caplog.text


def test_refresh_reads_only_new_vectors() -> None:
    idx = build(CORPUS[:-1], vector_index=recording)
    units = idx.vector_indexes["units"]
    before = set(idx.graph.unit_ids)
    units.fetched.clear()
    idx.insert(documents(CORPUS[-1:]))
    assert units.fetched == [[u for u in idx.graph.unit_ids if u not in before]]
    units.fetched.clear()
    idx.delete("Paris")
    assert units.fetched == []  # every remaining vector is already cached


def test_chroma_backend_answers_like_in_memory(index: ClueIndex, tmp_path: Path) -> None:
    chroma = build(vector_index=ChromaVectors())
    assert type(chroma.vector_indexes["units"]).__name__ == "ChromaVectorIndex"
    assert answers(chroma) == answers(index)
    chroma.delete("Paris")
    assert answers(chroma) == answers(build(CORPUS[:-1]))
    # persisting copies the Chroma vectors into the self-contained index directory
    chroma.persist(tmp_path / "idx")
    loaded = ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder())
    assert answers(loaded) == answers(chroma)
    rehomed = ClueIndex.load(
        tmp_path / "idx", embedding=FakeEmbedder(), vector_index=ChromaVectors()
    )
    assert type(rehomed.vector_indexes["entities"]).__name__ == "ChromaVectorIndex"
    assert answers(rehomed) == answers(chroma)


def test_persist_writes_core_stores(index: ClueIndex, tmp_path: Path) -> None:
    index.persist(tmp_path / "idx")
    assert GraphStore.load(tmp_path / "idx" / "graph.json") == index.graph_store
    for layer in ("chunks", "units", "entities"):
        stored = InMemoryVectorIndex.load(tmp_path / "idx" / "vectors" / layer)
        assert len(stored) == len(index.vector_indexes[layer])
    loaded = ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder())
    assert loaded.graph_store == index.graph_store
    assert loaded.graph.unit_ids == index.graph.unit_ids
    assert np.array_equal(loaded.graph.entity_matrix, index.graph.entity_matrix)


def test_load_rejects_vectors_that_disagree_with_the_graph(
    index: ClueIndex, tmp_path: Path
) -> None:
    index.persist(tmp_path / "idx")
    vectors = InMemoryVectorIndex.load(tmp_path / "idx" / "vectors" / "units")
    vectors.delete([index.graph.unit_ids[0]])
    vectors.persist(tmp_path / "idx" / "vectors" / "units")
    manifest = tmp_path / "idx" / "manifest.json"  # no checksums: reach the graph check
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "files": {}}))
    with pytest.raises(IndexMismatchError, match="do not match"):
        ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder())


def test_load_rejects_the_old_layout(index: ClueIndex, tmp_path: Path) -> None:
    index.persist(tmp_path / "idx")
    manifest = tmp_path / "idx" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["format_version"] = 1
    manifest.write_text(json.dumps(data))
    with pytest.raises(IndexMismatchError, match="rebuild"):
        ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder())


def test_graphml_export(index: ClueIndex, tmp_path: Path) -> None:
    import networkx as nx

    index.graph_store.to_graphml(tmp_path / "clue.graphml")
    read = nx.read_graphml(tmp_path / "clue.graphml")
    assert read.nodes[FOREST]["type"] == ENTITY
    assert read.number_of_nodes() == len(index.graph_store)


def test_emptied_index_persists_and_grows_again(tmp_path: Path) -> None:
    idx = build(CORPUS[:1])
    idx.delete("Nottingham Forest")
    assert len(idx.graph_store) == 0 and idx.graph.n_units == 0
    assert all(len(v) == 0 for v in idx.vector_indexes.values())
    idx.persist(tmp_path / "idx")
    loaded = ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder())
    assert loaded.retrieve("Nottingham Forest") == []
    loaded.insert(documents(CORPUS[-1:]))
    assert loaded.retrieve("What is the capital of France?", k=1)[0].doc_id == "Paris"


def test_registry_build_accepts_a_vector_backend() -> None:
    from graphrag_integrations.core.text.chunking import passages_from_documents
    from graphrag_integrations.methods.clue.registration import CLUE

    retriever = CLUE.build(
        FakeEmbedder(),
        {"passages": passages_from_documents(documents())},
        {"vector_index": recording},
    )
    assert isinstance(retriever.index.vector_indexes["units"], RecordingIndex)  # type: ignore[attr-defined]


def test_registry_build_routes_index_options_and_the_index_llm() -> None:
    from graphrag_integrations.core.text.chunking import passages_from_documents
    from graphrag_integrations.methods.clue.registration import CLUE

    def reply(prompt: str) -> str:
        return "not json"  # every selected chunk falls back to its sentences

    retriever = CLUE.build(
        FakeEmbedder(),
        {"passages": passages_from_documents(documents())},
        {"chunk_vectors": "units", "alpha": 0.5, "index_llm": reply, "D": 2},
    )
    index = retriever.index  # type: ignore[attr-defined]
    assert index.chunk_vectors == "units"
    assert index.alpha == 0.5 and index.llm is reply
    assert retriever.D == 2  # type: ignore[attr-defined]
    assert index.extraction_report()["fallback_chunks"] > 0


def test_clue_answers_the_same_on_another_graph_backend(index: ClueIndex, tmp_path: Path) -> None:
    from tests.unit.core.test_index_store import DictGraph

    other = build(graph_store=DictGraph)
    assert isinstance(other.graph_store, DictGraph)
    assert other.graph.unit_ids == index.graph.unit_ids
    assert other.graph.entity_names == index.graph.entity_names
    assert answers(other) == answers(index)
    other.delete("Brian Clough")
    assert answers(other) == answers(build(CORPUS[:3] + CORPUS[4:]))
    other.persist(tmp_path / "idx")
    loaded = ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder(), graph_store=DictGraph)
    assert isinstance(loaded.graph_store, DictGraph)
    assert answers(loaded) == answers(other)


def test_the_qiter_view_follows_the_store_version(index: ClueIndex) -> None:
    idx = build(CORPUS[:-1])
    view = idx.graph
    assert idx.graph is view  # cached while nothing changes
    qiter = idx.as_retriever(k=2)
    scorer = qiter.scorer
    idx.insert(documents(CORPUS[-1:]))
    assert idx.graph is not view and view.n_units < idx.graph.n_units  # old snapshot intact
    assert qiter.scorer is not scorer  # an existing retriever sees the new view
    assert qiter.retrieve("What is the capital of France?", k=1)[0].doc_id == "Paris"


def test_the_flat_view_leaves_out_a_write_that_lands_between_its_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another process writes the shared graph while the view reads it: a chunk and its unit
    land after the chunks were listed. The view is the graph as of its chunk list (the
    reader answers from its own documents), not a ``KeyError`` on the new unit's chunk."""
    idx = build(CORPUS[:-1])
    before = idx.graph
    graph = idx.store.graph
    listed = graph.nodes

    def nodes_while_another_process_writes(type: str | None = None) -> list[str]:
        if type == UNIT and node_id(CHUNK, "late#0") not in graph:
            chunk, unit = node_id(CHUNK, "late#0"), node_id(UNIT, "late#0#u0")
            graph.add_node(chunk, CHUNK, ["late"], text="Late.", doc_id="late", metadata={})
            graph.add_node(unit, UNIT, ["late"], text="Late.", doc_id="late", source="spacy")
            graph.add_edge(chunk, unit, CONTAINS, ["late"])
        return listed(type)

    monkeypatch.setattr(graph, "nodes", nodes_while_another_process_writes)
    with idx.store.writing():  # a new version: the next read builds the view again
        pass
    view = idx.graph
    assert "late#0" not in view.passage_row
    assert view.unit_ids == before.unit_ids
    assert view.passage_ids == before.passage_ids
