"""A deterministic bag-of-words embedder for tests (no model download, no torch)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from graphrag_integrations.core.embeddings import FloatMatrix, normalize_rows


class FakeEmbedder:
    """Hashes lower-cased words into ``dimension`` buckets and L2-normalises the counts."""

    model_name = "fake-bow"

    def __init__(self, dimension: int = 64) -> None:
        self._dimension = dimension
        self.calls = 0

    @property
    def dimension(self) -> int:
        return self._dimension

    def _vector(self, text: str) -> FloatMatrix:
        vec = np.zeros(self._dimension, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            bucket = int(hashlib.md5(word.encode()).hexdigest(), 16) % self._dimension
            vec[bucket] += 1.0
        return vec

    def embed(self, texts: Sequence[str], *, show_progress: bool = False) -> FloatMatrix:
        self.calls += 1
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return normalize_rows(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str) -> FloatMatrix:
        return self.embed([text])[0]
