"""The compliance suite: the :mod:`~graphrag_integrations.core.index.base` contract as tests.

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

import asyncio
import inspect
import json
import logging
import math
import re
import shutil
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.index.checkpoint import INDEX_FOLDER, read_checkpoint
from graphrag_integrations.core.index.locking import is_guarded
from graphrag_integrations.core.index.store import ChromaVectors
from graphrag_integrations.core.params import InvalidParameterError
from graphrag_integrations.core.persistence import (
    MANIFEST_NAME,
    Manifest,
    atomic_directory,
    read_manifest,
    write_manifest,
)
from graphrag_integrations.core.text.documents import LoadReport, SourceDocument, content_id
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.errors import (
    CorruptIndexError,
    DocumentLoadError,
    EmptyQueryError,
    IndexExistsError,
    IndexMismatchError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
)
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

__all__ = [
    "CONCURRENT_EXTRAS",
    "CORPUS",
    "DAMAGES",
    "EXTRA",
    "FILTER_CASES",
    "FILTER_QUERIES",
    "INVALID_K",
    "LONG_QUERY",
    "MUTATIONS",
    "PAIR",
    "QUERIES",
    "CorpusDocument",
    "IndexComplianceTests",
    "ParagraphSplitter",
    "Probe",
    "compliance_documents",
    "filter_documents",
    "long_document",
    "snapshot",
    "write_foreign_files",
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
#: Probes by the id of the document they target.
QUERIES_BY_ID: dict[str, Probe] = {
    "rome": Probe("Which city is the capital of Italy and was built on seven hills?", "rome"),
    **{p.doc_id: p for p in QUERIES},
}
#: More documents for the concurrency cases (inserted by concurrent threads).
CONCURRENT_EXTRAS: tuple[CorpusDocument, ...] = (
    CorpusDocument("nile", "Nile", "The Nile is a long river that flows north through Egypt."),
    CorpusDocument("violin", "Violin", "The violin is a string instrument played with a bow."),
    CorpusDocument("etna", "Etna", "Etna is an active volcano on the island of Sicily."),
)
#: The mutations a writer thread applies while readers query (``delete`` of a corpus
#: document, re-insert, inserts and deletes of extra documents).
MUTATIONS: tuple[tuple[str, CorpusDocument], ...] = (
    ("insert", EXTRA),
    ("delete", CORPUS[5]),
    ("insert", CONCURRENT_EXTRAS[0]),
    ("delete", EXTRA),
    ("insert", CORPUS[5]),
    ("delete", CONCURRENT_EXTRAS[0]),
)
#: Probes of the concurrency cases (their answers change with :data:`MUTATIONS`).
CONCURRENT_QUERIES: tuple[Probe, ...] = (
    *QUERIES,
    EXTRA_QUERY,
    Probe("Which long river flows north through Egypt?", "nile"),
)
#: The last sentence of :func:`long_document` and a probe that targets it.
LONG_TARGET = "Ada Lovelace wrote the first program for the Analytical Engine of Charles Babbage."
LONG_QUERY = Probe("Who wrote the first program for the Analytical Engine?", "long")
#: A two-paragraph document (Paris, then Rome) for the splitter cases: id ``"pair"``.
PAIR = CorpusDocument("pair", "Capitals", f"{CORPUS[0].text}\n\n{CORPUS[1].text}")
#: The new version of ``"paris"`` that ``upsert`` puts in place of the old one.
PARIS_V2 = CorpusDocument(
    "paris", "Paris", "The Louvre in Paris displays the Mona Lisa painted by Leonardo da Vinci."
)
PARIS_V2_QUERY = Probe("Which museum displays the Mona Lisa painted by Leonardo da Vinci?", "paris")
#: Upper bound (seconds) of every wait of the concurrency cases: a deadlock fails, not hangs.
CONCURRENCY_TIMEOUT = 120.0
#: ``k`` values every ``retrieve`` must refuse, with the error each must raise.
INVALID_K: tuple[tuple[object, type[Exception]], ...] = (
    (0, InvalidArgumentError),
    (-1, InvalidArgumentError),
    ("3", InvalidArgumentTypeError),
    (2.0, InvalidArgumentTypeError),
    (True, InvalidArgumentTypeError),
)
#: Text of a file that is not valid UTF-8 (Latin-1 bytes), for the ``errors="skip"`` case.
UNDECODABLE = "Caf\u00e9 cr\u00e8me is served in Besan\u00e7on.".encode("latin-1")


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


def filter_documents() -> list[SourceDocument]:
    """:data:`CORPUS` with the metadata the filter cases select on: ``title``, ``source``,
    ``n`` (the position, 0-8) and ``group`` (``"even"`` / ``"odd"`` position).

    Examples
    --------
    >>> filter_documents()[5].metadata
    {'title': 'Amazon River', 'source': 'compliance', 'n': 5, 'group': 'odd'}
    """
    return [
        SourceDocument(
            d.text,
            id=d.id,
            metadata={
                "title": d.title,
                "source": "compliance",
                "n": i,
                "group": "odd" if i % 2 else "even",
            },
        )
        for i, d in enumerate(CORPUS)
    ]


#: Probes of the filter cases (documents with at least two entities, so every method finds
#: them): curie (n 2, even) and amazon (n 5, odd).
FILTER_QUERIES: tuple[Probe, ...] = (QUERIES[1], QUERIES[0])
#: (LangChain dict filter, the same condition written out in Python) for the filter cases.
FILTER_CASES: tuple[tuple[dict[str, Any], Callable[[dict[str, Any]], bool]], ...] = (
    ({"group": "odd"}, lambda m: m.get("group") == "odd"),
    ({"n": {"$gte": 2, "$lt": 6}}, lambda m: 2 <= m.get("n", -1) < 6),
    ({"n": {"$ne": 5}}, lambda m: "n" in m and m["n"] != 5),
    (
        {"title": {"$in": ["Marie Curie", "Jazz"]}},
        lambda m: m.get("title") in ("Marie Curie", "Jazz"),
    ),
    ({"doc_id": {"$nin": ["curie", "amazon"]}}, lambda m: m["doc_id"] not in ("curie", "amazon")),
    (
        {"$or": [{"n": 5}, {"$and": [{"group": "even"}, {"n": {"$gt": 4}}]}]},
        lambda m: m.get("n") == 5 or (m.get("group") == "even" and m.get("n", -1) > 4),
    ),
    ({"title": "Atlantis"}, lambda m: False),
)


def long_document(splitter: Any, factor: float = 2.5) -> str:
    """A text of about ``factor`` times ``splitter.chunk_size`` tokens of ``splitter``'s
    tokenizer: filler paragraphs, then :data:`LONG_TARGET` (so the default splitter of an
    index cuts it into at least two chunks, the target in the last)."""
    paragraphs: list[str] = []
    text = LONG_TARGET
    while len(splitter.tokenizer.token_offsets(text)) < factor * splitter.chunk_size:
        i = len(paragraphs)
        paragraphs.append(
            f"Paragraph {i} of the logbook notes calm weather, grey tides and {i % 7 + 2} "
            "gulls near the harbour wall before the evening watch."
        )
        text = "\n\n".join([*paragraphs, LONG_TARGET])
    return text


class ParagraphSplitter:
    """A LangChain-style text splitter (``split_text``): one piece per paragraph; it records
    the texts it was given."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def split_text(self, text: str) -> list[str]:
        self.calls.append(text)
        return [p.strip() for p in text.split("\n\n") if p.strip()]


