"""Many prompts through :class:`~graphrag_integrations.core.llm.client.LLMClient`: concurrency,
batching (``complete_batch``), progress, and the cost estimate before a run
(:class:`BatchCalls`, a base of the client)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.llm.cache import cache_key
from graphrag_integrations.core.llm.call_path import CallPath
from graphrag_integrations.core.llm.estimate import (
    LLMWorkEstimate,
    completion_limit,
    estimate_llm_work,
)
from graphrag_integrations.core.llm.protocol import LLMResult, estimate_tokens
from graphrag_integrations.core.progress import LLMProgress
from graphrag_integrations.errors import LLMOutputError


class BatchCalls(CallPath):
    """:meth:`complete_many` / :meth:`acomplete_many` (``max_concurrency`` calls in flight, or
    ``batch_size`` prompts per ``complete_batch`` call), :meth:`uncached`, :meth:`estimate`
    and :meth:`progress`."""

    # -- batches -----------------------------------------------------------------------------
    def uncached(self, prompts: Sequence[str], *, max_tokens: int | None = None) -> list[str]:
        """The prompts :meth:`complete` would send to the model (not in the cache), in order.

        Reading the cache here counts no hit.
        """
        if self.cache is None:
            return list(prompts)
        params = self._params(max_tokens, None)
        return [
            p for p in prompts if self.cache.get(cache_key(self.llm.model_name, p, params)) is None
        ]

    def estimate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int | None = None,
        calls_per_prompt: float = 1.0,
    ) -> LLMWorkEstimate:
        """Expected cost of completing ``prompts``: calls, tokens and, for a local model, time
        (:func:`~graphrag_integrations.core.llm.estimate.estimate_llm_work`); cached prompts
        cost nothing and are left out.

        Examples
        --------
        >>> from graphrag_integrations.core.llm.client import LLMClient
        >>> LLMClient(lambda p: "ok", max_tokens=10).estimate(["four tokens at most"]).describe()
        '~1 LLM call, ~15 tokens'
        """
        limit = self.max_tokens if max_tokens is None else max_tokens
        return estimate_llm_work(
            self.llm,
            self.uncached(prompts, max_tokens=max_tokens),
            max_tokens=limit,
            calls_per_prompt=calls_per_prompt,
        )

    def progress(
        self,
        total: int,
        desc: str,
        *,
        enabled: bool = True,
        unit: str = "call",
        estimated_tokens: int | None = None,
        header: str | None = None,
    ) -> LLMProgress:
        """An :class:`~graphrag_integrations.core.progress.LLMProgress` counting this client's
        tokens from now on."""
        return LLMProgress(
            total,
            desc,
            enabled=enabled,
            unit=unit,
            tokens=lambda: self.usage.total_tokens,
            estimated_tokens=estimated_tokens,
            header=header,
        )

    def _rough_tokens(self, prompts: Sequence[str], max_tokens: int | None) -> int:
        """Characters / 4 of the prompts plus the generation limit of each (the bar's prior)."""
        limit = completion_limit(self.llm, self.max_tokens if max_tokens is None else max_tokens)
        return sum(estimate_tokens(p) + limit for p in prompts)

    def complete_many(
        self,
        prompts: Sequence[str],
        *,
        show_progress: bool = True,
        desc: str = "LLM",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> list[str]:
        """Replies for ``prompts``, in order, with at most ``max_concurrency`` calls in flight.

        Runs in a thread pool (safe to call from inside a running event loop); each call sees
        the caller's context variables (so LangChain callbacks still reach the model). The
        exception of the first prompt (in order) whose call fails after its retries is raised
        once the pool has finished.

        A model with ``complete_batch`` is instead called with the cache misses
        ``batch_size`` at a time, shortest prompts first, one batch after the other; a batch
        that fails after its retries raises (the batches before it are cached).
        """
        prompts = list(prompts)
        if not prompts:
            return []
        if callable(getattr(self.llm, "complete_batch", None)):
            return self._complete_batched(prompts, show_progress, desc, max_tokens, temperature)

        def one(prompt: str) -> str:
            return self.complete(prompt, max_tokens=max_tokens, temperature=temperature)

        workers = min(self.max_concurrency, len(prompts))
        rough = self._rough_tokens(prompts, max_tokens)
        with (
            self.progress(len(prompts), desc, enabled=show_progress, estimated_tokens=rough) as bar,
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm") as pool,
        ):
            futures = [pool.submit(contextvars.copy_context().run, one, p) for p in prompts]
            for future in futures:
                future.add_done_callback(lambda _f: bar.update(1))
            return [future.result() for future in futures]

    def _complete_batched(
        self,
        prompts: list[str],
        show_progress: bool,
        desc: str,
        max_tokens: int | None,
        temperature: float | None,
    ) -> list[str]:
        complete_batch = self._capability("complete_batch", "batched completion")
        params = self._params(max_tokens, temperature)
        replies: list[str | None] = [None] * len(prompts)
        keys: list[str | None] = []
        misses: list[int] = []
        for i, prompt in enumerate(prompts):
            key, text = self._cached(prompt, params)
            keys.append(key)
            if text is None:
                misses.append(i)
            else:
                replies[i] = text
        misses.sort(key=lambda i: len(prompts[i]))  # similar lengths share a batch
        rough = self._rough_tokens([prompts[i] for i in misses], max_tokens)
        with self.progress(
            len(misses), desc, enabled=show_progress and bool(misses), estimated_tokens=rough
        ) as bar:
            for chunk in batches(misses, self.batch_size):
                batch = [prompts[i] for i in chunk]
                results: list[LLMResult] = self._retrying(
                    functools.partial(complete_batch, batch, **params)
                )
                if len(results) != len(chunk):
                    raise LLMOutputError(
                        f"{self.llm.model_name}: complete_batch returned {len(results)} "
                        f"results for {len(chunk)} prompts"
                    )
                for i, result in zip(chunk, results, strict=True):
                    replies[i] = self._store(keys[i], result)
                bar.update(len(chunk))
        return [r for r in replies if r is not None]

    async def acomplete_many(
        self,
        prompts: Sequence[str],
        *,
        show_progress: bool = False,
        desc: str = "LLM",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> list[str]:
        """Async :meth:`complete_many` (an ``asyncio.Semaphore`` bounds the calls in flight;
        a model with ``complete_batch`` is batched as in :meth:`complete_many`, in a thread)."""
        prompts = list(prompts)
        if not prompts:
            return []
        if callable(getattr(self.llm, "complete_batch", None)):
            return await asyncio.to_thread(
                self._complete_batched, prompts, show_progress, desc, max_tokens, temperature
            )
        semaphore = asyncio.Semaphore(self.max_concurrency)
        rough = self._rough_tokens(prompts, max_tokens)
        with self.progress(
            len(prompts), desc, enabled=show_progress, estimated_tokens=rough
        ) as bar:

            async def one(prompt: str) -> str:
                async with semaphore:
                    text = await self.acomplete(
                        prompt, max_tokens=max_tokens, temperature=temperature
                    )
                bar.update(1)
                return text

            return list(await asyncio.gather(*(one(p) for p in prompts)))
