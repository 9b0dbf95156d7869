"""``eval`` on LiHuaWorld: shared chunks, recall per type, QCG query set, closed sub-corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations import cli
from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import GraphRAGError
from graphrag_integrations.evaluation.lihuaworld import (
    chunk_lihuaworld,
    closed_question_records,
    evaluate_lihuaworld,
    load_chat_documents,
    load_questions,
)
from graphrag_integrations.evaluation.lihuaworld_run import (
    format_lihua_report,
    is_lihuaworld,
    parse_chunking,
    run_lihuaworld_eval,
)
from graphrag_integrations.methods.qcg.generation import QAPair, QuerySet
from graphrag_integrations.methods.qcg.resumable import covered_documents, generate_by_document
from graphrag_integrations.testing.word_tokenizer import WordTokenizer
from tests.conftest import FakeEmbedder

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "eval" / "lihuaworld"
CHUNKING = (8, 2)


def fixture_chunks(chunking: tuple[int, int] = CHUNKING, tokenizer: Any = None) -> list[Passage]:
    return chunk_lihuaworld(load_chat_documents(FIX), *chunking, tokenizer or WordTokenizer())


def query_set(
    chunks: list[Passage], chunking: tuple[int, int] = CHUNKING, **extra: Any
) -> QuerySet:
    """One pair per chunk, answered by the chunk's last line."""
    qs = QuerySet({}, model="fake", prompt_hash="0" * 16, M=2, extra={"chunking": list(chunking)})
    qs.update(
        (c.text, [QAPair(f"What is said in {c.id}?", c.text.split("\n")[-1])]) for c in chunks
    )
    qs.extra.update(extra)
    return qs


def run(methods: list[str], qs: Any = None, **kwargs: Any) -> Any:
    options = {"qcg": {"query_set": qs}} if qs is not None else None
    return run_lihuaworld_eval(
        FIX,
        methods,
        chunking=CHUNKING,
        embedder=FakeEmbedder(),
        ks=(1, 2),
        options=options,
        tokenizer=WordTokenizer(),
        show_progress=False,
        **kwargs,
    )


def test_every_method_runs_on_the_same_chunks_with_recall_per_type() -> None:
    chunks = fixture_chunks()
    report = run(["dense", "bm25", "qcg"], query_set(chunks))
    assert list(report.results) == ["dense", "bm25", "qcg"]
    assert report.corpus["chats"] == 3 and report.corpus["chunks"] == len(chunks) > 3
    assert report.corpus["questions"] == 3 and "subset" not in report.corpus
    # bm25 in the run equals bm25 over the same chunks scored by hand
    manual = evaluate_lihuaworld(
        "bm25",
        BM25Retriever(chunks),
        load_questions(FIX / "queries-dev.json", {c.doc_id for c in chunks}),
        ks=(1, 2),
    )
    assert report.results["bm25"].recall == manual.recall
    for rep in report.results.values():
        assert rep.counted == {"all": 2, "Single": 1, "Multi": 1}  # Null excluded
    notes = report.notes["qcg"]
    # QCG's defaults with the paper's LiHuaWorld k, n, gamma
    assert notes["preset"] == "lihuaworld-fused-hybrid" and notes["query_set"] == "given QuerySet"
    gen = notes["generation"]
    assert (gen["reused_chunks"], gen["generated_chunks"]) == (len(chunks), 0)
    text = format_lihua_report(report)
    assert "Single R@1" in text and "Multi R@2" in text and "vs dense" in text
    row = report.to_json()["results"]["qcg"]
    assert set(row["evidence_recall"]) == {"all", "Single", "Multi"}


@pytest.mark.parametrize(
    ("chosen", "expected"),
    [
        ("default", "lihuaworld-fused-hybrid"),
        ("fused-hybrid", "lihuaworld-fused-hybrid"),
        ("paper", "lihuaworld"),  # the paper's retrieval: query nodes only
        ("fused", "lihuaworld-fused"),
        ("lihuaworld", "lihuaworld"),  # already a LiHuaWorld preset: kept
    ],
)
def test_qcg_presets_become_their_lihuaworld_versions(chosen: str, expected: str) -> None:
    chunks = fixture_chunks()
    report = run_lihuaworld_eval(
        FIX,
        ["qcg"],
        chunking=CHUNKING,
        embedder=FakeEmbedder(),
        ks=(1,),
        options={"qcg": {"query_set": query_set(chunks), "preset": chosen}},
        tokenizer=WordTokenizer(),
        show_progress=False,
    )
    assert report.notes["qcg"]["preset"] == expected


