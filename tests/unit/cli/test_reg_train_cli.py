"""``graphrag-integrations train --method reg`` end to end through the CLI on a tiny MetaQA-shaped
KG (fake embedder, fake option-scoring LLM), then ``eval`` with the trained scorers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations import cli
from graphrag_integrations.core.llm import LLMClient
from graphrag_integrations.methods.reg.assets import load_scorer
from tests.conftest import FakeEmbedder
from tests.unit.methods.reg.test_reg_refinement import FakeScorer
from tests.unit.reg_fixtures import MOVIES

#: 2-hop questions over the toy movie KG (actor -> movie -> director / writer / year).
QUESTIONS = [
    (
        "who directed the films starring [Ronald Colman]",
        "William Dieterle|Mervyn LeRoy",
        "director",
    ),
    ("who directed the films starring [Bette Davis]", "William Dieterle", "director"),
    ("who wrote the films starring [Bette Davis]", "John Huston|Casey Robinson", "writer"),
    ("when were the films starring [Ronald Colman] released", "1944|1942", "year"),
    ("when were the films starring [Bette Davis] released", "1939", "year"),
    ("who wrote the films directed by [William Dieterle]", "John Huston", "writer"),
]


def _metaqa(root: Path) -> Path:
    (root / "2-hop").mkdir(parents=True)
    (root / "kb.txt").write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in MOVIES), "utf-8")
    (root / "2-hop" / "dev.txt").write_text(
        "".join(f"{q}\t{a}\n" for q, a, _ in QUESTIONS), "utf-8"
    )
    types = [
        f"{'director' if 'directed by' in q else 'actor'}_to_movie_to_{t}" for q, _, t in QUESTIONS
    ]
    (root / "2-hop" / "qa_dev_qtype.txt").write_text("\n".join(types) + "\n", "utf-8")
    (root / "answerable_with_reconstructed_kb.json").write_text(
        json.dumps({"2-hop/dev": list(range(len(QUESTIONS)))}), "utf-8"
    )
    return root


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> FakeScorer:
    """The trainer's embedder and LLM, and the harness's shared embedder, faked."""
    monkeypatch.setattr(
        "graphrag_integrations.core.encoders.embeddings.SentenceTransformerEmbedder", FakeEmbedder
    )
    monkeypatch.setattr(
        "graphrag_integrations.evaluation.harness.as_embedder", lambda _: FakeEmbedder()
    )
    scorer = FakeScorer({0: -1.0, 1: -1.1})  # keeps options 0 and 1 of every pool
    monkeypatch.setattr(
        "graphrag_integrations.core.llm.LLMClient", lambda _=None: LLMClient(scorer)
    )
    return scorer


def _train(data: Path, out: Path, supervision: str, capsys: Any) -> dict[str, Any]:
    argv = ["train", "--method", "reg", "--dataset", str(data), "--out", str(out)]
    for opt in (f"supervision={supervision}", "hops=2", "train=3", "val=2", "test=1", "epochs=2"):
        argv += ["--option", opt]
    assert cli.main([*argv, "--no-progress"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_train_reg_through_the_cli_then_eval(
    tmp_path: Path, fakes: FakeScorer, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = _metaqa(tmp_path / "metaqa"), tmp_path / "scorers"
    weak = _train(data, out, "weak", capsys)
    assert (weak["supervision"], weak["hops"], weak["train_questions"]) == ("weak", 2, 3)
    assert weak["validation_questions"] == 2 and weak["llm"] is None
    scorer, meta = load_scorer(out / "weak-2hop")
    assert scorer.config()["dim"] == FakeEmbedder().dimension
    assert len(meta["train_ids"]) == 3 and len(meta["validation_ids"]) == 2
    assert not set(meta["train_ids"]) & set(meta["validation_ids"])
    assert meta["kg_triples"] == len(MOVIES) and 1 <= meta["best_epoch"] <= 2

    oracle = _train(data, out, "oracle", capsys)
    assert oracle["supervision"] == "oracle" and (out / "oracle-2hop.pt.gz").is_file()

    refined = _train(data, out, "refined", capsys)
    cache = out / "refined-2hop.jsonl"
    records = [json.loads(line) for line in cache.read_text("utf-8").splitlines()]
    assert sorted(r["qid"] for r in records) == sorted(
        load_scorer(out / "refined-2hop")[1]["train_ids"]
    )
    assert all(r["selected"][:2] == [0, 1] for r in records if len(r["scores"]) > 1)
    assert refined["refine_stats"]["llm_calls"] == 3 and refined["llm_prompt_tokens"] > 0
    assert refined["prompt_hash"] and len(fakes.prompts) == 3
    _train(data, out, "refined", capsys)  # resumes from the cache: no new LLM call
    assert len(fakes.prompts) == 3 and len(cache.read_text("utf-8").splitlines()) == 3

    report = tmp_path / "eval.json"
    argv = ["eval", "--method", "reg", "--dataset", str(data), "--hops", "2"]
    argv += ["--option", f"reg.scorer={out}", "--json", str(report), "--no-progress"]
    assert cli.main(argv) == 0
    row = json.loads(report.read_text("utf-8"))["results"]["reg"]
    assert row["AnsR@100"] == 100.0  # the whole toy KG fits in the top-100 triples
    assert 0.0 <= row["Hit@1"] <= 100.0 and row["chains"] > 0 and row["flat_tokens"] > 0


def test_train_reg_takes_refinement_options(
    tmp_path: Path, fakes: FakeScorer, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = _metaqa(tmp_path / "metaqa"), tmp_path / "scorers"
    argv = ["train", "--method", "reg", "--dataset", str(data), "--out", str(out)]
    for opt in ("supervision=refined", "hops=2", "train=3", "val=2", "test=1", "epochs=1"):
        argv += ["--option", opt]
    bad = [*argv, "--option", "refinement=choice_scoring=sideways", "--no-progress"]
    assert cli.main(bad) != 0
    assert not (out / "refined-2hop.jsonl").exists()  # refused before any labelling
    capsys.readouterr()
    spec = "refinement=choice_scoring=permuted,choice_options=answer_paths"
    assert cli.main([*argv, "--option", spec, "--no-progress"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["refinement"]["choice_scoring"] == "permuted"
    assert report["refinement"]["choice_options"] == "answer_paths"
    assert load_scorer(out / "refined-2hop")[1]["refinement"] == report["refinement"]
    # permuted scoring reads every question twice: the given and the reversed listing
    assert report["refine_stats"]["permutation_calls"] == 3
