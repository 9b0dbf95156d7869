"""Tests for core.progress."""

from __future__ import annotations

import doctest

import pytest

from graphrag_integrations.core import progress as progress_module
from graphrag_integrations.core.progress import progress


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
