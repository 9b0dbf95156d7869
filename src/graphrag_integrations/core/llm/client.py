"""The one object methods use to call an LLM: retries, concurrency, caching, JSON, accounting.

:class:`LLMClient` holds the constructor and the JSON calls; its bases hold the rest:
:class:`~graphrag_integrations.core.llm.call_path.CallPath` (one call: retries, cache,
accounting), :class:`~graphrag_integrations.core.llm.batch_calls.BatchCalls` (many prompts,
progress, estimates) and :class:`~graphrag_integrations.core.llm.generation_calls.GenerationCalls`
(generation and scoring).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphrag_integrations.core.llm.adapters import as_llm
from graphrag_integrations.core.llm.batch_calls import BatchCalls
from graphrag_integrations.core.llm.cache import ResponseCache
from graphrag_integrations.core.llm.generation_calls import GenerationCalls
from graphrag_integrations.core.llm.json_output import extract_json
from graphrag_integrations.core.llm.protocol import LLM
from graphrag_integrations.core.llm.usage import TokenUsage
from graphrag_integrations.errors import LLMOutputError

logger = logging.getLogger(__name__)

#: Exceptions a ``complete_json`` validator may raise to reject a value.
VALIDATION_ERRORS = (ValueError, TypeError, KeyError, IndexError, LLMOutputError)


class LLMClient(BatchCalls, GenerationCalls):
    """Calls an :class:`~graphrag_integrations.core.llm.protocol.LLM` the way indexing needs.

    - **retries**: an exception from the model is retried ``max_retries`` times, waiting
      ``retry_backoff * 2**attempt`` seconds before each retry (logged as a warning), then
      re-raised; this package's own errors (:class:`~graphrag_integrations.errors.GraphRAGError`,
      e.g. a model returning the wrong type or failing to load) are raised at once;
    - **concurrency**: :meth:`complete_many` runs at most ``max_concurrency`` calls at once and
      returns replies in prompt order;
    - **batching**: when the model has ``complete_batch`` (a local
      :class:`~graphrag_integrations.core.llm.transformers_lm.TransformersLLM`),
      :meth:`complete_many` sends the cache misses ``batch_size`` prompts per call instead
      (similar lengths together, so little padding), each batch retried as a whole;
    - **generation and scoring**: :meth:`generate` (beam search, constrained decoding with a
      ``TokenTrie`` / ``SubstringIndex``) and :meth:`score_continuations` (log-probabilities of
      options), for models that offer them; cached and accounted like completions;
    - **cache**: with ``cache_dir``, replies are stored on disk keyed by
      ``sha256(model name, prompt, max_tokens, temperature)``; a cached reply costs no call and
      no tokens (it counts in ``usage.cache_hits``). Sampled replies (``temperature > 0``) are
      cached too, so a re-run reproduces them;
    - **JSON**: :meth:`complete_json` parses the reply with
      :func:`~graphrag_integrations.core.llm.json_output.extract_json`;
    - **accounting**: :attr:`usage` (:class:`~graphrag_integrations.core.llm.usage.TokenUsage`);
    - **progress**: :meth:`complete_many` shows an
      :class:`~graphrag_integrations.core.progress.LLMProgress` from the first call (calls
      done / total, elapsed, ETA, tokens so far / estimated total); :meth:`estimate` gives the
      expected cost of prompts before sending them.

    Parameters
    ----------
    llm : any
        Normalised with :func:`~graphrag_integrations.core.llm.adapters.as_llm` (``None``: the
        offline SmolLM2 default).
    cache_dir : str or Path, optional
        Folder of the response cache; ``None`` disables caching.
    max_concurrency : int
        Calls in flight at once in :meth:`complete_many` / :meth:`acomplete_many`.
    max_retries : int
        Retries after the first failed attempt (``0``: fail at once).
    batch_size : int
        Prompts per ``complete_batch`` call in :meth:`complete_many` (models with
        ``complete_batch`` only; see ``docs/reference/llm.md`` for measured speed-ups).
    retry_backoff : float
        Base wait in seconds before a retry; doubles with each retry.
    max_tokens : int, optional
        Default generation limit passed to the model.
    temperature : float
        Default sampling temperature (``0.0``: greedy / deterministic).

    Examples
    --------
    >>> client = LLMClient(lambda p: '{"answer": "Paris"}')
    >>> client.complete_json("Capital of France? Reply in JSON.")
    {'answer': 'Paris'}
    >>> client.usage.calls
    1
    """

    def __init__(
        self,
        llm: Any = None,
        *,
        cache_dir: str | Path | None = None,
        max_concurrency: int = 4,
        max_retries: int = 3,
        retry_backoff: float = 0.5,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        batch_size: int = 8,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if retry_backoff < 0:
            raise ValueError(f"retry_backoff must be >= 0, got {retry_backoff}")
        self.llm: LLM = as_llm(llm)
        self.max_concurrency = max_concurrency
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.cache: ResponseCache | None = (
            ResponseCache(cache_dir) if cache_dir is not None else None
        )
        self.usage = TokenUsage()

    # -- JSON --------------------------------------------------------------------------------
    def _parse_json(
        self, prompt: str, text: str, validate: Callable[[Any], Any] | None
    ) -> Any | None:
        try:
            value = extract_json(text)
            if validate is not None and validate(value) is False:
                raise LLMOutputError("rejected by the validator")
        except VALIDATION_ERRORS as exc:
            self.usage.record_parse_failure()
            logger.warning(
                "%s: unusable JSON reply (%s); prompt %r..., reply %r...",
                self.llm.model_name,
                exc,
                prompt[:80],
                text[:200],
            )
            return None
        return value

    def complete_json(
        self,
        prompt: str,
        validate: Callable[[Any], Any] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Any | None:
        """Complete ``prompt`` and parse one JSON value from the reply.

        Parameters
        ----------
        prompt : str
            Should ask for JSON.
        validate : callable, optional
            Called with the parsed value; returning ``False`` or raising ``ValueError``,
            ``TypeError``, ``KeyError``, ``IndexError`` or ``LLMOutputError`` rejects it.

        Returns
        -------
        Any or None
            The parsed value; ``None`` when the reply holds no JSON or the validator rejects
            it. That fallback is logged (warning) and counted in ``usage.parse_failures``.
        """
        text = self.complete(prompt, max_tokens=max_tokens, temperature=temperature)
        return self._parse_json(prompt, text, validate)

    def close(self) -> None:
        """Close the response cache; the client must not be used afterwards."""
        if self.cache is not None:
            self.cache.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"LLMClient({self.llm.model_name!r}, max_concurrency={self.max_concurrency}, "
            f"cache={'on' if self.cache is not None else 'off'})"
        )
