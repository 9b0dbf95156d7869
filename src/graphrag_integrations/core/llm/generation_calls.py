"""Generation and scoring through :class:`~graphrag_integrations.core.llm.client.LLMClient`:
beam search and constrained decoding (:meth:`GenerationCalls.generate`,
:meth:`GenerationCalls.generate_many`) and the log-probabilities of options
(:meth:`GenerationCalls.score_continuations`), cached and accounted like completions
(:class:`GenerationCalls`, a base of the client)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from graphrag_integrations.core.llm.cache import cache_key
from graphrag_integrations.core.llm.call_path import CallPath
from graphrag_integrations.core.llm.protocol import LLMResult, estimate_tokens
from graphrag_integrations.errors import LLMOutputError, ModelUnavailableError


class GenerationCalls(CallPath):
    """:meth:`generate`, :meth:`generate_many` and :meth:`score_continuations`, for models
    that offer them (``ModelUnavailableError`` otherwise)."""

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