def test_a_partial_query_set_restricts_every_method_to_its_closed_sub_corpus() -> None:
    chunks = fixture_chunks()
    done = "20260108_19:00"
    covered = [c for c in chunks if c.doc_id == done]
    qs = query_set(covered, partial=True, chats_done=[done])
    report = run(["dense", "qcg"], qs)
    assert report.corpus["chats"] == 1 and report.corpus["chunks"] == len(covered)
    assert report.corpus["subset"] == "1 of 3 chats, 2 of 3 questions"  # Single + Null kept
    assert report.corpus["questions_outside_subset"] == 1
    for name, rep in report.results.items():
        assert rep.counted == {"all": 1, "Single": 1}, name
    assert report.notes["qcg"]["generation"]["generated_chunks"] == 0
    assert "CLOSED SUB-CORPUS" in format_lihua_report(report)


def test_qcg_without_a_committed_set_names_the_generate_command(tmp_path: Path) -> None:
    with pytest.raises(GraphRAGError, match="qcg_query_sets generate lihuaworld"):
        run(["dense", "qcg"], query_set_dir=tmp_path)
    qs = query_set(fixture_chunks())
    qs.save(tmp_path / "lihuaworld.jsonl.gz")  # the committed file is found by default
    report = run(["qcg"], query_set_dir=tmp_path)
    assert report.notes["qcg"]["query_set"] == "committed lihuaworld.jsonl.gz"


def test_a_query_set_of_another_chunking_is_refused() -> None:
    qs = query_set(fixture_chunks(), chunking=(1200, 100))
    with pytest.raises(ValueError, match="1200/100 chunks, not 8/2"):
        run(["qcg"], qs)


def test_non_passage_methods_and_stray_options_are_refused() -> None:
    with pytest.raises(ValueError, match="not evaluated"):
        run_lihuaworld_eval(FIX, ["bm25"], options={"dense": {}}, show_progress=False)


def test_parse_chunking() -> None:
    assert parse_chunking("1200") == (1200, 100) and parse_chunking("512/64") == (512, 64)
    for bad in ("512/600", "x/1", "700", "0/0"):
        with pytest.raises(ValueError):
            parse_chunking(bad)
    assert is_lihuaworld(FIX) and not is_lihuaworld(FIX.parent)


def test_closed_subset_logic_on_fake_data() -> None:
    chunks = [
        Passage("a-0", "a0", "a"),
        Passage("a-1", "a1", "a"),
        Passage("b-0", "b0", "b"),
        Passage("c-0", "c0", "c"),
        Passage("c-1", "c1", "c"),
    ]
    qs = QuerySet({}, model="m", prompt_hash="0" * 16, M=1)
    qs.update([("a0", []), ("a1", [QAPair("q?", "x")]), ("b0", []), ("c0", [])])
    assert covered_documents(chunks, qs) == ["a", "b"]  # c-1 missing: chat c is not closed
    ids = {"20260101_10:00", "20260102_10:00", "20260103_10:00"}
    raw = {
        "s": {"question": "S?", "evidence": "Time: 20260101_10:00", "type": "Single"},
        "m_in": {"question": "M?", "evidence": "20260101_1000<and>20260102_10:00", "type": "Multi"},
        "m_out": {
            "question": "N?",
            "evidence": "20260101_10:00<and>20260103_10:00",
            "type": "Multi",
        },
        "null": {"question": "Z?", "evidence": "N/A", "type": "Null"},
        "dirty": {"question": "D?", "evidence": "What", "type": "Single"},
        "broken": {"answer": "no question"},
    }
    kept = closed_question_records(raw, ids, {"20260101_10:00", "20260102_10:00"})
    assert list(kept) == ["s", "m_in", "null"]
    assert kept["m_in"] is raw["m_in"]  # verbatim: eval reports the same cleaning


