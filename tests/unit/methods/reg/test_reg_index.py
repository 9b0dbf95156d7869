from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from graphrag_integrations.errors import EmptyCorpusError, EmptyQueryError, IndexMismatchError
from graphrag_integrations.methods.reg.index import RegIndex, TrainingQuestion
from graphrag_integrations.methods.reg.params import RegTrainParams
from tests.conftest import FakeEmbedder
from tests.unit.reg_fixtures import MOVIES, movie_index


def texts(index: RegIndex, query: str, k: int = 5) -> list[str]:
    return [r.text for r in index.retrieve(query, k=k)]


def test_retrieve_returns_chains_with_metadata() -> None:
    index = movie_index()
    out = index.retrieve("who directed the films starring [Ronald Colman]", k=3)
    assert 1 <= len(out) <= 3
    for r in out:
        assert r.explanation["anchors"] == ["Ronald Colman"]
        assert r.text.startswith("Ronald Colman")
        json.dumps(r.explanation)
        json.dumps(r.to_metadata())
        assert len(r.explanation["triples"]) == len(r.explanation["triple_scores"])
        assert r.doc_id == "movies"
    assert [r.score for r in out] == sorted((r.score for r in out), reverse=True)


def test_k_honoured_and_empty_query() -> None:
    index = movie_index()
    assert len(index.retrieve("[Kismet]", k=1)) == 1
    assert len(index.retrieve("[Kismet]", k=2)) == 2
    with pytest.raises(EmptyQueryError):
        index.retrieve("   ")


def test_entity_linking() -> None:
    index = movie_index()
    assert index.link_entities("what genre is Random Harvest") == ["Random Harvest"]
    assert index.link_entities("films of [Bette Davis] and [Nobody]") == ["Bette Davis"]
    # longest match wins and spans of stop words are ignored
    assert index.link_entities("who starred in random harvest and kismet") == [
        "Random Harvest",
        "Kismet",
    ]
    before = index.stats["entity_fallback"]
    assert len(index.link_entities("zzz qqq")) == 1
    assert index.stats["entity_fallback"] == before + 1


def test_insert_then_delete_equals_rebuild() -> None:
    base = movie_index()
    grown = movie_index()
    extra = [("Kismet", "written_by", "Edward Knoblock"), ("Juarez", "has_genre", "Drama")]
    grown.insert_triples(extra, "extra")
    assert "Edward Knoblock" in grown.view.entity_row
    assert grown.delete("extra") is True
    assert grown.store.graph == base.store.graph
    for q in ("[Kismet]", "[Ronald Colman] films directors", "[Drama]"):
        assert texts(grown, q) == texts(base, q)
    assert not grown.store.index_store.has("entity", "Edward Knoblock")


def test_delete_keeps_triples_backed_by_another_document(caplog: pytest.LogCaptureFixture) -> None:
    index = movie_index()
    index.insert_triples([MOVIES[0], ("Kismet", "written_by", "Edward Knoblock")], "extra")
    assert index.delete("movies")
    assert index.view.n_triples == 2
    with caplog.at_level(logging.WARNING):
        assert index.delete("unknown") is False
    assert "no such document" in caplog.text


def test_persist_load_same_answers(tmp_path: Path) -> None:
    index = movie_index()
    index.persist(tmp_path / "idx")
    loaded = RegIndex.load(tmp_path / "idx", embedding=FakeEmbedder())
    assert texts(loaded, "[Juarez] written by") == texts(index, "[Juarez] written by")
    with pytest.raises(IndexMismatchError):
        RegIndex.load(tmp_path / "idx", embedding=FakeEmbedder(model_name="other"))


def _questions() -> list[TrainingQuestion]:
    directors = {
        "Ronald Colman": ("William Dieterle", "Mervyn LeRoy"),
        "Bette Davis": ("William Dieterle",),
    }
    return [
        TrainingQuestion(f"q{i}", f"who directed the films starring {a}", (a,), d)
        for i, (a, d) in enumerate(directors.items())
    ]


def test_training_learns_the_labelled_relations(tmp_path: Path) -> None:
    index = movie_index()
    qs = _questions()
    labels = index.supervision(qs, mode="weak").labels
    report = index.train(
        qs, labels, validation=qs, params=RegTrainParams(epochs=40, lr=1e-2, hidden=32)
    )
    assert report.best_recall == 1.0 or report.best_recall >= report.history[0]["val_recall"]
    top = index.retrieve_triples("who directed the films starring [Ronald Colman]", k=4)
    assert {t.relation for t in top[:4]} <= {"starred_actors", "directed_by"}
    chains = index.retrieve("who directed the films starring [Ronald Colman]", k=1)
    assert chains[0].explanation["scorer"] == "trained"
    assert "directed_by" in chains[0].text
    # the trained scorer persists
    index.persist(tmp_path / "trained")
    loaded = RegIndex.load(tmp_path / "trained", embedding=FakeEmbedder())
    assert loaded.scorer is not None
    a = index.retrieve_triples("films starring [Bette Davis]", k=5)
    b = loaded.retrieve_triples("films starring [Bette Davis]", k=5)
    assert [t.triple for t in a] == [t.triple for t in b]
    np.testing.assert_allclose([t.score for t in a], [t.score for t in b], rtol=1e-5)


