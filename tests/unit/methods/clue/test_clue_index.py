"""Clue-Index construction, lifecycle and persistence."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from graphrag_integrations.core.text.chunking import split_title
from graphrag_integrations.core.text.nlp import normalize_entity
from graphrag_integrations.errors import EmptyCorpusError, IndexMismatchError, IndexNotFoundError
from graphrag_integrations.methods.clue.index import TITLE_LABEL, ClueIndex
from graphrag_integrations.methods.clue.params import ClueIndexParams
from tests.conftest import FakeEmbedder
from tests.unit.clue_fixtures import CORPUS, documents

QUESTIONS = [
    "Where was the manager of Nottingham Forest born?",
    "When did Chelsea win the FA Cup?",
    "What is the capital of France?",
]


def build(items=CORPUS, *, llm=None, graph_store=None, **options) -> ClueIndex:
    """A Clue index over ``items``; ``options`` are ClueIndexParams fields."""
    return ClueIndex.from_documents(
        documents(items),
        embedding=FakeEmbedder(),
        llm=llm,
        graph_store=graph_store,
        index_params=ClueIndexParams(**options),
    )


def answers(index: ClueIndex) -> list[list[tuple[str, float]]]:
    qiter = index.as_retriever(k=4)
    return [[(h.id, round(h.score, 5)) for h in qiter.retrieve(q)] for q in QUESTIONS]


@pytest.fixture(scope="module")
def index() -> ClueIndex:
    return build()


def test_units_are_title_prefixed_sentences_linked_to_the_title(index: ClueIndex) -> None:
    g = index.graph
    forest = [u for u in g.units if u.doc_id == "Nottingham Forest"]
    assert len(forest) == 3
    assert forest[2].text == "Nottingham Forest: Forest won the FA Cup in 1898 and 1959."
    assert all(normalize_entity("Nottingham Forest") in u.entities for u in forest)
    assert g.entity_labels[normalize_entity("Nottingham Forest")] == TITLE_LABEL


def test_numeric_entities_are_not_linked_but_dates_are_by_default(index: ClueIndex) -> None:
    labels = set(index.graph.entity_labels.values())
    assert "CARDINAL" not in labels  # "two rivers", "five editions"
    assert "DATE" in labels


def test_dates_can_be_excluded() -> None:
    idx = build(excluded_labels={"DATE", "CARDINAL"})
    assert "DATE" not in set(idx.graph.entity_labels.values())


def test_title_options_off() -> None:
    idx = build(title_prefix=False, link_title=False)
    assert TITLE_LABEL not in set(idx.graph.entity_labels.values())
    assert not any(u.text.startswith("Paris:") for u in idx.graph.units)


def test_split_title_keeps_text_without_title_line() -> None:
    from graphrag_integrations.core.types import Passage

    assert split_title(Passage("1", "No title here.", "d")) == ("", "No title here.")


def test_adjacency_is_consistent(index: ClueIndex) -> None:
    g = index.graph
    for e, units in enumerate(g.entity_units):
        for u in units:
            assert e in g.unit_entities[u]
    assert g.unit_matrix.shape == (g.n_units, 64)
    assert g.entity_matrix.shape == (g.n_entities, 64)
    assert np.allclose(np.linalg.norm(g.unit_matrix, axis=1), 1.0, atol=1e-5)


def test_timings_reported(index: ClueIndex) -> None:
    timings = index.timings
    assert set(timings) == {"nlp", "llm", "embedding", "graph", "total"}
    assert timings["llm"] < 0.01  # alpha = 0: no LLM call
    assert all(timings[k] > 0 for k in ("nlp", "embedding", "graph", "total"))
    assert timings["graph"] < timings["total"]
    # the parse overlaps the chunk embedding, so the parts may sum to more than the total
    assert max(timings["nlp"], timings["embedding"]) < timings["total"]


def test_empty_corpus_rejected() -> None:
    with pytest.raises(EmptyCorpusError):
        ClueIndex.from_documents(["   "], embedding=FakeEmbedder())


def test_insert_then_delete_equals_build_without(index: ClueIndex) -> None:
    base = build(CORPUS[:-1])
    expected = answers(base)
    grown = build(CORPUS[:-1])
    assert grown.insert(documents(CORPUS[-1:])) == ["Paris"]
    assert answers(grown) != expected  # Paris is now findable
    grown.delete("Paris")
    assert answers(grown) == expected
    assert grown.graph.entity_names == base.graph.entity_names
    assert np.array_equal(grown.graph.entity_matrix, base.graph.entity_matrix)


@pytest.mark.parametrize("chunk_vectors", ["units", "encode"])
def test_a_build_in_parse_slices_equals_one_slice(
    chunk_vectors: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import graphrag_integrations.methods.clue.index as index_module

    whole = build(chunk_vectors=chunk_vectors)
    monkeypatch.setattr(index_module, "PARSE_SLICE", 2)  # the corpus parses in 3+ slices
    sliced = build(chunk_vectors=chunk_vectors)
    assert len(CORPUS) > 2 * index_module.PARSE_SLICE
    assert [u.id for u in sliced.graph.units] == [u.id for u in whole.graph.units]
    assert sliced.graph.entity_names == whole.graph.entity_names
    assert np.array_equal(sliced.graph.entity_matrix, whole.graph.entity_matrix)
    assert np.array_equal(sliced.graph.unit_matrix, whole.graph.unit_matrix)
    assert np.array_equal(sliced.graph.passage_matrix, whole.graph.passage_matrix)
    assert answers(sliced) == answers(whole)


def test_a_failing_parse_raises_and_leaves_the_index_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    idx = build(CORPUS[:2])
    before = answers(idx)

    def broken(texts: object, show_progress: bool = False) -> object:
        raise RuntimeError("parser crashed")

    monkeypatch.setattr(idx.parser, "parse_many", broken)
    with pytest.raises(RuntimeError, match="parser crashed"):
        idx.insert(documents(CORPUS[2:]))
    monkeypatch.undo()  # queries parse too
    assert len(idx.graph.passages) == 2
    assert answers(idx) == before


def test_delete_middle_document_equals_build_without() -> None:
    full = build()
    full.delete("European Cup")
    without = build([c for c in CORPUS if c[0] != "European Cup"])
    assert answers(full) == answers(without)
    assert full.graph.entity_names == without.graph.entity_names


def test_delete_unknown_document_logs(index: ClueIndex, caplog: pytest.LogCaptureFixture) -> None:
    idx = build(CORPUS[:2])
    idx.delete("nope")
    assert "no such document" in caplog.text
    assert len(idx.graph.passages) == 2


def test_reinserting_an_indexed_passage_is_skipped() -> None:
    idx = build(CORPUS[:2])
    n = idx.graph.n_units
    idx.insert(documents(CORPUS[:1]))
    assert idx.graph.n_units == n


def test_persist_load_roundtrip(index: ClueIndex, tmp_path: Path) -> None:
    index.persist(tmp_path / "idx")
    loaded = ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder())
    assert answers(loaded) == answers(index)
    assert loaded.graph.entity_labels == index.graph.entity_labels
    index.persist(tmp_path / "idx")  # overwrite atomically
    assert ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder()).graph.n_units == (
        index.graph.n_units
    )


def test_load_errors(index: ClueIndex, tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError):
        ClueIndex.load(tmp_path / "missing", embedding=FakeEmbedder())
    index.persist(tmp_path / "idx")

    with pytest.raises(IndexMismatchError):
        ClueIndex.load(tmp_path / "idx", embedding=FakeEmbedder(model_name="other"))


def test_index_retrieve_uses_qiter(index: ClueIndex) -> None:
    hits = index.retrieve("What is the capital of France?", k=2)
    assert hits[0].doc_id == "Paris"
    assert hits[0].explanation["method"] == "clue"


class FakeClient:
    """Canned LLM replies (the only fake the project rules allow)."""

    usage = None

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.prompts: list[str] = []

    def complete_many(self, prompts: list[str], *, show_progress: bool = False) -> list[str]:
        self.prompts.extend(prompts)
        out = []
        for prompt in prompts:
            reply = next((r for key, r in self.replies.items() if key in prompt), "no json here")
            out.append(reply)
        return out


def test_alpha_needs_llm_and_range() -> None:
    with pytest.raises(ValueError):
        ClueIndex(embedding=FakeEmbedder(), index_params=ClueIndexParams(alpha=0.5))
    with pytest.raises(ValueError):
        ClueIndex(
            embedding=FakeEmbedder(), index_params=ClueIndexParams(alpha=1.5), llm=FakeClient({})
        )


def test_alpha_one_uses_llm_units_with_sentence_fallback() -> None:
    client = FakeClient(
        {"Brian Clough managed": '{"knowledge units": ["Brian Clough was born in Middlesbrough."]}'}
    )
    idx = build(CORPUS[:4], alpha=1.0, llm=client)
    assert len(client.prompts) == 4  # alpha = 1: every chunk goes to the LLM
    clough = [u for u in idx.graph.units if u.doc_id == "Brian Clough"]
    assert [u.text for u in clough] == ["Brian Clough: Brian Clough was born in Middlesbrough."]
    assert clough[0].source == "llm"
    assert normalize_entity("Middlesbrough") in clough[0].entities
    others = [u for u in idx.graph.units if u.doc_id != "Brian Clough"]
    assert others and all(u.source == "sentence" for u in others)  # bad replies fell back
    assert idx.manifest().parameters["alpha"] == 1.0


def test_alpha_half_sends_about_half_the_tokens_and_reports_usage() -> None:
    from graphrag_integrations.core.llm import LLMClient

    def llm(prompt: str) -> str:  # canned LLM reply: the chunk's first sentence, as JSON
        chunk = prompt.rsplit("Input:", 1)[1].rsplit("Output:", 1)[0].strip()
        return json.dumps({"knowledge units": [chunk.split(".")[0] + "."]})

    client = LLMClient(llm)
    idx = build(CORPUS, alpha=0.5, llm=client)
    report = idx.extraction_report()
    assert report["chunks"] == len(CORPUS)
    assert 0 < report["llm_chunks"] < len(CORPUS)
    # the knapsack fills the budget ceil(0.5 * tokens) without exceeding it
    assert report["llm_tokens"] <= -(-report["tokens"] // 2)
    assert 0.3 <= report["llm_token_share"] <= 0.5
    assert report["usage"]["calls"] == report["llm_chunks"]
    assert report["usage"]["prompt_tokens"] > 0 and report["usage"]["completion_tokens"] > 0
    assert report["fallback_chunks"] == 0
    llm_units = [u for u in idx.graph.units if u.source == "llm"]
    assert len({u.doc_id for u in llm_units}) == report["llm_chunks"]


def test_alpha_zero_reports_no_llm_use() -> None:
    report = build(CORPUS[:2]).extraction_report()
    assert report["llm_chunks"] == 0 and report["usage"] is None


def test_chunk_vectors_from_units_or_encoded(tmp_path: Path) -> None:
    from graphrag_integrations.core.encoders.embeddings import normalize_rows

    summed = build(CORPUS[:3])  # the default
    encoded = build(CORPUS[:3], chunk_vectors="encode")
    assert summed.chunk_vectors == "units"
    g = summed.graph
    for row, pid in enumerate(g.passage_ids):
        units = [u for u in g.units if u.passage_id == pid]
        expected = normalize_rows(np.sum([g.unit_matrix[g.unit_row[u.id]] for u in units], axis=0))[
            0
        ]
        assert np.allclose(g.passage_matrix[row], expected, atol=1e-6)
    text_vecs = FakeEmbedder().embed([encoded.graph.passages[p].text for p in g.passage_ids])
    assert np.allclose(encoded.graph.passage_matrix, text_vecs, atol=1e-6)
    encoded.persist(tmp_path / "ix")
    assert ClueIndex.load(tmp_path / "ix", embedding=FakeEmbedder()).chunk_vectors == "encode"
    with pytest.raises(ValueError, match="chunk_vectors"):
        build(CORPUS[:1], chunk_vectors="mean")
