"""What the command-line tests need to build an index of any registered method cheaply
(the fixtures themselves are in ``tests/unit/cli/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_integrations.core.registry import MethodRegistration

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "eval"
TEXTS = {"paris.txt": "Paris is the capital of France.", "rome.txt": "Rome is in Italy."}
QUESTION = "Where is Rome?"


def index_options(method: str, request: pytest.FixtureRequest) -> list[str]:
    """The cheapest offline ``index`` options of ``method`` (none for most)."""
    if method == "qcg":
        return ["--option", f"query_set={request.getfixturevalue('query_set')}"]
    if method == "kgt":
        return ["--option", f"translator={request.getfixturevalue('tiny_lm')}"]
    return []


def method_input(reg: MethodRegistration, corpus: Path) -> Path:
    """The ``--input`` of ``reg``: the MetaQA fixture for a triples method, else ``corpus``."""
    return FIX / "metaqa" if "triples" in reg.inputs else corpus
