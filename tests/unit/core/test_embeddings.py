"""SentenceTransformerEmbedder batching: order restored, batches sized by length in word pieces."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.encoders.embeddings import (
    SentenceTransformerEmbedder,
    as_embedder,
    length_batches,
)
from graphrag_integrations.core.encoders.models import resolve_embedding_model


class RecordingModel:
    """Stands in for a SentenceTransformer: a vector derived from each text, batches recorded."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def encode(self, texts: list[str], **kwargs: Any) -> np.ndarray:
        self.batches.append(list(texts))
        out = np.zeros((len(texts), 4), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = [len(text), sum(map(ord, text)) % 97, 1.0, len(set(text))]
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def get_embedding_dimension(self) -> int:
        return 4


def embedder(batch_size: int) -> tuple[SentenceTransformerEmbedder, RecordingModel]:
    model = RecordingModel()
    emb = SentenceTransformerEmbedder.from_model(model, batch_size=batch_size)
    return emb, model


def test_rows_come_back_in_input_order() -> None:
    texts = ["a much longer text " * 5, "b", "cc", "a much longer text " * 2, "d" * 7]
    emb, model = embedder(batch_size=2)
    out = emb.embed(texts)
    for row, text in enumerate(texts):
        single = RecordingModel().encode([text])[0]
        assert np.allclose(out[row], single)
    assert sorted(t for b in model.batches for t in b) == sorted(texts)


def test_short_texts_share_large_batches_long_ones_keep_batch_size() -> None:
    short = [f"e{i}" for i in range(100)]
    long = ["x" * 2000 for _ in range(10)]
    emb, model = embedder(batch_size=4)
    emb.embed(long + short)
    sizes = [len(b) for b in model.batches]
    assert max(sizes) == 4 * 8  # short names: up to 8 x batch_size per batch
    assert all(len(b) == 4 or b is model.batches[-1] for b in model.batches if "x" in b[0])
    assert sum(sizes) == 110


def test_empty_input_and_dimension() -> None:
    emb, _ = embedder(batch_size=4)
    assert emb.embed([]).shape == (0, 4)
    assert emb.dimension == 4
    assert as_embedder(emb) is emb


class ThreadRecordingModel(RecordingModel):
    """Also records which thread encoded each batch, and can fail on a given text."""

    def __init__(self, fail_on: str | None = None) -> None:
        super().__init__()
        self.threads: set[str] = set()
        self.fail_on = fail_on

    def encode(self, texts: list[str], **kwargs: Any) -> np.ndarray:
        import threading

        self.threads.add(threading.current_thread().name)
        if self.fail_on in texts:
            raise RuntimeError(f"cannot encode {self.fail_on!r}")
        return super().encode(texts, **kwargs)


def test_concurrent_workers_give_the_same_rows_as_one_worker() -> None:
    texts = [f"text number {i} " * (1 + i % 7) for i in range(57)]
    results = {}
    for workers in (1, 3):
        model = ThreadRecordingModel()
        emb = SentenceTransformerEmbedder.from_model(model, batch_size=2, workers=workers)
        results[workers] = emb.embed(texts)
        assert sorted(t for b in model.batches for t in b) == sorted(texts)
        if workers == 1:
            assert model.threads == {"MainThread"}
        else:
            assert any(name.startswith("embed") for name in model.threads)
    assert np.array_equal(results[1], results[3])


def test_a_failing_batch_raises_from_embed() -> None:
    texts = [f"t{i}" for i in range(40)]
    emb = SentenceTransformerEmbedder.from_model(
        ThreadRecordingModel(fail_on="t33"), batch_size=1, workers=2
    )
    with pytest.raises(RuntimeError, match="t33"):
        emb.embed(texts)


@pytest.mark.parametrize("kwargs", [{"workers": 0}, {"batch_size": 0}])
def test_bad_settings_are_rejected(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        SentenceTransformerEmbedder("unused", **kwargs)


def test_from_model_keeps_the_loaded_model_and_names_it() -> None:
    model = RecordingModel()
    named = SentenceTransformerEmbedder.from_model(model, model_name="my-model")
    assert named.model is model and named.model_name == "my-model"
    assert SentenceTransformerEmbedder.from_model(model).model_name == "RecordingModel"


def test_as_embedder_wraps_a_loaded_sentence_transformer_without_reloading() -> None:
    class SentenceTransformer(RecordingModel):  # what as_embedder recognises by name
        class tokenizer:  # mirrors the attribute of the real model
            name_or_path = "/models/minilm"

    model = SentenceTransformer()
    emb = as_embedder(model)
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert emb.model is model and emb.model_name == "/models/minilm"
    assert emb.embed(["abc"]).shape == (1, 4)


@pytest.mark.parametrize(
    ("min_count", "max_count", "budget"), [(1, 1, 10), (2, 5, 12), (3, 8, 40), (4, 4, 1)]
)
def test_length_batches_cover_every_position_in_length_order(
    min_count: int, max_count: int, budget: int
) -> None:
    lengths = [7, 1, 3, 3, 9, 1, 2, 5, 5, 5, 2, 8, 1]
    batches = length_batches(lengths, min_count=min_count, max_count=max_count, budget=budget)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths)
    for batch in batches:
        assert len(batch) <= max_count
        padded = len(batch) * max(lengths[i] for i in batch)
        assert len(batch) <= min_count or padded <= budget
    assert all(len(b) >= min(min_count, max_count) for b in batches[:-1])


class TokenizingModel(RecordingModel):
    """A recording model with MiniLM's real tokenizer, as a SentenceTransformer has."""

    max_seq_length = 16

    def __init__(self) -> None:
        super().__init__()
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(resolve_embedding_model(None))


def test_batches_group_texts_by_word_pieces_not_characters() -> None:
    # Long words are one word piece, short letters with spaces many: the character order
    # (5 < 10 < 17) is not the word-piece order (3 < 5 < 11 with [CLS] and [SEP]).
    texts = ["a b c d e f g h i", "university", "a b c", "government", "x y z"] * 5
    model = TokenizingModel()
    emb = SentenceTransformerEmbedder.from_model(model, batch_size=2, workers=1)
    out = emb.embed(texts)
    pieces = {t: len(model.tokenizer(t)["input_ids"]) for t in texts}
    assert sorted(set(pieces.values())) == [3, 5, 11]
    seen = [pieces[t] for batch in model.batches for t in batch]
    assert seen == sorted(seen)
    for row, text in enumerate(texts):
        assert np.allclose(out[row], RecordingModel().encode([text])[0])


def test_lengths_are_cut_at_the_models_truncation_length() -> None:
    emb = SentenceTransformerEmbedder.from_model(TokenizingModel(), batch_size=4, workers=1)
    assert emb._lengths(["word " * 100, "word"]) == [16, 3]


@pytest.mark.slow
def test_span_vectors_are_the_mean_token_vectors_of_their_word_pieces() -> None:
    texts = ["Brian Clough: He was born in Middlesbrough.", "Paris", "word " * 300 + "Rome"]
    spans = [[(0, 12), (29, 42)], [(0, 5), (1, 3)], [(0, 4), (1500, 1504)]]
    results = {}
    for workers in (1, 2):
        emb = SentenceTransformerEmbedder(batch_size=1, workers=workers)
        vecs, span_vecs = emb.embed_with_spans(texts, spans)
        assert np.allclose(vecs, emb.embed(texts), atol=1e-6)  # the same text vectors
        results[workers] = span_vecs
    model = emb.model
    for text, text_spans, rows in zip(texts, spans, results[1], strict=True):
        tokens = model.encode(text, output_value="token_embeddings").numpy()
        offsets = model.tokenizer(
            text, truncation=True, max_length=model.max_seq_length, return_offsets_mapping=True
        )["offset_mapping"]
        assert len(offsets) == len(tokens)
        for (start, end), row in zip(text_spans, rows, strict=True):
            pieces = [i for i, (a, b) in enumerate(offsets) if b > a and a < end and b > start]
            if not pieces:  # "Rome" lies beyond the 256 word pieces MiniLM reads
                assert start == 1500 and not row.any()
                continue
            mean = tokens[pieces].mean(axis=0)
            assert np.allclose(row, mean / np.linalg.norm(mean), atol=1e-5)
    for one, two in zip(results[1], results[2], strict=True):
        assert np.allclose(one, two, atol=1e-6)
    with pytest.raises(ValueError, match="span lists"):
        emb.embed_with_spans(texts, spans[:2])
