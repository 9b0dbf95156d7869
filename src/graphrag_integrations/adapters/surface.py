"""The framework surface every method shares.

:class:`FrameworkSurface` is mixed into every core retriever (baselines and methods) and turns
``self`` into a LangChain retriever, a LlamaIndex retriever or query engine, or an agent tool.
The mixin is imported by the methods at import time, so this module imports neither LangChain
nor LlamaIndex: the adapter modules are imported inside each method, on first use.

:meth:`FrameworkSurface.as_retriever` gives every index the same query entry point: a
:class:`QueryRetriever` bound to a ``k`` and to query params (validated overrides of the
index's); the generic one is :class:`BoundRetriever` (Clue returns its Q-Iter).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graphrag_integrations.adapters.tools import (
    DEFAULT_TOOL_DESCRIPTION,
    DEFAULT_TOOL_NAME,
    ToolKind,
)
from graphrag_integrations.adapters.validation import (
    as_core_retriever,
    check_k,
    merge_search_kwargs,
)
from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.params import Params, bind_query_params
from graphrag_integrations.core.retrieval.filters import (
    FilterLike,
    MetadataFilter,
    combine_filters,
    parse_filter,
)
from graphrag_integrations.core.types import RetrievedPassage
from graphrag_integrations.errors import InvalidArgumentTypeError

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.tools import QueryEngineTool, RetrieverTool

    from graphrag_integrations.adapters.langchain import LangChainRetriever
    from graphrag_integrations.adapters.llama_index import LlamaIndexRetriever


class FrameworkSurface:
    """Mixin giving a core retriever ``as_langchain_retriever`` and friends.

    The class it is mixed into must satisfy the core
    :class:`~graphrag_integrations.core.types.Retriever` protocol and define ``default_k``
    (every :class:`~graphrag_integrations.core.index.base.BaseIndex` does); a ``k`` of
    ``None`` in the methods below means ``self.default_k`` at the time of the call.

    Examples
    --------
    >>> from llama_index.core.llms import MockLLM
    >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
    >>> index = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
    >>> index.as_langchain_retriever(k=1).invoke("Where is Paris?")[0].page_content
    'Paris is in France.'
    >>> answer = index.as_query_engine(llm=MockLLM(), similarity_top_k=1).query("Paris?")
    >>> answer.source_nodes[0].node.get_content()
    'Paris is in France.'
    """

    default_k: int

    def as_retriever(
        self,
        k: int | None = None,
        *,
        query_params: Any = None,
        filter: FilterLike = None,
        **overrides: Any,
    ) -> QueryRetriever:
        """A retriever over this index returning ``k`` results per query, with other query
        params.

        Parameters
        ----------
        k : int, optional
            Results per query (``None``: the params' default, see ``BaseIndex.k_param``); a
            call's ``retrieve(query, k=...)`` still wins.
        query_params : params object or mapping, optional
            The index's query-params class (``None``: the index's own).
        filter : dict or filter tree, optional
            Metadata filter bound to every query (an access boundary: a call's ``filter=`` is
            combined with it, AND; ``{}`` or ``None`` never removes it).
        **overrides
            Field names of that class (``alpha=2``, ``fusion="rrf"``...), applied on top.

        Returns
        -------
        QueryRetriever
            A :class:`BoundRetriever` (Clue: its ``QIter``).

        Raises
        ------
        InvalidParameterError
            An override that is not a field of the query-params class, or a bad value.
        InvalidArgumentError
            An invalid ``k``.

        Examples
        --------
        >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
        >>> index = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
        >>> [hit.text for hit in index.as_retriever(k=1).retrieve("Where is Rome?")]
        ['Rome is in Italy.']
        """
        if not isinstance(self, BaseIndex):
            raise InvalidArgumentTypeError(
                f"{type(self).__name__} is not an index: as_retriever needs a BaseIndex"
            )
        params = bind_query_params(self.query_params, query_params, overrides)
        return BoundRetriever(self, params, k, filter=filter)

    def as_langchain_retriever(
        self,
        k: int | None = None,
        *,
        filter: Any = None,
        search_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> LangChainRetriever:
        """Wrap ``self`` as a LangChain ``BaseRetriever``.

        Parameters
        ----------
        k : int, optional
            Number of documents per call (``None``: ``self.default_k``); a call can still
            override it with ``retriever.invoke(query, k=...)``.
        filter : dict or filter tree, optional
            Metadata filter of every call (:mod:`graphrag_integrations.core.retrieval.filters`):
            an access boundary, combined (AND) with a call's ``invoke(query, filter=...)``,
            which can narrow it but never widen it.
        search_kwargs : mapping, optional
            LangChain's vector-store retriever spelling: ``{"k": 3, "filter": {...}}`` (only
            these two keys; not together with ``k=`` / ``filter=``).
        **kwargs
            Other :class:`~graphrag_integrations.adapters.langchain.LangChainRetriever`
            fields (``tags``, ``metadata``).

        Returns
        -------
        LangChainRetriever

        Raises
        ------
        InvalidArgumentError
            On a malformed filter, or ``search_kwargs`` with other keys or repeating ``k`` /
            ``filter``.
        """
        from graphrag_integrations.adapters.langchain import LangChainRetriever

        k, filter = merge_search_kwargs(search_kwargs, k, filter)
        return LangChainRetriever(
            retriever=as_core_retriever(self), k=self._k(k), filter=filter, **kwargs
        )

    def as_llama_index_retriever(
        self, similarity_top_k: int | None = None, **kwargs: Any
    ) -> LlamaIndexRetriever:
        """Wrap ``self`` as a LlamaIndex ``BaseRetriever``.

        Parameters
        ----------
        similarity_top_k : int, optional
            Number of nodes per call (``None``: ``self.default_k``).
        **kwargs
            Passed to :class:`~graphrag_integrations.adapters.llama_index.LlamaIndexRetriever`
            (``filters=MetadataFilters(...)``, ``callback_manager``, ``verbose``).

        Returns
        -------
        LlamaIndexRetriever
        """
        from graphrag_integrations.adapters.llama_index import LlamaIndexRetriever

        return LlamaIndexRetriever(
            as_core_retriever(self), self._k(similarity_top_k, "similarity_top_k"), **kwargs
        )

    def as_query_engine(
        self,
        llm: Any = None,
        *,
        similarity_top_k: int | None = None,
        filters: Any = None,
        **kwargs: Any,
    ) -> RetrieverQueryEngine:
        """A LlamaIndex ``RetrieverQueryEngine`` answering from this retriever's passages.

        Parameters
        ----------
        llm : llama_index.core.llms.LLM, optional
            The answering LLM. ``None`` uses ``llama_index.core.Settings.llm`` (LlamaIndex's
            default is OpenAI, which needs a key and the network); for fully offline answers
            pass a local LlamaIndex LLM.
        similarity_top_k : int, optional
            Passages given to the LLM (``None``: ``self.default_k``).
        filters : MetadataFilters, dict or filter tree, optional
            Only passages whose metadata matches reach the LLM (see
            :func:`~graphrag_integrations.adapters.llama_index.as_filter`).
        **kwargs
            Passed to ``RetrieverQueryEngine.from_args`` (``response_mode``,
            ``node_postprocessors``, ``streaming``...).

        Returns
        -------
        RetrieverQueryEngine
        """
        retriever = self.as_llama_index_retriever(similarity_top_k, filters=filters)
        return retriever.as_query_engine(llm=llm, **kwargs)

    def as_langchain_tool(
        self,
        name: str = DEFAULT_TOOL_NAME,
        description: str = DEFAULT_TOOL_DESCRIPTION,
        *,
        k: int | None = None,
        filter: Any = None,
        **kwargs: Any,
    ) -> BaseTool:
        """A LangChain agent tool returning the retrieved passages as text.

        Parameters
        ----------
        name, description : str
            What the agent's LLM sees.
        k : int, optional
            Passages per call (``None``: ``self.default_k``).
        filter : dict or filter tree, optional
            Metadata filter of every call (see :meth:`as_langchain_retriever`).
        **kwargs
            Passed to ``langchain_core.tools.create_retriever_tool`` (``document_prompt``,
            ``document_separator``, ``response_format``).

        Returns
        -------
        langchain_core.tools.BaseTool
        """
        from graphrag_integrations.adapters.tools import langchain_tool

        retriever = self.as_langchain_retriever(k, filter=filter)
        return langchain_tool(retriever, name, description, **kwargs)

    def as_llama_index_tool(
        self,
        name: str = DEFAULT_TOOL_NAME,
        description: str = DEFAULT_TOOL_DESCRIPTION,
        *,
        kind: ToolKind = "retriever",
        llm: Any = None,
        similarity_top_k: int | None = None,
        filters: Any = None,
        **kwargs: Any,
    ) -> RetrieverTool | QueryEngineTool:
        """A LlamaIndex agent tool: raw passages (``kind="retriever"``) or an LLM answer.

        Parameters
        ----------
        name, description : str
            What the agent's LLM sees.
        kind : {"retriever", "query_engine"}
            ``"retriever"`` gives a ``RetrieverTool`` (passage texts); ``"query_engine"``
            gives a ``QueryEngineTool`` answering with ``llm``.
        llm : llama_index.core.llms.LLM, optional
            Only for ``kind="query_engine"``; ``None`` uses ``Settings.llm``.
        similarity_top_k : int, optional
            Passages per call (``None``: ``self.default_k``).
        filters : MetadataFilters, dict or filter tree, optional
            Metadata filter of every call (see :meth:`as_llama_index_retriever`).
        **kwargs
            Passed to ``RetrieverTool.from_defaults`` or ``RetrieverQueryEngine.from_args``.

        Returns
        -------
        RetrieverTool or QueryEngineTool
        """
        from graphrag_integrations.adapters.tools import llama_index_tool

        return llama_index_tool(
            self.as_llama_index_retriever(similarity_top_k, filters=filters),
            name,
            description,
            kind=kind,
            llm=llm,
            **kwargs,
        )

    def _k(self, k: int | None, name: str = "k") -> int:
        checked = check_k(k, name)
        return self.default_k if checked is None else checked


class QueryRetriever(FrameworkSurface, ABC):
    """What ``as_retriever`` returns: a retriever with its own ``k``, query params and filter.

    ``retrieve(query, k=None, *, filter=None)``: ``k`` of the call, else the retriever's
    :attr:`k`, else the query params' default; the call's filter AND the retriever's
    :attr:`filter` (:meth:`query_filter`).
    """

    #: The bound query params.
    query_params: Params
    #: Results per query when the call gives none (``None``: the params' default).
    k: int | None
    #: The filter bound to every query (``None``: none).
    filter: MetadataFilter | None = None

    def query_filter(self, filter: FilterLike) -> MetadataFilter | None:
        """The filter a query runs with: the call's ``filter`` AND the bound :attr:`filter`
        (a call cannot widen it: ``{}`` and ``None`` add no condition)."""
        return combine_filters(self.filter, filter)

    @abstractmethod
    def retrieve(
        self, query: str, k: int | None = None, *, filter: FilterLike = None
    ) -> list[RetrievedPassage]:
        """Up to ``k`` passages for ``query``, best first."""

    async def aretrieve(
        self, query: str, k: int | None = None, *, filter: FilterLike = None
    ) -> list[RetrievedPassage]:
        """Async :meth:`retrieve` (in a worker thread)."""
        return await asyncio.to_thread(self.retrieve, query, k, filter=filter)


class BoundRetriever(QueryRetriever):
    """An index with query params and a ``k`` bound (the generic ``as_retriever`` result).

    Queries run on the index itself (no copy), under its read lock, with
    :attr:`query_params` in place of the index's own for their duration
    (``BaseIndex.using_query_params``); other queries of the index are not affected.

    Parameters
    ----------
    index : BaseIndex
        The index to query.
    query_params : Params
        An instance of the index's query-params class.
    k : int, optional
        Results per query (``None``: the params' default).
    filter : dict or filter tree, optional
        Metadata filter bound to every query (see :meth:`QueryRetriever.query_filter`).

    Examples
    --------
    >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
    >>> index = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
    >>> retriever = BoundRetriever(index, index.query_params, k=1)
    >>> len(retriever.retrieve("Where is Rome?")), len(retriever.retrieve("Rome?", k=2))
    (1, 2)
    >>> paris = BoundRetriever(index, index.query_params, k=2, filter={"doc_id": {"$ne": "x"}})
    >>> len(paris.retrieve("Rome?", filter={})), paris.retrieve("Rome?", filter={"n": 1})
    (2, [])
    """

    def __init__(
        self,
        index: BaseIndex,
        query_params: Params,
        k: int | None = None,
        *,
        filter: FilterLike = None,
    ) -> None:
        if not isinstance(query_params, index.query_params_class()):
            raise InvalidArgumentTypeError(
                f"query_params must be a {index.query_params_class().__name__}, "
                f"got {type(query_params).__name__}"
            )
        self.index = index
        self.query_params = query_params
        self.k = check_k(k)
        self.filter = parse_filter(filter)

    @property
    def method(self) -> str:
        """The index's method name."""
        return self.index.method

    @property
    def default_k(self) -> int:  # type: ignore[override]
        """:attr:`k`, else the index's default under the bound params."""
        if self.k is not None:
            return self.k
        with self.index.using_query_params(self.query_params):
            return self.index.default_k

    def as_retriever(
        self,
        k: int | None = None,
        *,
        query_params: Any = None,
        filter: FilterLike = None,
        **overrides: Any,
    ) -> BoundRetriever:
        """Another retriever over the same index: these query params (default: this one's)
        with ``overrides``, ``k`` (default: this one's) and this one's filter AND ``filter``."""
        params = bind_query_params(self.query_params, query_params, overrides)
        k = self.k if k is None else k
        return BoundRetriever(self.index, params, k, filter=self.query_filter(filter))

    def retrieve(
        self, query: str, k: int | None = None, *, filter: FilterLike = None
    ) -> list[RetrievedPassage]:
        """The index's ``retrieve`` with the bound params and ``k`` (the call's ``k`` wins) and
        the bound filter AND the call's."""
        where = self.query_filter(filter)
        with self.index.using_query_params(self.query_params):
            return self.index.retrieve(query, self.k if k is None else k, filter=where)

    def __repr__(self) -> str:
        bound = "" if self.filter is None else f", filter={self.filter!r}"
        return (
            f"BoundRetriever({type(self.index).__name__}, k={self.k}, {self.query_params!r}{bound})"
        )
