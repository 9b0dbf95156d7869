"""The one object methods use to call an LLM: retries, concurrency, caching, JSON, accounting."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from graphrag_integrations.core.llm.adapters import as_llm
from graphrag_integrations.core.llm.cache import ResponseCache, cache_key
from graphrag_integrations.core.llm.estimate import (
    LLMWorkEstimate,
    completion_limit,
    estimate_llm_work,
)
from graphrag_integrations.core.llm.json_output import extract_json
from graphrag_integrations.core.llm.protocol import LLM, LLMResult, estimate_tokens
from graphrag_integrations.core.llm.usage import TokenUsage
from graphrag_integrations.core.progress import LLMProgress
from graphrag_integrations.errors import GraphRAGError, LLMOutputError, ModelUnavailableError

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Exceptions a ``complete_json`` validator may raise to reject a value.
VALIDATION_ERRORS = (ValueError, TypeError, KeyError, IndexError, LLMOutputError)


class LLMClient:
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
            for start in range(0, len(misses), self.batch_size):
                chunk = misses[start : start + self.batch_size]
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

    # -- generation and scoring --------------------------------------------------------------
    def generate(
        self,
        prompt: str,
        *,
        constraint: Callable[[tuple[int, ...]], Any] | None = None,
        constraint_key: str | None = None,
        num_beams: int = 1,
        num_return_sequences: int = 1,
        max_tokens: int | None = None,
    ) -> list[LLMResult]:
        """Greedy / beam-search generation, optionally constrained; hypotheses best first.

        Parameters
        ----------
        prompt : str
            The prompt (the model applies its chat template as in :meth:`complete`).
        constraint : callable, optional
            ``allowed_fn(generated_ids) -> allowed next ids`` - a
            :class:`~graphrag_integrations.core.constraints.TokenTrie`,
            :class:`~graphrag_integrations.core.constraints.SubstringIndex` or any callable,
            whose entries end with the model's ``eos_token_id``. It is applied with a
            :class:`~graphrag_integrations.core.constraints.ConstrainedLogitsProcessor`, and
            every result gets the constraint's ``verdict`` (keep ``"complete"`` ones).
        constraint_key : str, optional
            Identifies the constraint's content (e.g. a hash of its entries) in the cache key.
            A constrained call without one is never cached: the client cannot tell two
            constraints apart.
        num_beams, num_return_sequences : int
            Beam width and hypotheses returned (``num_return_sequences <= num_beams``).
        max_tokens : int, optional
            New-token limit (default: the client's ``max_tokens``, then the model's).

        Returns
        -------
        list of LLMResult
            With ``token_ids`` and ``score`` (see
            :meth:`~graphrag_integrations.core.llm.transformers_lm.TransformersLLM.generate`).
            Usage: one call, the prompt tokens once plus every hypothesis' tokens; a cache hit
            counts in ``usage.cache_hits`` only.

        Raises
        ------
        ModelUnavailableError
            If the model has no ``generate`` (LangChain / LlamaIndex / callable models), or,
            with a constraint, no ``eos_token_id``.
        """
        generate = self._capability("generate", "token-level generation (beams, constraints)")
        max_tokens = self.max_tokens if max_tokens is None else max_tokens
        factory: Callable[[int], list[Any]] | None = None
        judge: Any = None
        if constraint is not None:
            from graphrag_integrations.core.constraints import ConstrainedLogitsProcessor

            eos = getattr(self.llm, "eos_token_id", None)
            if not isinstance(eos, int):
                raise ModelUnavailableError(
                    f"constrained generation needs the model's `eos_token_id` (int); "
                    f"{self.llm.model_name!r} ({type(self.llm).__name__}) has {eos!r}"
                )
            judge = ConstrainedLogitsProcessor(constraint, 0, eos_token_id=eos)

            def factory(prompt_length: int) -> list[Any]:
                return [ConstrainedLogitsProcessor(constraint, prompt_length, eos_token_id=eos)]

        key = None
        if self.cache is not None and (constraint is None or constraint_key is not None):
            params = {
                "call": "generate",
                "constraint": constraint_key,
                "num_beams": num_beams,
                "num_return_sequences": num_return_sequences,
                "max_tokens": max_tokens,
            }
            key = cache_key(self.llm.model_name, prompt, params)
            hit = self.cache.get_record(key)
            if hit is not None:
                self.usage.record_cache_hit()
                return [LLMResult.from_dict(d) for d in hit]
        results: list[LLMResult] = self._retrying(
            lambda: generate(
                prompt,
                max_tokens=max_tokens,
                num_beams=num_beams,
                num_return_sequences=num_return_sequences,
                logits_processors=factory,
            )
        )
        if not results:
            raise LLMOutputError(f"{self.llm.model_name}: generate returned no hypothesis")
        if judge is not None:
            results = [replace(r, verdict=judge.verdict(r.token_ids or ())) for r in results]
        self.usage.record_call(
            prompt_tokens=results[0].prompt_tokens,
            completion_tokens=sum(r.completion_tokens for r in results),
            estimated=any(r.estimated for r in results),
        )
        if self.cache is not None and key is not None:
            self.cache.put_record(key, self.llm.model_name, [r.to_dict() for r in results])
        return results

    def generate_many(
        self,
        prompt: str,
        *,
        prefixes: Sequence[Sequence[int]],
        constraints: Sequence[Callable[[tuple[int, ...]], Any] | None] | None = None,
        constraint_keys: Sequence[str | None] | None = None,
        num_beams: int = 1,
        num_return_sequences: int = 1,
        max_tokens: int | None = None,
        early_stopping: bool = False,
    ) -> list[list[LLMResult]]:
        """:meth:`generate` for several continuations ``prompt ++ prefixes[i]`` in ONE model call.

        Row ``i`` continues the prompt after the token ids ``prefixes[i]`` (e.g. a forced
        entity and a separator) under ``constraints[i]``, which sees only the tokens generated
        after the prefix. The rows that miss the cache go to the model's ``generate_many``
        together (one ``generate`` with ``num_beams`` beams per row, the shared prompt encoded
        once, see
        :meth:`~graphrag_integrations.core.llm.transformers_lm.TransformersLLM.generate_many`).

        Parameters
        ----------
        prompt : str
            The shared prompt.
        prefixes : sequence of sequence of int
            One prefix per row (may be empty).
        constraints : sequence of callable or None, optional
            One per row (``None``: unconstrained row), as ``constraint`` of :meth:`generate`.
        constraint_keys : sequence of str or None, optional
            One per row, as ``constraint_key`` of :meth:`generate`; a constrained row without
            a key is never cached.
        num_beams, num_return_sequences, max_tokens
            As in :meth:`generate`, for every row.
        early_stopping : bool
            Beam search stops once every row has ``num_beams`` finished hypotheses (the
            model's ``generate_many(early_stopping=True)``: fewer decoding steps, possibly
            other hypotheses; part of the cache key when true).

        Returns
        -------
        list of list of LLMResult
            Per row, what :meth:`generate` returns for it: hypotheses best first, with
            ``verdict`` for constrained rows. Cache and usage are per row, as if each row were
            a :meth:`generate` call (one call, the row's prompt + prefix tokens once plus every
            hypothesis' tokens; a hit counts in ``usage.cache_hits`` only), so the totals do
            not depend on how rows are batched. A row with an empty prefix shares its cache
            entry with the equivalent :meth:`generate` call.

        Raises
        ------
        ValueError
            If ``constraints`` or ``constraint_keys`` do not have one entry per prefix.
        ModelUnavailableError
            If the model has no ``generate_many``, or, with a constraint, no ``eos_token_id``.
        """
        rows = [tuple(int(t) for t in p) for p in prefixes]
        n = len(rows)
        cons = list(constraints) if constraints is not None else [None] * n
        keys_in = list(constraint_keys) if constraint_keys is not None else [None] * n
        if len(cons) != n or len(keys_in) != n:
            raise ValueError(
                f"{n} prefixes need as many constraints and constraint_keys, "
                f"got {len(cons)} and {len(keys_in)}"
            )
        if not rows:
            return []
        generate_many = self._capability(
            "generate_many", "batched token-level generation (beams, constraints)"
        )
        max_tokens = self.max_tokens if max_tokens is None else max_tokens
        eos: int | None = None
        if any(c is not None for c in cons):
            eos = getattr(self.llm, "eos_token_id", None)
            if not isinstance(eos, int):
                raise ModelUnavailableError(
                    f"constrained generation needs the model's `eos_token_id` (int); "
                    f"{self.llm.model_name!r} ({type(self.llm).__name__}) has {eos!r}"
                )
        out: list[list[LLMResult] | None] = [None] * n
        cache_keys: list[str | None] = [None] * n
        for i, (prefix, constraint, ckey) in enumerate(zip(rows, cons, keys_in, strict=True)):
            if self.cache is None or (constraint is not None and ckey is None):
                continue
            params: dict[str, Any] = {
                "call": "generate",
                "constraint": ckey,
                "num_beams": num_beams,
                "num_return_sequences": num_return_sequences,
                "max_tokens": max_tokens,
            }
            if prefix:
                params["prefix"] = list(prefix)
            if early_stopping:  # absent when false: keys of earlier caches stay valid
                params["early_stopping"] = True
            key = cache_keys[i] = cache_key(self.llm.model_name, prompt, params)
            hit = self.cache.get_record(key)
            if hit is not None:
                self.usage.record_cache_hit()
                out[i] = [LLMResult.from_dict(d) for d in hit]
        misses = [i for i in range(n) if out[i] is None]
        if misses:
            from graphrag_integrations.core.constraints import ConstrainedLogitsProcessor

            def factory_for(
                constraint: Callable[[tuple[int, ...]], Any] | None,
            ) -> Callable[[int], list[Any]] | None:
                if constraint is None:
                    return None
                assert eos is not None
                end: int = eos
                return lambda width: [
                    ConstrainedLogitsProcessor(constraint, width, eos_token_id=end)
                ]

            factories = [factory_for(cons[i]) for i in misses]
            batch: list[list[LLMResult]] = self._retrying(
                lambda: generate_many(
                    prompt,
                    [rows[i] for i in misses],
                    max_tokens=max_tokens,
                    num_beams=num_beams,
                    num_return_sequences=num_return_sequences,
                    logits_processors=factories,
                    # passed only when set: a model without the option still serves the rest
                    **({"early_stopping": True} if early_stopping else {}),
                )
            )
            if len(batch) != len(misses) or not all(batch):
                raise LLMOutputError(
                    f"{self.llm.model_name}: generate_many returned {len(batch)} rows "
                    f"(some empty?) for {len(misses)} prefixes"
                )
            for i, results in zip(misses, batch, strict=True):
                constraint = cons[i]
                if constraint is not None:
                    assert eos is not None
                    judge = ConstrainedLogitsProcessor(constraint, 0, eos_token_id=eos)
                    results = [
                        replace(r, verdict=judge.verdict(r.token_ids or ())) for r in results
                    ]
                self.usage.record_call(
                    prompt_tokens=results[0].prompt_tokens,
                    completion_tokens=sum(r.completion_tokens for r in results),
                    estimated=any(r.estimated for r in results),
                )
                row_key = cache_keys[i]
                if self.cache is not None and row_key is not None:
                    self.cache.put_record(
                        row_key, self.llm.model_name, [r.to_dict() for r in results]
                    )
                out[i] = results
        return [r for r in out if r is not None]

    def score_continuations(
        self, prompt: str, continuations: Sequence[str | Sequence[int]]
    ) -> list[float]:
        """Log-probability of each continuation after ``prompt`` (pick the best option).

        Uses the model's ``score_continuations`` (see
        :meth:`~graphrag_integrations.core.llm.transformers_lm.TransformersLLM.score_continuations`);
        cached on disk keyed by model, prompt and continuations. Usage: one call whose prompt
        tokens are the prompt once plus every continuation (estimated when the model reports
        no counts), no completion tokens.

        Raises
        ------
        ModelUnavailableError
            If the model cannot score continuations (LangChain / LlamaIndex / callables).
        """
        score = self._capability("score_continuations", "option scoring")
        conts: list[str | list[int]] = [
            c if isinstance(c, str) else [int(t) for t in c] for c in continuations
        ]
        if not conts:
            return []
        key = None
        if self.cache is not None:
            params = {"call": "score_continuations", "continuations": conts}
            key = cache_key(self.llm.model_name, prompt, params)
            hit = self.cache.get_record(key)
            if hit is not None:
                self.usage.record_cache_hit()
                return [float(v) for v in hit]
        with_usage = getattr(self.llm, "score_continuations_with_usage", None)
        if callable(with_usage):
            scores, tokens = self._retrying(lambda: with_usage(prompt, conts))
            estimated = False
        else:
            scores = self._retrying(lambda: score(prompt, conts))
            tokens = estimate_tokens(prompt) + sum(
                estimate_tokens(c) if isinstance(c, str) else len(c) for c in conts
            )
            estimated = True
        scores = [float(v) for v in scores]
        if len(scores) != len(conts):
            raise LLMOutputError(
                f"{self.llm.model_name}: {len(scores)} scores for {len(conts)} continuations"
            )
        self.usage.record_call(prompt_tokens=tokens, completion_tokens=0, estimated=estimated)
        if self.cache is not None and key is not None:
            self.cache.put_record(key, self.llm.model_name, scores)
        return scores

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

    async def acomplete_json(
        self,
        prompt: str,
        validate: Callable[[Any], Any] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Any | None:
        """Async :meth:`complete_json`."""
        text = await self.acomplete(prompt, max_tokens=max_tokens, temperature=temperature)
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
