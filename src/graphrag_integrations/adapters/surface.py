"""The framework surface every method shares.

:class:`FrameworkSurface` is mixed into every core retriever (baselines and methods) and turns
``self`` into a LangChain retriever, a LlamaIndex retriever or query engine, or an agent tool.
The mixin is imported by the methods at import time, so this module imports neither LangChain
nor LlamaIndex: the adapter modules are imported inside each method, on first use.
"""

from __future__ import annotations

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
    (every :class:`~graphrag_integrations.core.index_base.BaseIndex` does); a ``k`` of
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
            Metadata filter of every call (:mod:`graphrag_integrations.core.filters`); a call
            can replace it with ``retriever.invoke(query, filter=...)``.
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
