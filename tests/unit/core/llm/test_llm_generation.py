"""Batched, beam-search / constrained generation and continuation scoring on a tiny random
Llama (built in a temporary folder, no download), directly and through ``LLMClient``."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import torch

from graphrag_integrations.core.constraints import ConstrainedLogitsProcessor, TokenTrie
from graphrag_integrations.core.llm import LLMClient, LLMResult, TransformersLLM
from graphrag_integrations.errors import ModelUnavailableError
from tests.unit.core.llm.test_llm_transformers import build_tiny_llama

_TEXT = "the a paris france city capital river seine north south east west big small old new"
WORDS = [
    *_TEXT.split(),
    *["is", "of", "in", "on", "and", "to", "by", "for", "with", "from"],
    "<|user|>",
    "<|assistant|>",
]
PROMPTS = [
    "paris",
    "the capital of france",
    "a big old city on the river seine",
    "north south east west and the new small city is big",
    "france",
]


@pytest.fixture(scope="module")
def random_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer random Llama: greedy output depends on the prompt."""
    path = tmp_path_factory.mktemp("random_llama")
    return build_tiny_llama(path, WORDS, zero_head=False, seed=3, layers=2, init_std=0.5)


@pytest.fixture(scope="module")
def llm(random_lm: Path) -> TransformersLLM:
    return TransformersLLM(str(random_lm), max_new_tokens=8)


def ids_of(llm: TransformersLLM, text: str) -> list[int]:
    return llm.encode_continuation(text)


# -- complete_batch ---------------------------------------------------------------------------
@pytest.mark.parametrize("template", [True, False])
def test_batched_greedy_equals_one_at_a_time(random_lm: Path, template: bool) -> None:
    llm = TransformersLLM(str(random_lm), max_new_tokens=10, use_chat_template=template)
    single = [llm.complete(p) for p in PROMPTS]
    batched = llm.complete_batch(PROMPTS)
    assert batched == single
    # the prompts differ in length, so the batch really was padded, and replies differ
    assert len({r.prompt_tokens for r in batched}) >= 4
    assert len({r.text for r in batched}) >= 3
    assert [r.prompt_tokens for r in batched] == [
        int(llm.encode_prompt(p)["input_ids"].shape[1]) for p in PROMPTS
    ]


def test_left_padding_and_mask(llm: TransformersLLM) -> None:
    enc = llm.encode_prompts(["paris", "the capital of france"])
    ids, mask = enc["input_ids"], enc["attention_mask"]
    short = llm.encode_prompt("paris")["input_ids"][0]
    n = short.shape[0]
    assert ids.shape == mask.shape == (2, n + 3)
    assert ids[0, -n:].tolist() == short.tolist()
    assert ids[0, :3].tolist() == [llm.pad_token_id] * 3
    assert mask[0].tolist() == [0, 0, 0] + [1] * n and mask[1].all()
    assert llm.complete_batch([]) == []


def test_batch_counts_tokens_up_to_eos(random_lm: Path) -> None:
    llm = TransformersLLM(str(random_lm), max_new_tokens=6, use_chat_template=False)
    first = llm.complete_batch(["paris"])[0]
    stop = llm.encode_continuation(first.text.split()[0])[0]
    llm.model.generation_config.eos_token_id = stop  # "paris" now stops after one token
    try:
        single = [llm.complete(p) for p in PROMPTS]
        batched = llm.complete_batch(PROMPTS)
    finally:
        llm.model.generation_config.eos_token_id = llm.tokenizer.eos_token_id
    assert batched == single
    assert batched[0].completion_tokens == 1  # the eos is counted, the padding after it not
    assert max(r.completion_tokens for r in batched) > 1


# -- generate ---------------------------------------------------------------------------------
def test_greedy_generate_scores_are_mean_log_probs(llm: TransformersLLM) -> None:
    (result,) = llm.generate("the capital of france", max_tokens=5)
    plain = llm.complete("the capital of france", max_tokens=5)
    assert (result.text, result.completion_tokens) == (plain.text, plain.completion_tokens)
    assert result.token_ids is not None and len(result.token_ids) == 5
    total = llm.score_continuations("the capital of france", [list(result.token_ids)])[0]
    assert result.score == pytest.approx(total / 5, abs=1e-4)


def entity_trie(llm: TransformersLLM) -> tuple[TokenTrie, list[tuple[int, ...]]]:
    names = ["paris", "paris france", "seine river", "big city", "old paris city"]
    entries = [tuple(ids_of(llm, n)) for n in names]
    return TokenTrie(entries, eos_token_id=llm.eos_token_id), entries


