"""ConstrainedLogitsProcessor: masking, dead beams, finished rows, and real beam search."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from graphrag_integrations.core.constraints import (  # noqa: E402
    ConstrainedLogitsProcessor,
    DeadBeam,
    SubstringIndex,
    TokenTrie,
)

EOS = 0
NEG_INF = float("-inf")


def test_masks_all_but_allowed_keeping_scores() -> None:
    trie = TokenTrie([[3, 4], [3, 5], [6]], eos_token_id=EOS)
    proc = ConstrainedLogitsProcessor(trie, prompt_length=2, eos_token_id=EOS)
    scores = torch.arange(16, dtype=torch.float32).reshape(2, 8)
    input_ids = torch.tensor([[7, 7, 3], [1, 2, 6]])
    out = proc(input_ids, scores)
    assert torch.isfinite(out).nonzero().tolist() == [[0, 4], [0, 5], [1, 0]]
    assert out[0, 4] == scores[0, 4] and out[0, 5] == scores[0, 5] and out[1, 0] == scores[1, 0]
    assert proc.dead_beams == []


def test_prompt_is_sliced_off() -> None:
    seen: list[tuple[int, ...]] = []

    def allowed(prefix: tuple[int, ...]) -> list[int]:
        seen.append(prefix)
        return [1]

    proc = ConstrainedLogitsProcessor(allowed, prompt_length=3, eos_token_id=EOS)
    proc(torch.tensor([[9, 8, 7, 2, 3], [9, 8, 7, 2, 4]]), torch.zeros(2, 5))
    assert seen == [(2, 3), (2, 4)]
    seen.clear()
    # identical prefixes in several beams call allowed_fn once per step
    proc(torch.tensor([[9, 8, 7], [9, 8, 7]]), torch.zeros(2, 5))
    assert seen == [()]


def test_dead_beam_forces_eos_with_lowest_score_and_is_recorded() -> None:
    trie = TokenTrie([[3, 4]], eos_token_id=EOS)
    proc = ConstrainedLogitsProcessor(trie, prompt_length=1, eos_token_id=EOS)
    scores = torch.randn(2, 6)
    out = proc(torch.tensor([[1, 3], [1, 5]]), scores)
    assert torch.isfinite(out[1]).nonzero().flatten().tolist() == [EOS]
    assert out[1, EOS] == torch.finfo(scores.dtype).min
    assert torch.isfinite(out[0]).nonzero().flatten().tolist() == [4]
    assert proc.dead_beams == [DeadBeam(row=1, generated_ids=(5,))]
    assert proc.is_dead([5, EOS, EOS]) and proc.is_dead((5,))
    assert not proc.is_dead([3, 4, EOS])
    # never "allow all": softmax of a dead row is a certain eos, no NaN
    probs = torch.softmax(out, dim=-1)
    assert not torch.isnan(probs).any() and probs[1, EOS] == 1
    proc.reset()
    assert proc.dead_beams == [] and not proc.is_dead([5])


def test_verdict_replays_allowed_fn() -> None:
    trie = TokenTrie([[3, 4], [3], [5, 6]], eos_token_id=EOS)
    proc = ConstrainedLogitsProcessor(trie, prompt_length=0, eos_token_id=EOS)
    assert proc.verdict([3, 4, EOS, EOS, 7]) == "complete"  # padding after eos is ignored
    assert proc.verdict([3, EOS]) == "complete"
    assert proc.verdict([3, 4]) == "complete"  # beam search may drop the final eos
    assert proc.verdict([5]) == "truncated"
    assert proc.verdict([3, 5]) == "invalid" and proc.verdict([EOS]) == "invalid"
    assert proc.verdict([5, EOS]) == "invalid"
    dead_after_7 = ConstrainedLogitsProcessor(
        lambda p: [7] if p == () else [], prompt_length=0, eos_token_id=EOS
    )
    assert dead_after_7.verdict([7, EOS]) == "dead" and dead_after_7.verdict([7]) == "dead"
    assert dead_after_7.verdict([7, 7]) == "dead"


def test_finished_rows_keep_only_eos_and_are_not_dead() -> None:
    calls: list[tuple[int, ...]] = []

    def allowed(prefix: tuple[int, ...]) -> list[int]:
        calls.append(prefix)
        return []

    proc = ConstrainedLogitsProcessor(allowed, prompt_length=1, eos_token_id=EOS)
    scores = torch.randn(1, 5)
    out = proc(torch.tensor([[2, 3, EOS, 1]]), scores)  # eos then padding
    assert torch.isfinite(out[0]).nonzero().flatten().tolist() == [EOS]
    assert out[0, EOS] == scores[0, EOS]
    assert calls == [] and proc.dead_beams == []


def test_bad_allowed_ids_and_prompt_length_raise() -> None:
    proc = ConstrainedLogitsProcessor(lambda p: [1, 99], prompt_length=0, eos_token_id=EOS)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        proc(torch.tensor([[1]]), torch.zeros(1, 10))
    proc = ConstrainedLogitsProcessor(lambda p: [1], prompt_length=4, eos_token_id=EOS)
    with pytest.raises(ValueError, match="exceeds"):
        proc(torch.tensor([[1, 2]]), torch.zeros(1, 10))
    with pytest.raises(ValueError, match="prompt_length"):
        ConstrainedLogitsProcessor(lambda p: [1], prompt_length=-1, eos_token_id=EOS)


def test_accepts_numpy_arrays_and_keeps_dtype() -> None:
    proc = ConstrainedLogitsProcessor(
        lambda p: np.array([2, 3], dtype=np.uint32), prompt_length=0, eos_token_id=EOS
    )
    out = proc(torch.zeros(1, 0, dtype=torch.long), torch.zeros(1, 4, dtype=torch.float16))
    assert out.dtype == torch.float16
    assert torch.isfinite(out).nonzero().tolist() == [[0, 2], [0, 3]]


def _tiny_gpt2(vocab: int, seed: int) -> Any:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=vocab, n_positions=64, n_embd=32, n_layer=2, n_head=2,
        bos_token_id=1, eos_token_id=EOS, pad_token_id=EOS,
    )  # fmt: skip
    model: Any = GPT2LMHeadModel(config)
    return model.eval()


def _generated(sequences: Any, prompt_length: int) -> list[tuple[int, ...]]:
    out = []
    for row in sequences[:, prompt_length:].tolist():
        out.append(tuple(row[: row.index(EOS)] if EOS in row else row))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beam_search_on_a_random_gpt2_only_produces_trie_entries(seed: int) -> None:
    vocab = 40
    rng = np.random.default_rng(seed)
    entries = {tuple(rng.integers(2, vocab, size=rng.integers(1, 6)).tolist()) for _ in range(30)}
    trie = TokenTrie(entries, eos_token_id=EOS)
    model = _tiny_gpt2(vocab, seed)
    prompt = torch.tensor([rng.integers(2, vocab, size=7).tolist()] * 2)  # batch of 2
    proc = ConstrainedLogitsProcessor(trie, prompt.shape[1], eos_token_id=EOS)
    result = model.generate(
        prompt,
        attention_mask=torch.ones_like(prompt),
        logits_processor=[proc],
        num_beams=4,
        num_return_sequences=4,
        max_new_tokens=trie.stats.max_length + 1,
        do_sample=False,
        output_scores=True,
        return_dict_in_generate=True,
    )
    outputs = _generated(result.sequences, prompt.shape[1])
    assert len(outputs) == 8
    for output, row in zip(outputs, result.sequences[:, prompt.shape[1] :].tolist(), strict=True):
        assert output in trie, output
        assert not proc.is_dead(output) and proc.verdict(row) == "complete"
    # unconstrained, the same model does not stay inside the trie
    free = model.generate(
        prompt[:1], attention_mask=torch.ones_like(prompt[:1]), num_beams=4,
        num_return_sequences=4, max_new_tokens=6, do_sample=False,
    )  # fmt: skip
    assert any(out not in trie for out in _generated(free, prompt.shape[1]))


@pytest.mark.slow
def test_greedy_and_sampling_follow_a_substring_index() -> None:
    vocab = 30
    rng = np.random.default_rng(5)
    relations = [rng.integers(2, vocab, size=12).tolist() for _ in range(4)]
    index = SubstringIndex(relations, terminator_id=EOS, backend="fm")
    model = _tiny_gpt2(vocab, 5)
    prompt = torch.tensor([rng.integers(2, vocab, size=5).tolist()])
    for kwargs in ({"do_sample": False}, {"do_sample": True, "top_k": 0, "temperature": 1.0}):
        proc = ConstrainedLogitsProcessor(index, prompt.shape[1], eos_token_id=EOS)
        torch.manual_seed(0)
        seqs = model.generate(
            prompt, attention_mask=torch.ones_like(prompt), logits_processor=[proc],
            max_new_tokens=8, **kwargs,
        )  # fmt: skip
        (span,) = _generated(seqs, prompt.shape[1])
        assert len(span) > 0 and list(span) in index and proc.dead_beams == []


@pytest.mark.slow
@pytest.mark.parametrize("num_beams", [1, 3])
def test_dead_beam_in_generate_ends_with_eos_and_is_reported(num_beams: int) -> None:
    model = _tiny_gpt2(20, 3)
    prompt = torch.tensor([[4, 5, 6]])

    def allowed(prefix: tuple[int, ...]) -> list[int]:
        return {(): [7, 8], (7,): [9]}.get(prefix, [])  # (8,) and (7, 9) lead nowhere

    proc = ConstrainedLogitsProcessor(allowed, prompt.shape[1], eos_token_id=EOS)
    result = model.generate(
        prompt, attention_mask=torch.ones_like(prompt), logits_processor=[proc],
        num_beams=num_beams, num_return_sequences=num_beams, max_new_tokens=6, do_sample=False,
        output_scores=True, return_dict_in_generate=True,
    )  # fmt: skip
    rows = result.sequences[:, prompt.shape[1] :].tolist()
    verdicts = [proc.verdict(row) for row in rows]
    # nothing complete exists; every hypothesis that followed the constraint died
    assert "dead" in verdicts and set(verdicts) <= {"dead", "invalid"}
    dead = [
        out for out, v in zip(_generated(result.sequences, 3), verdicts, strict=True) if v == "dead"
    ]
    assert all(out in {(8,), (7, 9)} and proc.is_dead(out) for out in dead)
    if num_beams == 1:
        # greedy: the forced eos ends the sequence right after the dead prefix
        assert rows in ([[7, 9, EOS]], [[8, EOS]])
