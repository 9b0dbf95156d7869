"""``core.llm.beam_search``: transformers' beam search, settled rows dropped from the batch.

Parity: on a real (random, tiny) Llama, the pruned loop returns the hypotheses and scores of
``model.generate`` (``beam_loop="transformers"``) - plain and constrained rows, with and
without early stopping, one prompt and the batched ``generate_many`` path - while computing
fewer beam rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from graphrag_integrations.core.constraints import ConstrainedLogitsProcessor, TokenTrie
from graphrag_integrations.core.llm import TransformersLLM
from graphrag_integrations.core.llm.beam_search import beam_search
from tests.unit.core.llm.test_llm_generation import PREFIXES, ROW_NAMES, WORDS, ids_of
from tests.unit.core.llm.test_llm_transformers import build_tiny_llama


@pytest.fixture(scope="module")
def lm_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("beam_llama")
    return build_tiny_llama(path, WORDS, zero_head=False, seed=5, layers=2, init_std=0.5)


@pytest.fixture(scope="module")
def pair(lm_path: Path) -> tuple[TransformersLLM, TransformersLLM]:
    pruned = TransformersLLM(str(lm_path), max_new_tokens=7)
    reference = TransformersLLM(str(lm_path), max_new_tokens=7, beam_loop="transformers")
    return pruned, reference


def tries(llm: TransformersLLM) -> list[TokenTrie]:
    return [
        TokenTrie([tuple(ids_of(llm, n)) for n in names], eos_token_id=llm.eos_token_id)
        for names in ROW_NAMES
    ]


def assert_same(got: list[Any], want: list[Any]) -> None:
    """Same hypotheses, scores and counts; only hypotheses of EQUAL score (the filler ones
    transformers scores ``-1e9 / length``) may come in another order (tie-breaking of topk)."""
    assert len(got) == len(want)
    for g_row, w_row in zip(got, want, strict=True):
        assert [r.score for r in g_row] == pytest.approx(
            [r.score for r in w_row], rel=1e-4, abs=1e-4
        )

        def key(r: Any) -> tuple[Any, ...]:
            return (
                round(r.score or 0.0, 2),
                r.token_ids,
                r.text,
                r.prompt_tokens,
                r.completion_tokens,
            )

        assert [key(r) for r in g_row if (r.score or 0) > -1e6] == [
            key(r) for r in w_row if (r.score or 0) > -1e6
        ]
        assert sorted(map(key, g_row)) == sorted(map(key, w_row))


@pytest.mark.parametrize("early_stopping", [False, True])
@pytest.mark.parametrize("constrained", [False, True])
@pytest.mark.parametrize("num_beams", [2, 4])
def test_generate_many_matches_transformers(
    pair: tuple[TransformersLLM, TransformersLLM],
    early_stopping: bool,
    constrained: bool,
    num_beams: int,
) -> None:
    pruned, reference = pair
    prefixes = [ids_of(pruned, p) if p else [] for p in PREFIXES]
    eos = pruned.eos_token_id
    row_tries = tries(pruned)

    def factories() -> list[Any] | None:
        if not constrained:
            return None
        return [
            (lambda n, t=t: [ConstrainedLogitsProcessor(t, n, eos_token_id=eos)]) for t in row_tries
        ]

    kwargs: dict[str, Any] = {
        "num_beams": num_beams,
        "num_return_sequences": num_beams,
        "early_stopping": early_stopping,
    }
    want = reference.generate_many(
        "the capital of france", prefixes, logits_processors=factories(), **kwargs
    )
    got = pruned.generate_many(
        "the capital of france", prefixes, logits_processors=factories(), **kwargs
    )
    assert_same(got, want)


@pytest.mark.parametrize("prompt", ["paris", "a big old city on the river seine"])
def test_single_prompt_generate_matches_transformers(
    pair: tuple[TransformersLLM, TransformersLLM], prompt: str
) -> None:
    pruned, reference = pair
    trie = tries(pruned)[2]
    eos = pruned.eos_token_id
    for factory in (None, lambda n: [ConstrainedLogitsProcessor(trie, n, eos_token_id=eos)]):
        want = reference.generate(
            prompt, num_beams=3, num_return_sequences=3, logits_processors=factory
        )
        got = pruned.generate(
            prompt, num_beams=3, num_return_sequences=3, logits_processors=factory
        )
        assert_same([got], [want])


def _toy_forward(table: torch.Tensor) -> Any:
    """A context-free "model": the next-token log-probs depend only on the last token."""

    def forward(ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor, cache: Any) -> Any:
        assert mask.shape[0] == ids.shape[0] == pos.shape[0]
        cache = cache if cache is not None else _ToyCache(ids.shape[0])
        cache.check(ids.shape[0])
        return table[ids[:, -1]].clone(), cache

    return forward


class _ToyCache:
    """Tracks the batch size the loop believes the cache has."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.calls: list[int] = []

    def check(self, rows: int) -> None:
        assert rows == self.rows

    def get_seq_length(self) -> int:
        return 0

    def batch_repeat_interleave(self, n: int) -> None:
        self.rows *= n

    def reorder_cache(self, index: torch.Tensor) -> None:
        assert int(index.max()) < self.rows
        self.rows = int(index.numel())
        self.calls.append(self.rows)


def test_settled_rows_leave_the_batch() -> None:
    # token 0 = eos; from token 1 the model is sure to stop, from token 2 it rambles
    logp = torch.log(
        torch.tensor(
            [
                [0.90, 0.05, 0.05],  # after eos (never read)
                [0.98, 0.01, 0.01],  # after 1: eos
                [0.02, 0.49, 0.49],  # after 2: anything but eos
            ]
        )
    )
    ids = torch.tensor([[1], [2]])
    out = beam_search(
        _toy_forward(logp), ids, torch.ones_like(ids), num_beams=2, max_new_tokens=6,
        eos_token_ids=[0], pad_token_id=0, early_stopping=True,
    )  # fmt: skip
    assert out.hypotheses[0][0] == ([0], pytest.approx(float(logp[1, 0])))
    # the sure row settles after a few steps, the rambling one runs to the limit
    assert out.settled_at[0] < out.settled_at[1]
    assert out.row_steps < 2 * 2 * out.steps  # fewer than rows x beams x steps
    for hyps in out.hypotheses:
        assert len(hyps) == 2 and hyps[0][1] >= hyps[1][1]


def test_bad_input() -> None:
    fwd = _toy_forward(torch.zeros(3, 3))
    ids = torch.tensor([[1]])
    with pytest.raises(ValueError, match="num_beams"):
        beam_search(fwd, ids, ids, num_beams=0, max_new_tokens=2, eos_token_ids=[0], pad_token_id=0)
    with pytest.raises(ValueError, match="max_new_tokens"):
        beam_search(fwd, ids, ids, num_beams=2, max_new_tokens=0, eos_token_ids=[0], pad_token_id=0)
    with pytest.raises(ValueError, match="same"):
        beam_search(
            fwd, ids, torch.ones(1, 2, dtype=torch.long), num_beams=2, max_new_tokens=2,
            eos_token_ids=[0], pad_token_id=0,
        )  # fmt: skip
    with pytest.raises(ValueError, match="processor lists"):
        beam_search(
            fwd, ids, ids, num_beams=2, max_new_tokens=2, eos_token_ids=[0], pad_token_id=0,
            processors=[[], []],
        )  # fmt: skip
    with pytest.raises(ValueError, match="beam_loop"):
        TransformersLLM("x", beam_loop="fast")
