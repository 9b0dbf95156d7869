"""Fixtures of the command-line tests that build an index of every registered method: the
fake embedder in every module, a two-file corpus, a QCG query set and a tiny translator
(the cheapest offline ``index`` of each method, with :mod:`tests.unit.cli.method_fixtures`)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.encoders import embeddings
from graphrag_integrations.evaluation import registry
from tests.conftest import FakeEmbedder
from tests.unit.cli.method_fixtures import TEXTS


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEmbedder]:
    """Every ``as_embedder(None | str)`` of every loaded module (and of those imported later,
    which take the patched ``embeddings.as_embedder``) returns one FakeEmbedder."""
    fake = FakeEmbedder()
    real = embeddings.as_embedder

    def patched(obj: Any = None) -> Any:
        return fake if obj is None or isinstance(obj, str) else real(obj)

    for reg in registry.registrations().values():  # import each index module, then patch it
        reg.resolve_index_class()
    for name, module in list(sys.modules.items()):
        if name.startswith("graphrag_integrations") and hasattr(module, "as_embedder"):
            monkeypatch.setattr(module, "as_embedder", patched)
    yield fake


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of the :data:`~tests.unit.cli.method_fixtures.TEXTS` files."""
    folder = tmp_path_factory.mktemp("corpus")
    for name, text in TEXTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def query_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A QCG query set over the corpus texts (no LLM at index time)."""
    from graphrag_integrations.methods.qcg.generation import QAPair, QuerySet

    qs = QuerySet({}, model="fake", prompt_hash="0" * 16, M=1)
    qs.update([(t, [QAPair(f"Where is {t.split()[0]}?", t)]) for t in TEXTS.values()])
    path = tmp_path_factory.mktemp("qs") / "qs.jsonl.gz"
    qs.save(path)
    return path


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama folder: KG-Translator's cheapest offline translator."""
    from tests.unit.kgt_fixtures import make_tiny_lm

    return make_tiny_lm(tmp_path_factory.mktemp("lm") / "tiny")
