"""Clue-RAG end to end with the real offline models (MiniLM + spaCy en_core_web_sm)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.qiter import QIter
from graphrag_integrations.methods.clue.registration import CLUE
from tests.unit.clue_fixtures import documents

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def index() -> ClueIndex:
    return ClueIndex.from_documents(documents())


def test_two_hop_question_finds_both_passages(index: ClueIndex) -> None:
    hits = QIter(index, N=3).retrieve("In which town was the manager of Nottingham Forest born?")
    ids = [h.doc_id for h in hits]
    assert "Brian Clough" in ids
    assert "Nottingham Forest" in ids or "Middlesbrough" in ids


def test_paper_preset_runs_with_encoded_paths(index: ClueIndex) -> None:
    hits = QIter.paper(index, N=2).retrieve("Which club won the FA Cup in 1970?")
    assert hits[0].doc_id == "Chelsea F.C."


def test_persist_load_same_answers(index: ClueIndex, tmp_path: Path) -> None:
    index.persist(tmp_path / "clue")
    loaded = ClueIndex.load(tmp_path / "clue")
    q = "Where is the Eiffel Tower?"
    assert [h.id for h in loaded.retrieve(q)] == [h.id for h in index.retrieve(q)]


def test_langchain_surface(index: ClueIndex) -> None:
    retriever = index.as_retriever(k=2).as_langchain_retriever()
    docs = retriever.invoke("capital of France")
    assert docs[0].metadata["doc_id"] == "Paris"
    assert docs[0].metadata["explanation"]["method"] == "clue"


def test_registry_build(index: ClueIndex) -> None:
    passages = list(index.graph.passages.values())
    retriever = CLUE.build(index.embedder, {"passages": passages}, {"D": 2, "title_prefix": False})
    assert isinstance(retriever, QIter)
    assert retriever.D == 2 and retriever.index.title_prefix is False
    with pytest.raises(ValueError):
        CLUE.build(index.embedder, {"passages": passages}, {"preset": "nope"})
