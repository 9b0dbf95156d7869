"""Where the data-backed tests find the benchmark data (``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import conftest


def test_option_wins_over_the_environment(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    env = {conftest.DATA_DIR_ENV: str(tmp_path / "b")}
    assert conftest.resolve_data_dir(str(tmp_path / "a"), env) == (tmp_path / "a", "--data-dir")
    assert conftest.resolve_data_dir(None, env) == (tmp_path / "b", conftest.DATA_DIR_ENV)


def test_a_configured_directory_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(pytest.UsageError, match=r"--data-dir=.*not a directory"):
        conftest.resolve_data_dir(str(tmp_path / "missing"), {})
    with pytest.raises(pytest.UsageError, match=r"GRAPHRAG_DATA_DIR=.*not a directory"):
        conftest.resolve_data_dir(None, {conftest.DATA_DIR_ENV: str(tmp_path / "missing")})


def test_default_beside_the_repository_else_a_reason_saying_how_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conftest, "DEFAULT_DATA_DIR", tmp_path)
    assert conftest.resolve_data_dir(None, {}) == (tmp_path, "default")
    monkeypatch.setattr(conftest, "DEFAULT_DATA_DIR", tmp_path / "missing")
    path, reason = conftest.resolve_data_dir(None, {})
    assert path is None
    assert "--data-dir" in reason and conftest.DATA_DIR_ENV in reason
