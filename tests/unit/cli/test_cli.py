"""The command line end to end on the tiny fixtures (fake embedder; one slow real-model test)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations import cli
from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core.registry import MethodRegistration
from graphrag_integrations.evaluation import registry
from graphrag_integrations.evaluation.datasets import load_dataset
from graphrag_integrations.evaluation.harness import EvalReport, MethodResult, run_eval
from graphrag_integrations.evaluation.metrics import RecallSummary, recall_at_k
from graphrag_integrations.evaluation.report import format_report
from tests.conftest import FakeEmbedder

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "eval"

#: (title, text) of a corpus where only a correct ranking gives the expected recall: every
#: question shares words with its passages and with no other (titles are unique words).
RANKED_CORPUS = [
    ("Alder", "zebra quokka narwhal"),  # q1: 3 query words -> rank 1 (gold)
    ("Birch", "zebra"),  # q1: 1 query word -> rank 2 (gold)
    ("Cedar", "falcon heron"),  # q2: rank 1 (gold)
    ("Dogwood", "lantern"),
    ("Elm", "otter beaver"),  # q3: 2 query words -> rank 1 (not gold)
    ("Fir", "beaver"),  # q3: 1 query word -> rank 2 (gold)
]
#: question -> titles of its gold passages (no two words share a FakeEmbedder(64) bucket)
RANKED_QUESTIONS = {
    "zebra quokka narwhal?": ["Alder", "Birch"],
    "falcon heron?": ["Cedar"],
    "otter beaver?": ["Fir"],
}


def write_ranked_dataset(folder: Path) -> Path:
    """RANKED_CORPUS / RANKED_QUESTIONS as a MuSiQue-format questions file (inline paragraphs)."""
    items = [
        {
            "id": f"q{i}",
            "question": question,
            "answer": gold[0],
            "paragraphs": [
                {"title": t, "paragraph_text": x, "is_supporting": t in gold}
                for t, x in RANKED_CORPUS
            ],
        }
        for i, (question, gold) in enumerate(RANKED_QUESTIONS.items(), 1)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.json").write_text(json.dumps(items))
    return folder


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
        assert row["latency_p95_ms"] >= row["latency_p50_ms"] >= 0.0
    printed = capsys.readouterr().out
    assert "musique: 4 passages, 2 questions" in printed
    assert "vs dense" in printed and "R@2 ratio" in printed


@pytest.mark.parametrize("method", ["dense", "bm25", "hybrid"])
def test_eval_recall_on_a_corpus_only_correct_ranking_scores(
    method: str, fake_embedder: FakeEmbedder, tmp_path: Path
) -> None:
    # by hand: q1 gold {Alder, Birch} ranked 1, 2 -> R@1 1/2, R@2 1; q2 gold {Cedar} rank 1 -> 1, 1;
    # q3 gold {Fir} ranked 2 behind Elm -> R@1 0, R@2 1.  Means: R@1 = 50, R@2 = 100, R@3 = 100
    words = {w.lower() for t, x in RANKED_CORPUS for w in (t, *x.split())}
    assert len({fake_embedder.bucket(w) for w in words}) == len(words)  # no hash collision
    data_dir = write_ranked_dataset(tmp_path / "ranked")
    out = tmp_path / "r.json"
    code = cli.main(
        ["eval", "--method", method, "--dataset", str(data_dir), "--k", "1,2,3",
         "--json", str(out), "--no-progress"]
    )  # fmt: skip
    assert code == 0
    row = json.loads(out.read_text())["results"][method]
    assert (row["R@1"], row["R@2"], row["R@3"]) == (50.0, 100.0, 100.0)


def test_ratio_table_is_method_over_dense(capsys: pytest.CaptureFixture[str]) -> None:
    report = EvalReport("toy", 10, 4, (2,))
    report.results["dense"] = MethodResult("dense", {2: RecallSummary(40.0, 4, 0)}, [0.02], 1.0, 10)
    report.results["bm25"] = MethodResult("bm25", {2: RecallSummary(60.0, 4, 0)}, [0.005], 0.5, 10)
    lines = format_report(report).splitlines()
    ratio = lines[lines.index(next(x for x in lines if x.startswith("vs dense"))) + 2].split()
    # R@2 60 / 40 = 1.5; p50 5 ms / 20 ms = 0.25
    assert ratio == ["bm25", "1.50", "0.25"]
    main_row = next(x for x in lines if x.startswith("bm25")).split()
    assert main_row[:4] == ["bm25", "60.0", "5.0", "5.0"]  # R@2, p50 ms, p95 ms
    assert main_row[-1] == "20"  # 10 passages / 0.5 s


def test_eval_recall_equals_manual_computation(fake_embedder: FakeEmbedder) -> None:
    ds = load_dataset(FIX / "hotpotqa", distractors=FIX / "distractors")
    report = run_eval(ds, ["bm25"], ks=(1, 2), show_progress=False)
    bm25 = registry.get_registration("bm25").build(fake_embedder, {"passages": ds.passages})
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
    out = capsys.readouterr().out  # LiHuaWorld: per-type recall, the Null question excluded
    assert "3 questions" in out and "{'Multi': 1, 'Single': 1, 'all': 2} (Null excluded)" in out
    assert "Single R@3" in out and "vs dense" not in out


def test_eval_options_reach_the_builder(
    fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphrag_integrations.baselines.hybrid import HybridRetriever
    from graphrag_integrations.evaluation import harness

    built: list[HybridRetriever] = []
    real = harness.evaluate_retriever

    def spy(name: str, retriever: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(retriever)
        return real(name, retriever, *args, **kwargs)

    monkeypatch.setattr(harness, "evaluate_retriever", spy)
    code = cli.main(
        ["eval", "--method", "hybrid", "--dataset", str(FIX / "hotpotqa"),
         "--option", "hybrid.fusion=rrf", "--option", "hybrid.weight=0.2",
         "--option", "hybrid.rrf_k=7", "--no-progress"]
    )  # fmt: skip
    assert code == 0
    (hybrid,) = built
    assert (hybrid.fusion, hybrid.weight, hybrid.rrf_k) == ("rrf", 0.2, 7)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("clue.KK=3", "unknown option 'clue.KK'; valid options: alpha (α), selection_value"),
        ("clue.K=x", "option clue.K: expected an integer, got 'x'"),
        ("clue.alpha=1.5", "option clue.alpha: must be <= 1, got 1.5"),
        ("clue.preset=fast", "option clue.preset: unknown preset 'fast'; valid presets: default"),
        ("clue.vector_index=x", "option clue.vector_index takes a Python object"),
        ("hybrid.fusion=bogus", "option hybrid.fusion: expected one of 'minmax', 'rrf'"),
        ("bm25.k=0", "option bm25.k: must be >= 1, got 0"),
        ("dense.k=3", "--option for dense, which --method does not list"),
    ],
)
def test_bad_options_are_one_line_errors_before_loading(
    option: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # the dataset does not exist: the option error must come first, before any loading
    argv = ["eval", "--method", "bm25,hybrid,clue", "--dataset", "/no/such", "--option", option]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert message in err


def test_unknown_option_names_every_valid_option_with_symbols(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["eval", "--method", "clue", "--dataset", "x", "--option", "clue.KK=3"]) == 2
    err = capsys.readouterr().err
    for label in ("alpha (α)", "K,", "D,", "M,", "N,", "path_weight", "preset (default | paper)"):
        assert label in err
    assert "llm (object or name)" in err and "vector_index (object)" in err


def test_methods_command_lists_and_describes(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["methods"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == ["bm25", "clue", "dense", "hybrid", "kgt", "ppr", "qcg", "reg", "reg-weak"]
    assert cli.main(["methods", "clue"]) == 0
    out = capsys.readouterr().out
    alpha = next(line for line in out.splitlines() if line.startswith("alpha"))
    assert alpha.split()[:5] == ["alpha", "α", "float", "0.0", "[0,"]
    assert "index_llm*: " in out and "vector_index: " in out and "preset" in out
    assert cli.main(["methods", "nope"]) == 2


class _ToyRanker:
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


def toy_kg_build(
    embedder: Any,
    *,
    triples: list[tuple[str, str, str]],
    index_params: Any,
    query_params: Any,
    show_progress: bool,
) -> _ToyRanker:
    """A builder declaring only ``triples``: any other input would be a TypeError."""
    return _ToyRanker(triples)


@pytest.fixture
def toy_kg() -> Iterator[MethodRegistration]:
    reg = MethodRegistration(
        name="toy-kg",
        index_class=f"{__name__}:_ToyRanker",
        builder=f"{__name__}:toy_kg_build",
        inputs=frozenset({"triples"}),
    )
    registry.register(reg)
    yield reg
    registry.unregister("toy-kg")


def test_kgqa_hook(fake_embedder: FakeEmbedder, toy_kg: MethodRegistration) -> None:
    from graphrag_integrations.evaluation.datasets import load_metaqa

    ds = load_metaqa(FIX / "metaqa").to_dataset()
    row = run_eval(ds, ["toy-kg"], show_progress=False).to_json()["results"]["toy-kg"]
    # q0 Kismet -> [Dieterle, Knoblock, 1944]: hit@1; q1 Dieterle -> [Kismet, Hunchback]: hit@1
    # q2 Hunchback -> [Dieterle] vs gold 1944: miss.  AnsR@50 = (1 + 1 + 0) / 3
    assert row["Hit@1"] == pytest.approx(200 / 3, abs=0.01)
    assert row["AnsR@50"] == pytest.approx(200 / 3, abs=0.01)
    assert row["R@5"] is None  # no gold passages


def test_kg_method_on_a_passage_dataset_is_refused(
    fake_embedder: FakeEmbedder, toy_kg: MethodRegistration, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["eval", "--method", "toy-kg", "--dataset", str(FIX / "musique")]) == 2
    assert "method 'toy-kg' needs triples; dataset 'musique' has none" in capsys.readouterr().err


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
    ghost = MethodRegistration(
        name="ghost",
        index_class="graphrag_integrations.no_such_module:Index",
        builder="graphrag_integrations.no_such_module:build",
    )
    registry.register(ghost)
    try:
        assert cli.main(["eval", "--method", "ghost", "--dataset", str(FIX / "musique")]) == 2
        assert "method 'ghost' is not available: No module named" in capsys.readouterr().err
    finally:
        registry.unregister("ghost")


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


def _index_bm25(out: Path, *extra: str) -> int:
    return cli.main(
        ["index", "--method", "bm25", "--input", str(FIX / "musique"), "--out", str(out), *extra]
    )


@pytest.mark.parametrize(("k", "message"), [("0", "got 0"), ("-1", "got -1")])
def test_query_k_below_one_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], k: str, message: str
) -> None:
    assert _index_bm25(tmp_path / "idx") == 0
    capsys.readouterr()
    assert cli.main(["query", "--index", str(tmp_path / "idx"), "Babbage", "-k", k]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"error: k must be an integer >= 1, {message}\n"


def test_index_refuses_a_folder_of_documents_unless_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "my_docs"
    folder.mkdir()
    (folder / "thesis.txt").write_text("years of work")
    assert _index_bm25(folder) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: refusing to persist into") and err.count("\n") == 1
    assert "pass --overwrite" in err
    assert sorted(p.name for p in folder.iterdir()) == ["thesis.txt"]
    assert _index_bm25(folder, "--overwrite") == 0
    assert (folder / "thesis.txt").read_text() == "years of work"
    capsys.readouterr()
    assert cli.main(["query", "--index", str(folder), "Babbage", "-k", "1", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 1


def test_index_over_another_methods_index_needs_overwrite(
    fake_embedder: FakeEmbedder,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _index_bm25(tmp_path / "idx") == 0
    base = ["index", "--method", "dense", "--input", str(FIX / "musique")]
    with monkeypatch.context() as patch:  # refused before the (possibly long) build
        patch.setattr(DenseRetriever, "from_documents", lambda *a, **k: pytest.fail("built"))
        assert cli.main([*base, "--out", str(tmp_path / "idx")]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert "refusing to replace the 'bm25' index" in capsys.readouterr().err
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text())["method"] == "bm25"
    assert cli.main([*base, "--out", str(tmp_path / "idx"), "--overwrite"]) == 0
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text())["method"] == "dense"


def test_index_over_another_index_of_the_same_method_needs_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20: a second ``index`` into the same ``--out`` used to replace the first one."""
    assert _index_bm25(tmp_path / "idx") == 0
    first = json.loads((tmp_path / "idx" / "manifest.json").read_text())["index_id"]
    capsys.readouterr()
    with monkeypatch.context() as patch:  # refused before the (possibly long) build
        patch.setattr(BM25Retriever, "from_documents", lambda *a, **k: pytest.fail("built"))
        assert _index_bm25(tmp_path / "idx") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: refusing to replace the 'bm25' index in") and err.count("\n") == 1
    assert str(tmp_path / "idx") in err and "pass --overwrite" in err
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text())["index_id"] == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    assert _index_bm25(tmp_path / "idx", "--overwrite") == 0
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text())["index_id"] != first


