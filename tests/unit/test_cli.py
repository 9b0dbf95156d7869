"""The command line end to end on the tiny fixtures (fake embedder; one slow real-model test)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations import cli
from graphrag_integrations.core import embeddings
from graphrag_integrations.evaluation import registry
from graphrag_integrations.evaluation.datasets import load_dataset
from graphrag_integrations.evaluation.harness import run_eval
from graphrag_integrations.evaluation.metrics import recall_at_k
from tests.conftest import FakeEmbedder

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "eval"


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEmbedder]:
    """Every ``as_embedder(None | str)`` in the run returns the same FakeEmbedder."""
    fake = FakeEmbedder()
    real = embeddings.as_embedder

    def patched(obj: Any = None) -> Any:
        return fake if obj is None or isinstance(obj, str) else real(obj)

    monkeypatch.setattr("graphrag_integrations.evaluation.harness.as_embedder", patched)
    monkeypatch.setattr("graphrag_integrations.baselines.dense.as_embedder", patched)
    yield fake


def test_eval_end_to_end_json(
    fake_embedder: FakeEmbedder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "res.json"
    code = cli.main(
        [
            "eval",
            "--method",
            "dense,bm25,hybrid",
            "--dataset",
            str(FIX / "musique"),
            "--json",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    data = json.loads(out.read_text())
    assert set(data) == {"dataset", "passages", "questions", "results"}
    assert (data["dataset"], data["passages"], data["questions"]) == ("musique", 4, 2)
    assert list(data["results"]) == ["dense", "bm25", "hybrid"]
    for row in data["results"].values():
        assert set(row) == {
            "R@2",
            "R@5",
            "latency_p50_ms",
            "latency_p95_ms",
            "index_s",
            "passages_per_s",
        }
        assert 0.0 <= row["R@2"] <= row["R@5"] <= 100.0
        assert row["R@5"] == 100.0  # 4 passages: top-5 holds every gold passage
        assert row["latency_p95_ms"] >= row["latency_p50_ms"] >= 0.0
    printed = capsys.readouterr().out
    assert "musique: 4 passages, 2 questions" in printed
    assert "vs dense" in printed and "R@2 ratio" in printed


def test_eval_recall_equals_manual_computation(fake_embedder: FakeEmbedder) -> None:
    ds = load_dataset(FIX / "hotpotqa", distractors=FIX / "distractors")
    report = run_eval(ds, ["bm25"], ks=(1, 2), show_progress=False)
    bm25 = registry.resolve_method("bm25")(ds.passages, fake_embedder)
    manual = [
        recall_at_k([h.id for h in bm25.retrieve(q.text, k=2)], q.gold_passage_ids, 2)
        for q in ds.questions
    ]
    got = report.to_json()["results"]["bm25"]["R@2"]
    assert got == pytest.approx(100 * sum(manual) / len(manual), abs=0.01)
    assert report.to_json()["passages"] == 8


def test_eval_excludes_questions_without_gold(
    fake_embedder: FakeEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        cli.main(
            [
                "eval",
                "--method",
                "bm25",
                "--dataset",
                str(FIX / "lihuaworld"),
                "--k",
                "1,3",
                "--no-progress",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "3 questions (1 without gold passages, excluded from R@k)" in out
    assert "R@3" in out and "vs dense" not in out


def test_eval_options_reach_the_builder(fake_embedder: FakeEmbedder, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert (
        cli.main(
            [
                "eval",
                "--method",
                "hybrid",
                "--dataset",
                str(FIX / "hotpotqa"),
                "--option",
                "hybrid.fusion=rrf",
                "--option",
                "hybrid.weight=0.2",
                "--json",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "hybrid" in json.loads(out.read_text())["results"]
    assert (
        cli.main(
            [
                "eval",
                "--method",
                "hybrid",
                "--dataset",
                str(FIX / "hotpotqa"),
                "--option",
                "hybrid.fusion=bogus",
                "--no-progress",
            ]
        )
        == 2
    )


def test_kgqa_hook(fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    class Ranker:
        def __init__(self, triples: list[tuple[str, str, str]]) -> None:
            self.triples = triples

        def retrieve(self, query: str, k: int | None = None) -> list[Any]:
            return []

        async def aretrieve(self, query: str, k: int | None = None) -> list[Any]:
            return []

        def rank_answers(self, question: Any, k: int) -> list[str]:
            topic = question.metadata["topic_entity"]
            out = [t for h, _, t in self.triples if h == topic]
            out += [h for h, _, t in self.triples if t == topic]
            return out[:k]

    def build(passages: Any, embedder: Any, *, show_progress: bool, **opts: Any) -> Ranker:
        return Ranker(opts["triples"])

    monkeypatch.setitem(registry.METHODS, "toy-kg", f"{__name__}:_TOY_BUILD")
    monkeypatch.setitem(globals(), "_TOY_BUILD", build)
    from graphrag_integrations.evaluation.datasets import load_metaqa

    ds = load_metaqa(FIX / "metaqa").to_dataset()
    row = run_eval(ds, ["toy-kg"], show_progress=False).to_json()["results"]["toy-kg"]
    # q0 Kismet -> [Dieterle, Knoblock, 1944]: hit@1; q1 Dieterle -> [Kismet, Hunchback]: hit@1
    # q2 Hunchback -> [Dieterle] vs gold 1944: miss.  AnsR@50 = (1 + 1 + 0) / 3
    assert row["Hit@1"] == pytest.approx(200 / 3, abs=0.01)
    assert row["AnsR@50"] == pytest.approx(200 / 3, abs=0.01)
    assert row["R@5"] is None  # no gold passages


def test_unknown_method_and_missing_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["eval", "--method", "nope", "--dataset", str(FIX / "musique")]) == 2
    assert "unknown method 'nope'" in capsys.readouterr().err
    assert cli.main(["eval", "--method", "bm25", "--dataset", "/no/such/dir"]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["eval", "--method", "bm25"])
    assert exc.value.code == 2


def test_unavailable_method_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(registry.METHODS, "ghost", "graphrag_integrations.no_such_module:build")
    assert cli.main(["eval", "--method", "ghost", "--dataset", str(FIX / "musique")]) == 2
    assert "method 'ghost' is not available: No module named" in capsys.readouterr().err


@pytest.mark.parametrize("method", ["bm25", "dense"])
def test_index_then_query(
    method: str, fake_embedder: FakeEmbedder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    idx = tmp_path / "idx"
    assert (
        cli.main(
            [
                "index",
                "--method",
                method,
                "--input",
                str(FIX / "musique"),
                "--out",
                str(idx),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "indexed 4 passages" in capsys.readouterr().out
    assert json.loads((idx / "manifest.json").read_text())["method"] == method
    assert (
        cli.main(
            [
                "query",
                "--index",
                str(idx),
                "Who designed the Analytical Engine?",
                "-k",
                "2",
                "--json",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2 and rows[0]["rank"] == 1
    assert rows[0]["title"] in {"Analytical Engine", "Charles Babbage"}
    assert rows[0]["score"] >= rows[1]["score"]
    assert cli.main(["query", "--index", str(idx), "Babbage", "-k", "1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("[1] score=") and "explanation:" in text


def test_query_without_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["query", "--index", str(tmp_path), "anything"]) == 2
    assert "no index" in capsys.readouterr().err


def test_parse_options() -> None:
    assert cli.parse_options(["a.b=1", "a.c=x", "d.e=[1, 2]"]) == {
        "a": {"b": 1, "c": "x"},
        "d": {"e": [1, 2]},
    }
    from graphrag_integrations.errors import GraphRAGError

    with pytest.raises(GraphRAGError):
        cli.parse_options(["novalue"])


@pytest.mark.slow
def test_eval_with_real_minilm(tmp_path: Path) -> None:
    out = tmp_path / "res.json"
    assert (
        cli.main(
            [
                "eval",
                "--method",
                "dense,bm25",
                "--dataset",
                str(FIX / "hotpotqa"),
                "--json",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    dense = json.loads(out.read_text())["results"]["dense"]
    # 5 passages, 2 gold per question: MiniLM ranks both gold passages of both questions in top 5
    assert dense["R@5"] == 100.0
    assert dense["R@2"] >= 50.0


def test_eval_limit_queries_distractors(fake_embedder: FakeEmbedder, tmp_path: Path) -> None:
    items = json.loads((FIX / "musique" / "questions.json").read_text())
    qfile = tmp_path / "q.json"
    qfile.write_text(json.dumps(items[::-1]))
    out = tmp_path / "r.json"
    code = cli.main(
        ["eval", "--method", "bm25", "--dataset", str(FIX / "musique"), "--queries", str(qfile),
         "--distractors", str(FIX / "distractors"), "--limit", "1", "--k", "1",
         "--json", str(out), "--no-progress"]
    )  # fmt: skip
    assert code == 0
    data = json.loads(out.read_text())
    # 4 corpus passages + Warsaw and Berlin (London and Babbage repeat corpus paragraphs)
    assert (data["passages"], data["questions"]) == (6, 1)
    assert set(data["results"]["bm25"]) >= {"R@1"}
    assert "R@5" not in data["results"]["bm25"]


def test_bm25s_debug_logging_is_filtered() -> None:
    import logging

    debug = logging.LogRecord("bm25s", logging.DEBUG, __file__, 1, "Building index", None, None)
    warn = logging.LogRecord("bm25s", logging.WARNING, __file__, 1, "careful", None, None)
    ours = logging.LogRecord("graphrag_integrations", logging.INFO, __file__, 1, "x", None, None)
    assert not cli._quiet_third_party(debug)
    assert cli._quiet_third_party(warn) and cli._quiet_third_party(ours)