@pytest.fixture
def patched_embedder(monkeypatch: pytest.MonkeyPatch) -> FakeEmbedder:
    fake = FakeEmbedder()
    from graphrag_integrations.core.encoders import embeddings

    real = embeddings.as_embedder

    def patched(obj: Any = None) -> Any:
        return fake if obj is None or isinstance(obj, str) else real(obj)

    monkeypatch.setattr(embeddings, "as_embedder", patched)
    monkeypatch.setattr("graphrag_integrations.baselines.dense.as_embedder", patched)
    monkeypatch.setattr("graphrag_integrations.methods.qcg.index.as_embedder", patched)
    return fake


def test_cli_eval_on_lihuaworld_with_a_dirty_queries_file(
    patched_embedder: FakeEmbedder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunks = fixture_chunks((1200, 100), tokenizer=WordTokenizer())
    qs_file = tmp_path / "qs.jsonl.gz"
    query_set(chunks, (1200, 100)).save(qs_file)
    items = json.loads((FIX / "queries-dev.json").read_text())
    items["1"]["evidence"] = "Time: 20260108_19:00"
    items["4"] = {"question": "Q?", "answer": "x", "evidence": "What", "type": "Single"}
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps(items))
    out = tmp_path / "res.json"
    args = ["eval", "--method", "dense,bm25,qcg", "--dataset", str(FIX), "--queries"]
    args += [str(queries), "--option", f"qcg.query_set={qs_file}", "--json", str(out)]
    # the MiniLM word pieces and whitespace words cut these short chats into one chunk each
    assert cli.main([*args, "--no-progress"]) == 0
    data = json.loads(out.read_text())
    assert data["corpus"]["chunking"] == [1200, 100] and data["corpus"]["chunks"] == 3
    cleaning = data["corpus"]["cleaning"]
    assert cleaning["repaired_evidence_items"] == 1 and cleaning["skipped_evidence_items"] == 1
    assert set(data["results"]) == {"dense", "bm25", "qcg"}
    assert set(data["results"]["dense"]["evidence_recall"]["all"]) == {"R@5", "R@10"}
    assert "Single R@5" in capsys.readouterr().out
    assert cli.main([*args, "--distractors", str(FIX), "--no-progress"]) == 2
    assert cli.main([*args, "--chunking", "512/64", "--no-progress"]) == 2  # set is 1200/100


def test_generation_by_chat_is_resumable_and_every_save_is_a_closed_prefix(tmp_path: Path) -> None:
    chunks = [
        Passage(f"{d}-{i}", f"{d}{i}", d) for d in "abcde" for i in range(2 if d in "bd" else 1)
    ]
    out = tmp_path / "qs.jsonl.gz"
    calls: list[list[str]] = []
    saved: list[list[str]] = []

    def fake(texts: list[str]) -> list[list[QAPair]]:
        calls.append(texts)
        if texts[0].startswith("e"):
            raise RuntimeError("crash")
        return [[QAPair(f"What is {t}?", t)] if t != "b1" else [] for t in texts]

    qs = QuerySet({}, model="m", prompt_hash="0" * 16, M=1)
    with pytest.raises(RuntimeError):
        generate_by_document(
            chunks,
            qs,
            fake,
            group=2,
            out=out,
            on_batch=lambda info: saved.append(QuerySet.load(out).extra["chats_done"]),
        )
    assert calls == [["a0", "b0", "b1"], ["c0", "d0", "d1"], ["e0"]]  # chat order, 2 chats
    assert saved == [["a", "b"], ["a", "b", "c", "d"]]  # b1 gave no pair: still covered
    # resume from the file: only chat e is generated; seeding with a slice of the corpus
    calls.clear()
    resumed = QuerySet.load(out)
    ok = lambda texts: [[QAPair("q?", t)] for t in texts]  # noqa: E731
    generate_by_document(chunks[-1:], resumed, ok, group=2, corpus=chunks, out=out)
    assert QuerySet.load(out).extra["chats_done"] == ["a", "b", "c", "d", "e"]
    assert generate_by_document(chunks, resumed, fake).extra["chats_done"][-1] == "e"  # no call


