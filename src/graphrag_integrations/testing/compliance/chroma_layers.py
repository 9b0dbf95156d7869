"""The compliance case of vector layers in Chroma (indexes that take ``vector_index=``)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.core.vector_store.chroma_collections import ChromaVectors
from graphrag_integrations.testing.compliance.base import ComplianceBase


class ChromaLayerCases(ComplianceBase):
    """Vector layers in Chroma answer as in memory, and ``drop_vector_store`` drops only
    the index's own collections."""

    def test_vector_layers_in_chroma_answer_alike_and_drop_only_their_collections(
        self, index: BaseIndex, documents: list[SourceDocument], tmp_path: Path
    ) -> None:
        if "vector_index" not in inspect.signature(self.index_class).parameters:
            pytest.skip(f"{self.index_class.__name__} takes no vector_index= (vectors in memory)")
        factory = ChromaVectors(tmp_path / "chroma")  # embedded persistent Chroma
        in_chroma = self._build(documents, self.make_embedder(), vector_index=factory)
        self._assert_same_answers(self._answers(in_chroma), self._answers(index))
        other = self._build(documents[:2], self.make_embedder(), vector_index=factory)
        before = {c.name for c in factory.collections()}
        dropped = in_chroma.drop_vector_store()
        assert dropped, "an index with its vectors in Chroma dropped no collection"
        assert {c.name for c in factory.collections()} == before - set(dropped)
        assert sorted(other.drop_vector_store()) == sorted(before - set(dropped))
        assert factory.collections() == []
