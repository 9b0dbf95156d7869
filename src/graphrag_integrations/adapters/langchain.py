"""Any core retriever as a LangChain ``BaseRetriever``.

The sync path calls the core ``retrieve``; the async path awaits the core ``aretrieve`` (no
thread hop added here). Both run inside
:func:`~graphrag_integrations.core.context.callbacks_scope` with the retriever run's child
callbacks, so an LLM the method calls is traced under this retriever's run.

Errors raised by the core retriever (for example
:class:`~graphrag_integrations.errors.EmptyQueryError` on an empty query) propagate unchanged;
LangChain reports them to the callbacks with ``on_retriever_error`` first.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever, LangSmithRetrieverParams
from pydantic import ConfigDict, Field, field_validator

from graphrag_integrations.adapters.validation import check_k
from graphrag_integrations.core.context import callbacks_scope
from graphrag_integrations.core.types import RetrievedPassage, Retriever

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
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Retriever
    """The wrapped core retriever."""
    k: int | None = Field(default=None)
    """Documents per call (``None``: the core retriever's default)."""

    @field_validator("k")
    @classmethod
    def _validate_k(cls, value: int | None) -> int | None:
        return check_k(value)

    def _get_ls_params(self, **kwargs: Any) -> LangSmithRetrieverParams:
        params = super()._get_ls_params(**kwargs)
        method = getattr(self.retriever, "method", None)
        if isinstance(method, str) and method:
            params["ls_retriever_name"] = method
        return params

    def _call_k(self, k: int | None, kwargs: dict[str, Any]) -> int | None:
        unknown = sorted(set(kwargs) - _LANGCHAIN_INVOKE_KWARGS)
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected keyword arguments {unknown}")
        return self.k if check_k(k) is None else k

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        n = self._call_k(k, kwargs)
        with callbacks_scope(run_manager.get_child()):
            results = self.retriever.retrieve(query, n)
        return [to_document(r) for r in results]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        n = self._call_k(k, kwargs)
        with callbacks_scope(run_manager.get_child()):
            results = await self.retriever.aretrieve(query, n)
        return [to_document(r) for r in results]
