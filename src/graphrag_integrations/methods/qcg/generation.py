"""Extended Doc2Query (QCG-RAG §3.3 step 1): query-answer pairs per chunk through an LLM.

:class:`Doc2QueryGenerator` sends each chunk with a Doc2Query prompt
(:mod:`~graphrag_integrations.methods.qcg.prompts`) and parses the reply tolerantly
(:func:`~graphrag_integrations.methods.qcg.prompts.parse_qa_pairs`). A reply giving no pair is
retried once with a short repair instruction appended (its own cache entry); a chunk still
without pairs is counted as failed and logged.

Calls go through :class:`~graphrag_integrations.core.llm.LLMClient`: with ``cache_dir`` each
reply is stored on disk as soon as it arrives, keyed by model, prompt (chunk text + template)
and generation parameters, so a rebuild or a restart after a crash never pays twice. A
:class:`~graphrag_integrations.methods.qcg.query_set.QuerySet` keeps the parsed pairs per
chunk text for reuse without any LLM (also importable from here, like the prompt names).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from graphrag_integrations.core.counters import Counters
from graphrag_integrations.core.llm.estimate import LLMWorkEstimate, is_local
from graphrag_integrations.core.progress import LLMProgress
from graphrag_integrations.methods.qcg.prompts import (
    DOC2QUERY_PROMPT,
    REPAIR_SUFFIX,
    SMALL_MODEL_PROMPT,
    SMALL_MODEL_REPAIR_SUFFIX,
    TEMPLATES,
    ParsedReply,
    QAPair,
    distinct_questions,
    doc2query_prompt,
    parse_qa_pairs,
    prompt_hash,
    resolve_template,
)
from graphrag_integrations.methods.qcg.query_set import QUERY_SET_FILE, QuerySet, chunk_key

logger = logging.getLogger(__name__)

#: Share of the first replies of a local model retried once, for the cost estimate (measured
#: with SmolLM2-135M-Instruct and ``SMALL_MODEL_PROMPT``: 1,600 calls for 994 HotpotQA chunks,
#: 761 for 511 LiHuaWorld chunks, ``docs/lab/qcg.md``). Remote models are estimated without
#: retries.
LOCAL_RETRY_RATE = 0.6

__all__ = [
    "DOC2QUERY_PROMPT",
    "QUERY_SET_FILE",
    "REPAIR_SUFFIX",
    "SMALL_MODEL_PROMPT",
    "SMALL_MODEL_REPAIR_SUFFIX",
    "TEMPLATES",
    "Doc2QueryGenerator",
    "GenerationStats",
    "QAPair",
    "QuerySet",
    "chunk_key",
    "doc2query_prompt",
    "parse_qa_pairs",
    "prompt_hash",
    "resolve_template",
]


@dataclass
class GenerationStats(Counters):
    """Counts over every chunk sent through :class:`Doc2QueryGenerator`.

    Attributes
    ----------
    chunks : int
        Chunks generated for (blank chunks are not sent).
    json_replies, salvaged_replies : int
        Chunks whose final reply parsed as one JSON value / only by the salvage steps.
    retried : int
        Chunks whose first reply gave no pair (each retried once).
    failed : int
        Chunks without any pair after the retry.
    pairs, dropped_pairs : int
        Pairs kept / dropped by the parser.
    questions : int
        Answerless questions kept beside the pairs (:attr:`ParsedReply.questions`).
    seconds : float
        Wall time spent generating.
    """

    chunks: int = 0
    json_replies: int = 0
    salvaged_replies: int = 0
    retried: int = 0
    failed: int = 0
    pairs: int = 0
    dropped_pairs: int = 0
    questions: int = 0
    seconds: float = 0.0

    def record(self, parsed: ParsedReply, retried: bool) -> None:
        """Add the outcome of one chunk."""
        with self._lock:
            self.chunks += 1
            self.retried += int(retried)
            self.failed += int(not parsed.pairs)
            self.json_replies += int(parsed.how == "json")
            self.salvaged_replies += int(parsed.how in ("objects", "key-values", "lines"))
            self.pairs += len(parsed.pairs)
            self.dropped_pairs += parsed.dropped
            self.questions += len(parsed.questions)


class Doc2QueryGenerator:
    """Generate query-answer pairs for chunks through an LLM client.

    Parameters
    ----------
    client : LLMClient
        ``core.llm.LLMClient`` (its ``cache_dir`` makes replies persistent, its
        ``max_concurrency`` bounds the calls in flight, its ``usage`` counts tokens).
    M : int
        Pairs asked per chunk.
    template : str
        Prompt with ``{chunk}`` (and optionally ``{M}`` / ``{last}``).
    max_tokens : int, optional
        Generation limit per reply (``None``: the client's / model's default).
    repair_suffix : str, optional
        Appended to the prompt for the one retry; ``None``: :data:`SMALL_MODEL_REPAIR_SUFFIX`
        for :data:`SMALL_MODEL_PROMPT`, else :data:`REPAIR_SUFFIX` (JSON).
    show_progress : bool
        Print the cost estimate (:meth:`announce`) and show the progress of the calls
        (:class:`~graphrag_integrations.core.progress.LLMProgress`: done / total, elapsed,
        ETA, tokens so far / estimated total) on stderr.

    Examples
    --------
    >>> from graphrag_integrations.core.llm import LLMClient
    >>> reply = '[{"index": 0, "query": "Where is Paris?", "answer": "France"}]'
    >>> gen = Doc2QueryGenerator(LLMClient(lambda prompt: reply), M=1)
    >>> gen.generate(["Paris is in France."])
    [[QAPair(query='Where is Paris?', answer='France')]]
    """

    def __init__(
        self,
        client: Any,
        *,
        M: int = 20,
        template: str = DOC2QUERY_PROMPT,
        max_tokens: int | None = None,
        repair_suffix: str | None = None,
        show_progress: bool = False,
    ) -> None:
        if "{chunk}" not in template:
            raise ValueError("the Doc2Query template must contain {chunk}")
        if M < 1:
            raise ValueError(f"M must be >= 1, got {M}")
        self.client = client
        self.M = M
        self.template = template
        self.max_tokens = max_tokens
        if repair_suffix is None:
            small = template == SMALL_MODEL_PROMPT
            repair_suffix = SMALL_MODEL_REPAIR_SUFFIX if small else REPAIR_SUFFIX
        self.repair_suffix = repair_suffix
        self.show_progress = show_progress
        self.stats = GenerationStats()

    @property
    def model_name(self) -> str:
        return str(self.client.model_name)

    @property
    def prompt_hash(self) -> str:
        return prompt_hash(self.template)

    def _complete(self, prompt: str) -> str:
        """The one LLM call of this stage."""
        return str(self.client.complete(prompt, max_tokens=self.max_tokens))

    def generate_one(self, chunk: str) -> list[QAPair]:
        """Pairs of one chunk (one retry when the first reply gives none)."""
        prompt = doc2query_prompt(chunk, self.M, self.template)
        parsed = parse_qa_pairs(self._complete(prompt), self.M)
        retried = not parsed.pairs
        if retried:
            logger.info("Doc2Query reply gave no pair; retrying once with a repair instruction")
            again = parse_qa_pairs(self._complete(prompt + self.repair_suffix), self.M)
            parsed = self._after_retry(parsed, again)
        return self._finish(chunk, parsed, retried)

    def _after_retry(self, first: ParsedReply, again: ParsedReply) -> ParsedReply:
        """The retry's pairs, with the answerless questions of both replies."""
        questions = distinct_questions(first.questions + again.questions, again.pairs, self.M)
        return ParsedReply(again.pairs, again.how, again.dropped, questions)

    def _finish(self, chunk: str, parsed: ParsedReply, retried: bool) -> list[QAPair]:
        """The pairs to store: answered pairs first, then the answerless questions as
        ``QAPair(question, "")`` (an index drops or keeps them: ``QCGIndexParams.answerless``).
        """
        if not parsed.pairs:
            logger.warning(
                "Doc2Query: no query-answer pair for a chunk after one retry (%r...)", chunk[:60]
            )
        self.stats.record(parsed, retried)
        return parsed.pairs + [QAPair(q, "") for q in parsed.questions]

    @property
    def batched(self) -> bool:
        """Whether the client batches a local model (``LLMClient.complete_many`` +
        ``complete_batch``): then :meth:`generate` sends every first prompt in batches, then
        every retry prompt, instead of one chunk per thread."""
        llm = getattr(self.client, "llm", None)
        return callable(getattr(self.client, "complete_many", None)) and callable(
            getattr(llm, "complete_batch", None)
        )

    def _generate_batched(self, chunks: Sequence[str], todo: list[int]) -> dict[int, list[QAPair]]:
        """First replies of every chunk in batches, then the retries in batches.

        ``complete_many`` caches each batch as it completes under the same keys as single
        calls, so a batched and a one-at-a-time build share the cache.
        """
        prompts = {i: doc2query_prompt(chunks[i], self.M, self.template) for i in todo}
        replies = self.client.complete_many(
            [prompts[i] for i in todo],
            show_progress=self.show_progress,
            desc="Doc2Query",
            max_tokens=self.max_tokens,
        )
        parsed = {i: parse_qa_pairs(str(r), self.M) for i, r in zip(todo, replies, strict=True)}
        retry = [i for i in todo if not parsed[i].pairs]
        if retry:
            logger.info("Doc2Query: %d replies gave no pair; retrying each once", len(retry))
            again = self.client.complete_many(
                [prompts[i] + self.repair_suffix for i in retry],
                show_progress=self.show_progress,
                desc="Doc2Query retries",
                max_tokens=self.max_tokens,
            )
            for i, reply in zip(retry, again, strict=True):
                parsed[i] = self._after_retry(parsed[i], parse_qa_pairs(str(reply), self.M))
        retried = set(retry)
        return {i: self._finish(chunks[i], parsed[i], i in retried) for i in todo}

    def estimate(self, chunks: Sequence[str]) -> LLMWorkEstimate | None:
        """Expected cost of :meth:`generate` on ``chunks`` (cached replies left out): calls
        (first replies, plus :data:`LOCAL_RETRY_RATE` retries for a local model), tokens and,
        for a local model, time; ``None`` when the client cannot estimate (not an
        ``LLMClient``).

        Examples
        --------
        >>> from graphrag_integrations.core.llm import LLMClient
        >>> gen = Doc2QueryGenerator(LLMClient(lambda prompt: "", max_tokens=64), M=2)
        >>> gen.estimate(["Paris is in France.", "  "]).calls
        1
        """
        estimate = getattr(self.client, "estimate", None)
        if not callable(estimate):
            return None
        prompts = [doc2query_prompt(c, self.M, self.template) for c in chunks if c.strip()]
        retries = LOCAL_RETRY_RATE if is_local(getattr(self.client, "llm", None)) else 0.0
        work: LLMWorkEstimate = estimate(
            prompts, max_tokens=self.max_tokens, calls_per_prompt=1.0 + retries
        )
        return work

    def announce(self, chunks: Sequence[str]) -> str | None:
        """Log (and, with :attr:`show_progress`, print to stderr) the cost estimate of
        generating for ``chunks`` before the first call; returns the line (``None``: nothing
        to call, or no estimate).

        ``QCG: generating queries for 994 chunks with SmolLM2-135M-Instruct: ~1,590 LLM calls,
        ~560k tokens, ~80 min on this machine (...)``.
        """
        todo = [c for c in chunks if c.strip()]
        work = self.estimate(todo)
        if work is None or work.calls == 0:
            return None
        chunks_text = f"{len(todo):,} chunk{'' if len(todo) == 1 else 's'}"
        line = f"QCG: generating queries for {chunks_text} with {self.model_name}: "
        line += work.describe()
        if work.seconds is not None:
            line += (
                " (a local model; pass llm=<a LangChain or LlamaIndex chat model> to generate "
                "faster, or query_set=<a saved QuerySet> to reuse generated queries)"
            )
        if self.show_progress:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        else:
            logger.info(line)
        return line

    def _progress(self, total: int) -> LLMProgress:
        """Progress of the one-chunk-per-thread path (chunks done; the client's tokens)."""
        make = getattr(self.client, "progress", None)
        if callable(make):
            bar: LLMProgress = make(total, "Doc2Query", enabled=self.show_progress, unit="chunk")
            return bar
        return LLMProgress(total, "Doc2Query", enabled=self.show_progress, unit="chunk")

    def generate(self, chunks: Sequence[str]) -> list[list[QAPair]]:
        """Pairs of every chunk, in order, with at most ``max_concurrency`` calls in flight
        (or in ``batch_size`` batches when :attr:`batched`).

        Before the first call the cost estimate is logged (:meth:`announce`); the progress
        (:class:`~graphrag_integrations.core.progress.LLMProgress`: done / total, ETA,
        tokens) shows from the first call when :attr:`show_progress` is on. Every reply is
        cached by the client as soon as it arrives; an exception from the model (after the
        client's retries) propagates once the calls in flight have finished.
        """
        todo = [i for i, c in enumerate(chunks) if c.strip()]
        out: list[list[QAPair]] = [[] for _ in chunks]
        if not todo:
            return out
        self.announce([chunks[i] for i in todo])
        start = time.perf_counter()
        if self.batched:
            for i, pairs in self._generate_batched(chunks, todo).items():
                out[i] = pairs
            self.stats.seconds += time.perf_counter() - start
            return out
        workers = max(1, min(int(getattr(self.client, "max_concurrency", 1)), len(todo)))
        with (
            self._progress(len(todo)) as bar,
            ThreadPoolExecutor(workers, thread_name_prefix="doc2query") as pool,
        ):
            futures = {i: pool.submit(self.generate_one, chunks[i]) for i in todo}
            for fut in futures.values():
                fut.add_done_callback(lambda _: bar.update())
            for i, fut in futures.items():
                out[i] = fut.result()
        self.stats.seconds += time.perf_counter() - start
        return out