def test_query_of_a_damaged_index_is_a_one_line_error(
    fake_embedder: FakeEmbedder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["index", "--method", "dense", "--input", str(FIX / "musique")]
    assert cli.main([*base, "--out", str(tmp_path / "idx")]) == 0
    (tmp_path / "idx" / "vectors.npy").write_bytes(b"")
    capsys.readouterr()
    assert cli.main(["query", "--index", str(tmp_path / "idx"), "Babbage"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "vectors.npy" in err and err.count("\n") == 1


def test_parse_options_keeps_strings_for_the_registration() -> None:
    assert cli.parse_options(["a.b=1", "a.c=x=y", "d.e=[1, 2]"]) == {
        "a": {"b": "1", "c": "x=y"},
        "d": {"e": "[1, 2]"},
    }
    from graphrag_integrations.errors import GraphRAGError

    for bad in (["novalue"], ["a=1"], [".b=1"], ["a.b=1", "a.b=2"]):
        with pytest.raises(GraphRAGError):
            cli.parse_options(bad)


def test_index_options_are_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["index", "--input", str(FIX / "musique"), "--out", str(tmp_path / "i")]
    assert cli.main([*base, "--method", "clue", "--option", "alpha=2"]) == 2
    assert "option clue.alpha: must be <= 1, got 2.0" in capsys.readouterr().err
    assert cli.main([*base, "--method", "bm25", "--option", "k=3"]) == 2
    assert "option bm25.k is a query-time option" in capsys.readouterr().err
    assert not (tmp_path / "i").exists()


SEMANTIC_CORPUS = [
    ("Eiffel Tower", "The Eiffel Tower is a wrought-iron lattice tower in Paris, France."),
    ("Photosynthesis", "Plants convert sunlight, water and carbon dioxide into sugar."),
    ("Volcano", "Magma erupts from a volcano as lava and ash."),
    ("Violin", "The violin is a bowed string instrument played in orchestras."),
]


@pytest.mark.slow
def test_eval_with_real_minilm(tmp_path: Path) -> None:
    # each paraphrased question has one gold passage among four unrelated topics: MiniLM must
    # rank it first (R@1 = 100); a wrong similarity or ordering would not
    questions = {
        "Which Paris landmark is made of iron?": "Eiffel Tower",
        "How do plants make food from light?": "Photosynthesis",
        "What comes out when a mountain explodes with molten rock?": "Volcano",
    }
    items = [
        {
            "id": f"q{i}",
            "question": q,
            "answer": gold,
            "paragraphs": [
                {"title": t, "paragraph_text": x, "is_supporting": t == gold}
                for t, x in SEMANTIC_CORPUS
            ],
        }
        for i, (q, gold) in enumerate(questions.items())
    ]
    (tmp_path / "questions.json").write_text(json.dumps(items))
    out = tmp_path / "res.json"
    code = cli.main(
        ["eval", "--method", "dense", "--dataset", str(tmp_path), "--k", "1",
         "--json", str(out), "--no-progress"]
    )  # fmt: skip
    assert code == 0
    assert json.loads(out.read_text())["results"]["dense"]["R@1"] == 100.0


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


def toy_train(dataset: Path, out: Path, *, params: Any, show_progress: bool) -> dict[str, Any]:
    """A trainer writing one file, so the test can see it ran with the parsed options."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "model.txt").write_text(f"steps={params.k}", encoding="utf-8")
    return {"dataset": dataset.name, "steps": params.k, "progress": show_progress}


def test_train_runs_the_registered_trainer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from graphrag_integrations.baselines.registration import RetrieveParams

    reg = MethodRegistration(
        name="toy-train",
        index_class=f"{__name__}:_ToyRanker",
        builder=f"{__name__}:toy_kg_build",
        trainer=f"{__name__}:toy_train",
        train_params=RetrieveParams,
    )
    registry.register(reg)
    try:
        out = tmp_path / "model"
        argv = ["train", "--method", "toy-train", "--dataset", str(FIX / "musique")]
        assert cli.main([*argv, "--out", str(out), "--option", "k=7", "--no-progress"]) == 0
        assert json.loads(capsys.readouterr().out) == {
            "dataset": "musique",
            "steps": 7,
            "progress": False,
        }
        assert (out / "model.txt").read_text(encoding="utf-8") == "steps=7"
        assert cli.main([*argv, "--out", str(out), "--option", "kk=7"]) == 2
        assert "unknown option 'toy-train.kk'" in capsys.readouterr().err
    finally:
        registry.unregister("toy-train")
    assert cli.main(["train", "--method", "bm25", "--dataset", ".", "--out", str(tmp_path)]) == 2
    assert "method 'bm25' has nothing to train" in capsys.readouterr().err


def test_index_qcg_takes_named_objects_and_a_preset(
    fake_embedder: FakeEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from graphrag_integrations.methods.qcg.generation import QAPair, QuerySet

    monkeypatch.setattr(
        "graphrag_integrations.methods.qcg.index.as_embedder", lambda _: fake_embedder
    )
    corpus = tmp_path / "docs"
    corpus.mkdir()
    texts = {"paris.txt": "Paris is the capital of France.", "rome.txt": "Rome is in Italy."}
    for name, text in texts.items():
        (corpus / name).write_text(text, encoding="utf-8")
    qs = QuerySet({}, model="fake", prompt_hash="0" * 16, M=1)
    qs.update([(t, [QAPair(f"Where is {t.split()[0]}?", t)]) for t in texts.values()])
    qs.save(tmp_path / "qs.jsonl.gz")
    out = tmp_path / "index"
    base = ["index", "--method", "qcg", "--input", str(corpus), "--out", str(out)]
    assert cli.main([*base, "--option", "gamma=1.2"]) == 2
    assert "qcg.gamma is a query-time option" in capsys.readouterr().err
    opts = ["--option", f"query_set={tmp_path / 'qs.jsonl.gz'}", "--option", "preset=lihuaworld"]
    assert cli.main([*base, "--no-progress", *opts]) == 0
    printed = capsys.readouterr().out
    assert '"reused_chunks": 2' in printed and '"generated_chunks": 0' in printed
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["parameters"]["preset"] == "lihuaworld"
    assert manifest["parameters"]["index"]["k_neighbors"] == 2


def test_index_qcg_generates_once_reports_tokens_and_eval_reuses_the_set(
    fake_embedder: FakeEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from graphrag_integrations.core.llm import adapters, client

    calls: list[str] = []

    def fake_llm(prompt: str) -> str:
        calls.append(prompt)
        last = prompt.strip().splitlines()[-1]  # the small template ends with the chunk
        return f"Question: What does the text say about {last.split()[0]}?\nAnswer: {last}"

    real = adapters.as_llm
    monkeypatch.setattr(client, "as_llm", lambda o=None: real(fake_llm if o == "fake" else o))
    monkeypatch.setattr(
        "graphrag_integrations.methods.qcg.index.as_embedder", lambda _: fake_embedder
    )
    out = tmp_path / "ix"
    args = ["index", "--method", "qcg", "--input", str(FIX / "hotpotqa"), "--out", str(out)]
    opts = ["--option", "llm=fake", "--option", "template=small", "--no-progress"]
    assert cli.main([*args, *opts]) == 0
    printed = capsys.readouterr().out
    report = json.loads(printed.strip().splitlines()[-2])
    assert report["generated_chunks"] == len(calls) > 0 and report["usage"]["calls"] == len(calls)
    assert report["usage"]["prompt_tokens"] > 0  # the token count is shown
    assert f"qcg.query_set={out}" in printed
    n = len(calls)
    evaluated = ["eval", "--method", "qcg", "--dataset", str(FIX / "hotpotqa")]
    assert cli.main([*evaluated, "--option", f"qcg.query_set={out}", "--no-progress"]) == 0
    assert len(calls) == n  # eval reused the generated set: no LLM call


@pytest.mark.parametrize("module", ["graphrag_integrations", "graphrag_integrations.cli"])
def test_python_dash_m_runs_the_command(module: str) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", module, "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("graphrag-integrations ")