def test_constrained_beam_search_returns_trie_entries(llm: TransformersLLM) -> None:
    trie, entries = entity_trie(llm)
    eos = llm.eos_token_id
    made: list[ConstrainedLogitsProcessor] = []

    def factory(prompt_length: int) -> list[Any]:
        made.append(ConstrainedLogitsProcessor(trie, prompt_length, eos_token_id=eos))
        return made[-1:]

    prompt = "the capital of france"
    results = llm.generate(
        prompt, num_beams=4, num_return_sequences=3, max_tokens=5, logits_processors=factory
    )
    assert (
        len(made) == 1 and made[0].prompt_length == llm.encode_prompt(prompt)["input_ids"].shape[1]
    )
    assert len(results) == 3
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    verdicts = [made[0].verdict(r.token_ids or ()) for r in results]
    complete = [r for r, v in zip(results, verdicts, strict=True) if v == "complete"]
    assert len(complete) >= 2
    for r in complete:
        ids = tuple(t for t in r.token_ids or () if t != eos)
        assert ids in entries
        # the beam score is the mean log-probability of the hypothesis, eos included
        n = len(r.token_ids or ())
        total = llm.score_continuations(prompt, [list(r.token_ids or ())])[0]
        assert r.score == pytest.approx(total / n, abs=1e-3)
    # unconstrained, the same search leaves the trie
    free = llm.generate(prompt, num_beams=4, num_return_sequences=3, max_tokens=5)
    assert any(tuple(t for t in r.token_ids or () if t != eos) not in entries for r in free)


def test_generate_rejects_bad_beam_settings(llm: TransformersLLM) -> None:
    with pytest.raises(ValueError, match="num_return_sequences"):
        llm.generate("paris", num_beams=2, num_return_sequences=3)
    with pytest.raises(ValueError, match="num_beams"):
        llm.generate("paris", num_beams=0)


# -- score_continuations ----------------------------------------------------------------------
def manual_score(llm: TransformersLLM, prompt: str, continuation: list[int]) -> float:
    prompt_ids = llm.encode_prompt(prompt)["input_ids"][0].tolist()
    ids = torch.tensor([prompt_ids + continuation])
    with torch.no_grad():
        logprobs = torch.log_softmax(llm.model(input_ids=ids).logits[0].float(), dim=-1)
    n = len(prompt_ids)
    return float(sum(logprobs[n - 1 + i, t] for i, t in enumerate(continuation)))


def test_score_continuations_equals_one_forward_pass_each(llm: TransformersLLM) -> None:
    prompt = "the capital of france is"
    options = ["paris", "the seine river", "a big old city in the north", "france"]
    scores = llm.score_continuations(prompt, options, batch_size=3)  # two batches
    expected = [manual_score(llm, prompt, ids_of(llm, o)) for o in options]
    assert scores == pytest.approx(expected, abs=1e-4)
    assert len(set(scores)) == 4
    as_ids = llm.score_continuations(prompt, [ids_of(llm, o) for o in options])
    assert as_ids == pytest.approx(scores, abs=1e-5)
    _, tokens = llm.score_continuations_with_usage(prompt, options)
    n_prompt = int(llm.encode_prompt(prompt)["input_ids"].shape[1])
    assert tokens == n_prompt + sum(len(ids_of(llm, o)) for o in options)


def test_score_continuations_reads_the_prompt_once(random_lm: Path) -> None:
    fresh = TransformersLLM(str(random_lm))
    widths: list[int] = []
    model = fresh.model
    forward = model.forward

    @functools.wraps(forward)  # keeps forward's signature (the cache keyword is read from it)
    def spy(*args: Any, **kwargs: Any) -> Any:
        widths.append(int(kwargs["input_ids"].shape[1]))
        return forward(*args, **kwargs)

    model.forward = spy
    prompt = "hello world the capital of france is paris hello world"
    options = ["paris", "the seine river", "a big old city in the north", "france", "world"]
    scores = fresh.score_continuations(prompt, options, batch_size=2)  # three batches
    model.forward = forward
    n_prompt = int(fresh.encode_prompt(prompt)["input_ids"].shape[1])
    # one pass over the prompt but its last token, then per batch last token + options only
    assert widths[0] == n_prompt - 1 and len(widths) == 4
    assert all(w <= 1 + max(len(ids_of(fresh, o)) for o in options) for w in widths[1:])
    expected = [manual_score(fresh, prompt, ids_of(fresh, o)) for o in options]
    assert scores == pytest.approx(expected, abs=1e-4)


