"""Clue-RAG chunk selection: budget, values, knapsack optimality and validation."""

from __future__ import annotations

import itertools
import logging
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_integrations.errors import EmptyCorpusError
from graphrag_integrations.methods.clue.bleu import bleu_against_rest
from graphrag_integrations.methods.clue.selection import (
    SelectionResult,
    mean_cosine_to_rest,
    select_chunks,
    token_budget,
)

CORPUS = [
    "The European Cup was won by Nottingham Forest in the 1979-80 season.",
    "Nottingham Forest won the European Cup in the 1979-80 season.",
    "Chelsea F.C. won the FA Cup in 1970.",
    "Ophrys apifera is a hardy orchid that blooms from mid-April to July.",
    "The Journal of Mathematical Physics is published monthly.",
]
TOKENS = [14, 12, 9, 15, 9]


def best_subset_value(values: list[float], weights: list[int], budget: int) -> float:
    best = 0.0
    for mask in itertools.product([0, 1], repeat=len(values)):
        if sum(w for w, m in zip(weights, mask, strict=True) if m) <= budget:
            best = max(best, sum(max(v, 0.0) for v, m in zip(values, mask, strict=True) if m))
    return best


@pytest.mark.parametrize(
    ("alpha", "total", "expected"),
    [(0.0, 59, 0), (0.5, 59, 30), (0.1, 30, 3), (0.3, 10, 3), (1.0, 59, 59), (0.01, 7, 1)],
)
def test_token_budget_is_ceiling(alpha: float, total: int, expected: int) -> None:
    assert token_budget(alpha, total) == expected


@pytest.mark.parametrize("alpha", [-0.01, 1.01, float("nan"), "0.5", True, None])
def test_alpha_outside_unit_interval_rejected(alpha: object) -> None:
    with pytest.raises(ValueError):
        select_chunks(CORPUS, TOKENS, alpha)  # type: ignore[arg-type]


def test_alpha_zero_selects_nothing_and_one_selects_everything() -> None:
    none = select_chunks(CORPUS, TOKENS, 0.0)
    assert none.selected == [] and none.budget == 0 and none.selected_tokens == 0
    everything = select_chunks(CORPUS, TOKENS, 1.0)
    assert everything.selected == [0, 1, 2, 3, 4]
    assert everything.selected_tokens == everything.total_tokens == sum(TOKENS)


def test_zero_token_chunks_free_except_at_alpha_zero() -> None:
    assert select_chunks(["", "text here"], [0, 2], 0.0).selected == []
    assert select_chunks(["", "text here"], [0, 2], 0.01).selected == [0]
    assert select_chunks(["", ""], [0, 0], 1.0).selected == [0, 1]


def test_most_corpus_similar_chunks_are_selected() -> None:
    result = select_chunks(CORPUS, TOKENS, 0.25)
    assert result.budget == math.ceil(0.25 * sum(TOKENS))
    # the two near-duplicate Forest chunks are the most similar to the rest; one fits
    assert result.selected in ([0], [1])
    assert result.values == bleu_against_rest(CORPUS)
    assert result.selected_tokens <= result.budget


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(list("abcdefg")), min_size=1, max_size=8).map(" ".join),
        min_size=1,
        max_size=8,
    ),
    st.floats(0, 1),
    st.data(),
)
def test_selection_is_optimal_knapsack_on_small_corpora(
    texts: list[str], alpha: float, data: st.DataObject
) -> None:
    tokens = data.draw(st.lists(st.integers(0, 12), min_size=len(texts), max_size=len(texts)))
    result = select_chunks(texts, tokens, alpha)
    assert result.budget == token_budget(alpha, sum(tokens))
    assert result.selected_tokens == sum(tokens[i] for i in result.selected) <= result.budget
    if alpha == 0:
        assert result.selected == []
    else:
        expected = best_subset_value(result.values, tokens, result.budget)
        assert result.selected_value == pytest.approx(expected)


def test_mean_cosine_matches_pairwise_definition() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(9, 5))
    matrix[3] = 0.0  # a zero row scores 0 and does not count as similar
    unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-30)
    sims = unit @ unit.T
    expected = [(sims[i].sum() - sims[i, i]) / 8 for i in range(9)]
    assert mean_cosine_to_rest(matrix) == pytest.approx(expected, abs=1e-6)
    assert mean_cosine_to_rest(matrix[:1]) == [0.0]


def test_cosine_value_selects_the_central_chunks() -> None:
    embeddings = np.array([[1.0, 0.0], [0.9, 0.1], [0.95, 0.05], [-1.0, 0.0]])
    result = select_chunks(
        ["a", "b", "c", "d"], [1, 1, 1, 1], 0.5, value="cosine", embeddings=embeddings
    )
    assert result.value_kind == "cosine"
    assert result.values[3] < 0
    # equal weights, budget 2: the two largest mean cosines, never the outlier
    assert result.selected == sorted(int(i) for i in np.argsort(result.values)[-2:])
    assert 3 not in result.selected


def test_negative_cosine_chunks_still_selected_when_everything_fits() -> None:
    embeddings = np.array([[1.0, 0.0], [1.0, 0.1], [-1.0, 0.0]])
    result = select_chunks(["a", "b", "c"], [1, 1, 1], 1.0, value="cosine", embeddings=embeddings)
    assert result.selected == [0, 1, 2]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"value": "cosine"}, "needs embeddings"),
        ({"value": "cosine", "embeddings": np.zeros((2, 3))}, "shape"),
        ({"value": "rouge"}, "bleu"),
    ],
)
def test_value_errors(kwargs: dict[str, object], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        select_chunks(CORPUS, TOKENS, 0.5, **kwargs)  # type: ignore[arg-type]


def test_token_count_errors_and_empty_corpus() -> None:
    with pytest.raises(ValueError, match="token counts"):
        select_chunks(CORPUS, TOKENS[:-1], 0.5)
    with pytest.raises(ValueError, match="non-negative"):
        select_chunks(CORPUS, [*TOKENS[:-1], -1], 0.5)
    with pytest.raises(ValueError, match="non-negative"):
        select_chunks(CORPUS, [*TOKENS[:-1], 2.5], 0.5)  # type: ignore[list-item]
    with pytest.raises(EmptyCorpusError):
        select_chunks([], [], 0.5)


def test_logs_a_summary(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="graphrag_integrations.methods.clue.selection"):
        result = select_chunks(CORPUS, TOKENS, 0.5)
    assert isinstance(result, SelectionResult)
    assert f"{len(result.selected)}/5 chunks" in caplog.text


@pytest.mark.slow
def test_cosine_with_real_embedder() -> None:
    from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    result = select_chunks(CORPUS, TOKENS, 0.3, value="cosine", embeddings=embedder)
    expected = mean_cosine_to_rest(embedder.embed(CORPUS))
    assert result.values == pytest.approx(expected, abs=1e-5)
    assert result.selected_tokens <= result.budget
    # the two paraphrased Forest chunks are the most central ones
    assert set(result.selected) & {0, 1}
