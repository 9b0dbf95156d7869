"""Agent tools over any core retriever, for LangChain and LlamaIndex agents.

This module is light (the frameworks are imported inside the functions), so
:mod:`graphrag_integrations.adapters.surface` can take the default tool name and description
from it at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from llama_index.core.tools import QueryEngineTool, RetrieverTool

DEFAULT_TOOL_NAME = "graph_retriever"
DEFAULT_TOOL_DESCRIPTION = (
    "Search the indexed documents for passages relevant to a natural-language question or "
    "keywords. Input: the query. Output: the text of the most relevant passages."
)

ToolKind = Literal["retriever", "query_engine"]


def _check_tool_text(name: str, description: str) -> None:
    for label, value in (("name", name), ("description", description)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"tool {label} must be a non-empty string, got {value!r}")


def langchain_tool(
    retriever: Any,
    name: str = DEFAULT_TOOL_NAME,
    description: str = DEFAULT_TOOL_DESCRIPTION,
    *,
    k: int | None = None,
    **kwargs: Any,
) -> BaseTool:
    """A LangChain tool (``create_retriever_tool``) returning passage texts.

    Parameters
    ----------
    retriever : core Retriever or langchain_core.retrievers.BaseRetriever
        A core retriever is wrapped in
        :class:`~graphrag_integrations.adapters.langchain.LangChainRetriever` with ``k``; a
        LangChain retriever is used as it is (then ``k`` must be ``None``).
    name, description : str
        What the agent's LLM sees.
    k : int, optional
        Passages per call when wrapping a core retriever.
    **kwargs
        Passed to ``create_retriever_tool`` (``document_prompt``, ``document_separator``,
        ``response_format``).

    Returns
    -------
    langchain_core.tools.BaseTool

    Raises
    ------
    ValueError
        On an empty name/description, or ``k`` given with a LangChain retriever.
    TypeError
        If ``retriever`` is neither kind.

    Examples
    --------
    >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
    >>> index = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
    >>> langchain_tool(index, k=1).invoke({"query": "Where is Rome?"})
    'Rome is in Italy.'
    """
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import create_retriever_tool

    from graphrag_integrations.adapters.langchain import LangChainRetriever

    _check_tool_text(name, description)
    if isinstance(retriever, BaseRetriever):
        if k is not None:
            raise ValueError("k only applies when wrapping a core retriever; set it on yours")
        lc_retriever = retriever
    else:
        lc_retriever = LangChainRetriever(retriever=retriever, k=k)
    return create_retriever_tool(lc_retriever, name, description, **kwargs)


def llama_index_tool(
    retriever: Any,
    name: str = DEFAULT_TOOL_NAME,
    description: str = DEFAULT_TOOL_DESCRIPTION,
    *,
    kind: ToolKind = "retriever",
    llm: Any = None,
    similarity_top_k: int | None = None,
    **kwargs: Any,
) -> RetrieverTool | QueryEngineTool:
    """A LlamaIndex tool: ``RetrieverTool`` (passage texts) or ``QueryEngineTool`` (answers).

    Parameters
    ----------
    retriever : core Retriever or llama_index.core.retrievers.BaseRetriever
        A core retriever is wrapped in
        :class:`~graphrag_integrations.adapters.llama_index.LlamaIndexRetriever` with
        ``similarity_top_k``; a LlamaIndex retriever is used as it is (then
        ``similarity_top_k`` must be ``None``).
    name, description : str
        What the agent's LLM sees.
    kind : {"retriever", "query_engine"}
        Which tool to build.
    llm : llama_index.core.llms.LLM, optional
        The answering LLM of ``kind="query_engine"`` (``None``: ``Settings.llm``); giving one
        with ``kind="retriever"`` is an error, since it would not be used.
    similarity_top_k : int, optional
        Passages per call when wrapping a core retriever.
    **kwargs
        Passed to ``RetrieverTool.from_defaults`` (``node_postprocessors``) or
        ``RetrieverQueryEngine.from_args``.

    Returns
    -------
    RetrieverTool or QueryEngineTool

    Raises
    ------
    ValueError
        On an unknown ``kind``, an empty name/description, ``llm`` with
        ``kind="retriever"``, or ``similarity_top_k`` given with a LlamaIndex retriever.

    Examples
    --------
    >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
    >>> index = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
    >>> tool = llama_index_tool(index, kind="retriever", similarity_top_k=1)
    >>> "Rome is in Italy." in tool.call("Where is Rome?").content
    True
    """
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.tools import QueryEngineTool, RetrieverTool

    from graphrag_integrations.adapters.llama_index import LlamaIndexRetriever, build_query_engine

    _check_tool_text(name, description)
    if kind not in ("retriever", "query_engine"):
        raise ValueError(f"kind must be 'retriever' or 'query_engine', got {kind!r}")
    if isinstance(retriever, BaseRetriever):
        if similarity_top_k is not None:
            raise ValueError(
                "similarity_top_k only applies when wrapping a core retriever; set it on yours"
            )
        li_retriever = retriever
    else:
        li_retriever = LlamaIndexRetriever(retriever, similarity_top_k)
    if kind == "retriever":
        if llm is not None:
            raise ValueError("llm is only used with kind='query_engine'")
        return RetrieverTool.from_defaults(
            li_retriever, name=name, description=description, **kwargs
        )
    engine = build_query_engine(li_retriever, llm=llm, **kwargs)
    return QueryEngineTool.from_defaults(engine, name=name, description=description)