def test_score_continuations_of_a_one_token_prompt(random_lm: Path) -> None:
    plain = TransformersLLM(str(random_lm), use_chat_template=False)
    assert plain.encode_prompt("paris")["input_ids"].shape[1] == 1  # no prompt cache to share
    options = ["france", "the capital city"]
    expected = [manual_score(plain, "paris", ids_of(plain, o)) for o in options]
    assert plain.score_continuations("paris", options) == pytest.approx(expected, abs=1e-4)


def test_score_continuations_bad_input(llm: TransformersLLM) -> None:
    with pytest.raises(ValueError, match="empty continuation"):
        llm.score_continuations("paris", ["france", ""])
    with pytest.raises(ValueError, match="batch_size"):
        llm.score_continuations("paris", ["france"], batch_size=0)
    assert llm.score_continuations("paris", []) == []


# -- through LLMClient ------------------------------------------------------------------------
class CountingLLM(TransformersLLM):
    """The real model, counting the calls that reach it."""

    calls: int = 0

    def generate(self, prompt: str, **kwargs: Any) -> list[LLMResult]:
        self.calls += 1
        return super().generate(prompt, **kwargs)

    def score_continuations_with_usage(
        self, prompt: str, continuations: Any, *, batch_size: int = 16
    ) -> tuple[list[float], int]:
        self.calls += 1
        return super().score_continuations_with_usage(prompt, continuations)

    def complete_batch(self, prompts: Any, **kwargs: Any) -> list[LLMResult]:
        self.calls += 1
        return super().complete_batch(prompts, **kwargs)


def test_client_constrained_generate_is_cached_with_a_key(random_lm: Path, tmp_path: Path) -> None:
    llm = CountingLLM(str(random_lm), max_new_tokens=5)
    trie, entries = entity_trie(llm)
    client = LLMClient(llm, cache_dir=tmp_path)
    kwargs: dict[str, Any] = {"constraint": trie, "num_beams": 4, "num_return_sequences": 3}
    first = client.generate("the capital of france", constraint_key="entities-v1", **kwargs)
    assert llm.calls == 1 and len(first) == 3
    assert all(r.verdict in {"complete", "dead", "invalid", "truncated"} for r in first)
    complete = [r for r in first if r.verdict == "complete"]
    assert complete and all(
        tuple(t for t in r.token_ids or () if t != llm.eos_token_id) in entries for r in complete
    )
    assert client.usage.calls == 1
    assert client.usage.prompt_tokens == first[0].prompt_tokens
    assert client.usage.completion_tokens == sum(r.completion_tokens for r in first)
    # an identical keyed call is a cache hit: no model call, same results
    again = client.generate("the capital of france", constraint_key="entities-v1", **kwargs)
    assert again == first and llm.calls == 1
    assert client.usage.cache_hits == 1 and client.usage.calls == 1
    # another key, other beams, or no key at all: the model runs
    client.generate("the capital of france", constraint_key="entities-v2", **kwargs)
    client.generate("the capital of france", constraint_key="entities-v1", constraint=trie)
    assert llm.calls == 3
    client.generate("the capital of france", **kwargs)
    client.generate("the capital of france", **kwargs)
    assert llm.calls == 5 and client.usage.cache_hits == 1
    # unconstrained generation is cached without a key
    plain = client.generate("paris", max_tokens=3)
    assert client.generate("paris", max_tokens=3) == plain and llm.calls == 6
    assert plain[0].verdict is None


def test_client_score_continuations_cached_and_counted(random_lm: Path, tmp_path: Path) -> None:
    llm = CountingLLM(str(random_lm))
    options = ["paris", "the seine river"]
    with LLMClient(llm, cache_dir=tmp_path) as client:
        scores = client.score_continuations("capital of france", options)
        assert scores == pytest.approx(llm.score_continuations("capital of france", options))
        n_prompt = int(llm.encode_prompt("capital of france")["input_ids"].shape[1])
        assert client.usage.prompt_tokens == n_prompt + 1 + 3
        assert client.usage.completion_tokens == 0 and client.usage.calls == 1
        calls = llm.calls
        assert client.score_continuations("capital of france", options) == scores
        assert llm.calls == calls and client.usage.cache_hits == 1
        assert client.score_continuations("capital of france", []) == []


