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

import asyncio
import inspect
import json
import logging
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
from graphrag_integrations.core.checkpoint import INDEX_FOLDER, read_checkpoint
from graphrag_integrations.core.documents import LoadReport, SourceDocument, content_id
from graphrag_integrations.core.index_base import BaseIndex
from graphrag_integrations.core.locking import is_guarded
from graphrag_integrations.core.persistence import (
    Manifest,
    atomic_directory,
    read_manifest,
    write_manifest,
)
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
    "INVALID_K",
    "MUTATIONS",
    "QUERIES",
    "CorpusDocument",
    "IndexComplianceTests",
    "Probe",
    "compliance_documents",
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

    The cases check the rules of :mod:`graphrag_integrations.core.index_base`:

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
    * ``from_documents`` and ``insert`` take ``errors="skip"`` (and ``report=``): an
      undecodable file in a folder is left out and reported, the others indexed;
    * an empty or blank query raises ``EmptyQueryError`` (sync and async);
    * ``k`` is honoured (1, 3 and the default), invalid ``k`` (``0``, ``-1``, ``"3"``,
      ``2.0``, ``True``) raises ``InvalidArgumentError``, ``aretrieve`` equals ``retrieve``,
      explanations are JSON-serialisable mappings;
    * concurrency (:mod:`~graphrag_integrations.core.locking`): the mutating methods hold
      the index's write lock and ``retrieve`` / ``persist`` its read lock; threads querying
      while another inserts and deletes (:data:`MUTATIONS`) get no error and every answer is
      the answer of a sequential replay after some number of those mutations (never half of
      one); threads inserting distinct documents at once each add theirs exactly once, two
      inserting the same one add it once; ``ainsert`` / ``adelete`` work and the event loop
      keeps running while they wait for the lock;
    * checkpointed builds (:mod:`~graphrag_integrations.core.checkpoint`): a
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

    #: The :class:`~graphrag_integrations.core.index_base.BaseIndex` subclass under test.
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

    # -- checkpointed builds (core.checkpoint) ---------------------------------------------
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

    # -- concurrency (core.locking) -----------------------------------------------------------
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
