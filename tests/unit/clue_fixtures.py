"""Shared fixtures for the Clue-RAG tests: a tiny multi-hop corpus and a hashing embedder.

``HashingEmbedder`` is a genuine (if crude) embedder: L2-normalised hashed bag of words, so
tests run fast and deterministically without loading MiniLM.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from graphrag_integrations.core.documents import SourceDocument
from graphrag_integrations.core.embeddings import FloatMatrix, normalize_rows
from graphrag_integrations.methods.clue.graph import tokenize


class HashingEmbedder:
    model_name = "test-hashing-64"
    dimension = 64

    def embed(self, texts: Sequence[str], *, show_progress: bool = False) -> FloatMatrix:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in tokenize(text):
                h = int(hashlib.md5(tok.encode()).hexdigest(), 16)
                out[i, h % self.dimension] += 1.0 if (h >> 8) % 2 else -1.0
        return normalize_rows(out)

    def embed_query(self, text: str) -> FloatMatrix:
        return self.embed([text])[0]


CORPUS = [
    (
        "Nottingham Forest",
        "Nottingham Forest won the European Cup in 1979. The club is based in "
        "Nottingham, England. Forest won the FA Cup in 1898 and 1959.",
    ),
    (
        "European Cup",
        "The European Cup was a football competition organised by UEFA. Real Madrid "
        "won the first five editions.",
    ),
    ("Chelsea F.C.", "Chelsea F.C. won the FA Cup in 1970. Chelsea is based in London."),
    (
        "Brian Clough",
        "Brian Clough managed Nottingham Forest from 1975 to 1993. He was born in Middlesbrough.",
    ),
    ("Middlesbrough", "Middlesbrough is a town in North Yorkshire, England. It has two rivers."),
    ("Paris", "Paris is the capital of France. The Eiffel Tower stands in Paris."),
]


def documents(items: Sequence[tuple[str, str]] = CORPUS) -> list[SourceDocument]:
    return [SourceDocument(text=f"{t}\n{body}", id=t, metadata={"title": t}) for t, body in items]
