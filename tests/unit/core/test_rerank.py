"""Re-rankers: bi-encoder cosine, cross-encoder on a tiny random BERT built in tmp."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from graphrag_integrations.core.encoders.embeddings import FloatMatrix, normalize_rows
from graphrag_integrations.core.encoders.rerank import (
    BiEncoderReranker,
    CrossEncoderReranker,
    Reranker,
    as_reranker,
)
from graphrag_integrations.errors import EmptyQueryError, ModelUnavailableError

WORDS = ["paris", "france", "capital", "rome", "italy", "banana", "yellow", "is", "the", "of"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]


class BagOfWordsEmbedder:
    """Deterministic test embedder: word counts over a fixed vocabulary, L2-normalised."""

    model_name = "bow"
    words = ("paris", "france", "rome", "italy", "banana")

    @property
    def dimension(self) -> int:
        return len(self.words)

    def embed(self, texts: Sequence[str], *, show_progress: bool = False) -> FloatMatrix:
        rows = [[t.lower().split().count(w) for w in self.words] for t in texts]
        return normalize_rows(np.asarray(rows, dtype=np.float32).reshape(len(texts), -1))

    def embed_query(self, text: str) -> FloatMatrix:
        return self.embed([text])[0]


def test_bi_encoder_scores_are_cosines() -> None:
    reranker = BiEncoderReranker(BagOfWordsEmbedder())
    texts = ["paris france", "rome italy", "paris paris rome", "banana"]
    scores = reranker.score("paris", texts)
    assert scores.dtype == np.float32
    assert scores.shape == (4,)
    expected = [1 / np.sqrt(2), 0.0, 2 / np.sqrt(5), 0.0]
    np.testing.assert_allclose(scores, expected, rtol=1e-6)
    assert reranker.model_name == "bi-encoder:bow"


def test_bi_encoder_empty_inputs() -> None:
    reranker = BiEncoderReranker(BagOfWordsEmbedder())
    assert reranker.score("paris", []).shape == (0,)
    with pytest.raises(EmptyQueryError):
        reranker.score("  ", ["paris"])


def test_as_reranker() -> None:
    emb = BagOfWordsEmbedder()
    default = as_reranker(None, embedder=emb)
    assert isinstance(default, BiEncoderReranker)
    assert default.embedder is emb
    named = as_reranker("cross-encoder/ms-marco-MiniLM-L-6-v2")
    assert isinstance(named, CrossEncoderReranker)
    assert not named._model.loaded  # loaded lazily
    assert as_reranker(default) is default
    assert isinstance(default, Reranker)
    with pytest.raises(TypeError, match="reranker must be"):
        as_reranker(3.5)


def _tiny_cross_encoder(path: Path, num_labels: int) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=num_labels,
        initializer_range=0.5,
    )
    BertForSequenceClassification(config).save_pretrained(str(path))
    (path / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    (path / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "BertTokenizer", "do_lower_case": True}),
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def tiny_ce(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_cross_encoder(tmp_path_factory.mktemp("tiny_ce"), num_labels=1)


def test_cross_encoder_matches_the_underlying_model(tiny_ce: Path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    texts = ["paris is the capital of france", "rome italy", "banana yellow", "paris"]
    reranker = CrossEncoderReranker(str(tiny_ce), batch_size=2, max_length=32)
    scores = reranker.score("capital of france", texts)
    assert scores.dtype == np.float32
    assert scores.shape == (4,)

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_ce))
    model = AutoModelForSequenceClassification.from_pretrained(str(tiny_ce)).eval()
    batch = tokenizer(
        ["capital of france"] * 4, texts, padding=True, truncation=True, return_tensors="pt"
    )
    with torch.no_grad():
        logits = model(**batch).logits[:, 0].numpy()
    # sentence-transformers applies a sigmoid to single-output cross-encoders (monotone)
    np.testing.assert_allclose(scores, 1 / (1 + np.exp(-logits)), rtol=1e-4, atol=1e-5)
    assert len(set(np.round(scores, 5).tolist())) == 4  # the pairs are told apart

    one_by_one = CrossEncoderReranker(str(tiny_ce), batch_size=1, max_length=32)
    np.testing.assert_allclose(one_by_one.score("capital of france", texts), scores, atol=1e-5)


def test_cross_encoder_empty_and_bad_queries(tiny_ce: Path) -> None:
    reranker = CrossEncoderReranker(str(tiny_ce))
    assert reranker.score("paris", []).shape == (0,)
    assert not reranker._model.loaded  # nothing to score: the model is not even loaded
    with pytest.raises(EmptyQueryError):
        reranker.score("", ["paris"])


def test_cross_encoder_with_several_labels_is_rejected(tmp_path: Path) -> None:
    path = _tiny_cross_encoder(tmp_path / "two", num_labels=2)
    reranker = CrossEncoderReranker(str(path))
    with pytest.raises(ModelUnavailableError, match="one relevance score"):
        reranker.score("paris", ["france", "rome"])


def test_cross_encoder_missing_model(tmp_path: Path) -> None:
    reranker = CrossEncoderReranker(str(tmp_path / "missing"))
    with pytest.raises(ModelUnavailableError, match="cannot load cross-encoder"):
        reranker.score("paris", ["france"])


@pytest.mark.parametrize("kwargs", [{"batch_size": 0}, {"max_length": 0}])
def test_cross_encoder_bad_parameters(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        CrossEncoderReranker("x", **kwargs)


@pytest.mark.slow
def test_bi_encoder_with_minilm_ranks_the_relevant_passage_first() -> None:
    reranker = BiEncoderReranker()
    texts = ["Bananas are yellow fruit.", "Paris is the capital of France.", "Rome is in Italy."]
    scores = reranker.score("What is the capital of France?", texts)
    assert int(np.argmax(scores)) == 1
    assert np.all(scores <= 1.0 + 1e-5)