def test_client_complete_many_batches_the_real_model(random_lm: Path) -> None:
    llm = CountingLLM(str(random_lm), max_new_tokens=6)
    client = LLMClient(llm, batch_size=2)
    replies = client.complete_many(PROMPTS, show_progress=False)
    assert llm.calls == 3  # 5 prompts, 2 per batch
    assert replies == [
        TransformersLLM(str(random_lm), max_new_tokens=6).complete(p).text for p in PROMPTS
    ]
    assert client.usage.calls == 5
    assert client.usage.prompt_tokens == sum(
        int(llm.encode_prompt(p)["input_ids"].shape[1]) for p in PROMPTS
    )


def test_client_names_what_an_unsupported_model_lacks() -> None:
    from langchain_core.language_models import FakeListChatModel

    client = LLMClient(FakeListChatModel(responses=["x"]))
    with pytest.raises(ModelUnavailableError, match=r"`generate`.*FakeListChatModel|generate"):
        client.generate("q", num_beams=2, num_return_sequences=2)
    with pytest.raises(ModelUnavailableError, match="score_continuations"):
        client.score_continuations("q", ["a", "b"])
    assert client.usage.calls == 0


# -- generate_many ----------------------------------------------------------------------------
PREFIXES = ["", "paris", "the big old city of", "north south"]


def row_trie(llm: TransformersLLM, names: list[str]) -> TokenTrie:
    return TokenTrie([tuple(ids_of(llm, n)) for n in names], eos_token_id=llm.eos_token_id)


ROW_NAMES = [
    ["paris", "paris france", "big city"],
    ["seine river", "old paris city"],
    ["the capital", "the north of france", "a river"],
    ["west", "east and west", "small city"],
]


@pytest.mark.parametrize("num_beams", [1, 3])
@pytest.mark.parametrize("reuse", [True, False])
@pytest.mark.parametrize("constrained", [True, False])
def test_generate_many_equals_per_row_generate(
    llm: TransformersLLM, num_beams: int, reuse: bool, constrained: bool
) -> None:
    prompt = "the capital of france"
    prefixes = [ids_of(llm, p) if p else [] for p in PREFIXES]
    eos = llm.eos_token_id
    tries = [row_trie(llm, names) for names in ROW_NAMES]

    def factory(i: int) -> Any:
        if not constrained:
            return None
        return lambda n: [ConstrainedLogitsProcessor(tries[i], n, eos_token_id=eos)]

    kwargs: dict[str, Any] = {"num_beams": num_beams, "num_return_sequences": num_beams}
    single = [
        llm.generate(prompt, prefix=p, logits_processors=factory(i), **kwargs)
        for i, p in enumerate(prefixes)
    ]
    many = llm.generate_many(
        prompt,
        prefixes,
        logits_processors=[factory(i) for i in range(len(prefixes))],
        reuse_prompt_cache=reuse,
        **kwargs,
    )
    assert len(many) == len(prefixes)
    for s, m in zip(single, many, strict=True):
        assert [r.token_ids for r in m] == [r.token_ids for r in s]
        assert [r.text for r in m] == [r.text for r in s]
        assert [r.prompt_tokens for r in m] == [r.prompt_tokens for r in s]
        assert [r.score for r in m] == pytest.approx([r.score for r in s], abs=1e-4)
    # the rows really differ (prefixes of different lengths, their own continuations)
    assert len({r.prompt_tokens for row in many for r in row}) == len(prefixes)
    assert len({row[0].token_ids for row in many}) >= 3
    if constrained:  # each row stays inside its own trie, not its neighbours'
        for i, row in enumerate(many):
            ids = tuple(t for t in row[0].token_ids or () if t != eos)
            assert ids in {tuple(ids_of(llm, n)) for n in ROW_NAMES[i]}


