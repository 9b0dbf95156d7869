"""BLEU-against-the-rest: exact parity with sacrebleu's multi-reference sentence BLEU."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_integrations.methods.clue.bleu import (
    bleu_against_rest,
    ngram_counts,
    tokenize_13a,
)

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a  # noqa: E402


def reference_scores(texts: list[str]) -> list[float]:
    """The O(N^2) definition: sacrebleu against every other text."""
    return [
        sacrebleu.sentence_bleu(
            texts[i],
            texts[:i] + texts[i + 1 :],
            smooth_method="floor",
            lowercase=True,
            tokenize="13a",
        ).score
        for i in range(len(texts))
    ]


WORDS = ["the", "The", "cat", "sat", "on", "mat", "a", "dog", "3.5", "1-2", "U.S.", "x,y"]
PUNCT = ["", ".", ",", "!", "(", ")", '"', "&amp;", "-", "'s", "$", "\n"]
word = st.builds(lambda w, p: w + p, st.sampled_from(WORDS), st.sampled_from(PUNCT))
sentence = st.lists(word, min_size=0, max_size=14).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(sentence, min_size=2, max_size=7))
def test_parity_with_sacrebleu_on_random_corpora(texts: list[str]) -> None:
    assert bleu_against_rest(texts) == reference_scores(texts)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_tokenizer_matches_sacrebleu_13a(text: str) -> None:
    assert " ".join(tokenize_13a(text)) == Tokenizer13a()(text.lower().rstrip())


@pytest.mark.parametrize(
    "texts",
    [
        # identical chunks: each is a perfect match for the other
        ["The cat sat on the mat.", "The cat sat on the mat."],
        # case-insensitive, shared prefix, one unrelated chunk
        ["The cat sat on the mat", "the cat sat on a mat", "dogs bark"],
        # a chunk holding the largest count must be clipped by the second largest
        ["a a a a b", "a a b", "a b c d e f"],
        # length ties: closest reference length resolves to the shorter one
        ["one two three", "one two", "one two three four", "five"],
        # hypothesis shorter than 4 tokens: effective order
        ["yes", "yes no", "no"],
        # empty and whitespace-only chunks take part as references of length 0
        ["", "   ", "hello world", "hello there world"],
        # 13a punctuation and numbers
        ["It costs $3.50, (roughly).", "it costs 3.50 dollars, roughly", "1-2 U.S. x,y"],
    ],
)
def test_hand_cases(texts: list[str]) -> None:
    assert bleu_against_rest(texts) == reference_scores(texts)


def test_identical_chunks_score_100_and_disjoint_zero() -> None:
    scores = bleu_against_rest(["red green blue yellow", "red green blue yellow", "zzz"])
    assert scores[0] == pytest.approx(100.0)
    assert scores[1] == pytest.approx(100.0)
    assert scores[2] == 0.0


def test_top_count_holder_uses_second_largest() -> None:
    # chunk 0 holds "a" x4; against the rest its clip is 2 (chunk 1), not its own 4
    scores = bleu_against_rest(["a a a a", "a a", "b"])
    expected = reference_scores(["a a a a", "a a", "b"])
    assert scores == expected
    assert 0 < scores[0] < 100


def test_single_and_empty_corpus() -> None:
    assert bleu_against_rest([]) == []
    assert bleu_against_rest(["only one chunk"]) == [0.0]


def test_case_sensitive_option() -> None:
    lower = bleu_against_rest(["Big Cat", "big cat"])
    cased = bleu_against_rest(["Big Cat", "big cat"], lowercase=False)
    assert lower[0] == pytest.approx(100.0)
    assert cased[0] == 0.0


@pytest.mark.parametrize("kwargs", [{"max_order": 0}, {"smooth_value": 0.0}])
def test_rejects_bad_parameters(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        bleu_against_rest(["a", "b"], **kwargs)  # type: ignore[arg-type]


def test_ngram_counts() -> None:
    unigrams, bigrams = ngram_counts(["a", "b", "a", "b"], 2)
    assert unigrams[("a",)] == 2
    assert bigrams[("a", "b")] == 2
    assert bigrams[("b", "a")] == 1
    assert sum(unigrams.values()) == 4 and sum(bigrams.values()) == 3
