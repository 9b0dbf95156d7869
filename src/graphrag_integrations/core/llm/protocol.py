"""The small LLM protocol every method talks to, and its result type.

Methods never call a framework model directly: they receive an :class:`LLM` (usually through
:func:`~graphrag_integrations.core.llm.adapters.as_llm`) and read the reply text and the token
counts from an :class:`LLMResult`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

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
    score : float, optional
        Sequence score of a generated hypothesis (``generate``): the sum of the model's
        log-probabilities of the generated tokens divided by their number, the quantity beam
        search ranks by. ``None`` for plain completions.
    token_ids : tuple of int, optional
        The generated token ids, prompt sliced off (``generate``); ``None`` otherwise.
    verdict : str, optional
        For constrained generation through
        :meth:`~graphrag_integrations.core.llm.client.LLMClient.generate`: the constraint's
        verdict on ``token_ids`` (``"complete"``, ``"dead"``, ``"invalid"`` or
        ``"truncated"``, see
        :meth:`~graphrag_integrations.core.constraints.ConstrainedLogitsProcessor.verdict`).

    Examples
    --------
    >>> r = LLMResult("Paris", prompt_tokens=12, completion_tokens=2)
    >>> r.total_tokens
    14
    >>> LLMResult.from_dict(r.to_dict()) == r
    True
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool = False
    score: float | None = None
    token_ids: tuple[int, ...] | None = None
    verdict: str | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable fields (``token_ids`` as a list)."""
        out = asdict(self)
        if self.token_ids is not None:
            out["token_ids"] = list(self.token_ids)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LLMResult:
        """Inverse of :meth:`to_dict`."""
        ids = data.get("token_ids")
        score = data.get("score")
        verdict = data.get("verdict")
        return cls(
            text=str(data["text"]),
            prompt_tokens=int(data["prompt_tokens"]),
            completion_tokens=int(data["completion_tokens"]),
            estimated=bool(data.get("estimated", False)),
            score=None if score is None else float(score),
            token_ids=None if ids is None else tuple(int(t) for t in ids),
            verdict=None if verdict is None else str(verdict),
        )


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
