"""Building QCG query sets (``evaluation.qcg_query_sets``): resumable generation, snapshots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.llm import LLMClient
from graphrag_integrations.evaluation.qcg_query_sets import (
    generate_hotpotqa,
    generate_lihuaworld,
    lihuaworld_chunks,
    logged_usage,
    snapshot_hotpotqa,
    snapshot_lihuaworld,
)
from graphrag_integrations.evaluation.qcg_query_sets.__main__ import main
from graphrag_integrations.methods.qcg.generation import Doc2QueryGenerator, QAPair, QuerySet

PARAGRAPHS = {
    "Paris": ["Paris is the capital of France."],
    "Lyon": ["Lyon is a city on the Rhone."],
    "Rome": ["Rome is the capital of Italy."],
    "Milan": ["Milan is a city in Lombardy."],
}
QUESTIONS = [("q1", ["Paris", "Lyon"]), ("q2", ["Lyon", "Rome"]), ("q3", ["Milan", "Paris"])]


def hotpot_folder(tmp_path: Path) -> Path:
    raw = [
        {
            "_id": qid,
            "question": f"Question {qid}?",
            "answer": "x",
            "type": "bridge",
            "level": "easy",
            "supporting_facts": [[titles[0], 0]],
            "context": [[t, PARAGRAPHS[t]] for t in titles],
        }
        for qid, titles in QUESTIONS
    ]
    folder = tmp_path / "data" / "hotpotqa-100"
    folder.mkdir(parents=True)
    (folder / "questions.json").write_text(json.dumps(raw))
    return tmp_path / "data"


class FakeDoc2Query:
    """One pair per chunk, the chunk's first word as the answer; records the chunks asked."""

    model_name = "fake-doc2query"

    def __init__(self) -> None:
        self.chunks: list[str] = []

    def __call__(self, prompt: str) -> str:
        chunk = prompt.rsplit("---Input chunk---\n", 1)[1].strip()
        self.chunks.append(chunk)
        return json.dumps([{"index": 0, "query": f"What is {chunk[:12]}?", "answer": "it"}])


def generator(llm: FakeDoc2Query) -> Doc2QueryGenerator:
    return Doc2QueryGenerator(LLMClient(llm, max_concurrency=1), M=1)


def test_generation_resumes_and_records_the_questions_done(tmp_path: Path) -> None:
    data, out = hotpot_folder(tmp_path), tmp_path / "sets" / "a.jsonl.gz"
    out.parent.mkdir()
    llm, rows = FakeDoc2Query(), []
    qs = generate_hotpotqa(generator(llm), data, out, end=2, group=2, log=rows.append)
    assert len(llm.chunks) == 3  # Paris, Lyon, Rome: Lyon is shared by q1 and q2
    assert qs.extra["questions_done"] == ["q1", "q2"] and qs.extra["passages_done"] == 3
    assert [r["questions"] for r in rows] == [["q1", "q2"]] and rows[0]["calls"] == 3
    llm2, rows2 = FakeDoc2Query(), []
    again = generate_hotpotqa(generator(llm2), data, out, group=1, log=rows2.append)
    assert len(llm2.chunks) == 1 and "Milan" in llm2.chunks[0]  # only q3's new passage
    assert again.extra["questions_done"] == ["q1", "q2", "q3"]
    assert [r["questions"] for r in rows2] == [["q3"]]  # done groups are skipped
    assert QuerySet.load(out).pairs == again.pairs and len(again) == 4


def _set(tmp_path: Path, name: str, done: list[str], model: str = "m") -> Path:
    qs = QuerySet({}, model=model, prompt_hash="0" * 16, M=1)
    qs.update([(f"text of {q}", [QAPair(f"{q}?", "a"), QAPair("open?", "")]) for q in done])
    qs.extra = {"dataset": "hotpotqa-100", "questions_done": done, "updated": "now"}
    path = tmp_path / f"{name}.jsonl.gz"
    qs.save(path)
    return path


