"""The lifecycle every method shares, so users learn one shape.

``X.from_documents(docs, ...)``, ``insert``, ``delete(doc_id)``, ``persist(dir)`` /
``X.load(dir)``, ``retrieve`` / ``aretrieve``. The framework surface
(``as_langchain_retriever`` and friends) comes from
:class:`graphrag_integrations.adapters.surface.FrameworkSurface`.

The rules below are the contract every method follows; the compliance suite
(:mod:`graphrag_integrations.testing`) checks each of them.

Documents and ids
    Inputs are anything :func:`~graphrag_integrations.core.text.documents.load_documents`
    accepts. A document's id is the one its owner gave (LangChain ``Document.id``, LlamaIndex
    ``ref_doc_id`` / ``id_``, a record's ``"id"``), else the content hash of its text
    (:func:`~graphrag_integrations.core.text.documents.content_id`). Every passage keeps that id as
    ``doc_id`` and the document's metadata.
Chunking
    ``from_documents``, ``insert`` and ``upsert`` cut every document into passages, once, in
    the core (:meth:`BaseIndex.from_documents`, :meth:`BaseIndex.document_passages`, with
    :func:`~graphrag_integrations.core.text.chunking.split_documents`): by default with
    :meth:`BaseIndex.default_splitter`, a
    :class:`~graphrag_integrations.core.text.chunking.TokenChunker` of the method's
    :attr:`BaseIndex.chunk_size` / :attr:`BaseIndex.chunk_overlap` tokens (table in
    ``docs/reference/chunking.md``). ``splitter=``: a LangChain text splitter (``split_text``), a
    LlamaIndex node parser (``get_nodes_from_documents``) or another ``TokenChunker``
    (``chunker=`` is an alias); ``chunking=False`` (or ``splitter=None``) keeps each document
    whole. The splitter given to ``from_documents`` is the index's :attr:`BaseIndex.splitter`,
    used by later ``insert`` / ``upsert`` calls (a loaded index starts from the class
    default). Chunk ``i`` of document ``d`` has id ``"d#i"`` and ``doc_id = d`` (plus
    ``chunk_index``, ``start_char``, ``end_char`` metadata), so ``delete(d)`` removes every
    chunk. ``from_passages`` takes passages already cut and never chunks.
Parameters
    Every index has one index-time and one query-time parameter class
    (:mod:`~graphrag_integrations.core.params`; :attr:`BaseIndex.index_params_class` and the
    class of :attr:`BaseIndex.query_params`). ``from_documents`` and the constructor take
    ``index_params=``, ``query_params=`` and ``preset=`` (not together with a params object:
    :func:`~graphrag_integrations.core.params.resolve_params`), every argument named in
    their signatures (the options every ``from_documents`` shares typed once, as
    ``**options: Unpack[DocumentBuildOptions]``:
    :mod:`~graphrag_integrations.core.index.build_options`). ``k`` is always the number of
    results: ``retrieve(q, k)`` wins over an ``as_retriever(k=...)`` retriever's ``k``, which
    wins over the query params' default
    (the field :attr:`BaseIndex.k_param` names, e.g. Clue's ``N``, QCG's ``K``).
    ``as_retriever(k=None, *, query_params=None, filter=None, **overrides)`` binds other query
    params (validated overrides of the index's) without copying the index: a query of the
    bound retriever runs with them (:meth:`BaseIndex.using_query_params`), and with its
    ``filter`` ANDed with the call's.
Loading options
    ``from_documents`` and ``insert`` accept the options of
    :func:`~graphrag_integrations.core.text.documents.load_documents` (``errors="strict" |
    "replace" | "skip"``, ``report=LoadReport()``, ``path=``, ``pattern=``...) and forward
    them with ``load_documents(documents, **pop_load_options(kwargs))``, so one undecodable
    file in a folder can be skipped (logged and counted) instead of aborting the build.
``insert(documents) -> list[str]``
    Adds documents without a rebuild of what is already indexed and returns the ids of the
    documents added, in input order, each once. A document whose id is already indexed is
    skipped (a warning names it) and is not in the returned list: ``upsert`` replaces it (see
    :func:`drop_indexed`).
``upsert(documents) -> list[str]``
    Replaces documents by id: every indexed document whose id is given is deleted, then all
    are inserted (one write lock for the whole, so a query sees the old or the new version).
    Returns the ids inserted, like ``insert``. See :meth:`BaseIndex.upsert`.
``doc_ids() -> list[str]``
    The ids of the documents the index holds, sorted, each once.
``delete(doc_id) -> bool``
    Removes the document and everything derived from it (passages, vectors, graph nodes) and
    returns ``True``. An unknown id changes nothing, logs a warning and returns ``False``; it
    never raises. After ``insert([d])`` then ``delete(d.id)`` an index answers exactly as a
    fresh build without ``d``.
``persist(path, *, overwrite=False)`` / ``load(path)``
    Template methods of :class:`BaseIndex`; an index implements small hooks and never
    repeats the skeleton. :meth:`BaseIndex.persist` takes :meth:`BaseIndex.manifest` (the
    hook: parameters, counts, models, embedding dimension), adds :attr:`BaseIndex.index_id`,
    :attr:`BaseIndex.format_version` and the build ``timings`` (an index with a ``timings``
    dict), and writes inside
    :func:`~graphrag_integrations.core.persistence.atomic_directory` with
    ``overwrite=overwrite, method=self.method, index_id=self.index_id``: the hook
    :meth:`BaseIndex._write_files` fills the temporary directory, the manifest comes last,
    then :meth:`BaseIndex._after_persist`. The write is atomic, the manifest records the
    SHA-256 of every file, and what is in ``path`` is replaced only if it is *this* index
    (same method and ``index_id``: a re-persist, after ``insert`` too, or of the index
    loaded from there); a non-empty folder holding no index, another method's index, or
    another index of the method (another id, or a manifest written before ids existed) is
    refused (:class:`~graphrag_integrations.errors.IndexExistsError`, one line naming the
    folder) unless ``overwrite=True``; files the index did not write are never deleted.
    :meth:`BaseIndex.load` reads inside
    :func:`~graphrag_integrations.core.persistence.reading_index` (a writer waits for it):
    ``read_manifest`` verifies the checksums
    (:class:`~graphrag_integrations.errors.CorruptIndexError` naming the damaged file),
    ``check_manifest`` the method and the class's :attr:`BaseIndex.format_version` down to
    :attr:`BaseIndex.oldest_format_version`; then the hooks: :meth:`BaseIndex._from_manifest`
    builds the empty index from the recorded settings and the caller's arguments,
    :meth:`BaseIndex._check_embedder` checks the embedding model *and* dimension
    (:func:`~graphrag_integrations.core.persistence.check_embedder`; the bundled MiniLM's
    local path and its names are one model), :meth:`BaseIndex._read_files` reads the files,
    :meth:`BaseIndex._check_loaded` compares them with the manifest's counts. The loaded
    index keeps the recorded ``index_id`` and build ``timings`` (``nan``, unknown, when the
    manifest predates them) and answers every query with the same passages and scores as
    the index that was persisted.
``retrieve(query, k=None, *, filter=None)``
    At most ``k`` results (``None``: :attr:`BaseIndex.default_k`), best first. ``k`` goes
    through :func:`~graphrag_integrations.core.validation.check_k` (``k = check_k(k,
    self.default_k)``): ``0``, ``-1``, ``"3"``, ``2.0`` or ``True`` raise
    :class:`~graphrag_integrations.errors.InvalidArgumentError` (the type errors also
    ``TypeError``). An empty or blank query raises
    :class:`~graphrag_integrations.errors.EmptyQueryError` (see :func:`check_query`); every
    explanation is a JSON-serialisable mapping. A query longer than
    :attr:`BaseIndex.max_query_chars` characters is cut there (one warning), so no query
    costs more than one of that length. :meth:`BaseIndex.retrieve` does these checks and
    calls the subclass's ``_retrieve(query, k)`` with the bounded query.
Metadata filters
    ``retrieve(query, k, filter={...})`` returns only passages whose metadata matches
    (:mod:`~graphrag_integrations.core.retrieval.filters`: the LangChain dict form or a filter
    tree; a malformed filter raises ``ValueError`` before any work; a key no passage has
    matches nothing). ``k`` is honoured. A filter is an access boundary: the query answers as
    if the index held only the matching passages
    (:mod:`~graphrag_integrations.core.retrieval.filter_scope`) - its seeds, walks,
    expansions, generated queries, triples, top-ups and re-rankers use only them and what
    was derived from them, and no text only other passages contributed reaches a result, an
    explanation or a framework's metadata. Scores may still use corpus-wide statistics (BM25
    idf, a kNN graph built over all documents): :attr:`BaseIndex.corpus_wide_scores` says
    whether they do; when it is false, a filtered query returns the passages and scores of an
    index built from the matching documents alone. The package's indexes override
    :meth:`BaseIndex._retrieve_filtered` to push the filter into their search; its default
    (for other subclasses) retrieves with a growing budget and keeps the matching results,
    which filters the passages but not what the explanations say about the others.
    A filter bound to a retriever (``as_retriever(filter=)``, the framework retrievers and
    tools) is combined (AND) with a call's, never replaced by it.
Concurrency
    Every index is safe to query from many threads while others mutate it: each instance has
    a readers-writer lock (:mod:`~graphrag_integrations.core.index.locking`) and
    ``__init_subclass__`` wraps the subclass's :attr:`BaseIndex.write_methods` (``insert``,
    ``delete``, ``delete_many``, ``upsert``, ``add_passages``) as writers and
    :attr:`BaseIndex.read_methods` (``retrieve``, ``persist``, ``doc_ids``) as readers, with
    no code in the method. A query
    sees the index before or after a mutation, never half of it; queries run in parallel;
    mutations run one at a time (a second ``insert`` of a document skips it); a waiting
    mutation holds back new queries. :meth:`BaseIndex.ainsert` / :meth:`BaseIndex.adelete`
    (and :meth:`BaseIndex.aretrieve`) run in a worker thread and never block the event loop.
    A retriever over an index it does not own takes ``read_locked(index)`` for a query.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar

from graphrag_integrations.core.index import snapshot
from graphrag_integrations.core.index.build_options import (
    DocumentOptions,
    check_options,
    named_parameters,
)
from graphrag_integrations.core.index.building import (
    CHUNKING_OPTIONS,
    DEFAULT_SPLITTER,
    CheckpointDir,
    DocumentPaths,
    PassageT,
    build_from_passages,
    chosen_splitter,
    document_ids,
    drop_indexed,
    pop_splitter,
)
from graphrag_integrations.core.index.checkpoint import checkpointable
from graphrag_integrations.core.index.executors.build import distributable
from graphrag_integrations.core.index.journal import journal_methods, journaled, keep_replaced
from graphrag_integrations.core.index.locking import (
    ReadWriteLock,
    guard_methods,
    is_guarded,
    lock_of,
    writer,
)
from graphrag_integrations.core.index.persistence import IndexPersistence
from graphrag_integrations.core.index.query_binding import QueryParamsField, bound_query_params
from graphrag_integrations.core.index.store import index_stores_of
from graphrag_integrations.core.params import NoParams, Params, resolve_params
from graphrag_integrations.core.persistence import FORMAT_VERSION
from graphrag_integrations.core.progress import ProgressSetting, track_batch
from graphrag_integrations.core.retrieval.filters import (
    FilterLike,
    MetadataFilter,
    parse_filter,
    retrieve_filtered,
)
from graphrag_integrations.core.text.chunking import (
    check_splitter,
    default_chunker,
    split_documents,
)
from graphrag_integrations.core.text.documents import (
    load_documents,
    pop_load_options,
    require_nonempty,
)
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.core.validation import MAX_QUERY_CHARS, check_k, check_query
from graphrag_integrations.errors import InvalidArgumentError

# The helpers of core.index.building stay importable from here.
__all__ = [
    "CHUNKING_OPTIONS",
    "DEFAULT_SPLITTER",
    "BaseIndex",
    "CheckpointDir",
    "DocumentPaths",
    "PassageT",
    "build_from_documents",
    "build_from_passages",
    "chosen_splitter",
    "document_ids",
    "drop_indexed",
    "pop_splitter",
]

IndexT = TypeVar("IndexT", bound="BaseIndex")

logger = logging.getLogger(__name__)


def build_from_documents(
    cls: type[IndexT], documents: Iterable[Any], options: Mapping[str, Any], /, **constructor: Any
) -> IndexT:
    """What every typed ``from_documents`` does: load ``documents`` and cut them as
    ``options`` say (the keys of
    :class:`~graphrag_integrations.core.index.build_options.DocumentOptions`; the splitter
    chosen stays the index's), then ``cls.from_passages(passages, **constructor)``.

    A ``from_documents(documents, *, <its arguments>, **options)`` calls
    ``build_from_documents(cls, documents, options, <its arguments>)``; one typed
    ``**options: Unpack[...]`` with its constructor's arguments too
    (:class:`~graphrag_integrations.core.index.build_options.IndexOptions`) calls
    ``build_from_documents(cls, documents, options)``: the keys of ``options`` that are not
    document options go to the constructor. The checkpoint and executor options never get
    here (the wrappers of ``from_documents`` take them).

    Raises
    ------
    TypeError
        A key ``cls.from_documents`` does not name (one with an untyped ``**kwargs`` names
        them all: the constructor refuses what it does not take).
    EmptyCorpusError
        If no document has any text.
    """
    loading = {k: v for k, v in options.items() if k in DocumentOptions.__annotations__}
    constructor = {**{k: v for k, v in options.items() if k not in loading}, **constructor}
    accepted = named_parameters(cls.from_documents)
    if all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
        check_options(f"{cls.__name__}.from_documents()", constructor, accepted)
    chosen = chosen_splitter(
        loading.get("splitter", DEFAULT_SPLITTER), loading.get("chunking", True)
    )
    cls.resolved_params(  # a bad preset / params combination fails before any document is read
        constructor.get("index_params"), constructor.get("query_params"), constructor.get("preset")
    )
    loaded = load_documents(documents, **pop_load_options(loading))
    return _from_loaded(cls, require_nonempty(loaded), chosen, constructor)


def _from_loaded(
    cls: type[IndexT], docs: Sequence[Any], chosen: Any, constructor: dict[str, Any]
) -> IndexT:
    splitter = cls.default_splitter() if chosen is DEFAULT_SPLITTER else chosen
    index = cls.from_passages(split_documents(docs, splitter), **constructor)
    if chosen is not DEFAULT_SPLITTER:
        index.splitter = chosen
    return index


class BaseIndex(IndexPersistence, ABC):
    """Abstract base of every retriever/index in the package.

    Subclasses set :attr:`method` (the name recorded in manifests and used by the CLI) and
    :attr:`default_k`, implement the abstract methods and the persistence hooks
    (:meth:`manifest`, :meth:`_write_files`, :meth:`_read_files`, and where needed
    :meth:`_from_manifest`, :meth:`_check_loaded`...) following the rules of the module
    docstring. The persist / load template and its hooks are inherited from
    :class:`~graphrag_integrations.core.index.persistence.IndexPersistence`.
    """

    method: ClassVar[str] = "base"
    #: Layout version of the index directory :meth:`persist` writes (in the manifest).
    format_version: ClassVar[int] = FORMAT_VERSION
    #: Oldest layout :meth:`load` reads (an older index must be rebuilt).
    oldest_format_version: ClassVar[int] = 1
    #: The index-time parameter class (``from_documents(index_params=...)``).
    index_params_class: ClassVar[type[Params]] = NoParams
    #: The query-time parameters (a ``QueryParamsField``: its class is the method's
    #: query-params class; a bound retriever's params during its queries).
    query_params: QueryParamsField[Params] = QueryParamsField(NoParams)
    #: The field of :attr:`query_params` that is the default ``k`` (the paper's letter for
    #: "results returned", e.g. ``"N"``); ``None``: :attr:`default_k` is set directly.
    k_param: ClassVar[str | None] = None
    #: The longest query processed (characters; the rest is cut with one warning): the core's
    #: :data:`~graphrag_integrations.core.validation.MAX_QUERY_CHARS`, tighter where a
    #: method's query work grows fast with its length. Settable per index.
    max_query_chars: int = MAX_QUERY_CHARS
    #: Whether scores use corpus-wide statistics (idf, a graph over every document), so that a
    #: filtered query may rank differently from an index of the matching documents alone (the
    #: filter boundary holds either way; module notes).
    corpus_wide_scores: ClassVar[bool] = True
    #: Tokens per chunk of :meth:`default_splitter` (each method's: ``docs/reference/chunking.md``).
    chunk_size: ClassVar[int] = 256
    #: Tokens shared by consecutive chunks of :meth:`default_splitter`.
    chunk_overlap: ClassVar[int] = 32
    #: Methods run under the instance's read lock (those a subclass has are wrapped).
    read_methods: ClassVar[tuple[str, ...]] = ("retrieve", "persist", "doc_ids")
    #: Methods run under the instance's write lock (those a subclass has are wrapped).
    write_methods: ClassVar[tuple[str, ...]] = (
        "insert",
        "delete",
        "delete_many",
        "upsert",
        "add_passages",
        "drop_vector_store",
    )
    #: Methods adding a batch of passages, whose size decides ``show_progress=None``.
    batch_methods: ClassVar[tuple[str, ...]] = ("add_passages",)
    #: Progress bars: ``True`` / ``False`` / ``None`` (default: by batch size, see
    #: :mod:`~graphrag_integrations.core.progress`); reads as a ``bool``.
    show_progress = ProgressSetting()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Wrap the subclass's :attr:`read_methods` / :attr:`write_methods` with its lock, and
        its :attr:`batch_methods` with :func:`~graphrag_integrations.core.progress.track_batch`."""
        super().__init_subclass__(**kwargs)
        if isinstance(cls.__dict__.get("from_documents"), classmethod):  # checkpoint_dir, executor
            cls.from_documents = distributable(  # type: ignore[method-assign]
                checkpointable(cls.__dict__["from_documents"])
            )
        for name in cls.batch_methods:
            if name in cls.__dict__ and not is_guarded(cls.__dict__[name]):
                setattr(cls, name, track_batch(cls.__dict__[name]))
        journal_methods(cls, guarded=False)  # database graphs: all-or-nothing writes
        guard_methods(cls, readers=cls.read_methods, writers=cls.write_methods)
        # a failed write rolled back before a read
        journal_methods(cls, ("retrieve", "doc_ids", "persist"), guarded=True)
        snapshot.narrow_methods(cls)  # doc_ids: the documents this index holds

    @property
    def default_k(self) -> int:
        """Results of :meth:`retrieve` when it gets no ``k``: the :attr:`k_param` field of
        :attr:`query_params` (else the value set, default 5)."""
        if self.k_param is not None:
            return int(getattr(self.query_params, self.k_param))
        return int(self.__dict__.get("_default_k", 5))

    @default_k.setter
    def default_k(self, value: int) -> None:
        if self.k_param is not None:
            raise AttributeError(
                f"{type(self).__name__}.default_k is query_params.{self.k_param}; "
                "set it through query_params or as_retriever(k=...)"
            )
        self.__dict__["_default_k"] = value

    @classmethod
    def query_params_class(cls) -> type[Params]:
        """The class of :attr:`query_params`."""
        return cls.query_params.params_class

    @classmethod
    def resolved_params(
        cls, index_params: Any = None, query_params: Any = None, preset: str | None = None
    ) -> tuple[Any, Any]:
        """The ``(index params, query params)`` of the constructor's arguments:
        :func:`~graphrag_integrations.core.params.resolve_params` with the class's
        :attr:`index_params_class` and :meth:`query_params_class` (a subclass declares the
        type of its ``self.index_params``)."""
        return resolve_params(
            cls.index_params_class,
            cls.query_params_class(),
            index_params=index_params,
            query_params=query_params,
            preset=preset,
        )

    @contextmanager
    def using_query_params(self, params: Params) -> Iterator[None]:
        """Within the block, :attr:`query_params` of this index reads ``params`` (in this
        thread or task only; other queries keep the index's own): how a retriever of
        ``as_retriever`` runs its queries."""
        if not isinstance(params, self.query_params_class()):
            raise InvalidArgumentError(
                f"query_params must be a {self.query_params_class().__name__}, "
                f"got {type(params).__name__}"
            )
        with bound_query_params(self, params):
            yield

    @property
    def rwlock(self) -> ReadWriteLock:
        """This index's readers-writer lock (created on first use; see the module notes).

        Hold ``with index.rwlock.write():`` around several mutations that must look like one
        to concurrent queries, or ``with index.rwlock.read():`` around several queries that
        must see the same index.
        """
        return lock_of(self)

    # -- chunking -------------------------------------------------------------------------
    @classmethod
    def default_splitter(cls) -> Any:
        """The :class:`~graphrag_integrations.core.text.chunking.TokenChunker` of
        :attr:`chunk_size` / :attr:`chunk_overlap` tokens (shared, tokenizer loaded once)."""
        return default_chunker(cls.chunk_size, cls.chunk_overlap)

    @property
    def splitter(self) -> Any:
        """How ``insert`` / ``upsert`` cut documents when not told: the splitter
        ``from_documents`` was given, else :meth:`default_splitter`; ``None``: no chunking."""
        chosen = self.__dict__.get("_splitter", DEFAULT_SPLITTER)
        return type(self).default_splitter() if chosen is DEFAULT_SPLITTER else chosen

    @splitter.setter
    def splitter(self, value: Any) -> None:
        self.__dict__["_splitter"] = (
            value if value is None or value is DEFAULT_SPLITTER else check_splitter(value)
        )

    def document_passages(self, documents: Iterable[Any], options: dict[str, Any]) -> list[Passage]:
        """The passages of ``documents`` for ``insert``: loaded with ``options``' load options
        and cut with its chunking option or :attr:`splitter` (module notes).

        ``options`` is emptied; an option that is neither raises ``TypeError``.

        Examples
        --------
        ``DenseRetriever.insert`` calls it (a LangChain-style splitter here):

        >>> from graphrag_integrations.baselines.dense import DenseRetriever
        >>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
        >>> index = DenseRetriever.from_documents(["Seed."], embedding=FakeEmbedder())
        >>> class Lines:
        ...     def split_text(self, text):
        ...         return text.split("\\n")
        >>> docs = [{"id": "d", "text": "A.\\nB."}]
        >>> [(p.id, p.text) for p in index.document_passages(docs, {"splitter": Lines()})]
        [('d#0', 'A.'), ('d#1', 'B.')]
        """
        chosen = pop_splitter(options, self.splitter)
        splitter = type(self).default_splitter() if chosen is DEFAULT_SPLITTER else chosen
        load_options = pop_load_options(options)
        if options:
            raise TypeError(f"unknown option(s) {sorted(options)} for {type(self).__name__}")
        return split_documents(load_documents(documents, **load_options), splitter)

    # -- lifecycle --------------------------------------------------------------------------
    @classmethod
    def from_documents(cls: type[IndexT], documents: Iterable[Any], **kwargs: Any) -> IndexT:
        """Build an index from LangChain/LlamaIndex documents, strings, files or folders.

        Documents are cut by :meth:`default_splitter` unless ``splitter=`` / ``chunking=``
        says otherwise (module notes); the load options (``errors=``, ``report=``...) go to
        ``load_documents`` (see
        :func:`~graphrag_integrations.core.text.documents.pop_load_options`), the rest to
        :meth:`from_passages`. The package's indexes override it with a typed signature
        (their own arguments named, the shared ones
        ``**options: Unpack[DocumentBuildOptions]``) calling :func:`build_from_documents`.

        Raises
        ------
        EmptyCorpusError
            If no document has any text.
        """
        chosen = pop_splitter(kwargs)
        docs = require_nonempty(load_documents(documents, **pop_load_options(kwargs)))
        return _from_loaded(cls, docs, chosen, kwargs)

    @classmethod
    @abstractmethod
    def from_passages(cls: type[IndexT], passages: Sequence[Passage], **kwargs: Any) -> IndexT:
        """Build an index from passages already cut (no chunking); ``kwargs`` go to the
        constructor. Raises ``EmptyCorpusError`` when there is nothing to index."""

    @abstractmethod
    def insert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Add documents without a rebuild; returns the ids of the documents added.

        Documents already indexed (same id) are skipped with a warning. ``options`` are the
        load and chunking options: implementations get their passages from
        :meth:`document_passages`.
        """

    @abstractmethod
    def doc_ids(self) -> list[str]:
        """The ids of the documents the index holds, sorted, each once."""

    @writer
    @journaled
    def upsert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Insert documents, replacing those already indexed under the same id.

        Loads ``documents`` once (load options apply there), deletes every indexed document
        whose id is among them, then inserts them all, under one write lock: a query sees
        the old or the new version of the index, never a document missing in between. The
        options are checked before anything is deleted. For an index with a database graph
        or a vector server the whole ``upsert`` is one journaled write
        (:mod:`~graphrag_integrations.core.index.journal`): interrupted (an error, a server
        or the process killed), it is rolled back and the replaced documents are put back
        as they were; an index all in the process propagates an error of the insert (an
        embedder or LLM failure) with the replaced documents already deleted (upsert them
        again).

        Returns
        -------
        list of str
            The ids inserted (as :meth:`insert` returns them).

        Examples
        --------
        >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
        >>> index = BM25Retriever.from_documents([{"id": "a", "text": "Old text."}])
        >>> index.upsert([{"id": "a", "text": "New text."}])
        ['a']
        >>> [p.text for p in index.passages], index.doc_ids()
        (['New text.'], ['a'])
        """
        docs = load_documents(documents, **pop_load_options(options))
        unknown = set(options) - set(CHUNKING_OPTIONS)
        if unknown:  # before anything is deleted
            raise TypeError(f"unknown option(s) {sorted(unknown)} for {type(self).__name__}")
        pop_splitter(dict(options))  # checks the chunking option, before anything is deleted
        held = set(self.doc_ids())
        replaced = [doc_id for doc_id in dict.fromkeys(d.id for d in docs) if doc_id in held]
        keep_replaced(self, replaced)  # journaled: what a rollback puts back
        for doc_id in replaced:
            self.delete(doc_id)
        if replaced:
            logger.info("upsert: replacing %d document(s): %s", len(replaced), ", ".join(replaced))
        return self.insert(docs, **options)

    @abstractmethod
    def delete(self, doc_id: str) -> bool:
        """Remove a source document and everything derived from it.

        Returns ``True`` if something was removed; an unknown id logs a warning (see
        :meth:`_unknown_document`) and returns ``False``, never raises.
        """

    def delete_many(self, doc_ids: Iterable[str]) -> list[str]:
        """:meth:`delete` each of ``doc_ids``; returns those that had something removed.

        An index may do it in one pass (Clue-RAG writes its statistics once).
        """
        return [doc_id for doc_id in dict.fromkeys(doc_ids) if self.delete(doc_id)]

    def retrieve(
        self, query: str, k: int | None = None, *, filter: FilterLike = None
    ) -> list[RetrievedPassage]:
        """Return up to ``k`` passages for ``query``, best first.

        Parameters
        ----------
        query : str
            The question (empty or blank: :class:`~graphrag_integrations.errors.EmptyQueryError`);
            only its first :attr:`max_query_chars` characters are used (one warning when cut).
        k : int, optional
            Checked with ``check_k(k, self.default_k)``
            (:func:`~graphrag_integrations.core.validation.check_k`).
        filter : dict or filter tree, optional
            Keep only passages whose metadata matches (see
            :mod:`~graphrag_integrations.core.retrieval.filters` and the module notes).

        Raises
        ------
        ValueError
            On a malformed filter (before any work).
        """
        query = check_query(query, self.max_query_chars, owner=type(self).__name__)
        k = check_k(k, self.default_k)
        # another process wrote the database graph: only the documents this index holds
        return snapshot.read_consistently(
            self, parse_filter(filter), lambda where: self._retrieve_with(query, k, where)
        )

    def _retrieve_with(
        self, query: str, k: int, where: MetadataFilter | None
    ) -> list[RetrievedPassage]:
        if where is None:
            return self._retrieve(query, k)
        return self._retrieve_filtered(query, k, where)

    def _retrieve(self, query: str, k: int) -> list[RetrievedPassage]:
        """The subclass's retrieval: up to ``k`` (already checked) passages, best first."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement _retrieve(query, k) (or override retrieve)"
        )

    def _retrieve_filtered(
        self, query: str, k: int, where: MetadataFilter
    ) -> list[RetrievedPassage]:
        """Up to ``k`` passages matching ``where``: by default
        :func:`~graphrag_integrations.core.retrieval.filters.retrieve_filtered` over
        :meth:`_retrieve`
        (a growing budget). Override it where the filter can be applied before ranking."""
        return retrieve_filtered(self._retrieve, query, k, where)

    async def aretrieve(
        self, query: str, k: int | None = None, *, filter: FilterLike = None
    ) -> list[RetrievedPassage]:
        """Async :meth:`retrieve`; the default runs it in a worker thread.

        Subclasses whose retrieval awaits an LLM override this with a native coroutine.
        """
        return await asyncio.to_thread(self.retrieve, query, k, filter=filter)

    async def ainsert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Async :meth:`insert`: runs it in a worker thread, so the event loop keeps running
        (the index's write lock is taken there)."""
        return await asyncio.to_thread(self.insert, documents, **options)

    async def aupsert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Async :meth:`upsert` (in a worker thread, like :meth:`ainsert`)."""
        return await asyncio.to_thread(self.upsert, documents, **options)

    async def adelete(self, doc_id: str) -> bool:
        """Async :meth:`delete` (in a worker thread, like :meth:`ainsert`)."""
        return await asyncio.to_thread(self.delete, doc_id)

    def drop_vector_store(self) -> list[str]:
        """Delete the Chroma collections holding this index's vectors; returns their names.

        Only the collections of this index are removed
        (:meth:`~graphrag_integrations.core.index.store.IndexStore.drop_vector_store`); its
        vector search finds nothing afterwards, so persist first to keep the vectors. An
        index whose vectors are in memory has none: ``[]``.
        """
        return [name for store in index_stores_of(self) for name in store.drop_vector_store()]

    def _after_failed_write(self) -> None:
        """Hook: a journaled write (``insert``, ``upsert``, ``delete``, ``delete_many``) of an
        index with a database graph failed, and the graph writes it had queued were dropped
        (:mod:`~graphrag_integrations.core.index.journal`); before the rollback, drop the
        in-process state the write derived that the graph may not hold (counts, caches).
        Default: nothing."""
        return None

    def _unknown_document(self, doc_id: str) -> bool:
        """What :meth:`delete` does for an id the index does not hold: warn, return False."""
        logger.warning(
            "%s.delete(%r): no such document in the index; nothing removed",
            type(self).__name__,
            doc_id,
        )
        return False


# ``checkpoint_dir=`` for every index: the subclasses inherit this ``from_documents`` (those
# defining their own are wrapped again in ``__init_subclass__``).
BaseIndex.from_documents = distributable(  # type: ignore[method-assign]
    checkpointable(BaseIndex.__dict__["from_documents"])
)
