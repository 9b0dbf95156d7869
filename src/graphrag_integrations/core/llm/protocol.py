"""The small LLM protocol every method talks to, and its result type.

Methods never call a framework model directly: they receive an :class:`LLM` (usually through
:func:`~graphrag_integrations.core.llm.adapters.as_llm`) and read the reply text and the token
counts from an :class:`LLMResult`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

#: Characters per token assumed by :func:`estimate_tokens` (the usual figure for English
#: text with BPE tokenizers such as GPT's and Llama's).
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class LLMResult:
    """One completion and what it cost.

    Parameters
    ----------
    text : str
        The reply text (no prompt echo, no chat-template markup).
    prompt_tokens : int
        Tokens consumed by the prompt.
    completion_tokens : int
        Tokens generated.
    estimated : bool
        ``True`` when the model did not report token counts and both figures come from
        :func:`estimate_tokens` instead of a tokenizer.

    Examples
    --------
    >>> r = LLMResult("Paris", prompt_tokens=12, completion_tokens=2)
    >>> r.total_tokens
    14
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@runtime_checkable
class LLM(Protocol):
    """A text-in, text-out language model.

    Attributes
    ----------
    model_name : str
        Identifies the model; part of the response-cache key, so two models never share
        cached replies.

    Examples
    --------
    A minimal implementation (tests use ones like it):

    >>> class Echo:
    ...     model_name = "echo"
    ...     def complete(self, prompt, *, max_tokens=None, temperature=0.0):
    ...         return LLMResult(prompt, estimate_tokens(prompt), estimate_tokens(prompt))
    ...     async def acomplete(self, prompt, *, max_tokens=None, temperature=0.0):
    ...         return self.complete(prompt)
    >>> isinstance(Echo(), LLM)
    True
    """

    model_name: str

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        """Complete ``prompt``; ``max_tokens=None`` leaves the model's own limit."""
        ...

    async def acomplete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        """Async :meth:`complete`."""
        ...


def estimate_tokens(text: str) -> int:
    """Tokenizer-free token estimate: ``ceil(len(text) / 4)``.

    Used only when a model reports no usage. Four characters per token is the usual average
    for English prose with BPE vocabularies; expect about ±25 % on prose and more on code,
    numbers or non-Latin scripts. Results carrying estimates have ``estimated=True``.

    Examples
    --------
    >>> estimate_tokens("")
    0
    >>> estimate_tokens("Paris is the capital of France.")
    8
    """
    return math.ceil(len(text) / CHARS_PER_TOKEN)