def test_snapshot_merges_sets_and_writes_the_covered_questions(tmp_path: Path) -> None:
    data = hotpot_folder(tmp_path)
    a, b = _set(tmp_path, "a", ["q1"]), _set(tmp_path, "b", ["q3"])
    log = tmp_path / "gen.log"
    row: dict[str, Any] = {"questions": ["q1"], "calls": 2, "prompt_tokens": 100}
    log.write_text("noise\n" + json.dumps({**row, "completion_tokens": 20, "seconds": 3}) + "\n")
    out, questions = tmp_path / "merged.jsonl.gz", tmp_path / "runs" / "covered.json"
    extra = snapshot_hotpotqa([a, b], data, out, questions, usage_logs=[log])
    assert extra["questions_done"] == ["q1", "q3"] and extra["partial"] is True
    assert (extra["pairs"], extra["answerless_questions"]) == (2, 2)
    assert extra["usage"] == logged_usage([log]) and extra["tokens_per_s"] == 40.0
    assert "updated" not in extra and "qcg_query_sets generate hotpotqa-100" in extra["command"]
    assert [q["_id"] for q in json.loads(questions.read_text())] == ["q1", "q3"]
    assert QuerySet.load(out).extra == extra and len(QuerySet.load(out)) == 2


def test_snapshot_refuses_sets_of_other_generators(tmp_path: Path) -> None:
    data = hotpot_folder(tmp_path)
    a, b = _set(tmp_path, "a", ["q1"]), _set(tmp_path, "b", ["q2"], model="other")
    with pytest.raises(ValueError, match="different generators"):
        snapshot_hotpotqa([a, b], data, tmp_path / "o.jsonl.gz", tmp_path / "q.json")
    args = ["snapshot", "hotpotqa-100", str(a), str(b), "--data", str(data)]
    with pytest.raises(SystemExit, match=r"^error: the query sets come from different"):
        main([*args, "--out", str(tmp_path / "o.jsonl.gz"), "--questions", str(tmp_path / "q")])


def test_command_line_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = hotpot_folder(tmp_path)
    a = _set(tmp_path, "a", ["q1", "q2", "q3"])
    out, questions = tmp_path / "o.jsonl.gz", tmp_path / "q.json"
    args = ["--data", str(data), "--out", str(out), "--questions", str(questions)]
    main(["snapshot", "hotpotqa-100", str(a), *args])
    printed = json.loads(capsys.readouterr().out)
    assert printed["partial"] is False and "questions_done" not in printed
    assert QuerySet.load(out).extra["questions_done"] == ["q1", "q2", "q3"]
    with pytest.raises(SystemExit):
        main(["generate", "nowhere"])  # not a dataset of the tool


LIHUA = Path(__file__).resolve().parents[2] / "fixtures" / "eval"  # holds lihuaworld/


def test_lihuaworld_generation_by_chat_then_snapshot(tmp_path: Path) -> None:
    chunks, _ = lihuaworld_chunks(LIHUA, "64/8")
    chats = list(dict.fromkeys(c.doc_id for c in chunks))
    out, llm, rows = tmp_path / "lihua.jsonl.gz", FakeDoc2Query(), []
    qs = generate_lihuaworld(
        generator(llm), LIHUA, out, chunking="64/8", end=1, group=1, log=rows.append
    )
    first = [c.text for c in chunks if c.doc_id == chats[0]]
    assert sorted(llm.chunks) == sorted(first)  # only the first chat (time order)
    assert qs.extra["chats_done"] == chats[:1] and qs.extra["chunking"] == [64, 8]
    assert qs.extra["usage"]["calls"] == len(first) == rows[0]["chunks"]
    assert rows[-1] == {"chats_done": 1, "of": len(chats), **qs.extra["usage"]}
    with pytest.raises(ValueError, match="made for chunking"):
        generate_lihuaworld(generator(FakeDoc2Query()), LIHUA, out, chunking="32/4")
    generate_lihuaworld(generator(llm), LIHUA, out, chunking="64/8", log=rows.append)
    assert len(llm.chunks) == len(chunks)  # the rest, nothing twice
    merged, questions = tmp_path / "merged.jsonl.gz", tmp_path / "closed.json"
    extra = snapshot_lihuaworld([out], LIHUA, merged, questions)
    assert extra["chats_done"] == chats and extra["partial"] is False
    assert extra["usage"]["calls"] == len(chunks) and extra["chunks_total"] == len(chunks)
    raw = json.loads((LIHUA / "lihuaworld" / "queries-dev.json").read_text())
    assert len(json.loads(questions.read_text())) == extra["dev_questions_covered"] == len(raw)
