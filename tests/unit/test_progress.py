"""Tests for core.progress."""

from __future__ import annotations

import doctest
from collections.abc import Sequence

import pytest

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core import progress as progress_module
from graphrag_integrations.core.embeddings import FloatMatrix
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
