"""Tests for core.text.chunking: token windows, boundaries, offsets, passages, big inputs."""

from __future__ import annotations

import doctest
import logging
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_integrations.core.encoders.models import resolve_embedding_model
from graphrag_integrations.core.text import chunking
from graphrag_integrations.core.text.chunking import (
    HFOffsetTokenizer,
    TokenChunker,
    as_offset_tokenizer,
    documents_to_passages,
    find_break,
)
from graphrag_integrations.core.text.documents import SourceDocument, load_documents
from graphrag_integrations.testing.word_tokenizer import WordTokenizer


class CharTokenizer:
    """Test tokenizer: every non-space character is one token (words split mid-way)."""

    name = "chars"

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [(i, i + 1) for i, ch in enumerate(text) if not ch.isspace()]


def minilm_tokenizer() -> object:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(resolve_embedding_model(None)) / "tokenizer.json"))
    tok.no_padding()  # the shipped file pads and truncates to 128
    tok.no_truncation()
    return tok


def check_invariants(text: str, chunker: TokenChunker) -> list[chunking.Chunk]:
    chunks = chunker.split(text)
    offsets = chunker.tokenizer.token_offsets(text)
    for c in chunks:
        assert text[c.start_char : c.end_char] == c.text
        assert c.text == c.text.strip() and c.text
        inside = [o for o in offsets if c.start_char <= o[0] and o[1] <= c.end_char]
        assert len(inside) <= chunker.chunk_size
    # every token is covered by some chunk, and chunks advance
    for s, e in offsets:
        assert any(c.start_char <= s and e <= c.end_char for c in chunks)
    assert [c.start_char for c in chunks] == sorted({c.start_char for c in chunks})
    return chunks


def test_doctests() -> None:
    result = doctest.testmod(chunking)
    assert result.attempted > 0
    assert result.failed == 0


