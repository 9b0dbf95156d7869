"""Clue with its graph in a real FalkorDB server: queries read neighbourhoods and answer
exactly as with the networkx graph (same ids, scores and paths), also after insert, delete
and a persist / load round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.statistics import count_statistics, read_statistics
from tests.conftest import FakeEmbedder
from tests.unit.clue_fixtures import CORPUS, documents
from tests.unit.methods.clue.test_neighbourhood import QUESTIONS, build, results, twins

pytestmark = pytest.mark.falkordb_server


def edit(index: ClueIndex) -> ClueIndex:
    index.insert(documents(CORPUS[3:]) + twins("twin-b"))
    assert index.delete("Chelsea F.C.")
    return index


def test_clue_on_falkordb_answers_exactly_as_on_networkx(falkordb_url: str, tmp_path: Path) -> None:
    from graphrag_integrations.core.falkordb_graph import FalkorDBGraph

    index = edit(build(CORPUS[:3], ("twin-a",), graph_store=FalkorDBGraph.at(falkordb_url)))
    reference = edit(build(CORPUS[:3], ("twin-a",)))
    assert read_statistics(index.graph_store) == count_statistics(index.graph_store)[0]
    assert read_statistics(index.graph_store) == read_statistics(reference.graph_store)
    assert index.doc_ids() == reference.doc_ids()
    qiter = index.as_retriever(k=3)
    assert qiter.reads_neighbourhoods
    for question in QUESTIONS:
        expected = results(reference.as_retriever(k=3).retrieve(question))
        assert results(qiter.retrieve(question)) == expected
    assert "qiter" not in index.store._views  # the whole-graph view was never built
    index.persist(tmp_path / "idx")
    loaded = ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder())
    assert loaded.as_retriever().reads_neighbourhoods
    for question in QUESTIONS[:2]:
        expected = results(reference.as_retriever(k=3).retrieve(question))
        assert results(loaded.as_retriever(k=3).retrieve(question)) == expected
