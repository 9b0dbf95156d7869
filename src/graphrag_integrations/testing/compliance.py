"""The compliance suite: the :mod:`~graphrag_integrations.core.index_base` contract as tests.

:class:`IndexComplianceTests` is a pytest base class (in the spirit of langchain-tests'
standard tests, whose retriever suite it includes). A method's test module subclasses it,
names the index class and, when ``from_documents(docs, embedding=...)`` / ``load(path,
embedding=...)`` is not how it is built, says how; every case then runs offline on a corpus of
nine one-sentence documents (:data:`CORPUS`) with the model-free
:class:`~graphrag_integrations.testing.fake_embedder.FakeEmbedder`.

A whole method test module::

    from graphrag_integrations.testing import IndexComplianceTests
    from my_package.index import MyIndex


    class TestMyIndexCompliance(IndexComplianceTests):
        index_class = MyIndex

This module imports pytest, pytest-asyncio and langchain-tests (the ``testing`` extra:
``pip install graphrag-integrations[testing]``); nothing else in the package imports it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.core.documents import SourceDocument, content_id
from graphrag_integrations.core.index_base import BaseIndex
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.errors import EmptyQueryError
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

__all__ = [
    "CORPUS",
    "EXTRA",
    "QUERIES",
    "CorpusDocument",
    "IndexComplianceTests",
    "Probe",
    "compliance_documents",
]


class CorpusDocument(NamedTuple):
    """One document of the compliance corpus."""

    id: str
    title: str
    text: str


class Probe(NamedTuple):
    """A query whose best result must come from document ``doc_id``."""

    query: str
    doc_id: str


#: Nine one-sentence documents on unrelated topics (few shared words, so that a lexical, a
#: dense or a graph index ranks the targeted one first).
CORPUS: tuple[CorpusDocument, ...] = (
    CorpusDocument("paris", "Paris", "Paris is the capital of France and lies on the Seine."),
    CorpusDocument("rome", "Rome", "Rome is the capital of Italy and was built on seven hills."),
    CorpusDocument(
        "curie", "Marie Curie", "Marie Curie won the Nobel Prize in Physics for radioactivity."
    ),
    CorpusDocument(
        "einstein", "Albert Einstein", "Albert Einstein published the theory of relativity."
    ),
    CorpusDocument(
        "carbonara", "Carbonara", "Carbonara is a pasta dish made with eggs, cheese and pepper."
    ),
    CorpusDocument(
        "amazon", "Amazon River", "The Amazon River flows through Brazil into the Atlantic Ocean."
    ),
    CorpusDocument(
        "everest", "Mount Everest", "Mount Everest is the highest mountain in the Himalayas."
    ),
    CorpusDocument("jazz", "Jazz", "Jazz music was born in New Orleans among brass bands."),
    CorpusDocument("chess", "Chess", "Chess is a board game played by two players with pieces."),
)
#: A document inserted (and deleted again) by the lifecycle cases.
EXTRA = CorpusDocument("tokyo", "Tokyo", "Tokyo is the capital of Japan and hosted the Olympics.")
#: Probes over :data:`CORPUS`; their results are compared across lifecycle operations.
QUERIES: tuple[Probe, ...] = (
    Probe("Which river flows through Brazil into the Atlantic Ocean?", "amazon"),
    Probe("Who won the Nobel Prize in Physics for radioactivity?", "curie"),
    Probe("What is the highest mountain in the Himalayas?", "everest"),
)
#: A probe whose answer is :data:`EXTRA`.
EXTRA_QUERY = Probe("What is the capital of Japan that hosted the Olympics?", "tokyo")


def compliance_documents(
    docs: Sequence[CorpusDocument] = CORPUS, *, source: str = "compliance"
) -> list[SourceDocument]:
    """``docs`` as source documents with their ids and ``{"title", "source"}`` metadata.

    Examples
    --------
    >>> compliance_documents()[0]  # doctest: +ELLIPSIS
    SourceDocument(text='Paris is ...', id='paris', metadata={'title': 'Paris', 'source': ...})
    """
    return [
        SourceDocument(d.text, id=d.id, metadata={"title": d.title, "source": source}) for d in docs
    ]


Ranking = list[tuple[str, float]]


def ranking(hits: Sequence[RetrievedPassage]) -> Ranking:
    """``(passage id, score)`` of each hit, in order."""
    return [(h.id, h.score) for h in hits]


class IndexComplianceTests(RetrieversIntegrationTests):
    """Base class of a method's compliance tests (subclass it in the method's test module).

    A subclass sets :attr:`index_class`. It overrides :meth:`build_index` and
    :meth:`load_index` when the index is not built by ``index_class.from_documents(documents,
    embedding=embedder)`` or loaded by ``index_class.load(path, embedding=embedder)``, and
    :meth:`make_embedder` to test with another embedder (default: a fresh
    :class:`~graphrag_integrations.testing.fake_embedder.FakeEmbedder`).

    The cases check the rules of :mod:`graphrag_integrations.core.index_base`:

    * ``from_documents`` from strings, LangChain and LlamaIndex documents (ids and metadata
      kept, the targeted document ranked first);
    * ``insert`` returns the ids added and makes them retrievable; a document already indexed
      is skipped; ``insert`` then ``delete`` answers exactly as a fresh build without it;
    * ``delete`` returns ``True``, then ``False`` with a warning for the same (now unknown) id,
      and an unknown id changes nothing;
    * ``persist`` / ``load`` round trip answers with the same passages and scores;
    * an empty or blank query raises ``EmptyQueryError`` (sync and async);
    * ``k`` is honoured (1, 3 and the default), ``aretrieve`` equals ``retrieve``,
      explanations are JSON-serialisable mappings;
    * langchain-tests' ``RetrieversIntegrationTests`` through ``as_langchain_retriever``, and
      the LangChain and LlamaIndex retrievers return the core results in the same order.

    Examples
    --------
    In ``tests/.../test_compliance_mymethod.py``::

        from graphrag_integrations.testing import IndexComplianceTests
        from my_package import MyIndex

        class TestMyIndexCompliance(IndexComplianceTests):
            index_class = MyIndex

            # only if MyIndex is not built as MyIndex.from_documents(docs, embedding=embedder)
            def build_index(self, documents, embedder):
                return MyIndex.from_documents(documents, embedding=embedder, depth=2)
    """

    #: The :class:`~graphrag_integrations.core.index_base.BaseIndex` subclass under test.
    index_class: ClassVar[type[BaseIndex]]
    #: Absolute tolerance when scores of two indexes are compared.
    score_tolerance: ClassVar[float] = 1e-5

    # -- what a subclass provides -----------------------------------------------------------

    def make_embedder(self) -> Any:
        """The embedder every index of the suite is built with (a fresh one per index)."""
        return FakeEmbedder()

    def build_index(self, documents: Sequence[Any], embedder: Any) -> BaseIndex:
        """Build the index under test from ``documents`` (anything ``load_documents`` takes)."""
        return self.index_class.from_documents(documents, embedding=embedder)

    def load_index(self, path: Path, embedder: Any) -> BaseIndex:
        """Load an index the suite persisted to ``path``."""
        return self.index_class.load(path, embedding=embedder)

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

    # -- langchain-tests' retriever suite -------------------------------------------------
    @property
    def retriever_constructor(self) -> Any:
        """``as_langchain_retriever`` of a fresh index over :data:`CORPUS`."""
        index = self._build(compliance_documents(), self.make_embedder())
        return self._surface(index).as_langchain_retriever

    @property
    def retriever_query_example(self) -> str:
        return QUERIES[0].query

    # -- helpers ----------------------------------------------------------------------------
    def _build(self, documents: Sequence[Any], embedder: Any) -> BaseIndex:
        if not isinstance(getattr(self, "index_class", None), type):
            raise TypeError(f"{type(self).__name__} must set index_class to the index under test")
        index = self.build_index(documents, embedder)
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

    # -- from_documents ---------------------------------------------------------------------
    def test_from_strings(self, embedder: Any) -> None:
        texts = [d.text for d in CORPUS]
        index = self._build(texts, embedder)
        by_id = {d.id: d.text for d in CORPUS}
        for probe in QUERIES:
            expected = by_id[probe.doc_id]
            hit = self._assert_finds(index, Probe(probe.query, content_id(expected)))
            assert hit.text == expected

    def test_from_langchain_documents_keeps_ids_and_metadata(self, embedder: Any) -> None:
        from langchain_core.documents import Document

        docs = [
            Document(page_content=d.text, id=d.id, metadata={"title": d.title, "source": "lc"})
            for d in CORPUS
        ]
        index = self._build(docs, embedder)
        titles = {d.id: d.title for d in CORPUS}
        for probe in QUERIES:
            hit = self._assert_finds(index, probe)
            assert hit.passage.metadata["title"] == titles[probe.doc_id]
            assert hit.passage.metadata["source"] == "lc"

    def test_from_llama_index_documents_keeps_ids_and_metadata(self, embedder: Any) -> None:
        from llama_index.core import Document

        docs = [
            Document(text=d.text, id_=d.id, metadata={"title": d.title, "source": "li"})
            for d in CORPUS
        ]
        index = self._build(docs, embedder)
        titles = {d.id: d.title for d in CORPUS}
        for probe in QUERIES:
            hit = self._assert_finds(index, probe)
            assert hit.passage.metadata["title"] == titles[probe.doc_id]
            assert hit.passage.metadata["source"] == "li"

    # -- insert / delete --------------------------------------------------------------------
    def test_insert_returns_the_ids_added_and_they_are_retrievable(self, index: BaseIndex) -> None:
        assert index.retrieve(EXTRA_QUERY.query, k=1)[0].doc_id != EXTRA.id
        assert index.insert(compliance_documents([EXTRA])) == [EXTRA.id]
        hit = self._assert_finds(index, EXTRA_QUERY)
        assert hit.passage.metadata["title"] == EXTRA.title

    def test_insert_skips_documents_already_indexed(
        self, index: BaseIndex, caplog: pytest.LogCaptureFixture
    ) -> None:
        before = self._answers(index, k=len(CORPUS))
        with caplog.at_level(logging.WARNING):
            added = index.insert(compliance_documents([CORPUS[0], EXTRA]))
        assert added == [EXTRA.id]
        assert any(
            r.levelno == logging.WARNING and CORPUS[0].id in r.getMessage() for r in caplog.records
        )
        assert index.delete(EXTRA.id) is True
        self._assert_same_answers(self._answers(index, k=len(CORPUS)), before)

    def test_insert_then_delete_equals_a_fresh_build(
        self, index: BaseIndex, documents: list[SourceDocument]
    ) -> None:
        fresh = self._build(documents, self.make_embedder())
        index.insert(compliance_documents([EXTRA]))
        assert index.delete(EXTRA.id) is True
        self._assert_same_answers(self._answers(index), self._answers(fresh))

    def test_delete_removes_the_document(
        self, index: BaseIndex, documents: list[SourceDocument]
    ) -> None:
        target = QUERIES[0]
        self._assert_finds(index, target)
        assert index.delete(target.doc_id) is True
        everything = index.retrieve(target.query, k=len(CORPUS))
        assert everything, "the other documents are still indexed"
        assert target.doc_id not in {h.doc_id for h in everything}
        fresh = self._build([d for d in documents if d.id != target.doc_id], self.make_embedder())
        self._assert_same_answers(self._answers(index), self._answers(fresh))

    def test_delete_of_an_unknown_id_returns_false_and_warns(
        self, index: BaseIndex, caplog: pytest.LogCaptureFixture
    ) -> None:
        before = self._answers(index)
        with caplog.at_level(logging.WARNING):
            assert index.delete("no-such-document") is False
        assert any(
            r.levelno == logging.WARNING and "no-such-document" in r.getMessage()
            for r in caplog.records
        )
        self._assert_same_answers(self._answers(index), before)

    def test_second_delete_of_the_same_id_returns_false(self, index: BaseIndex) -> None:
        assert index.delete(CORPUS[0].id) is True
        assert index.delete(CORPUS[0].id) is False

    # -- persistence ------------------------------------------------------------------------
    def test_persist_load_round_trip(self, index: BaseIndex, tmp_path: Path) -> None:
        index.persist(tmp_path / "index")
        loaded = self.load_index(tmp_path / "index", self.make_embedder())
        assert type(loaded) is type(index)
        assert loaded.default_k == index.default_k
        self._assert_same_answers(self._answers(loaded), self._answers(index))
        # the loaded index keeps its lifecycle
        assert loaded.insert(compliance_documents([EXTRA])) == [EXTRA.id]
        self._assert_finds(loaded, EXTRA_QUERY)

    # -- retrieval --------------------------------------------------------------------------
    @pytest.mark.parametrize("query", ["", "   ", "\n\t"])
    def test_empty_query_raises(self, index: BaseIndex, query: str) -> None:
        with pytest.raises(EmptyQueryError):
            index.retrieve(query)

    @pytest.mark.asyncio
    @pytest.mark.parametrize("query", ["", "  "])
    async def test_empty_query_raises_async(self, index: BaseIndex, query: str) -> None:
        with pytest.raises(EmptyQueryError):
            await index.aretrieve(query)

    def test_k_is_honoured(self, index: BaseIndex) -> None:
        assert len(CORPUS) > index.default_k, "the corpus must be larger than the default k"
        query = QUERIES[1].query
        one, three = index.retrieve(query, k=1), index.retrieve(query, k=3)
        assert len(one) == 1
        assert len(three) == 3
        assert one[0].id == three[0].id
        assert len({h.id for h in three}) == 3
        assert len(index.retrieve(query)) == index.default_k
        assert len(index.retrieve(query, k=None)) == index.default_k

    @pytest.mark.asyncio
    async def test_aretrieve_equals_retrieve(self, index: BaseIndex) -> None:
        for probe in QUERIES:
            expected = ranking(index.retrieve(probe.query, k=3))
            got = ranking(await index.aretrieve(probe.query, k=3))
            assert [i for i, _ in got] == [i for i, _ in expected]
            assert [s for _, s in got] == pytest.approx([s for _, s in expected])

    def test_explanations_are_json_serialisable(self, index: BaseIndex) -> None:
        for probe in QUERIES:
            for hit in index.retrieve(probe.query, k=3):
                assert isinstance(hit.score, float)
                text = json.dumps(hit.explanation, allow_nan=False)
                assert json.loads(text) == json.loads(json.dumps(dict(hit.explanation)))
                assert hit.explanation.get("method") in (index.method, None)

    # -- framework retrievers ---------------------------------------------------------------
    def test_langchain_retriever_returns_the_core_order(self, index: BaseIndex) -> None:
        retriever = self._surface(index).as_langchain_retriever(k=3)
        for probe in QUERIES:
            docs = retriever.invoke(probe.query)
            hits = index.retrieve(probe.query, k=3)
            assert [d.id for d in docs] == [h.id for h in hits]
            assert [d.metadata["doc_id"] for d in docs] == [h.doc_id for h in hits]
            assert docs[0].metadata["title"] == hits[0].passage.metadata["title"]

    def test_llama_index_retriever_returns_nodes_with_scores_in_order(
        self, index: BaseIndex
    ) -> None:
        from llama_index.core.schema import NodeWithScore

        retriever = self._surface(index).as_llama_index_retriever(similarity_top_k=3)
        for probe in QUERIES:
            nodes = retriever.retrieve(probe.query)
            hits = index.retrieve(probe.query, k=3)
            assert all(isinstance(n, NodeWithScore) for n in nodes)
            assert [n.node.node_id for n in nodes] == [h.id for h in hits]
            assert [n.node.ref_doc_id for n in nodes] == [h.doc_id for h in hits]
            assert [n.score for n in nodes] == pytest.approx([h.score for h in hits])