# ------------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [
        (0, 0, "chunk_size must be a positive integer"),
        (-5, 0, "chunk_size must be a positive integer"),
        (10, 10, r"chunk_overlap \(10\) must be smaller than chunk_size \(10\)"),
        (10, 20, "must be smaller"),
        (10, -1, "chunk_overlap must be >= 0"),
        (2.5, 0, "chunk_size must be a positive integer"),
    ],
)
def test_validation(size: int, overlap: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TokenChunker(size, overlap, tokenizer=WordTokenizer())


def test_tokenizer_without_offsets_is_rejected() -> None:
    class Slow:
        name_or_path = "slow"

    with pytest.raises(TypeError, match="no character offsets"):
        TokenChunker(tokenizer=Slow())


def test_config_and_repr() -> None:
    chunker = TokenChunker(8, 2, tokenizer=WordTokenizer())
    assert chunker.config == {"chunk_size": 8, "chunk_overlap": 2, "tokenizer": "words"}
    assert "chunk_size=8" in repr(chunker)


# ------------------------------------------------------------------------ find_break


def test_find_break_preference_order() -> None:
    text = "A b. C d\ne f. G h"
    # a line break beats the later sentence end
    assert text[: find_break(text, 0, len(text) - 1)] == "A b. C d"
    assert find_break(text, 9, len(text) - 1) == len("A b. C d\ne f.")
    assert find_break("aaa bbb", 0, 6) == 3
    assert find_break("aaa bbb", 4, 6) is None
    assert find_break("", 0, 5) is None


def test_find_break_sentence_with_closing_quote() -> None:
    text = 'He said "stop." Then left'
    assert text[: find_break(text, 0, len(text) - 1)] == 'He said "stop."'


# ---------------------------------------------------------------------------- split


def test_empty_and_whitespace_give_no_chunks() -> None:
    chunker = TokenChunker(4, 1, tokenizer=WordTokenizer())
    assert chunker.split("") == []
    assert chunker.split(" \n\t ") == []


def test_short_text_is_one_stripped_chunk() -> None:
    chunker = TokenChunker(10, 2, tokenizer=WordTokenizer())
    (c,) = chunker.split("  Just a few words.  ")
    assert (c.text, c.start_char, c.end_char, c.n_tokens) == ("Just a few words.", 2, 19, 4)


def test_prefers_sentence_end_and_overlaps() -> None:
    text = "Alpha beta gamma delta. Epsilon zeta eta theta iota kappa lambda."
    chunker = TokenChunker(6, 2, tokenizer=WordTokenizer())
    chunks = check_invariants(text, chunker)
    assert chunks[0].text == "Alpha beta gamma delta."
    assert chunks[1].text.startswith("gamma delta. Epsilon")  # 2 tokens of overlap
    assert chunks[-1].text.endswith("lambda.")


def test_prefers_paragraph_break() -> None:
    text = "One two three.\n\nFour five. Six seven eight nine ten"
    chunks = TokenChunker(6, 0, tokenizer=WordTokenizer()).split(text)
    assert chunks[0].text == "One two three."
    assert chunks[1].text.startswith("Four five.")


def test_no_overlap_partitions_tokens() -> None:
    text = " ".join(f"w{i}" for i in range(50))
    chunks = check_invariants(text, TokenChunker(7, 0, tokenizer=WordTokenizer()))
    assert sum(c.n_tokens for c in chunks) == 50
    assert " ".join(c.text for c in chunks) == text


def test_no_whitespace_falls_back_to_token_cut(caplog: pytest.LogCaptureFixture) -> None:
    text = "x" * 25
    with caplog.at_level(logging.DEBUG, logger="graphrag_integrations.core.text.chunking"):
        chunks = check_invariants(text, TokenChunker(10, 0, tokenizer=CharTokenizer()))
    assert [len(c.text) for c in chunks] == [10, 10, 5]
    assert "cutting mid-word" in caplog.text


def test_overlap_starts_at_word_boundary() -> None:
    text = "abcdef ghijkl mnopqr stuvwx"
    chunks = check_invariants(text, TokenChunker(10, 4, tokenizer=CharTokenizer()))
    for c in chunks:
        assert c.start_char == 0 or text[c.start_char - 1] == " "


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(["a", "bb", "ccc.", "d!", "e\n", "f\n\n", "gg,", "h?"]),
        max_size=80,
    ),
    size=st.integers(1, 12),
    overlap_frac=st.floats(0, 0.9),
)
def test_invariants_property(words: list[str], size: int, overlap_frac: float) -> None:
    overlap = min(int(size * overlap_frac), size - 1)
    check_invariants(" ".join(words), TokenChunker(size, overlap, tokenizer=WordTokenizer()))


def test_minilm_tokenizer_object_gives_exact_substrings() -> None:
    tok = minilm_tokenizer()
    chunker = TokenChunker(24, 4, tokenizer=tok)
    text = (
        "Marie Skłodowska-Curie was a Polish and naturalised-French physicist.\n\n"
        "She was the first woman to win a Nobel Prize, and the only person to win it in "
        "two sciences. Her husband, Pierre Curie, was a co-winner of her first prize."
    )
    chunks = check_invariants(text, chunker)
    assert len(chunks) >= 3
    assert chunks[0].text == "Marie Skłodowska-Curie was a Polish and naturalised-French physicist."
    counts = [len(tok.encode(c.text, add_special_tokens=False).ids) for c in chunks]
    assert max(counts) <= 24


def test_minilm_backend_copy_has_no_truncation() -> None:
    tok = minilm_tokenizer()
    tok.enable_truncation(8)
    wrapped = HFOffsetTokenizer(tok)
    assert len(wrapped.token_offsets("word " * 50)) == 50
    assert tok.truncation is not None  # the caller's tokenizer is left alone


def test_long_text_tokenised_in_pieces_matches_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    tok = HFOffsetTokenizer(minilm_tokenizer())
    text = "Curie won prizes in Paris and Warsaw. " * 40
    whole = tok.token_offsets(text)
    monkeypatch.setattr(chunking, "TOKENIZE_PIECE_CHARS", 100)
    pieces = tok.token_offsets(text)
    assert pieces == whole


