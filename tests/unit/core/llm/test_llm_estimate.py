"""Cost estimates of LLM work before it runs (core.llm.estimate, LLMClient.estimate, QCG)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from graphrag_integrations.core.llm import LLMClient, LLMResult
from graphrag_integrations.core.llm.estimate import (
    DEFAULT_COMPLETION_TOKENS,
    LOCAL_SECONDS_PER_COMPLETION_TOKEN,
    LOCAL_SECONDS_PER_PROMPT_TOKEN,
    estimate_llm_work,
)
from graphrag_integrations.methods.qcg.generation import LOCAL_RETRY_RATE, Doc2QueryGenerator
from graphrag_integrations.methods.qcg.prompts import SMALL_MODEL_PROMPT, doc2query_prompt


class LocalLM:
    """A fake local model: one token per word, batches prompts, counts its calls."""

    model_name = "tiny-local"
    max_new_tokens = 50

    def __init__(self) -> None:
        self.calls = 0

    def count_tokens(self, prompt: str) -> int:
        return len(prompt.split())

    def complete(self, prompt: str, **kwargs: object) -> LLMResult:
        return self.complete_batch([prompt])[0]

    async def acomplete(self, prompt: str, **kwargs: object) -> LLMResult:
        return self.complete(prompt)

    def complete_batch(self, prompts: Sequence[str], **kwargs: object) -> list[LLMResult]:
        self.calls += len(prompts)
        return [LLMResult("Question: Who?\nAnswer: Bob", self.count_tokens(p), 6) for p in prompts]


def test_remote_model_chars_per_token_and_no_time() -> None:
    work = estimate_llm_work(lambda p: "", ["x" * 400, "y" * 40], max_tokens=20)
    assert (work.calls, work.prompt_tokens, work.completion_tokens) == (2, 110, 40)
    assert work.seconds is None
    assert work.describe() == "~2 LLM calls, ~150 tokens"


def test_local_model_counts_with_its_tokenizer_and_estimates_time() -> None:
    work = estimate_llm_work(LocalLM(), ["a b c d", "e f"], calls_per_prompt=2.0, slowdown=1.0)
    assert (work.calls, work.prompt_tokens) == (4, 12)
    assert work.completion_tokens == 4 * LocalLM.max_new_tokens
    expected = 12 * LOCAL_SECONDS_PER_PROMPT_TOKEN + 200 * LOCAL_SECONDS_PER_COMPLETION_TOKEN
    assert work.seconds == pytest.approx(expected)
    assert work.describe().endswith("on this machine")
    busy = estimate_llm_work(LocalLM(), ["a b c d", "e f"], calls_per_prompt=2.0, slowdown=3.0)
    assert busy.seconds == pytest.approx(3 * expected)
    assert busy.describe().endswith("(busy: 3.0x an idle CPU core)")
    with pytest.raises(ValueError, match="calls_per_prompt"):
        estimate_llm_work(LocalLM(), ["a"], calls_per_prompt=0.5)


def test_client_estimate_leaves_cached_prompts_out(tmp_path: Path) -> None:
    client = LLMClient(lambda p: "reply", cache_dir=tmp_path)
    assert client.estimate(["one", "two"]).calls == 2
    assert client.estimate(["one"]).completion_tokens == DEFAULT_COMPLETION_TOKENS
    client.complete("one")
    hits = client.usage.cache_hits
    assert client.estimate(["one", "two"]).calls == 1
    assert client.usage.cache_hits == hits  # estimating is not a cache hit


def test_qcg_announces_the_estimate_before_the_first_call(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphrag_integrations.core.llm import estimate

    monkeypatch.setattr(estimate, "machine_slowdown", lambda: 2.0)
    llm = LocalLM()
    gen = Doc2QueryGenerator(
        LLMClient(llm), M=1, template=SMALL_MODEL_PROMPT, max_tokens=40, show_progress=True
    )
    chunks = ["Bob came to Paris.", "Alice left Rome.", "  "]
    work = gen.estimate(chunks)
    assert work is not None and llm.calls == 0  # estimating calls nothing
    prompts = [doc2query_prompt(c, 1, SMALL_MODEL_PROMPT) for c in chunks[:2]]
    assert work.calls == round(2 * (1 + LOCAL_RETRY_RATE))
    n_prompt = sum(len(p.split()) for p in prompts)
    assert work.prompt_tokens == round(n_prompt * (1 + LOCAL_RETRY_RATE))
    assert work.completion_tokens == work.calls * 40
    gen.generate(chunks)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == (
        f"QCG: generating queries for 2 chunks with tiny-local: {work.describe()} "
        "(a local model; pass llm=<a LangChain or LlamaIndex chat model> to generate faster, "
        "or query_set=<a saved QuerySet> to reuse generated queries)"
    )
    assert "on this machine (busy: 2.0x an idle CPU core)" in lines[0]
    assert llm.calls == 2
    gen.show_progress = False
    assert gen.announce(chunks) is not None
    assert capsys.readouterr().err == ""  # without progress the estimate is only logged


def test_a_model_not_loaded_yet_is_not_loaded_for_an_estimate() -> None:
    class Unloaded(LocalLM):
        loaded = False

        def count_tokens(self, prompt: str) -> int:
            raise AssertionError("an estimate must not load the model")

    work = estimate_llm_work(Unloaded(), ["x" * 40])
    assert work.prompt_tokens == 10 and work.seconds is not None
