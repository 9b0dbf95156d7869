"""The path of one LLM call through :class:`~graphrag_integrations.core.llm.client.LLMClient`:
retries, the response cache and token accounting (:class:`CallPath`, a base of the client)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from graphrag_integrations.core.llm.cache import ResponseCache, cache_key
from graphrag_integrations.core.llm.protocol import LLM, LLMResult
from graphrag_integrations.core.llm.usage import TokenUsage
from graphrag_integrations.errors import GraphRAGError, ModelUnavailableError

logger = logging.getLogger(__name__)

T = TypeVar("T")


class CallPath:
    """One call with the client's retry policy, cache and accounting: :meth:`complete`,
    :meth:`acomplete` and the helpers the batch, generation and JSON calls share (see
    :class:`~graphrag_integrations.core.llm.client.LLMClient`)."""

    #: The model (set by ``LLMClient.__init__``, like the attributes below).
    llm: LLM
    max_concurrency: int
    batch_size: int
    max_retries: int
    retry_backoff: float
    max_tokens: int | None
    temperature: float
    cache: ResponseCache | None
    usage: TokenUsage

    @property
    def model_name(self) -> str:
        return self.llm.model_name

    # -- single calls ------------------------------------------------------------------------
    def _params(self, max_tokens: int | None, temperature: float | None) -> dict[str, Any]:
        return {
            "max_tokens": self.max_tokens if max_tokens is None else max_tokens,
            "temperature": self.temperature if temperature is None else temperature,
        }

    def _cached(self, prompt: str, params: dict[str, Any]) -> tuple[str | None, str | None]:
        """``(cache key, cached text)``; both ``None`` without a cache."""
        if self.cache is None:
            return None, None
        key = cache_key(self.llm.model_name, prompt, params)
        hit = self.cache.get(key)
        if hit is None:
            return key, None
        self.usage.record_cache_hit()
        return key, hit.text

    def _store(self, key: str | None, result: LLMResult) -> str:
        self.usage.record_call(
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            estimated=result.estimated,
        )
        if self.cache is not None and key is not None:
            self.cache.put(key, self.llm.model_name, result)
        return result.text

    def _on_failure(self, attempt: int, exc: Exception) -> float:
        """Log a failed attempt; return the wait before the retry, or re-raise if none is left."""
        if isinstance(exc, GraphRAGError):  # our own errors are deterministic: never retried
            raise exc
        if attempt >= self.max_retries:
            logger.error("%s failed after %d attempt(s): %r", self.llm.model_name, attempt + 1, exc)
            raise exc
        delay = self.retry_backoff * (2**attempt)
        self.usage.record_retry()
        logger.warning(
            "%s call failed (%r); retry %d/%d in %.2fs",
            self.llm.model_name,
            exc,
            attempt + 1,
            self.max_retries,
            delay,
        )
        return delay

    def _retrying(self, call: Callable[[], T]) -> T:
        """Run ``call`` with the client's retry policy."""
        attempt = 0
        while True:
            try:
                return call()
            except Exception as exc:
                time.sleep(self._on_failure(attempt, exc))
                attempt += 1

    def _capability(self, name: str, what: str) -> Callable[..., Any]:
        """The model's method ``name``, or a clear error saying what is needed."""
        method = getattr(self.llm, name, None)
        if not callable(method):
            raise ModelUnavailableError(
                f"{what} needs a model with a `{name}` method, such as a local "
                f"TransformersLLM (a hub name or path passed as llm); "
                f"{self.llm.model_name!r} ({type(self.llm).__name__}) only completes text"
            )
        return method  # type: ignore[no-any-return]

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float | None = None
    ) -> str:
        """Reply text for ``prompt`` (from the cache when present).

        Raises
        ------
        Exception
            Whatever the model raised on its last attempt, once retries are exhausted.
        """
        params = self._params(max_tokens, temperature)
        key, text = self._cached(prompt, params)
        if text is not None:
            return text
        return self._store(key, self._retrying(lambda: self.llm.complete(prompt, **params)))

    async def acomplete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float | None = None
    ) -> str:
        """Async :meth:`complete` (uses the model's ``acomplete``)."""
        params = self._params(max_tokens, temperature)
        key, text = self._cached(prompt, params)
        if text is not None:
            return text
        attempt = 0
        while True:
            try:
                result = await self.llm.acomplete(prompt, **params)
            except Exception as exc:
                await asyncio.sleep(self._on_failure(attempt, exc))
                attempt += 1
                continue
            return self._store(key, result)
