"""Dataset loaders on the tiny fixtures in tests/fixtures/eval."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from graphrag_integrations.core.text.documents import content_id
from graphrag_integrations.errors import DocumentLoadError
from graphrag_integrations.evaluation.datasets import (
    lihua_timestamp,
    load_corpus,
    load_dataset,
    load_lihuaworld,
    load_metaqa,
    make_passage,
)

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "eval"


def test_make_passage_text_id_metadata() -> None:
    p = make_passage("Warsaw", "Warsaw is the capital of Poland.")
    assert p.text == "Warsaw\nWarsaw is the capital of Poland."
    assert p.id == content_id("Warsaw", "Warsaw is the capital of Poland.") == p.doc_id
    assert p.metadata == {"title": "Warsaw"}


def test_hotpotqa_folder() -> None:
    ds = load_dataset(FIX / "hotpotqa")
    assert ds.name == "hotpotqa"
    assert len(ds.passages) == 5
    curie = next(p for p in ds.passages if p.metadata["title"] == "Marie Curie")
    # sentences joined as they are: the second already starts with its space
    assert curie.text == (
        "Marie Curie\nMarie Curie was a physicist and chemist born in Warsaw."
        " She won the Nobel Prize in Physics in 1903."
    )
    q = ds.questions[0]
    assert q.id == "h1" and q.answers == ["Vistula"]
    by_title = {p.metadata["title"]: p.id for p in ds.passages}
    assert q.gold_passage_ids == [by_title["Marie Curie"], by_title["Warsaw"]]
    assert q.metadata["type"] == "bridge"


def test_hotpotqa_inline_context_gives_same_ids() -> None:
    full = load_dataset(FIX / "hotpotqa")
    inline = load_dataset(FIX / "hotpotqa" / "questions.json")
    assert inline.name == "questions"
    # inline corpus = the unique context paragraphs of both questions (5 titles)
    assert {p.id for p in inline.passages} == {p.id for p in full.passages}
    assert [q.gold_passage_ids for q in inline.questions] == [
        q.gold_passage_ids for q in full.questions
    ]


def test_musique_gold_answers_and_inline_corpus() -> None:
    ds = load_dataset(FIX / "musique")
    assert len(ds.passages) == 4
    q1, q2 = ds.questions
    assert q1.answers == ["Charles Babbage", "Babbage"]
    assert q1.gold_passage_ids == [
        content_id(
            "Ada Lovelace",
            "Ada Lovelace wrote the first computer program for the Analytical Engine.",
        ),
        content_id("Analytical Engine", "The Analytical Engine was designed by Charles Babbage."),
    ]
    assert q2.answers == ["London"]
    assert q1.metadata["hops"] == 2
    assert set(q2.gold_passage_ids) <= ds.passage_ids
    inline = load_dataset(FIX / "musique" / "questions.json")
    assert inline.passage_ids == ds.passage_ids  # 3 + 3 paragraphs, 4 unique


def test_distractors_are_appended_and_deduplicated() -> None:
    base = load_dataset(FIX / "hotpotqa")
    ds = load_dataset(FIX / "hotpotqa", distractors=FIX / "distractors")
    # 4 distractors; "Warsaw" equals the joined HotpotQA paragraph, so 3 are new
    assert len(ds.passages) == len(base.passages) + 3
    assert [p.id for p in ds.passages[:5]] == [p.id for p in base.passages]
    assert len(ds.passage_ids) == len(ds.passages)
    assert len(load_corpus(FIX / "distractors" / "corpus.json")) == 4


def test_queries_replace_questions_and_limit(tmp_path: Path) -> None:
    items = json.loads((FIX / "hotpotqa" / "questions.json").read_text())
    qfile = tmp_path / "q.json"
    qfile.write_text(json.dumps(items[1:]))
    ds = load_dataset(FIX / "hotpotqa", queries=qfile)
    assert [q.id for q in ds.questions] == ["h2"]
    assert len(ds.passages) == 5
    assert [q.id for q in load_dataset(FIX / "hotpotqa", limit=1).questions] == ["h1"]
    with pytest.raises(ValueError):
        load_dataset(FIX / "hotpotqa", limit=0)


def test_missing_gold_title_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    items = json.loads((FIX / "hotpotqa" / "questions.json").read_text())
    items[0]["supporting_facts"].append(["Nowhere", 0])
    qfile = tmp_path / "q.json"
    qfile.write_text(json.dumps(items))
    with caplog.at_level(logging.WARNING):
        ds = load_dataset(FIX / "hotpotqa", queries=qfile)
    assert "Nowhere" in caplog.text
    gold = ds.questions[0].gold_passage_ids
    assert len(gold) == 3 and gold[2] not in ds.passage_ids


def test_bad_paths_and_formats(tmp_path: Path) -> None:
    with pytest.raises(DocumentLoadError, match="does not exist"):
        load_dataset(tmp_path / "nope")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"question": "q"}]))
    with pytest.raises(DocumentLoadError, match="unknown question format"):
        load_dataset(bad)
    bad.write_text("{not json")
    with pytest.raises(DocumentLoadError, match="not valid"):
        load_dataset(bad)
    metaqa = load_dataset(FIX / "metaqa")  # a MetaQA folder is a KG dataset: triples, no passages
    assert (metaqa.name, len(metaqa.triples), len(metaqa.questions), metaqa.passages) == (
        "metaqa",
        4,
        3,
        [],
    )


def test_lihuaworld() -> None:
    ds = load_dataset(FIX / "lihuaworld")
    assert [p.id for p in ds.passages] == ["20260108_19:00", "20260110_09:30", "20260502_08:14"]
    assert ds.passages[0].text.startswith("Time: 20260108_19:00\nLiHua:")
    assert ds.passages[2].metadata["week"] == "bakery_deliver"
    gold = {q.id: q.gold_passage_ids for q in ds.questions}
    assert gold == {
        "1": ["20260108_19:00"],
        "2": ["20260110_09:30", "20260502_08:14"],
        "3": [],
    }
    assert ds.questions[2].metadata["type"] == "Null"
    assert load_lihuaworld(FIX / "lihuaworld" / "LiHuaWorld.zip").passage_ids == ds.passage_ids


def test_lihua_timestamp() -> None:
    assert lihua_timestamp("LiHua-World/week1/20260108_1900.txt") == "20260108_19:00"
    assert lihua_timestamp("Time: 20260502_08:14") == "20260502_08:14"
    with pytest.raises(DocumentLoadError):
        lihua_timestamp("notes.txt")


def test_metaqa_answerable_subset() -> None:
    kg = load_metaqa(FIX / "metaqa")
    assert len(kg.triples) == 4
    assert kg.triples[0] == ("Kismet", "directed_by", "William Dieterle")
    assert [q.id for q in kg.questions] == ["1-hop/dev/0", "1-hop/dev/1", "2-hop/dev/0"]
    q = kg.questions[1]
    assert q.text == "what films did William Dieterle direct"
    assert q.topic_entity == "William Dieterle"
    assert q.answers == ["Kismet", "The Hunchback"]
    assert (q.hops, q.qtype) == (1, "director_to_movie")
    every = load_metaqa(FIX / "metaqa", hops=(1,), answerable_only=False)
    assert [q.id for q in every.questions] == ["1-hop/dev/0", "1-hop/dev/1", "1-hop/dev/2"]
    assert len(load_metaqa(FIX / "metaqa", limit_per_hop=1).questions) == 2
    ds = kg.to_dataset()
    assert ds.passages == [] and ds.triples == kg.triples
    assert ds.questions[0].metadata["topic_entity"] == "Kismet"


def test_metaqa_bad_kb_line(tmp_path: Path) -> None:
    (tmp_path / "kb.txt").write_text("a|b\n")
    with pytest.raises(DocumentLoadError, match="head\\|relation\\|tail"):
        load_metaqa(tmp_path, answerable_only=False)
