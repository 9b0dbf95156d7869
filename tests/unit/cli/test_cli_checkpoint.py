"""``graphrag-integrations index``: ``--checkpoint`` resume, and ``--out`` naming a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations import cli
from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.core.index.checkpoint import INDEX_FOLDER, read_checkpoint

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "eval"


def _index(out: Path, *extra: str) -> int:
    return cli.main(
        ["index", "--method", "bm25", "--input", str(FIX / "musique"), "--out", str(out), *extra]
    )


def test_out_naming_a_regular_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("keep me")
    assert _index(target) == 2
    err = capsys.readouterr().err
    assert err == f"error: --out {target} is a file, not a folder: pass a folder for the index\n"
    assert target.read_text() == "keep me"


def test_checkpoint_resumes_after_a_kill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ckpt, out = tmp_path / "ckpt", tmp_path / "idx"
    persist = BM25Retriever.persist
    calls: list[Any] = []

    def dies_on_second_batch(index: BM25Retriever, path: Any, **kwargs: Any) -> None:
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        persist(index, path, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(BM25Retriever, "persist", dies_on_second_batch)
        with pytest.raises(KeyboardInterrupt):
            _index(out, "--checkpoint", str(ckpt), "--checkpoint-every", "3")
    assert len(read_checkpoint(ckpt)["done"]) == 3
    assert not out.exists()
    assert _index(out, "--checkpoint", str(ckpt), "--checkpoint-every", "3") == 0
    assert "indexed 4 passages" in capsys.readouterr().out
    assert read_checkpoint(ckpt)["batches"] == 2  # the first batch was not built again
    assert json.loads((out / "manifest.json").read_text())["method"] == "bm25"
    assert len(BM25Retriever.load(ckpt / INDEX_FOLDER).passages) == 4
    assert _index(tmp_path / "new", "--checkpoint-every", "3") == 2
    assert "--checkpoint-every needs --checkpoint DIR" in capsys.readouterr().err
