"""Clue-Index build options of the unit and entity vectors: ``embed_title`` and
``entity_vectors``, and indexes persisted before these options existed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder
from graphrag_integrations.core.text.nlp import normalize_entity
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.params import ClueIndexParams
from tests.conftest import FakeEmbedder
from tests.unit.clue_fixtures import CORPUS, documents

QUESTIONS = [
    "Where was the manager of Nottingham Forest born?",
    "When did Chelsea win the FA Cup?",
    "What is the capital of France?",
]


def build(embedder=None, items=CORPUS, **options) -> ClueIndex:
    return ClueIndex.from_documents(
        documents(items),
        embedding=embedder or FakeEmbedder(),
        index_params=ClueIndexParams(**options),
    )


def answers(index: ClueIndex) -> list[list[tuple[str, float]]]:
    qiter = index.as_retriever(k=4)
    return [[(h.id, round(h.score, 5)) for h in qiter.retrieve(q)] for q in QUESTIONS]


def test_units_embedded_without_the_title_keep_it_in_their_text() -> None:
    embedder = FakeEmbedder()
    index = build(embedder, CORPUS[:3], embed_title=False)
    g = index.graph
    embedded = {t for call in embedder.calls for t in call}
    for unit in g.units:
        title, sentence = unit.text.split(": ", 1)
        assert title == unit.doc_id  # the text (BM25, explanations) keeps the prefix
        assert sentence in embedded and unit.text not in embedded
        assert np.allclose(g.unit_matrix[g.unit_row[unit.id]], FakeEmbedder().embed([sentence])[0])
    default = build(FakeEmbedder(), CORPUS[:3])
    assert [u.text for u in default.graph.units] == [u.text for u in g.units]
    assert not np.allclose(default.graph.unit_matrix, g.unit_matrix)


def test_mention_vectors_need_an_embedder_that_returns_span_vectors() -> None:
    with pytest.raises(ValueError, match="embed_with_spans"):
        build(FakeEmbedder(), CORPUS[:1], entity_vectors="mentions")
    with pytest.raises(ValueError, match="entity_vectors"):
        ClueIndexParams(entity_vectors="names")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"embed_title": False},
        {"embed_title": False, "entity_vectors": "mentions"},
        {"entity_vectors": "single_mentions"},
    ],
)
def test_persisted_options_come_back(tmp_path: Path, options: dict[str, object]) -> None:
    embedder = _minilm() if "entity_vectors" in options else FakeEmbedder()
    index = build(embedder, CORPUS[:3], **options)
    index.persist(tmp_path / "ix")
    loaded = ClueIndex.load(tmp_path / "ix", embedding=embedder)
    assert loaded.index_params.embed_title == index.index_params.embed_title
    assert loaded.index_params.entity_vectors == index.index_params.entity_vectors
    assert answers(loaded) == answers(index)


def test_a_folder_written_before_the_options_loads_as_it_was_built(tmp_path: Path) -> None:
    """Indexes persisted before ``embed_title`` / ``entity_vectors`` were recorded were built
    with the title embedded and encoded names: they load with those values, whatever the
    defaults are now, answer as before and keep the same settings for passages added later."""
    old = build(FakeEmbedder(), CORPUS[:3], embed_title=True, entity_vectors="encode")
    old.persist(tmp_path / "ix")
    manifest_path = tmp_path / "ix" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["parameters"]["embed_title"], manifest["parameters"]["entity_vectors"]
    manifest_path.write_text(json.dumps(manifest))
    loaded = ClueIndex.load(tmp_path / "ix", embedding=FakeEmbedder())
    assert loaded.index_params.embed_title is True
    assert loaded.index_params.entity_vectors == "encode"
    assert answers(loaded) == answers(old)
    loaded.insert(documents(CORPUS[3:4]))
    old.insert(documents(CORPUS[3:4]))
    assert np.array_equal(loaded.graph.unit_matrix, old.graph.unit_matrix)
    assert answers(loaded) == answers(old)


def _minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(workers=1)


class RecordingMiniLM(SentenceTransformerEmbedder):
    """MiniLM that records the spans it embeds and their vectors."""

    def __init__(self) -> None:
        super().__init__(workers=1)
        self.mentions: list[tuple[str, tuple[int, int], np.ndarray]] = []

    def embed_with_spans(self, texts, spans, *, show_progress=False):  # type: ignore[no-untyped-def]
        vecs, span_vecs = super().embed_with_spans(texts, spans, show_progress=show_progress)
        for text, text_spans, rows in zip(texts, spans, span_vecs, strict=True):
            self.mentions += [(text, span, row) for span, row in zip(text_spans, rows, strict=True)]
        return vecs, span_vecs


@pytest.mark.slow
def test_entity_vectors_are_the_mean_of_their_mentions_in_the_units_encoding() -> None:
    embedder = RecordingMiniLM()
    index = build(embedder, CORPUS[:3], entity_vectors="mentions")
    reference = build(embedder, CORPUS[:3])
    g, ref = index.graph, reference.graph
    assert np.allclose(g.unit_matrix, ref.unit_matrix, atol=1e-6)  # units: the same vectors
    assert g.entity_names == ref.entity_names
    embedded = {u.text for u in g.units}
    sums: dict[str, np.ndarray] = {}
    for text, (start, end), row in embedder.mentions:
        assert text in embedded  # spans of the units' own texts, no pass over the names
        name = normalize_entity(text[start:end])  # each span is a mention of its entity
        assert name in g.entity_row
        sums[name] = sums.get(name, 0) + row
    assert set(sums) == set(g.entity_names)  # every entity is mentioned in some unit
    for name, total in sums.items():
        vec = g.entity_matrix[g.entity_row[name]]
        assert np.allclose(vec, total / np.linalg.norm(total), atol=1e-5), name
    # a mention's vector is close to its name encoded alone, not equal to it
    alone = embedder.embed(g.entity_names)
    cosines = np.sum(alone * g.entity_matrix, axis=1)
    assert 0.3 < float(cosines.mean()) < 0.99


@pytest.mark.slow
def test_single_mentions_keep_encoded_names_for_entities_mentioned_more_than_once() -> None:
    embedder = _minilm()
    mentions = build(embedder, CORPUS[:3], entity_vectors="mentions").graph
    single = build(embedder, CORPUS[:3], entity_vectors="single_mentions").graph
    encoded = build(embedder, CORPUS[:3]).graph
    counts: dict[str, int] = {}
    for unit in encoded.units:
        for name in unit.entities:
            counts[name] = counts.get(name, 0) + 1
    assert {counts[n] for n in encoded.entity_names} >= {1, 2}
    for name in encoded.entity_names:
        expected = mentions if counts[name] == 1 else encoded
        row = single.entity_matrix[single.entity_row[name]]
        assert np.allclose(row, expected.entity_matrix[expected.entity_row[name]], atol=1e-5)
