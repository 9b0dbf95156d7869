"""Thread-safe token and call accounting for :class:`~graphrag_integrations.core.llm.LLMClient`."""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_integrations.core.counters import Counters


@dataclass
class TokenUsage(Counters):
    """Running totals of what an :class:`~graphrag_integrations.core.llm.LLMClient` spent.

    Cache hits are counted in :attr:`cache_hits` only: they add no calls and no tokens.

    Attributes
    ----------
    calls : int
        Model calls that returned a reply (retried attempts count once).
    prompt_tokens, completion_tokens : int
        Tokens of those calls, as reported by the model (or estimated, see
        :attr:`estimated_calls`).
    cache_hits : int
        Replies served from the on-disk cache.
    parse_failures : int
        Replies :meth:`~graphrag_integrations.core.llm.LLMClient.complete_json` could not parse
        or that its validator rejected.
    retries : int
        Failed attempts that were retried.
    estimated_calls : int
        Calls whose token counts are tokenizer-free estimates.

    Examples
    --------
    >>> u = TokenUsage()
    >>> u.record_call(prompt_tokens=10, completion_tokens=3)
    >>> u.as_dict()["total_tokens"]
    13
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    parse_failures: int = 0
    retries: int = 0
    estimated_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def record_call(
        self, *, prompt_tokens: int, completion_tokens: int, estimated: bool = False
    ) -> None:
        """Add one model call."""
        with self._lock:
            self.calls += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            if estimated:
                self.estimated_calls += 1

    def record_cache_hit(self) -> None:
        """Add one reply served from the cache."""
        with self._lock:
            self.cache_hits += 1

    def record_parse_failure(self) -> None:
        """Add one unparseable or rejected JSON reply."""
        with self._lock:
            self.parse_failures += 1

    def record_retry(self) -> None:
        """Add one failed attempt that is retried."""
        with self._lock:
            self.retries += 1

    def as_dict(self) -> dict[str, int]:
        """The counters (and ``total_tokens``) as a plain, JSON-serialisable dict."""
        out = {name: int(value) for name, value in super().as_dict().items()}
        out["total_tokens"] = out["prompt_tokens"] + out["completion_tokens"]
        return out
