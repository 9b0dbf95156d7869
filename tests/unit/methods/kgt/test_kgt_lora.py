"""Committed KG-Translator adapters: unpacked once into the cache, found by name."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from graphrag_integrations.methods.kgt import lora
from graphrag_integrations.methods.kgt.translator_model import resolve_translator


def _archive(assets: Path, name: str) -> None:
    folder = assets.parent / "src" / name
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text(json.dumps({"r": 4}))
    (folder / "kgt_translator.json").write_text(json.dumps({"provenance": {"fold": "a"}}))
    assets.mkdir(exist_ok=True)
    with tarfile.open(assets / f"{name}.tar.xz", "w:xz") as tar:
        tar.add(folder, arcname=name)


def test_adapter_is_unpacked_once_and_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assets = tmp_path / "assets"
    _archive(assets, "toy")
    monkeypatch.setattr(lora, "ASSETS", assets)
    assert lora.committed_adapters() == ["toy"]
    first = lora.adapter_path("toy", cache_dir=tmp_path / "cache")
    assert first.parent == tmp_path / "cache" / "kgt" and first.name.startswith("toy-")
    assert json.loads((first / "kgt_translator.json").read_text())["provenance"]["fold"] == "a"
    (first / "marker").write_text("kept")  # a second call reuses the folder
    assert lora.adapter_path("toy", cache_dir=tmp_path / "cache") == first
    assert (first / "marker").is_file()
    with pytest.raises(FileNotFoundError, match="available: \\['toy'\\]"):
        lora.adapter_path("nope", cache_dir=tmp_path / "cache")


def test_the_default_adapter_is_committed() -> None:
    assert lora.DEFAULT_TRANSLATOR in lora.committed_adapters()
    info = json.loads(
        (lora.adapter_path(lora.DEFAULT_TRANSLATOR) / "kgt_translator.json").read_text()
    )
    assert info["lora"] is True and info["provenance"]["data_sha256"]
    assert info["base_model"] is None  # the default SmolLM2, converted on each machine


def test_translator_objects_without_generate_are_refused() -> None:
    with pytest.raises(TypeError, match="lacks 'generate'"):
        resolve_translator(object())
