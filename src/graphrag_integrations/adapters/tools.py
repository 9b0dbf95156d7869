"""Agent tools over any core retriever, for LangChain and LlamaIndex agents.

This module is light (the frameworks are imported inside the functions), so
:mod:`graphrag_integrations.adapters.surface` can take the default tool name and description
from it at import time.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from graphrag_integrations.errors import GraphRAGError

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


#: Keyword names under which an agent may pass the query to a LlamaIndex tool.
QUERY_KEYWORDS: tuple[str, ...] = ("input", "query")


def tool_query(args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    """The raw query of a tool call: one positional argument, or ``input=``/``query=``.

    LlamaIndex's ``RetrieverTool`` joins its arguments into ``"input is <query>\\n"`` before
    retrieving; the tools built here pass the query through unchanged instead.

    Raises
    ------
    ValueError
        If there is not exactly one query argument, it is not a string, or it is empty or
        only whitespace.

    Examples
    --------
    >>> tool_query(["What is BM25?"], {}), tool_query([], {"input": "What is BM25?"})
    ('What is BM25?', 'What is BM25?')
    >>> tool_query([], {"input": "  "})
    Traceback (most recent call last):
    ...
    ValueError: the tool query is empty
    """
    given = list(args) + [kwargs[k] for k in QUERY_KEYWORDS if k in kwargs]
    extra = sorted(k for k in kwargs if k not in QUERY_KEYWORDS)
    if len(given) != 1 or extra:
        raise ValueError(
            "call the tool with exactly one query (positional, input= or query=), got "
            f"{len(args)} positional and keywords {sorted(kwargs)}"
        )
    (query,) = given
    if not isinstance(query, str):
        raise ValueError(f"the tool query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("the tool query is empty")
    return query


@functools.cache
def _passthrough_retriever_tool() -> type[RetrieverTool]:
    """``RetrieverTool`` whose calls retrieve with the raw query, and report bad queries as
    error results (``is_error=True``) instead of retrieving for them."""
    from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
    from llama_index.core.tools import RetrieverTool
    from llama_index.core.tools.types import ToolOutput

    class PassthroughRetrieverTool(RetrieverTool):
        def _error(self, raw_input: dict[str, Any], exc: Exception) -> ToolOutput:
            return ToolOutput(
                content=f"Error: {exc}",
                tool_name=self.metadata.get_name(),
                raw_input=raw_input,
                raw_output=exc,
                is_error=True,
            )

        def _output(self, query: str, nodes: list[NodeWithScore]) -> ToolOutput:
            content = "".join(n.node.get_content(MetadataMode.LLM) + "\n\n" for n in nodes)
            return ToolOutput(
                content=content,
                tool_name=self.metadata.get_name(),
                raw_input={"input": query},
                raw_output=nodes,
            )

        def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
            try:
                query = tool_query(args, kwargs)
                nodes = self._retriever.retrieve(query)
            except (ValueError, GraphRAGError) as exc:
                return self._error({"args": args, "kwargs": kwargs}, exc)
            nodes = self._apply_node_postprocessors(nodes, QueryBundle(query))
            return self._output(query, nodes)

        async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
            try:
                query = tool_query(args, kwargs)
                nodes = await self._retriever.aretrieve(query)
            except (ValueError, GraphRAGError) as exc:
                return self._error({"args": args, "kwargs": kwargs}, exc)
            nodes = await self._async_apply_node_postprocessors(nodes, QueryBundle(query))
            return self._output(query, nodes)

    return PassthroughRetrieverTool


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

    The ``"retriever"`` tool hands the retriever the query exactly as the agent gave it
    (LlamaIndex's own ``RetrieverTool`` would send ``"input is <query>\\n"``), and answers a
    missing, empty or invalid query with an error result (``is_error=True``) instead of
    passages.

    Examples
    --------
    >>> from graphrag_integrations.baselines.bm25 import BM25Retriever
    >>> index = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
    >>> tool = llama_index_tool(index, kind="retriever", similarity_top_k=1)
    >>> "Rome is in Italy." in tool.call("Where is Rome?").content
    True
    >>> tool.call(input="").is_error
    True
    """
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.tools import QueryEngineTool

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
        return _passthrough_retriever_tool().from_defaults(
            li_retriever, name=name, description=description, **kwargs
        )
    engine = build_query_engine(li_retriever, llm=llm, **kwargs)
    return QueryEngineTool.from_defaults(engine, name=name, description=description)
