"""Any core retriever as a LangChain ``BaseRetriever``.

The sync path calls the core ``retrieve``; the async path awaits the core ``aretrieve`` (no
thread hop added here). Both run inside
:func:`~graphrag_integrations.core.context.callbacks_scope` with the retriever run's child
callbacks, so an LLM the method calls is traced under this retriever's run.

Over an index (anything with ``insert``), the retriever also adds documents the way
LangChain's ``VectorStoreRetriever`` does: ``add_documents(documents, ids=None)`` and
``aadd_documents``, the async one without blocking the event loop (the index's ``ainsert``,
which runs the insert in a worker thread under the index's write lock).

Metadata filters: ``LangChainRetriever(..., filter={...})`` (or ``as_langchain_retriever(filter=
...)`` / ``search_kwargs={"filter": ...}``) and ``invoke(query, filter={...})`` for one call. The
retriever's filter is an access boundary: a call's filter is combined with it (AND), so a call
can narrow it but never widen it (``filter={}`` or ``None`` keeps it). A call also takes
LangChain's spelling, ``invoke(query, search_kwargs={"k": 2, "filter": {...}})`` (only these two
keys, not repeated as ``k=`` / ``filter=``). The language is
:mod:`graphrag_integrations.core.retrieval.filters` (LangChain's dict form); a malformed filter
raises :class:`~graphrag_integrations.errors.InvalidArgumentError` before the core retriever
runs.

Errors raised by the core retriever (for example
:class:`~graphrag_integrations.errors.EmptyQueryError` on an empty query) propagate unchanged;
LangChain reports them to the callbacks with ``on_retriever_error`` first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, cast

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever, LangSmithRetrieverParams
from pydantic import ConfigDict, Field, field_validator

from graphrag_integrations.adapters.validation import check_k, merge_search_kwargs
from graphrag_integrations.core.context import callbacks_scope
from graphrag_integrations.core.retrieval.filters import (
    FilterLike,
    MetadataFilter,
    aretrieve_with_filter,
    combine_filters,
    parse_filter,
    retrieve_with_filter,
)
from graphrag_integrations.core.types import RetrievedPassage, Retriever
from graphrag_integrations.errors import InvalidArgumentError

# keyword arguments LangChain's ``invoke`` itself reads and then also passes on to us
_LANGCHAIN_INVOKE_KWARGS = frozenset({"verbose"})


def to_document(passage: RetrievedPassage) -> Document:
    """Convert a core result into a LangChain ``Document``.

    ``page_content`` is the passage text, ``id`` the passage id and ``metadata``
    :meth:`RetrievedPassage.to_metadata` (source metadata plus ``passage_id``, ``doc_id``,
    ``score`` and ``explanation``).

    Examples
    --------
    >>> from graphrag_integrations.core.types import Passage, RetrievedPassage
    >>> doc = to_document(RetrievedPassage(Passage("p1", "Rome is in Italy.", "d1"), 0.9))
    >>> doc.id, doc.page_content, doc.metadata["score"]
    ('p1', 'Rome is in Italy.', 0.9)
    """
    return Document(page_content=passage.text, id=passage.id, metadata=passage.to_metadata())


class LangChainRetriever(BaseRetriever):
    """LangChain retriever over any core retriever.

    Parameters
    ----------
    retriever : Retriever
        Anything with ``retrieve(query, k)`` and ``aretrieve(query, k)`` (every index and
        baseline of this package).
    k : int, optional
        Documents per call; ``None`` leaves the choice to the core retriever's default.
        ``invoke(query, k=n)`` overrides it for one call.
    filter : dict or filter tree, optional
        Keep only passages whose metadata matches
        (:mod:`graphrag_integrations.core.retrieval.filters`); ``invoke(query, filter=...)``
        adds conditions for one call (AND: it cannot widen this filter).
    tags, metadata
        The usual LangChain run tags and metadata.

    Raises
    ------
    pydantic.ValidationError
        If ``retriever`` is not a core retriever or ``k`` is not an integer >= 1.

    Examples
    --------
    >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
    >>> index = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
    >>> retriever = LangChainRetriever(retriever=index, k=1)
    >>> retriever.invoke("Where is Rome?")[0].page_content
    'Rome is in Italy.'
    >>> len(retriever.invoke("Where is Rome?", k=2))
    2
    >>> from langchain_core.documents import Document
    >>> retriever.add_documents([Document("Oslo is in Norway.", id="oslo")])
    ['oslo']
    >>> retriever.invoke("Where is Oslo?")[0].metadata["doc_id"]
    'oslo'
    >>> hits = retriever.invoke("Where is Oslo?", k=3, filter={"doc_id": {"$ne": "oslo"}})
    >>> len(hits), "oslo" in [d.metadata["doc_id"] for d in hits]
    (2, False)
    >>> len(retriever.invoke("Where is Oslo?", search_kwargs={"k": 2}))
    2
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Retriever
    """The wrapped core retriever."""
    k: int | None = Field(default=None)
    """Documents per call (``None``: the core retriever's default)."""
    filter: Any = Field(default=None)
    """Metadata filter of every call (parsed: a :mod:`~graphrag_integrations.core.retrieval.filters`
    tree, or ``None``)."""

    @field_validator("k")
    @classmethod
    def _validate_k(cls, value: int | None) -> int | None:
        return check_k(value)

    @field_validator("filter")
    @classmethod
    def _validate_filter(cls, value: Any) -> MetadataFilter | None:
        return parse_filter(value)

    def _get_ls_params(self, **kwargs: Any) -> LangSmithRetrieverParams:
        params = super()._get_ls_params(**kwargs)
        method = getattr(self.retriever, "method", None)
        if isinstance(method, str) and method:
            params["ls_retriever_name"] = method
        return params

    def _call_args(
        self,
        k: int | None,
        filter: FilterLike,
        search_kwargs: dict[str, Any] | None,
        kwargs: dict[str, Any],
    ) -> tuple[int | None, MetadataFilter | None]:
        """The call's ``(k, filter)``: its ``k`` (directly or in ``search_kwargs``), else the
        retriever's; the retriever's filter AND the call's."""
        unknown = sorted(set(kwargs) - _LANGCHAIN_INVOKE_KWARGS)
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected keyword arguments {unknown}")
        k, filter = merge_search_kwargs(search_kwargs, k, filter)
        return (self.k if check_k(k) is None else k), combine_filters(self.filter, filter)

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        filter: FilterLike = None,
        search_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        n, where = self._call_args(k, filter, search_kwargs, kwargs)
        with callbacks_scope(run_manager.get_child()):
            results = retrieve_with_filter(self.retriever, query, n, where)
        return [to_document(r) for r in results]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        filter: FilterLike = None,
        search_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        n, where = self._call_args(k, filter, search_kwargs, kwargs)
        with callbacks_scope(run_manager.get_child()):
            results = await aretrieve_with_filter(self.retriever, query, n, where)
        return [to_document(r) for r in results]

    # -- adding documents (LangChain's VectorStoreRetriever convention) ---------------------
    def add_documents(self, documents: Sequence[Document], **kwargs: Any) -> list[str]:
        """Add documents to the wrapped index (its ``insert``); returns the ids added.

        As in LangChain, ``ids=`` (one per document) takes precedence over the documents'
        own ``id``. The other keyword arguments are the index's ``insert`` options
        (``errors=``, ``report=``, ``splitter=``, ``chunking=``...). Documents already
        indexed are skipped (see :meth:`~graphrag_integrations.core.index.base.BaseIndex.insert`).

        Raises
        ------
        NotImplementedError
            If the wrapped retriever has no ``insert`` (a retriever over an index it does not
            own, e.g. Clue's ``QIter``: add to the index instead).
        InvalidArgumentError
            If ``ids`` does not give one id per document.
        """
        documents = _with_ids(documents, kwargs.pop("ids", None))
        return self._index_method("insert")(documents, **kwargs)

    async def aadd_documents(self, documents: Sequence[Document], **kwargs: Any) -> list[str]:
        """Async :meth:`add_documents`: awaits the index's ``ainsert`` (a worker thread), or
        runs its ``insert`` in one, so the event loop keeps running."""
        documents = _with_ids(documents, kwargs.pop("ids", None))
        ainsert = getattr(self.retriever, "ainsert", None)
        if callable(ainsert):
            added: list[str] = await ainsert(documents, **kwargs)
            return added
        return await asyncio.to_thread(self._index_method("insert"), documents, **kwargs)

    def _index_method(self, name: str) -> Callable[..., list[str]]:
        method = getattr(self.retriever, name, None)
        if not callable(method):
            raise NotImplementedError(
                f"{type(self.retriever).__name__} cannot add documents (it has no {name}); "
                "wrap the index that owns the documents"
            )
        return cast(Callable[..., list[str]], method)


def _with_ids(documents: Sequence[Document], ids: Sequence[str] | None) -> list[Document]:
    """``documents``, each with its id from ``ids`` when given (LangChain's precedence)."""
    documents = list(documents)
    if ids is None:
        return documents
    ids = list(ids)
    if len(ids) != len(documents):
        raise InvalidArgumentError(f"got {len(ids)} ids for {len(documents)} documents")
    return [d.model_copy(update={"id": i}) for d, i in zip(documents, ids, strict=True)]