def llama_index_sentence_splitter() -> Any:
    """A LlamaIndex ``SentenceSplitter`` that cuts :data:`PAIR` into its two sentences
    (whitespace tokens, so it needs no tokenizer download)."""
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(chunk_size=16, chunk_overlap=0, tokenizer=str.split)


Ranking = list[tuple[str, float]]


def ranking(hits: Sequence[RetrievedPassage]) -> Ranking:
    """``(passage id, score)`` of each hit, in order."""
    return [(h.id, h.score) for h in hits]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Relative POSIX path -> content of every file under ``folder`` (hidden ones too).

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("x")
    >>> snapshot(d)
    {'a.txt': b'x'}
    """
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def write_foreign_files(folder: Path) -> dict[str, bytes]:
    """Fill ``folder`` with a user's files (a nested one too); returns their :func:`snapshot`.

    Examples
    --------
    >>> import tempfile
    >>> sorted(write_foreign_files(Path(tempfile.mkdtemp()) / "docs"))
    ['notes/todo.md', 'thesis.txt']
    """
    (folder / "notes").mkdir(parents=True, exist_ok=True)
    (folder / "thesis.txt").write_text("Years of work, not an index.", encoding="utf-8")
    (folder / "notes" / "todo.md").write_text("- back up the thesis", encoding="utf-8")
    return snapshot(folder)


def _zero_bytes(path: Path) -> bool:
    if path.stat().st_size == 0:
        return False
    path.write_bytes(b"")
    return True


def _flip_a_byte(path: Path) -> bool:
    data = bytearray(path.read_bytes())
    if not data:
        return False
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    return True


def _edit_text(path: Path) -> bool:
    """Change one word (a corpus word if there is one, else one letter) of a text file."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return False
    for word, replacement in (("Rome", "Nome"), ("Paris", "Parus"), ("Jazz", "Jizz")):
        if word in text:
            path.write_text(text.replace(word, replacement, 1), encoding="utf-8")
            return True
    letter = re.search(r"[A-Za-z]", text)
    if letter is None:
        return False
    i = letter.start()
    path.write_text(text[:i] + text[i].swapcase() + text[i + 1 :], encoding="utf-8")
    return True


#: Ways a persisted file gets damaged: each changes the file in place and says whether it
#: could (a zero-byte file cannot be emptied, a binary file has no text to edit).
DAMAGES: dict[str, Callable[[Path], bool]] = {
    "zero-byte": _zero_bytes,
    "flipped-byte": _flip_a_byte,
    "edited-text": _edit_text,
}


def _mutate(index: BaseIndex, action: str, doc: CorpusDocument) -> None:
    """Apply one of :data:`MUTATIONS` (it must change the index)."""
    if action == "insert":
        assert index.insert(compliance_documents([doc])) == [doc.id], (action, doc.id)
    else:
        assert index.delete(doc.id) is True, (action, doc.id)


