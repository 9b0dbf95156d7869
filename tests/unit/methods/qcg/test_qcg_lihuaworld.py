"""LiHuaWorld harness logic: dirty evidence, paper chunking, recall per type, judged QA."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.evaluation.datasets import load_dataset
from graphrag_integrations.evaluation.lihuaworld import (
    chunk_lihuaworld,
    evaluate_lihuaworld,
    evidence_recall,
    judge_score,
    load_chat_documents,
    load_questions,
    parse_evidence,
)
from graphrag_integrations.testing.word_tokenizer import WordTokenizer

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "eval" / "lihuaworld"
IDS = {"20260108_19:00", "20260110_09:30", "20260502_08:14"}


def dirty_queries(tmp_path: Path) -> Path:
    items = {
        "1": {
            "question": "Q1?",
            "answer": "a",
            "evidence": "Time: 20260108_19:00",
            "type": "Single",
        },
        "2": {
            "question": "Q2?",
            "answer": "b",
            "evidence": "20260110_0930<and>What<and>20260502_08:14",
            "type": "Multi",
        },
        "3": {"question": "Q3?", "answer": "c", "evidence": "What", "type": "Single"},
        "4": {"question": "Q4?", "answer": "N/A", "evidence": "N/A", "type": "Null"},
        "5": {"answer": "no question"},
        "6": {"question": "Q6?", "answer": "d", "evidence": "20991231_23:59", "type": "Single"},
    }
    path = tmp_path / "queries.json"
    path.write_text(json.dumps(items))
    return path


def test_parse_evidence_repairs_the_unambiguous_and_skips_the_rest() -> None:
    e = parse_evidence(" 20260110_0930 <and>Time: 20260502_08:14<and>20260110_09:30", IDS)
    assert e.gold == ["20260110_09:30", "20260502_08:14"]
    assert e.repaired == ["20260110_0930", "Time: 20260502_08:14"] and e.skipped == []
    e = parse_evidence("20260108_19:00 20260110_09:30<and>What", IDS)  # two stamps in one item
    assert e.gold == [] and len(e.skipped) == 2
    assert parse_evidence(None, IDS).gold == [] and parse_evidence("N/A", IDS).gold == []


def test_a_dirty_query_file_never_aborts(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    qs = load_questions(dirty_queries(tmp_path), IDS)
    assert [q.id for q in qs.questions] == ["1", "2", "3", "4", "6"]
    assert qs.counts() == {
        "questions": 5,
        "repaired_evidence_items": 2,
        "skipped_evidence_items": 3,
        "questions_left_without_evidence": 2,
        "skipped_records": 1,
    }
    assert "'What' is not a chat of the corpus" in caplog.text
    # the generic loader uses the same cleaning and does not raise either
    ds = load_dataset(FIX, queries=dirty_queries(tmp_path))
    gold = {q.id: q.gold_passage_ids for q in ds.questions if q.id in ("2", "3")}
    assert gold == {"2": ["20260110_09:30", "20260502_08:14"], "3": []}


def test_paper_chunking_ids_and_evidence_mapping() -> None:
    chats = load_chat_documents(FIX)
    assert [c.id for c in chats] == sorted(IDS)
    chunks = chunk_lihuaworld(chats, 8, 2, WordTokenizer())
    assert all(re.fullmatch(r"\d{8}_\d{2}:\d{2}-\d+", c.id) for c in chunks)
    assert {c.doc_id for c in chunks} == IDS
    first = [c for c in chunks if c.doc_id == "20260108_19:00"]
    assert len(first) > 1 and [c.metadata["chunk_index"] for c in first] == list(range(len(first)))
    assert evidence_recall(first[1:2], ["20260108_19:00", "20260110_09:30"], 1) == 0.5


class ListRetriever:
    """Returns fixed chunks per question text."""

    def __init__(self, by_question: dict[str, list[str]]) -> None:
        self.by_question = by_question

    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        ids = self.by_question.get(query, [])[: k or 5]
        return [RetrievedPassage(Passage(i, f"text {i}", i.rsplit("-", 1)[0]), 1.0) for i in ids]

    async def aretrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        return self.retrieve(query, k)


def test_recall_per_type_excludes_null_and_evidence_less_questions(tmp_path: Path) -> None:
    qs = load_questions(dirty_queries(tmp_path), IDS)
    retriever = ListRetriever(
        {
            "Q1?": ["20260110_09:30-0", "20260108_19:00-1"],  # gold at rank 2
            "Q2?": ["20260502_08:14-0", "20260502_08:14-1", "20260108_19:00-0"],
            "Q4?": ["20260108_19:00-0"],
        }
    )
    report = evaluate_lihuaworld("toy", retriever, qs, ks=(1, 2))
    assert report.counted == {"all": 2, "Single": 1, "Multi": 1}
    assert report.recall["Single"] == {1: 0.0, 2: 100.0}
    assert report.recall["Multi"] == {1: 50.0, 2: 50.0}
    assert report.recall["all"] == {1: 25.0, 2: 75.0}
    out = report.to_json()
    assert out["evidence_recall"]["Multi"]["R@2"] == 50.0 and out["judge"] is None
    assert out["cleaning"]["skipped_evidence_items"] == 3


def test_judged_accuracy_with_a_named_judge(tmp_path: Path) -> None:
    qs = load_questions(dirty_queries(tmp_path), IDS)
    retriever = ListRetriever({})
    answers = {"Q1?": "a", "Q2?": "wrong", "Q3?": "c", "Q4?": "N/A", "Q6?": "d"}
    answer_prompts: list[str] = []

    def answer_llm(prompt: str) -> str:
        answer_prompts.append(prompt)
        question = prompt.rsplit("---Question---\n", 1)[1].strip()
        return answers[question]

    def judge(prompt: str) -> str:
        gold = prompt.split("---Gold-standard answer---\n", 1)[1].split("\n", 1)[0]
        cand = prompt.rsplit("---Candidate answer---\n", 1)[1].strip()
        if cand == "d":
            return "I refuse"
        return json.dumps({"score": int(gold == cand)})

    report = evaluate_lihuaworld(
        "toy", retriever, qs, llm=answer_llm, judge=judge, judge_name="exact-judge"
    )
    assert report.judge == "exact-judge" and report.judge_failures == 1
    assert report.accuracy == {"all": 75.0, "Single": 100.0, "Multi": 0.0, "Null": 100.0}
    assert "You are a helpful assistant responding to questions" in answer_prompts[0]


def test_judge_score_parsing() -> None:
    assert judge_score('{"score": 0}') == 0
    assert judge_score('Evaluation:\n```json\n{\n"score": 1\n}\n```') == 1
    assert judge_score('{"score": 3}') is None and judge_score("score = 1") == 1