def test_five_megabytes_chunk() -> None:
    # the wall-clock figure is printed by benchmarks/bench_throughput.py (machine-dependent)
    paragraph = "Marie Curie was born in Warsaw. She moved to Paris in 1891 to study.\n\n"
    text = paragraph * (5_000_000 // len(paragraph) + 1)
    chunker = TokenChunker(256, 32, tokenizer=WordTokenizer())
    passages = documents_to_passages([SourceDocument(text, id="big")], chunker)
    assert len(passages) > 5_000_000 // 2_000
    last = passages[-1].metadata
    assert text[last["start_char"] : last["end_char"]] == passages[-1].text
    assert last["end_char"] == len(text.rstrip())


@pytest.mark.slow
def test_five_megabytes_with_default_tokenizer() -> None:
    paragraph = "Marie Curie was born in Warsaw. She moved to Paris in 1891 to study.\n\n"
    text = paragraph * (5_000_000 // len(paragraph) + 1)
    chunker = TokenChunker()
    chunks = chunker.split(text)
    assert all(text[c.start_char : c.end_char] == c.text for c in chunks)
    assert max(c.n_tokens for c in chunks) <= 256
    assert chunks[-1].end_char == len(text.rstrip())


@pytest.mark.slow
def test_default_tokenizer_and_hub_name_path() -> None:
    default = as_offset_tokenizer(None)
    assert default.name == "sentence-transformers/all-MiniLM-L6-v2"
    by_path = as_offset_tokenizer(resolve_embedding_model(None))
    text = "Hello, wonderful world!"
    assert default.token_offsets(text) == by_path.token_offsets(text)
    from transformers import AutoTokenizer

    fast = AutoTokenizer.from_pretrained(resolve_embedding_model(None))
    assert as_offset_tokenizer(fast).token_offsets(text) == default.token_offsets(text)


def test_unloadable_tokenizer_name(tmp_path: Path) -> None:
    from graphrag_integrations.errors import ModelUnavailableError

    with pytest.raises(ModelUnavailableError, match="cannot load tokenizer"):
        TokenChunker(tokenizer=tmp_path / "no-tokenizer-here").split("text")


# ----------------------------------------------------------------------- passages


def test_documents_to_passages_without_chunker() -> None:
    docs = load_documents(["First doc.", SourceDocument("Second.", id="d2", metadata={"a": 1})])
    passages = documents_to_passages(docs)
    assert [p.text for p in passages] == ["First doc.", "Second."]
    p = passages[1]
    assert p.doc_id == "d2"
    assert p.id == "d2#0"
    assert dict(p.metadata) == {"a": 1, "chunk_index": 0, "start_char": 0, "end_char": 7}


def test_documents_to_passages_with_chunker() -> None:
    text = "Alpha beta gamma delta. Epsilon zeta eta theta iota kappa lambda."
    doc = SourceDocument(text, id="doc", metadata={"source": "x.txt"})
    chunker = TokenChunker(6, 2, tokenizer=WordTokenizer())
    passages = documents_to_passages([doc], chunker)
    assert len(passages) == len(chunker.split(text)) >= 2
    for index, p in enumerate(passages):
        meta = p.metadata
        assert meta["chunk_index"] == index
        assert meta["source"] == "x.txt"
        assert text[meta["start_char"] : meta["end_char"]] == p.text
        assert p.id == f"doc#{index}"
        assert p.doc_id == "doc"
    assert len({p.id for p in passages}) == len(passages)
    # stable across runs
    assert [p.id for p in documents_to_passages([doc], chunker)] == [p.id for p in passages]


def test_documents_to_passages_accepts_raw_inputs() -> None:
    passages = documents_to_passages(["Raw text one.", "Raw text one.", "  "])
    assert [p.text for p in passages] == ["Raw text one."]


def test_document_without_tokens_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    class NoTokens:
        name = "none"

        def token_offsets(self, text: str) -> list[tuple[int, int]]:
            return []

    chunker = TokenChunker(4, 1, tokenizer=NoTokens())
    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.core.text.chunking"):
        passages = documents_to_passages([SourceDocument("\x00\x01", id="ctl")], chunker)
    assert passages == []
    assert "document ctl gives no passage" in caplog.text
