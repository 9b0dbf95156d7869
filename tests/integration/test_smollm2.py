"""SmolLM2-135M-Instruct (the offline default LLM) converts, reloads from cache and generates."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from graphrag_integrations.core.llm import LLMClient, TransformersLLM

pytestmark = pytest.mark.slow

PROMPT = "What is the capital of France? Answer in one short sentence."


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One conversion cache for the module (the first test converts, the next reuse it)."""
    return tmp_path_factory.mktemp("smollm2_cache")


def test_smollm2_converts_once_then_reloads_from_cache(model_cache: Path) -> None:
    first = TransformersLLM(cache_dir=model_cache)
    result = first.complete(PROMPT, max_tokens=24)
    assert "paris" in result.text.lower()
    assert not result.estimated
    assert result.prompt_tokens == first.encode_prompt(PROMPT)["input_ids"].shape[1]
    assert 0 < result.completion_tokens <= 24
    converted = model_cache / "models" / "SmolLM2-135M-Instruct"
    assert (converted / "config.json").is_file()
    assert not any(p.name.startswith(".") for p in converted.parent.iterdir())  # no temp left

    second = TransformersLLM(cache_dir=model_cache)
    again = second.complete(PROMPT, max_tokens=24)
    assert again == result  # greedy decoding of the same weights
    # both loads are timed; which is faster depends on the machine (benchmarks/bench_import.py
    # compares them), so only the figures are printed
    assert first.load_seconds is not None and second.load_seconds is not None

    n = 24
    start = time.perf_counter()
    long = second.complete("Write a short paragraph about the city of Paris.", max_tokens=n)
    elapsed = time.perf_counter() - start
    print(
        f"\nSmolLM2-135M-Instruct: first load (GGUF conversion) {first.load_seconds:.1f}s, "
        f"cached reload {second.load_seconds:.1f}s, "
        f"{long.completion_tokens} tokens in {elapsed:.2f}s "
        f"= {long.completion_tokens / elapsed:.1f} tokens/s"
    )


def test_smollm2_through_the_client_with_cache(model_cache: Path, tmp_path: Path) -> None:
    llm = TransformersLLM(cache_dir=model_cache)
    client = LLMClient(llm, cache_dir=tmp_path / "responses", max_tokens=16)
    replies = client.complete_many(["Say hello.", "Name a colour."], show_progress=False)
    assert all(isinstance(r, str) and r for r in replies)
    assert client.usage.calls == 2
    again = LLMClient(llm, cache_dir=tmp_path / "responses", max_tokens=16)
    assert again.complete_many(["Say hello.", "Name a colour."], show_progress=False) == replies
    assert again.usage.cache_hits == 2
    assert again.usage.calls == 0
