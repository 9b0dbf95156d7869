"""LLMClient: concurrency limit, order, retries, cache, JSON fallback, usage accounting."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path

import pytest

from graphrag_integrations.core.llm import (
    LLMClient,
    LLMResult,
    ResponseCache,
    TokenUsage,
    cache_key,
)
from graphrag_integrations.errors import LLMOutputError


class ScriptedLLM:
    """Fake LLM: replies ``reply_for(prompt)``, tracks calls and calls in flight."""

    def __init__(self, *, delay: float = 0.0, fail_first: int = 0, name: str = "scripted") -> None:
        self.model_name = name
        self.delay = delay
        self.fail_first = fail_first
        self.calls: list[str] = []
        self.kwargs: list[dict[str, object]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()

    @staticmethod
    def reply_for(prompt: str) -> str:
        return f"reply to {prompt}"

    def _enter(self, prompt: str, kwargs: dict[str, object]) -> None:
        with self._lock:
            self.calls.append(prompt)
            self.kwargs.append(kwargs)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            failing = len(self.calls) <= self.fail_first
        if failing:
            with self._lock:
                self.in_flight -= 1
            raise ConnectionError(f"transient failure {len(self.calls)}")

    def _exit(self, prompt: str) -> LLMResult:
        with self._lock:
            self.in_flight -= 1
        return LLMResult(self.reply_for(prompt), prompt_tokens=10, completion_tokens=2)

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        self._enter(prompt, {"max_tokens": max_tokens, "temperature": temperature})
        time.sleep(self.delay)
        return self._exit(prompt)

    async def acomplete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        self._enter(prompt, {"max_tokens": max_tokens, "temperature": temperature})
        await asyncio.sleep(self.delay)
        return self._exit(prompt)


PROMPTS = [f"prompt {i}" for i in range(12)]


def test_complete_many_limits_concurrency_and_keeps_order() -> None:
    llm = ScriptedLLM(delay=0.05)
    client = LLMClient(llm, max_concurrency=3)
    replies = client.complete_many(PROMPTS, show_progress=False)
    assert replies == [ScriptedLLM.reply_for(p) for p in PROMPTS]
    assert 2 <= llm.max_in_flight <= 3
    assert client.usage.calls == 12
    assert client.usage.prompt_tokens == 120
    assert client.usage.completion_tokens == 24


def test_complete_many_with_concurrency_one_is_sequential() -> None:
    llm = ScriptedLLM(delay=0.01)
    LLMClient(llm, max_concurrency=1).complete_many(PROMPTS[:4], show_progress=False)
    assert llm.max_in_flight == 1
    assert llm.calls == PROMPTS[:4]


async def test_acomplete_many_limits_concurrency_and_keeps_order() -> None:
    llm = ScriptedLLM(delay=0.02)
    client = LLMClient(llm, max_concurrency=4)
    replies = await client.acomplete_many(PROMPTS)
    assert replies == [ScriptedLLM.reply_for(p) for p in PROMPTS]
    assert llm.max_in_flight == 4


def test_complete_many_empty() -> None:
    assert LLMClient(ScriptedLLM()).complete_many([]) == []


def test_progress_bar_counts_every_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    LLMClient(ScriptedLLM(), max_concurrency=2).complete_many(PROMPTS[:5], desc="extracting")
    err = capsys.readouterr().err
    assert "extracting" in err
    assert "5/5" in err


def test_retries_then_succeeds(caplog: pytest.LogCaptureFixture) -> None:
    llm = ScriptedLLM(fail_first=2)
    client = LLMClient(llm, max_retries=3, retry_backoff=0.0)
    with caplog.at_level(logging.WARNING):
        assert client.complete("q") == "reply to q"
    assert len(llm.calls) == 3
    assert client.usage.retries == 2
    assert client.usage.calls == 1
    assert sum("retry" in r.getMessage() for r in caplog.records) == 2


def test_retries_exhausted_reraises_the_model_error() -> None:
    llm = ScriptedLLM(fail_first=10)
    client = LLMClient(llm, max_retries=2, retry_backoff=0.0)
    with pytest.raises(ConnectionError, match="transient failure 3"):
        client.complete("q")
    assert len(llm.calls) == 3
    assert client.usage.calls == 0


def test_package_errors_are_not_retried() -> None:
    calls: list[str] = []

    def wrong_type(prompt: str) -> str:
        calls.append(prompt)
        return 42  # type: ignore[return-value]

    client = LLMClient(wrong_type, max_retries=3, retry_backoff=0.0)
    with pytest.raises(LLMOutputError):
        client.complete("q")
    assert calls == ["q"]
    assert client.usage.retries == 0


def test_retry_backoff_doubles(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)  # the waits asked for, not the clock
    llm = ScriptedLLM(fail_first=2)
    client = LLMClient(llm, max_retries=2, retry_backoff=0.05)
    client.complete("q")
    assert [w for w in waits if w] == [0.05, 0.10]  # the fake model's own sleep(0) aside


async def test_async_retries() -> None:
    llm = ScriptedLLM(fail_first=1)
    client = LLMClient(llm, max_retries=1, retry_backoff=0.0)
    assert await client.acomplete("q") == "reply to q"
    assert client.usage.retries == 1


def test_no_retries_fails_at_once() -> None:
    llm = ScriptedLLM(fail_first=1)
    with pytest.raises(ConnectionError):
        LLMClient(llm, max_retries=0).complete("q")
    assert len(llm.calls) == 1


def test_cache_second_run_makes_zero_calls(tmp_path: Path) -> None:
    first_llm = ScriptedLLM()
    first = LLMClient(first_llm, cache_dir=tmp_path)
    replies = first.complete_many(PROMPTS, show_progress=False)
    first.close()
    assert len(first_llm.calls) == 12

    second_llm = ScriptedLLM()
    with LLMClient(second_llm, cache_dir=tmp_path) as second:
        assert second.complete_many(PROMPTS, show_progress=False) == replies
        assert second_llm.calls == []
        assert second.usage.cache_hits == 12
        assert second.usage.calls == 0
        assert second.usage.total_tokens == 0


def test_cache_key_separates_models_and_params(tmp_path: Path) -> None:
    LLMClient(ScriptedLLM(name="a"), cache_dir=tmp_path).complete("q")
    other_model = ScriptedLLM(name="b")
    LLMClient(other_model, cache_dir=tmp_path).complete("q")
    assert other_model.calls == ["q"]
    same_model = ScriptedLLM(name="a")
    client = LLMClient(same_model, cache_dir=tmp_path)
    client.complete("q")
    client.complete("q", max_tokens=5)
    client.complete("q", temperature=0.7)
    assert same_model.calls == ["q", "q"]
    assert same_model.kwargs == [
        {"max_tokens": 5, "temperature": 0.0},
        {"max_tokens": None, "temperature": 0.7},
    ]
    assert client.usage.cache_hits == 1


async def test_async_calls_use_the_cache(tmp_path: Path) -> None:
    llm = ScriptedLLM()
    client = LLMClient(llm, cache_dir=tmp_path)
    await client.acomplete("q")
    await client.acomplete("q")
    assert llm.calls == ["q"]
    assert client.usage.cache_hits == 1


def test_no_cache_dir_means_no_cache() -> None:
    llm = ScriptedLLM()
    client = LLMClient(llm)
    client.complete("q")
    client.complete("q")
    assert llm.calls == ["q", "q"]
    assert client.cache is None


def test_response_cache_is_thread_safe(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)

    def writer(t: int) -> None:
        for i in range(50):
            cache.put(f"{t}-{i}", "m", LLMResult(f"text {t} {i}", i, 1))
            assert cache.get(f"{t}-{i}") is not None

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(cache) == 200
    assert cache.get("3-49") == LLMResult("text 3 49", 49, 1)
    cache.clear()
    assert len(cache) == 0


def test_cache_key_is_sha256_of_content() -> None:
    key = cache_key("m", "p", {"temperature": 0.0})
    assert len(key) == 64
    assert key != cache_key("m", "p ", {"temperature": 0.0})


class JsonLLM(ScriptedLLM):
    def __init__(self, replies: dict[str, str]) -> None:
        super().__init__()
        self.replies = replies

    def complete(
        self, prompt: str, *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> LLMResult:
        self.calls.append(prompt)
        return LLMResult(self.replies[prompt], 3, 3)


def test_complete_json_parses() -> None:
    client = LLMClient(JsonLLM({"q": 'Sure:\n```json\n{"answer": "Paris",}\n```'}))
    assert client.complete_json("q") == {"answer": "Paris"}
    assert client.usage.parse_failures == 0


def test_complete_json_fallback_returns_none_logs_and_counts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = LLMClient(JsonLLM({"q": "I cannot answer that."}))
    with caplog.at_level(logging.WARNING):
        assert client.complete_json("q") is None
    assert client.usage.parse_failures == 1
    assert any("unusable JSON" in r.getMessage() for r in caplog.records)


def test_complete_json_validator() -> None:
    client = LLMClient(JsonLLM({"list": "[1, 2]", "obj": '{"a": 1}'}))
    assert client.complete_json("list", validate=lambda v: isinstance(v, list)) == [1, 2]
    assert client.complete_json("obj", validate=lambda v: isinstance(v, list)) is None

    def needs_b(value: dict[str, int]) -> None:
        _ = value["b"]

    assert client.complete_json("obj", validate=needs_b) is None
    assert client.usage.parse_failures == 2


def test_complete_json_validator_bugs_propagate() -> None:
    client = LLMClient(JsonLLM({"obj": '{"a": 1}'}))

    def buggy(value: object) -> bool:
        raise RuntimeError("bug in validator")

    with pytest.raises(RuntimeError):
        client.complete_json("obj", validate=buggy)


def test_client_defaults_are_passed_to_the_model() -> None:
    llm = ScriptedLLM()
    client = LLMClient(llm, max_tokens=32, temperature=0.2)
    client.complete("q")
    client.complete("q", max_tokens=8)
    assert llm.kwargs == [
        {"max_tokens": 32, "temperature": 0.2},
        {"max_tokens": 8, "temperature": 0.2},
    ]


def test_estimated_usage_is_flagged() -> None:
    client = LLMClient(lambda p: "abcdefgh")
    client.complete("abcd")
    assert client.usage.as_dict() == {
        "calls": 1,
        "prompt_tokens": 1,
        "completion_tokens": 2,
        "cache_hits": 0,
        "parse_failures": 0,
        "retries": 0,
        "estimated_calls": 1,
        "total_tokens": 3,
    }


@pytest.mark.parametrize(
    "kwargs",
    [{"max_concurrency": 0}, {"max_retries": -1}, {"retry_backoff": -1.0}],
)
def test_bad_parameters(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        LLMClient(ScriptedLLM(), **kwargs)  # type: ignore[arg-type]


def test_token_usage_is_thread_safe() -> None:
    usage = TokenUsage()

    def work() -> None:
        for _ in range(2000):
            usage.record_call(prompt_tokens=2, completion_tokens=1)
            usage.record_cache_hit()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert usage.calls == 8000
    assert usage.prompt_tokens == 16000
    assert usage.cache_hits == 8000
    usage.reset()
    assert usage.as_dict()["total_tokens"] == 0
    assert usage.calls == 0


class BatchLLM(ScriptedLLM):
    """Fake LLM with ``complete_batch``: records the batches; the first ``fail_batches`` fail."""

    def __init__(self, *, fail_batches: int = 0, drop_one: bool = False) -> None:
        super().__init__(name="batched")
        self.batches: list[list[str]] = []
        self.fail_batches = fail_batches
        self.drop_one = drop_one

    def complete_batch(
        self, prompts: list[str], *, max_tokens: int | None = None, temperature: float = 0.0
    ) -> list[LLMResult]:
        self.batches.append(list(prompts))
        if len(self.batches) <= self.fail_batches:
            raise ConnectionError("batch failed")
        out = [LLMResult(self.reply_for(p), len(p), len(p) % 5 + 1) for p in prompts]
        return out[:-1] if self.drop_one else out


def test_complete_many_batches_cache_misses_and_counts_per_prompt(tmp_path: Path) -> None:
    prompts = [f"p{'x' * (i % 4)} {i}" for i in range(7)]
    llm = BatchLLM()
    client = LLMClient(llm, cache_dir=tmp_path, batch_size=3)
    client.complete(prompts[2])  # one cache entry from a single call
    assert llm.calls == [prompts[2]]
    replies = client.complete_many(prompts, show_progress=False)
    assert replies == [ScriptedLLM.reply_for(p) for p in prompts]
    assert [len(b) for b in llm.batches] == [3, 3]  # 6 misses, 3 per batch
    assert sorted(p for b in llm.batches for p in b) == sorted(prompts[:2] + prompts[3:])
    lengths = [len(p) for b in llm.batches for p in b]
    assert lengths == sorted(lengths)  # shortest first: similar lengths share a batch
    assert client.usage.calls == 7
    assert client.usage.prompt_tokens == 10 + sum(len(p) for i, p in enumerate(prompts) if i != 2)
    assert client.usage.completion_tokens == 2 + sum(
        len(p) % 5 + 1 for i, p in enumerate(prompts) if i != 2
    )
    # second run: everything cached, no batch
    assert client.complete_many(prompts, show_progress=False) == replies
    assert len(llm.batches) == 2 and client.usage.cache_hits == 7 + 1


def test_batch_failures_are_retried_as_a_whole() -> None:
    llm = BatchLLM(fail_batches=2)
    client = LLMClient(llm, max_retries=2, retry_backoff=0.0, batch_size=4)
    assert client.complete_many(PROMPTS[:4], show_progress=False) == [
        ScriptedLLM.reply_for(p) for p in PROMPTS[:4]
    ]
    assert len(llm.batches) == 3 and client.usage.retries == 2 and client.usage.calls == 4
    failing = LLMClient(BatchLLM(fail_batches=5), max_retries=1, retry_backoff=0.0)
    with pytest.raises(ConnectionError, match="batch failed"):
        failing.complete_many(PROMPTS[:2], show_progress=False)


def test_batch_with_missing_results_is_an_error() -> None:
    client = LLMClient(BatchLLM(drop_one=True), max_retries=3)
    with pytest.raises(LLMOutputError, match="2 results for 3 prompts"):
        client.complete_many(PROMPTS[:3], show_progress=False)


def test_batched_progress_counts_the_calls_not_the_cache_hits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client = LLMClient(BatchLLM(), cache_dir=tmp_path, batch_size=2)
    client.complete(PROMPTS[0])
    client.complete_many(PROMPTS[:5], desc="queries")
    err = capsys.readouterr().err
    assert "queries: 0/4 calls" in err and "queries: 4/4 calls" in err
    client.complete_many(PROMPTS[:5], desc="queries")  # all cached: no call, no progress
    assert capsys.readouterr().err == ""


async def test_acomplete_many_uses_batches() -> None:
    llm = BatchLLM()
    client = LLMClient(llm, batch_size=5)
    replies = await client.acomplete_many(PROMPTS)
    assert replies == [ScriptedLLM.reply_for(p) for p in PROMPTS]
    assert [len(b) for b in llm.batches] == [5, 5, 2]
    assert llm.calls == []  # never the one-prompt path


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        LLMClient(BatchLLM(), batch_size=0)


def test_unsupported_model_errors_name_model_and_need(tmp_path: Path) -> None:
    from graphrag_integrations.errors import ModelUnavailableError

    client = LLMClient(ScriptedLLM(name="remote-chat"), cache_dir=tmp_path)
    with pytest.raises(
        ModelUnavailableError, match=r"needs a model with a `generate`.*remote-chat"
    ):
        client.generate("q", constraint=lambda ids: [0], constraint_key="k")
    with pytest.raises(ModelUnavailableError, match=r"`score_continuations`.*remote-chat"):
        client.score_continuations("q", ["a"])
    assert client.usage.calls == 0 and client.usage.cache_hits == 0


def test_result_round_trip_and_records(tmp_path: Path) -> None:
    result = LLMResult("a b", 4, 3, score=-0.5, token_ids=(7, 8, 0), verdict="complete")
    assert LLMResult.from_dict(result.to_dict()) == result
    cache = ResponseCache(tmp_path)
    cache.put_record("k", "m", [result.to_dict()])
    assert [LLMResult.from_dict(d) for d in cache.get_record("k")] == [result]
    assert cache.get_record("missing") is None
    cache.put_record("inf", "m", [float("-inf")])
    assert cache.get_record("inf") == [float("-inf")]
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0
