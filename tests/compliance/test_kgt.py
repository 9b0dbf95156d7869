"""ParseKGTranslatorRetriever (KG-Translator) passes the index compliance suite.

The translator is the tiny seeded LM of ``tests/unit/kgt_fixtures.py`` (offline, random but
deterministic); passage vectors are lazy (the default) and the default RRF fusion fills k.
Beam search runs in full (``early_stopping=False``, the paper's): the suite checks lifecycle
rules, not translation quality, and with this random LM the default early stop ends beams
that would have traced a probe's passage.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.llm import TransformersLLM
from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from graphrag_integrations.methods.kgt.params import KGTQueryParams
from graphrag_integrations.testing import IndexComplianceTests
from tests.unit.kgt_fixtures import make_tiny_lm


@functools.cache
def tiny_translator() -> TransformersLLM:
    root = Path(tempfile.mkdtemp(prefix="kgt-compliance-"))
    atexit.register(shutil.rmtree, root, True)  # the tiny model lives for the test session
    return TransformersLLM(str(make_tiny_lm(root / "lm")), use_chat_template=False)


class TestKGTranslatorCompliance(IndexComplianceTests):
    index_class = ParseKGTranslatorRetriever

    def build_index(self, documents: Sequence[Any], embedder: Any, **options: Any) -> BaseIndex:
        # Full beam search, otherwise the defaults (RRF fusion included): with the random tiny
        # LM, early stopping changes the beams and "What is the highest mountain in the
        # Himalayas?" no longer finds its passage first (RRF or not). The translator is a
        # given object, so translator_dtype does not apply (it keeps its float32). A case
        # passing its own preset or params (the preset + params refusal) keeps them.
        if "preset" not in options and "query_params" not in options:
            options["query_params"] = KGTQueryParams(early_stopping=False)
        return ParseKGTranslatorRetriever.from_documents(
            documents, embedding=embedder, translator=tiny_translator(), **options
        )

    def load_index(self, path: Path, embedder: Any) -> BaseIndex:
        return ParseKGTranslatorRetriever.load(
            path, embedding=embedder, translator=tiny_translator()
        )
