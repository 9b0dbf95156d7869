"""The lifecycle every method shares, so users learn one shape.

``X.from_documents(docs, ...)``, ``insert``, ``delete(doc_id)``, ``persist(dir)`` /
``X.load(dir)``, ``retrieve`` / ``aretrieve``. The framework surface
(``as_langchain_retriever`` and friends) comes from
:class:`graphrag_integrations.adapters.surface.FrameworkSurface`.

The rules below are the contract every method follows; the compliance suite
(:mod:`graphrag_integrations.testing`) checks each of them.

Documents and ids
    Inputs are anything :func:`~graphrag_integrations.core.documents.load_documents`
    accepts. A document's id is the one its owner gave (LangChain ``Document.id``, LlamaIndex
    ``ref_doc_id`` / ``id_``, a record's ``"id"``), else the content hash of its text
    (:func:`~graphrag_integrations.core.documents.content_id`). Every passage keeps that id as
    ``doc_id`` and the document's metadata.
Chunking
    ``from_documents`` does **not** chunk by default today: each document becomes one passage.
    The baselines (dense, BM25, hybrid) take ``chunker=TokenChunker(...)`` in
    ``from_documents`` and ``insert`` to cut documents into token windows; ``ClueIndex``
    indexes each document as one chunk (pre-chunk with
    :func:`~graphrag_integrations.core.chunking.documents_to_passages` and use
    ``from_passages``).
Loading options
    ``from_documents`` and ``insert`` accept the options of
    :func:`~graphrag_integrations.core.documents.load_documents` (``errors="strict" |
    "replace" | "skip"``, ``report=LoadReport()``, ``path=``, ``pattern=``...) and forward
    them with ``load_documents(documents, **pop_load_options(kwargs))``, so one undecodable
    file in a folder can be skipped (logged and counted) instead of aborting the build.
``insert(documents) -> list[str]``
    Adds documents without a rebuild of what is already indexed and returns the ids of the
    documents added, in input order, each once. A document whose id is already indexed is
    skipped (a warning names it) and is not in the returned list: delete it first to replace
    it (see :func:`drop_indexed`).
``delete(doc_id) -> bool``
    Removes the document and everything derived from it (passages, vectors, graph nodes) and
    returns ``True``. An unknown id changes nothing, logs a warning and returns ``False``; it
    never raises. After ``insert([d])`` then ``delete(d.id)`` an index answers exactly as a
    fresh build without ``d``.
``persist(path, *, overwrite=False)`` / ``load(path)``
    ``persist`` writes the directory through
    :func:`~graphrag_integrations.core.persistence.atomic_directory` with
    ``overwrite=overwrite, method=self.method``: the write is atomic, the manifest records
    the SHA-256 of every file, a non-empty folder that is not an index of the same method is
    refused (:class:`~graphrag_integrations.errors.IndexExistsError`) unless
    ``overwrite=True``, and files the index did not write are never deleted. ``load`` reads
    inside :func:`~graphrag_integrations.core.persistence.reading_index` (a writer waits for
    it), verifies the checksums (:class:`~graphrag_integrations.errors.CorruptIndexError`
    naming the damaged file), checks the embedding model *and* dimension at load
    (:func:`~graphrag_integrations.core.persistence.check_embedder`), and answers every
    query with the same passages and scores as the index that was persisted.
``retrieve(query, k=None)``
    At most ``k`` results (``None``: :attr:`BaseIndex.default_k`), best first. ``k`` goes
    through :func:`~graphrag_integrations.core.validation.check_k` (``k = check_k(k,
    self.default_k)``): ``0``, ``-1``, ``"3"``, ``2.0`` or ``True`` raise
    :class:`~graphrag_integrations.errors.InvalidArgumentError` (the type errors also
    ``TypeError``). An empty or blank query raises
    :class:`~graphrag_integrations.errors.EmptyQueryError` (see :func:`check_query`); every
    explanation is a JSON-serialisable mapping.
Concurrency
    Every index is safe to query from many threads while others mutate it: each instance has
    a readers-writer lock (:mod:`~graphrag_integrations.core.locking`) and
    ``__init_subclass__`` wraps the subclass's :attr:`BaseIndex.write_methods` (``insert``,
    ``delete``, ``upsert``, ``add_passages``) as writers and :attr:`BaseIndex.read_methods`
    (``retrieve``, ``persist``, ``doc_ids``) as readers, with no code in the method. A query
    sees the index before or after a mutation, never half of it; queries run in parallel;
    mutations run one at a time (a second ``insert`` of a document skips it); a waiting
    mutation holds back new queries. :meth:`BaseIndex.ainsert` / :meth:`BaseIndex.adelete`
    (and :meth:`BaseIndex.aretrieve`) run in a worker thread and never block the event loop.
    A retriever over an index it does not own takes ``read_locked(index)`` for a query.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from graphrag_integrations.core.checkpoint import checkpointable
from graphrag_integrations.core.locking import ReadWriteLock, guard_methods, is_guarded, lock_of
from graphrag_integrations.core.progress import ProgressSetting, track_batch
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.errors import EmptyQueryError

IndexT = TypeVar("IndexT", bound="BaseIndex")
PassageT = TypeVar("PassageT", bound=Passage)

logger = logging.getLogger(__name__)


def check_query(query: str) -> str:
    """Return ``query`` stripped, or raise :class:`EmptyQueryError` if nothing is left.

    Examples
    --------
    >>> check_query("  capital of France ")
    'capital of France'
    >>> check_query("   ")
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.EmptyQueryError: query is empty
    """
    if not isinstance(query, str):
        raise EmptyQueryError(f"query must be a string, got {type(query).__name__}")
    stripped = query.strip()
    if not stripped:
        raise EmptyQueryError("query is empty")
    return stripped


def drop_indexed(passages: Sequence[PassageT], indexed_doc_ids: Collection[str]) -> list[PassageT]:
    """The passages whose document is not indexed yet (the ``insert`` rule).

    The skipped documents are named in one warning.

    Parameters
    ----------
    passages : sequence of Passage
        Passages of the documents being inserted.
    indexed_doc_ids : collection of str
        Ids of the documents the index holds.

    Examples
    --------
    >>> ps = [Passage("p1", "Old text.", "a"), Passage("p2", "New text.", "b")]
    >>> [p.id for p in drop_indexed(ps, {"a"})]
    ['p2']
    """
    kept = [p for p in passages if p.doc_id not in indexed_doc_ids]
    if len(kept) < len(passages):
        skipped = sorted({p.doc_id for p in passages if p.doc_id in indexed_doc_ids})
        logger.warning(
            "insert: %d document(s) already indexed, skipped (delete them first to replace "
            "them): %s",
            len(skipped),
            ", ".join(skipped),
        )
    return kept


def document_ids(passages: Iterable[Passage]) -> list[str]:
    """The distinct ``doc_id`` of ``passages``, in order (what ``insert`` returns).

    Examples
    --------
    >>> document_ids([Passage("p1", "x", "a"), Passage("p2", "y", "b"), Passage("p3", "z", "a")])
    ['a', 'b']
    """
    return list(dict.fromkeys(p.doc_id for p in passages))


class BaseIndex(ABC):
    """Abstract base of every retriever/index in the package.

    Subclasses set :attr:`method` (the name recorded in manifests and used by the CLI) and
    :attr:`default_k`, and implement the abstract methods following the rules of the module
    docstring.
    """

    method: ClassVar[str] = "base"
    default_k: int = 5
    #: Methods run under the instance's read lock (those a subclass has are wrapped).
    read_methods: ClassVar[tuple[str, ...]] = ("retrieve", "persist", "doc_ids")
    #: Methods run under the instance's write lock (those a subclass has are wrapped).
    write_methods: ClassVar[tuple[str, ...]] = ("insert", "delete", "upsert", "add_passages")
    #: Methods adding a batch of passages, whose size decides ``show_progress=None``.
    batch_methods: ClassVar[tuple[str, ...]] = ("add_passages",)
    #: Progress bars: ``True`` / ``False`` / ``None`` (default: by batch size, see
    #: :mod:`~graphrag_integrations.core.progress`); reads as a ``bool``.
    show_progress = ProgressSetting()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Wrap the subclass's :attr:`read_methods` / :attr:`write_methods` with its lock, and
        its :attr:`batch_methods` with :func:`~graphrag_integrations.core.progress.track_batch`."""
        super().__init_subclass__(**kwargs)
        if isinstance(cls.__dict__.get("from_documents"), classmethod):  # checkpoint_dir=
            cls.from_documents = checkpointable(cls.__dict__["from_documents"])  # type: ignore[method-assign]
        for name in cls.batch_methods:
            if name in cls.__dict__ and not is_guarded(cls.__dict__[name]):
                setattr(cls, name, track_batch(cls.__dict__[name]))
        guard_methods(cls, readers=cls.read_methods, writers=cls.write_methods)

    @property
    def rwlock(self) -> ReadWriteLock:
        """This index's readers-writer lock (created on first use; see the module notes).

        Hold ``with index.rwlock.write():`` around several mutations that must look like one
        to concurrent queries, or ``with index.rwlock.read():`` around several queries that
        must see the same index.
        """
        return lock_of(self)

    @classmethod
    @abstractmethod
    def from_documents(cls: type[IndexT], documents: Iterable[Any], **kwargs: Any) -> IndexT:
        """Build an index from LangChain/LlamaIndex documents, strings, files or folders.

        One passage per document unless the method documents a ``chunker`` (module notes).
        The load options (``errors=``, ``report=``...) go to ``load_documents`` (see
        :func:`~graphrag_integrations.core.documents.pop_load_options`), the rest to the
        constructor.
        """

    @abstractmethod
    def insert(self, documents: Iterable[Any], **load_options: Any) -> list[str]:
        """Add documents without a rebuild; returns the ids of the documents added.

        Documents already indexed (same id) are skipped with a warning. ``load_options``
        (``errors=``, ``report=``...) go to ``load_documents``.
        """

    @abstractmethod
    def delete(self, doc_id: str) -> bool:
        """Remove a source document and everything derived from it.

        Returns ``True`` if something was removed; an unknown id logs a warning (see
        :meth:`_unknown_document`) and returns ``False``, never raises.
        """

    @abstractmethod
    def persist(self, path: str | Path, *, overwrite: bool = False) -> None:
        """Write the index to directory ``path`` atomically, with a manifest.

        Implementations write inside ``atomic_directory(path, overwrite=overwrite,
        method=self.method)`` (:mod:`~graphrag_integrations.core.persistence`).

        Parameters
        ----------
        path : str or Path
            The index directory (created if missing).
        overwrite : bool
            Allow writing into a non-empty folder that holds no index, or over an index of
            another method. Files the index did not write are kept either way.

        Raises
        ------
        IndexExistsError
            If ``path`` is not ours to replace and ``overwrite`` is false (nothing written).
        """

    @classmethod
    @abstractmethod
    def load(cls: type[IndexT], path: str | Path, **kwargs: Any) -> IndexT:
        """Load an index written by :meth:`persist`.

        Implementations read inside ``reading_index(path)``, verify the manifest and its
        checksums (``read_manifest``) and the embedder (``check_embedder``).

        Raises
        ------
        IndexNotFoundError
            If ``path`` holds no index.
        CorruptIndexError
            Naming the file, if a file is missing, truncated or altered.
        IndexMismatchError
            Another method, a newer format, another embedding model or dimension.
        """

    @abstractmethod
    def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """Return up to ``k`` passages for ``query``, best first.

        ``k`` is checked with ``check_k(k, self.default_k)``
        (:func:`~graphrag_integrations.core.validation.check_k`).
        """

    async def aretrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """Async :meth:`retrieve`; the default runs it in a worker thread.

        Subclasses whose retrieval awaits an LLM override this with a native coroutine.
        """
        return await asyncio.to_thread(self.retrieve, query, k)

    async def ainsert(self, documents: Iterable[Any], **load_options: Any) -> list[str]:
        """Async :meth:`insert`: runs it in a worker thread, so the event loop keeps running
        (the index's write lock is taken there)."""
        return await asyncio.to_thread(self.insert, documents, **load_options)

    async def adelete(self, doc_id: str) -> bool:
        """Async :meth:`delete` (in a worker thread, like :meth:`ainsert`)."""
        return await asyncio.to_thread(self.delete, doc_id)

    def _unknown_document(self, doc_id: str) -> bool:
        """What :meth:`delete` does for an id the index does not hold: warn, return False."""
        logger.warning(
            "%s.delete(%r): no such document in the index; nothing removed",
            type(self).__name__,
            doc_id,
        )
        return False
