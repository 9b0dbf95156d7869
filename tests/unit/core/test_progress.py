"""Tests for core.progress."""

from __future__ import annotations

import doctest
from collections.abc import Sequence

import pytest

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core import progress as progress_module
from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.progress import ProgressSetting, progress
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.fake_embedder import FakeEmbedder


def test_doctests() -> None:
    result = doctest.testmod(progress_module)
    assert result.attempted > 0
    assert result.failed == 0


def test_disabled_yields_items_and_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert list(progress(["a", "b"], "Letters", enabled=False)) == ["a", "b"]
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out == ""


def test_enabled_writes_bar_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert list(progress(range(5), "Indexing passages")) == [0, 1, 2, 3, 4]
    captured = capsys.readouterr()
    assert "Indexing passages" in captured.err
    assert "5/5" in captured.err
    assert captured.out == ""


def test_total_for_generators(capsys: pytest.CaptureFixture[str]) -> None:
    items = list(progress((i for i in range(3)), "Gen", total=3))
    assert items == [0, 1, 2]
    assert "3/3" in capsys.readouterr().err


# -- the default decision (ProgressSetting / track_batch through BaseIndex) ----------------


class RecordingEmbedder(FakeEmbedder):
    """Records the ``show_progress`` of every ``embed`` call and shows a real bar for it."""

    def __init__(self) -> None:
        super().__init__()
        self.flags: list[bool] = []

    def embed(self, texts: Sequence[str], *, show_progress: bool = False) -> FloatMatrix:
        self.flags.append(show_progress)
        return super().embed(list(progress(texts, "Embedding", enabled=show_progress)))


def _passages(n: int) -> list[Passage]:
    return [Passage(f"p{i}", f"Town {i} lies on river {i % 7}.", f"d{i}") for i in range(n)]


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(progress_module, "PROGRESS_MIN_PASSAGES", 5)
    return 5


@pytest.mark.parametrize(
    ("setting", "n", "expected"),
    [(None, 4, False), (None, 5, True), (False, 50, False), (True, 1, True)],
)
def test_dense_default_decision(
    small_threshold: int,
    capsys: pytest.CaptureFixture[str],
    setting: bool | None,
    n: int,
    expected: bool,
) -> None:
    emb = RecordingEmbedder()
    index = DenseRetriever.from_passages(_passages(n), embedding=emb, show_progress=setting)
    assert emb.flags == [expected]
    err = capsys.readouterr().err
    assert ("Embedding" in err) is expected
    if expected:
        assert f"{n}/{n}" in err
    # the stored setting is kept; outside a build the auto setting reads False
    assert ProgressSetting.setting_of(index) is setting
    assert index.show_progress is (setting is True)


def test_insert_decides_per_batch(small_threshold: int) -> None:
    emb = RecordingEmbedder()
    index = DenseRetriever.from_passages(_passages(2), embedding=emb)
    index.insert([f"Extra town {i} on a lake." for i in range(6)])
    index.insert(["One more town."])
    assert emb.flags == [False, True, False]


def test_clue_build_shows_bars_by_size(small_threshold: int) -> None:
    pytest.importorskip("spacy")
    from tests.unit.clue_fixtures import documents

    docs = documents()
    emb = RecordingEmbedder()
    ClueIndex.from_documents(docs, embedding=emb)
    assert emb.flags and all(emb.flags) is (len(docs) >= small_threshold)
    emb_off = RecordingEmbedder()
    ClueIndex.from_documents(docs, embedding=emb_off, show_progress=False)
    assert emb_off.flags and not any(emb_off.flags)


def test_show_progress_rejects_non_bool() -> None:
    with pytest.raises(TypeError, match="show_progress"):
        DenseRetriever.from_passages(_passages(1), embedding=FakeEmbedder(), show_progress="yes")


# -- LLM work: LLMProgress, shown from the first call whatever the corpus size ----------------


