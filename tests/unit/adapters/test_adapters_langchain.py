"""LangChain adapter: documents, k, the async path, callbacks, errors and the tool."""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import (
    AsyncCallbackManager,
    BaseCallbackHandler,
    CallbackManager,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ValidationError

from graphrag_integrations.adapters.langchain import LangChainRetriever, to_document
from graphrag_integrations.adapters.tools import (
    DEFAULT_TOOL_DESCRIPTION,
    DEFAULT_TOOL_NAME,
    langchain_tool,
)
from graphrag_integrations.core.context import current_callbacks
from graphrag_integrations.errors import EmptyQueryError, InvalidArgumentError
from tests.conftest import RecordingRetriever

QUERY = "capital of France"


class RunRecorder(BaseCallbackHandler):
    """Records retriever run ids and errors."""

    def __init__(self) -> None:
        self.starts: list[UUID] = []
        self.errors: list[BaseException] = []

    def on_retriever_start(self, serialized: Any, query: str, *, run_id: UUID, **kw: Any) -> None:
        self.starts.append(run_id)

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self.errors.append(error)


# -- documents ------------------------------------------------------------------------------
def test_documents_mirror_core_results(dense_retriever: Any) -> None:
    expected = dense_retriever.retrieve(QUERY, k=3)
    docs = LangChainRetriever(retriever=dense_retriever, k=3).invoke(QUERY)
    assert all(isinstance(d, Document) for d in docs)
    assert [d.id for d in docs] == [r.id for r in expected]
    assert [d.page_content for d in docs] == [r.text for r in expected]
    assert [d.metadata for d in docs] == [r.to_metadata() for r in expected]
    assert docs[0].page_content.startswith("Paris")


def test_metadata_shape(recording_retriever: RecordingRetriever) -> None:
    doc = LangChainRetriever(retriever=recording_retriever, k=1).invoke(QUERY)[0]
    assert doc.metadata == {
        "title": "Capitals",
        "passage_id": "p0",
        "doc_id": "geo",
        "score": 1.0,
        "explanation": {"method": "recording", "rank": 0},
    }


def test_to_document() -> None:
    from graphrag_integrations.core.types import Passage, RetrievedPassage

    doc = to_document(RetrievedPassage(Passage("x", "text", "d", {"a": 1}), 0.5, {"e": [1]}))
    assert (doc.id, doc.page_content) == ("x", "text")
    assert doc.metadata["a"] == 1
    assert doc.metadata["explanation"] == {"e": [1]}


# -- k --------------------------------------------------------------------------------------
def test_constructor_k_is_passed_to_core(recording_retriever: RecordingRetriever) -> None:
    docs = LangChainRetriever(retriever=recording_retriever, k=4).invoke(QUERY)
    assert len(docs) == 4
    assert recording_retriever.calls[-1].k == 4


def test_no_k_leaves_core_default(recording_retriever: RecordingRetriever) -> None:
    docs = LangChainRetriever(retriever=recording_retriever).invoke(QUERY)
    assert recording_retriever.calls[-1].k is None
    assert len(docs) == recording_retriever.default_k


async def test_per_call_k_overrides(recording_retriever: RecordingRetriever) -> None:
    retriever = LangChainRetriever(retriever=recording_retriever, k=4)
    assert len(retriever.invoke(QUERY, k=1)) == 1
    assert len(await retriever.ainvoke(QUERY, k=5)) == 5
    assert len(retriever.invoke(QUERY)) == 4  # the override does not stick
    assert [c.k for c in recording_retriever.calls] == [1, 5, 4]


@pytest.mark.parametrize("bad", [0, -1])
def test_bad_constructor_k(recording_retriever: RecordingRetriever, bad: int) -> None:
    with pytest.raises(ValidationError, match="k must be an integer >= 1"):
        LangChainRetriever(retriever=recording_retriever, k=bad)


def test_bad_call_k(recording_retriever: RecordingRetriever) -> None:
    retriever = LangChainRetriever(retriever=recording_retriever)
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        retriever.invoke(QUERY, k=0)
    with pytest.raises(TypeError, match="k must be an int"):
        retriever.invoke(QUERY, k="2")
    assert recording_retriever.calls == []


def test_unknown_call_kwarg_is_an_error(recording_retriever: RecordingRetriever) -> None:
    retriever = LangChainRetriever(retriever=recording_retriever)
    with pytest.raises(TypeError, match="top_k"):
        retriever.invoke(QUERY, top_k=2)
    # ``verbose`` is LangChain's own invoke option and is accepted
    assert len(retriever.invoke(QUERY, verbose=False)) == 2


async def test_search_kwargs_per_call(
    recording_retriever: RecordingRetriever, dense_retriever: Any
) -> None:
    # LangChain users pass search_kwargs per call: k and filter, sync and async
    retriever = LangChainRetriever(retriever=recording_retriever, k=4)
    assert len(retriever.invoke(QUERY, search_kwargs={"k": 2})) == 2
    assert len(await retriever.ainvoke(QUERY, search_kwargs={"k": 3})) == 3
    assert len(retriever.invoke(QUERY)) == 4  # nothing sticks
    assert [c.k for c in recording_retriever.calls] == [2, 3, 4]
    over_index = LangChainRetriever(retriever=dense_retriever, k=4)
    where = {"doc_id": {"$ne": "geo"}}  # the three capitals are doc "geo"
    for docs in (
        over_index.invoke(QUERY, search_kwargs={"k": 2, "filter": where}),
        await over_index.ainvoke(QUERY, search_kwargs={"filter": where}),
    ):
        ids = [d.metadata["doc_id"] for d in docs]
        assert ids and "geo" not in ids
    assert "geo" in [d.metadata["doc_id"] for d in over_index.invoke(QUERY)]


def test_bad_search_kwargs_are_one_line_errors(recording_retriever: RecordingRetriever) -> None:
    retriever = LangChainRetriever(retriever=recording_retriever)
    with pytest.raises(InvalidArgumentError, match=r"only 'k' and 'filter', got \['fetch_k'\]"):
        retriever.invoke(QUERY, search_kwargs={"fetch_k": 9})
    with pytest.raises(InvalidArgumentError, match="either directly or in search_kwargs"):
        retriever.invoke(QUERY, k=2, search_kwargs={"k": 3})
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        retriever.invoke(QUERY, search_kwargs={"k": 0})
    assert recording_retriever.calls == []


def test_rejects_non_retriever() -> None:
    with pytest.raises(ValidationError):
        LangChainRetriever(retriever=object())  # type: ignore[arg-type]


# -- async ----------------------------------------------------------------------------------
async def test_async_path_awaits_core_aretrieve(recording_retriever: RecordingRetriever) -> None:
    retriever = LangChainRetriever(retriever=recording_retriever, k=2)
    docs = await retriever.ainvoke(QUERY)
    assert [d.id for d in docs] == ["p0", "p1"]
    [call] = recording_retriever.calls
    assert call.path == "async"
    # ran on the event loop's thread: no executor hop around the coroutine
    assert call.thread_id == threading.get_ident()


async def test_concurrent_async_calls_interleave() -> None:
    """Two ainvoke calls overlap on one loop, which a blocking sync path could not do."""
    started = asyncio.Event()
    order: list[str] = []

    class Gate(RecordingRetriever):
        async def aretrieve(self, query: str, k: int | None = None) -> Any:
            if query == "first":
                order.append("first waits")
                await asyncio.wait_for(started.wait(), timeout=5)
                order.append("first resumes")
            else:
                order.append("second runs")
                started.set()
            return await super().aretrieve(query, k)

    retriever = LangChainRetriever(retriever=Gate(), k=1)
    first, second = await asyncio.gather(retriever.ainvoke("first"), retriever.ainvoke("second"))
    assert order == ["first waits", "second runs", "first resumes"]
    assert len(first) == len(second) == 1


# -- callbacks ------------------------------------------------------------------------------
def test_sync_callbacks_forwarded(recording_retriever: RecordingRetriever) -> None:
    handler = RunRecorder()
    LangChainRetriever(retriever=recording_retriever).invoke(QUERY, config={"callbacks": [handler]})
    seen = recording_retriever.calls[-1].callbacks
    assert isinstance(seen, CallbackManager)
    assert seen.parent_run_id == handler.starts[-1]
    assert handler in seen.handlers
    assert current_callbacks() is None  # the scope is closed after the call


async def test_async_callbacks_forwarded(recording_retriever: RecordingRetriever) -> None:
    handler = RunRecorder()
    await LangChainRetriever(retriever=recording_retriever).ainvoke(
        QUERY, config={"callbacks": [handler]}
    )
    seen = recording_retriever.calls[-1].callbacks
    assert isinstance(seen, AsyncCallbackManager)
    assert seen.parent_run_id == handler.starts[-1]
    assert handler in seen.handlers
    assert current_callbacks() is None


async def test_callbacks_reach_a_worker_thread(recording_retriever: RecordingRetriever) -> None:
    """BaseIndex's default aretrieve runs retrieve in a thread; the scope must follow it."""

    class Threaded(RecordingRetriever):
        async def aretrieve(self, query: str, k: int | None = None) -> Any:
            return await asyncio.to_thread(self.retrieve, query, k)

    inner = Threaded()
    handler = RunRecorder()
    await LangChainRetriever(retriever=inner).ainvoke(QUERY, config={"callbacks": [handler]})
    [call] = inner.calls
    assert call.thread_id != threading.get_ident()
    assert call.callbacks.parent_run_id == handler.starts[-1]


def test_ls_params_name_the_method(dense_retriever: Any) -> None:
    params = LangChainRetriever(retriever=dense_retriever)._get_ls_params()
    assert params["ls_retriever_name"] == "dense"


# -- errors ---------------------------------------------------------------------------------
def test_empty_query_propagates_sync(recording_retriever: RecordingRetriever) -> None:
    handler = RunRecorder()
    with pytest.raises(EmptyQueryError):
        LangChainRetriever(retriever=recording_retriever).invoke(
            "  ", config={"callbacks": [handler]}
        )
    assert len(handler.errors) == 1
    assert isinstance(handler.errors[0], EmptyQueryError)


async def test_empty_query_propagates_async(dense_retriever: Any) -> None:
    with pytest.raises(EmptyQueryError):
        await LangChainRetriever(retriever=dense_retriever).ainvoke("")


# -- tool -----------------------------------------------------------------------------------
def test_tool_returns_passage_text(dense_retriever: Any) -> None:
    tool = langchain_tool(dense_retriever, k=2)
    assert tool.name == DEFAULT_TOOL_NAME
    assert tool.description == DEFAULT_TOOL_DESCRIPTION
    out = tool.invoke({"query": QUERY})
    expected = [r.text for r in dense_retriever.retrieve(QUERY, k=2)]
    assert out == "\n\n".join(expected)


async def test_tool_async_and_artifact(dense_retriever: Any) -> None:
    tool = langchain_tool(
        dense_retriever, "kb", "Search the kb.", response_format="content_and_artifact"
    )
    call = {"name": "kb", "args": {"query": QUERY}, "id": "call-1", "type": "tool_call"}
    message = await tool.ainvoke(call)
    assert message.content.startswith("Paris is the capital of France")
    assert [d.id for d in message.artifact] == [r.id for r in dense_retriever.retrieve(QUERY)]


def test_tool_accepts_langchain_retriever(recording_retriever: RecordingRetriever) -> None:
    lc = LangChainRetriever(retriever=recording_retriever, k=1)
    assert isinstance(lc, BaseRetriever)
    assert langchain_tool(lc).invoke({"query": QUERY}) == recording_retriever.passages[0].text
    with pytest.raises(ValueError, match="k only applies"):
        langchain_tool(lc, k=2)


@pytest.mark.parametrize(("name", "description"), [("", "d"), ("n", "  ")])
def test_tool_rejects_empty_text(
    recording_retriever: RecordingRetriever, name: str, description: str
) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        langchain_tool(recording_retriever, name, description)


# -- add_documents / aadd_documents (LangChain's VectorStoreRetriever convention) -------------
def test_add_documents_inserts_into_the_index(dense_retriever: Any) -> None:
    retriever = LangChainRetriever(retriever=dense_retriever, k=1)
    oslo = Document("Oslo is the capital of Norway.", id="oslo", metadata={"source": "lc"})
    assert retriever.invoke("capital of Norway")[0].metadata["doc_id"] != "oslo"
    assert retriever.add_documents([oslo]) == ["oslo"]
    top = retriever.invoke("capital of Norway")[0]
    assert (top.metadata["doc_id"], top.metadata["source"]) == ("oslo", "lc")
    assert retriever.add_documents([oslo]) == []  # already indexed: skipped
    # ids= takes precedence over the documents' own ids, as in LangChain
    assert retriever.add_documents([Document("Bergen has fjords.", id="x")], ids=["bergen"]) == [
        "bergen"
    ]
    assert dense_retriever.delete("bergen") is True
    with pytest.raises(ValueError, match="2 ids for 1 documents"):
        retriever.add_documents([oslo], ids=["a", "b"])


def test_add_documents_needs_an_index(recording_retriever: RecordingRetriever) -> None:
    retriever = LangChainRetriever(retriever=recording_retriever)
    with pytest.raises(NotImplementedError, match="RecordingRetriever cannot add documents"):
        retriever.add_documents([Document("x")])


async def test_aadd_documents_does_not_block_the_event_loop(dense_retriever: Any) -> None:
    retriever = LangChainRetriever(retriever=dense_retriever, k=1)
    entered, ticks = threading.Event(), 0

    def query_for_a_while() -> None:  # holds the index's read lock: the insert must wait
        with dense_retriever.rwlock.read():
            entered.set()
            threading.Event().wait(0.3)

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    holder = threading.Thread(target=query_for_a_while)
    holder.start()
    entered.wait(10)
    task = asyncio.create_task(ticker())
    try:
        added = await retriever.aadd_documents([Document("Oslo is in Norway.")], ids=["oslo"])
    finally:
        task.cancel()
        holder.join(10)
    assert added == ["oslo"]
    assert ticks >= 5  # ~30 in 0.3 s; none if the insert ran in the loop
    assert (await retriever.ainvoke("Where is Oslo in Norway?"))[0].metadata["doc_id"] == "oslo"
