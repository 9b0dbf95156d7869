"""Clue with its graph in a real FalkorDB server: queries read neighbourhoods and answer
exactly as with the networkx graph (same ids, scores and paths), also after insert, delete
and a persist / load round trip."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from graphrag_integrations.core.graph.falkordb_connection import connect, parse_falkordb_url
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.statistics import (
    STATS_NODE,
    count_statistics,
    read_statistics,
)
from tests.conftest import FakeEmbedder
from tests.unit.clue_fixtures import CORPUS, documents
from tests.unit.methods.clue.test_neighbourhood import FILLER, QUESTIONS, build, results, twins

pytestmark = pytest.mark.falkordb_server


def edit(index: ClueIndex) -> ClueIndex:
    index.insert(documents(CORPUS[3:]) + twins("twin-b"))
    assert index.delete("Chelsea F.C.")
    return index


def test_clue_on_falkordb_answers_exactly_as_on_networkx(falkordb_url: str, tmp_path: Path) -> None:
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    index = edit(build(CORPUS[:3], ("twin-a",), graph_store=FalkorDBGraph.at(falkordb_url)))
    reference = edit(build(CORPUS[:3], ("twin-a",)))
    assert read_statistics(index.graph_store) == count_statistics(index.graph_store)[0]
    assert read_statistics(index.graph_store) == read_statistics(reference.graph_store)
    assert index.doc_ids() == reference.doc_ids()
    # Q-Iter alone reads neighbourhoods only: the whole-graph view is never built
    alone = index.as_retriever(k=3, ppr_weight=0.0)
    assert alone.reads_neighbourhoods
    for question in QUESTIONS:
        expected = results(reference.as_retriever(k=3, ppr_weight=0.0).retrieve(question))
        assert results(alone.retrieve(question)) == expected
    assert "qiter" not in index.store._views
    # the default fuses the global ranking, whose graph is read once per index version
    qiter = index.as_retriever(k=3)
    for question in QUESTIONS:
        expected = results(reference.as_retriever(k=3).retrieve(question))
        assert results(qiter.retrieve(question)) == expected
    index.persist(tmp_path / "idx")
    loaded = ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder())
    assert loaded.as_retriever().reads_neighbourhoods
    for question in QUESTIONS[:2]:
        expected = results(reference.as_retriever(k=3).retrieve(question))
        assert results(loaded.as_retriever(k=3).retrieve(question)) == expected


def test_top_up_on_falkordb_reads_the_term_index_and_answers_as_a_scan(
    falkordb_url: str, tmp_path: Path
) -> None:
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
    from graphrag_integrations.methods.clue.term_index import has_term_index

    corpus = CORPUS + FILLER
    index = build(corpus, graph_store=FalkorDBGraph.at(falkordb_url))
    reference = build(corpus)
    assert has_term_index(index.store)
    k_all = len(corpus)
    for k in (4, 9, k_all):
        qiter = index.as_retriever(k=k, D=1, M=1, K=1)
        for question in [*QUESTIONS, "Village 7 bakeries"]:
            expected = results(reference.as_retriever(k=k, D=1, M=1, K=1).retrieve(question))
            assert results(qiter.retrieve(question)) == expected, (question, k)
        assert qiter.cache is not None and qiter.cache.reads["chunk_scan"] == 0
        assert qiter.cache.reads["term_chunks"] > 0
    # a graph written before the chunks carried their words: indexed once at load
    index.persist(tmp_path / "idx")
    location = parse_falkordb_url(falkordb_url)
    graph = connect(location).select_graph(location.graph)
    graph.query("CALL db.idx.fulltext.drop('Node')")
    graph.query("MATCH (n:Node) WHERE n._type = 'chunk' REMOVE n.`~terms`")
    graph.query("MATCH (n:Node {_id: $id}) DETACH DELETE n", {"id": STATS_NODE})
    stats_rows = "MATCH (n:Node {_id: $id}) RETURN count(n)"
    assert graph.query(stats_rows, {"id": STATS_NODE}).result_set == [[0]]
    for _ in range(50):  # the server may list a dropped index for a moment (bounded wait)
        if not has_term_index(index.store):
            break
        time.sleep(0.1)
    assert not has_term_index(index.store)
    loaded = ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder())
    assert has_term_index(loaded.store)
    # written at load, not counted by each query process
    assert graph.query(stats_rows, {"id": STATS_NODE}).result_set == [[1]]
    assert read_statistics(loaded.graph_store) == read_statistics(reference.graph_store)
    qiter = loaded.as_retriever(k=9, D=1, M=1, K=1)
    for question in QUESTIONS:
        expected = results(reference.as_retriever(k=9, D=1, M=1, K=1).retrieve(question))
        assert results(qiter.retrieve(question)) == expected
    assert qiter.cache is not None and qiter.cache.reads["chunk_scan"] == 0


def test_the_flat_view_after_an_upsert_holds_the_new_text_and_vectors(falkordb_url: str) -> None:
    """An upsert keeps the document's chunk ids: the view built before it must not lend the
    replaced chunk's text or vector to the new one."""
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
    from graphrag_integrations.core.text.documents import SourceDocument
    from graphrag_integrations.methods.clue.schema import CHUNK

    index = build(CORPUS[:3], graph_store=FalkorDBGraph.at(falkordb_url))
    title = CORPUS[0][0]
    (old,) = [p for p in index.passages if p.doc_id == title]  # builds the flat view
    text = f"{title}\nA new text about Ada Lovelace and the Analytical Engine."
    index.upsert([SourceDocument(text=text, id=title, metadata={"title": title})])
    (new,) = [p for p in index.passages if p.doc_id == title]
    assert new.id == old.id
    assert new.text == text != old.text
    view = index.graph
    row = view.passage_row[new.id]
    assert view.passage_matrix[row].tolist() == index.store.embeddings(CHUNK, [new.id])[0].tolist()
