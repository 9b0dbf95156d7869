"""Adapters turning framework models and plain callables into the :class:`LLM` protocol.

:func:`as_llm` accepts a LangChain chat model or any ``Runnable``, a LlamaIndex ``LLM``, a
plain ``str -> str`` callable, a hub name / local path of a causal LM (loaded with
:class:`~graphrag_integrations.core.llm.transformers_lm.TransformersLLM`), or ``None`` for the
offline default (SmolLM2-135M-Instruct). Frameworks are never imported here: objects are
recognised by the module of their classes, so ``import graphrag_integrations`` stays light.

Generation settings
-------------------
Framework models carry their own temperature and token limit (set when the user built the
model). By default the adapters leave them alone and ignore the ``max_tokens`` /
``temperature`` arguments of :meth:`LLM.complete` (logged at DEBUG level); pass
``forward_generation_params=True`` to send them as invoke/complete keyword arguments, which
most provider integrations (OpenAI, Anthropic...) accept.

Token counts
------------
Taken from what the model reports (LangChain ``usage_metadata``, then ``response_metadata``
``token_usage`` / ``usage``; LlamaIndex ``additional_kwargs`` then ``raw.usage``). When the model
reports nothing, both counts are estimated with
:func:`~graphrag_integrations.core.llm.protocol.estimate_tokens` (four characters per token) and
the result has ``estimated=True``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from graphrag_integrations.core.context import current_callbacks
from graphrag_integrations.core.llm.protocol import LLM, LLMResult, estimate_tokens
from graphrag_integrations.errors import LLMOutputError

logger = logging.getLogger(__name__)

# (prompt key, completion key) pairs providers use for token counts, most standard first.
_USAGE_KEYS = (
    ("input_tokens", "output_tokens"),
    ("prompt_tokens", "completion_tokens"),
    ("prompt_token_count", "candidates_token_count"),
    ("prompt_eval_count", "eval_count"),
)


def usage_from(obj: Any) -> tuple[int, int] | None:
    """Read ``(prompt_tokens, completion_tokens)`` from a usage mapping or object, if present.

    Examples
    --------
    >>> usage_from({"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9})
    (7, 2)
    >>> usage_from({"foo": 1}) is None
    True
    """
    if obj is None:
        return None
    for prompt_key, completion_key in _USAGE_KEYS:
        if isinstance(obj, Mapping):
            p, c = obj.get(prompt_key), obj.get(completion_key)
        else:
            p, c = getattr(obj, prompt_key, None), getattr(obj, completion_key, None)
        if isinstance(p, int) and isinstance(c, int):
            return p, c
    return None


def _estimated(prompt: str, text: str) -> LLMResult:
    return LLMResult(text, estimate_tokens(prompt), estimate_tokens(text), estimated=True)


def _result(prompt: str, text: str, usage: tuple[int, int] | None) -> LLMResult:
    if usage is None:
        return _estimated(prompt, text)
    return LLMResult(text, usage[0], usage[1])


def _name_of(obj: Any) -> str:
    for attr in ("model_name", "model", "model_id", "model_path"):
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value and value != "unknown":
            return value
    return type(obj).__name__


def _from_framework(obj: Any, package: str) -> bool:
    return any(cls.__module__.split(".")[0] == package for cls in type(obj).__mro__)


class _FrameworkLLM:
    """Shared parameter handling of the framework adapters."""

    def __init__(self, forward_generation_params: bool) -> None:
        self.forward_generation_params = forward_generation_params

    def _generation_kwargs(self, max_tokens: int | None, temperature: float) -> dict[str, Any]:
        if not self.forward_generation_params:
            if max_tokens is not None or temperature != 0.0:
                logger.debug(
                    "%s: max_tokens=%s temperature=%s not forwarded "
                    "(forward_generation_params=False); the model's own settings apply",
                    type(self).__name__,
                    max_tokens,
                    temperature,
                )
            return {}
        kwargs: dict[str, Any] = {"temperature": temperature}
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        return kwargs


class LangChainLLM(_FrameworkLLM):
    """:class:`LLM` over a LangChain chat model, LLM or any ``Runnable``.

    The prompt is sent as one ``HumanMessage`` (to a text-completion ``BaseLLM``: as the plain
    string, so no role prefix is added); the reply may be a message or a string. The
    callbacks of the LangChain run that is calling us (see
    :func:`graphrag_integrations.core.context.current_callbacks`) are passed in ``config``, so
    the model call appears as a child run of the retriever in tracing tools.

    Parameters
    ----------
    runnable : Runnable
        Anything with ``invoke`` / ``ainvoke`` taking a list of messages.
    model_name : str, optional
        Defaults to the model's ``model_name`` / ``model`` attribute, else its class name.
    forward_generation_params : bool
        Send ``max_tokens`` / ``temperature`` as invoke keyword arguments (see module docs).

    Examples
    --------
    >>> from langchain_core.language_models import FakeListChatModel
    >>> llm = LangChainLLM(FakeListChatModel(responses=["Paris"]))
    >>> llm.complete("Capital of France?").text
    'Paris'
    """

    def __init__(
        self,
        runnable: Any,
        *,
        model_name: str | None = None,
        forward_generation_params: bool = False,
    ) -> None:
        super().__init__(forward_generation_params)
        self.runnable = runnable
        self.model_name = model_name or _name_of(runnable)
        self._text_llm = any(
            cls.__name__ == "BaseLLM" and cls.__module__.startswith("langchain_core")
            for cls in type(runnable).__mro__
        )

    def _input(self, prompt: str) -> tuple[Any, dict[str, Any] | None]:
        callbacks = current_callbacks()
        config = {"callbacks": callbacks} if callbacks is not None else None
        if self._text_llm:
            return prompt, config
        from langchain_core.messages import HumanMessage

        return [HumanMessage(content=prompt)], config

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        messages, config = self._input(prompt)
        reply = self.runnable.invoke(
            messages, config, **self._generation_kwargs(max_tokens, temperature)
        )
        return self._to_result(prompt, reply)

    async def acomplete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        messages, config = self._input(prompt)
        reply = await self.runnable.ainvoke(
            messages, config, **self._generation_kwargs(max_tokens, temperature)
        )
        return self._to_result(prompt, reply)

    def _to_result(self, prompt: str, reply: Any) -> LLMResult:
        if isinstance(reply, str):
            return _estimated(prompt, reply)
        content = getattr(reply, "content", None)
        if content is None:
            raise LLMOutputError(
                f"{self.model_name}: expected a message or a string, got {type(reply).__name__}"
            )
        text = _content_text(content)
        usage = usage_from(getattr(reply, "usage_metadata", None))
        if usage is None:
            metadata = getattr(reply, "response_metadata", None) or {}
            usage = usage_from(metadata.get("token_usage")) or usage_from(metadata.get("usage"))
        return _result(prompt, text, usage)


def _content_text(content: Any) -> str:
    """Text of a LangChain message ``content`` (a string or a list of content blocks)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


class LlamaIndexLLM(_FrameworkLLM):
    """:class:`LLM` over a LlamaIndex ``LLM`` (its ``complete`` / ``acomplete``).

    Chat-only integrations implement ``complete`` by wrapping the prompt in one user message,
    so chat models work too.

    Parameters
    ----------
    llm : llama_index.core.llms.LLM
        The model.
    model_name : str, optional
        Defaults to ``llm.model`` / ``llm.metadata.model_name``, else the class name.
    forward_generation_params : bool
        Send ``max_tokens`` / ``temperature`` as ``complete`` keyword arguments.

    Examples
    --------
    >>> from llama_index.core.llms import MockLLM
    >>> LlamaIndexLLM(MockLLM()).complete("echo me").text
    'echo me'
    """

    def __init__(
        self,
        llm: Any,
        *,
        model_name: str | None = None,
        forward_generation_params: bool = False,
    ) -> None:
        super().__init__(forward_generation_params)
        self.llm = llm
        if model_name is None:
            model_name = _name_of(llm)
            meta_name = getattr(getattr(llm, "metadata", None), "model_name", None)
            if model_name == type(llm).__name__ and meta_name and meta_name != "unknown":
                model_name = str(meta_name)
        self.model_name = model_name

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        response = self.llm.complete(prompt, **self._generation_kwargs(max_tokens, temperature))
        return self._to_result(prompt, response)

    async def acomplete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        response = await self.llm.acomplete(
            prompt, **self._generation_kwargs(max_tokens, temperature)
        )
        return self._to_result(prompt, response)

    def _to_result(self, prompt: str, response: Any) -> LLMResult:
        text = getattr(response, "text", None)
        if not isinstance(text, str):
            raise LLMOutputError(
                f"{self.model_name}: expected a CompletionResponse, got {type(response).__name__}"
            )
        usage = usage_from(getattr(response, "additional_kwargs", None))
        if usage is None:
            raw = getattr(response, "raw", None)
            if isinstance(raw, Mapping):
                usage = usage_from(raw.get("usage"))
            else:
                usage = usage_from(getattr(raw, "usage", None))
        return _result(prompt, text, usage)


class CallableLLM:
    """:class:`LLM` over a plain function ``prompt -> reply text``.

    The function receives only the prompt; ``max_tokens`` / ``temperature`` are not passed.
    Token counts are estimated (:func:`estimate_tokens`). :meth:`acomplete` runs the function
    in a worker thread.

    Parameters
    ----------
    fn : callable
        ``str -> str``.
    model_name : str, optional
        Defaults to the function's ``__name__``.

    Examples
    --------
    >>> llm = CallableLLM(str.upper, model_name="shout")
    >>> llm.complete("hi").text
    'HI'
    """

    def __init__(self, fn: Callable[[str], str], *, model_name: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.model_name = model_name or getattr(fn, "__name__", None) or type(fn).__name__

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        reply = self.fn(prompt)
        if not isinstance(reply, str):
            raise LLMOutputError(
                f"{self.model_name}: the callable returned {type(reply).__name__}, expected str"
            )
        return _estimated(prompt, reply)

    async def acomplete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        return await asyncio.to_thread(
            self.complete, prompt, max_tokens=max_tokens, temperature=temperature
        )


def as_llm(obj: Any = None) -> LLM:
    """Normalise ``obj`` into an :class:`LLM`.

    Parameters
    ----------
    obj : None, str, LLM, LangChain Runnable, LlamaIndex LLM or callable
        - ``None``: the offline default, SmolLM2-135M-Instruct via
          :class:`~graphrag_integrations.core.llm.transformers_lm.TransformersLLM`;
        - ``str``: a causal-LM hub name, local Hugging Face folder or ``.gguf`` file, loaded
          with :class:`~graphrag_integrations.core.llm.transformers_lm.TransformersLLM`;
        - an object already implementing :class:`LLM`: returned unchanged;
        - a LlamaIndex ``LLM``: :class:`LlamaIndexLLM`;
        - a LangChain chat model / LLM / ``Runnable`` (or anything with ``invoke`` and
          ``ainvoke``): :class:`LangChainLLM`;
        - any other callable ``str -> str``: :class:`CallableLLM`.

    Raises
    ------
    TypeError
        If ``obj`` is none of the above.

    Examples
    --------
    >>> as_llm(lambda p: "42").complete("question").text
    '42'
    """
    if obj is None or isinstance(obj, str):
        from graphrag_integrations.core.llm.transformers_lm import TransformersLLM

        return TransformersLLM(obj)
    if isinstance(obj, (LangChainLLM, LlamaIndexLLM, CallableLLM)):
        return obj
    if _from_framework(obj, "llama_index"):
        return LlamaIndexLLM(obj)
    if _from_framework(obj, "langchain_core") or _from_framework(obj, "langchain"):
        return LangChainLLM(obj)
    if isinstance(obj, LLM):
        return obj
    if hasattr(obj, "invoke") and hasattr(obj, "ainvoke"):
        return LangChainLLM(obj)
    if callable(obj):
        return CallableLLM(obj)
    raise TypeError(
        "llm must be None, a model name/path, an LLM, a LangChain chat model or Runnable, a "
        f"LlamaIndex LLM or a callable str -> str; got {type(obj).__name__}"
    )