def test_judged_accuracy_through_the_runner_records_the_judge() -> None:
    def answer(prompt: str) -> str:
        return "A light fixture" if "break" in prompt.rsplit("---Question---", 1)[1] else "?"

    def judge(prompt: str) -> str:
        gold = prompt.split("---Gold-standard answer---\n", 1)[1].split("\n", 1)[0]
        cand = prompt.rsplit("---Candidate answer---\n", 1)[1].strip()
        return json.dumps({"score": int(gold == cand)})

    report = run(["bm25"], llm=answer, judge=judge, judge_name="exact-judge")
    rep = report.results["bm25"]
    assert rep.judge == "exact-judge"
    assert rep.accuracy == {"all": 100 / 3, "Single": 100.0, "Multi": 0.0, "Null": 0.0}
    assert "judge: exact-judge (0 unscored)" in format_lihua_report(report)


def test_variants_score_other_query_parameters_on_the_same_index() -> None:
    chunks = fixture_chunks()
    variants = {"qcg h=0": ("qcg", {"h": 0}), "qcg c=3": ("qcg", {"chunk_candidates": "3"})}
    report = run(["dense", "qcg"], query_set(chunks), variants=variants)
    assert list(report.results) == ["dense", "qcg", "qcg h=0", "qcg c=3"]
    assert report.index_s["qcg h=0"] == report.index_s["qcg"]  # one build
    for label in ("qcg h=0", "qcg c=3"):
        assert report.results[label].counted == report.results["qcg"].counted
    # the overrides really apply: only chat 20260108_19:00 has queries; under the paper's
    # retrieval (query nodes only, no chunk candidates) the others are unreachable, and the
    # candidates of the variant reach all
    covered = query_set([c for c in chunks if c.doc_id == "20260108_19:00"])
    report = run_lihuaworld_eval(
        FIX,
        ["qcg"],
        chunking=CHUNKING,
        embedder=FakeEmbedder(),
        ks=(50,),
        options={"qcg": {"query_set": covered, "missing": "skip", "preset": "paper"}},
        variants={"qcg c=50": ("qcg", {"chunk_candidates": 50})},
        tokenizer=WordTokenizer(),
        show_progress=False,
    )
    assert report.results["qcg"].recall["Multi"] == {50: 0.0}
    assert report.results["qcg c=50"].recall["Multi"] == {50: 100.0}
    with pytest.raises(ValueError, match="not query options"):
        run(["qcg"], query_set(chunks), variants={"x": ("qcg", {"M": 3})})
    with pytest.raises(ValueError, match="not evaluated"):
        run(["dense"], variants={"x": ("qcg", {"h": 0})})


def test_index_on_lihuaworld_uses_the_eval_chunks_so_eval_reuses_its_query_set(
    patched_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from graphrag_integrations.core.llm import adapters, client

    calls: list[str] = []

    def fake_llm(prompt: str) -> str:
        calls.append(prompt)
        last = prompt.strip().splitlines()[-1]
        return f"Question: What happened with {last.split()[0]}?\nAnswer: {last}"

    real = adapters.as_llm
    monkeypatch.setattr(client, "as_llm", lambda o=None: real(fake_llm if o == "fake" else o))
    out = tmp_path / "ix"
    index = ["index", "--method", "qcg", "--input", str(FIX), "--out", str(out), "--no-progress"]
    assert cli.main([*index, "--option", "llm=fake", "--option", "template=small"]) == 0
    assert len(calls) == 3  # one chunk per (short) chat
    qs = QuerySet.load(out)
    chunks = chunk_lihuaworld(load_chat_documents(FIX), 1200, 100)
    assert all(qs.get(c.text) is not None for c in chunks)  # keyed by the eval's chunks
    res = tmp_path / "res.json"
    args = ["eval", "--method", "qcg", "--dataset", str(FIX), "--json", str(res)]
    assert cli.main([*args, "--option", f"qcg.query_set={out}", "--no-progress"]) == 0
    assert len(calls) == 3  # no new LLM call
    gen = json.loads(res.read_text())["results"]["qcg"]["method_notes"]["generation"]
    assert (gen["reused_chunks"], gen["generated_chunks"]) == (3, 0)