def test_training_without_positives_is_an_error() -> None:
    index = movie_index()
    with pytest.raises(ValueError, match="positive"):
        index.train(_questions(), {})


def test_builders_and_errors(tmp_path: Path) -> None:
    with pytest.raises(EmptyCorpusError):
        RegIndex.from_triples([], embedding=FakeEmbedder())
    path = tmp_path / "kb.tsv"
    path.write_text("Kismet\tdirected_by\tWilliam Dieterle\n", encoding="utf-8")
    index = RegIndex.from_file(path, embedding=FakeEmbedder())
    assert index.store.document_ids() == {"kb.tsv"}
    with pytest.raises(ValueError, match="not in the KG"):
        index.retrieve_triples("x", topic_entities=["Nobody"])


def test_from_llama_index_property_graph_store() -> None:
    from llama_index.core.graph_stores import SimplePropertyGraphStore
    from llama_index.core.graph_stores.types import EntityNode, Relation

    store = SimplePropertyGraphStore()
    k, d = EntityNode(name="Kismet"), EntityNode(name="William Dieterle")
    store.upsert_nodes([k, d])
    store.upsert_relations([Relation(label="directed_by", source_id=k.id, target_id=d.id)])
    index = RegIndex.from_property_graph_store(store, embedding=FakeEmbedder())
    assert texts(index, "who directed Kismet") == ["Kismet -> [directed_by] -> William Dieterle"]


def test_framework_surfaces() -> None:
    index = movie_index()
    docs = index.as_langchain_retriever(k=2).invoke("directors of [Ronald Colman] films")
    assert 1 <= len(docs) <= 2 and docs[0].page_content.startswith("Ronald Colman")
    nodes = index.as_llama_index_retriever(similarity_top_k=1).retrieve("[Kismet]")
    assert len(nodes) == 1 and nodes[0].node.get_content().startswith("Kismet")


DOCS = [
    "Brian Clough managed Nottingham Forest. Brian Clough was born in Middlesbrough.",
    "Nottingham Forest won the European Cup in Munich.",
]


def test_from_documents_builds_a_text_kg_and_deletes_by_document() -> None:
    from graphrag_integrations.core.text.documents import SourceDocument

    docs = [SourceDocument(text=t, id=f"d{i}") for i, t in enumerate(DOCS)]
    index = RegIndex.from_documents(docs, embedding=FakeEmbedder())
    view = index.view
    assert {"brian clough", "nottingham forest", "middlesbrough"} <= set(view.entity_row)
    heads = {view.triple(r)[0] for r in range(view.n_triples)}
    assert "brian clough" in heads
    out = index.retrieve("where was Brian Clough born", k=3)
    assert out and all("##" in r.text for r in out)  # masked-sentence relations
    assert index.delete("d1") is True
    assert "european cup" not in index.view.entity_row
    assert "nottingham forest" in index.view.entity_row  # still backed by d0
    added = index.insert([SourceDocument(text=DOCS[1], id="d1")])
    assert added == ["d1"] and "european cup" in index.view.entity_row
    with pytest.raises(EmptyCorpusError):
        RegIndex.from_documents(["no entities here at all"], embedding=FakeEmbedder())


def test_from_graph_documents_provenance_per_source() -> None:
    from types import SimpleNamespace as N

    def gdoc(text: str, h: str, r: str, t: str) -> N:
        rel = N(source=N(id=h), target=N(id=t), type=r)
        return N(relationships=[rel], source=N(page_content=text))

    docs = [
        gdoc("K by D.", "Kismet", "DIRECTED_BY", "Dieterle"),
        gdoc("K 1944.", "Kismet", "YEAR", "1944"),
    ]
    index = RegIndex.from_graph_documents(docs, embedding=FakeEmbedder())
    assert len(index.store.document_ids()) == 2
    doc_id = index.store.triple_provenance(("Kismet", "YEAR", "1944"))[0]
    assert index.delete(doc_id) and index.view.n_triples == 1


def test_from_documents_reads_a_folder_with_triple_files(tmp_path: Path) -> None:
    """``path=`` (a load option every index takes) reads the folder's text files; triple files
    given as documents are read as triples."""
    (tmp_path / "a.txt").write_text(DOCS[0], encoding="utf-8")
    table = tmp_path / "kb.tsv"
    table.write_text("Kismet\tdirected_by\tWilliam Dieterle\n", encoding="utf-8")
    texts = RegIndex.from_documents([], path=tmp_path, embedding=FakeEmbedder())
    assert len(texts.doc_ids()) == 1 and texts.store.n_triples > 0
    both = RegIndex.from_documents([table], path=tmp_path, embedding=FakeEmbedder())
    assert set(both.doc_ids()) == {*texts.doc_ids(), "kb.tsv"}
    assert both.store.n_triples == texts.store.n_triples + 1