def test_generate_many_encodes_the_shared_prompt_once(llm: TransformersLLM) -> None:
    prompt = "a big old city on the river seine"
    n_prompt = int(llm.encode_prompt(prompt)["input_ids"].shape[1])
    prefixes = [ids_of(llm, "paris"), ids_of(llm, "the big old city of")]
    seen: list[tuple[int, int]] = []

    def hook(_module: Any, args: Any, kwargs: Any) -> None:
        ids = kwargs.get("input_ids")
        if ids is not None:
            seen.append(tuple(ids.shape))

    handle = llm.model.model.register_forward_pre_hook(hook, with_kwargs=True)
    llm._kept_prompt.clear()  # other tests' prompts share the chat template's first tokens
    try:
        llm.generate_many(prompt, prefixes, num_beams=2, num_return_sequences=2, max_tokens=3)
        first = list(seen)
        seen.clear()
        llm.generate_many(prompt, prefixes, num_beams=2, num_return_sequences=2, max_tokens=3)
        second = list(seen)
        seen.clear()
        llm.generate_many(
            prompt,
            prefixes,
            num_beams=2,
            num_return_sequences=2,
            max_tokens=3,
            reuse_prompt_cache=False,
        )
        plain = list(seen)
    finally:
        handle.remove()
    tail = 1 + max(len(p) for p in prefixes)  # the prompt's last token + the longest prefix
    # the prompt (but its last token) once, the tails (but their last token) once per row,
    # then the last column of the 2 x 2 beam rows
    assert first[:3] == [(1, n_prompt - 1), (2, tail - 1), (4, 1)]
    assert second[:2] == [(2, tail - 1), (4, 1)]  # the kept prompt cache: no prompt pass
    # without reuse every row reads everything (the pruned beam loop: once per row, not beam)
    assert plain[0] == (2, n_prompt - 1 + tail)


def test_a_prompt_sharing_the_kept_prompts_start_encodes_only_the_rest(
    llm: TransformersLLM,
) -> None:
    """Prompts with a fixed instruction before the query: the instruction is read once."""
    fixed = "north south east west and the new small city is big . "
    prefixes = [ids_of(llm, "paris"), ids_of(llm, "the big old city of")]
    kwargs: dict[str, Any] = {"num_beams": 2, "num_return_sequences": 2, "max_tokens": 3}
    first_ids = llm.encode_prompt(fixed + "paris")["input_ids"][0].tolist()
    second_ids = llm.encode_prompt(fixed + "the capital of france")["input_ids"][0].tolist()
    common = 0
    while first_ids[common] == second_ids[common]:
        common += 1
    assert common > 5
    seen: list[tuple[int, int]] = []

    def hook(_module: Any, args: Any, kwargs: Any) -> None:
        ids = kwargs.get("input_ids")
        if ids is not None:
            seen.append(tuple(ids.shape))

    llm._kept_prompt.clear()
    llm.generate_many(fixed + "paris", prefixes, **kwargs)
    handle = llm.model.model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        shared = llm.generate_many(fixed + "the capital of france", prefixes, **kwargs)
    finally:
        handle.remove()
    assert seen[0] == (1, len(second_ids) - 1 - common)  # only the tokens after the common start
    llm._kept_prompt.clear()  # the same call from scratch: the same hypotheses
    fresh = llm.generate_many(fixed + "the capital of france", prefixes, **kwargs)
    for a, b in zip(shared, fresh, strict=True):
        assert [r.token_ids for r in a] == [r.token_ids for r in b]
        assert [r.score for r in a] == pytest.approx([r.score for r in b], abs=1e-4)
    # a prompt that is a prefix of the kept one needs no model call for its cache
    seen.clear()
    handle = llm.model.model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        llm._prompt_cache(second_ids[: common - 1], 1)
    finally:
        handle.remove()
    assert seen == []


def test_client_generate_many_caches_rows_and_checks_input(random_lm: Path, tmp_path: Path) -> None:
    class CountingRows(TransformersLLM):
        rows: int = 0

        def generate_many(self, prompt: str, prefixes: Any, **kwargs: Any) -> Any:
            self.rows += len(prefixes)
            return super().generate_many(prompt, prefixes, **kwargs)

    llm = CountingRows(str(random_lm), max_new_tokens=5)
    tries = [row_trie(llm, names) for names in ROW_NAMES]
    prefixes = [ids_of(llm, p) if p else [] for p in PREFIXES]
    client = LLMClient(llm, cache_dir=tmp_path)
    kwargs: dict[str, Any] = {"num_beams": 3, "num_return_sequences": 2}
    keys = [f"trie-{i}" for i in range(4)]
    first = client.generate_many(
        "the capital of france",
        prefixes=prefixes,
        constraints=tries,
        constraint_keys=keys,
        **kwargs,
    )
    assert llm.rows == 4 and [len(r) for r in first] == [2, 2, 2, 2]
    for i, row in enumerate(first):
        judge = ConstrainedLogitsProcessor(tries[i], 0, eos_token_id=llm.eos_token_id)
        assert [r.verdict for r in row] == [judge.verdict(r.token_ids or ()) for r in row]
        assert any(r.verdict == "complete" for r in row)
    # usage as if each row were one generate call
    assert client.usage.calls == 4
    assert client.usage.prompt_tokens == sum(row[0].prompt_tokens for row in first)
    assert client.usage.completion_tokens == sum(r.completion_tokens for row in first for r in row)
    # rows 0 and 2 cached; a new key for row 1 and an unkeyed row 3 reach the model
    again = client.generate_many(
        "the capital of france",
        prefixes=prefixes,
        constraints=tries,
        constraint_keys=[keys[0], "other", keys[2], None],
        **kwargs,
    )
    assert llm.rows == 6 and client.usage.cache_hits == 2
    assert again[0] == first[0] and again[2] == first[2]
    assert [r.token_ids for r in again[1]] == [r.token_ids for r in first[1]]
    # a row with an empty prefix shares the equivalent generate call's cache entry
    single = client.generate(
        "the capital of france", constraint=tries[0], constraint_key=keys[0], **kwargs
    )
    assert single == first[0] and llm.rows == 6 and client.usage.cache_hits == 3
    with pytest.raises(ValueError, match="as many constraints"):
        client.generate_many("q", prefixes=[[], []], constraints=[tries[0]])
    assert client.generate_many("q", prefixes=[]) == []


