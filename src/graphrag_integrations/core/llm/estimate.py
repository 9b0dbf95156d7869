"""What a batch of LLM calls will cost before it runs: calls, tokens and, for local models, time.

Prompt tokens are counted with the model's own tokenizer when it has one and it is loaded
(``count_tokens``, as :class:`~graphrag_integrations.core.llm.transformers_lm.TransformersLLM`:
chat template included), else estimated as characters / 4
(:func:`~graphrag_integrations.core.llm.protocol.estimate_tokens`). Completion tokens are the
generation limit of every call (a batch of a local model runs until its longest row, so the
limit is what decoding costs). Time is given for local models only (models with
``complete_batch``), from the per-token constants below, measured on one idle CPU core
with the offline SmolLM2-135M-Instruct in float32 (``docs/reference/llm.md``), times the
machine's current slowdown (:func:`machine_slowdown`: the load average per core). A larger
model is slower, a GPU faster, and a shared machine's load varies: the progress bar's ETA,
measured from the calls done, replaces the estimate once generation runs. A remote (API)
model gets no time estimate.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_integrations.core.llm.protocol import estimate_tokens

#: Seconds a local model spends per prompt token on one idle CPU core (SmolLM2-135M-Instruct,
#: float32: 3.56 ms per token read, ``docs/reference/llm.md``, "Precision").
LOCAL_SECONDS_PER_PROMPT_TOKEN = 0.0036
#: Seconds per generated token in batches of 8 on one idle CPU core (SmolLM2-135M-Instruct,
#: float32: 141 ms per decoding step of 8 rows, ``docs/reference/llm.md``).
LOCAL_SECONDS_PER_COMPLETION_TOKEN = 0.018
#: Completion tokens assumed per call when neither the call nor the model sets a limit.
DEFAULT_COMPLETION_TOKENS = 256


@dataclass(frozen=True)
class LLMWorkEstimate:
    """The expected cost of a batch of LLM calls.

    Parameters
    ----------
    calls : int
        LLM calls expected (cached prompts excluded).
    prompt_tokens : int
        Prompt tokens of those calls.
    completion_tokens : int
        Completion tokens at most (the generation limit of every call).
    seconds : float or None
        Expected time for a local model on this machine; ``None`` for a remote model.
    slowdown : float
        The :func:`machine_slowdown` ``seconds`` includes.

    Examples
    --------
    >>> LLMWorkEstimate(1600, 365_703, 204_800, 5002.0).describe()
    '~1,600 LLM calls, ~571k tokens, ~83 min on this machine'
    >>> LLMWorkEstimate(5, 4_000, 1_000, 200.0, slowdown=4.5).describe()
    '~5 LLM calls, ~5.0k tokens, ~3 min on this machine (busy: 4.5x an idle CPU core)'
    >>> LLMWorkEstimate(10, 4_000, 1_000, None).describe()
    '~10 LLM calls, ~5.0k tokens'
    """

    calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float | None
    slowdown: float = 1.0

    @property
    def tokens(self) -> int:
        """Prompt + completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def describe(self) -> str:
        """``"~N LLM calls, ~T tokens[, ~M min on this machine[ (busy: ...)]]"``."""
        from graphrag_integrations.core.progress import format_count

        plural = "" if self.calls == 1 else "s"
        text = f"~{self.calls:,} LLM call{plural}, ~{format_count(self.tokens)} tokens"
        if self.seconds is not None:
            minutes = self.seconds / 60
            when = f"{minutes:.0f} min" if minutes >= 1 else f"{self.seconds:.0f} s"
            text += f", ~{when} on this machine"
            if self.slowdown > 1:
                text += f" (busy: {self.slowdown:.1f}x an idle CPU core)"
        return text


def machine_slowdown() -> float:
    """How much slower than on an idle core a CPU-bound process runs here now: the 1-minute
    load average per core, at least 1 (1 where the load average is unknown)."""
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):
        return 1.0
    return max(1.0, load / (os.cpu_count() or 1))


def is_local(llm: Any) -> bool:
    """Whether ``llm`` runs in this process (it batches prompts itself: ``complete_batch``)."""
    return callable(getattr(llm, "complete_batch", None))


def count_prompt_tokens(llm: Any, prompt: str) -> int:
    """Tokens of ``prompt`` for ``llm``: its ``count_tokens`` when it has one, else chars / 4.

    A model that says it is not loaded yet (``loaded`` false, as a fresh
    :class:`~graphrag_integrations.core.llm.transformers_lm.TransformersLLM`) is estimated with
    chars / 4 too: an estimate is printed before the work starts, not after a model load.

    Examples
    --------
    >>> count_prompt_tokens(lambda p: "", "Paris is the capital of France.")
    8
    """
    count = getattr(llm, "count_tokens", None)
    if callable(count) and getattr(llm, "loaded", True) is not False:
        return int(count(prompt))
    return estimate_tokens(prompt)


def completion_limit(llm: Any, max_tokens: int | None = None) -> int:
    """The generation limit of a call: ``max_tokens``, else the model's ``max_new_tokens``,
    else :data:`DEFAULT_COMPLETION_TOKENS`."""
    if max_tokens is not None:
        return int(max_tokens)
    limit = getattr(llm, "max_new_tokens", None)
    return int(limit) if isinstance(limit, int) else DEFAULT_COMPLETION_TOKENS


def estimate_llm_work(
    llm: Any,
    prompts: Sequence[str],
    *,
    max_tokens: int | None = None,
    calls_per_prompt: float = 1.0,
    slowdown: float | None = None,
) -> LLMWorkEstimate:
    """The expected cost of completing ``prompts`` with ``llm`` (see the module docstring).

    Parameters
    ----------
    llm : LLM
        The model (``LLMClient.llm``).
    prompts : sequence of str
        The prompts still to send (without the cached ones).
    max_tokens : int, optional
        Generation limit per call (default: the model's, see :func:`completion_limit`).
    calls_per_prompt : float
        Expected calls per prompt (``1.6`` when 60 % of the replies are retried once); every
        call is counted with the prompt tokens of its prompt.
    slowdown : float, optional
        Factor on the idle-core time of a local model (default: :func:`machine_slowdown`).

    Returns
    -------
    LLMWorkEstimate

    Examples
    --------
    >>> class Local:  # a fake local model: 1 token per word
    ...     max_new_tokens = 100
    ...     def count_tokens(self, prompt): return len(prompt.split())
    ...     def complete_batch(self, prompts): ...
    >>> work = estimate_llm_work(Local(), ["one two three", "four five"], calls_per_prompt=1.5,
    ...                          slowdown=1.0)
    >>> work.calls, work.prompt_tokens, work.completion_tokens, round(work.seconds, 3)
    (3, 8, 300, 5.427)
    """
    if calls_per_prompt < 1:
        raise ValueError(f"calls_per_prompt must be >= 1, got {calls_per_prompt}")
    prompt_tokens = sum(count_prompt_tokens(llm, p) for p in prompts) * calls_per_prompt
    calls = round(len(prompts) * calls_per_prompt)
    completion = calls * completion_limit(llm, max_tokens)
    seconds = None
    factor = 1.0
    if is_local(llm):
        factor = machine_slowdown() if slowdown is None else slowdown
        seconds = factor * (
            prompt_tokens * LOCAL_SECONDS_PER_PROMPT_TOKEN
            + completion * LOCAL_SECONDS_PER_COMPLETION_TOKEN
        )
    return LLMWorkEstimate(calls, round(prompt_tokens), completion, seconds, factor)
