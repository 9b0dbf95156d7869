"""FrameworkSurface: default k, argument checks, lazy framework imports."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from graphrag_integrations.adapters.langchain import LangChainRetriever
from graphrag_integrations.adapters.llama_index import LlamaIndexRetriever
from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.adapters.validation import check_k

QUERY = "capital of France"


def test_default_k_used_when_none(dense_retriever: Any) -> None:
    lc = dense_retriever.as_langchain_retriever()
    li = dense_retriever.as_llama_index_retriever()
    assert isinstance(lc, LangChainRetriever)
    assert isinstance(li, LlamaIndexRetriever)
    assert lc.k == li.similarity_top_k == dense_retriever.default_k == 3
    assert len(lc.invoke(QUERY)) == len(li.retrieve(QUERY)) == 3
    assert lc.retriever is dense_retriever and li.retriever is dense_retriever


def test_explicit_k_wins(dense_retriever: Any) -> None:
    assert len(dense_retriever.as_langchain_retriever(k=1).invoke(QUERY)) == 1
    assert len(dense_retriever.as_llama_index_retriever(similarity_top_k=5).retrieve(QUERY)) == 5
    tags = dense_retriever.as_langchain_retriever(tags=["kb"]).tags
    assert tags == ["kb"]


def test_surface_tools_and_engine(dense_retriever: Any) -> None:
    from llama_index.core.llms import MockLLM

    lc_tool = dense_retriever.as_langchain_tool(k=1)
    assert lc_tool.name == "graph_retriever"
    assert lc_tool.invoke({"query": QUERY}) == dense_retriever.retrieve(QUERY, k=1)[0].text
    li_tool = dense_retriever.as_llama_index_tool(name="kb", similarity_top_k=1)
    assert dense_retriever.retrieve(QUERY, k=1)[0].text in li_tool.call(QUERY).content
    engine = dense_retriever.as_query_engine(llm=MockLLM(), similarity_top_k=2)
    assert len(engine.query(QUERY).source_nodes) == 2


def test_surface_validates_k(dense_retriever: Any) -> None:
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        dense_retriever.as_langchain_retriever(k=0)
    with pytest.raises(ValueError, match="similarity_top_k must be an integer >= 1"):
        dense_retriever.as_llama_index_retriever(similarity_top_k=-2)


def test_mixin_on_non_retriever_is_a_type_error() -> None:
    class NotARetriever(FrameworkSurface):
        default_k = 2

    with pytest.raises(TypeError, match="core Retriever"):
        NotARetriever().as_langchain_retriever()


@pytest.mark.parametrize(("value", "error"), [(True, TypeError), (1.0, TypeError), (0, ValueError)])
def test_check_k_rejects(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        check_k(value)


def test_surface_import_does_not_load_frameworks() -> None:
    code = (
        "import sys; import graphrag_integrations.adapters.surface, "
        "graphrag_integrations.adapters.tools, graphrag_integrations.baselines.dense; "
        "print([m for m in ('langchain_core', 'llama_index') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
