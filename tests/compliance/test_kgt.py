"""ParseKGTranslatorRetriever (KG-Translator) passes the index compliance suite.

The translator is the tiny seeded LM of ``tests/unit/kgt_fixtures.py`` (offline, random but
deterministic); passage vectors are lazy (the default) and the product top-up fills k.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.core.index_base import BaseIndex
from graphrag_integrations.core.llm import TransformersLLM
from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from graphrag_integrations.testing import IndexComplianceTests
from tests.unit.kgt_fixtures import make_tiny_lm


@functools.cache
def tiny_translator() -> TransformersLLM:
    folder = Path(tempfile.mkdtemp(prefix="kgt-compliance-")) / "lm"
    return TransformersLLM(str(make_tiny_lm(folder)), use_chat_template=False)


class TestKGTranslatorCompliance(IndexComplianceTests):
    index_class = ParseKGTranslatorRetriever

    def build_index(self, documents: Sequence[Any], embedder: Any, **options: Any) -> BaseIndex:
        return ParseKGTranslatorRetriever.from_documents(
            documents, embedding=embedder, translator=tiny_translator(), **options
        )

    def load_index(self, path: Path, embedder: Any) -> BaseIndex:
        return ParseKGTranslatorRetriever.load(
            path, embedding=embedder, translator=tiny_translator()
        )
