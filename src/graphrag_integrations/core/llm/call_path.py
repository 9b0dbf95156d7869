"""The path of one LLM call through :class:`~graphrag_integrations.core.llm.client.LLMClient`:
retries, the response cache and token accounting (:class:`CallPath`, a base of the client)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import tenacity

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

    def _retry_policy(self) -> dict[str, Any]:
        """The client's retry policy as tenacity arguments: an exception other than the
        package's own (deterministic, never retried) is retried up to ``max_retries`` times,
        ``retry_backoff * 2**i`` seconds after failure ``i``, each retry counted and logged;
        the last failure is logged and re-raised."""

        def log_retry(state: tenacity.RetryCallState) -> None:
            self.usage.record_retry()
            logger.warning(
                "%s call failed (%r); retry %d/%d in %.2fs",
                self.llm.model_name,
                _failure(state),
                state.attempt_number,
                self.max_retries,
                state.upcoming_sleep,
            )

        def give_up(state: tenacity.RetryCallState) -> Any:
            model, attempts = self.llm.model_name, state.attempt_number
            logger.error("%s failed after %d attempt(s): %r", model, attempts, _failure(state))
            raise _failure(state)

        return {
            "retry": tenacity.retry_if_exception(
                lambda exc: isinstance(exc, Exception) and not isinstance(exc, GraphRAGError)
            ),
            "stop": tenacity.stop_after_attempt(self.max_retries + 1),
            "wait": tenacity.wait_exponential(multiplier=self.retry_backoff),
            "before_sleep": log_retry,
            "retry_error_callback": give_up,
        }

    def _retrying(self, call: Callable[[], T]) -> T:
        """Run ``call`` with the client's retry policy."""
        result: T = tenacity.Retrying(**self._retry_policy())(call)
        return result

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
        retrying = tenacity.AsyncRetrying(**self._retry_policy())
        return self._store(key, await retrying(self.llm.acomplete, prompt, **params))


def _failure(state: tenacity.RetryCallState) -> BaseException:
    """The exception of the attempt ``state`` is about."""
    assert state.outcome is not None and state.outcome.failed
    failure = state.outcome.exception()
    assert failure is not None
    return failure
