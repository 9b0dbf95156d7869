"""What every compliance case builds on: :class:`ComplianceBase`, the hooks a method's test
class overrides (how to build, load and embed), the fixtures, and the helpers that build
an index and compare answers."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.testing.compliance.corpus import QUERIES, Probe, compliance_documents
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

Ranking = list[tuple[str, float]]


def ranking(hits: Sequence[RetrievedPassage]) -> Ranking:
    """``(passage id, score)`` of each hit, in order."""
    return [(h.id, h.score) for h in hits]


class ComplianceBase:
    """The hooks, fixtures and helpers of
    :class:`~graphrag_integrations.testing.compliance.IndexComplianceTests` (every case mixin
    builds on it; the hooks are documented there)."""

    #: The :class:`~graphrag_integrations.core.index.base.BaseIndex` subclass under test.
    index_class: ClassVar[type[BaseIndex]]
    #: Absolute tolerance when scores of two indexes are compared.
    score_tolerance: ClassVar[float] = 1e-5

    # -- what a subclass provides -----------------------------------------------------------

    def make_embedder(self) -> Any:
        """The embedder every index of the suite is built with (a fresh one per index)."""
        return FakeEmbedder()

    def build_index(self, documents: Sequence[Any], embedder: Any, **options: Any) -> BaseIndex:
        """Build the index under test from ``documents`` (anything ``load_documents`` takes).

        ``options`` are document-load options (``errors="skip"``, ``report=``) that must
        reach ``from_documents``; an override that takes none fails the cases using them.
        """
        return self.index_class.from_documents(documents, embedding=embedder, **options)

    def load_index(self, path: Path, embedder: Any) -> BaseIndex:
        """Load an index the suite persisted to ``path``."""
        return self.index_class.load(path, embedding=embedder)

    def make_graph_store(self, options: dict[str, Any]) -> Any:
        """The ``graph_store=`` of the next index the suite builds (``options``: that build's
        keyword arguments), or ``None`` to pass none (the index's own default). Indexes
        without a ``graph_store`` parameter never get one. Override it to run the suite
        with the graph elsewhere (see
        :class:`~graphrag_integrations.testing.graph_store_compliance.FalkorDBComplianceTests`).
        """
        return None

    def make_other_dimension_embedder(self, embedder: Any) -> Any:
        """An embedder with ``embedder``'s model name and another dimension (``None``: the
        dimension case is skipped). Default: a :class:`FakeEmbedder` of twice the size."""
        dimension = getattr(embedder, "dimension", None)
        name = getattr(embedder, "model_name", None)
        if not isinstance(dimension, int) or not isinstance(name, str):
            return None
        return FakeEmbedder(dimension * 2, model_name=name)

    # -- fixtures ---------------------------------------------------------------------------
    @pytest.fixture
    def embedder(self) -> Any:
        """:meth:`make_embedder`."""
        return self.make_embedder()

    @pytest.fixture
    def documents(self) -> list[SourceDocument]:
        """The :data:`CORPUS` as source documents."""
        return compliance_documents()

    @pytest.fixture
    def index(self, documents: list[SourceDocument], embedder: Any) -> BaseIndex:
        """A fresh index over :data:`CORPUS`."""
        return self._build(documents, embedder)

    # -- helpers ----------------------------------------------------------------------------
    def _build(self, documents: Sequence[Any], embedder: Any, **options: Any) -> BaseIndex:
        if not isinstance(getattr(self, "index_class", None), type):
            raise TypeError(f"{type(self).__name__} must set index_class to the index under test")
        if "graph_store" in inspect.signature(self.index_class).parameters:
            graph_store = self.make_graph_store(options)
            if graph_store is not None:
                options.setdefault("graph_store", graph_store)
        if options and not any(
            p.kind is inspect.Parameter.VAR_KEYWORD
            for p in inspect.signature(self.build_index).parameters.values()
        ):
            raise TypeError(
                f"{type(self).__name__}.build_index must accept **options (document-load "
                "options such as errors='skip') and pass them to from_documents"
            )
        index = self.build_index(documents, embedder, **options)
        assert isinstance(index, self.index_class), f"build_index returned {type(index)}"
        return index

    @staticmethod
    def _surface(index: BaseIndex) -> FrameworkSurface:
        assert isinstance(index, FrameworkSurface), (
            f"{type(index).__name__} does not mix in adapters.surface.FrameworkSurface"
        )
        return index

    def _answers(self, index: BaseIndex, k: int = 3) -> list[Ranking]:
        return [ranking(index.retrieve(probe.query, k=k)) for probe in QUERIES]

    def _assert_same_answers(self, got: list[Ranking], expected: list[Ranking]) -> None:
        for probe, g, e in zip(QUERIES, got, expected, strict=True):
            assert [i for i, _ in g] == [i for i, _ in e], probe.query
            assert [s for _, s in g] == pytest.approx(
                [s for _, s in e], abs=self.score_tolerance
            ), probe.query

    @staticmethod
    def _assert_finds(index: BaseIndex, probe: Probe) -> RetrievedPassage:
        top = index.retrieve(probe.query, k=1)
        assert len(top) == 1, probe.query
        assert top[0].doc_id == probe.doc_id, (probe.query, top[0].doc_id)
        return top[0]