class IndexComplianceTests(RetrieversIntegrationTests):
    """Base class of a method's compliance tests (subclass it in the method's test module).

    A subclass sets :attr:`index_class`. It overrides :meth:`build_index` and
    :meth:`load_index` when the index is not built by ``index_class.from_documents(documents,
    embedding=embedder)`` or loaded by ``index_class.load(path, embedding=embedder)``, and
    :meth:`make_embedder` to test with another embedder (default: a fresh
    :class:`~graphrag_integrations.testing.fake_embedder.FakeEmbedder`).

    The cases check the rules of :mod:`graphrag_integrations.core.index.base`:

    * ``from_documents`` from strings, LangChain and LlamaIndex documents (ids and metadata
      kept, the targeted document ranked first);
    * ``insert`` returns the ids added and makes them retrievable; a document already indexed
      is skipped; ``insert`` then ``delete`` answers exactly as a fresh build without it;
    * ``delete`` returns ``True``, then ``False`` with a warning for the same (now unknown) id,
      and an unknown id changes nothing;
    * ``persist`` / ``load`` round trip answers with the same passages and scores;
    * data safety (:mod:`~graphrag_integrations.core.persistence`): ``persist`` into a folder
      of foreign files is refused and changes nothing, ``overwrite=True`` writes the index and
      keeps them; ``persist`` over another method's index is refused; every file listed in
      the manifest's checksums, emptied, with a flipped byte or with edited text, makes
      ``load`` raise ``CorruptIndexError`` naming it; an embedder with the recorded model
      name but another dimension fails at ``load``; stale temporary siblings are cleaned;
      ``persist`` over another index of the same method (another ``index_id``, or one
      recorded without an id) is refused and changes nothing unless ``overwrite=True``, while
      the same index (after ``insert``, or loaded from that folder) persists again into its
      folder; build ``timings`` come back from ``load`` (``nan`` when not recorded);
    * ``from_documents`` and ``insert`` take ``errors="skip"`` (and ``report=``): an
      undecodable file in a folder is left out and reported, the others indexed; a ``str``
      naming a folder or file (or shaped like a file path) is refused with a one-line
      ``DocumentLoadError`` naming ``Path(...)``, never indexed as text;
    * chunking and document management: a document longer than the method's
      ``chunk_size`` is cut by its default splitter (hits are chunks, ids ``"<doc_id>#<i>"``,
      ``delete(doc_id)`` removes every chunk), a LangChain text splitter or a LlamaIndex node
      parser given as ``splitter=`` is used by ``from_documents`` and later ``insert`` calls,
      ``chunking=False`` keeps documents whole, ``doc_ids()`` lists the documents,
      ``upsert`` replaces a document by id (answers equal a fresh build of the new corpus);
    * an empty or blank query raises ``EmptyQueryError`` (sync and async);
    * ``k`` is honoured (1, 3 and the default), invalid ``k`` (``0``, ``-1``, ``"3"``,
      ``2.0``, ``True``) raises ``InvalidArgumentError``, ``aretrieve`` equals ``retrieve``,
      explanations are JSON-serialisable mappings;
    * the API contract: ``from_documents`` names every argument (no ``**kwargs``; it takes
      ``index_params``, ``query_params`` and ``preset``, and ``embedding`` when the
      constructor does), ``as_retriever(k=2)`` returns 2 results and a call's ``k`` wins, an
      unknown ``as_retriever`` override raises ``InvalidParameterError``, and ``preset``
      with a params object raises ``InvalidArgumentError``;
    * concurrency (:mod:`~graphrag_integrations.core.index.locking`): the mutating methods hold
      the index's write lock and ``retrieve`` / ``persist`` its read lock; threads querying
      while another inserts and deletes (:data:`MUTATIONS`) get no error and every answer is
      the answer of a sequential replay after some number of those mutations (never half of
      one); threads inserting distinct documents at once each add theirs exactly once, two
      inserting the same one add it once; ``ainsert`` / ``adelete`` work and the event loop
      keeps running while they wait for the lock;
    * metadata filters (:mod:`~graphrag_integrations.core.retrieval.filters`) over
      :func:`filter_documents`: ``retrieve(q, k, filter=...)`` returns only matching passages
      (each of :data:`FILTER_CASES` checked against its Python predicate; the targeted
      document first when it matches), ``k`` is honoured, a filter matching nothing (or an
      unknown key) returns ``[]`` (core, async, LangChain, LlamaIndex), LangChain
      ``invoke(q, filter=)`` / ``as_langchain_retriever(filter=, search_kwargs=)`` and
      LlamaIndex ``MetadataFilters`` (``OR``, ``NOT``, nested; retriever and query engine)
      restrict results, inserted documents are filtered by their metadata, and a malformed
      filter raises ``ValueError`` before the index runs;
    * checkpointed builds (:mod:`~graphrag_integrations.core.index.checkpoint`): a
      ``from_documents(..., checkpoint_dir=, checkpoint_every=)`` killed in its second batch
      (before it is saved) resumes from the first and ends answering as an uninterrupted
      checkpointed build;
    * langchain-tests' ``RetrieversIntegrationTests`` through ``as_langchain_retriever``, and
      the LangChain and LlamaIndex retrievers return the core results in the same order.

    Examples
    --------
    In ``tests/.../test_compliance_mymethod.py``::

        from graphrag_integrations.testing import IndexComplianceTests
        from my_package import MyIndex

        class TestMyIndexCompliance(IndexComplianceTests):
            index_class = MyIndex

            # only if MyIndex is not built as MyIndex.from_documents(docs, embedding=embedder);
            # ``options`` are load options (errors=, report=) to pass on to from_documents
            def build_index(self, documents, embedder, **options):
                return MyIndex.from_documents(documents, embedding=embedder, depth=2, **options)
    """

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

    def test_delete_many_equals_deleting_one_by_one(
        self, index: BaseIndex, documents: list[SourceDocument]
    ) -> None:
        gone = [CORPUS[0].id, CORPUS[1].id]
        assert index.delete_many([gone[0], "no-such-document", gone[1], gone[0]]) == gone
        fresh = self._build([d for d in documents if d.id not in gone], self.make_embedder())
        self._assert_same_answers(self._answers(index), self._answers(fresh))

    # -- checkpointed builds (core.index.checkpoint) ---------------------------------------------
    def test_an_interrupted_checkpointed_build_resumes(
        self, documents: list[SourceDocument], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        every = 4
        whole = self._build(
            documents,
            self.make_embedder(),
            checkpoint_dir=tmp_path / "whole",
            checkpoint_every=every,
        )

        class Killed(Exception):
            pass

        persist = self.index_class.persist
        calls: list[Path] = []

        def killed(index: BaseIndex, path: Path, **kwargs: Any) -> None:
            calls.append(path)
            if len(calls) > 1:  # the second batch is built, the process dies before saving it
                raise Killed("killed during the second batch")
            persist(index, path, **kwargs)

        monkeypatch.setattr(self.index_class, "persist", killed)
        with pytest.raises(Killed):
            self._build(
                documents,
                self.make_embedder(),
                checkpoint_dir=tmp_path / "ckpt",
                checkpoint_every=every,
            )
        monkeypatch.undo()
        assert read_checkpoint(tmp_path / "ckpt")["done"] == [d.id for d in documents[:every]]
        resumed = self._build(
            documents,
            self.make_embedder(),
            checkpoint_dir=tmp_path / "ckpt",
            checkpoint_every=every,
        )
        assert read_checkpoint(tmp_path / "ckpt")["done"] == [d.id for d in documents]
        self._assert_same_answers(
            self._answers(resumed, k=len(CORPUS)), self._answers(whole, k=len(CORPUS))
        )
        loaded = self.load_index(tmp_path / "ckpt" / INDEX_FOLDER, self.make_embedder())
        self._assert_same_answers(self._answers(loaded), self._answers(whole))

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

    # -- data safety (core.persistence) -----------------------------------------------------
    def test_persist_refuses_a_folder_of_foreign_files(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        folder = tmp_path / "my_docs"
        write_foreign_files(folder)
        before = snapshot(tmp_path)
        with pytest.raises(IndexExistsError, match="non-empty folder"):
            index.persist(folder)
        assert snapshot(tmp_path) == before, "persist changed or left files behind"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["my_docs"]

    def test_persist_with_overwrite_keeps_foreign_files(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        folder = tmp_path / "my_docs"
        foreign = write_foreign_files(folder)
        index.persist(folder, overwrite=True)
        kept = snapshot(folder)
        assert {rel: kept.get(rel) for rel in foreign} == foreign
        expected = self._answers(index)
        self._assert_same_answers(
            self._answers(self.load_index(folder, self.make_embedder())), expected
        )
        # now an index of this method: a re-persist needs no overwrite and still keeps them
        index.persist(folder)
        kept = snapshot(folder)
        assert {rel: kept.get(rel) for rel in foreign} == foreign
        self._assert_same_answers(
            self._answers(self.load_index(folder, self.make_embedder())), expected
        )

    def test_persist_refuses_an_index_of_another_method(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        target = tmp_path / "other"
        other = f"not-{index.method}"
        with atomic_directory(target) as tmp:
            (tmp / "data.bin").write_bytes(b"another method's data")
            write_manifest(tmp, Manifest(method=other))
        before = snapshot(tmp_path)
        with pytest.raises(IndexExistsError, match=re.escape(repr(other))):
            index.persist(target)
        assert snapshot(tmp_path) == before
        index.persist(target, overwrite=True)
        assert read_manifest(target).method == index.method
        loaded = self.load_index(target, self.make_embedder())
        self._assert_same_answers(self._answers(loaded), self._answers(index))

    def test_persist_refuses_another_index_of_the_same_method(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        target = tmp_path / "index"
        index.persist(target)
        assert read_manifest(target).index_id == index.index_id
        other = self._build(compliance_documents(CORPUS[:4]), self.make_embedder())
        assert other.index_id != index.index_id
        before = snapshot(tmp_path)
        with pytest.raises(IndexExistsError, match=r"pass overwrite=True") as error:
            other.persist(target)
        assert str(target) in str(error.value) and "\n" not in str(error.value)
        assert snapshot(tmp_path) == before, "the refused persist changed the folder"
        loaded = self.load_index(target, self.make_embedder())
        self._assert_same_answers(self._answers(loaded), self._answers(index))
        other.persist(target, overwrite=True)
        assert read_manifest(target).index_id == other.index_id
        loaded = self.load_index(target, self.make_embedder())
        self._assert_same_answers(self._answers(loaded), self._answers(other))

    def test_the_same_index_persists_again_into_its_folder(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        target = tmp_path / "index"
        index.persist(target)
        assert index.insert(compliance_documents([EXTRA])) == [EXTRA.id]
        index.persist(target)  # the same index: no overwrite needed
        loaded = self.load_index(target, self.make_embedder())
        assert loaded.index_id == index.index_id
        self._assert_finds(loaded, EXTRA_QUERY)
        assert loaded.delete(EXTRA.id) is True
        loaded.persist(target)  # a loaded index too
        assert read_manifest(target).index_id == index.index_id
        again = self.load_index(target, self.make_embedder())
        self._assert_same_answers(self._answers(again), self._answers(loaded))

    def test_an_index_recorded_without_an_index_id_is_not_replaced(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        target = tmp_path / "index"
        index.persist(target)
        manifest = target / MANIFEST_NAME
        data = json.loads(manifest.read_text(encoding="utf-8"))
        del data["index_id"]  # as written before index ids existed
        manifest.write_text(json.dumps(data), encoding="utf-8")
        before = snapshot(tmp_path)
        with pytest.raises(IndexExistsError, match=r"without an index id.*pass overwrite=True"):
            index.persist(target)
        assert snapshot(tmp_path) == before
        self.load_index(target, self.make_embedder())  # it still loads
        index.persist(target, overwrite=True)
        assert read_manifest(target).index_id == index.index_id

    def test_build_timings_are_kept_through_load(self, index: BaseIndex, tmp_path: Path) -> None:
        timings = getattr(index, "timings", None)
        if not isinstance(timings, dict):
            pytest.skip(f"{type(index).__name__} reports no build timings")
        assert any(value > 0 for value in timings.values()), timings
        target = tmp_path / "index"
        index.persist(target)
        assert read_manifest(target).timings == pytest.approx(timings)
        loaded_timings = getattr(self.load_index(target, self.make_embedder()), "timings", None)
        assert loaded_timings == pytest.approx(timings)
        # a manifest written before timings were recorded: unknown (nan), never 0
        manifest = target / MANIFEST_NAME
        data = json.loads(manifest.read_text(encoding="utf-8"))
        del data["timings"]
        manifest.write_text(json.dumps(data), encoding="utf-8")
        unknown = getattr(self.load_index(target, self.make_embedder()), "timings", None)
        assert isinstance(unknown, dict) and set(unknown) == set(timings)
        assert all(math.isnan(value) for value in unknown.values()), unknown

    @pytest.mark.parametrize("damage", sorted(DAMAGES))
    def test_a_damaged_file_is_named_at_load(
        self, index: BaseIndex, tmp_path: Path, damage: str
    ) -> None:
        source = tmp_path / "index"
        index.persist(source)
        files = read_manifest(source).files
        assert files, "the manifest lists no checksums: persist must write via atomic_directory"
        damaged = 0
        for n, rel in enumerate(sorted(files)):
            copy = tmp_path / f"copy-{n}"
            shutil.copytree(source, copy)
            if not DAMAGES[damage](copy / rel):
                continue
            damaged += 1
            with pytest.raises(CorruptIndexError) as error:
                self.load_index(copy, self.make_embedder())
            assert rel in str(error.value), f"{damage} {rel}: {error.value}"
        if not damaged:
            pytest.skip(f"no file of the index can be damaged as {damage!r}")

    def test_load_with_an_embedder_of_another_dimension_fails(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        index.persist(tmp_path / "index")
        if read_manifest(tmp_path / "index").embedding_model is None:
            pytest.skip("the index records no embedding model")
        other = self.make_other_dimension_embedder(self.make_embedder())
        if other is None:
            pytest.skip("make_other_dimension_embedder gave no embedder")
        with pytest.raises(IndexMismatchError, match="dimension"):
            self.load_index(tmp_path / "index", other)

    def test_stale_siblings_of_killed_writers_are_cleaned_at_load(
        self, index: BaseIndex, tmp_path: Path
    ) -> None:
        index.persist(tmp_path / "index")
        for name in (".index.tmp-abcd1234", ".index.old-abcd1234"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "partial.bin").write_bytes(b"0" * 64)
        self.load_index(tmp_path / "index", self.make_embedder())
        assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]

    # -- document-load options ----------------------------------------------------------------
    def test_undecodable_files_are_skipped_with_errors_skip(
        self, embedder: Any, tmp_path: Path
    ) -> None:
        folder = tmp_path / "docs"
        folder.mkdir()
        for d in CORPUS:
            (folder / f"{d.id}.txt").write_text(d.text, encoding="utf-8")
        (folder / "latin1.txt").write_bytes(UNDECODABLE)
        with pytest.raises(DocumentLoadError, match=r"latin1\.txt"):
            self._build([folder], embedder)
        report = LoadReport()
        index = self._build([folder], embedder, errors="skip", report=report)
        assert [Path(path).name for path, _ in report.skipped] == ["latin1.txt"]
        hits = index.retrieve(QUERIES[0].query, k=len(CORPUS))
        assert sorted(h.passage.metadata["file_name"] for h in hits) == sorted(
            f"{d.id}.txt" for d in CORPUS
        )
        by_id = {d.id: d.text for d in CORPUS}
        for probe in QUERIES:
            self._assert_finds(index, Probe(probe.query, content_id(by_id[probe.doc_id])))
        # insert takes the same options
        more = tmp_path / "more"
        more.mkdir()
        (more / "tokyo.txt").write_text(EXTRA.text, encoding="utf-8")
        (more / "latin1.txt").write_bytes(UNDECODABLE)
        report = LoadReport()
        assert index.insert([more], errors="skip", report=report) == [content_id(EXTRA.text)]
        assert report.count == 1
        self._assert_finds(index, Probe(EXTRA_QUERY.query, content_id(EXTRA.text)))

    def test_a_string_naming_a_path_is_refused_not_indexed_as_text(
        self, index: BaseIndex, embedder: Any, tmp_path: Path
    ) -> None:
        folder = tmp_path / "my_docs"
        folder.mkdir()
        for d in CORPUS[:2]:
            (folder / f"{d.id}.txt").write_text(d.text, encoding="utf-8")
        names = [f"{folder}/", str(folder), str(folder / "paris.txt"), "no_such_file.txt"]
        for name in names:
            with pytest.raises(DocumentLoadError, match=re.escape(f"Path({name!r})")):
                self._build(name, embedder)
        before = index.doc_ids()
        with pytest.raises(DocumentLoadError, match=re.escape(f"Path({str(folder)!r})")):
            index.insert([str(folder)])
        assert index.doc_ids() == before

    # -- chunking and document management ---------------------------------------------------
    def test_a_long_document_is_cut_into_chunks_by_default(self, embedder: Any) -> None:
        splitter = self.index_class.default_splitter()
        text = long_document(splitter)
        chunks = splitter.split(text)
        assert len(chunks) >= 2
        docs = [*compliance_documents(), SourceDocument(text, id="long", metadata={"k": "v"})]
        index = self._build(docs, embedder)
        hit = self._assert_finds(index, LONG_QUERY)
        assert hit.text != text, "the whole document came back as one passage"
        assert len(hit.text) <= max(len(c.text) for c in chunks)
        if "chunk_index" in hit.passage.metadata:  # a chunk (not a derived text)
            i = hit.passage.metadata["chunk_index"]
            assert hit.text == chunks[i].text
            assert hit.id == f"long#{i}"
            assert hit.passage.metadata["k"] == "v"
        assert "long" in index.doc_ids()
        assert index.delete("long") is True
        assert "long" not in index.doc_ids(), "a chunk survived delete (still in doc_ids)"
        everything = index.retrieve(LONG_QUERY.query, k=len(CORPUS))
        assert "long" not in {h.doc_id for h in everything}, "a chunk survived delete"
        assert index.delete("long") is False

    @pytest.mark.parametrize("kind", ["langchain", "llama_index"])
    def test_a_text_splitter_or_node_parser_replaces_the_default(
        self, embedder: Any, kind: str
    ) -> None:
        splitter: Any = (
            ParagraphSplitter() if kind == "langchain" else llama_index_sentence_splitter()
        )
        others = [d for d in CORPUS if d.id not in ("paris", "rome")]
        index = self._build(compliance_documents([*others, PAIR]), embedder, splitter=splitter)
        assert index.splitter is splitter
        rome = QUERIES_BY_ID["rome"]
        hit = self._assert_finds(index, Probe(rome.query, PAIR.id))
        if "chunk_index" in hit.passage.metadata:
            assert (hit.id, hit.text) == (f"{PAIR.id}#1", CORPUS[1].text)
            assert hit.passage.metadata["title"] == PAIR.title
        # insert cuts with the same splitter
        two = CorpusDocument("two", "Two", f"{EXTRA.text}\n\n{CONCURRENT_EXTRAS[0].text}")
        assert index.insert(compliance_documents([two])) == ["two"]
        if isinstance(splitter, ParagraphSplitter):
            assert PAIR.text in splitter.calls
            assert splitter.calls[-1] == two.text
        hit = self._assert_finds(index, Probe(EXTRA_QUERY.query, "two"))
        if "chunk_index" in hit.passage.metadata:
            assert (hit.id, hit.text) == ("two#0", EXTRA.text)
        assert index.delete(PAIR.id) is True
        assert PAIR.id not in {h.doc_id for h in index.retrieve(rome.query, k=len(CORPUS))}

    def test_chunking_false_keeps_each_document_whole(self, embedder: Any) -> None:
        others = [d for d in CORPUS if d.id not in ("paris", "rome")]
        index = self._build(compliance_documents([*others, PAIR]), embedder, chunking=False)
        assert index.splitter is None
        hit = self._assert_finds(index, Probe(QUERIES_BY_ID["rome"].query, PAIR.id))
        if "chunk_index" in hit.passage.metadata:
            assert (hit.id, hit.text) == (f"{PAIR.id}#0", PAIR.text)

    def test_doc_ids_lists_the_documents_indexed(self, index: BaseIndex) -> None:
        assert index.doc_ids() == sorted(d.id for d in CORPUS)
        index.insert(compliance_documents([EXTRA]))
        assert index.doc_ids() == sorted([*(d.id for d in CORPUS), EXTRA.id])
        assert index.delete(CORPUS[0].id) is True
        assert CORPUS[0].id not in index.doc_ids()

    def test_upsert_replaces_a_document_by_id(
        self, index: BaseIndex, caplog: pytest.LogCaptureFixture
    ) -> None:
        old_word = "Seine"  # only in the old version of "paris"
        assert index.upsert(compliance_documents([PARIS_V2, EXTRA])) == [PARIS_V2.id, EXTRA.id]
        assert index.doc_ids().count(PARIS_V2.id) == 1
        hit = self._assert_finds(index, PARIS_V2_QUERY)
        assert "Mona Lisa" in hit.text or "Louvre" in hit.text
        everything = index.retrieve("capital of France on the Seine", k=len(CORPUS) + 1)
        assert not any(old_word in h.text for h in everything), "the old version is still there"
        self._assert_finds(index, EXTRA_QUERY)
        # the same as a fresh build of the new corpus (same document order)
        others = [d for d in CORPUS if d.id != PARIS_V2.id]
        fresh = self._build(compliance_documents([*others, PARIS_V2, EXTRA]), self.make_embedder())
        self._assert_same_answers(self._answers(index), self._answers(fresh))
        assert index.delete(PARIS_V2.id) is True
        assert index.delete(PARIS_V2.id) is False

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

    # -- the API contract (issue 19): one construction and query shape for every index ---------
    def test_from_documents_names_every_argument(self) -> None:
        parameters = inspect.signature(self.index_class.from_documents).parameters
        hidden = [p.name for p in parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
        assert not hidden, f"from_documents hides arguments in **{hidden[0]}"
        assert {"index_params", "query_params", "preset"} <= set(parameters)
        constructor = inspect.signature(self.index_class).parameters
        assert "embedding" not in constructor or "embedding" in parameters

    def test_as_retriever_k_is_the_number_of_results(self, index: BaseIndex) -> None:
        query = QUERIES[1].query
        retriever = self._surface(index).as_retriever(k=2)
        assert len(retriever.retrieve(query)) == 2
        assert len(retriever.retrieve(query, k=1)) == 1  # the call's k wins
        assert len(index.retrieve(query, k=1)) == 1
        assert ranking(retriever.retrieve(query, k=3)) == ranking(index.retrieve(query, k=3))
        same = self._surface(index).as_retriever(query_params=index.query_params)
        assert ranking(same.retrieve(query)) == ranking(index.retrieve(query))

    def test_an_unknown_query_option_is_refused(self, index: BaseIndex) -> None:
        with pytest.raises(InvalidParameterError, match="no_such_option"):
            self._surface(index).as_retriever(no_such_option=1)

    def test_a_preset_and_a_params_object_are_refused_together(
        self, documents: list[SourceDocument], embedder: Any
    ) -> None:
        params = self.index_class.query_params_class()()
        with pytest.raises(InvalidArgumentError, match="preset"):
            self._build(documents, embedder, preset="default", query_params=params)

    @pytest.mark.parametrize(("k", "error"), INVALID_K, ids=[repr(k) for k, _ in INVALID_K])
    def test_invalid_k_raises(self, index: BaseIndex, k: Any, error: type[Exception]) -> None:
        with pytest.raises(error, match="k must be an integer >= 1"):
            index.retrieve(QUERIES[0].query, k=k)

    @pytest.mark.asyncio
    @pytest.mark.parametrize(
        ("k", "error"), INVALID_K[::2], ids=[repr(k) for k, _ in INVALID_K[::2]]
    )
    async def test_invalid_k_raises_async(
        self, index: BaseIndex, k: Any, error: type[Exception]
    ) -> None:
        with pytest.raises(error, match="k must be an integer >= 1"):
            await index.aretrieve(QUERIES[0].query, k=k)

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

    # -- concurrency (core.index.locking) ---------------------------------------------------------
    def test_mutations_and_queries_hold_the_index_lock(self, index: BaseIndex) -> None:
        cls = type(index)
        for names, role in (
            ({*BaseIndex.write_methods, *cls.write_methods}, "write"),
            ({*BaseIndex.read_methods, *cls.read_methods}, "read"),
        ):
            for name in sorted(names):
                if callable(getattr(cls, name, None)):
                    assert is_guarded(getattr(cls, name)) == role, (
                        f"{cls.__name__}.{name} does not hold the index's {role} lock: does a "
                        "class override __init_subclass__ without calling super()?"
                    )

    def test_queries_during_inserts_and_deletes_see_whole_mutations(
        self, index: BaseIndex, documents: list[SourceDocument]
    ) -> None:
        k = 3
        replay = self._build(documents, self.make_embedder())
        states = [[ranking(replay.retrieve(p.query, k=k)) for p in CONCURRENT_QUERIES]]
        for action, doc in MUTATIONS:
            _mutate(replay, action, doc)
            states.append([ranking(replay.retrieve(p.query, k=k)) for p in CONCURRENT_QUERIES])

        seen: list[tuple[int, Ranking]] = []
        errors: list[BaseException] = []
        progress = threading.Condition()
        writing = threading.Event()
        writing.set()

        def query(offset: int) -> None:
            n = offset
            try:
                while writing.is_set() or n < offset + len(CONCURRENT_QUERIES):
                    i = n % len(CONCURRENT_QUERIES)
                    seen.append((i, ranking(index.retrieve(CONCURRENT_QUERIES[i].query, k=k))))
                    n += 1
                    with progress:
                        progress.notify_all()
            except BaseException as error:  # reported below
                errors.append(error)

        def write() -> None:
            try:
                for step, (action, doc) in enumerate(MUTATIONS, start=1):
                    with progress:  # let the readers query the state before each mutation
                        progress.wait_for(
                            lambda s=step: len(seen) >= 3 * s or bool(errors),  # type: ignore[misc]
                            CONCURRENCY_TIMEOUT,
                        )
                    _mutate(index, action, doc)
            except BaseException as error:
                errors.append(error)
            finally:
                writing.clear()

        threads = [threading.Thread(target=query, args=(n,)) for n in range(2)]
        threads.append(threading.Thread(target=write))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(CONCURRENCY_TIMEOUT)
            assert not thread.is_alive(), "deadlock: a thread did not finish"
        assert not errors, f"{len(errors)} error(s) while querying and mutating: {errors[0]!r}"
        assert len(seen) >= 3 * len(MUTATIONS)
        for i, got in seen:
            assert any(self._same_ranking(got, state[i]) for state in states), (
                f"{CONCURRENT_QUERIES[i].query!r} -> {got} is no state of a sequential replay"
            )
        final = [ranking(index.retrieve(p.query, k=k)) for p in CONCURRENT_QUERIES]
        assert all(self._same_ranking(g, e) for g, e in zip(final, states[-1], strict=True))

    def test_concurrent_inserts_land_exactly_once(self, index: BaseIndex) -> None:
        jobs = [[d] for d in CONCURRENT_EXTRAS] + [[EXTRA], [EXTRA]]  # one document twice
        start = threading.Barrier(len(jobs), timeout=CONCURRENCY_TIMEOUT)
        added: list[list[str] | BaseException] = [[] for _ in jobs]

        def insert(n: int) -> None:
            try:
                start.wait()
                added[n] = index.insert(compliance_documents(jobs[n]))
            except BaseException as error:
                added[n] = error

        threads = [threading.Thread(target=insert, args=(n,)) for n in range(len(jobs))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(CONCURRENCY_TIMEOUT)
            assert not thread.is_alive(), "deadlock: an insert did not finish"
        failed = [a for a in added if isinstance(a, BaseException)]
        assert not failed, f"concurrent inserts raised: {failed[0]!r}"
        assert added[: len(CONCURRENT_EXTRAS)] == [[d.id] for d in CONCURRENT_EXTRAS]
        twice = sorted(tuple(a) for a in added[len(CONCURRENT_EXTRAS) :] if isinstance(a, list))
        assert twice == [(), (EXTRA.id,)], f"one document inserted by two threads at once: {twice}"
        inserted = [*CORPUS, *CONCURRENT_EXTRAS, EXTRA]
        sequential = self._build(compliance_documents(inserted), self.make_embedder())
        hits = index.retrieve(QUERIES[0].query, k=len(inserted))
        expected = sequential.retrieve(QUERIES[0].query, k=len(inserted))
        assert Counter(h.doc_id for h in hits) == Counter(h.doc_id for h in expected)
        assert sorted(h.id for h in hits) == sorted(h.id for h in expected)
        self._assert_finds(index, EXTRA_QUERY)

    @pytest.mark.asyncio
    async def test_ainsert_and_adelete_do_not_block_the_event_loop(self, index: BaseIndex) -> None:
        before = self._answers(index)
        held = 0.3  # another thread holds a query lock that long: the mutation must wait
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        def hold_read_lock(entered: threading.Event) -> None:
            with index.rwlock.read():
                entered.set()
                threading.Event().wait(held)

        async def while_a_query_runs(mutation: Any) -> tuple[Any, int]:
            entered = threading.Event()
            holder = threading.Thread(target=hold_read_lock, args=(entered,))
            holder.start()
            entered.wait(CONCURRENCY_TIMEOUT)
            start = ticks
            result = await mutation
            holder.join(CONCURRENCY_TIMEOUT)
            return result, ticks - start

        task = asyncio.create_task(ticker())
        try:
            added, ticked_insert = await while_a_query_runs(
                index.ainsert(compliance_documents([EXTRA]))
            )
            self._assert_finds(index, EXTRA_QUERY)
            removed, ticked_delete = await while_a_query_runs(index.adelete(EXTRA.id))
            assert await index.adelete(EXTRA.id) is False
        finally:
            task.cancel()
        assert added == [EXTRA.id]
        assert removed is True
        self._assert_same_answers(self._answers(index), before)
        # ~30 ticks while the lock is held; a mutation run in the loop's thread gives none
        assert ticked_insert >= 5, f"the event loop stalled during ainsert ({ticked_insert})"
        assert ticked_delete >= 5, f"the event loop stalled during adelete ({ticked_delete})"

    def _same_ranking(self, got: Ranking, expected: Ranking) -> bool:
        return [i for i, _ in got] == [i for i, _ in expected] and all(
            abs(a - b) <= self.score_tolerance for (_, a), (_, b) in zip(got, expected, strict=True)
        )

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

    # -- vector layers in Chroma (indexes that take ``vector_index=``) ----------------------
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

    # -- metadata filters (core.retrieval.filters) ------------------------------------------------
    @pytest.fixture
    def filter_index(self, embedder: Any) -> BaseIndex:
        """An index over :data:`CORPUS` with the metadata of :func:`filter_documents`."""
        return self._build(filter_documents(), embedder)

    def test_retrieve_with_a_filter_returns_only_matching_passages(
        self, filter_index: BaseIndex
    ) -> None:
        for where, expected in FILTER_CASES:
            matching = [d for d in filter_documents() if expected({**d.metadata, "doc_id": d.id})]
            for probe in FILTER_QUERIES:
                hits = filter_index.retrieve(probe.query, k=3, filter=where)
                for hit in hits:
                    meta = dict(hit.passage.metadata) | {"doc_id": hit.doc_id}
                    assert expected(meta), (where, probe.query, hit.doc_id, meta)
                assert len(hits) <= 3
                assert bool(hits) == bool(matching), (where, probe.query)
                if probe.doc_id in {d.id for d in matching}:
                    assert hits[0].doc_id == probe.doc_id, (where, probe.query)

    def test_a_filter_honours_k(self, filter_index: BaseIndex) -> None:
        where = {"n": {"$gte": 2}}  # seven documents
        for k in (1, 3):
            hits = filter_index.retrieve(FILTER_QUERIES[0].query, k=k, filter=where)
            assert len(hits) == k
            assert len({h.id for h in hits}) == k
            assert all(h.passage.metadata["n"] >= 2 for h in hits)

    @pytest.mark.asyncio
    async def test_a_filter_matching_nothing_returns_no_passage(
        self, filter_index: BaseIndex
    ) -> None:
        from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

        surface = self._surface(filter_index)
        query = FILTER_QUERIES[0].query
        for where in ({"title": "Atlantis"}, {"no_such_key": "x"}, {"n": {"$gt": 100}}):
            assert filter_index.retrieve(query, k=3, filter=where) == []
            assert await filter_index.aretrieve(query, k=3, filter=where) == []
            assert surface.as_langchain_retriever(k=3).invoke(query, filter=where) == []
        nothing = MetadataFilters(filters=[MetadataFilter(key="title", value="Atlantis")])
        retriever = surface.as_llama_index_retriever(similarity_top_k=3, filters=nothing)
        assert retriever.retrieve(query) == []

    @pytest.mark.asyncio
    async def test_langchain_filters(self, filter_index: BaseIndex) -> None:
        curie, amazon = FILTER_QUERIES
        surface = self._surface(filter_index)
        retriever = surface.as_langchain_retriever(k=2)
        docs = retriever.invoke(curie.query, filter={"group": "even"})
        assert docs and docs[0].metadata["doc_id"] == curie.doc_id
        assert all(d.metadata["group"] == "even" for d in docs) and len(docs) <= 2
        # a construction filter, replaced by a call's
        odd = surface.as_langchain_retriever(k=2, filter={"group": "odd"})
        docs = odd.invoke(amazon.query)
        assert docs and docs[0].metadata["doc_id"] == amazon.doc_id
        assert all(d.metadata["group"] == "odd" for d in docs)
        assert [d.metadata["doc_id"] for d in odd.invoke(amazon.query, filter={"n": 2})] == [
            curie.doc_id
        ]
        adocs = await odd.ainvoke(curie.query, filter={"$or": [{"n": 2}, {"n": 4}]})
        assert adocs and adocs[0].metadata["doc_id"] == curie.doc_id
        assert {d.metadata["n"] for d in adocs} <= {2, 4}
        # LangChain's vector-store retriever spelling
        vs = surface.as_langchain_retriever(search_kwargs={"k": 1, "filter": {"n": {"$lt": 3}}})
        assert [d.metadata["doc_id"] for d in vs.invoke(curie.query)] == [curie.doc_id]

    def test_llama_index_filters(self, filter_index: BaseIndex) -> None:
        from llama_index.core.llms import MockLLM
        from llama_index.core.vector_stores.types import (
            FilterCondition,
            FilterOperator,
            MetadataFilter,
            MetadataFilters,
        )

        curie, amazon = FILTER_QUERIES
        surface = self._surface(filter_index)
        odd = MetadataFilters(filters=[MetadataFilter(key="group", value="odd")])
        nodes = surface.as_llama_index_retriever(similarity_top_k=2, filters=odd).retrieve(
            amazon.query
        )
        assert nodes and nodes[0].node.ref_doc_id == amazon.doc_id and len(nodes) <= 2
        assert all(n.node.metadata["group"] == "odd" for n in nodes)
        # (n < 3 or n >= 7) and not group == odd: paris (0), curie (2), chess (8)
        nested = MetadataFilters(
            filters=[
                MetadataFilters(
                    filters=[
                        MetadataFilter(key="n", value=3, operator=FilterOperator.LT),
                        MetadataFilter(key="n", value=7, operator=FilterOperator.GTE),
                    ],
                    condition=FilterCondition.OR,
                ),
                MetadataFilters(filters=[odd.filters[0]], condition=FilterCondition.NOT),
            ]
        )
        engine = surface.as_query_engine(llm=MockLLM(), similarity_top_k=3, filters=nested)
        sources = engine.query(curie.query).source_nodes
        assert sources and sources[0].node.ref_doc_id == curie.doc_id
        assert {s.node.ref_doc_id for s in sources} <= {"paris", "curie", "chess"}

    def test_inserted_documents_are_filtered_by_their_metadata(
        self, filter_index: BaseIndex
    ) -> None:
        extra = SourceDocument(EXTRA.text, id=EXTRA.id, metadata={"title": EXTRA.title, "n": 9})
        assert filter_index.insert([extra]) == [EXTRA.id]
        hits = filter_index.retrieve(EXTRA_QUERY.query, k=3, filter={"n": 9})
        assert hits and hits[0].doc_id == EXTRA.id
        assert all(h.passage.metadata["n"] == 9 for h in hits)

    def test_a_bad_filter_raises_before_any_work(
        self, filter_index: BaseIndex, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def no_work(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the index ran a query with a malformed filter")

        monkeypatch.setattr(filter_index, "_retrieve", no_work, raising=False)
        monkeypatch.setattr(filter_index, "_retrieve_filtered", no_work, raising=False)
        surface = self._surface(filter_index)
        query = FILTER_QUERIES[0].query
        bads: tuple[Any, ...] = ({"n": {"$regex": "x"}}, {"n": {"$in": []}}, {"$or": []}, ["n", 1])
        for bad in bads:
            with pytest.raises(InvalidArgumentError):
                filter_index.retrieve(query, k=2, filter=bad)
            with pytest.raises(ValueError):
                surface.as_langchain_retriever(k=2).invoke(query, filter=bad)
        with pytest.raises(ValueError):
            surface.as_llama_index_retriever(filters={"n": {"$regex": "x"}})