def test_llm_progress_starts_before_the_first_call_and_reports_totals(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from graphrag_integrations.core.llm import LLMClient

    before_call: list[str] = []  # stderr written before each call of the fake LLM

    def llm(prompt: str) -> str:
        before_call.append(capsys.readouterr().err)
        return "a reply of a few words"

    client = LLMClient(llm, max_concurrency=1)
    client.complete_many(["first prompt", "second prompt", "third prompt"], desc="Work")
    assert len(before_call) == 3
    assert before_call[0].startswith("Work: 0/3 calls (0%), elapsed")
    rest = "".join(before_call[1:]) + capsys.readouterr().err
    assert "Work: 1/3 calls (33%)" in rest and "ETA" in rest
    total = client.usage.total_tokens
    assert total > 0
    assert (
        rest.rstrip()
        .splitlines()[-1]
        .endswith(f"Work: 3/3 calls (100%), elapsed 00:00, tokens {total}")
    )


def test_llm_progress_off_shows_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    from graphrag_integrations.core.llm import LLMClient

    calls: list[str] = []

    def llm(prompt: str) -> str:
        calls.append(prompt)
        return "reply"

    client = LLMClient(llm)
    client.complete_many(["a", "b"], show_progress=False)
    assert len(calls) == 2
    assert capsys.readouterr().err == ""


def test_llm_progress_lines_without_a_terminal() -> None:
    import io

    from graphrag_integrations.core.progress import LLMProgress

    now = [0.0]
    out = io.StringIO()
    with LLMProgress(100, "Job", file=out, interval=1e9, clock=lambda: now[0]) as bar:
        for _ in range(100):
            bar.update()
    lines = out.getvalue().splitlines()
    # start, first item, every 10 %, end
    assert [line.split()[1] for line in lines] == ["0/100", "1/100"] + [
        f"{n}/100" for n in range(10, 100, 10)
    ] + ["100/100"]
    out = io.StringIO()
    with LLMProgress(1000, "Job", file=out, interval=30, clock=lambda: now[0]) as bar:
        for _ in range(5):
            now[0] += 40.0  # every item takes longer than the interval: one line each
            bar.update()
    assert len(out.getvalue().splitlines()) == 1 + 5 + 1
    assert "ETA 11:06:00" in out.getvalue().splitlines()[1]  # 40 s x 999 items left


def test_llm_progress_bar_on_a_terminal() -> None:
    import io

    from graphrag_integrations.core.progress import LLMProgress

    used = [0]
    out = io.StringIO()
    with LLMProgress(2, "Job", file=out, tty=True, tokens=lambda: used[0]) as bar:
        assert "0/2" in out.getvalue()  # the bar is drawn before the first call returns
        used[0] = 500
        bar.update()
        used[0] = 1200
        bar.update()
    text = out.getvalue()
    assert "2/2" in text and "tokens 1.2k" in text


def test_qcg_small_build_shows_llm_progress_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex
    from graphrag_integrations.methods.qcg.params import QCGIndexParams

    reply = '[{"query": "Where is Paris?", "answer": "in France"}]'
    QueryCentricGraphIndex.from_documents(
        ["Paris is in France."],
        embedding=FakeEmbedder(),
        llm=lambda p: reply,
        index_params=QCGIndexParams(M=1),
    )
    err = capsys.readouterr().err
    assert "QCG: generating queries for 1 chunk with <lambda>: ~1 LLM call" in err
    assert "Doc2Query: 0/1 chunks" in err and "Doc2Query: 1/1 chunks (100%)" in err
    QueryCentricGraphIndex.from_documents(
        ["Paris is in France."],
        embedding=FakeEmbedder(),
        llm=lambda p: reply,
        index_params=QCGIndexParams(M=1),
        show_progress=False,
    )
    assert capsys.readouterr().err == ""


def test_clue_alpha_build_shows_llm_progress_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("spacy")
    from graphrag_integrations.core.llm import LLMClient
    from graphrag_integrations.methods.clue.params import ClueIndexParams
    from tests.unit.clue_fixtures import documents

    docs = documents()[:3]
    reply = '{"knowledge units": ["Paris is in France."]}'
    client = LLMClient(lambda p: reply)
    ClueIndex.from_documents(
        docs, embedding=FakeEmbedder(), index_params=ClueIndexParams(alpha=1.0), llm=client
    )
    err = capsys.readouterr().err
    assert "LLM: 0/3 calls" in err and "LLM: 3/3 calls (100%)" in err
    ClueIndex.from_documents(
        docs,
        embedding=FakeEmbedder(),
        index_params=ClueIndexParams(alpha=1.0),
        llm=LLMClient(lambda p: reply),
        show_progress=False,
    )
    assert "LLM:" not in capsys.readouterr().err


def test_reg_refinement_shows_llm_progress_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from graphrag_integrations.methods.reg.index import TrainingQuestion
    from tests.unit.methods.reg.test_reg_refinement import FakeScorer
    from tests.unit.reg_fixtures import movie_index

    q = TrainingQuestion("q1", "years of Colman films", ("Ronald Colman",), ("1944", "1942"))
    movie_index().supervision([q], mode="refined", llm=FakeScorer({0: -0.1}))
    err = capsys.readouterr().err
    assert "ReG refinement: 0/1 questions" in err and "ReG refinement: 1/1 questions" in err
    movie_index(show_progress=False).supervision([q], mode="refined", llm=FakeScorer({0: -0.1}))
    assert capsys.readouterr().err == ""


def test_llm_progress_heartbeat_while_a_long_call_runs() -> None:
    import io

    from graphrag_integrations.core.progress import LLMProgress

    now = [0.0]
    out = io.StringIO()
    with LLMProgress(3, "Job", file=out, interval=30, clock=lambda: now[0]) as bar:
        now[0] = 10.0
        bar.beat()  # nothing due yet
        assert len(out.getvalue().splitlines()) == 1
        now[0] = 45.0
        bar.beat()  # the first call still runs: a line anyway
        assert out.getvalue().splitlines()[-1] == "Job: 0/3 calls (0%), elapsed 00:45"
        bar.update(3)
    assert out.getvalue().splitlines()[-1].startswith("Job: 3/3 calls (100%)")