def test_generate_many_rejects_bad_input(llm: TransformersLLM) -> None:
    from graphrag_integrations.core.llm.beam_generation import RowDispatchProcessor

    with pytest.raises(ValueError, match="logits_processors"):
        llm.generate_many("paris", [[], []], logits_processors=[None])
    with pytest.raises(ValueError, match="num_return_sequences"):
        llm.generate_many("paris", [[]], num_beams=2, num_return_sequences=3)
    assert llm.generate_many("paris", []) == []
    with pytest.raises(ValueError, match="score rows"):
        RowDispatchProcessor([[], []], num_beams=2)(torch.zeros(3, 1), torch.zeros(3, 4))
    with pytest.raises(ModelUnavailableError, match="generate_many"):
        LLMClient(lambda p: "x").generate_many("q", prefixes=[[]])


def test_generate_many_early_stopping_decodes_fewer_steps(llm: TransformersLLM) -> None:
    prefixes = [ids_of(llm, p) if p else [] for p in PREFIXES]
    eos = llm.eos_token_id
    tries = [row_trie(llm, names) for names in ROW_NAMES]

    def factory(trie: TokenTrie) -> Any:
        return lambda n: [ConstrainedLogitsProcessor(trie, n, eos_token_id=eos)]

    factories = [factory(t) for t in tries]
    passes: list[int] = []
    handle = llm.model.model.register_forward_pre_hook(
        lambda _m, _a, kwargs: passes.append(1), with_kwargs=True
    )
    runs = {}
    try:
        for early in (False, True):
            passes.clear()
            rows = llm.generate_many(
                "the capital of france", prefixes, num_beams=2, num_return_sequences=2,
                logits_processors=factories, early_stopping=early,
            )  # fmt: skip
            runs[early] = (len(passes), rows)
    finally:
        handle.remove()
    # every row has its 2 finished hypotheses before the length heuristic would stop
    assert runs[True][0] < runs[False][0]
    for i, row in enumerate(runs[True][1]):
        assert len(row) == 2
        for hyp in row:  # still inside the row's constraint, closed by eos
            ids = tuple(hyp.token_ids or ())
            assert ids[-1] == eos and ids[:-1] in {tuple(ids_of(llm, n)) for n in ROW_NAMES[i]}


def test_client_early_stopping_is_part_of_the_cache_key(random_lm: Path, tmp_path: Path) -> None:
    seen: list[bool] = []

    class Spy(TransformersLLM):
        def generate_many(self, prompt: str, prefixes: Any, **kwargs: Any) -> Any:
            seen.append(bool(kwargs.get("early_stopping", False)))
            return super().generate_many(prompt, prefixes, **kwargs)

    llm = Spy(str(random_lm), max_new_tokens=5)
    client = LLMClient(llm, cache_dir=tmp_path)
    trie = row_trie(llm, ROW_NAMES[0])
    kwargs: dict[str, Any] = {"constraints": [trie], "constraint_keys": ["t"], "num_beams": 2}
    client.generate_many("paris", prefixes=[[]], **kwargs)
    client.generate_many("paris", prefixes=[[]], early_stopping=True, **kwargs)  # not a hit
    client.generate_many("paris", prefixes=[[]], early_stopping=True, **kwargs)  # a hit
    client.generate_many("paris", prefixes=[[]], **kwargs)  # a hit
    assert seen == [False, True] and client.usage.cache_hits == 2
