"""LlamaIndex adapter: nodes, top-k, the async path, query engine, tools and errors."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from llama_index.core import Settings
from llama_index.core.base.response.schema import Response
from llama_index.core.llms import MockLLM
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from llama_index.core.tools import QueryEngineTool, RetrieverTool

from graphrag_integrations.adapters.llama_index import (
    ADAPTER_METADATA_KEYS,
    LlamaIndexRetriever,
    build_query_engine,
    to_node_with_score,
)
from graphrag_integrations.adapters.tools import llama_index_tool
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.errors import EmptyQueryError, ModelUnavailableError
from tests.conftest import RecordingRetriever

QUERY = "capital of France"


# -- nodes ----------------------------------------------------------------------------------
def test_nodes_mirror_core_results(dense_retriever: Any) -> None:
    expected = dense_retriever.retrieve(QUERY, k=3)
    nodes = LlamaIndexRetriever(dense_retriever, similarity_top_k=3).retrieve(QUERY)
    assert all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in nodes)
    assert [n.node.node_id for n in nodes] == [r.id for r in expected]
    assert [n.score for n in nodes] == pytest.approx([r.score for r in expected])
    assert [n.node.ref_doc_id for n in nodes] == [r.doc_id for r in expected]
    assert [n.node.get_content() for n in nodes] == [r.text for r in expected]
    assert [n.node.metadata for n in nodes] == [r.to_metadata() for r in expected]
    assert nodes[0].get_score(raise_error=True) > nodes[1].get_score(raise_error=True)


def test_adapter_metadata_hidden_from_llm_and_embed_text() -> None:
    rp = RetrievedPassage(
        Passage("p9", "Body text.", "d9", {"title": "T"}), 0.25, {"path": ["a"] * 50}
    )
    node = to_node_with_score(rp).node
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        text = node.get_content(metadata_mode=mode)
        assert "title: T" in text
        assert "Body text." in text
        for key in ADAPTER_METADATA_KEYS:
            assert f"{key}:" not in text
    # still in the metadata itself, and in the full dump
    assert node.metadata["explanation"] == {"path": ["a"] * 50}
    assert "explanation" in node.get_content(metadata_mode=MetadataMode.ALL)


# -- top-k ----------------------------------------------------------------------------------
def test_similarity_top_k_is_passed_to_core(recording_retriever: RecordingRetriever) -> None:
    nodes = LlamaIndexRetriever(recording_retriever, similarity_top_k=4).retrieve(QUERY)
    assert len(nodes) == 4
    assert recording_retriever.calls[-1].k == 4


def test_no_top_k_leaves_core_default(recording_retriever: RecordingRetriever) -> None:
    nodes = LlamaIndexRetriever(recording_retriever).retrieve(QUERY)
    assert recording_retriever.calls[-1].k is None
    assert len(nodes) == recording_retriever.default_k


def test_bad_arguments(recording_retriever: RecordingRetriever) -> None:
    with pytest.raises(ValueError, match="similarity_top_k must be an integer >= 1"):
        LlamaIndexRetriever(recording_retriever, similarity_top_k=0)
    with pytest.raises(TypeError, match="similarity_top_k must be an int"):
        LlamaIndexRetriever(recording_retriever, similarity_top_k=2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="core Retriever"):
        LlamaIndexRetriever(object())


# -- async ----------------------------------------------------------------------------------
async def test_async_path_awaits_core_aretrieve(recording_retriever: RecordingRetriever) -> None:
    nodes = await LlamaIndexRetriever(recording_retriever, 2).aretrieve(QUERY)
    assert [n.node.node_id for n in nodes] == ["p0", "p1"]
    [call] = recording_retriever.calls
    assert call.path == "async"
    assert call.thread_id == threading.get_ident()


# -- errors ---------------------------------------------------------------------------------
def test_empty_query_propagates(recording_retriever: RecordingRetriever) -> None:
    with pytest.raises(EmptyQueryError):
        LlamaIndexRetriever(recording_retriever).retrieve("   ")


async def test_empty_query_propagates_async(dense_retriever: Any) -> None:
    with pytest.raises(EmptyQueryError):
        await LlamaIndexRetriever(dense_retriever).aretrieve("")


# -- query engine ---------------------------------------------------------------------------
def test_query_engine_with_mock_llm(dense_retriever: Any) -> None:
    engine = LlamaIndexRetriever(dense_retriever, 2).as_query_engine(llm=MockLLM())
    response = engine.query(QUERY)
    assert isinstance(response, Response)
    expected = dense_retriever.retrieve(QUERY, k=2)
    assert [n.node.node_id for n in response.source_nodes] == [r.id for r in expected]
    # MockLLM echoes its prompt: the answer prompt holds the passages and the question
    assert expected[0].text in str(response)
    assert QUERY in str(response)
    assert "explanation" not in str(response)


async def test_query_engine_async_uses_aretrieve(
    recording_retriever: RecordingRetriever,
) -> None:
    engine = build_query_engine(LlamaIndexRetriever(recording_retriever, 1), llm=MockLLM())
    response = await engine.aquery(QUERY)
    assert [n.node.node_id for n in response.source_nodes] == ["p0"]
    assert [c.path for c in recording_retriever.calls] == ["async"]


def test_query_engine_none_uses_settings_llm(
    dense_retriever: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Settings, "_llm", MockLLM(max_tokens=3))
    response = LlamaIndexRetriever(dense_retriever).as_query_engine().query(QUERY)
    assert str(response).strip() == "text text text"


def test_query_engine_unresolvable_settings_llm(
    dense_retriever: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import llama_index.core.settings as li_settings

    def no_default(llm: Any, callback_manager: Any = None) -> Any:
        raise ImportError("`llama-index-llms-openai` package not found")

    monkeypatch.setattr(Settings, "_llm", None)
    monkeypatch.setattr(li_settings, "resolve_llm", no_default)
    with pytest.raises(ModelUnavailableError, match="llama-index-llms-openai"):
        LlamaIndexRetriever(dense_retriever).as_query_engine()


def test_query_engine_logs_settings_llm(
    dense_retriever: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(Settings, "_llm", MockLLM(max_tokens=1))
    with caplog.at_level("INFO", logger="graphrag_integrations.adapters.llama_index"):
        LlamaIndexRetriever(dense_retriever).as_query_engine()
    assert "Settings.llm" in caplog.text
    caplog.clear()
    with caplog.at_level("INFO", logger="graphrag_integrations.adapters.llama_index"):
        LlamaIndexRetriever(dense_retriever).as_query_engine(llm=MockLLM())
    assert caplog.text == ""


def test_query_engine_rejects_non_llama_index_llm(dense_retriever: Any) -> None:
    with pytest.raises(TypeError, match="LlamaIndex LLM"):
        LlamaIndexRetriever(dense_retriever).as_query_engine(llm="gpt-4o")


# -- tools ----------------------------------------------------------------------------------
def test_retriever_tool_returns_text(dense_retriever: Any) -> None:
    tool = llama_index_tool(dense_retriever, "kb", "Search the kb.", similarity_top_k=2)
    assert isinstance(tool, RetrieverTool)
    assert tool.metadata.name == "kb"
    out = tool.call(QUERY)
    for r in dense_retriever.retrieve(QUERY, k=2):
        assert r.text in out.content
    assert "explanation" not in out.content
    assert len(out.raw_output) == 2


async def test_retriever_tool_async(recording_retriever: RecordingRetriever) -> None:
    tool = llama_index_tool(recording_retriever, similarity_top_k=1)
    out = await tool.acall(QUERY)
    assert recording_retriever.passages[0].text in out.content
    assert [c.path for c in recording_retriever.calls] == ["async"]


def test_retriever_tool_passes_the_raw_query(recording_retriever: RecordingRetriever) -> None:
    tool = llama_index_tool(recording_retriever, similarity_top_k=1)
    tool.call("What is Paris?")
    tool.call(input="What is Rome?")
    tool.call(query="What is Oslo?")
    assert [c.query for c in recording_retriever.calls] == [
        "What is Paris?",
        "What is Rome?",
        "What is Oslo?",
    ]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {"input": ""}, "empty"),
        (("   ",), {}, "empty"),
        ((), {}, "exactly one query"),
        (("a", "b"), {}, "exactly one query"),
        ((), {"input": "a", "top": 3}, "exactly one query"),
        ((3,), {}, "must be a string"),
    ],
)
async def test_retriever_tool_bad_query_is_an_error_result(
    recording_retriever: RecordingRetriever, args: Any, kwargs: Any, message: str
) -> None:
    tool = llama_index_tool(recording_retriever, similarity_top_k=1)
    for out in (tool.call(*args, **kwargs), await tool.acall(*args, **kwargs)):
        assert out.is_error
        assert message in out.content
    assert recording_retriever.calls == []


def test_query_engine_tool(dense_retriever: Any) -> None:
    tool = llama_index_tool(dense_retriever, kind="query_engine", llm=MockLLM(max_tokens=2))
    assert isinstance(tool, QueryEngineTool)
    assert tool.call(QUERY).content.strip() == "text text"


def test_tool_argument_errors(recording_retriever: RecordingRetriever) -> None:
    with pytest.raises(ValueError, match="kind"):
        llama_index_tool(recording_retriever, kind="agent")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="llm is only used"):
        llama_index_tool(recording_retriever, llm=MockLLM())
    li = LlamaIndexRetriever(recording_retriever)
    with pytest.raises(ValueError, match="similarity_top_k only applies"):
        llama_index_tool(li, similarity_top_k=3)
    assert isinstance(llama_index_tool(li), RetrieverTool)
