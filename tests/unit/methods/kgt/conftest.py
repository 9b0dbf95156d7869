"""The KG-Translator tests' tiny offline translator (one per test module)."""

from __future__ import annotations

from typing import Any

import pytest

from graphrag_integrations.core.llm import TransformersLLM
from tests.unit.kgt_fixtures import make_tiny_lm


@pytest.fixture(scope="module")
def lm(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A :func:`~tests.unit.kgt_fixtures.make_tiny_lm` model as a ``TransformersLLM``."""
    path = make_tiny_lm(tmp_path_factory.mktemp("kgt_lm") / "lm")
    return TransformersLLM(str(path), use_chat_template=False)
