"""as_llm and the framework adapters, with fake framework models (fake replies only)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel, FakeListChatModel
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.llms import MockLLM

from graphrag_integrations.core.context import callbacks_scope
from graphrag_integrations.core.llm import (
    LLM,
    CallableLLM,
    LangChainLLM,
    LlamaIndexLLM,
    LLMClient,
    LLMResult,
    TransformersLLM,
    as_llm,
    estimate_tokens,
    usage_from,
)
from graphrag_integrations.errors import LLMOutputError


class RecordingHandler(BaseCallbackHandler):
    """Collects the prompts of the chat-model runs it sees."""

    def __init__(self) -> None:
        self.starts: list[str] = []
        self.llm_prompts: list[str] = []
        self.ends = 0

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        self.starts.append(str(messages[0][0].content))

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], **kwargs: Any) -> None:
        self.llm_prompts.extend(prompts)

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.ends += 1


SEEN_KWARGS: list[dict[str, Any]] = []


class KwargsChatModel(BaseChatModel):
    """Fake chat model replying "ok" and recording the invoke keyword arguments."""

    @property
    def _llm_type(self) -> str:
        return "kwargs-recorder"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        SEEN_KWARGS.append(dict(kw))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="ok"))])


# -- LangChain ------------------------------------------------------------------------------
def test_langchain_fake_list_chat_model_estimates_tokens() -> None:
    llm = as_llm(FakeListChatModel(responses=["Paris", "Rome"]))
    assert isinstance(llm, LangChainLLM)
    first = llm.complete("Capital of France?")
    second = llm.complete("Capital of Italy?")
    assert (first.text, second.text) == ("Paris", "Rome")
    assert first.estimated
    assert first.prompt_tokens == estimate_tokens("Capital of France?")
    assert first.completion_tokens == estimate_tokens("Paris")


def test_langchain_usage_metadata_is_used() -> None:
    msg = AIMessage(
        content="Paris",
        usage_metadata={"input_tokens": 11, "output_tokens": 3, "total_tokens": 14},
    )
    result = LangChainLLM(GenericFakeChatModel(messages=iter([msg]))).complete("q")
    assert result == LLMResult("Paris", 11, 3, estimated=False)


def test_langchain_response_metadata_token_usage_is_used() -> None:
    msg = AIMessage(
        content="Rome",
        response_metadata={"token_usage": {"prompt_tokens": 5, "completion_tokens": 2}},
    )
    result = LangChainLLM(FakeMessagesListChatModel(responses=[msg])).complete("q")
    assert (result.text, result.prompt_tokens, result.completion_tokens) == ("Rome", 5, 2)
    assert not result.estimated


def test_langchain_content_blocks_are_joined() -> None:
    msg = AIMessage(content=[{"type": "text", "text": "Par"}, {"type": "text", "text": "is"}])
    assert LangChainLLM(FakeMessagesListChatModel(responses=[msg])).complete("q").text == "Paris"


def test_langchain_runnable_gets_a_human_message_and_may_return_str() -> None:
    received: list[Any] = []

    def fn(messages: Any) -> str:
        received.append(messages)
        return "done"

    llm = as_llm(RunnableLambda(fn))
    assert isinstance(llm, LangChainLLM)
    assert llm.complete("hello").text == "done"
    assert isinstance(received[0][0], HumanMessage)
    assert received[0][0].content == "hello"


def test_langchain_text_llm_gets_the_plain_prompt() -> None:
    from langchain_core.language_models import FakeListLLM

    handler = RecordingHandler()
    llm = as_llm(FakeListLLM(responses=["Rome"]))
    assert isinstance(llm, LangChainLLM)
    with callbacks_scope([handler]):
        assert llm.complete("Capital of Italy?").text == "Rome"
    assert handler.llm_prompts == ["Capital of Italy?"]


def test_langchain_runnable_returning_other_types_is_an_error() -> None:
    llm = LangChainLLM(RunnableLambda(lambda _m: {"not": "a message"}))
    with pytest.raises(LLMOutputError):
        llm.complete("hello")


async def test_langchain_acomplete() -> None:
    llm = LangChainLLM(FakeListChatModel(responses=["async reply"]))
    assert (await llm.acomplete("q")).text == "async reply"


def test_generation_params_forwarded_only_on_request() -> None:
    model = KwargsChatModel()
    SEEN_KWARGS.clear()
    LangChainLLM(model).complete("q", max_tokens=7, temperature=0.3)
    LangChainLLM(model, forward_generation_params=True).complete("q", max_tokens=7)
    LangChainLLM(model, forward_generation_params=True).complete("q", temperature=0.5)
    assert SEEN_KWARGS[0] == {}
    assert SEEN_KWARGS[1] == {"max_tokens": 7, "temperature": 0.0}
    assert SEEN_KWARGS[2] == {"temperature": 0.5}


def test_model_name_from_model_or_override() -> None:
    assert LangChainLLM(FakeListChatModel(responses=["x"])).model_name == "FakeListChatModel"
    assert LangChainLLM(FakeListChatModel(responses=["x"]), model_name="m").model_name == "m"


# -- callbacks --------------------------------------------------------------------------------
def test_callbacks_of_the_current_run_reach_the_model() -> None:
    handler = RecordingHandler()
    llm = LangChainLLM(FakeListChatModel(responses=["a"]))
    llm.complete("outside any run")
    assert handler.starts == []
    with callbacks_scope([handler]):
        llm.complete("inside the run")
    assert handler.starts == ["inside the run"]
    assert handler.ends == 1


async def test_callbacks_reach_the_model_in_async_calls() -> None:
    handler = RecordingHandler()
    llm = LangChainLLM(FakeListChatModel(responses=["a"]))
    with callbacks_scope([handler]):
        await llm.acomplete("async run")
    assert handler.starts == ["async run"]


def test_callbacks_reach_the_model_through_client_worker_threads() -> None:
    handler = RecordingHandler()
    client = LLMClient(FakeListChatModel(responses=["a"]), max_concurrency=3)
    with callbacks_scope([handler]):
        client.complete_many([f"p{i}" for i in range(6)], show_progress=False)
    assert sorted(handler.starts) == [f"p{i}" for i in range(6)]


# -- LlamaIndex -------------------------------------------------------------------------------
class UsageMockLLM(MockLLM):
    """MockLLM whose responses carry token counts like provider integrations do."""

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        if prompt.startswith("raw"):
            return CompletionResponse(
                text="raw reply", raw={"usage": {"prompt_tokens": 9, "completion_tokens": 4}}
            )
        return CompletionResponse(
            text="reply", additional_kwargs={"prompt_tokens": 6, "completion_tokens": 1}
        )


def test_llama_index_mock_llm() -> None:
    llm = as_llm(MockLLM())
    assert isinstance(llm, LlamaIndexLLM)
    result = llm.complete("echo this")
    assert result.text == "echo this"
    assert result.estimated
    assert asyncio.run(llm.acomplete("again")).text == "again"


def test_llama_index_token_counts() -> None:
    llm = LlamaIndexLLM(UsageMockLLM())
    assert llm.complete("q") == LLMResult("reply", 6, 1)
    assert llm.complete("raw q") == LLMResult("raw reply", 9, 4)


class KwargsMockLLM(MockLLM):
    """MockLLM replying with the keyword arguments it received."""

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=repr(sorted(kwargs.items())))


def test_llama_index_forwards_generation_params_on_request() -> None:
    assert LlamaIndexLLM(KwargsMockLLM()).complete("q", max_tokens=2).text == "[]"
    forwarded = LlamaIndexLLM(KwargsMockLLM(), forward_generation_params=True)
    reply = forwarded.complete("q", max_tokens=2, temperature=0.1).text
    assert reply == "[('max_tokens', 2), ('temperature', 0.1)]"


# -- callables and dispatch -------------------------------------------------------------------
def test_callable_llm() -> None:
    llm = as_llm(str.upper)
    assert isinstance(llm, CallableLLM)
    assert llm.model_name == "upper"
    result = llm.complete("abc")
    assert result == LLMResult("ABC", 1, 1, estimated=True)
    assert asyncio.run(llm.acomplete("xy")).text == "XY"


def test_callable_must_return_str() -> None:
    with pytest.raises(LLMOutputError):
        CallableLLM(lambda _p: 3).complete("x")  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError):
        CallableLLM("not callable")  # type: ignore[arg-type]


class ProtocolLLM:
    model_name = "custom"

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        return LLMResult(prompt[::-1], 1, 1)

    async def acomplete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        return self.complete(prompt)


class DuckRunnable:
    def invoke(self, messages: Any, config: Any = None, **kwargs: Any) -> str:
        return "duck"

    async def ainvoke(self, messages: Any, config: Any = None, **kwargs: Any) -> str:
        return "duck"


def test_as_llm_dispatch() -> None:
    custom = ProtocolLLM()
    assert as_llm(custom) is custom
    assert isinstance(custom, LLM)
    wrapped = LangChainLLM(FakeListChatModel(responses=["x"]))
    assert as_llm(wrapped) is wrapped
    duck = as_llm(DuckRunnable())
    assert isinstance(duck, LangChainLLM)
    assert duck.complete("q").text == "duck"
    default = as_llm(None)
    assert isinstance(default, TransformersLLM)
    assert default.model_name == "SmolLM2-135M-Instruct"
    named = as_llm("some-org/some-model")
    assert isinstance(named, TransformersLLM)
    assert named.model_name == "some-org/some-model"
    with pytest.raises(TypeError, match="llm must be"):
        as_llm(42)


def test_usage_from_variants() -> None:
    class Usage:
        input_tokens = 4
        output_tokens = 5

    assert usage_from({"input_tokens": 1, "output_tokens": 2}) == (1, 2)
    assert usage_from({"prompt_eval_count": 3, "eval_count": 4}) == (3, 4)
    assert usage_from(Usage()) == (4, 5)
    assert usage_from({"prompt_tokens": "7", "completion_tokens": 1}) is None
    assert usage_from(None) is None
