"""The default MiniLM embedder with real weights: concurrent batches change nothing but speed."""

from __future__ import annotations

import numpy as np
import pytest

from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder

pytestmark = pytest.mark.slow


def test_two_workers_match_one_worker_and_a_plain_encode() -> None:
    texts = [
        f"Passage {i}: " + "the river flows past the old mill towards the sea. " * (1 + i % 9)
        for i in range(90)
    ] + [f"entity {i}" for i in range(200)]
    one = SentenceTransformerEmbedder(batch_size=8, workers=1)
    two = SentenceTransformerEmbedder(batch_size=8, workers=2)
    a, b = one.embed(texts), two.embed(texts)
    plain = one.model.encode(texts[:5], normalize_embeddings=True, convert_to_numpy=True)
    assert a.shape == (len(texts), one.dimension)
    np.testing.assert_allclose(a, b, atol=1e-5)
    np.testing.assert_allclose(a[:5], plain, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)


def test_a_loaded_sentence_transformer_is_used_as_is() -> None:
    from graphrag_integrations.core.encoders.embeddings import as_embedder

    default = SentenceTransformerEmbedder()
    wrapped = as_embedder(default.model)
    assert isinstance(wrapped, SentenceTransformerEmbedder)
    assert wrapped.model is default.model
    assert wrapped.model_name == default.model.tokenizer.name_or_path
    np.testing.assert_allclose(wrapped.embed(["a river"]), default.embed(["a river"]), atol=1e-6)
